// The floor for a worker -> main -> worker synchronous call: the worker wakes the page and
// blocks in Atomics.wait until the page stored an answer in a SharedArrayBuffer and notified.
// Same mechanisms as tensorbridge's synchronous callbacks, with no Python and no conversion:
//   "message":  the worker posts a number; "payload": it posts the object tensorbridge's
//   message fallback posts; "waitAsync": it notifies a word the page waits on with
//   Atomics.waitAsync (what tensorbridge uses where the browser has it). "+spin": the worker
//   polls the answer word briefly before Atomics.wait, as tensorbridge's worker does.
self.onmessage = (ev) => {
  const { sab, n, mode: how } = ev.data;
  const spin = how.endsWith("+spin");
  const mode = how.replace("+spin", "");
  const ctl = new Int32Array(sab, 0, 4);
  const f64 = new Float64Array(sab, 16, 1);
  const run = () => {
    const t0 = performance.now();
    let acc = 0;
    for (let i = 0; i < n; i++) {
      Atomics.store(ctl, 0, 0);
      if (mode === "waitAsync") {
        f64[0] = i;
        Atomics.store(ctl, 3, 1);
        Atomics.notify(ctl, 3);
      } else {
        postMessage(mode === "payload" ? { type: "cb", cb: 1, args: [i], sync: true } : i);
      }
      if (spin) for (let k = 0; k < 20000 && Atomics.load(ctl, 0) === 0; k++);
      Atomics.wait(ctl, 0, 0);
      acc += f64[0];
    }
    return { us: ((performance.now() - t0) / n) * 1000, acc };
  };
  run();  // warm-up
  const res = run();
  if (mode === "waitAsync") { Atomics.store(ctl, 3, 2); Atomics.notify(ctl, 3); }
  postMessage({ done: true, ...res });
};
