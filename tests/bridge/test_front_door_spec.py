"""Drift between the runtime's front-door spec (``runtime/spec.py``) and the R and JS doors.

Read from the sources, so it runs without R or Node: the R package's ``NAMESPACE`` and function
signatures (``r-client/R/*.R``), the JS client's catalogue (``js-client/src/*.js``) and its
TypeScript declarations (``js-client/index.d.ts``). A distribution, sampler or fit option or
layer of the runtime without its R and JS counterpart fails here, and so does an argument name
that breaks the naming rule (snake_case in Python and R, camelCase in JS), and a wire tag that
is not in the bridge's one table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tensorbridge.bridge.descriptors import WIRE_TAGS
from tensorbridge.runtime import layers as L
from tensorbridge.runtime import spec

ROOT = Path(__file__).resolve().parents[2]
R_DIR = ROOT / "r-client"
JS_DIR = ROOT / "js-client"


# -- reading the doors -------------------------------------------------------------------------
def _split_top(text: str) -> list[str]:
    """``a, b = c(1, 2), d`` -> ["a", "b = c(1, 2)", "d"] (commas inside brackets kept)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _r_functions() -> dict[str, list[str]]:
    """R function name -> its formal argument names, from every ``name <- function(...)``."""
    out: dict[str, list[str]] = {}
    for path in sorted((R_DIR / "R").glob("*.R")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^`?([\w.<-]+)`?\s*<-\s*function\(", text, re.M):
            i, depth = m.end(), 1
            while depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            args = _split_top(text[m.end():i - 1])
            out[m.group(1)] = [a.split("=")[0].strip() for a in args]
    return out


def _r_exports() -> set[str]:
    text = (R_DIR / "NAMESPACE").read_text(encoding="utf-8")
    return set(re.findall(r"^export\(([^)]+)\)", text, re.M))


def _ts_interface(name: str) -> set[str]:
    """The member names of ``export interface <name> { ... }`` in index.d.ts."""
    text = (JS_DIR / "index.d.ts").read_text(encoding="utf-8")
    m = re.search(r"export interface " + name + r"\b[^{]*\{", text)
    assert m, f"index.d.ts declares no interface {name}"
    i, depth = m.end(), 1
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    body = re.sub(r"/\*.*?\*/|//[^\n]*", "", text[m.end():i - 1], flags=re.S)
    # members at the top level of the body: `name?:`, `name:` or `name(`
    flat, depth = "", 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        flat += ch if depth == 0 else ""
    return set(re.findall(r"(?:^|[;\s,])(\w+)\??\s*[:(]", flat))


def _js_const(path: str, name: str) -> str:
    text = (JS_DIR / path).read_text(encoding="utf-8")
    m = re.search(r"const " + name + r" = ([\[{].*?[\]}]);", text, re.S)
    assert m, f"{path} has no const {name}"
    return m.group(1)


R_FUNCTIONS = _r_functions()
R_EXPORTS = _r_exports()


def _r_formals(fn: str) -> list[str]:
    assert fn in R_EXPORTS, f"the R package does not export {fn}()"
    return R_FUNCTIONS[fn]


# -- distributions -----------------------------------------------------------------------------
@pytest.mark.parametrize("d", spec.DISTRIBUTIONS, ids=lambda d: d.name)
def test_distribution_in_r_with_the_spec_arguments(d: spec.DistributionSpec) -> None:
    name = spec.door_name(d.name, "r")
    formals = _r_formals(name)
    want = [spec.door_name(a.name, "r") for a in d.args]
    assert set(want) <= set(formals), f"R {name}(): arguments {formals}, the spec's {want}"
    required = [spec.door_name(a.name, "r") for a in d.params if a.required]
    assert formals[:len(required)] == required, \
        f"R {name}(): the parameters come first, in the runtime's order {required}"
    for a in want:
        assert spec.SNAKE.match(a), f"R {name}(): {a} is not snake_case"


@pytest.mark.parametrize("d", spec.DISTRIBUTIONS, ids=lambda d: d.name)
def test_distribution_in_js_and_declared(d: spec.DistributionSpec) -> None:
    name = spec.door_name(d.name, "js")
    assert spec.CAMEL.match(name)
    assert f'"{name}"' in _js_const("src/ppl.js", "DISTRIBUTIONS"), \
        f"js-client/src/ppl.js: {name} is not in DISTRIBUTIONS"
    assert name in _ts_interface("Ppl"), f"index.d.ts: Ppl declares no {name}"
    options = _ts_interface("DistributionOptions")
    for a in d.options:
        assert spec.door_name(a.name, "js") in options, \
            f"index.d.ts: DistributionOptions lacks {spec.door_name(a.name, 'js')} ({d.name})"


def test_the_js_catalogue_has_nothing_the_runtime_lacks() -> None:
    js = set(re.findall(r'"(\w+)"', _js_const("src/ppl.js", "DISTRIBUTIONS")))
    assert js == {spec.door_name(d.name, "js") for d in spec.DISTRIBUTIONS}


# -- options -----------------------------------------------------------------------------------
R_OPTION_FUNCTIONS = {"nuts": "nuts", "hmc": "hmc", "mcmc": "mcmc", "opt": "opt",
                      "fit": "fit.tb_model"}
# where the JS door declares each function's options (index.d.ts interfaces)
JS_OPTION_INTERFACES = {"nuts": "McmcSamplerOptions", "hmc": "McmcSamplerOptions",
                        "mcmc": "McmcOptions", "opt": "OptOptions", "fit": "ModelFitArgs"}
JS_POSITIONAL = {"fit": {"x", "y"}}  # fit(x, y, options)


@pytest.mark.parametrize("fn", list(spec.OPTIONS))
def test_options_in_r(fn: str) -> None:
    internal = spec.INTERNAL["r"].get(fn, frozenset())
    formals = R_FUNCTIONS[R_OPTION_FUNCTIONS[fn]]
    assert fn in R_EXPORTS
    for o in spec.OPTIONS[fn]:
        if o in internal:
            continue
        name = spec.door_name(o, "r")
        assert spec.SNAKE.match(name)
        assert name in formals, f"R {fn}(): no argument {name} (runtime: {o})"


@pytest.mark.parametrize("fn", list(spec.OPTIONS))
def test_options_in_js(fn: str) -> None:
    internal = spec.INTERNAL["js"].get(fn, frozenset()) | JS_POSITIONAL.get(fn, set())
    declared = _ts_interface(JS_OPTION_INTERFACES[fn])
    for o in spec.OPTIONS[fn]:
        if o in internal:
            continue
        name = spec.door_name(o, "js")
        assert spec.CAMEL.match(name)
        assert name in declared, \
            f"index.d.ts {JS_OPTION_INTERFACES[fn]}: no {name} (runtime {fn}: {o})"


def test_internal_options_exist() -> None:
    for door, table in spec.INTERNAL.items():
        for fn, names in table.items():
            assert names <= set(spec.OPTIONS[fn]), f"{door} {fn}: {names - set(spec.OPTIONS[fn])}"


# -- layers ------------------------------------------------------------------------------------
def _runtime_layers() -> list[str]:
    skip = {"Layer", "Model", "Sequential", "InputLayer"}  # models, the base, Input's layer
    return [n for n in L.__all__ if n not in skip and isinstance(getattr(L, n), type)
            and issubclass(getattr(L, n), L.Layer)]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.mark.parametrize("cls", _runtime_layers())
def test_layer_in_r_and_js(cls: str) -> None:
    assert f"layer_{_snake(cls)}" in R_EXPORTS, f"R: no layer_{_snake(cls)}() for {cls}"
    js = dict(re.findall(r'(\w+): "(\w+)"', _js_const("src/layers.js", "LAYER_CLASSES")))
    assert cls in js.values(), f"js-client/src/layers.js LAYER_CLASSES: no {cls}"
    fn = next(k for k, v in js.items() if v == cls)
    assert spec.CAMEL.match(fn) and fn == spec.door_name(_snake(cls), "js")


# -- naming rule -------------------------------------------------------------------------------
def test_naming_rule() -> None:
    assert spec.door_name("n_realisations", "js") == "nRealisations"
    assert spec.door_name("lambda_", "r") == "lambda" == spec.door_name("lambda_", "js")
    assert spec.door_name("callback_every", "r") == "pb_update"
    assert spec.door_name("max_depth", "python") == "max_depth"


# -- wire tags ---------------------------------------------------------------------------------
def test_hosts_use_only_the_bridge_wire_tags() -> None:
    tags = set(WIRE_TAGS.values())
    wire_r = (R_DIR / "R" / "wire.R").read_text(encoding="utf-8")
    used_r = set(re.findall(r'\btag\("(\w+)"', wire_r))
    decode = wire_r[wire_r.index("tb_decode <- function"):]
    used_r |= set(re.findall(r"^    (\w+) = ", decode, re.M))
    wire_js = (JS_DIR / "src" / "wire.js").read_text(encoding="utf-8")
    used_js = set(re.findall(r'\$: "(\w+)"', wire_js))
    dec = wire_js[wire_js.index("  dec(w, side) {"):wire_js.index("  decArray(w, side) {")]
    used_js |= set(re.findall(r'case "(\w+)"', dec))
    host_r = (ROOT / "bridge" / "r" / "rhost.py").read_text(encoding="utf-8")
    used_py = set(re.findall(r'return \("(\w+)"', host_r))
    used_py |= set(re.findall(r'tag == "(\w+)"', host_r))
    host_js = (ROOT / "bridge" / "js" / "host.py").read_text(encoding="utf-8")
    used_py |= set(re.findall(r'"\$": "(\w+)"', host_js))
    assert used_r and used_js and used_py
    assert used_r <= tags, f"r-client/R/wire.R: {used_r - tags} not in WIRE_TAGS"
    assert used_js <= tags, f"js-client/src/wire.js: {used_js - tags} not in WIRE_TAGS"
    assert used_py <= tags, f"bridge hosts: {used_py - tags} not in WIRE_TAGS"


def test_errors_name_the_argument_as_each_door_spells_it() -> None:
    args = ([0.0, 0.0],), {"Sigma": [[1.0, 0.0], [0.0, 1.0]], "n_realisations": 0}
    with pytest.raises(ValueError, match="multivariateNormal: nRealisations must be"):
        spec.check_distribution_args("multivariate_normal", *args, "js")
    with pytest.raises(ValueError, match="multivariate_normal: n_realisations must be"):
        spec.check_distribution_args("multivariate_normal", *args, "r")
    with pytest.raises(TypeError, match="poisson: lambda must be a number"):
        spec.check_distribution_args("poisson", ("x",), {}, "r")
