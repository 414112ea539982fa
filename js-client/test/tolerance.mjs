// The tolerance policy of runtime/testing.py (tensorbridge.testing) for the JS suites: a float
// result is held to what its operation guarantees for its dtype and size, never to one
// machine's rounding. Per element:
//   |actual - expected| <= ulps * u * |expected| + 2 * gamma(n) * magnitude + tiny
// u: unit roundoff (float32 2^-24, float64 2^-53); gamma(n) = n u / (1 - n u) bounds an n-term
// sum in any order (Higham); magnitude: the sum of |terms| (|A| @ |B| for a matrix product),
// |expected| by default; tiny: the smallest normal (subnormals may flush to zero). NaN matches
// NaN, infinities match exactly, integers and booleans compare exactly.
// tests/fixtures/shared/tolerance_cases.json pins Python, R and JS to the same decisions.
import assert from "node:assert/strict";

export const UNIT_ROUNDOFF = { float16: 2 ** -11, float32: 2 ** -24, float64: 2 ** -53 };
export const TINY = { float16: 2 ** -14, float32: 2 ** -126, float64: 2 ** -1022 };

export function gamma(n, dtype) {
  const nu = n * (UNIT_ROUNDOFF[dtype] ?? 0);
  if (nu >= 1) throw new RangeError(`n: ${n} terms exceed what ${dtype} can bound (n*u >= 1)`);
  return nu / (1 - nu);
}

/** n for a result chained through `steps` steps of `perStep`-term accumulations (training). */
export const chainedLength = (steps, perStep) => steps * perStep;

const flat = (x) => (ArrayBuffer.isView(x) ? Array.from(x) : Array.isArray(x)
  ? x.flat(Infinity).map((v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)).flat(Infinity)
  : [x]);
const num = (v) => (typeof v === "string" ? Number(v.replace("inf", "Infinity")) : Number(v));

/** null when `actual` meets the policy around `expected`, else a message saying where. */
export function closeError(actual, expected, { dtype = "float64", n = 1, magnitude = null,
  ulps = 4 } = {}) {
  const a = flat(actual), e = flat(expected);
  if (a.length !== e.length) return `${a.length} elements != expected ${e.length}`;
  const u = UNIT_ROUNDOFF[dtype];
  if (u === undefined) {
    const i = a.findIndex((v, k) => v !== e[k]);
    return i < 0 ? null : `element ${i}: ${a[i]} != ${e[i]} (exact dtype ${dtype})`;
  }
  const m = magnitude === null ? null : flat(magnitude).map((v) => Math.abs(num(v)));
  const g2 = n > 1 ? 2 * gamma(n, dtype) : 0;
  let failures = 0, worst = -1, worstRatio = -1, worstBound = 0;
  for (let i = 0; i < a.length; i++) {
    const x = num(a[i]), y = num(e[i]);
    const mag = m === null ? Math.abs(y) : m.length === 1 ? m[0] : m[i];
    const bound = ulps * u * Math.abs(y) + g2 * mag + TINY[dtype];
    let ok, ratio = Infinity;
    if (Number.isNaN(x) || Number.isNaN(y)) ok = Number.isNaN(x) && Number.isNaN(y);
    else if (!Number.isFinite(x) || !Number.isFinite(y)) ok = x === y;
    else { ratio = Math.abs(x - y) / bound; ok = ratio <= 1; }
    if (!ok) {
      failures++;
      if (ratio > worstRatio) { worstRatio = ratio; worst = i; worstBound = bound; }
    }
  }
  if (!failures) return null;
  const x = num(a[worst]), y = num(e[worst]);
  return `${failures} of ${a.length} elements outside the ${dtype} tolerance (n=${n}, ` +
    `ulps=${ulps}); worst: element ${worst}: ${x} vs expected ${y}, |diff| ` +
    `${Math.abs(x - y).toPrecision(3)} > bound ${worstBound.toPrecision(3)}`;
}

/** assert.fail unless `actual` meets the policy (options as closeError). */
export function assertClose(actual, expected, options = {}, what = "") {
  const err = closeError(actual, expected, options);
  if (err !== null) assert.fail(what ? `${what}: ${err}` : err);
}

/** The largest |value| of an array, as a one-element magnitude: normwise comparison. */
export const normwise = (x) => [Math.max(0, ...flat(x).map((v) => Math.abs(num(v)))
  .filter(Number.isFinite))];
