// The scalar and small-matrix helpers every density lowered to JavaScript calls (issue 15): the
// JavaScript twin of tb_prelude.h, with the semantics of the C prelude and of the NumPy kernels
// (runtime/backends/numpy_backend.py), so that a program gives the same float64 results in the
// Pyodide worker (or Node) as on CPython. Math's functions cover exp, log, log1p and expm1; what
// JavaScript lacks (lgamma, digamma, erf, erfc, NumPy's floor division and modulo, round half to
// even, C's pow at 1 and -1) is here, in plain float64 arithmetic that V8 compiles to machine code.
//
// A plain script, not a module: the runtime evaluates this file's text as the body of
// `new Function(src + "\nreturn makePrelude();")`, so the prelude is made once per instance and
// touches no global. Hot functions are monomorphic (numbers in, a number out) and allocate
// nothing; the bit-level views are made once, here.
//
// lgamma, erf, erfc and digamma are our own, derived from the mathematics (Stirling's series,
// the recurrences and reflections of Gamma and psi, polynomial fits computed with mpmath by
// runtime/compiled/tools/prelude_coefficients.py); pow is C's pow over Math.pow.
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

  /** The high word of x (sign, exponent, top 20 significand bits), as a signed 32-bit integer. */
  function highWord(x) {
    F[0] = x;
    return U[HI] | 0;
  }
  /** x with the low 32 bits of its significand cleared (its leading 21 bits, truncated). */
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

  // ---- lgamma, erf, erfc: our own, from the mathematics ----
  //
  // Every approximation below is a polynomial fitted here: the Chebyshev interpolant of the
  // function on its interval, computed in 50-digit arithmetic with mpmath and rounded to
  // doubles by runtime/compiled/tools/prelude_coefficients.py, whose output the constants
  // between the BEGIN/END lines are, verbatim (rerun it to check or regenerate them). Each
  // fit is laid out [c0 lo, c0 hi, c1, ..., cn]: the constant term as a double-double, so that
  // its rounding adds nothing to the result's; the script prints each fit's degree and its
  // error with the rounded coefficients (all below ~2^-56 of the value, so what remains is
  // the rounding of the evaluation: see the bounds in tests/compiled/test_prelude_js.py).

  // BEGIN generated by runtime/compiled/tools/prelude_coefficients.py
  // erf(x) = x + x P(x^2), |x| <= 1, P(u) = erf(sqrt u) / sqrt u - 1: degree 12, max error 4.26e-18
  const ERF_P = [
    -1.2550489881249748e-17, 0.1283791670955126, -0.3761263890318375,
    0.11283791670954879, -0.026866170645076792, 0.0052239776248180145,
    -0.000854832698083379, 0.0001205533111164271, -1.4925595266831182e-05,
    1.6461000484121368e-06, -1.6350312701054695e-07, 1.4659775274047436e-08,
    -1.1372848856791674e-09, 5.957176147748911e-11,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [0.5, 1.0] in powers of x - 0.75: degree 14, max error 5.38e-18
  const ERFCX_0_5 = [
    -5.335681035462232e-17, 0.5069376502931449, -0.3679726916557954,
    0.2309581315512983, -0.12983606199487813, 0.06679054252756783,
    -0.03189726204019368, 0.014289198666091785, -0.006051532258236163,
    0.002437637348879293, -0.0009385135840131843, 0.00034675112699586235,
    -0.00012332254905491935, 4.236277872839012e-05, -1.4426531927022256e-05,
    4.6468063021709155e-06,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [1.0, 1.5] in powers of x - 1.25: degree 13, max error 9.27e-18
  const ERFCX_1_0 = [
    3.607072079916514e-19, 0.3678229164523611, -0.20882187596460985,
    0.10679557149659845, -0.05021827439590747, 0.022011364250946238,
    -0.009081627632959959, 0.003553109894683297, -0.0013257829272368543,
    0.0004739707006153454, -0.00016296012111131222, 5.404491508514403e-05,
    -1.7341459254977562e-05, 5.501701839828387e-06, -1.6610767030625112e-06,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [1.5, 2.0] in powers of x - 1.75: degree 13, max error 1.36e-17
  const ERFCX_1_5 = [
    8.568067820384127e-18, 0.2849722347374364, -0.1309763455144852,
    0.05576363008708723, -0.022259995241388317, 0.008404319207340187,
    -0.0030209746514281146, 0.001039204521356914, -0.00034353335318474803,
    0.0001095053381684006, -3.375536830552878e-05, 1.0085518680104132e-05,
    -2.92763224927802e-06, 8.406449608561853e-07, -2.3131132443809953e-07,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [2.0, 2.5] in powers of x - 2.25: degree 12, max error 8.9e-18
  const ERFCX_2_0 = [
    -5.74762364596782e-18, 0.23108725873039188, -0.08848650280874915,
    0.03199262741070626, -0.011002060756443272, 0.003618995354358873,
    -0.0011437284832410775, 0.00034853542194411975, -0.00010272110378129762,
    2.935325293033614e-05, -8.149680629782392e-06, 2.2028736439181116e-06,
    -5.883282657263032e-07, 1.513275262314643e-07,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [2.5, 3.0] in powers of x - 2.75: degree 12, max error 4.42e-18
  const ERFCX_2_5 = [
    -1.2015846532739174e-17, 0.1936620962790687, -0.06323763756063484,
    0.019758592987322864, -0.005934337896998593, 0.0017195818852893537,
    -0.00048219508490217707, 0.00013118180051258774, -3.469861390256048e-05,
    8.94015702656911e-06, -2.247258217659835e-06, 5.519497472530419e-07,
    -1.3409717925357684e-07, 3.154240525304326e-08,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [3.0, 4.0] in powers of x - 3.5: degree 14, max error 5.58e-18
  const ERFCX_3_0 = [
    -1.355844542216092e-18, 0.1552936556088943, -0.041323577833252495,
    0.010661133192510575, -0.0026730744396433895, 0.0006526863268788441,
    -0.00015546891823837533, 3.618170436366868e-05, -8.237986344257561e-06,
    1.8371878077863912e-06, -4.017419077698321e-07, 8.622012306201682e-08,
    -1.816549302673174e-08, 3.764843244262652e-09, -7.971848938959326e-10,
    1.5981815899094853e-10,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [4.0, 5.0] in powers of x - 4.5: degree 13, max error 5.01e-18
  const ERFCX_4_0 = [
    -6.813891234410126e-18, 0.12248480427384142, -0.026015928630939815,
    0.005413125434612216, -0.0011045761167898017, 0.0002212664545309336,
    -4.355082856393897e-05, 8.42924195260638e-06, -1.605497013589794e-06,
    3.0112686390069487e-07, -5.565085307376166e-08, 1.0136576298634514e-08,
    -1.8217866412269658e-09, 3.3190334902930086e-10, -5.808233719088603e-11,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [5.0, 6.5] in powers of x - 5.75: degree 14, max error 1.11e-17
  const ERFCX_5_0 = [
    -1.7756572733539565e-18, 0.09669877816971392, -0.016343218143802487,
    0.002725273842849635, -0.0004485956982779719, 7.292428887539486e-05,
    -1.1712414899397102e-05, 1.8593010712761964e-06, -2.9183819760538363e-07,
    4.530783717434806e-08, -6.959644867983127e-09, 1.058052599188048e-09,
    -1.5910536239847123e-10, 2.3713927159678102e-11, -3.664530859925328e-12,
    5.355523549693235e-13,
  ];
  // erfcx(x) = exp(x^2) erfc(x) on [6.5, 8.0] in powers of x - 7.25: degree 13, max error 4.65e-18
  const ERFCX_6_5 = [
    2.286417479734291e-18, 0.0770991803512599, -0.010441052002244,
    0.0014015533349908931, -0.00018652688237329925, 2.4616718892524278e-05,
    -3.222268161866632e-06, 4.184249032617064e-07, -5.391073991896659e-08,
    6.893025308658617e-09, -8.74761713662939e-10, 1.1015989089875337e-10,
    -1.3778421580085108e-11, 1.7636814051479531e-12, -2.1744871404345802e-13,
  ];
  // x erfcx(x) for x >= 8 in powers of s = 1 / x^2 (s in [0, 1/64]): degree 9, max error 4.45e-19
  const ERFCX_TAIL = [
    7.384756031259774e-18, 0.5641895835477563, -0.28209479177387453,
    0.42314218765313183, -1.0578554628098449, 3.702491472744577,
    -16.66057448672644, 91.53972990498953, -586.5240186310999,
    3933.1437972155836, -19269.359025840087,
  ];
  // lgamma(1 + t) / t on [-0.5, 0.25] in powers of t: degree 26, max error 7.51e-18
  const LG1 = [
    4.9895070358739165e-18, -0.5772156649015329, 0.8224670334241132,
    -0.40068563438653154, 0.2705808084277981, -0.20738555102860132,
    0.16955717699359008, -0.14404989678707655, 0.12550967001050026,
    -0.11133426340891098, 0.10009942464646493, -0.0909542103697217,
    0.08335507559721266, -0.07692330041425974, 0.07140976581562575,
    -0.06693942449810854, 0.06253963895421664, -0.05405833809958551,
    0.06300996580842351, -0.09711507456687482, -0.09976004239550705,
    0.05839141366385345, 1.2217937665683356, 1.4228995829028683,
    -2.329940209889122, -8.77633716146276, -9.705546654277935,
    -4.140343768382469,
  ];
  // lgamma(1 + t) / t on [0, 0.5] in powers of t: degree 17, max error 1.04e-16
  const LG1_POS = [
    5.094447140966304e-18, -0.5772156649015329, 0.822467033424113,
    -0.40068563438648896, 0.27058080842413595, -0.20738555086285299,
    0.16955717239554227, -0.14404981187422422, 0.12550856973787153,
    -0.11132388170757912, 0.10002613345156848, -0.0905598793431525,
    0.08172167936666096, -0.07168522041289471, 0.05826979381910883,
    -0.040779157312008804, 0.02221148943216459, -0.008111438344538497,
    0.001455912627655452,
  ];
  // lgamma(2 + t) / t on [-0.25, 1] in powers of t: degree 19, max error 2.47e-17
  const LG2 = [
    5.1206622620671995e-18, 0.42278433509846713, 0.3224670334241132,
    -0.06735230105319824, 0.02058080842778424, -0.007385551028654142,
    0.00289051033072021, -0.0011927539126748597, 0.0005096695279430015,
    -0.00022315474112389984, 9.945740403018013e-05, -4.492621024619582e-05,
    2.0508431375495262e-05, -9.443070078062413e-06, 4.375730109644836e-06,
    -2.0204865920550174e-06, 8.982572949875864e-07, -3.5682952091198503e-07,
    1.1277556209173469e-07, -2.4011085717229836e-08, 2.4957191825424246e-09,
  ];
  const LG_X0 = 1.4616321449683622;  // the double nearest lgamma's minimum (psi(x) = 0)
  // lgamma(x) on [1.25, 1.75] in powers of x - LG_X0: degree 16, max error 9.28e-18
  const LG_MIN = [
    3.3348286117053625e-18, -0.12148629053584961, -9.599975626867256e-17,
    0.4838361227238107, -0.147587722994528, 0.06462494023888057,
    -0.032788541089074016, 0.01797067512070884, -0.010314222982053282,
    0.0061005355471723454, -0.0036845720188300895, 0.0022597872291294863,
    -0.001402204397519025, 0.0008776454245838924, -0.0005542819318894867,
    0.00035976137410416415, -0.00023417471856033143, 0.00010582129400058809,
  ];
  // sin(pi f) / f in powers of u = f^2, |f| <= 1/4: degree 7, max error 5.34e-18
  const SINPI = [
    1.224590702632551e-16, 3.141592653589793, -5.16771278004997,
    2.5501640398773415, -0.5992645293202978, 0.08214588658005621,
    -0.007370429884712669, 0.00046628272951211076, -2.1717401400090533e-05,
  ];
  // cos(pi f) in powers of u = f^2, |f| <= 1/4: degree 7, max error 2.12e-17
  const COSPI = [
    -3.0329556798528934e-20, 1.0, -4.934802200544679,
    4.058712126416747, -1.3352627688519174, 0.23533063019088787,
    -0.025806885652951306, 0.0019294657440800042, -0.00010356747255199479,
  ];
  // B_2k / (2k (2k - 1)), k = 1..10 (not a fit: plain doubles)
  const STIRLING = [
    0.08333333333333333, -0.002777777777777778, 0.0007936507936507937,
    -0.0005952380952380953, 0.0008417508417508417, -0.0019175269175269176,
    0.00641025641025641, -0.029550653594771242, 0.17964437236883057,
    -1.3924322169059011,
  ];
  const HALF_LOG_2PI_M_HALF = 0.4189385332046727;  // log(2 pi) / 2 - 1/2
  const LOG_PI_HI = 1.1447298858494002, LOG_PI_LO = 1.0265951162707826e-17;  // log(pi) = HI + LO
  // END generated

  /**
   * c0 + t (c1 + t (c2 + ...)) for a fit laid out [c0 lo, c0 hi, c1, ..., cn]. The part after
   * c0, P(t) = c1 + c2 t + ..., is summed as E(t^2) + t O(t^2), two Horner chains in one loop
   * (half the dependent steps of one chain); their terms fall off fast, so the roundings are
   * those of plain Horner's rule.
   */
  function poly(c, t) {
    const n = c.length - 1, t2 = t * t;
    let e, o, k;
    if (n & 1) {  // c[n] multiplies t^(n - 2), an odd power
      o = c[n];
      e = c[n - 1];
      k = n - 2;
    } else {
      o = 0.0;
      e = c[n];
      k = n - 1;
    }
    for (; k >= 3; k -= 2) {
      o = o * t2 + c[k];
      e = e * t2 + c[k - 1];
    }
    return c[1] + ((e + t * o) * t + c[0]);
  }

  const TWO52 = 4503599627370496.0;

  /**
   * |sin(pi x)| for finite x, 0 exactly at the integers. x is reduced exactly: r = |x| mod 2
   * (y - 2 floor(y / 2) is exact for y < 2^52; every larger double is an even integer), then
   * r = n / 2 + f with n = round(2 r) and |f| <= 1/4 (exact by Sterbenz's lemma), and
   * |sin(pi r)| is |sin(pi f)| for even n, |cos(pi f)| for odd n, each a fit in f^2 (so pi f,
   * which Math.sin would need, is never rounded).
   */
  function absSinPi(x) {
    const y = Math.abs(x);
    if (y >= TWO52) return 0.0;
    const r = y - 2.0 * Math.floor(0.5 * y);
    const n = Math.round(2.0 * r);
    const f = r - 0.5 * n;
    return (n & 1) ? poly(COSPI, f * f) : Math.abs(f * poly(SINPI, f * f));
  }

  /**
   * log Gamma(x) for finite x > 0.
   * - x < 0.5: lgamma(1 + x) - log(x), lgamma(1 + t) = t Q1(t) (so 1 + x is never rounded);
   * - [0.5, 1.25): t Q1(t), t = x - 1 (exact): relative accuracy at the root x = 1;
   * - [1.25, 1.75): a polynomial in x - X0 (exact), X0 the minimum: lgamma ~ -0.12 + O(t^2);
   * - [1.75, 3): t Q2(t), t = x - 2 (exact), lgamma(2 + t) = t Q2(t): the root x = 2;
   * - [3, 8): Gamma(x) = (x - 1) ... (y) Gamma(y) down to y in [2, 3) (each x - 1 exact), two
   *   positive terms;
   * - x >= 8: Stirling's series (x - 1/2) log x - x + log(2 pi) / 2 + sum_k B_2k / (2k (2k - 1)
   *   x^(2k - 1)), ten terms (the omitted ones are below 1e-19 of the result at x = 8), the
   *   first terms grouped as (x - 1/2) (log x - 1) + (log(2 pi) - 1) / 2, where log x - 1 is
   *   exact.
   */
  function lgammaPos(x) {
    if (x < 0.5) return x * poly(LG1_POS, x) - Math.log(x);
    if (x < 1.25) {
      const t = x - 1.0;
      return t === 0 ? 0.0 : t * poly(LG1, t);  // +0 at x = 1 (Q1(0) = -gamma)
    }
    if (x < 1.75) return poly(LG_MIN, x - LG_X0);
    if (x < 3.0) {
      const t = x - 2.0;
      return t * poly(LG2, t);
    }
    if (x < 8.0) {
      let y = x - 1.0, p = y;
      while (y >= 3.0) {
        y -= 1.0;
        p *= y;
      }
      const t = y - 2.0;
      return t * poly(LG2, t) + Math.log(p);
    }
    const z = 1.0 / x, z2 = z * z;
    let s = STIRLING[9];
    for (let k = 8; k >= 0; k--) s = s * z2 + STIRLING[k];
    return (x - 0.5) * (Math.log(x) - 1.0) + (HALF_LOG_2PI_M_HALF + s * z);
  }

  /** a * b - p exactly, p the rounded product (Dekker's splitting; |a|, |b| < 2^996). */
  function productError(a, b, p) {
    let c = 134217729.0 * a;  // 2^27 + 1
    const ah = c - (c - a), al = a - ah;
    c = 134217729.0 * b;
    const bh = c - (c - b), bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  }

  /**
   * log|Gamma(x)|: +Infinity at the poles (0 and the negative integers) and at +-Infinity.
   * x < 0 by reflection, Gamma(x) Gamma(1 - x) = pi / sin(pi x) with Gamma(1 - x) = -x Gamma(-x):
   * lgamma(x) = log(pi / |x sin(pi x)|) - lgamma(-x) (-x exact), with the product x sin(pi x)
   * and log(pi) carried to double-double. The two terms are each within about two ulps, so the
   * result is within a few ulps of the larger term: relative accuracy except near lgamma's
   * negative roots (two in each (-n - 1, -n) for n >= 2), where the terms cancel.
   */
  function lgamma(x) {
    if (x !== x) return x;
    if (x > 0) return x === Infinity ? Infinity : lgammaPos(x);
    if (x === 0 || x === -Infinity) return Infinity;
    if (x > -8.470329472543003e-22) return -Math.log(-x);  // |x| < 2^-70: -log|x| - gamma x ...
    const s = absSinPi(x);
    if (s === 0) return Infinity;  // a negative integer
    // log(pi / (s |x|)) = log(pi) - log(q) - e / q + O((e / q)^2), q + e = s |x| exactly
    const ax = -x, q = s * ax;
    return ((LOG_PI_HI - Math.log(q)) + (LOG_PI_LO - productError(s, ax, q) / q)) - lgammaPos(ax);
  }

  // ---- digamma: tb_digamma, operation for operation ----
  //
  // digamma, our own: the constants between the BEGIN/END lines are the output of
  // runtime/compiled/tools/prelude_coefficients.py digamma (mpmath, 50 digits), the same doubles
  // in tb_prelude.h and tb_prelude.js, whose digamma is tb_digamma operation for operation.
  // x < 0: the reflection psi(x) = psi(1 - x) - pi cot(pi x), cot(pi x) = cot(pi r) with
  // r = x - trunc(x), plus 1 if below -1/2 (both exact), so that |pi r| <= pi/2: relative
  // accuracy except near the negative roots (-0.5041, -1.4573, ...), where the two terms cancel
  // and the error is a few ulps of the terms. Integers n <= 10: psi(n) = -gamma + sum 1/k, k < n.
  // [1, 2]: psi(x) = (x - X0) R(x), X0 psi's positive root as a double-double (x - X0_HI is
  // exact, so the factor keeps relative accuracy at the root) and R a polynomial in x - 1.5
  // (its Chebyshev interpolant, within 2^-55 of R). (0, 1): psi(x) = psi(1 + x) - 1/x, with
  // x - 0.5 and (x + (1 - X0_HI)) - X0_LO in place of (1 + x) - 1.5 and (1 + x) - X0, so that
  // 1 + x is never rounded. [2, 3]: psi(x) a polynomial in x - 2.5 (within 2^-55 of psi; from
  // [1, 2] by psi(x - 1) + 1/(x - 1) the sum would cancel to up to 4 ulps). (3, 10):
  // psi(x) = psi(x - 1) + 1/(x - 1) down to (2, 3] (x - 1 exact; positive terms). x >= 10:
  // the asymptotic series log x - 1/(2x) - sum_{k=1..7} B_2k / (2k x^2k) (the first term left
  // out is below 2^-55 of the result). Within about 2 ulps of the exact value for x > 0
  // (tests/compiled/test_prelude_js.py). psi(NaN) = NaN, psi(inf) = inf, psi(-inf) = NaN,
  // psi(+-0) = -+inf, NaN at the negative integers (SciPy's conventions).

  // BEGIN generated by runtime/compiled/tools/prelude_coefficients.py digamma
  // psi(x) / (x - X0) on [1, 2] in powers of x - 1.5: degree 23, max error 1.83e-17 (relative),
  // laid out [c0 lo, c0 hi, c1, ..., cn]
  const DIG_R = [
    4.292118102788199e-17, 0.9510558760318328, -0.42362742128146047,
    0.24054248424078736, -0.14840492305391761, 0.09498872445283,
    -0.06192213327165706, 0.04076083394462657, -0.02697579684427536,
    0.017907248195969127, -0.011908215172584002, 0.007927024067961237,
    -0.00528001782089874, 0.0035180800751066694, -0.002344650082351321,
    0.0015635679757533885, -0.001042261556504223, 0.0006899717801166841,
    -0.0004599625144612576, 0.0003268068044141764, -0.0002178682145501451,
    9.173383289174792e-05, -6.11554261750751e-05, 0.00012230983055406747,
    -8.153978973309418e-05,
  ];
  // psi(x) on [2, 3] in powers of x - 2.5: degree 18, max error 1.47e-17 (relative),
  // laid out as DIG_R
  const DIG_P = [
    -4.430586970323463e-18, 0.7031566406452432, 0.49035775610023485,
    -0.11810202582086371, 0.03731764146954112, -0.013073166646113453,
    0.004821409821455415, -0.0018305640382888179, 0.000707388163197554,
    -0.00027643925346865374, 0.00010882587634081144, -4.305270236007895e-05,
    1.7088820493886883e-05, -6.798790593769176e-06, 2.711387832304196e-06,
    -1.081656092483692e-06, 4.23917256057974e-07, -1.6933587400771292e-07,
    8.352099561278771e-08, -3.338777172327379e-08,
  ];
  // psi's positive root X0 = 1.4616321449683623... = HI + LO (double-double); 1 - HI is exact
  const DIG_X0_HI = 1.4616321449683622, DIG_X0_LO = 9.549995429965697e-17;
  const DIG_1_M_X0_HI = -0.46163214496836225;
  // B_2k / (2k), k = 1..7 (Bernoulli numbers, not a fit)
  const DIG_BERN = [
    0.08333333333333333, -0.008333333333333333, 0.003968253968253968,
    -0.004166666666666667, 0.007575757575757576, -0.021092796092796094,
    0.08333333333333333,
  ];
  const DIG_EULER = 0.5772156649015329;  // Euler's gamma
  // END generated

  /** psi(x): tb_digamma (tb_prelude.h), operation for operation. */
  function digamma(x) {
    let y = 0.0;
    if (x !== x || x === Infinity) return x;
    if (x === -Infinity) return NaN;
    if (x === 0) return 1 / x > 0 ? -Infinity : Infinity;
    if (x < 0) {
      let r = x - Math.trunc(x);  // in (-1, 0]
      if (r === 0.0) return NaN;
      if (r < -0.5) r += 1.0;
      y = -3.141592653589793 / Math.tan(3.141592653589793 * r);
      x = 1.0 - x;  // exact: |x| < 2^52 here
    }
    if (x <= 10.0 && x === Math.floor(x)) {
      const n = x | 0;
      for (let k = 1; k < n; k++) y += 1.0 / k;
      return y - DIG_EULER;
    }
    if (x < 1.0) {  // psi(1 + x) - 1/x
      y -= 1.0 / x;
      return y + ((x + DIG_1_M_X0_HI) - DIG_X0_LO) * poly(DIG_R, x - 0.5);
    }
    if (x < 2.0) return y + ((x - DIG_X0_HI) - DIG_X0_LO) * poly(DIG_R, x - 1.5);
    if (x < 10.0) {
      while (x > 3.0) {
        x -= 1.0;
        y += 1.0 / x;
      }
      return y + poly(DIG_P, x - 2.5);
    }
    let s = 0.0;
    if (x < 1.0e17) {
      const z = 1.0 / (x * x);
      s = DIG_BERN[6];
      for (let k = 5; k >= 0; k--) s = s * z + DIG_BERN[k];
      s *= z;
    }
    return y + (Math.log(x) - 0.5 / x - s);
  }

  // ---- trigamma: tb_trigamma (tb_prelude.h), operation for operation ----
  function trigammaPos(x) {
    let y = 0.0;
    while (x < 10.0) {
      y += 1.0 / (x * x);
      x += 1.0;
    }
    const z = 1.0 / x, z2 = z * z;
    const s = z2 * z * (1.0 / 6.0 - z2 * (1.0 / 30.0 - z2 * (1.0 / 42.0 - z2 * (1.0 / 30.0
      - z2 * (5.0 / 66.0 - z2 * (691.0 / 2730.0 - z2 * (7.0 / 6.0)))))));
    return y + (z + 0.5 * z2 + s);
  }

  /** psi1(x), polygamma of order 1 (see tb_trigamma in tb_prelude.h). */
  function trigamma(x) {
    if (x !== x) return x;
    if (x === Infinity) return 0.0;
    if (x <= 0.0 && x === Math.floor(x)) return Infinity;
    if (x < 0.0) {
      const sn = Math.sin(3.141592653589793 * (x - Math.round(x)));  // |pi r| <= pi/2
      return 9.869604401089358 / (sn * sn) - trigammaPos(1.0 - x);
    }
    return trigammaPos(x);
  }

  // ---- tetragamma: tb_tetragamma (tb_prelude.h), operation for operation ----
  function tetragammaPos(x) {
    let y = 0.0;
    while (x < 15.0) {
      y -= 2.0 / (x * x * x);
      x += 1.0;
    }
    const z = 1.0 / x, z2 = z * z;
    const s = z2 * z2 * (0.5 - z2 * (1.0 / 6.0 - z2 * (1.0 / 6.0 - z2 * (3.0 / 10.0
      - z2 * (5.0 / 6.0 - z2 * (691.0 / 210.0 - z2 * 17.5))))));
    return -((z2 + z2 * z + s) - y);
  }

  /** psi2(x), polygamma of order 2 (see tb_tetragamma in tb_prelude.h). */
  function tetragamma(x) {
    if (x !== x) return x;
    if (x === Infinity) return -0.0;
    if (x <= 0.0 && x === Math.floor(x)) return -Infinity;
    if (x < 0.0) {
      const r = x - nearbyint(x), ar = Math.abs(r);  // |r| <= 1/2, exact
      const sn = Math.sin(3.141592653589793 * r);
      const cs = ar > 0.25 ? Math.sin(3.141592653589793 * (0.5 - ar))
        : Math.cos(3.141592653589793 * r);
      return tetragammaPos(1.0 - x) - 62.01255336059963 * cs / (sn * sn * sn);
    }
    return tetragammaPos(x);
  }

  // ---- erf, erfc ----
  //
  // |x| <= 1: erf(x) = x + x P(x^2), P(u) = erf(sqrt u) / sqrt u - 1 (|P| < 0.16: x + x P is
  // within a little over half an ulp). |x| >= 1/2: erfc(x) = exp(-x^2) erfcx(x), erfcx the
  // scaled complementary error function, fitted on pieces of [1/2, 8) in powers of x - centre
  // and, for x >= 8, as x erfcx(x) in powers of 1 / x^2 (smooth there: the asymptotic
  // expansion 1/sqrt(pi) (1 - 1/(2x^2) + 3/(4x^4) ...)). exp(-x^2) is exp(-h^2) exp(-d) with h
  // x's leading 21 bits (so h^2 is exact) and d = x^2 - h^2 = (x - h)(x + h) small, so the
  // rounding of x^2 (a relative error of x^2 2^-53 in the result) never happens. The factor
  // exp(-h^2), subnormal past x ~ 26.6, is applied last, so the result is rounded once there.

  /** erfcx(x) = exp(x^2) erfc(x) for x in [1/2, 28). */
  function erfcx(x) {
    if (x < 2.5) {
      if (x < 1.0) return poly(ERFCX_0_5, x - 0.75);
      if (x < 1.5) return poly(ERFCX_1_0, x - 1.25);
      if (x < 2.0) return poly(ERFCX_1_5, x - 1.75);
      return poly(ERFCX_2_0, x - 2.25);
    }
    if (x < 8.0) {
      if (x < 3.0) return poly(ERFCX_2_5, x - 2.75);
      if (x < 4.0) return poly(ERFCX_3_0, x - 3.5);
      if (x < 5.0) return poly(ERFCX_4_0, x - 4.5);
      if (x < 6.5) return poly(ERFCX_5_0, x - 5.75);
      return poly(ERFCX_6_5, x - 7.25);
    }
    return poly(ERFCX_TAIL, 1.0 / (x * x)) / x;
  }

  /** erfc(x) for x in [1/2, 28): exp(-x^2) erfcx(x), see above. */
  function erfcPos(x) {
    const h = clearLow(x);  // 21 significant bits, h <= x
    const d = (x - h) * (x + h);  // x - h exact; d >= 0, below 2^-19 x^2
    const e = erfcx(x);
    return Math.exp(-(h * h)) * (e + e * Math.expm1(-d));
  }

  /** erf(x) for |x| <= 1: x + x P(x^2). */
  function erfSmall(x) {
    return x + x * poly(ERF_P, x * x);
  }

  /** erf(x). */
  function erf(x) {
    const ax = Math.abs(x);
    if (!(ax > 1.0)) return erfSmall(x);  // NaN too
    if (ax >= 6.0) return x > 0 ? 1.0 : -1.0;  // 1 - erf(6) < 2^-55: rounds to 1
    const r = 1.0 - erfcPos(ax);  // erfc(x) < 0.16: under a quarter-ulp error of 1 - erfc
    return x > 0 ? r : -r;
  }

  /** erfc(x) = 1 - erf(x), without the cancellation. */
  function erfc(x) {
    if (x !== x) return x;
    const ax = Math.abs(x);
    if (ax < 0.5) {
      const xp = x * poly(ERF_P, x * x);
      // 1/4 <= x < 1/2: (1/2 - x) exact and (1/2 - x P) in [0.43, 0.48]; else 1 - erf(x) >= 0.72
      if (x >= 0.25) return (0.5 - x) + (0.5 - xp);
      return 1.0 - (x + xp);
    }
    if (ax >= 28.0) return x > 0 ? 0.0 : 2.0;  // erfc(27.3) < 2^-1075 already
    const r = erfcPos(ax);
    return x > 0 ? r : 2.0 - r;
  }

  /** C's pow: pow(1, y) = 1 for every y (NaN too), pow(-1, +-Infinity) = 1; else Math.pow. */
  function pow(x, y) {
    if (x === 1.0 || (x === -1.0 && (y === Infinity || y === -Infinity))) return 1.0;
    return Math.pow(x, y);
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
    lgamma, digamma, trigamma, tetragamma, erf, erfc, log1p, expm1, pow, cholesky, trisolve,
    highWord, clearLow, signBit,
  };
}
