// Type declarations for the `tensorbridge` npm package.

export type DType = "float32" | "float64" | "int32" | "int64" | "bool";
export type TypedArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;
export type NestedArray = number | boolean | NestedArray[];

export interface LoadOptions {
  /** Folder holding Pyodide and the tensorbridge wheel (default: this package's dist/pyodide). */
  indexURL?: string;
  /** TF.js backend that runs the kernels: "wasm" (default), "cpu" or "webgl" (browser). */
  tfBackend?: "wasm" | "cpu" | "webgl";
  /** The runtime's numeric backend: "tfjs" (default) or "numpy" when NumPy is loaded. */
  backend?: "tfjs" | "numpy";
  /** Browser: run Pyodide in a Web Worker (default true) or in the page. */
  worker?: boolean;
  /** Browser: URLs of the worker script and of the TF.js builds (default: from the package). */
  workerURL?: string;
  tfjsURL?: string;
  /** Browser: use SharedArrayBuffer + Atomics for main-thread callbacks when isolated. */
  syncCallbacks?: boolean;
  /** Browser: bytes of the synchronous callback channel (default 1 MiB). */
  callbackBytes?: number;
  stdout?: (line: string) => void;
  stderr?: (line: string) => void;
}

export interface BridgeInfo {
  /** "node" (in-process), "worker+sab" (sync callbacks), "worker+async", or "page". */
  mode: string;
  /** Worker: "sync" (SharedArrayBuffer + Atomics) or "async" (awaitables in Python). */
  callbacks?: string;
  bootMs: number;
  pyodideMs?: number;
  totalMs?: number;
  tfBackend?: string;
  crossOriginIsolated?: boolean;
}

/** What view() gives: `data` is read each time (a view of the WASM heap is made again when the
 * heap grows, so it never reads a detached buffer); null after release(). */
export interface TensorView<T extends TypedArray = TypedArray> {
  readonly data: T | null;
  shape: number[];
  dtype: DType;
  /** True when `data` is a zero-copy view of the tensor's memory (else a copy). */
  view: boolean;
  /** Stop using the view (it must not outlive the tensor). */
  release(): void;
}

/** Values with their layout: what Python arrays of 2+ dimensions become (calculate, simulate,
 * layer weights), and what tb.tensor / fit take. */
export interface TensorData<T extends TypedArray = TypedArray> {
  data: T;
  shape: number[];
  dtype: DType;
}

/** tb.tensor's options object (the same as its shape and dtype arguments). */
export interface TensorOptions {
  shape?: number[];
  dtype?: DType;
}

/** Keyword arguments for ops and Python calls: `tb.sum(x, tb.kw({axis: 1}))`. */
export class Kwargs {
  constructor(obj: Record<string, unknown>);
  obj: Record<string, unknown>;
}

type Arg = Tensor | number | boolean | bigint | string | null | undefined | TypedArray
  | Arg[] | { [k: string]: unknown } | Map<unknown, unknown> | Set<unknown> | Kwargs
  | ((...args: any[]) => unknown) | PyProxy
  /** A value not awaited yet (`tb.add(tb.tensor([1, 2]), 1)`): awaited before the call. */
  | Promise<Tensor | PyProxy>;

export class Tensor implements Disposable {
  readonly shape: number[];
  readonly dtype: DType;
  readonly backend: string;
  readonly size: number;
  readonly ndim: number;
  readonly disposed: boolean;
  /** The values as a TypedArray (a copy), as in TF.js: float32 -> Float32Array, float64 ->
   * Float64Array, int32 -> Int32Array, int64 -> BigInt64Array, bool -> Uint8Array. */
  data(): Promise<TypedArray>;
  /** A zero-copy view where the runtime is in-process (Node; wasm/cpu), else a copy. */
  view(): Promise<TensorView>;
  /** Nested arrays (a number or boolean for 0-d). */
  array(): Promise<NestedArray>;
  dispose(): void;
  [Symbol.dispose](): void;
  add(y: Arg): Promise<Tensor>;
  sub(y: Arg): Promise<Tensor>;
  mul(y: Arg): Promise<Tensor>;
  div(y: Arg): Promise<Tensor>;
  pow(y: Arg): Promise<Tensor>;
  neg(): Promise<Tensor>;
  matmul(y: Arg): Promise<Tensor>;
  T(): Promise<Tensor>;
  sum(...args: Arg[]): Promise<Tensor>;
  mean(...args: Arg[]): Promise<Tensor>;
  reshape(shape: number[]): Promise<Tensor>;
  astype(dtype: DType): Promise<Tensor>;
  [op: string]: any;
}

