// The demo: a small network (tb.layers) trains in the worker (Python + TF.js) while this thread
// keeps animating and draws the loss live. fit() progress callbacks (onBatchEnd, onEpochEnd)
// run here on the main thread; the worker posts them and goes on training (fire and forget), so
// drawing never slows training. We record the longest gap between animation frames while the
// worker computes.
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

// -- the data: two interleaved spirals (binary classification), made here in JS ---------------
function spirals(n, seed = 1) {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const x = new Float32Array(2 * n), y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const label = i % 2, r = 0.15 + 0.85 * rand(), a = 1.8 * Math.PI * r + label * Math.PI;
    x[2 * i] = r * Math.cos(a) + 0.04 * (rand() - 0.5);
    x[2 * i + 1] = r * Math.sin(a) + 0.04 * (rand() - 0.5);
    y[i] = label;
  }
  return { x, y };
}

// -- the chart: batch losses (thin), epoch losses (dots), validation loss (dashed) -------------
const batchLoss = [], epochLoss = [], valLoss = [];
// what the chart shows (also read by the browser test: legend entries and axis titles)
const chart = {
  axes: { x: "training step (batch)", y: "loss (binary cross-entropy)" },
  legend: [
    { label: "batch loss", color: "#9fb0ec", width: 1, dash: [] },
    { label: "epoch loss (training)", color: "#3a5bd9", width: 2, dash: [], dot: true },
    { label: "validation loss", color: "#d9803a", width: 2, dash: [5, 4] }],
  drawn: 0,
};
result.chart = chart;
const stopSpinner = () => {
  const sp = $("spinner");
  sp.style.animation = "none";
  sp.style.display = "none";
};
let steps = 1, dirty = false;
function draw() {
  dirty = false;
  const cv = $("plot"), c = cv.getContext("2d"), W = cv.width, H = cv.height;
  c.clearRect(0, 0, W, H);
  const all = [...batchLoss.map((p) => p[1]), ...valLoss.map((p) => p[1])];
  const max = Math.max(...all, 1e-9);
  const L = 44, B = 34;  // room for the y-axis title and ticks, the x-axis title
  const px = (i) => L + ((W - L - 10) * i) / Math.max(steps, 1);
  const py = (l) => H - B - ((H - B - 10) * l) / max;
  c.strokeStyle = "#889"; c.lineWidth = 1; c.beginPath();
  c.moveTo(L, 10); c.lineTo(L, H - B); c.lineTo(W - 10, H - B); c.stroke();
  c.fillStyle = "#556"; c.font = "11px system-ui";
  c.textAlign = "right";
  c.fillText(max.toFixed(2), L - 4, 16); c.fillText("0", L - 4, H - B);
  c.textAlign = "left";
  c.fillText("0", L, H - B + 13);
  c.textAlign = "right"; c.fillText(String(steps), W - 10, H - B + 13);
  // axis titles
  c.font = "12px system-ui"; c.fillStyle = "#334"; c.textAlign = "center";
  c.fillText(chart.axes.x, L + (W - L - 10) / 2, H - 6);
  c.save(); c.translate(14, 10 + (H - B - 10) / 2); c.rotate(-Math.PI / 2);
  c.fillText(chart.axes.y, 0, 0); c.restore();
  c.textAlign = "left";
  // legend (top right)
  c.font = "11px system-ui";
  const lw = 150, lx = W - lw - 14, ly = 14;
  c.fillStyle = "rgba(255, 255, 255, 0.85)"; c.fillRect(lx - 6, ly - 10, lw, 16 * chart.legend.length + 6);
  chart.legend.forEach(({ label, color, width, dash, dot }, k) => {
    const y = ly + 16 * k;
    c.strokeStyle = color; c.lineWidth = width; c.setLineDash(dash); c.beginPath();
    c.moveTo(lx, y); c.lineTo(lx + 22, y); c.stroke(); c.setLineDash([]);
    if (dot) { c.fillStyle = color; c.beginPath(); c.arc(lx + 11, y, 3, 0, 7); c.fill(); }
    c.fillStyle = "#334"; c.fillText(label, lx + 28, y + 4);
  });
  chart.drawn++;
  const line = (pts, color, width, dash = []) => {
    c.strokeStyle = color; c.lineWidth = width; c.setLineDash(dash); c.beginPath();
    pts.forEach(([i, l], k) => (k ? c.lineTo(px(i), py(l)) : c.moveTo(px(i), py(l))));
    c.stroke(); c.setLineDash([]);
  };
  line(batchLoss, "#9fb0ec", 1);
  line(valLoss, "#d9803a", 2, [5, 4]);
  line(epochLoss, "#3a5bd9", 2);
  c.fillStyle = "#3a5bd9";
  for (const [i, l] of epochLoss) { c.beginPath(); c.arc(px(i), py(l), 3, 0, 7); c.fill(); }
}
const redraw = () => { if (!dirty) { dirty = true; requestAnimationFrame(draw); } };

