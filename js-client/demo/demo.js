// The demo: the model trains in the worker (Python + TF.js) while this thread keeps animating.
// A progress callback from Python runs here on the main thread (synchronously through
// SharedArrayBuffer + Atomics when the page is cross-origin isolated). We record the longest gap
// between animation frames while the worker computes.
import { loadTensorBridge } from "../src/index.js";

const $ = (id) => document.getElementById(id);
const result = { done: false };
window.demoResult = result;

let gaps = [], last = performance.now(), measuring = false;
function frame(t) {
  if (measuring) gaps.push(t - last);
  last = t;
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

const losses = [];
function draw() {
  const c = $("plot").getContext("2d");
  c.clearRect(0, 0, 420, 200);
  c.strokeStyle = "#3a5bd9"; c.lineWidth = 2; c.beginPath();
  const max = Math.max(...losses, 1e-9);
  losses.forEach((l, i) => {
    const x = 10 + (400 * i) / Math.max(losses.length - 1, 1), y = 190 - 180 * (l / max);
    if (i) c.lineTo(x, y); else c.moveTo(x, y);
  });
  c.stroke();
}

try {
  const tb = await loadTensorBridge();
  $("boot").textContent = `${tb.info.bootMs.toFixed(0)} ms`;
  $("mode").textContent = tb.info.mode === "worker+sab"
    ? "synchronous (SharedArrayBuffer + Atomics)" : "asynchronous (awaited promise)";
  $("status").textContent = "training…";
  const train = await tb.runPython(`
def train(progress, steps=300, n=2000, d=20):
    g = tb.random.Generator(0)
    X = g.normal((n, d))
    w_true = g.normal((d,))
    y = tb.cast(X @ w_true > 0.0, "float32")
    w = tb.zeros((d,))
    def loss(w):
        z = X @ w
        return tb.mean(tb.softplus(z) - y * z)
    vg = tb.value_and_grad(loss)
    for i in range(steps):
        with tb.tidy():
            v, gw = vg(w)
            w = tb.keep(w - 0.5 * gw)
            if i % 10 == 0:
                progress(i / steps, float(v))
    return float(loss(w))
train`);
  measuring = true;
  const t0 = performance.now();
  const final = await train((frac, loss) => {
    $("bar").firstElementChild.style.width = `${(100 * frac).toFixed(1)}%`;
    losses.push(loss);
    draw();
    return true;
  });
  measuring = false;
  const longest = Math.max(...gaps);
  $("bar").firstElementChild.style.width = "100%";
  $("loss").textContent = final.toFixed(5);
  $("gap").textContent = `${longest.toFixed(1)} ms over ${gaps.length} frames`;
  $("status").textContent = `done in ${(performance.now() - t0).toFixed(0)} ms`;
  Object.assign(result, { done: true, final, longestGapMs: longest, frames: gaps.length,
    trainMs: performance.now() - t0, bootMs: tb.info.bootMs, mode: tb.info.mode,
    callbacks: losses.length });
} catch (e) {
  $("status").textContent = `failed: ${e.message}`;
  Object.assign(result, { done: true, error: String(e.stack || e) });
}
