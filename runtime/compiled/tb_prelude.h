/* The C every lowered density starts with (runtime/compiled/lowering.py pastes it, with
 * tb_vmath.h in place of its #include, so the text is part of the source's hash).
 * -O3 for the generated code only (the build's flags stay -O2): loop versioning for
 * aliasing and vectorisation of the elementwise loops. It changes no value: IEEE
 * semantics are kept (no -ffast-math), and SSE2, the x86-64 baseline, has every
 * operation the loops use. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("O3", "no-trapping-math")
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE  /* lgamma_r under -std=c99 (Python.h usually defines it) */
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__GNUC__)
#define TB_BODY static inline __attribute__((always_inline))
#else
#define TB_BODY static inline
#endif
#include "tb_vmath.h"
/* NumPy's maximum/minimum: a NaN in either operand is the result */
static inline double tb_max(double a, double b) { return (a >= b || isnan(a)) ? a : b; }
static inline double tb_min(double a, double b) { return (a <= b || isnan(a)) ? a : b; }
/* np.clip on floats: _NPY_MIN(_NPY_MAX(x, lo), hi) */
static inline double tb_clip(double x, double lo, double hi) {
    double m = isnan(x) ? x : (x > lo ? x : lo);
    return isnan(m) ? m : (m < hi ? m : hi);
}
static inline double tb_sign(double x) {
    return x > 0 ? 1.0 : (x < 0 ? -1.0 : (x == 0 ? 0.0 : x));
}
/* npy_logaddexp */
static inline double tb_logaddexp(double x, double y) {
    if (x == y) return x + 0.693147180559945309417232121458176568;
    double t = x - y;
    if (t > 0) return x + log1p(exp(-t));
    if (t <= 0) return y + log1p(exp(t));
    return t;
}
static inline double tb_expit(double x) { return 1.0 / (1.0 + exp(-x)); } /* SciPy's expit */
static inline double tb_expit_np(double x) { return exp(-tb_logaddexp(0.0, -x)); }
/* the same in long loops: branches as selects, tb_vmath.h's functions (vectorised) */
static inline double tb_vlogaddexp(double x, double y) {
    double t = x - y;
    double r = (t > 0 ? x : y) + tb_vlog1p(tb_vexp(t > 0 ? -t : t));
    r = (t > 0 || t <= 0) ? r : t;  /* t NaN: inf - inf or a NaN operand */
    return x == y ? x + 0.693147180559945309417232121458176568 : r;
}
static inline double tb_vexpit(double x) { return 1.0 / (1.0 + tb_vexp(-x)); }
static inline double tb_vexpit_np(double x) { return tb_vexp(-tb_vlogaddexp(0.0, -x)); }
static inline double tb_lgamma(double x) { int s; return lgamma_r(x, &s); } /* reentrant */
/* digamma: Cephes' psi as SciPy evaluates it (bit for bit, checked at 2e6 points), except within
   0.3 of the negative root -0.5041, where SciPy sums a zeta series and this reflection loses
   relative accuracy (to ~1e-10) */
