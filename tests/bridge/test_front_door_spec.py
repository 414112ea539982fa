"""Drift between the runtime's front-door spec (``runtime/spec.py``) and the R and JS doors:
only what cannot be asked of a door at run time.

The doors are asked themselves, by their own test suites, with the spec from the runtime
(``spec.as_dict()``): ``r-client/tests/testthat/test-front-door-spec.R`` compares it with the
installed R package (its exports and each function's formals) and
``js-client/test/node/front_door_spec.test.mjs`` with the loaded JS client (``tb.ppl``,
``tb.layers`` and its option codec) in Pyodide. What stays here has no run-time form: the
TypeScript declarations (``js-client/index.d.ts``: every distribution, variable type and option
declared, camelCase), the wire tags the hosts write (one table, ``bridge/descriptors.py``), the
naming rule, the spec's export being JSON, and the errors naming arguments as each door spells
them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tensorbridge.bridge.descriptors import WIRE_TAGS
from tensorbridge.runtime import spec
from tensorbridge.runtime.ppl import distributions as ppl_distributions
from tensorbridge.runtime.ppl import optimisers as ppl_optimisers

ROOT = Path(__file__).resolve().parents[2]
R_DIR = ROOT / "r-client"
JS_DIR = ROOT / "js-client"


# -- the TypeScript declarations -----------------------------------------------------------
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


@pytest.mark.parametrize("d", spec.DISTRIBUTIONS, ids=lambda d: d.name)
def test_distribution_declared_in_typescript(d: spec.DistributionSpec) -> None:
    name = spec.door_name(d.name, "js")
    assert spec.CAMEL.match(name)
    assert name in _ts_interface("Ppl"), f"index.d.ts: Ppl declares no {name}"
    options = _ts_interface("DistributionOptions")
    for a in d.options:
        assert spec.door_name(a.name, "js") in options, \
            f"index.d.ts: DistributionOptions lacks {spec.door_name(a.name, 'js')} ({d.name})"


@pytest.mark.parametrize("name", ["joint", "mixture", "icauchit", "icloglog", "imultilogit",
                                  "iprobit"])
def test_combinators_and_links_declared_in_typescript(name: str) -> None:
    """greta's mixture()/joint() (distributions as arguments: outside the catalogue) and its
    inverse links (ppl/distributions COMBINATORS and LINKS)."""
    assert name in ppl_distributions.COMBINATORS + ppl_distributions.LINKS
    assert spec.door_name(name, "js") in _ts_interface("Ppl"), f"index.d.ts: Ppl lacks {name}"


@pytest.mark.parametrize("v", spec.VARIABLES, ids=lambda v: v.name)
def test_variable_types_declared_in_typescript(v: spec.FunctionSpec) -> None:
    name = spec.door_name(v.name, "js")
    assert spec.CAMEL.match(name)
    assert name in _ts_interface("Ppl"), f"index.d.ts: Ppl declares no {name}"
    text = (JS_DIR / "index.d.ts").read_text(encoding="utf-8")
    m = re.search(r"\n  " + name + r"\((.*?)\): Promise", text, re.S)
    assert m, f"index.d.ts: Ppl.{name}(...) not found"
    internal = spec.INTERNAL["js"].get(v.name, frozenset())
    for a in v.args:
        if a.name in internal or a.name == "value":  # asData(value, ...) is positional
            continue
        js = v.arg_name(a.name, "js")
        assert re.search(r"\b" + js + r"\??:", m.group(1)), \
            f"index.d.ts: Ppl.{name} declares no {js}"


# -- options -----------------------------------------------------------------------------------
# where the JS door declares each function's options (index.d.ts interfaces)
JS_OPTION_INTERFACES = {"nuts": "McmcSamplerOptions", "hmc": "McmcSamplerOptions",
                        "rwmh": "McmcSamplerOptions", "slice": "McmcSamplerOptions",
                        "extra_samples": "ExtraSamplesOptions",
                        "mcmc": "McmcOptions", "opt": "OptOptions", "fit": "ModelFitArgs",
                        "simulate": "SimulateOptions", "ode_solve": "OdeSolveOptions",
                        # greta's optimiser objects (runtime/ppl/optimisers.py)
                        **dict.fromkeys(ppl_optimisers.OPTIMISERS, "OptimiserOptions")}
JS_POSITIONAL = {"fit": {"x", "y"}, "calculate": {"values"}}  # fit(x, y, options)


@pytest.mark.parametrize("fn", list(spec.OPTIONS))
def test_options_declared_in_typescript(fn: str) -> None:
    internal = spec.INTERNAL["js"].get(fn, frozenset()) | JS_POSITIONAL.get(fn, set())
    if spec.OPTIONS[fn] and internal >= set(spec.OPTIONS[fn]):  # not in JS, or positional only
        assert fn in spec.NOT_IN_DOOR["js"] or fn in JS_POSITIONAL
        return
    declared = _ts_interface(JS_OPTION_INTERFACES[fn])
    for o in spec.OPTIONS[fn]:
        if o in internal:
            continue
        name = spec.door_name(o, "js")
        assert spec.CAMEL.match(name)
        assert name in declared, \
            f"index.d.ts {JS_OPTION_INTERFACES[fn]}: no {name} (runtime {fn}: {o})"


def test_internal_options_exist() -> None:
    args = {**{fn: set(o) for fn, o in spec.OPTIONS.items()},
            **{v.name: {a.name for a in v.args} for v in spec.VARIABLES}}
    for door, table in spec.INTERNAL.items():
        for fn, names in table.items():
            assert names <= args[fn], f"{door} {fn}: {names - args[fn]}"


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


def test_variable_checks_name_the_argument_as_each_door_spells_it() -> None:
    with pytest.raises(TypeError, match="as_data: x must be a number"):
        spec.check_call("as_data", {"value": "a"}, "r")
    with pytest.raises(TypeError, match="asData: value must be a number"):
        spec.check_call("as_data", {"value": "a"}, "js")
    with pytest.raises(ValueError, match="choleskyVariable: dim must be"):
        spec.check_call("cholesky_variable", {"dim": "a"}, "js")
    with pytest.raises(ValueError, match="variable: lower must be less than upper, got lower "
                                         "= 2, upper = 1"):
        spec.check_call("variable", {"lower": [0.0, 2.0], "upper": 1.0}, "r")
    with pytest.raises(TypeError, match="variable: unknown argument lowr"):
        spec.check_call("variable", {"lowr": 0.0}, "r")


def test_the_spec_is_json_with_every_door_name() -> None:
    d = json.loads(json.dumps(spec.as_dict()))
    assert [x["name"] for x in d["distributions"]] == [s.name for s in spec.DISTRIBUTIONS]
    assert [x["name"] for x in d["variables"]] == [s.name for s in spec.VARIABLES]
    as_data = next(x for x in d["variables"] if x["name"] == "as_data")
    assert as_data["args"][0]["names"] == {"python": "value", "r": "x", "js": "value"}
    mvn = next(x for x in d["distributions"] if x["name"] == "multivariate_normal")
    n_real = next(a for a in mvn["options"] if a["name"] == "n_realisations")
    assert n_real["names"] == {"python": "n_realisations", "r": "n_realisations",
                               "js": "nRealisations"}
    assert {o["names"]["r"] for o in d["options"]["mcmc"]} >= {"pb_update", "verbose"}
    assert {"name": "Dense", "names": {"python": "Dense", "r": "layer_dense", "js": "dense"}} \
        in d["layers"]
