"""Coefficients of lgamma, erf, erfc (tb_prelude.js) and digamma (tb_prelude.js and tb_prelude.h),
computed from the math.

Run: ``.venv/bin/python runtime/compiled/tools/prelude_coefficients.py`` (needs mpmath); it prints
the JavaScript constant declarations that tb_prelude.js holds for lgamma, erf and erfc (pasted
there verbatim), and for each fit the degree and the measured maximum error of the polynomial
with its coefficients rounded to double. With the argument ``digamma`` it prints instead the
two digamma blocks, one for tb_prelude.js and one for tb_prelude.h (each pasted verbatim between
its BEGIN/END lines; the numbers in the two are the same doubles, printed by the same repr).

Method: each function g is interpolated at the Chebyshev points of its interval (first kind,
n + 1 points, which is within a small factor of the best polynomial of degree n), in 50-digit
arithmetic with mpmath's erf/erfc/loggamma as the reference; the Chebyshev expansion is
converted to powers of t = x - c (c the interval's centre or its start) and each coefficient
rounded to the nearest double. The degree is the least one whose interpolant, evaluated exactly
at 4000 points of the interval, is within 2^-60 of g relative to the stated scale; the error
printed is that of the polynomial with the rounded coefficients (the rounding of the leading
coefficients, under half an ulp of each, dominates it).
No other implementation's coefficients are used; the Stirling coefficients are
B_2k / (2k (2k - 1)) from mpmath's Bernoulli numbers.

digamma: psi(x) = (x - X0) R(x) on [1, 2], X0 = 1.46163... psi's positive root (mpmath's
findroot on mpmath's digamma, to 50 digits) carried as a double-double X0_HI + X0_LO, and R(x) =
psi(x) / (x - X0) (psi'(X0) at X0) fitted as above in powers of x - 1.5, its error relative to
R; on [2, 3] psi itself in powers of x - 2.5. Both are analytic on their interval (the nearest
singularity is psi's pole at 0), so the interpolants converge geometrically. The asymptotic
series' coefficients B_2k / (2k), k = 1..7, are mpmath's Bernoulli numbers, and Euler's gamma
is mpmath's euler, each rounded to double.
"""

from __future__ import annotations

import sys

import mpmath as mp

mp.mp.dps = 50


def cheb_poly(g, a, b, n, c):
    """Coefficients (mp) of the degree-n Chebyshev interpolant of g on [a, b] in powers of x - c."""
    a, b, c = mp.mpf(a), mp.mpf(b), mp.mpf(c)
    mid, hw = (a + b) / 2, (b - a) / 2
    nodes = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / (n + 1)) for j in range(n + 1)]
    vals = [g(mid + hw * s) for s in nodes]
    cheb = []
    for k in range(n + 1):
        ck = mp.fsum(vals[j] * mp.cos(mp.pi * k * (j + mp.mpf(1) / 2) / (n + 1))
                     for j in range(n + 1)) * 2 / (n + 1)
        cheb.append(ck)
    cheb[0] /= 2
    # T_k(s) in powers of s
    tk = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    for k in range(2, n + 1):
        p = [mp.mpf(0)] + [2 * v for v in tk[k - 1]]
        for i, v in enumerate(tk[k - 2]):
            p[i] -= v
        tk.append(p)
    pows = [mp.mpf(0)] * (n + 1)
    for k in range(n + 1):
        for i, v in enumerate(tk[k]):
            pows[i] += cheb[k] * v
    # s = (x - mid) / hw = (t + (c - mid)) / hw with t = x - c: expand in powers of t
    d = (c - mid) / hw
    out = [mp.mpf(0)] * (n + 1)
    for i, v in enumerate(pows):  # v s^i = v hw^-i (t + d hw)^i
        for j in range(i + 1):
            out[j] += v * mp.binomial(i, j) * (d * hw) ** (i - j) / hw ** i
    return out


TOL = mp.mpf(2) ** -60


