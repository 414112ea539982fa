"""The JS bridge benchmarks (bench/js_bridge.mjs, Node + Chromium) as rows of ``make bench``.

Runs ``node bench/js_bridge.mjs`` in a subprocess when the npm package is built (``make js``);
its rows (issue 5's targets: call overhead, TypedArray in, callbacks vs bare Atomics round trips)
join the table. Without Node or the build, one row says why.
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


def main() -> list[dict[str, Any]]:
    script = ROOT / "bench" / "js_bridge.mjs"
    node = shutil.which("node")
    built = (ROOT / "js-client" / "dist" / "build-info.json").exists()
    if node is None or not built:
        why = "node not found" if node is None else "js-client not built (make js)"
        return [{"name": "JS bridge (bench/js_bridge.mjs)", "value_us": None, "peer": "",
                 "peer_us": None, "ratio": None, "value_note": why}]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        env = {**os.environ, "BENCH_JSON": str(out)}
        proc = subprocess.run([node, str(script)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=900)
        print(proc.stdout, end="")
        if proc.returncode != 0 or not out.exists():
            return [{"name": "JS bridge (bench/js_bridge.mjs)", "value_us": None, "peer": "",
                     "peer_us": None, "ratio": None,
                     "error": f"node exited {proc.returncode}: {proc.stderr[-2000:]}"}]
        rows = json.loads(out.read_text())
    for r in rows:
        r["name"] = f"js: {r['name']}"
    return rows
