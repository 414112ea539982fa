import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { loadTensorBridge } from "../../src/index.js";

export const fixturesDir = fileURLToPath(new URL("../fixtures/", import.meta.url));

let shared = null;
/** One runtime per test file (booting Pyodide takes ~2 s). */
export function boot(options = {}) {
  shared ??= loadTensorBridge(options);
  return shared;
}

/** Run the op-case table in Python (tfjs backend) against ops.json; name -> error or null. */
export async function checkFixtures(tb) {
  const src = fs.readFileSync(new URL("../fixtures/op_cases.py", import.meta.url), "utf8");
  const fix = fs.readFileSync(new URL("../fixtures/ops.json", import.meta.url), "utf8");
  tb.core.glue.set("_CASES_SRC", src);
  tb.core.glue.set("_FIXTURES", fix);
  return tb.runPython(`
import json as _json, types as _types, warnings as _w
_mod = _types.ModuleType("op_cases"); exec(_CASES_SRC, _mod.__dict__)
_fix = _json.loads(_FIXTURES)["cases"]
_res = {}
with _w.catch_warnings():
    _w.simplefilter("ignore")
    for _c in _mod.CASES:
        try:
            _res[_c[0]] = _mod.check_case(_c, _fix[_c[0]])
        except Exception as _e:
            _res[_c[0]] = f"{type(_e).__name__}: {_e}"
_res`);
}