/** A Python object held by handle: await attributes, call methods, dispose when done. */
export interface PyProxy extends Disposable {
  (...args: Arg[]): Promise<any>;
  readonly [attr: string]: any;
  dispose(): void;
}

/** The bridge's Error descriptor as it travels (see bridge/js/host.py). */
export interface ErrorDescriptor {
  $: "e";
  lang: string;
  type: string;
  msg: string;
  module: string;
  classes: string[];
  tb: string[];
  cause: ErrorDescriptor | null;
  ck: string;
  data: Record<string, unknown>;
  pid?: number;
}

/** A Python error in JS (or a JS error that went through Python). A Python TypeError is also
 * a JS TypeError, an OverflowError or IndexError also a RangeError (`instanceof` both). */
export class TensorBridgeError extends Error {
  /** "python", or "js" for a JS error that went through Python and came back. */
  language: string;
  /** The error's class name ("ValueError", "RangeError"). */
  type: string;
  /** The exception type as Python saw it ("ValueError"; JS errors: "JsCallbackError"). */
  pyType: string;
  /** Frames, oldest first: Python's; for a JS error that went through Python, the Python
   * frames it crossed, then its JS stack lines. */
  traceback: string[];
  /** The traceback as Python prints it (JS errors: the Python frames, then the JS stack). */
  pyTraceback: string;
  /** The bridge's Error descriptor, unchanged: sent back to Python as it is. */
  descriptor: ErrorDescriptor;
  /** The chained Python exception, or the original JS error object. */
  cause?: unknown;
}

/** tb.registerConverter: both directions are optional. */
export interface ConverterSpec {
  /** Name shared by both sides (default: `python`, or the class name of `js`). */
  name?: string;
  /** The Python type by qualified name, e.g. "fractions.Fraction". */
  python?: string;
  /** Python -> JS, in Python: object -> plain data (Python source or a Python callable).
   * Default: the object crosses by handle. */
  fromPython?: string | PyProxy;
  /** Python -> JS, in JS: plain data -> JS value. */
  toJs?: (data: any) => unknown;
  /** The JS class (instanceof; the most derived registered class wins). */
  js?: abstract new (...args: any[]) => unknown;
  /** JS -> Python, in JS: value -> plain data (default: its own enumerable properties). */
  fromJs?: (value: any) => unknown;
  /** JS -> Python, in Python: plain data -> object (Python source or a Python callable). */
  toPython?: string | PyProxy;
}

/** The bridge's handle table (tensorbridge.bridge.stats()) plus the JS side. */
export interface HandleStats {
  live: number;
  refs: number;
  by_type: Record<string, number>;
  issued: number;
  released: number;
  pending: number;
  /** = live */
  count: number;
  /** = by_type */
  byType: Record<string, number>;
  /** Live handle objects on the JS side. */
  js: number;
}

export class DisposedError extends Error {}

type Op = (...args: Arg[]) => Promise<Tensor>;

// ---- tb.layers / tb.train (layers.js; Python: runtime/layers via bridge/js/layers.py) --------

/** Training data: a Tensor, {data, shape, dtype?}, a TypedArray (1-d), nested arrays, or an
 * array / object of those for several inputs or outputs. */
export type Data = Tensor | Promise<Tensor> | TypedArray | NestedArray | { data: TypedArray;
  shape: number[]; dtype?: DType } | Data[] | { [input: string]: Data };

/** Options of a layer factory: TF.js names (camelCase), passed to the Python layer as
 * snake_case (`inputShape` -> `input_shape`, `kernelInitializer: "glorotUniform"` ->
 * `kernel_initializer: "glorot_uniform"`). */
export interface LayerArgs {
  inputShape?: number[];
  batchInputShape?: (number | null)[];
  name?: string;
  dtype?: DType;
  trainable?: boolean;
  [option: string]: unknown;
}
export interface DenseLayerArgs extends LayerArgs {
  units: number;
  activation?: string;
  useBias?: boolean;
  kernelInitializer?: string;
  biasInitializer?: string;
}

