// The READMEs are tests: every ```js (or ```javascript) block of js-client/README.md and of the
// repository's README.md runs here as written, one test per block (named file:line of its
// opening fence). Each block is a fresh ES module, as in a user's project: written to a temporary
// folder whose node_modules/tensorbridge links to this package (what `npm install
// /path/to/tensorbridge/js-client` makes, so `import ... from "tensorbridge"` resolves), and run
// by its own `node` process (a fresh Pyodide, freed when it exits) in that folder. The module's
// line numbers are the README's, so a stack trace names the README line. A block passes when its
// process exits 0: a throw or an unhandled rejection fails it.
//
// The convention the three README tests share (tests/readme/test_readme_blocks.py states it in
// full and checks the markup of all three READMEs): a fence's language says how the block is
// tested (python, r, js/javascript run; text is output and must be marked <!-- output -->; sh is
// not run and must be marked <!-- not-run: why -->; any other language fails), and an HTML
// comment directly above a fence may say <!-- given: NAME, ... --> for names the block uses but
// an earlier block or the page defines. GIVEN below is what each name is; it is put before the
// block's first line; an unknown name fails.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
const ROOT = path.dirname(path.resolve(PACKAGE));
const FILES = ["js-client/README.md", "README.md"];

/** <!-- given: --> names for ```js blocks and the code that defines them. */
const GIVEN = {
  // the README's import (js-client/README.md's first block, README.md's last JS block)
  loadTensorBridge: 'import { loadTensorBridge } from "tensorbridge";',
  // the client the README's first block makes, made the same way
  tb: 'import { loadTensorBridge as __load } from "tensorbridge"; ' +
    "const tb = await __load();",
  // a page's progress display (README.md's eight schools: onProgress: (p) => render(p))
  render: "const render = (p) => { globalThis.lastProgress = p; };",
};

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)\s*$/;
const MARKER = /^<!--\s*(output|not-run|given)\s*(?::\s*(.*?))?\s*-->\s*$/;

/** Fenced blocks of a markdown file: {file, line (of the opening fence), lang, code, markers}. */
function parseBlocks(root, rel) {
  const lines = fs.readFileSync(path.join(root, rel), "utf8").split(/\r?\n/);
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i]);
    if (!m) continue;
    const [, fence, lang] = m;
    const start = i, markers = {};
    for (let k = i - 1; k >= 0; k--) {
      const mk = MARKER.exec(lines[k].trim());
      if (!mk) break;
      markers[mk[1]] = mk[2] ?? "";
    }
    const close = new RegExp(`^\\s*[${fence[0]}]{${fence.length},}\\s*$`);
    const body = [];
    for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`${rel}:${start + 1}: code fence never closed`);
    blocks.push({ file: rel, line: start + 1, lang: lang.toLowerCase(), code: body.join("\n"),
      markers });
  }
  return blocks;
}

function givenNames(block) {
  return (block.markers.given ?? "").split(/[\s,]+/).filter(Boolean);
}

/** What is wrong with a block's markup ([]: it is classified). */
function problems(block) {
  const where = `${block.file}:${block.line}`, keys = Object.keys(block.markers).sort();
  switch (block.lang) {
    case "python": case "r": case "js": case "javascript": {
      const out = [];
      if (keys.includes("output") || keys.includes("not-run")) {
        out.push(`${where}: a \`\`\`${block.lang} block must run (no output / not-run marker)`);
      }
      const unknown = givenNames(block).filter((n) => !Object.hasOwn(GIVEN, n));
      if ((block.lang === "js" || block.lang === "javascript") && unknown.length) {
        out.push(`${where}: <!-- given: --> names ${unknown.join(", ")}, not in GIVEN`);
      }
      return out;
    }
    case "text":
      return keys.join() === "output" ? [] : [`${where}: a \`\`\`text block must be marked ` +
        "<!-- output --> (and nothing else)"];
    case "sh":
      return keys.join() === "not-run" && block.markers["not-run"] ? [] : [`${where}: a ` +
        "```sh block must be marked <!-- not-run: why --> (and nothing else)"];
    default:
      return [`${where}: unknown fence language '${block.lang}': use python, r, js, text ` +
        "(output) or sh (not run)"];
  }
}

/** The module a block runs as: the givens, then the block on the README's own line numbers. */
function moduleSource(block) {
  const preamble = givenNames(block).map((n) => GIVEN[n]).join(" ");
  // line 1: the preamble; the block's first line is line block.line + 1, as in the README
  const pad = "\n".repeat(Math.max(block.line, 1));
  return preamble + pad + block.code + "\n";
}

/** Run a module source as its own process in a fresh folder that has tensorbridge installed. */
async function runModule(source, name, { timeoutMs = 20 * 60_000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-readme-"));
  try {
    fs.mkdirSync(path.join(dir, "node_modules"));
    fs.symlinkSync(path.resolve(PACKAGE), path.join(dir, "node_modules", "tensorbridge"), "dir");
    fs.writeFileSync(path.join(dir, "package.json"), '{ "type": "module", "private": true }\n');
    const file = path.join(dir, name);
    fs.writeFileSync(file, source);
    const child = spawn(process.execPath, ["--expose-gc", file], { cwd: dir,
      stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { out += d; });
    const [code, signal] = await new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (c, s) => resolve([c, s]));
    });
    return { code, signal, out };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const blocks = FILES.flatMap((rel) => parseBlocks(ROOT, rel));
const jsBlocks = blocks.filter((b) => b.lang === "js" || b.lang === "javascript");

test("every block of js-client/README.md and README.md is classified", () => {
  assert.deepEqual(blocks.flatMap(problems), []);
  for (const rel of FILES) {
    assert.ok(jsBlocks.some((b) => b.file === rel), `${rel} has no js block`);
  }
});

test("the parser finds fences and markers; unknown languages and names fail", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-md-"));
  fs.writeFileSync(path.join(dir, "x.md"), ["# t", "<!-- output -->", "```text", "out", "```",
    "<!-- given: tb, nope -->", "```js", "f(y)", "```", "```rust", "fn main() {}", "```",
    "```sh", "make", "```", "```js", "const a = 1;", "", "throw new Error(`boom ${a}`);", "```",
    ""].join("\n"));
  const b = parseBlocks(dir, "x.md");
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(b.map((x) => [x.line, x.lang]), [[3, "text"], [7, "js"], [10, "rust"],
    [13, "sh"], [16, "js"]]);
  assert.deepEqual(givenNames(b[1]), ["tb", "nope"]);
  assert.deepEqual(b.map((x) => problems(x).length), [0, 1, 1, 1, 0]);
  // a failing block fails, and its stack names the README line
  const r = await runModule(moduleSource(b[4]), "x.mjs");
  assert.notEqual(r.code, 0);
  assert.match(r.out, /x\.mjs:19\b[\s\S]*boom 1|boom 1[\s\S]*x\.mjs:19\b/);
});

for (const block of jsBlocks) {
  test(`${block.file}:${block.line} runs as written`, async (t) => {
    const name = `${block.file.replace(/[^\w.]+/g, "_")}_${block.line}.mjs`;
    const t0 = performance.now();
    const r = await runModule(moduleSource(block), name);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    assert.ok(r.code === 0, `${block.file}:${block.line} exited with ${r.code ?? r.signal} ` +
      `after ${secs} s (line numbers in ${name} are the README's):\n${r.out.slice(-6000)}`);
    t.diagnostic(`${block.file}:${block.line}: ${secs} s`);
  });
}