def fit(name, g, a, b, c, scale, tol=TOL, nmax=40):
    """The least degree whose exact interpolant is within tol of g (relative to scale) on a
    4000-point grid; returns (double coefficients, degree, error of the rounded polynomial)."""
    a_, b_ = mp.mpf(a), mp.mpf(b)
    grid = [a_ + (b_ - a_) * i / 3999 for i in range(4000)]
    ref = [(x, g(x), scale(x)) for x in grid]

    def error(coefs):
        err = mp.mpf(0)
        for x, gx, sx in ref:
            t = x - c
            p = mp.mpf(0)
            for v in reversed(coefs):
                p = p * t + v
            err = max(err, abs(p - gx) / sx)
        return err

    for n in range(2, nmax + 1):
        exact = cheb_poly(g, a, b, n, c)
        if error(exact) < tol:
            # the constant term as a double-double (hi + lo): its rounding would otherwise be
            # up to half an ulp of the result on its own
            hi = float(exact[0])
            lo = float(exact[0] - hi)
            coefs = [float(v) for v in exact[1:]]
            err = error([mp.mpf(hi) + mp.mpf(lo)] + [mp.mpf(v) for v in coefs])
            return [lo, hi, *coefs], n, err
    raise RuntimeError(f"{name}: no degree <= {nmax} meets {tol}")


def js_array(name, coefs, comment):
    """A JS array constant; the fits are laid out [c0 lo, c0 hi, c1, ..., cn] (see poly in
    tb_prelude.js)."""
    body = ",\n    ".join(", ".join(repr(v) for v in coefs[i:i + 3])
                          for i in range(0, len(coefs), 3))
    return f"  // {comment}\n  const {name} = [\n    {body},\n  ];"


def lgamma_ratio(shift):
    """t -> lgamma(shift + t) / t, its limit at t = 0 (psi(shift)) included."""
    def g(t):
        if t == 0:
            return mp.digamma(shift)
        return mp.loggamma(shift + t) / t
    return g


