// The model saved by the R client (tests/fixtures/shared/model_from_r/ + expected_predictions.json)
// for the Node and browser tests. Where the R fixture is absent, an equivalent directory is
// written by the Python runtime (NumPy backend, the repo's .venv) into a temp dir.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const shared = path.join(repo, "tests/fixtures/shared");

export function modelFromR() {
  const dir = path.join(shared, "model_from_r");
  const expected = path.join(shared, "expected_predictions.json");
  if (fs.existsSync(path.join(dir, "model.json")) && fs.existsSync(expected)) {
    return { dir, expected: JSON.parse(fs.readFileSync(expected, "utf8")), source: "R" };
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tb-model-from-python-"));
  const py = path.join(repo, ".venv/bin/python");
  execFileSync(py, ["-c", `
import json, sys
import tensorbridge as tb
L = tb.layers
tb.random.seed(11)
m = L.Sequential([L.Dense(8, activation="relu", input_shape=(3,)), L.Dense(2, activation="tanh")])
m.compile(optimizer="adam", loss="mse")
x = [[0.1 * i - 0.3 * j for j in range(3)] for i in range(5)]
m.save(sys.argv[1] + "/model")
json.dump({"x": x, "predictions": m.predict(tb.tensor(x)).tolist()},
          open(sys.argv[1] + "/expected_predictions.json", "w"))
`, tmp]);
  return { dir: path.join(tmp, "model"), source: "Python",
    expected: JSON.parse(fs.readFileSync(path.join(tmp, "expected_predictions.json"), "utf8")) };
}

/** The inputs and predictions of expected_predictions.json, whatever the writer named them. */
export function inputsAndPredictions(e) {
  const x = e.x ?? e.input ?? e.inputs ?? e.newdata;
  const p = e.predictions ?? e.expected ?? e.prediction ?? e.y;
  return { x: x.data !== undefined ? x.data : x, p: p.data !== undefined ? p.data : p };
}