/** A layer to be (it becomes a Python layer inside a model). */
export class LayerSpec {
  readonly className: string;
  readonly config: Record<string, unknown>;
}
/** An optimizer to be: tb.train.adam(0.01). */
export class OptimizerSpec {
  readonly className: string;
  readonly config: Record<string, unknown>;
}

export type Logs = Record<string, number>;
/** fit() progress hooks. They run on the page's main thread in browsers, as fire-and-forget
 * events (the worker does not wait for them); return values are ignored. */
export interface CustomCallbackArgs {
  onTrainBegin?: (logs: Logs) => unknown;
  onTrainEnd?: (logs: Logs) => unknown;
  onEpochBegin?: (epoch: number, logs: Logs) => unknown;
  onEpochEnd?: (epoch: number, logs: Logs) => unknown;
  onBatchBegin?: (batch: number, logs: Logs) => unknown;
  onBatchEnd?: (batch: number, logs: Logs) => unknown;
}

export interface ModelCompileArgs {
  /** "adam", "sgd", "rmsprop", "adagrad" or tb.train.*(...) */
  optimizer?: string | OptimizerSpec;
  /** "meanSquaredError", "mse", "binaryCrossentropy", "sparseCategoricalCrossentropy"... */
  loss: string | string[] | Record<string, string>;
  metrics?: string | string[];
  lossWeights?: number[] | Record<string, number>;
}

export interface ModelFitArgs {
  epochs?: number;
  batchSize?: number;
  /** The last fraction of the samples (before shuffling) held out for validation. */
  validationSplit?: number;
  validationData?: [Data, Data];
  shuffle?: boolean;
  /** Seed of the shuffling (default: from tb.random's generator). */
  seed?: number;
  initialEpoch?: number;
  /** One weight per sample. */
  sampleWeight?: Data;
  /** Samples per validation batch (default: batchSize). */
  validationBatchSize?: number;
  callbacks?: CustomCallbackArgs | CustomCallbackArgs[];
  /** Stops training after the current batch (Node; browsers: cross-origin isolated pages). */
  signal?: AbortSignal;
}

export class History {
  epoch: number[];
  history: Record<string, number[]>;
  params: Record<string, number | string>;
}

export interface ModelArtifacts {
  /** model.json (format "layers-model"; see runtime/layers/serialization.py). */
  modelJSON: Record<string, any>;
  modelJSONText: string;
  /** weights.bin */
  weightData: Uint8Array;
}
export interface SaveResult { modelJSONBytes: number; weightDataBytes: number; }

export interface LayerInfo {
  name: string;
  className: string;
  outputShape: (number | null)[] | (number | null)[][] | null;
  params: number;
}

