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

export interface TensorData<T extends TypedArray = TypedArray> {
  data: T;
  shape: number[];
  dtype: DType;
  /** Only from view(): true when `data` is a zero-copy view of the tensor's memory. */
  view?: boolean;
  /** Only from view(): stop using the view (it must not outlive the tensor). */
  release?: () => void;
}

/** Keyword arguments for ops and Python calls: `tb.sum(x, tb.kw({axis: 1}))`. */
export class Kwargs {
  constructor(obj: Record<string, unknown>);
  obj: Record<string, unknown>;
}

type Arg = Tensor | number | boolean | bigint | string | null | undefined | TypedArray
  | Arg[] | { [k: string]: unknown } | Map<unknown, unknown> | Set<unknown> | Kwargs
  | ((...args: any[]) => unknown) | PyProxy;

export class Tensor implements Disposable {
  readonly shape: number[];
  readonly dtype: DType;
  readonly backend: string;
  readonly size: number;
  readonly ndim: number;
  readonly disposed: boolean;
  /** The values as a typed array (a copy). float64 -> Float64Array, int64 -> BigInt64Array. */
  data(): Promise<TensorData>;
  /** A zero-copy view where the runtime is in-process (Node; wasm/cpu), else a copy. */
  view(): Promise<TensorData>;
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

/** The bridge's Error descriptor as it travels (see bridge/js_host.py). */
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

export class TensorBridgeError extends Error {
  /** "python", or "js" for a JS error that went through Python and came back. */
  language: string;
  /** The error's class name ("ValueError", "RangeError"). */
  type: string;
  /** The exception type as Python saw it ("ValueError"; JS errors: "JsCallbackError"). */
  pyType: string;
  /** Frames, oldest first. */
  traceback: string[];
  /** The traceback as Python prints it (JS errors: the JS stack). */
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

export interface TensorBridge {
  readonly info: BridgeInfo;
  tensor(data: TypedArray | NestedArray, shape?: number[], dtype?: DType): Promise<Tensor>;
  /** Any runtime op by name. */
  op(name: string, ...args: Arg[]): Promise<any>;
  kw(obj: Record<string, unknown>): Kwargs;
  /** Gradient of f (written with tb ops, traced and run in Python; or a Python function). */
  grad(f: ((...xs: any[]) => any) | PyProxy, argnums?: number | number[]):
    (...args: Arg[]) => Promise<Tensor | Tensor[]>;
  valueAndGrad(f: ((...xs: any[]) => any) | PyProxy, argnums?: number | number[]):
    (...args: Arg[]) => Promise<[Tensor, Tensor | Tensor[]]>;
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
  round: Op; isnan: Op; isfinite: Op; relu: Op; elu: Op; gelu: Op; selu: Op; softmax: Op;
  log_softmax: Op; sum: Op; mean: Op; prod: Op; max: Op; min: Op; logsumexp: Op; argmax: Op;
  argmin: Op; cumsum: Op; reshape: Op; transpose: Op; expand_dims: Op; squeeze: Op;
  concat: Op; stack: Op; broadcast_to: Op; swapaxes: Op; flatten: Op; getitem: Op; take: Op;
  index_update: Op; index_add: Op; one_hot: Op; cholesky: Op; triangular_solve: Op; tril: Op;
  triu: Op; cast: Op; stop_gradient: Op; zeros: Op; ones: Op; full: Op; eye: Op; arange: Op;
  linspace: Op; zeros_like: Op; ones_like: Op; full_like: Op;
}

export function loadTensorBridge(options?: LoadOptions): Promise<TensorBridge>;