def main():
    out = []
    report = []

    def add(name, g, a, b, c, scale, comment):
        coefs, n, err = fit(name, g, a, b, c, scale)
        out.append(js_array(name, coefs, f"{comment}: degree {n}, max error {mp.nstr(err, 3)}"))
        report.append(f"{name}: [{a}, {b}] degree {n} error {mp.nstr(err, 3)}")

    one = lambda x: mp.mpf(1)  # noqa: E731
    # erf(x) = x + x P(x^2), |x| <= 1: P(u) = erf(sqrt u) / sqrt u - 1, error relative to erf/x
    add("ERF_P", lambda u: (mp.erf(mp.sqrt(u)) / mp.sqrt(u) - 1) if u else 2 / mp.sqrt(mp.pi) - 1,
        0, 1, 0, lambda u: (mp.erf(mp.sqrt(u)) / mp.sqrt(u)) if u else 2 / mp.sqrt(mp.pi),
        "erf(x) = x + x P(x^2), |x| <= 1, P(u) = erf(sqrt u) / sqrt u - 1")
    # erfc(x) = exp(-x^2) erfcx(x): erfcx on [0.5, 8) in pieces, each in powers of x - centre
    erfcx = lambda x: mp.erfc(x) * mp.exp(x * x)  # noqa: E731
    for lo, hi in ERFCX_PIECES:
        add(f"ERFCX_{str(lo).replace('.', '_')}", erfcx, lo, hi, (lo + hi) / 2, erfcx,
            f"erfcx(x) = exp(x^2) erfc(x) on [{lo}, {hi}] in powers of x - {(lo + hi) / 2}")
    # x >= 8: x erfcx(x) as a polynomial in s = 1 / x^2 on [0, 1/64]
    add("ERFCX_TAIL", lambda s: (erfcx(1 / mp.sqrt(s)) / mp.sqrt(s)) if s else 1 / mp.sqrt(mp.pi),
        0, mp.mpf(1) / 64, 0, one,
        "x erfcx(x) for x >= 8 in powers of s = 1 / x^2 (s in [0, 1/64])")
    # lgamma near its roots 1 and 2 as t Q(t) (t = x - 1 or x - 2, exact): relative accuracy
    # there; around its minimum X0 directly in powers of x - X0 (exact for x in [X0/2, 2 X0]):
    # there lgamma is ~ -0.12 + O(t^2), which an expansion about 1 or 2 reaches only by
    # cancelling terms several times larger than the result
    for name, shift, a, b, comment in (
            ("LG1", 1, -0.5, 0.25, "lgamma(1 + t) / t on [-0.5, 0.25] in powers of t"),
            ("LG1_POS", 1, 0, 0.5, "lgamma(1 + t) / t on [0, 0.5] in powers of t"),
            ("LG2", 2, -0.25, 1, "lgamma(2 + t) / t on [-0.25, 1] in powers of t")):
        g = lgamma_ratio(shift)
        add(name, g, a, b, 0, lambda t, g=g: abs(g(t)), comment)
    x0 = float(mp.findroot(mp.digamma, mp.mpf("1.46")))
    out.append(f"  const LG_X0 = {x0!r};  // the double nearest lgamma's minimum (psi(x) = 0)")
    add("LG_MIN", lambda x: mp.loggamma(x), 1.25, 1.75, mp.mpf(x0),
        lambda x: abs(mp.loggamma(x)), "lgamma(x) on [1.25, 1.75] in powers of x - LG_X0")
    # sin(pi f) = f S(f^2) and cos(pi f) = C(f^2) for |f| <= 1/4 (lgamma's reflection)
    sinpi = lambda u: (mp.sin(mp.pi * mp.sqrt(u)) / mp.sqrt(u)) if u else +mp.pi  # noqa: E731
    add("SINPI", sinpi, 0, mp.mpf(1) / 16, 0, sinpi,
        "sin(pi f) / f in powers of u = f^2, |f| <= 1/4")
    cospi = lambda u: mp.cos(mp.pi * mp.sqrt(u))  # noqa: E731
    add("COSPI", cospi, 0, mp.mpf(1) / 16, 0, cospi, "cos(pi f) in powers of u = f^2, |f| <= 1/4")
    # Stirling: lgamma(x) = (x - 1/2) log x - x + log(2 pi) / 2 + sum B_2k / (2k (2k - 1) x^(2k-1))
    stir = [float(mp.bernoulli(2 * k) / (2 * k * (2 * k - 1))) for k in range(1, 11)]
    out.append(js_array("STIRLING", stir,
                        "B_2k / (2k (2k - 1)), k = 1..10 (not a fit: plain doubles)"))
    out.append(f"  const HALF_LOG_2PI_M_HALF = {float(mp.log(2 * mp.pi) / 2 - mp.mpf(1) / 2)!r};"
               "  // log(2 pi) / 2 - 1/2")
    log_pi_hi = float(mp.log(mp.pi))
    log_pi_lo = float(mp.log(mp.pi) - log_pi_hi)
    out.append(f"  const LOG_PI_HI = {log_pi_hi!r}, LOG_PI_LO = {log_pi_lo!r};"
               "  // log(pi) = HI + LO")
    print("\n".join(out))
    print("\n".join("// " + r for r in report))


def digamma_constants():
    """The digamma fits and constants: ((R's layout [c0 lo, c0 hi, c1, ..., cn], its degree, its
    error), the same for psi on [2, 3], X0_HI, X0_LO, Bernoulli coefficients, Euler's gamma)."""
    x0 = mp.findroot(mp.digamma, mp.mpf("1.46"))
    assert abs(mp.digamma(x0)) < mp.mpf(10) ** -45
    x0_hi = float(x0)
    x0_lo = float(x0 - x0_hi)
    dpsi = mp.psi(1, x0)

    def ratio(x):
        if abs(x - x0) < mp.mpf(10) ** -30:
            return dpsi  # the limit; psi'' / 2 (x - X0) is below 10^-30 here
        return mp.digamma(x) / (x - x0)

    fit_r = fit("DIG_R", ratio, 1, 2, mp.mpf(3) / 2, lambda x: abs(ratio(x)))
    fit_p = fit("DIG_P", mp.digamma, 2, 3, mp.mpf(5) / 2, lambda x: abs(mp.digamma(x)))
    bern = [float(mp.bernoulli(2 * k) / (2 * k)) for k in range(1, 8)]
    return fit_r, fit_p, x0_hi, x0_lo, bern, float(mp.euler)


