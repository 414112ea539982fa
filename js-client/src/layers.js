// tb.layers and tb.train: the runtime's Keras / TensorFlow.js-style layers from JavaScript.
// Layer factories are synchronous and make plain specs ({className, config}, camelCase options
// turned into the Python names); models are Python objects held by handle (LayersModel below)
// and every method returns a promise. Python half: bridge/js/layers.py.
//
// fit() progress callbacks (onEpochEnd, onBatchEnd...) are fire and forget: in a browser the
// worker posts each event to the page and goes on training; the callbacks run on the page's
// main thread, in order, before fit() resolves. Their return values are ignored: to stop
// training set `model.stopTraining = true` (or abort `signal`) — Python sees it after the
// current batch (Node: at once; browser: on cross-origin isolated pages, where a shared
// memory word carries it). A callback that throws stops training and fit() rejects with it.

/** camelCase -> snake_case (inputShape -> input_shape). */
export function snake(name) {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

// option values that name things in camelCase in TF.js (initializers, activations...)
const NAME_VALUES = new Set(["kernel_initializer", "bias_initializer", "embeddings_initializer",
  "activation", "kernel_regularizer", "bias_regularizer", "activity_regularizer",
  "kernel_constraint", "bias_constraint", "embeddings_regularizer", "embeddings_constraint"]);

function pyConfig(config = {}) {
  const out = {};
  for (const [k, v] of Object.entries(config)) {
    if (v === undefined) continue;
    const key = snake(k);
    out[key] = NAME_VALUES.has(key) && typeof v === "string" ? snake(v) : v;
  }
  return out;
}

/** A layer to be: `tb.layers.dense({units: 4})`. Becomes a Python layer inside a model. */
export class LayerSpec {
  constructor(className, config) {
    this.className = className;
    this.config = config;
  }
  toPython() { return { class_name: this.className, config: pyConfig(this.config) }; }
}

/** An optimizer to be: `tb.train.adam(0.01)`. */
export class OptimizerSpec {
  constructor(className, config) {
    this.className = className;
    this.config = config;
  }
  toPython() { return { class_name: this.className, config: pyConfig(this.config) }; }
}

const LAYER_CLASSES = { dense: "Dense", dropout: "Dropout", flatten: "Flatten",
  embedding: "Embedding", activation: "Activation", inputLayer: "InputLayer", add: "Add",
  average: "Average", concatenate: "Concatenate", multiply: "Multiply", subtract: "Subtract" };

const HOOKS = ["onTrainBegin", "onTrainEnd", "onEpochBegin", "onEpochEnd", "onBatchBegin",
  "onBatchEnd"];

/** "nan" / "inf" strings from Python -> numbers. */
function num(v) {
  if (typeof v !== "string") return v;
  if (v === "nan") return NaN;
  if (v === "inf") return Infinity;
  if (v === "-inf") return -Infinity;
  return v;
}
function numbers(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj ?? {})) out[k] = num(v);
  return out;
}

function isTypedArray(x) { return ArrayBuffer.isView(x) && !(x instanceof DataView); }

// integer options of the layer factories: name -> smallest value
const LAYER_COUNTS = { units: 1, inputDim: 1, outputDim: 1, batchSize: 1 };

/** The config of tb.layers.<fn>(config), checked as TF.js checks it when the layer is made:
 * an object; counts (units, inputDim, outputDim) whole numbers; shapes arrays of them. */
function checkLayerConfig(fn, config) {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new TypeError(`${fn}: expected a config object ({units: 4, ...}), got ${
      Array.isArray(config) ? "an array" : String(config)}`);
  }
  for (const [k, min] of Object.entries(LAYER_COUNTS)) checkCount(fn, k, config[k], min);
  if (fn === "dense" && config.units === undefined) {
    throw new TypeError("dense: units is required (a positive integer)");
  }
  for (const k of ["inputShape", "batchInputShape"]) {
    const v = config[k];
    if (v === undefined) continue;
    if (!Array.isArray(v) || !v.every((d) => d === null || (Number.isInteger(d) && d >= 1))) {
      throw new TypeError(`${fn}: ${k} must be an array of positive integers (e.g. [3]), got ${
        JSON.stringify(v)}`);
    }
  }
  return config;
}