static inline double tb_digamma(double x) {
    double y = 0.0;
    if (isnan(x) || x == INFINITY) return x;
    if (x == -INFINITY) return NAN;
    if (x == 0) return copysign(INFINITY, -x);
    if (x < 0) {
        /* reflection psi(x) = psi(1 - x) - pi / tan(pi x), with the whole part taken off */
        double r = x - trunc(x);
        if (r == 0.0) return NAN;
        y = -3.141592653589793 / tan(3.141592653589793 * r);
        x = 1.0 - x;
    }
    if (x <= 10.0 && x == floor(x)) {  /* psi(n) = -gamma + sum_{k<n} 1/k */
        for (long k = 1; k < (long)x; k++) y += 1.0 / (double)k;
        return y - 0.57721566490153286061;
    }
    if (x < 1.0) {
        y -= 1.0 / x;
        x += 1.0;
    } else if (x < 10.0) {
        while (x > 2.0) { x -= 1.0; y += 1.0 / x; }
    }
    if (x >= 1.0 && x <= 2.0) {
        /* Boost's rational approximation on [1, 2] around the positive root:
           psi(x) = (x - root) (Y + P(x - 1) / Q(x - 1)) */
        const double Y = (double)0.99558162689208984f;
        double t = x - 1.0, g = x - 1569415565.0 / 1073741824.0;
        g -= (381566830.0 / 1073741824.0) / 1073741824.0;
        g -= 0.9016312093258695918615325266959189453125e-19;
        double p = ((((-0.0020713321167745952 * t - 0.045251321448739056) * t
                      - 0.28919126444774784) * t - 0.65031853770896507) * t
                    - 0.32555031186804491) * t + 0.25479851061131551;
        double q = (((((-0.55789841321675513e-6 * t + 0.0021284987017821144) * t
                       + 0.054151797245674225) * t + 0.43593529692665969) * t
                     + 1.4606242909763515) * t + 2.0767117023730469) * t + 1.0;
        return y + (g * Y + g * (p / q));
    }
    {   /* x > 10: the asymptotic series, sum of B_2k / (2k x^2k) */
        double s = 0.0;
        if (x < 1.0e17) {
            double z = 1.0 / (x * x);
            s = ((((((8.33333333333333333333E-2 * z - 2.10927960927960927961E-2) * z
                     + 7.57575757575757575758E-3) * z - 4.16666666666666666667E-3) * z
                   + 3.96825396825396825397E-3) * z - 8.33333333333333333333E-3) * z
                 + 8.33333333333333333333E-2) * z;
        }
        return y + (log(x) - 0.5 / x - s);
    }
}
/* npy_divmod's floor division */
static inline double tb_floordiv(double a, double b) {
    double mod = fmod(a, b), div, fd;
    if (!b) return a / b;
    div = (a - mod) / b;
    if (mod) { if ((b < 0) != (mod < 0)) div -= 1.0; }
    if (div) { fd = floor(div); if (div - fd > 0.5) fd += 1.0; }
    else fd = copysign(0.0, a / b);
    return fd;
}
static inline double tb_mod(double a, double b) {
    double mod = fmod(a, b);
    if (!b) return mod;
    if (mod) { if ((b < 0) != (mod < 0)) mod += b; }
    else mod = copysign(0.0, b);
    return mod;
}
/* Cholesky of the lower triangle (LAPACK potrf's column order); on failure the factor is NaN,
   as the NumPy kernel gives, and 1 is returned */
static inline int tb_cholesky(const double *a, double *l, long n) {
    for (long i = 0; i < n * n; i++) l[i] = 0.0;
    for (long j = 0; j < n; j++) {
        double s = a[j * n + j];
        for (long k = 0; k < j; k++) s -= l[j * n + k] * l[j * n + k];
        if (!(s > 0.0)) {
            for (long i = 0; i < n * n; i++) l[i] = NAN;
            return 1;
        }
        double d = sqrt(s);
        l[j * n + j] = d;
        for (long i = j + 1; i < n; i++) {
            double t = a[i * n + j];
            for (long k = 0; k < j; k++) t -= l[i * n + k] * l[j * n + k];
            l[i * n + j] = t / d;
        }
    }
    return 0;
}
/* x = op(A)^-1 b for one triangle of A [n, n] and b [n, m]; 1 on a zero pivot (SciPy raises) */
static inline int tb_trisolve(const double *a, const double *b, double *x, long n, long m,
                       int lower, int trans) {
    int status = 0, fwd = lower != trans;
    for (long c = 0; c < m; c++) {
        for (long s = 0; s < n; s++) {
            long i = fwd ? s : n - 1 - s;
            double t = b[i * m + c];
            for (long r = 0; r < s; r++) {
                long j = fwd ? r : n - 1 - r;
                t -= (trans ? a[j * n + i] : a[i * n + j]) * x[j * m + c];
            }
            double d = a[i * n + i];
            if (d == 0.0) status = 1;
            x[i * m + c] = t / d;
        }
    }
    return status;
}
