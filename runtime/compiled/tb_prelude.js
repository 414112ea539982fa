// The scalar and small-matrix helpers every density lowered to JavaScript calls (issue 15): the
// JavaScript twin of tb_prelude.h, with the semantics of the C prelude and of the NumPy kernels
// (runtime/backends/numpy_backend.py), so that a program gives the same float64 results in the
// Pyodide worker (or Node) as on CPython. Math's functions cover exp, log, log1p and expm1; what
// JavaScript lacks (lgamma, digamma, erf, erfc, NumPy's floor division and modulo, round half to
// even) is here, in plain float64 arithmetic that V8 compiles to machine code.
//
// A plain script, not a module: the runtime evaluates this file's text as the body of
// `new Function(src + "\nreturn makePrelude();")`, so the prelude is made once per instance and
// touches no global. Hot functions are monomorphic (numbers in, a number out) and allocate
// nothing; the bit-level views are made once, here.
//
// lgamma, erf and erfc are ports of fdlibm's e_lgamma_r.c and s_erf.c (the algorithms glibc's
// are derived from), whose notice follows:
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//   Developed at SunSoft, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this software is freely granted, provided
//   that this notice is preserved.
/* exported makePrelude */

/**
 * The prelude object: one function per helper, named as in tb_prelude.h without `tb_`.
 * @returns {object}
 */
