"""The runtime imports without NumPy (Pyodide) and computes special functions without SciPy."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_import_without_numpy() -> None:
    out = _run("""
        import sys
        sys.modules["numpy"] = None  # make `import numpy` fail
        import tensorbridge as tb
        g = tb.random.Generator(1)
        words = g._words(4)
        try:
            tb.tensor([1.0])
        except ImportError as e:
            msg = str(e)
        print(type(words).__name__, "pip install numpy" in msg)
    """)
    assert out == "list True"


def test_special_functions_without_scipy() -> None:
    out = _run("""
        import sys, json
        sys.modules["scipy"] = None
        sys.modules["scipy.special"] = None
        import tensorbridge as tb
        x = tb.tensor([0.3, 1.0, 4.5], dtype="float64")
        print(json.dumps([tb.erf(x).tolist(), tb.lgamma(x).tolist(), tb.digamma(x).tolist(),
                          tb.polygamma(2, x).tolist(), tb.sigmoid(x).tolist()]))
    """)
    import numpy as np
    import scipy.special as sp

    x = np.array([0.3, 1.0, 4.5])
    got = json.loads(out)
    want = [sp.erf(x), sp.gammaln(x), sp.digamma(x), sp.polygamma(2, x), sp.expit(x)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
