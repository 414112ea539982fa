// The numeric kernels of the convergence diagnostics (runtime/ppl/diagnostics.py) for Pyodide,
// where there is no NumPy: the autocovariances of the chains by FFT and the inverse normal CDF
// of the rank-normalisation, and the ranks themselves. diagnostics.py keeps the algorithm (split chains, ranks, Geyer's
// initial monotone sequence, R-hat); this file only replaces NumPy's FFT and SciPy's ndtri,
// which cost seconds in pure Python and milliseconds here.
//
// A plain script, not a module: the runtime evaluates this file's text as the body of
// `new Function("TB", src + "\nreturn makeStats(TB);")`, TB being the prelude (tb_prelude.js,
// for its erf and erfc), once per interpreter; it touches no global.
/* exported makeStats */

/**
 * The stats object: `autocovariance(x, m, n)`, `ranks(x)`, `affine(x, shift, scale)` and
 * `ndtri(p)`.
 * @param {object} TB the prelude (makePrelude()): erf and erfc
 * @returns {object}
 */
function makeStats(TB) {
  "use strict";
  const erf = TB.erf;
  const erfc = TB.erfc;

  // ---- FFT: iterative radix-2 Cooley-Tukey on split real/imaginary arrays ----
  //
  // Plans (the bit-reversal permutation and the twiddles exp(-2 pi i k / N), k < N/2, each
  // computed directly by Math.cos/Math.sin, within an ulp, rather than by recurrence) are made
  // once per size.
  const PLANS = new Map();

  function plan(size) {
    let p = PLANS.get(size);
    if (p) return p;
    const bits = Math.round(Math.log2(size));
    const rev = new Int32Array(size);
    for (let i = 0; i < size; i++) {
      let r = 0;
      for (let b = 0, v = i; b < bits; b++, v >>= 1) r = (r << 1) | (v & 1);
      rev[i] = r;
    }
    const half = size >> 1;
    const cos = new Float64Array(Math.max(half, 1));
    const sin = new Float64Array(Math.max(half, 1));
    for (let k = 0; k < half; k++) {
      const a = (2 * Math.PI * k) / size;
      cos[k] = Math.cos(a);
      sin[k] = -Math.sin(a);
    }
    p = { rev, cos, sin };
    PLANS.set(size, p);
    return p;
  }

  /** In-place unnormalised DFT of (re, im), length a power of two; `inverse`: exp(+2 pi i). */
  function fft(re, im, size, inverse) {
    const { rev, cos, sin } = plan(size);
    for (let i = 0; i < size; i++) {
      const j = rev[i];
      if (i < j) {
        let t = re[i]; re[i] = re[j]; re[j] = t;
        t = im[i]; im[i] = im[j]; im[j] = t;
      }
    }
    const sgn = inverse ? -1.0 : 1.0;
    for (let len = 2; len <= size; len <<= 1) {
      const half = len >> 1;
      const step = size / len;
      for (let k = 0; k < half; k++) {
        const wr = cos[k * step];
        const wi = sgn * sin[k * step];
        for (let s = k; s < size; s += len) {
          const t = s + half;
          const xr = re[t] * wr - im[t] * wi;
          const xi = re[t] * wi + im[t] * wr;
          re[t] = re[s] - xr;
          im[t] = im[s] - xi;
          re[s] += xr;
          im[s] += xi;
        }
      }
    }
  }

  /**
   * Autocovariances of each row of x (m rows of n, row-major): what diagnostics.py computes
   * with NumPy, irfft(|rfft(x - mean, size)|^2, size)[:n] / n, size the power of two above
   * 2n - 1 (so the circular correlation is the linear one). Lags 0..n-1 of each row, row-major.
   * @param {Float64Array} x
   * @param {number} m
   * @param {number} n
   * @returns {Float64Array}
   */
  function autocovariance(x, m, n) {
    const out = new Float64Array(m * n);
    if (n === 0) return out;
    let size = 1;
    while (size <= 2 * n - 1) size *= 2;
    const re = new Float64Array(size);
    const im = new Float64Array(size);
    for (let r = 0; r < m; r++) {
      const base = r * n;
      let sum = 0.0;
      for (let i = 0; i < n; i++) sum += x[base + i];
      const mean = sum / n;
      re.fill(0.0);
      im.fill(0.0);
      for (let i = 0; i < n; i++) re[i] = x[base + i] - mean;
      fft(re, im, size, false);
      for (let k = 0; k < size; k++) {
        re[k] = re[k] * re[k] + im[k] * im[k];
        im[k] = 0.0;
      }
      fft(re, im, size, true);
      // irfft's 1/size, then diagnostics' 1/n
      for (let i = 0; i < n; i++) out[base + i] = re[i] / size / n;
    }
    return out;
  }

  // ---- ranks ----

  /** The number of elements of the sorted s[0..len) below v (`strict`) or not above v. */
  function bisect(s, len, v, strict) {
    let lo = 0;
    let hi = len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (strict ? s[mid] < v : s[mid] <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Fractional ranks 1..n of the elements of x, ties sharing the mean of their positions and
   * the NaNs ranked last as one tie: what NumPy's stable argsort and `unique` give
   * diagnostics.py. An element's rank is (left + right + 1) / 2, left and right the numbers of
   * elements below it and not above it (so left + 1 without ties); -0 and +0 tie.
   * @param {Float64Array} x
   * @returns {Float64Array}
   */
  function ranks(x) {
    const n = x.length;
    const s = Float64Array.from(x).sort();  // numeric, NaNs last
    let finite = n;
    while (finite > 0 && s[finite - 1] !== s[finite - 1]) finite--;
    const nanRank = (finite + n + 1) / 2;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = x[i];
      if (v !== v) {
        out[i] = nanRank;
        continue;
      }
      const left = bisect(s, finite, v, true);
      const right = left + 1 < finite && s[left + 1] === v ? bisect(s, finite, v, false) : left + 1;
      out[i] = (left + right + 1) / 2;
    }
    return out;
  }

  /**
   * (x - shift) / scale, elementwise (the plotting positions of ranks, without a crossing back
   * into Python between `ranks` and `ndtri`).
   * @param {Float64Array} x
   * @param {number} shift
   * @param {number} scale
   * @returns {Float64Array}
   */
  function affine(x, shift, scale) {
    const out = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++) out[i] = (x[i] - shift) / scale;
    return out;
  }

  // ---- ndtri: the inverse of the standard normal CDF Phi ----
  //
  // By symmetry only q = min(p, 1 - p) <= 1/2 is solved (1 - p is exact for p >= 1/2), and
  // ndtri(p) = -ndtri(1 - p) above 1/2. A starting point within ~1e-9 relative (the rational
  // approximations of P. J. Acklam, 2003, of the central region and the tails) is refined by one
  // Halley step on Phi(x) = q (cubic convergence: ~1e-27 relative, far below an ulp), with Phi
  // evaluated where it has no cancellation:
  //   q >= 1/4: Phi(x) - 1/2 = erf(x / sqrt 2) / 2 against q - 1/2, exact (Sterbenz), so that
  //             small |x| near p = 1/2 are found to relative accuracy;
  //   q <  1/4: Phi(x) = erfc(-x / sqrt 2) / 2, against q itself (x < -0.67, relative error of
  //             erfc carries over to x divided by x^2 Phi / (|x| phi) > 1);
  // the result is then within about an ulp of the exact value (erf and erfc are within ~2^-56
  // plus their final rounding). Below q = 1e-290 Phi(x) and phi(x) approach the subnormals, so
  // x solves log Phi(x) = log q by Newton's method with the asymptotic series
  // Phi(x) = phi(x) / |x| * (1 - 1/x^2 + 3/x^4 - 15/x^6 ...) (|x| > 36: ten terms reach 1e-24).
  const A = [-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
    1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00];
  const B = [-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
    6.680131188771972e01, -1.328068155288572e01];
  const C = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
    -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00];
  const D = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
    3.754408661907416e00];
  const SQRT2 = Math.SQRT2;
  const SQRT2PI = Math.sqrt(2 * Math.PI);
  const HALF_LOG_2PI = 0.5 * Math.log(2 * Math.PI);

  /** Acklam's starting point for q in (0, 1/2]: negative or zero. */
  function start(q) {
    if (q < 0.02425) {
      const r = Math.sqrt(-2 * Math.log(q));
      return (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5]) /
        ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1);
    }
    const s = q - 0.5;
    const t = s * s;
    return (((((A[0] * t + A[1]) * t + A[2]) * t + A[3]) * t + A[4]) * t + A[5]) * s /
      (((((B[0] * t + B[1]) * t + B[2]) * t + B[3]) * t + B[4]) * t + 1);
  }

  /** ndtri(q) for q < 1e-290 (x < -36): Newton's method on log Phi(x) = log q. */
  function tailSolve(q) {
    const lq = Math.log(q);
    let x = start(q);
    for (let it = 0; it < 6; it++) {
      const ax = -x;
      const u = 1.0 / (ax * ax);
      // S = sum_k (-1)^k (2k-1)!! u^k, k = 0..10
      let s = 0.0;
      let term = 1.0;
      const terms = new Float64Array(11);
      for (let k = 0; k <= 10; k++) {
        terms[k] = term;
        term *= -(2 * k + 1) * u;
      }
      for (let k = 10; k >= 0; k--) s += terms[k];  // smallest first
      const logPhi = -0.5 * ax * ax - Math.log(ax) - HALF_LOG_2PI + Math.log(s);
      const f = logPhi - lq;
      // d log Phi / dx = phi / Phi = |x| / S
      const dx = f * s / ax;
      x -= dx;
      if (Math.abs(dx) <= 1e-17 * ax) break;
    }
    return x;
  }

  /** ndtri(q) for q in (0, 1/2]. */
  function lower(q) {
    if (q < 1e-290) return tailSolve(q);
    const x = start(q);
    let e;
    if (q >= 0.25) {
      e = 0.5 * erf(x / SQRT2) - (q - 0.5);
    } else {
      e = 0.5 * erfc(-x / SQRT2) - q;
    }
    const u = e * SQRT2PI * Math.exp(0.5 * x * x);  // e / phi(x)
    return x - u / (1 + 0.5 * x * u);
  }

  /** ndtri of one number: NaN outside [0, 1], -inf at 0, +inf at 1. */
  function ndtri1(p) {
    if (!(p >= 0.0 && p <= 1.0)) return NaN;
    if (p === 0.0) return -Infinity;
    if (p === 1.0) return Infinity;
    if (p === 0.5) return 0.0;
    return p < 0.5 ? lower(p) : -lower(1.0 - p);
  }

  /**
   * The inverse standard normal CDF of each element.
   * @param {Float64Array} p
   * @returns {Float64Array}
   */
  function ndtri(p) {
    const out = new Float64Array(p.length);
    for (let i = 0; i < p.length; i++) out[i] = ndtri1(p[i]);
    return out;
  }

  return { autocovariance, ranks, affine, ndtri, ndtri1, fft };
}