def digamma_blocks():
    """The JS block (tb_prelude.js) and the C block (tb_prelude.h) of digamma's constants."""
    (coefs, n, err), (pcoefs, pn, perr), x0_hi, x0_lo, bern, euler = digamma_constants()
    one_m_hi = 1.0 - x0_hi  # exact (Sterbenz): the double 1 - X0_HI
    assert mp.mpf(one_m_hi) == 1 - mp.mpf(x0_hi)
    fit_note = (f"psi(x) / (x - X0) on [1, 2] in powers of x - 1.5: degree {n}, "
                f"max error {mp.nstr(err, 3)} (relative)")
    pfit_note = (f"psi(x) on [2, 3] in powers of x - 2.5: degree {pn}, "
                 f"max error {mp.nstr(perr, 3)} (relative)")
    root_note = "psi's positive root X0 = 1.4616321449683623... = HI + LO (double-double)"
    bern_note = "B_2k / (2k), k = 1..7 (Bernoulli numbers, not a fit)"
    tag = "generated by runtime/compiled/tools/prelude_coefficients.py digamma"

    def lines(vals, indent):
        return f",\n{indent}".join(", ".join(repr(v) for v in vals[i:i + 3])
                                    for i in range(0, len(vals), 3))

    js = "\n".join([
        f"  // BEGIN {tag}",
        f"  // {fit_note},",
        "  // laid out [c0 lo, c0 hi, c1, ..., cn]",
        f"  const DIG_R = [\n    {lines(coefs, '    ')},\n  ];",
        f"  // {pfit_note},",
        "  // laid out as DIG_R",
        f"  const DIG_P = [\n    {lines(pcoefs, '    ')},\n  ];",
        f"  // {root_note}; 1 - HI is exact",
        f"  const DIG_X0_HI = {x0_hi!r}, DIG_X0_LO = {x0_lo!r};",
        f"  const DIG_1_M_X0_HI = {one_m_hi!r};",
        f"  // {bern_note}",
        f"  const DIG_BERN = [\n    {lines(bern, '    ')},\n  ];",
        f"  const DIG_EULER = {euler!r};  // Euler's gamma",
        "  // END generated",
    ])
    c = "\n".join([
        f"/* BEGIN {tag} */",
        f"/* {fit_note},",
        "   laid out [c0 lo, c0 hi, c1, ..., cn] */",
        f"static const double tb_dig_r[{len(coefs)}] = {{\n    {lines(coefs, '    ')},\n}};",
        f"/* {pfit_note},",
        "   laid out as tb_dig_r */",
        f"static const double tb_dig_p[{len(pcoefs)}] = {{\n    {lines(pcoefs, '    ')},\n}};",
        f"/* {root_note}; 1 - HI is exact */",
        f"static const double tb_dig_x0_hi = {x0_hi!r}, tb_dig_x0_lo = {x0_lo!r},",
        f"    tb_dig_1_m_x0_hi = {one_m_hi!r};",
        f"/* {bern_note} */",
        f"static const double tb_dig_bern[{len(bern)}] = {{\n    {lines(bern, '    ')},\n}};",
        f"static const double tb_dig_euler = {euler!r};  /* Euler's gamma */",
        "/* END generated */",
    ])
    return js, c


ERFCX_PIECES = [(0.5, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 2.5), (2.5, 3.0), (3.0, 4.0),
                (4.0, 5.0), (5.0, 6.5), (6.5, 8.0)]

if __name__ == "__main__":
    if sys.argv[1:] == ["digamma"]:
        js_block, c_block = digamma_blocks()
        print("// ---- tb_prelude.js ----")
        print(js_block)
        print("/* ---- tb_prelude.h ---- */")
        print(c_block)
    else:
        main()