/** An optional integer option >= min, or a TypeError naming it. */
function checkCount(what, name, v, min) {
  if (v === undefined || v === null) return;
  if (!Number.isInteger(v) || v < min) {
    throw new TypeError(`${what}: ${name} must be an integer >= ${min}, got ${
      typeof v === "string" ? JSON.stringify(v) : String(v)}`);
  }
}

function checkFitOptions(o) {
  if (o === null || typeof o !== "object" || Array.isArray(o)) {
    throw new TypeError("fit: the third argument must be an options object {epochs, batchSize, "
      + "...}");
  }
  checkCount("fit", "epochs", o.epochs, 0);
  checkCount("fit", "batchSize", o.batchSize, 1);
  checkCount("fit", "initialEpoch", o.initialEpoch, 0);
  const vs = o.validationSplit;
  if (vs !== undefined && vs !== null && !(typeof vs === "number" && vs >= 0 && vs < 1)) {
    throw new TypeError(`fit: validationSplit must be a number in [0, 1), got ${String(vs)}`);
  }
  const vd = o.validationData;
  if (vd !== undefined && vd !== null && !(Array.isArray(vd) && vd.length >= 1
    && vd.length <= 2)) {
    throw new TypeError("fit: validationData must be [xVal, yVal]");
  }
  for (const [k, f] of Object.entries(o.callbacks && !Array.isArray(o.callbacks)
    ? o.callbacks : {})) {
    if (HOOKS.includes(k) && typeof f !== "function") {
      throw new TypeError(`fit: callbacks.${k} must be a function, got ${typeof f}`);
    }
  }
}

/** The training history: `history.history.loss[epoch]`, as in TF.js. */
export class History {
  constructor(h) {
    this.epoch = h.epoch;
    this.history = Object.fromEntries(Object.entries(h.history).map(([k, v]) => [k,
      v.map(num)]));
    this.params = h.params;
  }
}

