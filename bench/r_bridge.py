"""The R bridge benchmarks (bench/r_bridge.R, Rscript) as rows of ``make bench``.

Runs ``Rscript bench/r_bridge.R`` in a subprocess with the main venv's Python
(``TENSORBRIDGE_PYTHON``, default ``.venv/bin/python``) once the R package is installed (``make
bench`` installs it); its rows (call latency against reticulate, zero-copy R -> Python, Python ->
R against R's own copy and reticulate, callbacks) join the table. Without Rscript or the
package, one row says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _missing(why: str, error: bool = False) -> list[dict[str, Any]]:
    row: dict[str, Any] = {"name": "R bridge (bench/r_bridge.R)", "value_us": None, "peer": "",
                           "peer_us": None, "ratio": None}
    row["error" if error else "value_note"] = why
    return [row]


def main() -> list[dict[str, Any]]:
    rscript = shutil.which("Rscript")
    if rscript is None:
        return _missing("Rscript not found")
    python = os.environ.get("TENSORBRIDGE_PYTHON") or str(ROOT / ".venv" / "bin" / "python")
    if not Path(python).exists():
        return _missing(f"{python} missing (make setup-test)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        env = {**os.environ, "BENCH_JSON": str(out), "TENSORBRIDGE_PYTHON": python}
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.pop(var, None)  # the R package's defaults, as a user gets them
        proc = subprocess.run([rscript, str(ROOT / "bench" / "r_bridge.R")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=1200)
        print(proc.stdout, end="")
        if proc.returncode != 0 or not out.exists():
            return _missing(f"Rscript exited {proc.returncode}: {proc.stderr[-2000:]}",
                            error=True)
        rows = json.loads(out.read_text())
    for r in rows:
        r.setdefault("peer", "")
        r.setdefault("peer_us", None)
        r.setdefault("ratio", None)
        if isinstance(r.get("notes"), str):
            r["notes"] = [r["notes"]]
    return rows


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
