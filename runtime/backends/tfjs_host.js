// The kernel host of tensorbridge's `tfjs` backend (read by tfjs_host.py; see its docstring).
//
// A plain script, not a module: tfjs_backend.install(tf) evaluates this file's text as the body
// of `new Function("tf", ...)` followed by `return makeHost(tf);`, so the host is made once per
// Pyodide instance, with the TF.js namespace it was given, and touches no global.
/* exported makeHost */

/**
 * The host object: one method per kernel, each taking and returning tensor ids.
 * @param {object} tf the TF.js namespace (with a backend already set)
 */
function makeHost(tf) {
  "use strict";
  const IN = 64;
  const T = new Map();
  let nextId = 1;
  let scProxy = null, scBuf = null, sc = new Int32Array(0);

  function S() {
    // The scratch view is re-acquired when Wasm memory growth detached it (length 0).
    if (sc.length === 0 && scProxy !== null) {
      if (scBuf !== null) scBuf.release();
      scBuf = scProxy.getBuffer("i32");
      sc = scBuf.data;
    }
    return sc;
  }
  function put(t) {
    const id = nextId++;
    T.set(id, t);
    const s = S(), shape = t.shape, n = shape.length;
    s[0] = n;
    for (let i = 0; i < n; i++) s[1 + i] = shape[i];
    return id;
  }
  function get(id) {
    const t = T.get(id);
    if (t === undefined) throw new Error("tfjs host: tensor #" + id + " is not alive");
    if (t.isDisposed) throw new Error("tfjs host: tensor #" + id + " was disposed behind our back");
    return t;
  }
  function ints(off, n) {
    const s = S(), out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = s[IN + off + i];
    return out;
  }
  function axesOf(mask) {
    const out = [];
    for (let i = 0; mask !== 0; i++, mask >>>= 1) if (mask & 1) out.push(i);
    return out;
  }
  const run = (f) => put(tf.tidy(f));
  const copyIn = () => tf.getBackend() !== "wasm";  // wasm copies into its heap at once
  function fromView(view, shape, dtype) {
    return tf.tensor(copyIn() ? view.slice() : view, shape, dtype);
  }
  function reducedShape(shape, axes, keep) {
    const out = [];
    shape.forEach((d, i) => {
      if (!axes.includes(i)) out.push(d);
      else if (keep) out.push(1);
    });
    return out;
  }

  // ---- special functions in double precision -------------------------------------------
  const LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028,
    771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7];
  const LOG_SQRT_2PI = 0.91893853320467274;
  function lgamma(x) {
    if (Number.isNaN(x)) return NaN;
    if (x === Infinity || x === -Infinity) return Infinity;
    if (x <= 0 && Math.floor(x) === x) return Infinity;
    if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
    x -= 1;
    let a = LANCZOS[0];
    const t = x + 7.5;
    for (let i = 1; i < 9; i++) a += LANCZOS[i] / (x + i);
    return LOG_SQRT_2PI + (x + 0.5) * Math.log(t) - t + Math.log(a);
  }
  function digamma(x) {
    if (Number.isNaN(x) || x === -Infinity) return NaN;
    if (x === Infinity) return Infinity;
    if (x <= 0 && Math.floor(x) === x) return NaN;
    if (x < 0.5) return digamma(1 - x) - Math.PI / Math.tan(Math.PI * x);
    let r = 0;
    while (x < 6) { r -= 1 / x; x += 1; }
    const f = 1 / (x * x);
    const s = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132
      - f * (691 / 32760 - f / 12))))));
    return r + Math.log(x) - 0.5 / x - s;
  }
  const B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510];
  function factorial(n) { let f = 1; for (let i = 2; i <= n; i++) f *= i; return f; }
  function polygammaFn(n) {
    if (n === 0) return digamma;
    const sign = n % 2 === 0 ? -1 : 1, fact = factorial(n), fact1 = factorial(n - 1);
    const coef = B2K.map((b, k) => b * factorial(2 * (k + 1) + n - 1) / factorial(2 * (k + 1)));
    return (x) => {
      if (Number.isNaN(x) || x <= 0) return NaN;
      if (x === Infinity) return 0;
      let acc = 0;
      while (x < 20) { acc += fact / Math.pow(x, n + 1); x += 1; }
      let tail = fact1 / Math.pow(x, n) + fact / (2 * Math.pow(x, n + 1));
      for (let k = 0; k < coef.length; k++) tail += coef[k] / Math.pow(x, 2 * (k + 1) + n);
      return sign * (acc + tail);
    };
  }
  function erfSeries(x) {
    // 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)), fine to |x| < 2.5 in double
    let term = x, sum = x;
    const x2 = x * x;
    for (let n = 1; n < 200; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1.1283791670955126 * sum;
  }
  function erfc(x) {
    if (Number.isNaN(x)) return NaN;
    if (x < 0) return 2 - erfc(-x);
    if (x < 2) return 1 - erfSeries(x);
    if (x > 27) return 0;
    let t = x;  // continued fraction x + (1/2)/(x + 1/(x + (3/2)/(x + ...))), evaluated backward
    for (let k = 90; k >= 1; k--) t = x + (k / 2) / t;
    return Math.exp(-x * x) / (1.7724538509055159 * t);
  }
  function mapF(id, f) {
    const x = get(id);
    const v = x.dataSync();
    const out = new Float32Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = f(v[i]);
    return put(tf.tensor(out, x.shape, "float32"));
  }

  const H = {};
  H.set_scratch = (p) => { scProxy = p; sc = new Int32Array(0); S(); return sc.length; };
  H.free = (id) => { const t = T.get(id); if (t !== undefined) { T.delete(id); t.dispose(); } };
  H.live = () => T.size;
  H.memory = () => {
    const m = tf.memory();
    return { numTensors: m.numTensors, numBytes: m.numBytes, hostTensors: T.size,
             backend: tf.getBackend() };
  };
  H.get = get;
  H.adopt = (t) => put(t);
  H.shape_into = (id) => { const t = get(id); put_shape(t.shape); return t.shape.length; };
  function put_shape(shape) {
    const s = S();
    s[0] = shape.length;
    for (let i = 0; i < shape.length; i++) s[1 + i] = shape[i];
  }
  H.read = (id) => get(id).dataSync();
  H.dtype = (id) => get(id).dtype;

  // ---- elementwise unary ----------------------------------------------------------------
  const UNARY = { neg: "neg", abs: "abs", exp: "exp", log: "log", log1p: "log1p",
    expm1: "expm1", sqrt: "sqrt", rsqrt: "rsqrt", square: "square", reciprocal: "reciprocal",
    tanh: "tanh", sigmoid: "sigmoid", softplus: "softplus", sin: "sin", cos: "cos", tan: "tan",
    arcsin: "asin", arccos: "acos", arctan: "atan", arcsinh: "asinh", arccosh: "acosh",
    arctanh: "atanh", erf: "erf", logical_not: "logicalNot" };
  for (const [k, f] of Object.entries(UNARY)) { const fn = tf[f]; H[k] = (id) => put(fn(get(id))); }
  for (const k of ["floor", "ceil", "round"]) {
    const fn = tf[k];
    H[k] = (id) => { const x = get(id); return put(x.dtype === "float32" ? fn(x) : tf.clone(x)); };
  }
  H.sign = (id) => {
    const x = get(id);
    if (x.dtype !== "float32") return put(tf.sign(x));
    return run(() => tf.where(tf.isNaN(x), x, tf.sign(x)));
  };
  H.isnan = (id) => {
    const x = get(id);
    return put(x.dtype === "float32" ? tf.isNaN(x) : tf.zeros(x.shape, "bool"));
  };
  H.isfinite = (id) => {
    const x = get(id);
    return run(() => x.dtype === "float32" ? tf.isFinite(x)
      : tf.cast(tf.ones(x.shape, "int32"), "bool"));
  };
  H.lgamma = (id) => mapF(id, lgamma);
  H.digamma = (id) => mapF(id, digamma);
  H.erfc = (id) => mapF(id, erfc);
  H.polygamma = (id, n) => mapF(id, polygammaFn(n));
  H.cast = (id, dt) => {
    const x = get(id);
    if (x.dtype === dt) return put(tf.clone(x));
    if (dt === "bool") return run(() => tf.notEqual(x, tf.scalar(0, x.dtype)));
    return put(tf.cast(x, dt));
  };

  // ---- elementwise binary (NumPy broadcasting) ------------------------------------------
  function intSafe(op) {  // integer floor division / modulo by zero give 0, as in NumPy
    return (a, b) => {
      if (a.dtype === "float32") return op === "floordiv" ? tf.floor(tf.div(a, b)) : tf.mod(a, b);
      const zero = tf.equal(b, tf.scalar(0, b.dtype));  // (wasm traps on an integer x % 0)
      const safe = tf.where(zero, tf.onesLike(b), b);
      const r = op === "floordiv" ? tf.floorDiv(a, safe) : tf.mod(a, safe);
      return tf.where(zero, tf.zerosLike(r), r);
    };
  }
  const BINARY = { add: tf.add, sub: tf.sub, mul: tf.mul, div: tf.div, pow: tf.pow,
    maximum: tf.maximum, minimum: tf.minimum, equal: tf.equal, not_equal: tf.notEqual,
    less: tf.less, less_equal: tf.lessEqual, greater: tf.greater,
    greater_equal: tf.greaterEqual, logical_and: tf.logicalAnd, logical_or: tf.logicalOr };
  for (const [k, fn] of Object.entries(BINARY)) {
    H[k] = (a, b) => put(fn(get(a), get(b)));
    H[k + "_s"] = (a, v, first) => {
      const x = get(a), s = tf.scalar(v, x.dtype);
      try { return put(first ? fn(s, x) : fn(x, s)); } finally { s.dispose(); }
    };
  }
  for (const k of ["floordiv", "mod"]) {
    const fn = intSafe(k);
    H[k] = (a, b) => run(() => fn(get(a), get(b)));
    H[k + "_s"] = (a, v, first) => run(() => {
      const x = get(a), s = tf.scalar(v, x.dtype);
      return first ? fn(s, x) : fn(x, s);
    });
  }
  H.where = (c, a, b) => put(tf.where(get(c), get(a), get(b)));
  H.clip = (id, lo, hi) => {
    const x = get(id);
    return run(() => {
      if (x.dtype !== "float32") {
        let y = x;
        if (lo !== -Infinity) y = tf.maximum(y, tf.scalar(lo, x.dtype));
        if (hi !== Infinity) y = tf.minimum(y, tf.scalar(hi, x.dtype));
        return y === x ? tf.clone(x) : y;
      }
      return tf.where(tf.isNaN(x), x, tf.clipByValue(x, lo, hi));
    });
  };

  // ---- reductions -------------------------------------------------------------------------
  function reduction(fn, identity) {
    return (id, mask, keep) => {
      const x = get(id), axes = axesOf(mask);
      if (axes.length === 0) return put(tf.clone(x));
      if (x.size === 0) return put(tf.fill(reducedShape(x.shape, axes, keep), identity, x.dtype));
      return put(fn(x, axes, keep));
    };
  }
  H.sum = reduction(tf.sum, 0);
  H.prod = reduction(tf.prod, 1);
  H.max = reduction(tf.max, -Infinity);
  H.min = reduction(tf.min, Infinity);
  H.logsumexp = (id, mask, keep) => {
    const x = get(id), axes = axesOf(mask);
    if (axes.length === 0) return put(tf.clone(x));
    if (x.size === 0) return put(tf.fill(reducedShape(x.shape, axes, keep), -Infinity, x.dtype));
    return run(() => {
      let m = tf.max(x, axes, true);
      m = tf.where(tf.isFinite(m), m, tf.zerosLike(m));
      let out = tf.add(tf.log(tf.sum(tf.exp(tf.sub(x, m)), axes, true)), m);
      if (!keep) out = tf.reshape(out, reducedShape(x.shape, axes, false));
      return out;
    });
  };
  H.argmax = (id, axis) => {
    const x = get(id);
    return run(() => tf.argMax(x.dtype === "bool" ? tf.cast(x, "int32") : x, axis));
  };
  H.argmin = (id, axis) => {
    const x = get(id);
    return run(() => tf.argMin(x.dtype === "bool" ? tf.cast(x, "int32") : x, axis));
  };
  H.cumsum = (id, axis, reverse) => put(tf.cumsum(get(id), axis, false, reverse));

  // ---- shape and data movement ------------------------------------------------------------
  H.reshape = (id, n) => put(tf.reshape(get(id), ints(0, n)));
  H.transpose = (id, n) => put(tf.transpose(get(id), ints(0, n)));
  H.broadcast_to = (id, n) => {
    const x = get(id), shape = ints(0, n);
    return put(x.rank === 0 && shape.length === 0 ? tf.clone(x) : tf.broadcastTo(x, shape));
  };
  H.concat = (n, axis) => put(tf.concat(ints(0, n).map(get), axis));
  function basicSpec(off) {
    // spec at IN + off: r, begin[r], end[r], stride[r], reverse[r], outRank, out[outRank]
    const s = S(), r = s[IN + off];
    return { r, b: ints(off + 1, r), e: ints(off + 1 + r, r), st: ints(off + 1 + 2 * r, r),
             rev: ints(off + 1 + 3 * r, r), out: ints(off + 2 + 4 * r, s[IN + off + 1 + 4 * r]) };
  }
  function basicPositions(inShape, sp) {
    // flat positions (row-major) of the elements a basic index selects, in output order
    const r = sp.r, cnt = [], strides = new Array(r).fill(1);
    for (let i = r - 2; i >= 0; i--) strides[i] = strides[i + 1] * inShape[i + 1];
    let n = 1;
    for (let i = 0; i < r; i++) {
      cnt.push(Math.max(0, Math.ceil((sp.e[i] - sp.b[i]) / sp.st[i])));
      n *= cnt[i];
    }
    const pos = new Int32Array(n), idx = new Array(r).fill(0);
    for (let k = 0; k < n; k++) {
      let p = 0;
      for (let i = 0; i < r; i++) {
        const j = sp.rev[i] ? cnt[i] - 1 - idx[i] : idx[i];
        p += (sp.b[i] + j * sp.st[i]) * strides[i];
      }
      pos[k] = p;
      for (let i = r - 1; i >= 0; i--) { if (++idx[i] < cnt[i]) break; idx[i] = 0; }
    }
    return pos;
  }
  function basic(x, sp) {
    return tf.tidy(() => {
      if (x.dtype !== "float32" && tf.getBackend() === "wasm") {
        // wasm's stridedSlice mislabels int32/bool data as float32: gather by position instead
        const pos = tf.tensor(basicPositions(x.shape, sp), undefined, "int32");
        return tf.reshape(tf.gather(tf.reshape(x, [-1]), pos), sp.out);
      }
      let y = x, full = true;
      for (let i = 0; i < sp.r; i++) {
        if (sp.b[i] !== 0 || sp.e[i] !== x.shape[i] || sp.st[i] !== 1) full = false;
      }
      if (!full) y = tf.stridedSlice(y, sp.b, sp.e, sp.st);
      const ra = [];
      sp.rev.forEach((v, i) => { if (v) ra.push(i); });
      if (ra.length) y = tf.reverse(y, ra);
      y = tf.reshape(y, sp.out);
      return y === x ? tf.clone(x) : y;
    });
  }
  H.gather_basic = (id) => put(basic(get(id), basicSpec(0)));
  H.basic_positions = (size, rank) => {
    const inShape = ints(0, rank), pos = basicPositions(inShape, basicSpec(rank));
    return put(tf.tensor(pos, [pos.length], "int32"));
  };
  H.ints_from = (p) => {
    const b = p.getBuffer("i32");
    try { return put(fromView(b.data, [b.data.length], "int32")); } finally { b.release(); }
  };
  H.gather_pos = (id, pid, n) => {
    const x = get(id), p = get(pid), out = ints(0, n);
    return run(() => tf.reshape(tf.gather(tf.reshape(x, [-1]), p), out));
  };
  H.scatter = (uid, pid, size, n) => {
    const u = get(uid), p = get(pid), out = ints(0, n);
    return run(() => {
      const isBool = u.dtype === "bool";
      if (p.size === 0) return isBool ? tf.zeros(out, "bool") : tf.zeros(out, u.dtype);
      const uu = isBool ? tf.cast(u, "int32") : u;
      let r = tf.scatterND(tf.reshape(p, [-1, 1]), tf.reshape(uu, [-1]), [size]);
      r = tf.reshape(r, out);
      return isBool ? tf.notEqual(r, tf.scalar(0, "int32")) : r;
    });
  };
  H.one_hot = (id, depth, dt) => {
    const x = get(id);
    return run(() => {
      const r = tf.oneHot(tf.cast(x, "int32"), depth);
      return dt === "bool" ? tf.notEqual(r, tf.scalar(0, "int32")) : tf.cast(r, dt);
    });
  };

  // ---- linear algebra ---------------------------------------------------------------------
  // tfjs-backend-wasm caches its XNNPACK matmul operator by the data id of the B operand: a
  // reshape (same data, other shape) used as B later gets the stale operator (garbage, or a
  // Wasm "memory access out of bounds"). Give such a B operand a buffer of its own.
  const bShapes = new WeakMap();
  function freshB(q) {
    if (tf.getBackend() !== "wasm" || typeof q.dataId !== "object") return q;
    const key = q.shape.join(","), prev = bShapes.get(q.dataId);
    if (prev === undefined) { bShapes.set(q.dataId, key); return q; }
    if (prev === key) return q;
    const c = tf.add(q, tf.zerosLike(q));
    bShapes.set(c.dataId, key);
    return c;
  }
  H.matmul = (a, b) => {
    // NumPy semantics: a 1-d operand is a vector (never both); batch dims broadcast
    const x = get(a), y = get(b);
    return run(() => {
      let p = x.rank === 1 ? tf.expandDims(x, 0) : x, q = y.rank === 1 ? tf.expandDims(y, -1) : y;
      const isInt = x.dtype !== "float32";
      if (isInt) { p = tf.cast(p, "float32"); q = tf.cast(q, "float32"); }
      if (p.rank > 2 || q.rank > 2) {  // TF.js drops half the batch when batch dims broadcast
        const ba = p.shape.slice(0, -2), bb = q.shape.slice(0, -2);
        const n = Math.max(ba.length, bb.length), batch = [];
        for (let i = 0; i < n; i++) {
          const da = ba[ba.length - n + i] ?? 1, db = bb[bb.length - n + i] ?? 1;
          batch.push(da === 1 ? db : da);
        }
        const same = (s, t) => s.length === t.length && s.every((d, i) => d === t[i]);
        if (!same(ba, batch)) p = tf.broadcastTo(p, [...batch, ...p.shape.slice(-2)]);
        if (!same(bb, batch)) q = tf.broadcastTo(q, [...batch, ...q.shape.slice(-2)]);
      }
      let r = tf.matMul(p, freshB(q));
      if (x.rank === 1) r = tf.squeeze(r, [r.rank - 2]);
      if (y.rank === 1) r = tf.squeeze(r, [r.rank - 1]);
      return isInt ? tf.cast(tf.round(r), x.dtype) : r;
    });
  };
  H.cholesky = (id) => {
    const x = get(id), sh = x.shape, n = sh[sh.length - 1];
    const v = x.dataSync(), out = new Float32Array(v.length);
    const batch = n ? v.length / (n * n) : 0, L = new Float64Array(n * n);
    for (let bi = 0; bi < batch; bi++) {
      const o = bi * n * n;
      L.fill(0);
      for (let j = 0; j < n; j++) {
        let s = v[o + j * n + j];
        for (let k = 0; k < j; k++) s -= L[j * n + k] * L[j * n + k];
        if (!(s > 0)) return 0;  // not positive definite (or NaN): Python raises
        const d = Math.sqrt(s);
        L[j * n + j] = d;
        for (let i = j + 1; i < n; i++) {
          let t = v[o + i * n + j];
          for (let k = 0; k < j; k++) t -= L[i * n + k] * L[j * n + k];
          L[i * n + j] = t / d;
        }
      }
      for (let i = 0; i < n * n; i++) out[o + i] = L[i];
    }
    return put(tf.tensor(out, sh, "float32"));
  };
  H.triangular_solve = (aid, bid, lower, trans) => {
    // solve op(A) X = B reading only A's `lower`/upper triangle; batch dims already equal
    const a = get(aid), b = get(bid), n = a.shape[a.rank - 1], k = b.shape[b.rank - 1];
    const av = a.dataSync(), bv = b.dataSync(), out = new Float32Array(bv.length);
    const batch = n * k ? bv.length / (n * k) : 0, x = new Float64Array(n);
    const fwd = lower !== trans;  // op(A) is lower triangular
    for (let bi = 0; bi < batch; bi++) {
      const ao = bi * n * n, bo = bi * n * k;
      const M = trans ? (i, j) => av[ao + j * n + i] : (i, j) => av[ao + i * n + j];
      for (let c = 0; c < k; c++) {
        if (fwd) {
          for (let i = 0; i < n; i++) {
            let s = bv[bo + i * k + c];
            for (let j = 0; j < i; j++) s -= M(i, j) * x[j];
            x[i] = s / M(i, i);
          }
        } else {
          for (let i = n - 1; i >= 0; i--) {
            let s = bv[bo + i * k + c];
            for (let j = i + 1; j < n; j++) s -= M(i, j) * x[j];
            x[i] = s / M(i, i);
          }
        }
        for (let i = 0; i < n; i++) out[bo + i * k + c] = x[i];
      }
    }
    return put(tf.tensor(out, b.shape, "float32"));
  };
  H.solve = (aid, bid) => {
    // A^-1 B by Gaussian elimination with partial pivoting (in float64); batch dims equal
    const a = get(aid), b = get(bid), n = a.shape[a.rank - 1], k = b.shape[b.rank - 1];
    const av = a.dataSync(), bv = b.dataSync(), out = new Float32Array(bv.length);
    const batch = n * k ? bv.length / (n * k) : 0, w = n + k;
    for (let bi = 0; bi < batch; bi++) {
      const M = new Float64Array(n * w);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) M[i * w + j] = av[bi * n * n + i * n + j];
        for (let c = 0; c < k; c++) M[i * w + n + c] = bv[bi * n * k + i * k + c];
      }
      for (let c = 0; c < n; c++) {
        let p = c;
        for (let r = c + 1; r < n; r++) if (Math.abs(M[r * w + c]) > Math.abs(M[p * w + c])) p = r;
        if (M[p * w + c] === 0) return 0;  // singular: Python raises
        if (p !== c) {
          for (let j = 0; j < w; j++) {
            const t = M[c * w + j]; M[c * w + j] = M[p * w + j]; M[p * w + j] = t;
          }
        }
        for (let r = c + 1; r < n; r++) {
          const f = M[r * w + c] / M[c * w + c];
          if (f !== 0) for (let j = c; j < w; j++) M[r * w + j] -= f * M[c * w + j];
        }
      }
      for (let c = 0; c < k; c++) {
        for (let i = n - 1; i >= 0; i--) {
          let s = M[i * w + n + c];
          for (let j = i + 1; j < n; j++) s -= M[i * w + j] * M[j * w + n + c];
          M[i * w + n + c] = s / M[i * w + i];
          out[bi * n * k + i * k + c] = M[i * w + n + c];
        }
      }
    }
    return put(tf.tensor(out, b.shape, "float32"));
  };
  H.eigh = (aid) => {
    // cyclic Jacobi on the symmetric matrix of A's lower triangle (as python_backend's
    // _jacobi_eigh): [..., n + 1, n], the eigenvalues ascending then the eigenvectors' matrix
    const a = get(aid), n = a.shape[a.rank - 1], av = a.dataSync();
    const batch = n ? av.length / (n * n) : 0, out = new Float32Array(batch * (n + 1) * n);
    for (let bi = 0; bi < batch; bi++) {
      const S = new Float64Array(n * n), V = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        V[i * n + i] = 1;
        for (let j = 0; j < n; j++) {
          S[i * n + j] = av[bi * n * n + Math.max(i, j) * n + Math.min(i, j)];
        }
      }
      for (let sweep = 0; sweep < 100; sweep++) {
        let off = 0;
        for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) off += S[i * n + j] ** 2;
        if (off === 0 || !Number.isFinite(off)) break;
        for (let p = 0; p < n - 1; p++) {
          for (let q = p + 1; q < n; q++) {
            if (S[p * n + q] === 0) continue;
            const theta = (S[q * n + q] - S[p * n + p]) / (2 * S[p * n + q]);
            const t = (theta < 0 ? -1 : 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
            const c = 1 / Math.sqrt(t * t + 1), s = t * c;
            for (let r = 0; r < n; r++) {
              const sp = S[r * n + p], sq = S[r * n + q];
              S[r * n + p] = c * sp - s * sq; S[r * n + q] = s * sp + c * sq;
              const vp = V[r * n + p], vq = V[r * n + q];
              V[r * n + p] = c * vp - s * vq; V[r * n + q] = s * vp + c * vq;
            }
            for (let r = 0; r < n; r++) {
              const sp = S[p * n + r], sq = S[q * n + r];
              S[p * n + r] = c * sp - s * sq; S[q * n + r] = s * sp + c * sq;
            }
          }
        }
      }
      const order = [...Array(n).keys()].sort((i, j) => S[i * n + i] - S[j * n + j]);
      const o = bi * (n + 1) * n;
      order.forEach((i, c) => {
        out[o + c] = S[i * n + i];
        for (let r = 0; r < n; r++) out[o + (r + 1) * n + c] = V[r * n + i];
      });
    }
    return put(tf.tensor(out, [...a.shape.slice(0, -2), n + 1, n], "float32"));
  };

  // ---- creation and host transfer ---------------------------------------------------------
  H.fill = (n, value, dt) => {
    const shape = ints(0, n);
    if (dt === "bool") return run(() => tf.cast(tf.fill(shape, value ? 1 : 0, "int32"), "bool"));
    return put(tf.fill(shape, value, dt));
  };
  function typed(dt, n) {
    return dt === "float32" ? new Float32Array(n) : dt === "int32" ? new Int32Array(n)
      : new Uint8Array(n);
  }
  H.arange = (start, stop, step, dt) => {
    const n = Math.max(Math.ceil((stop - start) / step), 0), arr = typed(dt, n);
    for (let i = 0; i < n; i++) arr[i] = start + i * step;
    return put(tf.tensor(arr, [n], dt));
  };
  H.linspace = (start, stop, num, dt) => {
    const arr = typed(dt, num), step = num > 1 ? (stop - start) / (num - 1) : 0;
    for (let i = 0; i < num; i++) arr[i] = start + i * step;
    if (num > 1) arr[num - 1] = stop;
    return put(tf.tensor(arr, [num], dt));
  };
  H.eye = (n, m, dt) => {
    const arr = typed(dt, n * m);
    for (let i = 0; i < Math.min(n, m); i++) arr[i * m + i] = 1;
    return put(tf.tensor(arr, [n, m], dt));
  };
  H.from_buffer = (p, dt, n) => {
    const shape = ints(0, n), b = p.getBuffer();
    try {
      let v = b.data;
      if (dt === "bool" && !(v instanceof Uint8Array)) v = new Uint8Array(v.buffer, v.byteOffset,
                                                                          v.byteLength);
      return put(fromView(v, shape, dt));
    } finally { b.release(); }
  };
  H.from_typed = (arr, shape, dt) => {
    // JS callers (the npm client): one copy of a TypedArray into the backend's memory
    let v = arr;
    if (dt === "bool" && !(v instanceof Uint8Array)) v = Uint8Array.from(v, (e) => (e ? 1 : 0));
    else if (dt === "float32" && !(v instanceof Float32Array)) v = Float32Array.from(v);
    else if (dt === "int32" && !(v instanceof Int32Array)) v = Int32Array.from(v, Number);
    else return put(fromView(v, shape, dt));
    return put(tf.tensor(v, shape, dt));
  };
  return H;
}
