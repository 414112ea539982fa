// The JS door of the conformance table (tests/conformance/*.json, see its README.md): one
// replayer for Node (test/node/conformance.test.mjs) and the browser page
// (test/browser/conformance.test.mjs, which imports this module in the page). No Node imports
// here: the tables are read by the caller and passed in as {table: cases}.
//
// A case's "js" block: `value` / `expr` are async function bodies with `tb` in scope (an
// expression is returned as it is; a body says `return` itself). Steps: receive (the value
// passed to a Python function), tensor (tb.tensor(value)), back (sent to Python and back), expr +
// result, warning (a regular expression a Python warning raised by the case's steps must match).
// What Python received is judged in Python, by tensorbridge.bridge.conformance.check_json, with
// the expectation as Python reads it from the table's text (JSON numbers parsed by JS would lose
// the int / float distinction: 1152921504606846976.0 is not the int 1152921504606847000).

export const STEPS = ["receive", "tensor", "back", "result"];
const AsyncFunction = (async () => {}).constructor;

/** The JS source of a value or expr as a function of tb. */
export function compile(src) {
  try {
    return new AsyncFunction("tb", `return (${src}\n);`);
  } catch {
    return new AsyncFunction("tb", src);  // a function body with its own `return`
  }
}

const HELPERS = `
import json as _json, warnings as _warnings
from tensorbridge.bridge import conformance as _conf

class _ConformanceWarnings:
    """Python warnings raised while one case runs (every one, not only the first)."""
    def __init__(self):
        self.ctx = None
        self.log = []
    def start(self):
        self.stop()
        self.ctx = _warnings.catch_warnings(record=True)
        self.log = self.ctx.__enter__()
        _warnings.simplefilter("always")
    def stop(self):
        if self.ctx is not None:
            self.ctx.__exit__(None, None, None)
            self.ctx = None
        return [str(w.message) for w in self.log]

_cw = _ConformanceWarnings()
_conformance_tables = {}

def _load_table(name, text):
    _conformance_tables[name] = {c["id"]: c for c in _json.loads(text)["cases"]}

def _expectation(table, case_id, step):
    """The js door's expectation of a step, as JSON text (Python's reading of the table)."""
    case = _conformance_tables[table][case_id]
    block = case.get("js", {})
    return _json.dumps(block[step] if step in block else case.get(step))

(_conf.check_json, _conf.echo, _cw.start, _cw.stop, _load_table, _expectation)`;

/** The error classes a thrown value answers to: JS classes, and Python's for a Python error. */
function errorClasses(e) {
  const out = new Set();
  if (e === null || typeof e !== "object") return out;
  for (let p = Object.getPrototypeOf(e); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    if (p.constructor?.name) out.add(p.constructor.name);
  }
  for (const n of [e.name, e.type, e.pyType]) if (typeof n === "string") out.add(n);
  for (const n of e.descriptor?.classes ?? []) out.add(String(n).split(".").pop());
  return out;
}

/** null when fn() throws the expected error (class, and the argument named in the message). */
async function raises(fn, want) {
  try {
    await fn();
  } catch (e) {
    const classes = errorClasses(e);
    if (!classes.has(want.class)) {
      return `threw ${[...classes][0] ?? typeof e}: ${e?.message ?? e}, expected ${want.class}`;
    }
    if (want.arg && !String(e?.message ?? "").includes(want.arg)) {
      return `${want.class} does not name the argument ${JSON.stringify(want.arg)}: ${e.message}`;
    }
    return null;
  }
  return `did not throw ${want.class}`;
}

/** Deep equality with NaN equal to NaN; typed arrays equal when of one kind and equal values. */
export function same(a, b) {
  if (a === b) return a !== 0 || Object.is(a, b);
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    if (a.constructor !== b.constructor || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length
      && a.every((v, i) => same(v, b[i]));
  }
  if (a instanceof Map || b instanceof Map) {
    return a instanceof Map && b instanceof Map && same([...a], [...b]);
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  return same(ka, kb) && ka.every((k) => same(a[k], b[k]));
}

function show(v) {
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}[${Array.from(v).join(", ")}]`;
  if (typeof v === "bigint") return `${v}n`;
  try {
    return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x)) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * Replay every case with a "js" block. texts: {table name: the table file's text}; door:
 * "js/node" or "js/browser". Returns {ran, failed, skipped, failures: ["door js/node, table t,
 * case c, step s: why", ...], summary}.
 */
export async function replay(tb, texts, door) {
  const [checkJson, echo, startWarnings, stopWarnings, loadTable, expectation] =
    await tb.runPython(HELPERS);
  const out = { ran: 0, failed: 0, skipped: [], failures: [], door };
  for (const [table, text] of Object.entries(texts)) {
    await loadTable(table, text);
    for (const c of JSON.parse(text).cases) {
      const block = c.js;
      if (!block) continue;
      if (block.skip) { out.skipped.push(`${table}:${c.id}: ${block.skip}`); continue; }
      out.ran++;
      const expect = (step) => expectation(table, c.id, step);
      const fails = await runCase(tb, c, block, { checkJson, echo, startWarnings, stopWarnings,
        expect });
      if (fails.length) {
        out.failed++;
        for (const f of fails) out.failures.push(`door ${door}, table ${table}, case ${c.id}, ${f}`);
      }
    }
  }
  out.summary = `conformance (${door} door): ${out.ran} cases, ${out.failed} failed`;
  return out;
}

async function runCase(tb, c, block, py) {
  const fails = [];
  const want = (step) => (step in block ? block[step] : c[step]);
  const value = block.value !== undefined ? compile(block.value) : null;
  const expr = block.expr !== undefined ? compile(block.expr) : null;
  const judge = async (step, make, expect) => {
    if (expect && typeof expect === "object" && "error" in expect) {
      const err = await raises(make, expect.error);
      if (err) fails.push(`step ${step}: ${err}`);
      return;
    }
    try {
      const err = await py.checkJson(await make(), await py.expect(step));
      if (err) fails.push(`step ${step}: ${err}`);
    } catch (e) {
      fails.push(`step ${step}: threw ${e?.name ?? ""} ${e?.message ?? e}`);
    }
  };
  await py.startWarnings();
  try {
    for (const step of STEPS) {
      const expect = want(step);
      if (expect === undefined || expect === null) continue;
      if (step === "result") {
        if (!expr) { fails.push("step result: the js block has no expr"); continue; }
        await judge(step, () => expr(tb), expect);
      } else if (!value) {
        fails.push(`step ${step}: the js block has no value`);
      } else if (step === "receive") {
        await judge(step, () => value(tb), expect);
      } else if (step === "tensor") {
        await judge(step, async () => tb.tensor(await value(tb)), expect);
      } else if (step === "back") {
        if (typeof expect === "object" && "error" in expect) {
          await judge(step, async () => py.echo(await value(tb)), expect);
          continue;
        }
        try {
          const got = await py.echo(await value(tb));
          const expected = expect === "same" ? await value(tb) : await compile(expect)(tb);
          if (!same(got, expected)) fails.push(`step back: got ${show(got)}, expected ${show(expected)}`);
        } catch (e) {
          fails.push(`step back: threw ${e?.name ?? ""} ${e?.message ?? e}`);
        }
      }
    }
  } finally {
    const warned = await py.stopWarnings();
    const pattern = want("warning");
    if (pattern && !warned.some((w) => new RegExp(pattern).test(w))) {
      fails.push(`step warning: none matched /${pattern}/ (got ${JSON.stringify(warned)})`);
    }
  }
  return fails;
}
