/* Branch-free exp, log and log1p for the lowered densities (runtime/compiled/lowering.py).

   Written for GCC's loop vectoriser: only float64 arithmetic, 64-bit integer adds, masks and
   logical shifts on the values' bits (SSE2 has all of them), and selects; no table look-ups,
   no calls, no double <-> int64 conversions (SSE2 has none for vectors). With
   -ffp-contract=off every operation rounds once, as written, so the results are the same on
   every x86-64 CPU (and every IEEE-754 double machine), vectorised or not.

   Accuracy (tests/compiled/test_vmath.py, against x87 long double expl/logl/log1pl on
   millions of points over the whole range, and against NumPy): log and log1p under 0.84 ulp,
   exp under 1.01 ulp (1.002 the worst of 16 million points: the final 1 + (r + r^2 q) rounds
   once more than a correctly rounded exp), so each result is the correctly rounded value or a
   neighbour; subnormal results of tb_vexp are within 1 ulp (2^-1074) too. Special values follow
   C99 Annex F / NumPy: exp(+-0) = 1, exp(-inf) = 0, exp(+inf) = inf, overflow to inf above
   709.78..., underflow through the subnormals to +0; log(+-0) = -inf, log(x < 0) = NaN,
   log(+inf) = inf, subnormal inputs exact in their exponent; log1p(+-0) = +-0, log1p(-1) = -inf,
   log1p(x < -1) = NaN, log1p(+inf) = inf; NaN in, NaN out. (Only the floating-point
   exception flags differ from libm: nothing reads them.)

   The polynomials are Taylor series (no fitted coefficients), evaluated in Estrin's scheme
   (a dependency chain half as long as Horner's: 1.5x faster in a vectorised loop): exp(r) to
   r^13 on |r| <= ln2/2 (truncation < 0.05 ulp) and log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2)),
   s = f/(2+f), R(z) = sum 2 z^n/(2n+1) to z^11 on |s| <= 0.1716 (truncation < 0.01 ulp).
   The reductions are Cody and Waite's (exp: x - k ln2 with ln2 in two parts, the first with
   32 significant bits, exact for |k| < 2^21) and the exponent split of fdlibm's log (the
   mantissa taken to [sqrt(2)/2, sqrt(2))); log1p(x) adds the rounding error c of 1 + x,
   log(1 + x) = log(u) + c/u with u = fl(1 + x), recovered exactly by Fast2Sum. */
#ifndef TB_VMATH_H
#define TB_VMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t tb_bits(double x) {
    union { double d; uint64_t u; } v;
    v.d = x;
    return v.u;
}
static inline double tb_from_bits(uint64_t u) {
    union { uint64_t u; double d; } v;
    v.u = u;
    return v.d;
}

static inline double tb_vexp(double x) {
    /* clamped so that k stays in [-1077, 1025]: exp(-746) rounds to 0, exp(710) to inf, as
       every input beyond them does; a NaN passes the comparisons and stays NaN */
    double xc = x > 710.0 ? 710.0 : x;
    xc = xc < -746.0 ? -746.0 : xc;
    const double shift = 0x1.8p52;  /* adding it rounds to an integer, held in the low bits */
    double t = xc * 0x1.71547652b82fep+0 + shift;
    double kd = t - shift;
    double r = (xc - kd * 0x1.62e42fee00000p-1) - kd * 0x1.a39ef35793c76p-33;
    /* q(r) = 1/2! + r/3! + ... + r^11/13!, in Estrin's scheme (a short dependency chain) */
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double p01 = 0x1.0p-1 + 0x1.5555555555555p-3 * r;
    double p23 = 0x1.5555555555555p-5 + 0x1.1111111111111p-7 * r;
    double p45 = 0x1.6c16c16c16c17p-10 + 0x1.a01a01a01a01ap-13 * r;
    double p67 = 0x1.a01a01a01a01ap-16 + 0x1.71de3a556c734p-19 * r;
    double p89 = 0x1.27e4fb7789f5cp-22 + 0x1.ae64567f544e4p-26 * r;
    double pab = 0x1.1eed8eff8d898p-29 + 0x1.6124613a86d09p-33 * r;
    double p03 = p01 + p23 * r2, p47 = p45 + p67 * r2, p8b = p89 + pab * r2;
    double q = (p03 + p47 * r4) + p8b * r8;
    double p = (r2 * q + r) + 1.0;
    /* 2^k in two factors, each a normal power of two, so that a subnormal result is rounded
       once, by the last product: kb = k + 2048 > 0, k1 = floor(k / 2), k2 = k - k1 */
    uint64_t kb = tb_bits(t) - 0x4338000000000000ULL + 2048u;
    uint64_t e1 = (kb >> 1) - 1u, e2 = kb - (kb >> 1) - 1u;  /* k1 + 1023, k2 + 1023 */
    return (p * tb_from_bits(e1 << 52)) * tb_from_bits(e2 << 52);
}