function makePrelude() {
  "use strict";
  // One float64 and its two 32-bit words (the high word, with sign and exponent, found at run
  // time rather than assuming little-endian).
  const F = new Float64Array(1);
  const U = new Uint32Array(F.buffer);
  F[0] = 1.0;
  const HI = U[1] === 0x3ff00000 ? 1 : 0;
  const LO = 1 - HI;

  /** The high word of x, as a signed 32-bit integer (fdlibm's __HI). */
  function highWord(x) {
    F[0] = x;
    return U[HI] | 0;
  }
  /** x with the low 32 bits of its significand cleared (fdlibm's `__LO(z) = 0`). */
  function clearLow(x) {
    F[0] = x;
    U[LO] = 0;
    return F[0];
  }
  /** Whether x's sign bit is set (-0 included). */
  function signBit(x) {
    return x < 0 || (x === 0 && 1 / x < 0);
  }

  // ---- elementwise arithmetic (tb_prelude.h; NumPy's loops) ----

  /** np.maximum: a NaN in either operand is the result. */
  function max(a, b) {
    return (a >= b || a !== a) ? a : b;
  }
  /** np.minimum: a NaN in either operand is the result. */
  function min(a, b) {
    return (a <= b || a !== a) ? a : b;
  }
  /** np.clip on floats: _NPY_MIN(_NPY_MAX(x, lo), hi). */
  function clip(x, lo, hi) {
    const m = x !== x ? x : (x > lo ? x : lo);
    return m !== m ? m : (m < hi ? m : hi);
  }
  /** np.sign: 1, -1, 0 for both zeros, NaN for NaN. */
  function sign(x) {
    return x > 0 ? 1.0 : (x < 0 ? -1.0 : (x === 0 ? 0.0 : x));
  }
  /** npy_logaddexp. */
  function logaddexp(x, y) {
    if (x === y) return x + 0.693147180559945309417232121458176568;
    const t = x - y;
    if (t > 0) return x + Math.log1p(Math.exp(-t));
    if (t <= 0) return y + Math.log1p(Math.exp(t));
    return t;  // NaN: a NaN operand or inf - inf (equal infinities returned above)
  }
  /** SciPy's expit. */
  function expit(x) {
    return 1.0 / (1.0 + Math.exp(-x));
  }
  /** NumPy's fallback sigmoid: exp(-logaddexp(0, -x)). */
  function expitNp(x) {
    return Math.exp(-logaddexp(0.0, -x));
  }
  // JavaScript's % on numbers is C's fmod (exact, the dividend's sign). C's truth tests are
  // spelled out: `if (mod)` is true for NaN in C and false in JavaScript.
  /** npy_divmod's floor division (np.floor_divide on floats). */
  function floordiv(a, b) {
    if (b === 0) return a / b;
    const mod = a % b;
    let div = (a - mod) / b;
    if (mod !== 0) {
      if ((b < 0) !== (mod < 0)) div -= 1.0;
    }
    if (div !== 0) {
      let fd = Math.floor(div);
      if (div - fd > 0.5) fd += 1.0;
      return fd;
    }
    return signBit(a / b) ? -0.0 : 0.0;
  }
  /** npy_remainder (np.mod on floats): the divisor's sign. */
  function mod(a, b) {
    let m = a % b;
    if (b === 0) return m;
    if (m !== 0) {
      if ((b < 0) !== (m < 0)) m += b;
    } else {
      m = signBit(b) ? -0.0 : 0.0;
    }
    return m;
  }
  /** C's nearbyint in the default rounding mode (np.round): halves to even, the sign kept. */
  function nearbyint(x) {
    const t = Math.abs(x);
    if (t < 4503599627370496.0) {  // 2^52: adding and taking it off rounds to an integer
      const r = (t + 4503599627370496.0) - 4503599627370496.0;
      return signBit(x) ? -r : r;
    }
    return x;  // already an integer, an infinity or NaN
  }
  function log1p(x) {
    return Math.log1p(x);
  }
  function expm1(x) {
    return Math.expm1(x);
  }

  // ---- lgamma: fdlibm's __ieee754_lgamma_r (glibc's lgamma_r outside (-28, -2), where glibc
  // uses lgamma_neg.c; there the reflection below is within an absolute error of a few ulps of
  // the terms it subtracts, which is relative accuracy except near lgamma's negative roots) ----

  const PI = 3.14159265358979311600e+00;
  const A0 = 7.72156649015328655494e-02, A1 = 3.22467033424113591611e-01,
    A2 = 6.73523010531292681824e-02, A3 = 2.05808084325167332806e-02,
    A4 = 7.38555086081402883957e-03, A5 = 2.89051383673415629091e-03,
    A6 = 1.19270763183362067845e-03, A7 = 5.10069792153511336608e-04,
    A8 = 2.20862790713908385557e-04, A9 = 1.08011567247583939954e-04,
    A10 = 2.52144565451257326939e-05, A11 = 4.48640949618915160150e-05;
  const TC = 1.46163214496836224576e+00, TF = -1.21486290535849611461e-01,
    TT = -3.63867699703950536541e-18;  // -(tail of TF)
  const T0 = 4.83836122723810047042e-01, T1 = -1.47587722994593911752e-01,
    T2 = 6.46249402391333854778e-02, T3 = -3.27885410759859649565e-02,
    T4 = 1.79706750811820387126e-02, T5 = -1.03142241298341437450e-02,
    T6 = 6.10053870246291332635e-03, T7 = -3.68452016781138256760e-03,
    T8 = 2.25964780900612472250e-03, T9 = -1.40346469989232843813e-03,
    T10 = 8.81081882437654011382e-04, T11 = -5.38595305356740546715e-04,
    T12 = 3.15632070903625950361e-04, T13 = -3.12754168375120860518e-04,
    T14 = 3.35529192635519073543e-04;
  const U0 = -7.72156649015328655494e-02, U1 = 6.32827064025093366517e-01,
    U2 = 1.45492250137234768737e+00, U3 = 9.77717527963372745603e-01,
    U4 = 2.28963728064692451092e-01, U5 = 1.33810918536787660377e-02;
  const V1 = 2.45597793713041134822e+00, V2 = 2.12848976379893395361e+00,
    V3 = 7.69285150456672783825e-01, V4 = 1.04222645593369134254e-01,
    V5 = 3.21709242282423911810e-03;
  const S0 = -7.72156649015328655494e-02, S1 = 2.14982415960608852501e-01,
    S2 = 3.25778796408930981787e-01, S3 = 1.46350472652464452805e-01,
    S4 = 2.66422703033638609560e-02, S5 = 1.84028451407337715652e-03,
    S6 = 3.19475326584100867617e-05;
  const R1 = 1.39200533467621045958e+00, R2 = 7.21935547567138069525e-01,
    R3 = 1.71933865632803078993e-01, R4 = 1.86459191715652901344e-02,
    R5 = 7.77942496381893596434e-04, R6 = 7.32668430744625636189e-06;
  const W0 = 4.18938533204672725052e-01, W1 = 8.33333333333329678849e-02,
    W2 = -2.77777777728775536470e-03, W3 = 7.93650558643019558500e-04,
    W4 = -5.95187557450339963135e-04, W5 = 8.36339918996282139126e-04,
    W6 = -1.63092934096575273989e-03;

  /** sin(pi x) for x < 0, with the argument reduced exactly (0 at the integers). */
  function sinPi(x) {
    if ((highWord(x) & 0x7fffffff) < 0x3fd00000) return Math.sin(PI * x);
    let y = -x;
    if (Math.floor(y) === y) return 0.0;
    y *= 0.5;
    y = 2.0 * (y - Math.floor(y));  // |x| mod 2, exact
    const n = (y * 4.0) | 0;
    switch (n) {
      case 0: y = Math.sin(PI * y); break;
      case 1:
      case 2: y = Math.cos(PI * (0.5 - y)); break;
      case 3:
      case 4: y = Math.sin(PI * (1.0 - y)); break;
      case 5:
      case 6: y = -Math.cos(PI * (y - 1.5)); break;
      default: y = Math.sin(PI * (y - 2.0)); break;
    }
    return -y;
  }

  /** log|Gamma(x)|: +Infinity at the poles (0 and the negative integers) and at +-Infinity. */
  function lgamma(x) {
    F[0] = x;
    const hx = U[HI] | 0, lx = U[LO] | 0;
    const ix = hx & 0x7fffffff;
    if (ix >= 0x7ff00000) return x * x;
    if ((ix | lx) === 0) return Infinity;
    if (ix < 0x3b900000) return -Math.log(Math.abs(x));  // |x| < 2^-70
    let nadj = 0.0;
    if (hx < 0) {
      if (ix >= 0x43300000) return Infinity;  // |x| >= 2^52: a negative integer
      const t = sinPi(x);
      if (t === 0.0) return Infinity;  // a negative integer
      nadj = Math.log(PI / Math.abs(t * x));
      x = -x;
    }
    let r, y, z, p, p1, p2, p3, w;
    if ((((ix - 0x3ff00000) | lx) === 0) || (((ix - 0x40000000) | lx) === 0)) {
      r = 0.0;  // lgamma(1) = lgamma(2) = 0
    } else if (ix < 0x40000000) {  // x < 2
      let i;
      if (ix <= 0x3feccccc) {  // lgamma(x) = lgamma(x + 1) - log(x)
        r = -Math.log(x);
        if (ix >= 0x3fe76944) {
          y = 1.0 - x;
          i = 0;
        } else if (ix >= 0x3fcda661) {
          y = x - (TC - 1.0);
          i = 1;
        } else {
          y = x;
          i = 2;
        }
      } else {
        r = 0.0;
        if (ix >= 0x3ffbb4c3) {  // [1.7316, 2]
          y = 2.0 - x;
          i = 0;
        } else if (ix >= 0x3ff3b4c4) {  // [1.23, 1.73]
          y = x - TC;
          i = 1;
        } else {
          y = x - 1.0;
          i = 2;
        }
      }
      if (i === 0) {
        z = y * y;
        p1 = A0 + z * (A2 + z * (A4 + z * (A6 + z * (A8 + z * A10))));
        p2 = z * (A1 + z * (A3 + z * (A5 + z * (A7 + z * (A9 + z * A11)))));
        p = y * p1 + p2;
        r += (p - 0.5 * y);
      } else if (i === 1) {
        z = y * y;
        w = z * y;
        p1 = T0 + w * (T3 + w * (T6 + w * (T9 + w * T12)));
        p2 = T1 + w * (T4 + w * (T7 + w * (T10 + w * T13)));
        p3 = T2 + w * (T5 + w * (T8 + w * (T11 + w * T14)));
        p = z * p1 - (TT - w * (p2 + y * p3));
        r += (TF + p);
      } else {
        p1 = y * (U0 + y * (U1 + y * (U2 + y * (U3 + y * (U4 + y * U5)))));
        p2 = 1.0 + y * (V1 + y * (V2 + y * (V3 + y * (V4 + y * V5))));
        r += (-0.5 * y + p1 / p2);
      }
    } else if (ix < 0x40200000) {  // 2 <= x < 8
      const i = x | 0;
      y = x - i;
      p = y * (S0 + y * (S1 + y * (S2 + y * (S3 + y * (S4 + y * (S5 + y * S6))))));
      const q = 1.0 + y * (R1 + y * (R2 + y * (R3 + y * (R4 + y * (R5 + y * R6)))));
      r = 0.5 * y + p / q;
      z = 1.0;  // lgamma(1 + s) = log(s) + lgamma(s)
      switch (i) {
        case 7: z *= (y + 6.0);  // falls through
        case 6: z *= (y + 5.0);  // falls through
        case 5: z *= (y + 4.0);  // falls through
        case 4: z *= (y + 3.0);  // falls through
        case 3: z *= (y + 2.0);
          r += Math.log(z);
          break;
        default: break;
      }
    } else if (ix < 0x43900000) {  // 8 <= x < 2^58
      const t = Math.log(x);
      z = 1.0 / x;
      y = z * z;
      w = W0 + z * (W1 + y * (W2 + y * (W3 + y * (W4 + y * (W5 + y * W6)))));
      r = (x - 0.5) * (t - 1.0) + w;
    } else {  // 2^58 <= x
      r = x * (Math.log(x) - 1.0);
    }
    if (hx < 0) r = nadj - r;
    return r;
  }

  // ---- digamma: tb_digamma, operation for operation ----

  const DIG_Y = Math.fround(0.99558162689208984);

  /** psi(x): Cephes' psi as SciPy evaluates it, with Boost's rational fit on [1, 2]. */
  function digamma(x) {
    let y = 0.0;
    if (x !== x || x === Infinity) return x;
    if (x === -Infinity) return NaN;
    if (x === 0) return 1 / x > 0 ? -Infinity : Infinity;
    if (x < 0) {
      // reflection psi(x) = psi(1 - x) - pi / tan(pi x), with the whole part taken off
      const r = x - Math.trunc(x);
      if (r === 0.0) return NaN;
      y = -3.141592653589793 / Math.tan(3.141592653589793 * r);
      x = 1.0 - x;
    }
    if (x <= 10.0 && x === Math.floor(x)) {  // psi(n) = -gamma + sum_{k<n} 1/k
      const n = x | 0;
      for (let k = 1; k < n; k++) y += 1.0 / k;
      return y - 0.57721566490153286061;
    }
    if (x < 1.0) {
      y -= 1.0 / x;
      x += 1.0;
    } else if (x < 10.0) {
      while (x > 2.0) {
        x -= 1.0;
        y += 1.0 / x;
      }
    }
    if (x >= 1.0 && x <= 2.0) {
      // psi(x) = (x - root) (Y + P(x - 1) / Q(x - 1))
      const t = x - 1.0;
      let g = x - 1569415565.0 / 1073741824.0;
      g -= (381566830.0 / 1073741824.0) / 1073741824.0;
      g -= 0.9016312093258695918615325266959189453125e-19;
      const p = ((((-0.0020713321167745952 * t - 0.045251321448739056) * t
                   - 0.28919126444774784) * t - 0.65031853770896507) * t
                 - 0.32555031186804491) * t + 0.25479851061131551;
      const q = (((((-0.55789841321675513e-6 * t + 0.0021284987017821144) * t
                    + 0.054151797245674225) * t + 0.43593529692665969) * t
                  + 1.4606242909763515) * t + 2.0767117023730469) * t + 1.0;
      return y + (g * DIG_Y + g * (p / q));
    }
    // x > 10: the asymptotic series, sum of B_2k / (2k x^2k)
    let s = 0.0;
    if (x < 1.0e17) {
      const z = 1.0 / (x * x);
      s = ((((((8.33333333333333333333E-2 * z - 2.10927960927960927961E-2) * z
               + 7.57575757575757575758E-3) * z - 4.16666666666666666667E-3) * z
             + 3.96825396825396825397E-3) * z - 8.33333333333333333333E-3) * z
           + 8.33333333333333333333E-2) * z;
    }
    return y + (Math.log(x) - 0.5 / x - s);
  }

  // ---- erf, erfc: fdlibm's s_erf.c ----

  const ERX = 8.45062911510467529297e-01;
  const EFX = 1.28379167095512586316e-01, EFX8 = 1.02703333676410069053e+00;
  const PP0 = 1.28379167095512558561e-01, PP1 = -3.25042107247001499370e-01,
    PP2 = -2.84817495755985104766e-02, PP3 = -5.77027029648944159157e-03,
    PP4 = -2.37630166566501626084e-05;
  const QQ1 = 3.97917223959155352819e-01, QQ2 = 6.50222499887672944485e-02,
    QQ3 = 5.08130628187576562776e-03, QQ4 = 1.32494738004321644526e-04,
    QQ5 = -3.96022827877536812320e-06;
  const PA0 = -2.36211856075265944077e-03, PA1 = 4.14856118683748331666e-01,
    PA2 = -3.72207876035701323847e-01, PA3 = 3.18346619901161753674e-01,
    PA4 = -1.10894694282396677476e-01, PA5 = 3.54783043256182359371e-02,
    PA6 = -2.16637559486879084300e-03;
  const QA1 = 1.06420880400844228286e-01, QA2 = 5.40397917702171048937e-01,
    QA3 = 7.18286544141962662868e-02, QA4 = 1.26171219808761642112e-01,
    QA5 = 1.36370839120290507362e-02, QA6 = 1.19844998467991074170e-02;
  const RA0 = -9.86494403484714822705e-03, RA1 = -6.93858572707181764372e-01,
    RA2 = -1.05586262253232909814e+01, RA3 = -6.23753324503260060396e+01,
    RA4 = -1.62396669462573470355e+02, RA5 = -1.84605092906711035994e+02,
    RA6 = -8.12874355063065934246e+01, RA7 = -9.81432934416914548592e+00;
  const SA1 = 1.96512716674392571292e+01, SA2 = 1.37657754143519042600e+02,
    SA3 = 4.34565877475229228821e+02, SA4 = 6.45387271733267880336e+02,
    SA5 = 4.29008140027567833386e+02, SA6 = 1.08635005541779435134e+02,
    SA7 = 6.57024977031928170135e+00, SA8 = -6.04244152148580987438e-02;
  const RB0 = -9.86494292470009928597e-03, RB1 = -7.99283237680523006574e-01,
    RB2 = -1.77579549177547519889e+01, RB3 = -1.60636384855821916062e+02,
    RB4 = -6.37566443368389627722e+02, RB5 = -1.02509513161107724954e+03,
    RB6 = -4.83519191608651397019e+02;
  const SB1 = 3.03380607434824582924e+01, SB2 = 3.25792512996573918826e+02,
    SB3 = 1.53672958608443695994e+03, SB4 = 3.19985821950859553908e+03,
    SB5 = 2.55305040643316442583e+03, SB6 = 4.74528541206955367215e+02,
    SB7 = -2.24409524465858183362e+01;
  const TINY = 1e-300;

  /** exp(-x^2 - 0.5625 + R/S) for x = |x| >= 1.25, the square split exactly (Note1). */
  function erfcTail(x, ix) {
    const s = 1.0 / (x * x);
    let R, S;
    if (ix < 0x4006db6e) {  // |x| < 1/0.35
      R = RA0 + s * (RA1 + s * (RA2 + s * (RA3 + s * (RA4 + s * (RA5 + s * (RA6 + s * RA7))))));
      S = 1.0 + s * (SA1 + s * (SA2 + s * (SA3 + s * (SA4 + s * (SA5 + s * (SA6 + s * (SA7
        + s * SA8)))))));
    } else {
      R = RB0 + s * (RB1 + s * (RB2 + s * (RB3 + s * (RB4 + s * (RB5 + s * RB6)))));
      S = 1.0 + s * (SB1 + s * (SB2 + s * (SB3 + s * (SB4 + s * (SB5 + s * (SB6 + s * SB7))))));
    }
    const z = clearLow(x);
    return Math.exp(-z * z - 0.5625) * Math.exp((z - x) * (z + x) + R / S);
  }

  /** erf(x). */
  function erf(x) {
    const hx = highWord(x);
    const ix = hx & 0x7fffffff;
    if (ix >= 0x7ff00000) return (1 - ((hx >>> 31) << 1)) + 1.0 / x;  // NaN, +-1
    if (ix < 0x3feb0000) {  // |x| < 0.84375
      if (ix < 0x3e300000) {  // |x| < 2^-28
        if (ix < 0x00800000) return 0.125 * (8.0 * x + EFX8 * x);  // no underflow
        return x + EFX * x;
      }
      const z = x * x;
      const r = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
      const s = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
      return x + x * (r / s);
    }
    if (ix < 0x3ff40000) {  // 0.84375 <= |x| < 1.25
      const s = Math.abs(x) - 1.0;
      const P = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
      const Q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
      return hx >= 0 ? ERX + P / Q : -ERX - P / Q;
    }
    if (ix >= 0x40180000) return hx >= 0 ? 1.0 - TINY : TINY - 1.0;  // |x| >= 6
    const ax = Math.abs(x);
    const r = erfcTail(ax, ix);
    return hx >= 0 ? 1.0 - r / ax : r / ax - 1.0;
  }

  /** erfc(x) = 1 - erf(x), without the cancellation. */
  function erfc(x) {
    const hx = highWord(x);
    const ix = hx & 0x7fffffff;
    if (ix >= 0x7ff00000) return ((hx >>> 31) << 1) + 1.0 / x;  // NaN, 0 at +inf, 2 at -inf
    if (ix < 0x3feb0000) {  // |x| < 0.84375
      if (ix < 0x3c700000) return 1.0 - x;  // |x| < 2^-56
      const z = x * x;
      const r = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
      const s = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
      const y = r / s;
      if (hx < 0x3fd00000) return 1.0 - (x + x * y);  // x < 1/4
      return 0.5 - (x * y + (x - 0.5));
    }
    if (ix < 0x3ff40000) {  // 0.84375 <= |x| < 1.25
      const s = Math.abs(x) - 1.0;
      const P = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
      const Q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
      return hx >= 0 ? (1.0 - ERX) - P / Q : 1.0 + (ERX + P / Q);
    }
    if (ix < 0x403c0000) {  // |x| < 28
      if (hx < 0 && ix >= 0x40180000) return 2.0 - TINY;  // x <= -6
      const ax = Math.abs(x);
      // s_erf.c's erfc takes the second fit from high word 0x4006DB6D, its erf from 0x4006DB6E
      const r = erfcTail(ax, ix === 0x4006db6d ? 0x4006db6e : ix);
      return hx > 0 ? r / ax : 2.0 - r / ax;
    }
    return hx > 0 ? TINY * TINY : 2.0 - TINY;
  }

  // ---- dense linear algebra on Float64Arrays, row-major, with element offsets ----

  /**
   * Cholesky factor of the lower triangle of a[aoff..] (n x n) into l[loff..], in LAPACK potrf's
   * column order (tb_cholesky). Returns 0, or 1 with l all NaN when a is not positive definite.
   */
  function cholesky(a, aoff, l, loff, n) {
    const nn = n * n;
    for (let i = 0; i < nn; i++) l[loff + i] = 0.0;
    for (let j = 0; j < n; j++) {
      const lj = loff + j * n;
      let s = a[aoff + j * n + j];
      for (let k = 0; k < j; k++) s -= l[lj + k] * l[lj + k];
      if (!(s > 0.0)) {
        for (let i = 0; i < nn; i++) l[loff + i] = NaN;
        return 1;
      }
      const d = Math.sqrt(s);
      l[lj + j] = d;
      for (let i = j + 1; i < n; i++) {
        const li = loff + i * n;
        let t = a[aoff + i * n + j];
        for (let k = 0; k < j; k++) t -= l[li + k] * l[lj + k];
        l[li + j] = t / d;
      }
    }
    return 0;
  }

  /**
   * x = op(A)^-1 b for one triangle of A (n x n, at aoff) and b (n x m, at boff) into x (at
   * xoff), op(A) = A or A^T (tb_trisolve). Returns 1 if a pivot is zero (the division's
   * infinities and NaNs are then in x; SciPy raises), else 0.
   */
  function trisolve(a, aoff, b, boff, x, xoff, n, m, lower, transposeA) {
    const trans = !!transposeA;
    const fwd = (!!lower) !== trans;
    let status = 0;
    for (let c = 0; c < m; c++) {
      for (let s = 0; s < n; s++) {
        const i = fwd ? s : n - 1 - s;
        let t = b[boff + i * m + c];
        for (let r = 0; r < s; r++) {
          const j = fwd ? r : n - 1 - r;
          t -= (trans ? a[aoff + j * n + i] : a[aoff + i * n + j]) * x[xoff + j * m + c];
        }
        const d = a[aoff + i * n + i];
        if (d === 0.0) status = 1;
        x[xoff + i * m + c] = t / d;
      }
    }
    return status;
  }

  return {
    max, min, clip, sign, logaddexp, expit, expitNp, floordiv, mod, nearbyint,
    lgamma, digamma, erf, erfc, log1p, expm1, cholesky, trisolve,
    highWord, clearLow, signBit,
  };
}
