// tb.ppl and tb.mcmc: greta-style models from JavaScript, with the Python names in camelCase.
//
//   const g = tb.ppl;
//   const y = await g.asData([28, 8, -3, 7, -1, 1, 18, 12]);
//   const mu = await g.normal(0, 5);
//   const tau = await g.cauchy(0, 5, { truncation: [0, Infinity] });
//   const eta = await g.normal(0, 1, { dim: 8 });
//   const theta = await tb.add(mu, await tb.mul(tau, eta));      // any runtime op
//   await g.distribution(y, await g.normal(theta, sigma));
//   const m = await g.model({ mu, tau, theta });                  // names from the keys
//   const draws = await tb.mcmc(m, { nSamples: 1000, warmup: 1000, chains: 4, seed: 42,
//     onProgress: ({ iteration, total, phase }) => ..., signal });
//
// Lazy arrays, distributions and models are Python objects held by handle. Progress events are
// fire and forget (see layers.js); `signal` (an AbortSignal) stops sampling at the next
// iteration and the draws taken so far are returned (`draws.interrupted`). Python half:
// bridge/js/ppl.py.

import { snake } from "./layers.js";

// greta's optimiser objects for opt() (runtime/ppl/optimisers.py OPTIMISERS, Python names;
// tb.ppl.gradientDescent, tb.ppl.lBfgsB... in JS)
const OPTIMISERS = ["gradient_descent", "momentum", "adagrad", "adadelta", "rms_prop", "adam",
  "adamax", "nadam", "bfgs", "l_bfgs_b", "nelder_mead"];
const camel = (n) => n.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

// the distribution catalogue (runtime/spec.py DISTRIBUTIONS, camelCase: the spec's naming rule;
// tests/bridge/test_front_door_spec.py fails when this list and the runtime's differ)
const DISTRIBUTIONS = ["bernoulli", "beta", "betaBinomial", "binomial", "categorical", "cauchy",
  "chiSquared", "dirichlet", "exponential", "gamma", "inverseGamma", "laplace", "lkjCorrelation",
  "logistic", "lognormal", "multinomial", "multivariateNormal", "negativeBinomial", "normal",
  "pareto", "poisson", "student", "uniform", "weibull",
  "dirichletMultinomial", "f", "hypergeometric", "wishart"];

function num(v) {
  if (typeof v !== "string") return v;
  return v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : v;
}

/** Posterior draws: per variable a Float64Array (chains x draws x shape, row-major). */
export class Draws {
  constructor(r) {
    this.handle = r.handle;  // the Python Draws (tb.ppl.calculate(x, draws) uses it)
    this.variables = r.variables;
    for (const [k, v] of Object.entries(this.variables)) {
      if (!(v instanceof Float64Array)) {
        this.variables[k] = new Float64Array(v.buffer, v.byteOffset, v.byteLength / 8);
      }
    }
    this.shapes = r.shapes;  // name -> [chains, draws, ...shape]
    this.chains = r.chains;
    this.nDraws = r.nDraws;
    this.interrupted = r.interrupted;
    this.backend = r.backend;
    this.divergences = r.divergences;
    this._summary = r.summary.map((row) => Object.fromEntries(Object.entries(row)
      .map(([k, v]) => [k, k === "variable" ? v : num(v)])));
  }

  /** One row per scalar parameter ("theta[0]", 0-based like Python): {variable, mean, sd, q5,
   * q50, q95, rhat, essBulk, essTail}. */
  summary() { return this._summary.map((r) => ({ ...r })); }

  /** Draws of one chain of a variable (a subarray, no copy). */
  chain(name, c) {
    const shape = this.shapes[name];
    const per = shape.slice(1).reduce((a, b) => a * b, 1);
    return this.variables[name].subarray(c * per, (c + 1) * per);
  }

  dispose() { this.handle?.dispose?.(); }
  [Symbol.dispose]() { this.dispose(); }
}

function isPlainObject(x) {
  return x !== null && typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype;
}

// Python keywords that are argument names: escaped with a trailing _ in Python (poisson's
// lambda_), plain in JS, as the spec's naming rule (door_name) has them
const PY_KEYWORDS = new Set(["lambda"]);

/** The runtime's name of a JS argument name: snake_case (a Python keyword escaped), except
 * greta's `Sigma`, which the spec's naming rule keeps in every door. */
export function pyName(k) {
  if (k === "Sigma") return k;
  const s = snake(k);
  return PY_KEYWORDS.has(s) ? `${s}_` : s;
}