export function makeLayers(tb) {
  let modP = null;
  const mod = () => (modP ??= tb.pyimport("tensorbridge.bridge.js.layers"));

  /** x / y as tensors: a Tensor, {data, shape[, dtype]}, a TypedArray (1-d), nested arrays,
   * or an array / object of those (several inputs or outputs). */
  async function toData(x, made) {
    if (x instanceof Promise) x = await x;  // tb.tensor(...) not awaited, as TF.js code reads
    if (x === null || x === undefined) return null;
    if (x instanceof tb.Tensor) return x;
    if (isTypedArray(x)) { const t = await tb.tensor(x); made.push(t); return t; }
    if (typeof x === "object" && !Array.isArray(x) && isTypedArray(x.data)) {
      const t = await tb.tensor(x.data, x.shape, x.dtype);
      made.push(t);
      return t;
    }
    if (Array.isArray(x) && x.length && (x[0] instanceof tb.Tensor || isTypedArray(x[0])
      || (typeof x[0] === "object" && x[0] !== null && !Array.isArray(x[0])))) {
      return Promise.all(x.map((e) => toData(e, made)));
    }
    if (Array.isArray(x) || typeof x === "number") {
      const t = await tb.tensor(x);
      made.push(t);
      return t;
    }
    if (typeof x === "object") {  // {inputName: data}
      const out = {};
      for (const [k, v] of Object.entries(x)) out[k] = await toData(v, made);
      return out;
    }
    throw new TypeError(`expected a Tensor, nested arrays of numbers, a TypedArray or {data, `
      + `shape}, got ${typeof x}`);
  }

  /** Convert each value (named in `names` for errors: "fit: y: ValueError: data: ragged ...")
   * and call fn with them; the tensors made here are disposed afterwards. */
  async function withData(what, names, values, fn) {
    const made = [];
    try {
      const data = [];
      for (const [i, v] of values.entries()) {
        try {
          data.push(await toData(v, made));
        } catch (e) {
          if (e instanceof TypeError || e instanceof RangeError || e?.name === "PythonError") {
            e.message = `${what}: ${names[i]}: ${e.message}`;
          }
          throw e;
        }
      }
      return await fn(...data);
    } finally {
      for (const t of made) t.dispose();
    }
  }

  const optimizerArg = (o) => (o instanceof OptimizerSpec ? o.toPython()
    : typeof o === "string" ? o : o);

  class LayersModel {
    constructor(handle) {
      this.handle = handle;  // the Python model (a handle proxy)
      this.stopTraining = false;
      this._fitCh = null;
    }

    get stopTraining() { return this._stop; }
    set stopTraining(v) {
      this._stop = !!v;
      if (this._stop && this._fitCh !== null) tb._stopEvents(this._fitCh);
    }

    /** {name, layers: [{name, className, outputShape, params}], inputs, outputs} */
    async info() { return (await mod()).info(this.handle); }

    async add(layer) {
      await (await mod()).add(this.handle, layer instanceof LayerSpec ? layer.toPython() : layer);
    }

    /** compile({optimizer, loss, metrics, lossWeights}): names as in TF.js or Keras. */
    async compile({ optimizer = "rmsprop", loss, metrics, lossWeights } = {}) {
      await (await mod()).compile(this.handle, tb.kw({ optimizer: optimizerArg(optimizer), loss,
        metrics: metrics === undefined ? null : [].concat(metrics),
        loss_weights: lossWeights ?? null }));
    }

    /**
     * fit(x, y, {epochs, batchSize, validationSplit, validationData: [xv, yv], shuffle,
     * initialEpoch, seed, callbacks: {onEpochEnd(epoch, logs), onBatchEnd(batch, logs), ...}
     * (or an array of such objects), signal}) -> History
     */
    async fit(x, y, options = {}) {
      const { callbacks, signal, validationData, ...rest } = options;
      const cbs = [].concat(callbacks ?? []);
      checkFitOptions(options);
      const hooks = HOOKS.filter((h) => cbs.some((c) => typeof c?.[h] === "function"));
      const opts = {};
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) opts[snake(k)] = v;
      if (opts.verbose === undefined) opts.verbose = 0;
      this._stop = false;
      let failure = null;
      const ch = tb._openEvents((text) => {
        // the runtime's FitProgress event (runtime/progress_events.py), fields in camelCase:
        // {kind, stage, epoch, epochs, batch, steps, logs}; stage "epoch_end" -> onEpochEnd
        const ev = JSON.parse(text);
        const logs = numbers(ev.logs);
        const hook = "on" + ev.stage.split("_").map((w) => w[0].toUpperCase() + w.slice(1))
          .join("");
        const index = ev.stage.startsWith("batch") ? ev.batch
          : ev.stage.startsWith("epoch") ? ev.epoch : null;
        for (const c of cbs) {
          const f = c?.[hook];
          if (typeof f !== "function") continue;
          try {
            if (index === null) f.call(c, logs); else f.call(c, index, logs);
          } catch (e) {
            failure ??= e;
            tb._stopEvents(ch);
          }
        }
      });
      this._fitCh = ch;
      const onAbort = () => tb._stopEvents(ch);
      if (signal) {
        if (signal.aborted) onAbort(); else signal.addEventListener("abort", onAbort);
      }
      try {
        const h = await withData("fit", ["x", "y", "validationData[0]", "validationData[1]"],
          [x, y, validationData?.[0], validationData?.[1]],
          async (xd, yd, xv, yv) => {
            if (xv !== null) opts.validation_data = yv !== null ? [xv, yv] : [xv];
            return (await mod()).fit(this.handle, xd, yd, opts, ch, hooks);
          });
        if (failure) throw failure;
        return new History(h);
      } finally {
        this._fitCh = null;
        signal?.removeEventListener("abort", onAbort);
        tb._closeEvents(ch);
      }
    }

    /** predict(x, {batchSize}) -> Tensor (a list of tensors for several outputs). */
    async predict(x, { batchSize } = {}) {
      checkCount("predict", "batchSize", batchSize, 1);
      return withData("predict", ["x"], [x], async (xd) => (await mod()).predict(this.handle,
        xd, batchSize ?? null));
    }

    /** evaluate(x, y, {batchSize}) -> {loss, ...metrics} (numbers). */
    async evaluate(x, y, { batchSize } = {}) {
      checkCount("evaluate", "batchSize", batchSize, 1);
      const r = await withData("evaluate", ["x", "y"], [x, y], async (xd, yd) => (
        await mod()).evaluate(this.handle, xd, yd, batchSize ?? null));
      return numbers(r);
    }

    /** The summary table as text (also printed with console.log unless {print: false}). */
    async summary({ print = true, lineLength } = {}) {
      const text = await (await mod()).summary(this.handle, lineLength ?? null);
      if (print) console.log(text);
      return text;
    }

    async getWeights() { return (await mod()).get_weights(this.handle); }
    /** setWeights([kernel, bias, ...]): each a Tensor, {data, shape}, or nested arrays. */
    async setWeights(values) {
      const made = [];
      try {
        const ts = [];
        for (const v of values) ts.push(await toData(v, made));
        await (await mod()).set_weights(this.handle, ts);
      } finally {
        for (const t of made) t.dispose();
      }
    }

    /** {modelJSON: object, weightData: Uint8Array} in the portable format (model.json +
     * weights.bin; see runtime/layers/serialization.py). */
    async saveArtifacts({ includeOptimizer = true } = {}) {
      const [text, bytes] = await (await mod()).to_artifacts(this.handle, includeOptimizer);
      return { modelJSON: JSON.parse(text), modelJSONText: text, weightData: bytes };
    }

    /**
     * save(target): Node — a directory (path or file:// URL) that gets model.json and
     * weights.bin; browser — "downloads://name" (two downloads: name.json with paths pointing
     * to name.weights.bin) or an object {save(artifacts)} (your own handler).
     * Returns {modelJSONBytes, weightDataBytes}.
     */
    async save(target, { includeOptimizer = true } = {}) {
      const art = await this.saveArtifacts({ includeOptimizer });
      const info = { modelJSONBytes: art.modelJSONText.length,
        weightDataBytes: art.weightData.byteLength };
      if (target && typeof target.save === "function") { await target.save(art); return info; }
      if (typeof target !== "string") throw new TypeError("save: give a directory or URL");
      if (target.startsWith("downloads://")) {
        const name = target.slice("downloads://".length) || "model";
        const doc = { ...art.modelJSON };
        doc.weightsManifest = doc.weightsManifest.map((g) => ({ ...g,
          paths: [`${name}.weights.bin`] }));
        download(`${name}.json`, new Blob([JSON.stringify(doc)], { type: "application/json" }));
        download(`${name}.weights.bin`, new Blob([art.weightData],
          { type: "application/octet-stream" }));
        return info;
      }
      if (!isNode()) throw new Error(`save: ${target}: browsers save to downloads:// or a handler`);
      const { fs, path, dir } = await nodeDir(target);
      await fs.mkdir(dir, { recursive: true });
      const weightsName = art.modelJSON.weightsManifest?.[0]?.paths?.[0] ?? "weights.bin";
      await fs.writeFile(path.join(dir, weightsName), art.weightData);
      await fs.writeFile(path.join(dir, "model.json"), art.modelJSONText);
      return info;
    }

    dispose() { this.handle.dispose(); }
    [Symbol.dispose]() { this.dispose(); }
    toString() { return "LayersModel"; }
  }

  /** tb.layers.loadModel(source): Node — a directory, a model.json path or a file:// URL;
   * browser — the URL of model.json (weights fetched next to it); anywhere — artifacts
   * {modelJSON (object or text), weightData (Uint8Array / ArrayBuffer)}. */
  async function loadModel(source, { compile = true } = {}) {
    let modelJSON, weightData;
    if (source && typeof source === "object" && "modelJSON" in source) {
      ({ modelJSON, weightData } = source);
    } else if (typeof source === "string" && isNode() && !/^https?:/.test(source)) {
      const { fs, path, dir, file } = await nodeDir(source);
      const jsonPath = file ?? path.join(dir, "model.json");
      modelJSON = await fs.readFile(jsonPath, "utf8");
      const doc = JSON.parse(modelJSON);
      const wname = doc.weightsManifest?.[0]?.paths?.[0] ?? "weights.bin";
      weightData = await fs.readFile(path.join(path.dirname(jsonPath), wname));
    } else if (typeof source === "string") {
      const url = new URL(source.endsWith(".json") ? source : source.replace(/\/?$/, "/model.json"),
        globalThis.location?.href);
      const res = await fetch(url);
      if (!res.ok) throw new Error(`loadModel: ${url}: HTTP ${res.status}`);
      modelJSON = await res.text();
      const doc = JSON.parse(modelJSON);
      const wname = doc.weightsManifest?.[0]?.paths?.[0] ?? "weights.bin";
      const wres = await fetch(new URL(wname, url));
      if (!wres.ok) throw new Error(`loadModel: ${wname}: HTTP ${wres.status}`);
      weightData = new Uint8Array(await wres.arrayBuffer());
    } else {
      throw new TypeError("loadModel: give a path, a URL or {modelJSON, weightData}");
    }
    const text = typeof modelJSON === "string" ? modelJSON : JSON.stringify(modelJSON);
    // a plain Uint8Array (a Node Buffer would cross as an opaque object)
    const bytes = ArrayBuffer.isView(weightData) ? new Uint8Array(weightData.buffer,
      weightData.byteOffset, weightData.byteLength) : new Uint8Array(weightData
      ?? new ArrayBuffer(0));
    const h = await (await mod()).from_artifacts(text, bytes, compile);
    return new LayersModel(h);
  }

  const layers = {
    LayerSpec,
    /** Any registered layer class by name: tb.layers.layer("Dense", {units: 3}). */
    layer: (className, config = {}) => new LayerSpec(className, config),
    async sequential(config = {}) {
      if (config === null || typeof config !== "object" || Array.isArray(config)
        || config instanceof LayerSpec) {
        throw new TypeError("sequential: expected {layers: [tb.layers.dense(...), ...], name?}");
      }
      const { layers: ls = [], name } = config;
      if (!Array.isArray(ls)) {
        throw new TypeError("sequential: layers must be an array of layers "
          + "([tb.layers.dense({...}), ...])");
      }
      const specs = ls.map((l, i) => {
        if (l instanceof LayerSpec) return l.toPython();
        if (l instanceof Promise || typeof l === "function") {
          throw new TypeError(`sequential: layers[${i}] is not a layer (tb.layers.dense({...}))`);
        }
        return l;
      });
      return new LayersModel(await (await mod()).sequential(specs, name ?? null));
    },
    loadModel,
  };
  for (const [fn, cls] of Object.entries(LAYER_CLASSES)) {
    layers[fn] = (config = {}) => new LayerSpec(cls, checkLayerConfig(fn, config));
  }

  const train = {
    OptimizerSpec,
    sgd: (learningRate = 0.01) => new OptimizerSpec("SGD", { learningRate }),
    momentum: (learningRate, momentum = 0.0, useNesterov = false) => new OptimizerSpec("SGD",
      { learningRate, momentum, nesterov: useNesterov }),
    adam: (learningRate = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-7) =>
      new OptimizerSpec("Adam", { learningRate, beta_1: beta1, beta_2: beta2, epsilon }),
    rmsprop: (learningRate = 0.001, decay = 0.9, momentum = 0.0, epsilon = 1e-7,
      centered = false) => new OptimizerSpec("RMSprop", { learningRate, rho: decay, momentum,
      epsilon, centered }),
    adagrad: (learningRate = 0.001, initialAccumulatorValue = 0.1) => new OptimizerSpec(
      "Adagrad", { learningRate, initialAccumulatorValue }),
  };
  return { layers, train };
}

function isNode() {
  return typeof process !== "undefined" && !!process.versions?.node && typeof window === "undefined";
}

async function nodeDir(target) {
  const fs = await import("node:fs/promises");
  const path = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const p = target.startsWith("file://") ? fileURLToPath(target) : target;
  if (p.endsWith(".json")) return { fs, path, dir: path.dirname(p), file: p };
  return { fs, path, dir: p, file: null };
}

function download(name, blob) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