/* log(2^kadj u) + c / u for u > 0 normal and finite (the caller selects the special
   values); kadj a small whole number */
static inline double tb_vlog_core(double u, double c, double kadj) {
    /* u = 2^k m, m in [sqrt(2)/2, sqrt(2)): shift the bits so that the exponent field steps
       at m = sqrt(2)/2 (0x3fe6a09e...), then put m's mantissa under that exponent */
    uint64_t ix = tb_bits(u) + (0x3ff0000000000000ULL - 0x3fe6a09e00000000ULL);
    double kd = tb_from_bits(0x4330000000000000ULL | (ix >> 52)) - (0x1p52 + 1023.0) + kadj;
    double m = tb_from_bits((ix & 0x000fffffffffffffULL) + 0x3fe6a09e00000000ULL);
    double f = m - 1.0;  /* exact */
    double hfsq = 0.5 * f * f;
    double s = f / (2.0 + f);
    double z = s * s;
    /* R(z) = z (2/3 + 2/5 z + ... + 2/23 z^10), in Estrin's scheme */
    double z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
    double a01 = 0x1.5555555555555p-1 + 0x1.999999999999ap-2 * z;
    double a23 = 0x1.2492492492492p-2 + 0x1.c71c71c71c71cp-3 * z;
    double a45 = 0x1.745d1745d1746p-3 + 0x1.3b13b13b13b14p-3 * z;
    double a67 = 0x1.1111111111111p-3 + 0x1.e1e1e1e1e1e1ep-4 * z;
    double a89 = 0x1.af286bca1af28p-4 + 0x1.8618618618618p-4 * z;
    double a03 = a01 + a23 * z2, a47 = a45 + a67 * z2, a8a = a89 + 0x1.642c8590b2164p-4 * z2;
    double R = z * ((a03 + a47 * z4) + a8a * z8);
    return kd * 0x1.62e42fee00000p-1
           - ((hfsq - (s * (hfsq + R) + (kd * 0x1.a39ef35793c76p-33 + c / u))) - f);
}

static inline double tb_vlog(double x) {
    /* subnormal inputs scaled by 2^64 first, their k taken down by 64 */
    double scaled = x * 0x1p64;
    double u = x < 0x1p-1022 ? scaled : x;
    double y = tb_vlog_core(u, 0.0, x < 0x1p-1022 ? -64.0 : 0.0);
    y = x == 0.0 ? -HUGE_VAL : y;
    y = x < 0.0 ? NAN : y;
    y = x == HUGE_VAL ? x : y;
    return x != x ? x : y;
}

static inline double tb_vlog1p(double x) {
    double u = 1.0 + x;
    /* Fast2Sum: the exact rounding error of 1 + x, the larger operand first */
    double c_big = 1.0 - (u - x), c_small = x - (u - 1.0);  /* both, then a select */
    double c = fabs(x) > 1.0 ? c_big : c_small;
    double y = tb_vlog_core(u, c, 0.0);
    y = x == 0.0 ? x : y;  /* keeps -0 */
    y = x == -1.0 ? -HUGE_VAL : y;
    y = x < -1.0 ? NAN : y;
    y = x == HUGE_VAL ? x : y;
    return x != x ? x : y;
}
#endif
