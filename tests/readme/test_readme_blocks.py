"""The READMEs are tests: every fenced code block of README.md, r-client/README.md and
js-client/README.md is code that runs, or is marked as not code.

The convention (the same in the three tests that read the READMEs: this file for ```python
blocks, r-client/tests/testthat/test-readme-blocks.R for ```r blocks and
js-client/test/node/readme.test.mjs for ```js blocks):

* A fence's language says how the block is tested: ``python``, ``r``, ``js`` (or
  ``javascript``) blocks run, each in a fresh namespace (Python: a new module dict; R: a new
  environment with the package attached; JS: a new ES module), in a temporary working directory.
  Any other language, or none, fails the tests.
* Markers are HTML comments (invisible on GitHub) on the line(s) directly above the fence:

  - ``<!-- output -->``: the block shows what a command prints. Required on ```text blocks
    (the only language for output), allowed nowhere else.
  - ``<!-- not-run: WHY -->``: the block is not run, for the reason given. Allowed only on
    ```sh blocks and required on them: the README's shell blocks install the machine (apt, venvs,
    npm) or run every suite (``make demo``, ``make test``, ``npm ci``...), which a test must not
    do from inside a suite.
  - ``<!-- given: NAME, NAME -->``: names the block uses but does not define, because an earlier
    block or the page defines them (``tb`` after the README imported it, a page's ``render``).
    Each test has a table of what each name is (Python: ``GIVEN`` below) and fails on a name not
    in it; the definitions run before the block, in its namespace.

  A python/r/js block cannot be skipped: a block that does not run as written is a README bug.
* ```r blocks may appear only in README.md and r-client/README.md, ```js blocks only in
  README.md and js-client/README.md (the files the R and JS tests read); this file checks the
  markup of all three READMEs.

Slow blocks run as written: the eight schools examples sample 4 x (1000 + 1000) NUTS
iterations, a few seconds each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = ("README.md", "r-client/README.md", "js-client/README.md")

RUN = {"python": "python", "r": "r", "js": "js", "javascript": "js"}
# which READMEs the R and JS tests read: blocks of their language elsewhere would run nowhere
RUN_IN = {"python": set(READMES), "r": {"README.md", "r-client/README.md"},
          "js": {"README.md", "js-client/README.md"}}

# <!-- given: ... --> names for ```python blocks and what the test defines them as
GIVEN = {
    "tb": "import tensorbridge as tb",   # the README's first Python block imports it so
}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)\s*$")
MARKER = re.compile(r"^<!--\s*(output|not-run|given)\s*(?::\s*(.*?))?\s*-->\s*$")


@dataclass
class Block:
    file: str
    line: int          # the opening fence, 1-based
    lang: str
    code: str
    markers: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def given(self) -> list[str]:
        text = self.markers.get("given", "")
        return [n for n in re.split(r"[\s,]+", text) if n]


def parse(rel: str, root: Path = ROOT) -> list[Block]:
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        start = i
        markers, k = {}, i - 1
        while k >= 0 and (mk := MARKER.match(lines[k].strip())):
            markers[mk.group(1)] = mk.group(2) or ""
            k -= 1
        i += 1
        body = []
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and not lines[i].strip().strip(fence[0])):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"{rel}:{start + 1}: code fence never closed")
        blocks.append(Block(rel, start + 1, lang, "\n".join(body) + "\n", markers))
        i += 1
    return blocks


def problems(block: Block) -> list[str]:
    """What is wrong with a block's markup (empty: it is classified)."""
    where, m, lang = block.id, block.markers, block.lang
    if lang in RUN:
        out = []
        if "output" in m or "not-run" in m:
            out.append(f"{where}: a ```{lang} block must run (no output / not-run marker)")
        if block.file not in RUN_IN[RUN[lang]]:
            out.append(f"{where}: no test runs ```{lang} blocks of {block.file}")
        if "given" in m and not block.given:
            out.append(f"{where}: <!-- given: --> names nothing")
        return out
    if lang == "text":
        return [] if set(m) == {"output"} else [
            f"{where}: a ```text block must be marked <!-- output --> (and nothing else)"]
    if lang == "sh":
        return [] if set(m) == {"not-run"} and m["not-run"] else [
            f"{where}: a ```sh block must be marked <!-- not-run: why --> (and nothing else)"]
    return [f"{where}: unknown fence language {lang!r}: use python, r, js, text (output) "
            "or sh (not run)"]


BLOCKS = [b for rel in READMES for b in parse(rel)]
PYTHON_BLOCKS = [b for b in BLOCKS if b.lang == "python"]


def test_every_block_of_the_three_readmes_is_classified():
    assert [p for b in BLOCKS for p in problems(b)] == []


def test_the_readmes_have_blocks_of_each_language():
    langs = {RUN.get(b.lang, b.lang) for b in BLOCKS}
    assert {"python", "r", "js"} <= langs


def test_the_parser_finds_markers_and_rejects_unknown_languages(tmp_path):
    (tmp_path / "README.md").write_text(
        "# t\n<!-- output -->\n```text\nout\n```\n<!-- given: tb, y -->\n```python\n"
        "tb.f(y)\n```\n```rust\nfn main() {}\n```\n```sh\nmake\n```\n")
    blocks = parse("README.md", root=tmp_path)
    assert [(b.line, b.lang, b.code) for b in blocks] == [
        (3, "text", "out\n"), (7, "python", "tb.f(y)\n"), (10, "rust", "fn main() {}\n"),
        (13, "sh", "make\n")]
    assert blocks[0].markers == {"output": ""} and blocks[1].given == ["tb", "y"]
    assert [bool(problems(b)) for b in blocks] == [False, False, True, True]


def run_python_block(block: Block, root: Path = ROOT) -> dict:
    """Run a block in a fresh namespace (its givens first); returns the namespace."""
    unknown = [n for n in block.given if n not in GIVEN]
    assert not unknown, f"{block.id}: <!-- given: --> names {unknown}, not in GIVEN"
    namespace = {"__name__": "__readme__"}
    for name in block.given:
        exec(GIVEN[name], namespace)
    # padded so that tracebacks name the README's own lines
    source = "\n" * block.line + block.code
    exec(compile(source, str(root / block.file), "exec"), namespace)
    return namespace


def test_a_failing_block_fails_naming_its_readme_line(tmp_path):
    (tmp_path / "README.md").write_text(
        "# t\n<!-- given: tb -->\n```python\nx = tb.tensor([1.0])\n\nraise ValueError(x.shape)\n"
        "```\n<!-- given: nope -->\n```python\npass\n```\n")
    fails, unknown = parse("README.md", root=tmp_path)
    with pytest.raises(ValueError) as info:
        run_python_block(fails, root=tmp_path)
    assert info.traceback[-1].lineno + 1 == 6    # pytest's line numbers are 0-based
    assert str(info.traceback[-1].path) == str(tmp_path / "README.md")
    with pytest.raises(AssertionError, match="names \\['nope'\\], not in GIVEN"):
        run_python_block(unknown, root=tmp_path)


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.id)
def test_python_block_runs_as_written(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # model.save("mlp.zip") and the like write here
    run_python_block(block)