try {
  const tb = await loadTensorBridge();
  $("boot").textContent = `${tb.info.bootMs.toFixed(0)} ms`;
  $("mode").textContent = tb.info.mode === "worker+sab"
    ? "events from the worker; stop flag in shared memory (cross-origin isolated)"
    : "events from the worker (postMessage)";
  const n = 600, epochs = 30, batchSize = 32;
  const { x, y } = spirals(n);
  const model = await tb.layers.sequential({ layers: [
    tb.layers.dense({ units: 32, activation: "tanh", inputShape: [2] }),
    tb.layers.dense({ units: 32, activation: "tanh" }),
    tb.layers.dense({ units: 1, activation: "sigmoid" })] });
  await model.compile({ optimizer: tb.train.adam(0.02), loss: "binaryCrossentropy",
    metrics: ["accuracy"] });
  const perEpoch = Math.ceil((n * 0.8) / batchSize);
  steps = epochs * perEpoch;
  $("status").textContent = "training…";
  let batches = 0, epochsDone = 0, acc = NaN;
  measuring = true;
  const t0 = performance.now();
  const history = await model.fit({ data: x, shape: [n, 2] }, { data: y, shape: [n, 1] }, {
    epochs, batchSize, validationSplit: 0.2, shuffle: true, seed: 0,
    callbacks: {
      onBatchEnd: (batch, logs) => {
        batchLoss.push([batches++, logs.loss]);
        redraw();
      },
      onEpochEnd: (epoch, logs) => {
        epochsDone = epoch + 1;
        epochLoss.push([batches, logs.loss]);
        valLoss.push([batches, logs.val_loss]);
        acc = logs.val_accuracy;
        $("bar").firstElementChild.style.width = `${((100 * epochsDone) / epochs).toFixed(1)}%`;
        $("epoch").textContent = `${epochsDone} / ${epochs}`;
        $("loss").textContent = `${logs.loss.toFixed(4)} (validation ${logs.val_loss.toFixed(4)})`;
        $("acc").textContent = `${(100 * acc).toFixed(1)} %`;
        redraw();
      },
    } });
  const trainMs = performance.now() - t0;
  measuring = false;
  draw();
  const final = history.history.loss.at(-1);
  const longest = Math.max(...gaps);
  $("bar").firstElementChild.style.width = "100%";
  $("gap").textContent = `${longest.toFixed(1)} ms over ${gaps.length} frames`;
  $("status").textContent = `done: ${epochs} epochs, ${batches} batches in ${trainMs.toFixed(0)} ms`;
  stopSpinner();
  Object.assign(result, { done: true, final, valAccuracy: acc, longestGapMs: longest,
    frames: gaps.length, trainMs, bootMs: tb.info.bootMs, mode: tb.info.mode,
    callbacks: batchLoss.length + epochLoss.length, batchPoints: batchLoss.length,
    epochPoints: epochLoss.length, steps });
} catch (e) {
  $("status").textContent = `failed: ${e.message}`;
  stopSpinner();
  Object.assign(result, { done: true, error: String(e.stack || e) });
}