export function makePpl(tb) {
  let modP = null;
  const mod = () => (modP ??= tb.pyimport("tensorbridge.bridge.js.ppl"));

  const kwargs = (o) => {
    const out = {};
    for (const [k, v] of Object.entries(o)) if (v !== undefined) out[pyName(k)] = v;
    return out;
  };

  /** tb.<pyName>(...args) with a trailing plain object as keyword arguments; the arguments
   * are checked in Python first (bridge/js/ppl.py make_distribution), so a bad one is named. */
  async function call(pyName, args) {
    const m = await mod();
    const last = args[args.length - 1];
    if (args.length && isPlainObject(last)) {
      return m.make_distribution(pyName, ...args.slice(0, -1), tb.kw(kwargs(last)));
    }
    return m.make_distribution(pyName, ...args);
  }

  /** mixture()/joint(): the distributions, then (last) a plain object of options. */
  function combine(pyName, args) {
    const last = args[args.length - 1];
    if (args.length && isPlainObject(last)) {
      return tb.op(pyName, ...args.slice(0, -1), tb.kw(kwargs(last)));
    }
    return tb.op(pyName, ...args);
  }

  async function named(values, made) {  // {name: value}, typed arrays made tensors
    if (!isPlainObject(values)) {
      throw new TypeError("calculate: values must be draws, a Map or an object {name: value}");
    }
    const out = {};
    for (const [k, v] of Object.entries(values)) {
      out[k] = await value(v);
      if (out[k] !== v) made.push(out[k]);
    }
    return out;
  }

  async function value(x) {  // data for as_data: typed arrays / {data, shape} as tensors
    if (ArrayBuffer.isView(x)) return tb.tensor(x);
    if (isPlainObject(x) && ArrayBuffer.isView(x.data)) return tb.tensor(x.data, x.shape, x.dtype);
    return x;
  }

  const ppl = {
    Draws,
    /** Known values as a data array: nested arrays, a TypedArray, {data, shape} or a Tensor. */
    async asData(x, options = {}) {
      return (await mod()).make_variable("as_data", await value(x), tb.kw(kwargs(options)));
    },
    /** variable({lower, upper, dim, name}): a flat prior on (lower, upper); the bounds are
     * numbers or arrays that broadcast against dim (each element its own bounds). The
     * arguments are checked by the runtime's spec (a wrong one is named). */
    async variable(options = {}) {
      return (await mod()).make_variable("variable", tb.kw(kwargs(options)));
    },
    /** orderedVariable(dim, {name}): increasing along the last axis (greta's
     * ordered_variable); a flat prior. */
    async orderedVariable(dim, options = {}) {
      return (await mod()).make_variable("ordered_variable", dim, tb.kw(kwargs(options)));
    },
    /** simplexVariable(dim, {name}): positive, summing to 1 along the last axis. */
    async simplexVariable(dim, options = {}) {
      return (await mod()).make_variable("simplex_variable", dim, tb.kw(kwargs(options)));
    },
    /** choleskyVariable(dim, {correlation, name}): a lower-triangular n x n matrix with a
     * positive diagonal (the Cholesky factor of a covariance, or with correlation: true of a
     * correlation matrix). */
    async choleskyVariable(dim, options = {}) {
      return (await mod()).make_variable("cholesky_variable", dim, tb.kw(kwargs(options)));
    },
    /** distribution(target, dist): target (data or a variable) follows dist. */
    async distribution(target, dist) {
      await (await mod()).distribution(target, dist);
      return target;
    },
    /** model(mu, tau) or model({mu, tau, theta}) (names from the keys); greta's precision
     * in the object: model({mu, precision: "single"}) computes in float32. */
    async model(...targets) {
      const m = await mod();
      if (targets.length === 1 && isPlainObject(targets[0])) {
        return m.model(tb.kw(targets[0]));
      }
      return m.model(...targets);
    },
    /** Values of a lazy array: over posterior draws -> {data: Float64Array, shape: [chains,
     * draws, ...shape], dtype}; for given values (a plain object keyed by variable name, or a
     * Map keyed by lazy arrays) -> a Tensor. */
    async calculate(target, values) {
      const m = await mod();
      if (values instanceof Draws) {
        const r = await m.calculate(target, values.handle);
        const d = r.data;
        r.data = d instanceof Float64Array ? d : new Float64Array(d.buffer, d.byteOffset,
          d.byteLength / 8);
        return r;
      }
      if (values instanceof Map || values == null) return m.calculate(target, values ?? null);
      const made = [];
      try {
        return await m.calculate(target, await named(values, made));
      } finally {
        for (const t of made) t.dispose();
      }
    },
    /** Simulations of a lazy array, {data: Float64Array, shape: [nsim, ...shape], dtype}:
     * from the prior (prior predictive for data with a distribution), or with
     * `{values: draws}` the posterior predictive (one random posterior draw per simulation;
     * `nsim` omitted: every draw). Options: {nsim, seed, values}. */
    async simulate(target, options = {}) {
      const { nsim = null, seed = null, values = null } = options;
      if (values !== null && !(values instanceof Draws)) {
        throw new TypeError("simulate: values must be the draws from tb.mcmc (or omitted)");
      }
      const r = await (await mod()).simulate(target, nsim, seed, values?.handle ?? null);
      const d = r.data;
      r.data = d instanceof Float64Array ? d : new Float64Array(d.buffer, d.byteOffset,
        d.byteLength / 8);
      return r;
    },
    /** The lazy array as Python and R print it: known values as numbers, unknown ones as
     * `?` (e.g. "lazy array (operation) [8]\n[?, ?, ...]"). */
    async format(x) { return (await mod()).format_lazy(x); },
    mcmc: (m, options) => mcmc(m, options),
    /** greta's extra_samples: more draws of the chains of `draws` (from tb.mcmc), going on
     * from their last states with the adapted step size and metric; {nSamples, thin,
     * callbackEvery, onProgress, signal} -> Draws holding the earlier draws and the new. */
    extraSamples: (draws, options) => extraSamples(draws, options),
    /** mixture(...dists, {weights, dim}): greta's mixture; the weights (positive) have one
     * entry per distribution along their first axis. */
    mixture: (...args) => combine("mixture", args),
    /** joint(...dists, {dim}): independent univariate distributions side by side on a new
     * last axis. */
    joint: (...args) => combine("joint", args),
    /** greta's inverse links (Python's iprobit, icloglog, icauchit, imultilogit). */
    iprobit: (x) => tb.op("iprobit", x),
    icloglog: (x) => tb.op("icloglog", x),
    icauchit: (x) => tb.op("icauchit", x),
    imultilogit: (x) => tb.op("imultilogit", x),
    /** The posterior mode: opt(model, {optimiser: "lbfgs" | "adam" | an optimiser object
     * (tb.ppl.adam({learningRate: 0.1}), ...), initialValues, maxIterations, tolerance,
     * learningRate, seed, adjust}) -> {par: {name: Float64Array}, shapes: {name: shape},
     * value (log density), iterations, converged}. */
    async opt(m, options = {}) {
      const { optimiser, ...rest } = options;
      const opts = kwargs(rest);
      if (optimiser !== undefined) {
        opts.optimiser = typeof optimiser === "string" ? optimiser
          : { ...kwargs(optimiser), name: optimiser.name };
      }
      const r = await (await mod()).opt(m, opts);
      for (const [k, d] of Object.entries(r.par)) {
        if (!(d instanceof Float64Array)) {
          r.par[k] = new Float64Array(d.buffer, d.byteOffset, d.byteLength / 8);
        }
      }
      r.value = num(r.value);
      return r;
    },
  };
  for (const name of DISTRIBUTIONS) ppl[name] = (...args) => call(snake(name), args);
  // greta's optimisers for opt(): plain objects {name, ...options in camelCase}
  for (const name of OPTIMISERS) {
    ppl[camel(name)] = (options = {}) => ({ ...options, name });
  }

  /**
   * mcmc(model, {nSamples, warmup, chains, seed, thin, sampler: "nuts" | "hmc" |
   * {kind, maxDepth, nLeapfrog, targetAccept, stepSize}, initialValues, callbackEvery,
   * onProgress({iteration, total, phase, divergences, warmupDivergences, elapsed}), signal})
   * -> Draws (the runtime's McmcProgress event, fields in camelCase)
   */
  async function mcmc(m, options = {}) {
    const { onProgress, signal, sampler, ...rest } = options;
    const opts = kwargs(rest);
    if (sampler !== undefined) {
      opts.sampler = typeof sampler === "string" ? sampler : kwargs(sampler);
    }
    return withProgress(onProgress, signal, async (ch) => (await mod()).mcmc(m, opts, ch));
  }

  async function extraSamples(draws, options = {}) {
    if (!(draws instanceof Draws)) {
      throw new TypeError("extraSamples: draws must be the Draws of tb.mcmc");
    }
    const { onProgress, signal, ...rest } = options;
    const opts = kwargs(rest);
    return withProgress(onProgress, signal,
      async (ch) => (await mod()).extra_samples(draws.handle, opts, ch));
  }

  /** Runs `run(channel)` (a sampler call) with onProgress fed from the event channel and
   * `signal` setting its stop flag; its result as Draws. */
  async function withProgress(onProgress, signal, run) {
    let failure = null;
    const ch = tb._openEvents((text) => {
      if (typeof onProgress !== "function") return;
      const info = JSON.parse(text);
      for (const k of Object.keys(info)) info[k] = num(info[k]);
      try { onProgress(info); } catch (e) { failure ??= e; tb._stopEvents(ch); }
    });
    const onAbort = () => tb._stopEvents(ch);
    if (signal) {
      if (signal.aborted) onAbort(); else signal.addEventListener("abort", onAbort);
    }
    try {
      const r = await run(ch);
      if (failure) throw failure;
      return new Draws(r);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      tb._closeEvents(ch);
    }
  }
  return { ppl, mcmc };
}