export interface LayersModel extends Disposable {
  /** The Python model (a handle proxy). */
  readonly handle: PyProxy;
  /** Set to true (e.g. in a callback) to stop fit() after the current batch. */
  stopTraining: boolean;
  info(): Promise<{ name: string; layers: LayerInfo[]; inputs: (number | null)[][];
    outputs: (number | null)[][] }>;
  add(layer: LayerSpec): Promise<void>;
  compile(args: ModelCompileArgs): Promise<void>;
  fit(x: Data, y: Data, args?: ModelFitArgs): Promise<History>;
  predict(x: Data, args?: { batchSize?: number }): Promise<Tensor>;
  /** Loss and metrics as numbers: {loss, mae, ...}. */
  evaluate(x: Data, y: Data, args?: { batchSize?: number }): Promise<Record<string, number>>;
  summary(args?: { print?: boolean; lineLength?: number }): Promise<string>;
  getWeights(): Promise<Tensor[]>;
  setWeights(values: Data[]): Promise<void>;
  saveArtifacts(args?: { includeOptimizer?: boolean }): Promise<ModelArtifacts>;
  /** Node: a directory (path or file:// URL); browser: "downloads://name"; or a handler. */
  save(target: string | { save(artifacts: ModelArtifacts): unknown },
    args?: { includeOptimizer?: boolean }): Promise<SaveResult>;
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface Layers {
  sequential(args?: { layers?: LayerSpec[]; name?: string }): Promise<LayersModel>;
  /** Node: a directory, model.json path or file:// URL; browser: the URL of model.json;
   * anywhere: {modelJSON, weightData}. */
  loadModel(source: string | { modelJSON: string | Record<string, any>;
    weightData: Uint8Array | ArrayBuffer | ArrayBufferView }, args?: { compile?: boolean }):
    Promise<LayersModel>;
  /** Any registered layer class by name. */
  layer(className: string, config?: Record<string, unknown>): LayerSpec;
  dense(args: DenseLayerArgs): LayerSpec;
  dropout(args: LayerArgs & { rate: number; seed?: number }): LayerSpec;
  flatten(args?: LayerArgs): LayerSpec;
  embedding(args: LayerArgs & { inputDim: number; outputDim: number;
    embeddingsInitializer?: string }): LayerSpec;
  activation(args: LayerArgs & { activation: string }): LayerSpec;
  inputLayer(args: LayerArgs): LayerSpec;
  add(args?: LayerArgs): LayerSpec;
  average(args?: LayerArgs): LayerSpec;
  concatenate(args?: LayerArgs & { axis?: number }): LayerSpec;
  multiply(args?: LayerArgs): LayerSpec;
  subtract(args?: LayerArgs): LayerSpec;
  LayerSpec: typeof LayerSpec;
}

export interface Train {
  sgd(learningRate?: number): OptimizerSpec;
  momentum(learningRate: number, momentum?: number, useNesterov?: boolean): OptimizerSpec;
  adam(learningRate?: number, beta1?: number, beta2?: number, epsilon?: number): OptimizerSpec;
  rmsprop(learningRate?: number, decay?: number, momentum?: number, epsilon?: number,
    centered?: boolean): OptimizerSpec;
  adagrad(learningRate?: number, initialAccumulatorValue?: number): OptimizerSpec;
  OptimizerSpec: typeof OptimizerSpec;
}

// ---- tb.ppl / tb.mcmc (ppl.js; Python: runtime/ppl via bridge/js/ppl.py) --------------------

/** A lazy array of a model (data, variable, operation or distribution): a Python object. */
export type LazyArray = PyProxy;
type PplArg = LazyArray | Tensor | number | NestedArray | TypedArray;
export interface DistributionOptions {
  /** Shape of the variable it makes (a number or a shape). */
  dim?: number | number[];
  /** (lower, upper) for continuous families: renormalised through the CDF. */
  truncation?: [number, number];
  /** The variable's name (in the draws; model(x) positional uses it). */
  name?: string;
  /** Multivariate families: rows of independent draws. */
  nRealisations?: number;
  /** Multivariate families: the event size, when the parameters do not fix it. */
  dimension?: number;
  [option: string]: unknown;
}
type Dist = (...args: (PplArg | DistributionOptions)[]) => Promise<LazyArray>;

export interface SummaryRow {
  /** "mu", "theta[0]" (0-based, as in Python) */
  variable: string;
  mean: number; sd: number; q5: number; q50: number; q95: number;
  rhat: number; essBulk: number; essTail: number;
}

export interface ProgressInfo {
  iteration: number;
  total: number;
  phase: "warmup" | "sampling";
  /** all so far: warmup's and the kept draws' */
  divergences: number;
  /** those of warmup so far (was warmup_divergences before the doors shared one spec) */
  warmupDivergences: number;
  /** seconds since sampling started */
  elapsed: number;
}

/** The sampler kernel and its options (NUTS: maxDepth; HMC: nLeapfrog; greta's: maxTreedepth,
 * lMin/lMax (leapfrog steps drawn per iteration), epsilon (initial step size), diagSd (initial
 * metric sds); rwmh: proposal, epsilon, diagSd; slice: maxDoublings). greta's options, rwmh
 * and slice run on the interpreted sampler. */
export interface McmcSamplerOptions {
  kind: "nuts" | "hmc" | "rwmh" | "slice";
  maxDepth?: number;
  nLeapfrog?: number;
  targetAccept?: number;
  stepSize?: number;
  maxTreedepth?: number;
  lMin?: number;
  lMax?: number;
  epsilon?: number;
  diagSd?: number | number[];
  proposal?: "normal" | "uniform";
  maxDoublings?: number;
}

/** greta's extra_samples: more draws of the same chains (no new warmup). */
export interface ExtraSamplesOptions {
  nSamples?: number;
  thin?: number;
  /** onProgress every this many iterations (default 50). */
  callbackEvery?: number;
  onProgress?: (info: ProgressInfo) => unknown;
  signal?: AbortSignal;
}

/** greta's optimiser objects' options (each takes its own: adam learningRate, beta1, beta2,
 * epsilon; momentum learningRate, momentum, useNesterov; lBfgsB maxcor, maxls; ...). */
export interface OptimiserOptions {
  learningRate?: number;
  momentum?: number;
  useNesterov?: boolean;
  initialAccumulatorValue?: number;
  rho?: number;
  epsilon?: number;
  decay?: number;
  beta1?: number;
  beta2?: number;
  maxcor?: number;
  maxls?: number;
}

/** An optimiser object for opt(): tb.ppl.adam({learningRate: 0.1}), ... */
export interface Optimiser extends OptimiserOptions {
  name: "gradient_descent" | "momentum" | "adagrad" | "adadelta" | "rms_prop" | "adam"
    | "adamax" | "nadam" | "bfgs" | "l_bfgs_b" | "nelder_mead";
}

export interface OptOptions {
  optimiser?: "lbfgs" | "adam" | Optimiser;
  initialValues?: Record<string, unknown>;
  maxIterations?: number;
  tolerance?: number;
  learningRate?: number;
  seed?: number;
  /** Add the log Jacobian of the constraining transforms (the mode on the free scale). */
  adjust?: boolean;
}

export interface OptResult {
  /** The mode: per variable, its values row-major. */
  par: Record<string, Float64Array>;
  shapes: Record<string, number[]>;
  /** The log density there. */
  value: number;
  iterations: number;
  converged: boolean;
}

/** tb.ppl.simulate's options. Python's and R's `cluster` (blocks of draws as tasks on a Dask
 * cluster) is not applicable here: Pyodide has no socket to a Dask scheduler. tb.sbc and
 * tb.map are not offered in JS (the front-door spec's `not_in_door` says why). */
export interface SimulateOptions {
  nsim?: number;
  seed?: number;
  values?: Draws;
}

export interface McmcOptions {
  nSamples?: number;
  warmup?: number;
  chains?: number;
  seed?: number;
  thin?: number;
  sampler?: "nuts" | "hmc" | "rwmh" | "slice" | McmcSamplerOptions;
  initialValues?: Record<string, unknown> | Record<string, unknown>[];
  /** onProgress every this many iterations (default 50). */
  callbackEvery?: number;
  /** "auto" (default) or "compiled": the model's log density lowered to JavaScript and
   * NUTS/HMC in JavaScript (draws.backend "js"); "numpy": the interpreted reference sampler. */
  backend?: "auto" | "compiled" | "numpy";
  /** Fire-and-forget progress (the main thread in browsers). */
  onProgress?: (info: ProgressInfo) => unknown;
  /** Stops at the end of the current block of iterations (about 50 ms), keeping the draws so
   * far (Node: an abort from a callback; browsers: cross-origin isolated pages). */
  signal?: AbortSignal;
}

export class Draws implements Disposable {
  /** The Python Draws object. */
  readonly handle: PyProxy;
  /** Per variable: chains x draws x shape values, row-major. */
  variables: Record<string, Float64Array>;
  shapes: Record<string, number[]>;
  chains: number;
  nDraws: number;
  interrupted: boolean;
  divergences: number;
  /** Which sampler ran: "js" (compiled to JavaScript) or "numpy" (interpreted). */
  backend: string;
  summary(): SummaryRow[];
  /** One chain's draws of a variable (a subarray). */
  chain(name: string, chain: number): Float64Array;
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface Ppl {
  asData(value: NestedArray | TypedArray | Tensor | { data: TypedArray; shape: number[] },
    options?: { name?: string; dtype?: DType }): Promise<LazyArray>;
  /** Bounds are numbers or arrays broadcasting against dim (each element its own bounds). */
  variable(options?: { lower?: number | NestedArray; upper?: number | NestedArray;
    dim?: number | number[]; name?: string; dtype?: DType }): Promise<LazyArray>;
  /** Increasing along the last axis (greta's ordered_variable); a flat prior. */
  orderedVariable(dim: number | number[], options?: { name?: string; dtype?: DType }):
    Promise<LazyArray>;
  /** Positive and summing to 1 along the last axis (greta's simplex_variable). */
  simplexVariable(dim: number | number[], options?: { name?: string; dtype?: DType }):
    Promise<LazyArray>;
  /** A lower-triangular n x n matrix with a positive diagonal: a covariance's Cholesky factor,
   * or with correlation: true a correlation matrix's (rows of unit length). */
  choleskyVariable(dim: number | number[], options?: { correlation?: boolean; name?: string;
    dtype?: DType }): Promise<LazyArray>;
  distribution(target: LazyArray, dist: LazyArray): Promise<LazyArray>;
  model(...targets: LazyArray[]): Promise<PyProxy>;
  /** Names from the keys; `precision: "single"` (greta's; default "double") computes the log
   * density and its gradient in float32 (sampled by the interpreted sampler). */
  model(named: Record<string, LazyArray | "double" | "single">): Promise<PyProxy>;
  /** Over draws: {data, shape: [chains, draws, ...shape], dtype: "float64"}; for given values
   * (an object keyed by variable name, or a Map keyed by lazy arrays): a Tensor. */
  calculate(target: LazyArray, values: Draws): Promise<{ data: Float64Array; shape: number[];
    dtype: "float64" }>;
  calculate(target: LazyArray, values?: Map<LazyArray, unknown>
    | Record<string, PplArg | { data: TypedArray; shape: number[] }>): Promise<Tensor>;
  /** Prior (predictive) simulations, or with `values: draws` the posterior predictive. */
  simulate(target: LazyArray, options?: SimulateOptions):
    Promise<{ data: Float64Array; shape: number[]; dtype: string }>;
  /** The lazy array as printed in Python and R: known values, `?` where unknown. */
  format(x: LazyArray): Promise<string>;
  mcmc(model: PyProxy, options?: McmcOptions): Promise<Draws>;
  /** greta's extra_samples: the draws followed by nSamples more of the same chains. */
  extraSamples(draws: Draws, options?: ExtraSamplesOptions): Promise<Draws>;
  opt(model: PyProxy, options?: OptOptions): Promise<OptResult>;
  gradientDescent(options?: OptimiserOptions): Optimiser;
  momentum(options?: OptimiserOptions): Optimiser;
  adagrad(options?: OptimiserOptions): Optimiser;
  adadelta(options?: OptimiserOptions): Optimiser;
  rmsProp(options?: OptimiserOptions): Optimiser;
  adam(options?: OptimiserOptions): Optimiser;
  adamax(options?: OptimiserOptions): Optimiser;
  nadam(options?: OptimiserOptions): Optimiser;
  bfgs(options?: OptimiserOptions): Optimiser;
  lBfgsB(options?: OptimiserOptions): Optimiser;
  nelderMead(options?: OptimiserOptions): Optimiser;
  bernoulli: Dist; beta: Dist; betaBinomial: Dist; binomial: Dist; categorical: Dist;
  cauchy: Dist; chiSquared: Dist; dirichlet: Dist; exponential: Dist; gamma: Dist;
  inverseGamma: Dist; laplace: Dist; lkjCorrelation: Dist; logistic: Dist; lognormal: Dist;
  multinomial: Dist; multivariateNormal: Dist; negativeBinomial: Dist; normal: Dist;
  pareto: Dist; poisson: Dist; student: Dist; uniform: Dist; weibull: Dist;
  dirichletMultinomial: Dist; f: Dist; hypergeometric: Dist; wishart: Dist;
  /** greta's mixture: the distributions, then {weights (one per distribution along the first
   * axis), dim}. */
  mixture(...args: (LazyArray | { weights: PplArg; dim?: number | number[] })[]):
    Promise<LazyArray>;
  /** greta's joint: independent univariate distributions side by side on a new last axis. */
  joint(...args: (LazyArray | { dim?: number | number[] })[]): Promise<LazyArray>;
  /** greta's inverse links: normal CDF, 1 - exp(-exp(x)), Cauchy CDF, and n x (K - 1) log-odds
   * to n x K probabilities. */
  iprobit(x: PplArg): Promise<LazyArray | Tensor>;
  icloglog(x: PplArg): Promise<LazyArray | Tensor>;
  icauchit(x: PplArg): Promise<LazyArray | Tensor>;
  imultilogit(x: PplArg): Promise<LazyArray | Tensor>;
  Draws: typeof Draws;
}

export interface ScanOptions {
  /** Number of steps when xs is null (else it must equal the first dimension of xs). */
  length?: number | null;
  /** Run from the last slice to the first. */
  reverse?: boolean;
}

/** Options of tb.odeSolve (Python's tb.ode_solve). */
export interface OdeSolveOptions {
  /** The start time (default times[0]; then the first row of the result is y0). */
  t0?: number | null;
  /** "rk45" (Dormand-Prince 5(4), default; "dopri5"), or for stiff systems "rosenbrock"
   * (linearly implicit Euler extrapolated to order 4; "bdf" and "stiff" are aliases) or "ros2". */
  method?: "rk45" | "dopri5" | "rosenbrock" | "bdf" | "stiff" | "ros2";
  /** Relative tolerance of each step's error (default 1e-6). */
  rtol?: number;
  /** Absolute tolerance of each step's error (default 1e-6). */
  atol?: number;
  /** Most steps (accepted and rejected) before an error (default 100000). */
  maxSteps?: number;
}

export interface TensorBridge {
  readonly info: BridgeInfo;
  /** Layers and models, TF.js style. */
  readonly layers: Layers;
  /** Optimizers: tb.train.adam(0.01). */
  readonly train: Train;
  /** TF.js's name of tb.layers.sequential. */
  sequential: Layers["sequential"];
  /** TF.js's name of tb.layers.loadModel. */
  loadLayersModel: Layers["loadModel"];
  /** greta-style models: distributions, variables, data. */
  readonly ppl: Ppl;
  /** NUTS (or HMC) draws from a model. */
  mcmc(model: PyProxy, options?: McmcOptions): Promise<Draws>;
  readonly Tensor: typeof Tensor;
  /** A TypedArray (Float32Array -> float32, Float64Array -> float64, Int8/Int16/Int32/Uint8/
   * Uint8Clamped/Uint16Array -> int32, Uint32/BigInt64/BigUint64Array -> int64), nested arrays
   * of numbers (float32) or booleans (bool), a number or a boolean. Anything else rejects
   * with Python's error naming `data` (TypeError, ValueError for ragged arrays, OverflowError
   * for integers that do not fit the dtype). */
  tensor(data: TypedArray | NestedArray, shape?: number[] | TensorOptions | null,
    dtype?: DType): Promise<Tensor>;
  /** Any runtime op by name. */
  op(name: string, ...args: Arg[]): Promise<any>;
  kw(obj: Record<string, unknown>): Kwargs;
  /** Gradient of f (written with tb ops, traced and run in Python; or a Python function). */
  grad(f: ((...xs: any[]) => any) | PyProxy, argnums?: number | number[]):
    (...args: Arg[]) => Promise<Tensor | Tensor[]>;
  valueAndGrad(f: ((...xs: any[]) => any) | PyProxy, argnums?: number | number[]):
    (...args: Arg[]) => Promise<[Tensor, Tensor | Tensor[]]>;
  /** A loop with carried state (Python's tb.scan, JAX's lax.scan): fn(carry, x) -> [carry, y]
   * once per slice x of xs along its first axis (init and xs: a tensor, a lazy array or
   * nested arrays of them; xs null with options.length). fn is traced once with tb ops, like a
   * function given to grad, and may use tensors and lazy arrays it closes over (a model's
   * parameters: then the results are lazy arrays), and inside grad the traced values of the
   * enclosing function. Resolves to [final carry, ys], ys stacked on a new first axis in the
   * order of xs (also with reverse). */
  scan(fn: (carry: any, x: any) => [any, any] | Promise<[any, any]>, init: any, xs?: any,
    options?: ScanOptions): Promise<[any, any]>;
  /** Solve the initial value problem dy/dt = fn(t, y, ...args), y(t0) = y0 (Python's
   * tb.ode_solve): resolves to y at each of times, shape [times.length, ...y0's shape]. fn is
   * traced once with tb ops, like scan's step: t is a 0-d tensor, y has y0's shape, and fn
   * returns dy/dt (a tensor, or an array of tensors and numbers). times: increasing and not
   * before t0. Differentiable in y0 and args (tensors, numbers, a model's lazy arrays: then the
   * result is one), inside grad and in a model's density; a parameter must go in as one of
   * args, not as a value fn closes over. The options object comes last:
   * odeSolve(fn, y0, times, theta, {method: "rosenbrock", rtol: 1e-8}). */
  odeSolve(fn: (t: any, y: any, ...args: any[]) => any, y0: any,
    times: number[] | Float64Array | Tensor, ...argsThenOptions: any[]): Promise<Tensor>;
  pyimport(module: string): Promise<PyProxy>;
  runPython(code: string): Promise<any>;
  /** The bridge's handle table (live handles by type) and the JS-side count. */
  handles(): Promise<HandleStats>;
  memory(): Promise<{ runtime: Record<string, unknown>; tf: Record<string, unknown> }>;
  /** Register converters for a Python type and/or a JS class (the bridge's "js" tables). */
  registerConverter(spec: ConverterSpec): Promise<string>;
  unregisterConverter(name: string, python?: string | null): Promise<void>;
  /** KeyboardInterrupt in the worker's Python (cross-origin isolated pages); false if not. */
  interrupt(): boolean;
  close(): Promise<void>;
  add: Op; subtract: Op; multiply: Op; divide: Op; power: Op; maximum: Op; minimum: Op;
  sub: Op; mul: Op; div: Op; pow: Op; neg: Op; matmul: Op; mod: Op; floor_divide: Op;
  equal: Op; not_equal: Op; less: Op; less_equal: Op; greater: Op; greater_equal: Op;
  logical_and: Op; logical_or: Op; logical_not: Op; where: Op; clip: Op;
  exp: Op; log: Op; log1p: Op; expm1: Op; sqrt: Op; rsqrt: Op; square: Op; abs: Op;
  negative: Op; reciprocal: Op; tanh: Op; sigmoid: Op; softplus: Op; sin: Op; cos: Op; tan: Op;
  erf: Op; erfc: Op; lgamma: Op; digamma: Op; polygamma: Op; sign: Op; floor: Op; ceil: Op;
  arcsin: Op; arccos: Op; arctan: Op; arcsinh: Op; arccosh: Op; arctanh: Op; sinpi: Op;
  cospi: Op; tanpi: Op; trigamma: Op; solve: Op; eigh: Op;
  round: Op; isnan: Op; isfinite: Op; relu: Op; elu: Op; gelu: Op; selu: Op; softmax: Op;
  log_softmax: Op; sum: Op; mean: Op; prod: Op; max: Op; min: Op; logsumexp: Op; argmax: Op;
  argmin: Op; cumsum: Op; cumprod: Op; outer: Op; kron: Op; repeat: Op; tile: Op;
  segment_sum: Op; segmentSum: Op;
  reshape: Op; transpose: Op; expand_dims: Op; squeeze: Op;
  concat: Op; stack: Op; broadcast_to: Op; swapaxes: Op; flatten: Op; getitem: Op; take: Op;
  index_update: Op; index_add: Op; one_hot: Op; cholesky: Op; triangular_solve: Op; tril: Op;
  triu: Op; cast: Op; stop_gradient: Op; zeros: Op; ones: Op; full: Op; eye: Op; arange: Op;
  linspace: Op; zeros_like: Op; ones_like: Op; full_like: Op;
  // TF.js names (the same ops): camelCase of the snake_case ones, and TF.js's spellings
  logicalNot: Op; logSoftmax: Op; stopGradient: Op; floorDivide: Op; notEqual: Op;
  lessEqual: Op; greaterEqual: Op; logicalAnd: Op; logicalOr: Op; expandDims: Op;
  broadcastTo: Op; indexUpdate: Op; indexAdd: Op; oneHot: Op; triangularSolve: Op;
  zerosLike: Op; onesLike: Op; fullLike: Op; argMax: Op; argMin: Op; clipByValue: Op;
  range: Op; asin: Op; acos: Op; atan: Op; asinh: Op; acosh: Op; atanh: Op;
}

export function loadTensorBridge(options?: LoadOptions): Promise<TensorBridge>;
