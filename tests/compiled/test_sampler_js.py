"""``runtime/compiled/sampler.js`` (the browser door's sampler, a port of ``sampler.c``) under
node against the samplers it ports: the Python sampler (``ppl/nuts.py``, ``hmc.py``,
``chains.run_chains``) and, where a C compiler is, ``sampler.c`` itself.

What can be equal and what cannot. The Philox words and the uniforms are integer arithmetic and
exact operations: bit for bit. The normals are Box-Muller with ``Math.log/cos/sin``, V8's fdlibm
ports, which round differently from glibc's in a few percent of calls: measured on 10^6 normals,
94% are bit-equal and the rest within 3 ulps. To test the sampler's own arithmetic exactly, the
chains here can read a *replay* stream: the JavaScript stream's uniforms (exact) with the normals
computed in Python (``chain_rng``, the numbers the Python and C samplers read). Given those, a
transition or a whole chain with a fixed step size (its metric adapted: Welford and the windows
are plain arithmetic) is the Python/C one bit for bit: draws, log densities, energies, tree
depths, leapfrog counts, divergences, inverse metrics. Only the accept statistic goes through
``Math.exp`` (and ``logaddexp``'s ``log1p``) without feeding back, so it is compared within a few
ulps. With the chain's own normals and a fixed step, the ulp differences in the momenta do not
grow (a Gaussian target's leapfrog map is linear and stable): a few 1e-12 over hundreds of
iterations; the tests allow 1e-9. With step-size adaptation, dual averaging feeds every
rounding difference back into the step (and ``Math.exp``/``pow``/``log`` differ by ulps
themselves), and near the leapfrog's stability limit that loop is chaotic: the chains part after
some tens of iterations, so adaptive runs are compared at the Monte Carlo level (the target's
moments, the adapted step and metric).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled.build import compiler_available
from tensorbridge.runtime.ppl.adaptation import find_reasonable_step
from tensorbridge.runtime.ppl.chain_rng import PURPOSE_STEP_SEARCH, chain_key, chain_rng
from tensorbridge.runtime.ppl.chains import _initial_free, hmc, nuts, run_chains
from tensorbridge.runtime.ppl.hamiltonian import PhasePoint
from tensorbridge.runtime.ppl.hmc import hmc_transition as py_hmc
from tensorbridge.runtime.ppl.nuts import nuts_transition as py_nuts
from tensorbridge.runtime.random import _philox_python, _uniform53, philox4x32
from tests.compiled.node_js import needs_node, run_node

pytestmark = needs_node

needs_c = pytest.mark.skipif(compiler_available() is not None,
                             reason=f"no C here: {compiler_available()}")

# The scripts' common part: the sampler, NumPy's pairwise sum, the test densities (the same
# operations as _Gaussian's in NumPy) and the replay stream.
_PRELUDE = r"""
const S = load("sampler.js", "makeSampler");
function sumNp(a, off, n) {  // np.add.reduce's pairwise summation, as in sampler.c
  if (n < 8) {
    let res = 0.0;
    for (let i = 0; i < n; i++) res += a[off + i];
    return res;
  }
  if (n <= 128) {
    const r = new Float64Array(8);
    for (let j = 0; j < 8; j++) r[j] = a[off + j];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[off + i + j];
    let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[off + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return sumNp(a, off, n2) + sumNp(a, off + n2, n - n2);
}
// a diagonal Gaussian that fails (status 1) where q[0] is outside wall or r2 inside shell
function density(p) {
  const mu = p.mu, prec = p.prec, n = mu.length, t = new Float64Array(n);
  const lo = p.wall[0], hi = p.wall[1], sLo = p.shell[0], sHi = p.shell[1];
  return function (q, lp, g) {
    if (q[0] < lo || q[0] > hi) return 1;
    for (let j = 0; j < n; j++) {
      const d = q[j] - mu[j];
      t[j] = d * d * prec[j];
      g[j] = -d * prec[j];
    }
    const r2 = 0.0 + sumNp(t, 0, n);
    if (sLo < r2 && r2 < sHi) return 1;
    lp[0] = -0.5 * r2;
    return 0;
  };
}
// the stream's uniforms, with the normals of table["iteration,purpose"] (in order from the
// restart); records how its own normals compare
class Replay {
  constructor(key0, key1, table) {
    this.r = new S.Rng(key0, key1);
    this.table = table;
    this.at = "";
    this.calls = 0;
    this.bitEqual = 0;
    this.count = 0;
  }
  restart(i, p) {
    this.r.restart(i, p);
    this.at = i + "," + p;
    this.calls = 0;
  }
  uniform() { return this.r.uniform(); }
  normals(m, out) {
    this.r.normals(m, out);  // its own, advancing the stream as they do
    const t = this.table[this.at];
    if (t === undefined || t.length < (this.calls + 1) * m)
      throw new Error("replay: no normals for " + this.at + " call " + this.calls);
    for (let j = 0; j < m; j++) {
      const v = t[this.calls * m + j];
      this.bitEqual += out[j] === v;
      this.count++;
      out[j] = v;
    }
    this.calls++;
  }
}
function runChain(cfg, q0, fn, rng, block) {
  const ch = new S.Chain(cfg, q0, fn, rng);
  const out = S.newOutput(cfg);
  let k;
  while ((k = ch.run(block, out)) > 0) if (k > block) throw new Error("ran too many");
  return {out, step: ch.step(), inv: ch.invMetric(), warmupDivergences: ch.warmupDivergences(),
          iteration: ch.iteration(), kept: ch.kept(),
          bitEqual: rng ? rng.bitEqual : -1, count: rng ? rng.count : -1};
}
"""

_INF = math.inf


class _Gaussian:
    """A diagonal Gaussian computed as the scripts' ``density``: a failure (outside ``wall`` on
    q[0], or r2 inside ``shell``) is None for the C sampler's Python density, NaN for the NumPy
    sampler's target."""

    def __init__(self, n: int, seed: int, wall=(-_INF, _INF), shell=(_INF, _INF)) -> None:
        r = np.random.default_rng(seed)
        self.n = n
        self.mu = r.normal(size=n)
        self.sd = np.exp(r.uniform(-1.5, 1.5, size=n))
        self.prec = 1.0 / (self.sd * self.sd)
        self.wall, self.shell = wall, shell

    def row(self, q):
        if not self.wall[0] <= q[0] <= self.wall[1]:
            return None
        d = q - self.mu
        r2 = 0.0 + np.add.reduce(d * d * self.prec)
        if self.shell[0] < r2 < self.shell[1]:
            return None
        return -0.5 * r2, -d * self.prec

    def target(self, q):
        out = [self.row(row) for row in q]
        nan = np.full(self.n, np.nan)
        return (np.array([np.nan if o is None else o[0] for o in out]),
                np.array([nan if o is None else o[1] for o in out]))

    def payload(self) -> dict:
        return {"mu": self.mu, "prec": self.prec, "wall": np.array(self.wall, dtype=float),
                "shell": np.array(self.shell, dtype=float)}


def _normal_tables(seed, chains, n, restarts) -> list[dict]:
    """Per chain: ``"i,p"`` -> the normals chain_rng draws for it after ``restart(i, p)``
    (``rounds`` draws of n)."""
    streams = chain_rng(seed, chains)
    tables: list[dict] = [{} for _ in range(chains)]
    for i, p, rounds in restarts:
        streams.restart(i, p)
        z = np.concatenate([streams.standard_normal((chains, n)) for _ in range(rounds)], axis=1)
        for c in range(chains):
            tables[c][f"{i},{p}"] = z[c]
    return tables


def _transition_restarts(total):
    return [(i, 0, 1) for i in range(total)]


def _cfg(kind, n, warmup, n_samples, key, *, thin=1, step=None, chains=1, n_leapfrog=8,
         max_depth=10, max_delta_h=1000.0) -> dict:
    return {"n": n, "kind": 0 if kind == "nuts" else 1, "maxDepth": max_depth,
            "nLeapfrog": n_leapfrog, "jitter": True, "adaptStep": step is None,
            "pairwiseAccept": chains == 1,  # how NumPy sums a batch of one (compiled_chains)
            "targetAccept": 0.8, "stepSize": step or 1.0, "maxDeltaH": max_delta_h,
            "warmup": warmup, "nSamples": n_samples, "thin": thin,
            "key0": key[0], "key1": key[1]}


def _sampler(kind, step):
    return nuts(step_size=step) if kind == "nuts" else hmc(n_leapfrog=8, step_size=step)


def _run_python(g: _Gaussian, kind, step, n_samples, warmup, chains, seed, thin=1):
    """``run_chains`` on the Gaussian, and the initial points and keys its chains had."""
    beta = tb.normal(0.0, 1.0, dim=g.n)
    m = tb.model(beta)
    m.compiled_target = lambda batch: g.target
    with np.errstate(all="ignore"):
        d = run_chains(m, n_samples, warmup, chains, _sampler(kind, step), None, seed, thin,
                       False, None, 50, None)
        rng = chain_rng(seed, chains)
        q0 = _initial_free(m, chains, None, rng, g.target)
    return d, q0, rng.keys


def _run_js(g: _Gaussian, cfgs, q0, tables=None, block=37) -> list[dict]:
    script = _PRELUDE + r"""
const fn = density(input.density);
output(input.chains.map((c) => runChain(
  c.cfg, c.q0, fn, c.table ? new Replay(c.cfg.key0, c.cfg.key1, c.table) : undefined,
  input.block)));
"""
    chains = [{"cfg": cfg, "q0": q0[c], "table": None if tables is None else tables[c]}
              for c, cfg in enumerate(cfgs)]
    return run_node(script, {"density": g.payload(), "chains": chains, "block": block})


def _assert_chain_equal(js: dict, draws, c: int, n: int, exact: bool = True,
                        rtol: float = 0.0) -> None:
    """JS chain ``js`` against chain ``c`` of run_chains's ``draws``: discrete statistics equal,
    the rest equal (``exact``) or within ``rtol`` of the target's scale."""
    out = js["out"]
    for key, name in (("tree_depth", "treeDepth"), ("n_leapfrog", "nLeapfrog"),
                      ("divergent", "divergent")):
        assert np.array_equal(np.asarray(out[name]), draws.stats[key][c].astype(float)), key
    pairs = [(out["draws"].reshape(-1, n), draws.free[c]), (out["lp"], draws.stats["lp"][c]),
             (out["energy"], draws.stats["energy"][c]),
             (js["inv"], draws.warmup["inv_metric"][c]),
             (np.array([js["step"]]), draws.warmup["step_size"][c:c + 1])]
    for a, b in pairs:
        if exact:
            assert np.array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    # exp and log1p of the leaves' log weights: within ulps, never fed back with a fixed step
    np.testing.assert_allclose(out["acceptStat"], draws.stats["accept_stat"][c],
                               rtol=2e-15 if exact else rtol, atol=0)


# ------------------------------------------------------------------------------ streams
_EDGE = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]


def test_philox_blocks_bit_equal_random_py() -> None:
    rng = np.random.default_rng(0)
    cases = [([0, 0, 0, 0], [0, 0])]  # Random123's known answer, checked below
    for _ in range(300):
        words = [int(v) for v in rng.integers(0, 2**32, size=6)]
        for k in range(6):  # words at the edges of uint32, products near 2^64
            if rng.random() < 0.4:
                words[k] = int(rng.choice(_EDGE))
        cases.append((words[:4], words[4:]))
    cases.append(([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2))
    out = run_node(_PRELUDE + """
output(input.map(([c, k]) => Array.from(S.philox4x32(c, k))));
""", cases)
    assert out[0] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    for (ctr, key), words in zip(cases, out):
        assert tuple(words) == philox4x32(tuple(ctr), tuple(key)), (ctr, key)


def test_uniform_streams_bit_equal_chain_rng() -> None:
    cases = []  # key, iteration, purpose, expected uniforms
    for seed in (0, 7, 2**40 + 3):
        ids = [0, 1, 5, 2**33 + 1]
        streams = chain_rng(seed, len(ids), ids)
        for iteration, purpose in ((0, 0), (1, 0), (999, 0), (3, PURPOSE_STEP_SEARCH),
                                   (2**32 - 1, 2)):
            streams.restart(iteration, purpose)
            u = streams.random((131, len(ids)))  # odd: a chunk boundary falls mid-block
            cases += [(list(streams.keys[c]), iteration, purpose, u[:, c]) for c in range(4)]
    for key in ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFE, 1), (0, 0x80000000)):
        for iteration, purpose in ((0xFFFFFFFF, 0xFFFFFFFF), (12, 1)):
            u = np.array(_uniform53(_philox_python(key, 0, 40, iteration, purpose)))
            cases.append((list(key), iteration, purpose, u))
    got = run_node(_PRELUDE + """
output(input.map(([k, it, p, u]) => {
  const r = new S.Rng(k[0], k[1]);
  r.restart(it, p);
  const out = new Float64Array(u.length);
  for (let i = 0; i < u.length; i++) out[i] = r.uniform();
  return out;
}));
""", cases)
    for (key, it, p, u), v in zip(cases, got):
        assert np.array_equal(v, u), (key, it, p)
    # the block counter's carry into counter word 1 (after 2^32 blocks: set by hand)
    key = chain_key(5, 0)
    carry = run_node(_PRELUDE + """
const r = new S.Rng(input[0], input[1]);
r.restart(7, 0);
r.blockLo = 0xFFFFFFFF;
output([r.uniform(), r.uniform(), r.uniform(), r.uniform()]);
""", list(key))
    assert carry == _uniform53(_philox_python(key, 2**32 - 1, 2, 7, 0))


def test_normals_within_ulps_of_chain_rng() -> None:
    """Box-Muller with V8's Math.log/cos/sin against glibc's (through Python's math): each
    function is within an ulp of the true value on both sides, so a normal r * cos(t), r =
    sqrt(-2 log(1 - u)), is within 1/2 + 1 + 1 ulps, plus one rounding: at most 4 ulps of it
    (measured: 3 at most, 94% bit-equal over 10^6 normals). The stream goes on at the same
    place (an odd count reads the pair's second uniform too)."""
    ids = list(range(12))
    streams = chain_rng(11, len(ids), ids)
    cases = []
    for it in range(0, 3000, 97):
        streams.restart(it, it % 2)
        z = streams.standard_normal((len(ids), 101))
        after = streams.uniform(size=len(ids))
        cases += [(list(streams.keys[c]), it, it % 2, z[c], after[c]) for c in range(len(ids))]
    got = run_node(_PRELUDE + """
output(input.map(([k, it, p]) => {
  const r = new S.Rng(k[0], k[1]);
  r.restart(it, p);
  const z = new Float64Array(101);
  r.normals(101, z);
  return {z, after: r.uniform()};
}));
""", [c[:3] for c in cases])
    z_js = np.concatenate([g["z"] for g in got])
    z_py = np.concatenate([c[3] for c in cases])
    ulps = np.abs(z_js - z_py) / np.spacing(np.abs(z_py))
    assert ulps.max() <= 4.0
    assert np.mean(z_js == z_py) > 0.85
    assert [g["after"] for g in got] == [c[4] for c in cases]


# -------------------------------------------------------------------------- transitions
_TRANSITION = _PRELUDE + r"""
const fn = density(input.density);
output(input.cases.map((c) => {
  const [k0, k1] = c.key;
  const rng = input.replay ? new Replay(k0, k1, c.table) : new S.Rng(k0, k1);
  rng.restart(c.iteration, 0);
  const r = input.kind === "nuts"
    ? S.nutsTransition(c.q.length, c.q, c.logp, c.grad, c.step, c.inv, fn, rng, input.maxDepth,
                       input.maxDeltaH, input.pairwise)
    : S.hmcTransition(c.q.length, c.q, c.logp, c.grad, c.step, c.inv, fn, rng, input.nLeapfrog,
                      true, input.maxDeltaH);
  return {q: r.q, logp: r.logp, grad: r.grad, acceptStat: r.acceptStat, nLeapfrog: r.nLeapfrog,
          treeDepth: r.treeDepth, divergent: r.divergent, energy: r.energy};
}));
"""


def _compare_transitions(kind, g: _Gaussian, b, iterations, eps, *, replay=True, max_depth=10,
                         max_delta_h=1000.0, seed=5, scale=1.0):
    """Python transitions of a batch of ``b`` chains against the JS transition of each chain;
    returns the JS results."""
    n = g.n
    cases, expected = [], []
    for it in iterations:
        q0 = g.mu + scale * g.sd * np.random.default_rng(1000 + it).normal(size=(b, n))
        if np.isfinite(g.wall[1]):
            q0[:, 0] = np.minimum(q0[:, 0], g.wall[1] - 0.01)
        inv = g.sd**2 * np.random.default_rng(2000 + it).uniform(0.5, 2.0, size=(b, n))
        lp, grad = g.target(q0)
        streams = chain_rng(seed, b)
        table = _normal_tables(seed, b, n, [(it, 0, 1)])
        streams.restart(it)
        with np.errstate(all="ignore"):
            if kind == "nuts":
                z, st = py_nuts(PhasePoint(q0, np.zeros_like(q0), lp, grad), eps, inv,
                                g.target, streams, max_depth=max_depth, max_delta_h=max_delta_h)
            else:
                z, st = py_hmc(PhasePoint(q0, np.zeros_like(q0), lp, grad), eps, inv, g.target,
                               streams, n_leapfrog=7, max_delta_h=max_delta_h)
        for c in range(b):
            cases.append({"key": list(streams.keys[c]), "iteration": it, "q": q0[c],
                          "logp": float(lp[c]), "grad": grad[c], "step": float(eps[c]),
                          "inv": inv[c], "table": table[c]})
            expected.append((z.q[c], z.logp[c], z.grad[c], st.accept_stat[c], st.n_leapfrog[c],
                             st.tree_depth[c], st.divergent[c], st.energy[c]))
    got = run_node(_TRANSITION, {"density": g.payload(), "cases": cases, "replay": replay,
                                 "kind": kind, "maxDepth": max_depth, "maxDeltaH": max_delta_h,
                                 "pairwise": b == 1, "nLeapfrog": 7})
    for r, (q, logp, grad, acc, n_lf, depth, div, energy) in zip(got, expected):
        assert (r["nLeapfrog"], r["treeDepth"], r["divergent"]) == (n_lf, depth, div)
        np.testing.assert_allclose(r["acceptStat"], acc, rtol=2e-15 if replay else 1e-12,
                                   atol=0)
        r["acceptExact"] = r["acceptStat"] == acc
        if replay:
            assert np.array_equal(r["q"], q)
            assert np.array_equal(r["grad"], grad, equal_nan=True)
            for a, e in ((r["logp"], logp), (r["energy"], energy)):  # NaN: a start in the shell
                assert np.array_equal(np.ravel(a), np.ravel(e), equal_nan=True)
        else:  # momenta within ulps: one trajectory carries them linearly
            np.testing.assert_allclose(r["q"], q, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(r["energy"], energy, rtol=1e-12)
    return got


@pytest.mark.parametrize("replay", [True, False], ids=["same-normals", "own-normals"])
@pytest.mark.parametrize("b", [1, 3])
def test_nuts_transitions_step_for_step(replay, b) -> None:
    # b = 1: NumPy sums the accept statistic pairwise (pairwiseAccept), else in order
    depths: set[int] = set()
    exact = []
    for n, max_depth in ((1, 10), (3, 4), (10, 10), (130, 6)):
        g = _Gaussian(n, n)
        eps = np.array([0.15, 0.4, 0.9])[:b]
        got = _compare_transitions("nuts", g, b, range(12), eps, replay=replay,
                                   max_depth=max_depth)
        depths |= {r["treeDepth"] for r in got}
        exact += [r["acceptExact"] for r in got]
    assert len(depths) >= 4 and 4 in depths  # shallow and deep trees, and the depth cap
    if replay:
        # the accept statistic within ulps (Math.exp), and mostly bit-equal: measured 100%
        # (b = 1) and 96%; summed in the wrong order (not pairwise), 77%
        assert np.mean(exact) >= 0.9


def test_nuts_transitions_with_divergences_and_failures() -> None:
    # energy errors past max_delta_h, and a density that fails beyond a wall (a divergence)
    big = _compare_transitions("nuts", _Gaussian(3, 1), 3, range(15),
                               np.array([1.5, 2.5, 3.5]), max_delta_h=2.0, scale=2.0)
    walled = _compare_transitions("nuts", _Gaussian(2, 4, wall=(-_INF, 0.3)), 3, range(15),
                                  np.array([0.3, 0.6, 1.2]), scale=0.5)
    for got in (big, walled):
        div = [r["divergent"] for r in got]
        assert any(div) and not all(div)


@pytest.mark.parametrize("replay", [True, False], ids=["same-normals", "own-normals"])
def test_hmc_transitions_step_for_step(replay) -> None:
    divergent = 0
    for g, eps in ((_Gaussian(4, 1), [0.1, 0.4, 0.9]), (_Gaussian(130, 2), [0.05, 0.2, 0.3]),
                   (_Gaussian(3, 3, shell=(1.0, 1.3)), [0.2, 0.5, 0.9]),
                   (_Gaussian(2, 4, wall=(-_INF, 0.3)), [0.3, 0.6, 1.2])):
        got = _compare_transitions("hmc", g, 3, range(12), np.array(eps), replay=replay,
                                   scale=0.7)
        divergent += sum(r["divergent"] for r in got)
    assert divergent >= 3  # the failing densities: the trajectory ends, rejected
    # energy errors past max_delta_h (steps near the leapfrog's stability limit)
    got = _compare_transitions("hmc", _Gaussian(3, 1), 3, range(15), np.array([1.2, 1.9, 2.2]),
                               replay=replay, max_delta_h=2.0)
    div = [r["divergent"] for r in got]
    assert any(div) and not all(div)


def test_step_search_equals_python_given_the_same_normals() -> None:
    """Stan's step-size heuristic at the start of a chain (adaptStep; run(0) does only that):
    Python's find_reasonable_step bit for bit, the clipping to [1e-10, 1e7] included."""
    cases, expected = [], []
    for n, seed, widen, step in ((1, 1, 1.0, 1.0), (3, 2, 1.0, 1e-12), (10, 3, 1.0, 1e9),
                                 (130, 4, 1.0, 0.01), (3, 5, 1e3, 1.0), (2, 6, 1e-4, 1.0)):
        g = _Gaussian(n, seed)
        g.sd *= widen
        g.prec = 1.0 / (g.sd * g.sd)
        key = chain_key(seed, 0)
        q0 = g.mu + g.sd * np.random.default_rng(seed).normal(size=n)
        lp, grad = g.target(q0[None])
        streams = chain_rng(seed, 1)
        streams.restart(0, PURPOSE_STEP_SEARCH)
        found = find_reasonable_step(PhasePoint(q0[None], np.zeros((1, n)), lp, grad),
                                     np.array([step]), np.ones((1, n)), g.target, streams)
        expected.append(float(found[0]))
        cases.append({"density": g.payload(), "q0": q0,
                      "cfg": _cfg("nuts", n, 10, 1, key, step=step) | {"adaptStep": True},
                      "table": _normal_tables(seed, 1, n, [(0, PURPOSE_STEP_SEARCH, 101)])[0]})
    got = run_node(_PRELUDE + """
output(input.map((c) => {
  const ch = new S.Chain(c.cfg, c.q0, density(c.density), new Replay(c.cfg.key0, c.cfg.key1,
                                                                      c.table));
  return [ch.run(0, S.newOutput(c.cfg)), ch.step()];
}));
""", cases)
    assert [g[0] for g in got] == [0] * len(cases)
    assert [g[1] for g in got] == expected
    assert expected[1] >= 1e-10 and expected[2] < 1e7 and expected[4] > 10  # clipped, wide


def test_chain_starting_where_the_density_fails_stays() -> None:
    """A start where the density fails: log density -inf and a NaN gradient (sampler.c's
    evaluate), so every trajectory fails at once: each iteration divergent, the chain stays."""
    g = _Gaussian(3, 4, wall=(-_INF, -10.0))
    cfg = _cfg("nuts", 3, 30, 20, chain_key(2, 0))
    got = run_node(_PRELUDE + """
const fn = density(input.density);
const seen = [];
const ch = new S.Chain(input.cfg, [0, 0, 0], (q, lp, g) => {
  seen.push(q[0]);
  return fn(q, lp, g);
});
const out = S.newOutput(input.cfg);
ch.run(1000, out);
output({out, seen: Float64Array.from(seen), wd: ch.warmupDivergences()});
""", {"density": g.payload(), "cfg": cfg})
    assert np.all(got["out"]["draws"] == 0.0) and np.all(got["out"]["lp"] == -np.inf)
    assert np.all(got["out"]["iterDivergent"] == 1) and got["wd"] == 30
    assert got["seen"][0] == 0.0 and np.all(np.isnan(got["seen"][1:]))  # q + e * NaN


# ---------------------------------------------------------------------------- whole runs
_RUNS = [("nuts", 1, 1, 1), ("nuts", 3, 2, 2), ("nuts", 10, 1, 3), ("nuts", 130, 2, 4),
         ("hmc", 1, 2, 5), ("hmc", 3, 1, 6), ("hmc", 10, 2, 7), ("hmc", 130, 1, 8)]


@pytest.mark.parametrize(("kind", "n", "chains", "seed"), _RUNS,
                         ids=[f"{k}-n{n}-chains{c}" for k, n, c, _ in _RUNS])
def test_whole_chain_equals_run_chains_given_the_same_normals(kind, n, chains, seed) -> None:
    """Warmup (metric windows: 150 iterations), thinning and sampling with a fixed step: the
    JS chain reading chain_rng's normals is run_chains's chain bit for bit."""
    g = _Gaussian(n, seed)
    step = {1: 0.9, 3: 0.5, 10: 0.35, 130: 0.2}[n]
    warmup, n_samples, thin = 150, 60, 1 + seed % 2
    d, q0, keys = _run_python(g, kind, step, n_samples, warmup, chains, seed, thin)
    total = warmup + n_samples * thin
    tables = _normal_tables(seed, chains, n, _transition_restarts(total))
    cfgs = [_cfg(kind, n, warmup, n_samples, keys[c], thin=thin, step=step, chains=chains)
            for c in range(chains)]
    js = _run_js(g, cfgs, q0, tables)
    for c in range(chains):
        _assert_chain_equal(js[c], d, c, n)
        assert js[c]["iteration"] == total and js[c]["kept"] == n_samples
        assert js[c]["count"] == total * n and js[c]["bitEqual"] > 0.85 * total * n
        assert js[c]["warmupDivergences"] == 0
    # the metric was adapted (so the windows ran), and the chains moved
    assert not np.array_equal(js[0]["inv"], np.ones(n))
    assert np.all(np.std(js[0]["out"]["draws"].reshape(-1, n), axis=0) > 0)


@pytest.mark.parametrize(("kind", "n", "chains", "seed"), _RUNS[1::2],
                         ids=[f"{k}-n{n}-chains{c}" for k, n, c, _ in _RUNS[1::2]])
def test_whole_chain_with_its_own_normals_tracks_run_chains(kind, n, chains, seed) -> None:
    """The same runs with the JS stream's own normals (as in the browser): ulp differences in
    the momenta, not amplified with a fixed step (measured: 1e-12 at most)."""
    g = _Gaussian(n, seed)
    step = {1: 0.9, 3: 0.5, 10: 0.35, 130: 0.2}[n]
    d, q0, keys = _run_python(g, kind, step, 100, 150, chains, seed)
    js = _run_js(g, [_cfg(kind, n, 150, 100, keys[c], step=step, chains=chains)
                     for c in range(chains)], q0)
    for c in range(chains):
        _assert_chain_equal(js[c], d, c, n, exact=False, rtol=1e-9)


def _assert_samples(x, g: _Gaussian, sd_rtol: float) -> None:
    """Draws ``x`` [k, n] of the Gaussian ``g``: means within 5 standard errors, for an
    effective sample size of k / 4 (generous: NUTS on a Gaussian does better, static HMC
    about that), standard deviations within ``sd_rtol``."""
    z = (x.mean(axis=0) - g.mu) / (g.sd / math.sqrt(len(x) / 4))
    assert np.all(np.abs(z) < 5), z
    np.testing.assert_allclose(x.std(axis=0), g.sd, rtol=sd_rtol)


@pytest.mark.parametrize("kind", ["nuts", "hmc"])
def test_adaptive_chains_sample_the_target(kind) -> None:
    """Step size and metric adapted: the JS and Python chains part after some tens of
    iterations (see the module docstring), so: both sample the Gaussian (moments within
    Monte Carlo error, generous for autocorrelation), adapt similar steps, and the adapted
    metrics are the target's variances roughly."""
    n, chains, seed, n_samples = 10, 2, 21, 1000
    g = _Gaussian(n, seed)
    d, q0, keys = _run_python(g, kind, None, n_samples, 500, chains, seed)
    js = _run_js(g, [_cfg(kind, n, 500, n_samples, keys[c], chains=chains)
                     for c in range(chains)], q0, block=100)
    for c in range(chains):
        x = js[c]["out"]["draws"].reshape(-1, n)
        for draws in (x, d.free[c]):
            _assert_samples(draws, g, sd_rtol=0.25)
        np.testing.assert_allclose(js[c]["step"], d.warmup["step_size"][c], rtol=0.3)
        np.testing.assert_allclose(js[c]["inv"], g.sd**2, rtol=0.6)
        assert not js[c]["out"]["divergent"].any()  # warmup's early big steps may diverge
        assert np.mean(js[c]["out"]["acceptStat"]) > 0.6


# --------------------------------------------------------------------- failing densities
@pytest.mark.parametrize("kind", ["nuts", "hmc"])
def test_failing_density_is_a_divergence_not_a_crash(kind) -> None:
    """A density that fails (status 1) past a wall in the target's bulk: divergences, draws
    on the allowed side only; with the same normals and a fixed step the chain is the Python
    chain's, whose target is NaN there (as the C tests check for sampler.c)."""
    g = _Gaussian(3, 9)
    g.wall = (-_INF, g.mu[0] + 0.5 * g.sd[0])
    for step in (None, 0.4):
        d, q0, keys = _run_python(g, kind, step, 150, 150, 2, 31)
        tables = (None if step is None else
                  _normal_tables(31, 2, 3, _transition_restarts(300)))
        js = _run_js(g, [_cfg(kind, 3, 150, 150, keys[c], step=step, chains=2)
                         for c in range(2)], q0, tables)
        for c in range(2):
            x = js[c]["out"]["draws"].reshape(-1, 3)
            assert np.all(np.isfinite(x)) and np.all(x[:, 0] <= g.wall[1])
            assert js[c]["warmupDivergences"] + js[c]["out"]["divergent"].sum() > 0
            assert np.all(np.isfinite(js[c]["out"]["lp"]))
            if step is not None:
                _assert_chain_equal(js[c], d, c, 3)


# --------------------------------------------------------------------------- against C
@needs_c
@pytest.mark.parametrize("kind", ["nuts", "hmc"])
def test_chain_equals_the_c_sampler(kind) -> None:
    """The JS chain against sampler.c's (ChainRun) directly: bit for bit given the same
    normals and a fixed step, failures included; with adaptation, both sample alike."""
    from tensorbridge.runtime.compiled import sampler as cs

    for g, step, seed, warmup, n_samples in ((_Gaussian(10, 3), 0.35, 3, 120, 80),
                                             (_Gaussian(3, 4, shell=(1.0, 1.4)), 0.5, 4, 120, 80),
                                             (_Gaussian(130, 6), 0.2, 6, 120, 40),
                                             (_Gaussian(10, 5), None, 5, 400, 400)):
        n = g.n
        key = chain_key(seed, 0)
        q0 = g.mu + 0.5 * g.sd * np.random.default_rng(seed).normal(size=n)
        run = cs.ChainRun(cs.python_density(g.row, n), q0, key, kind=kind, warmup=warmup,
                          n_samples=n_samples, n_leapfrog=8, step_size=step or 1.0,
                          adapt_step=step is None, pairwise_accept=True)
        while run.run(50):
            pass
        run.raise_pending()
        cfg = _cfg(kind, n, warmup, n_samples, key, step=step)
        tables = None
        if step is not None:
            tables = _normal_tables(seed, 1, n, _transition_restarts(warmup + n_samples))
        js = _run_js(g, [cfg], q0[None], tables)[0]
        out = js["out"]
        assert np.array_equal(np.asarray(out["divergent"], bool), run.stats["divergent"])
        if step is not None:
            assert np.array_equal(out["draws"].reshape(-1, n), run.draws)
            for k, name in (("lp", "lp"), ("energy", "energy"), ("tree_depth", "treeDepth"),
                            ("n_leapfrog", "nLeapfrog")):
                assert np.array_equal(out[name], run.stats[k].astype(float)), k
            np.testing.assert_allclose(out["acceptStat"], run.stats["accept_stat"],
                                       rtol=2e-15, atol=0)
            assert np.array_equal(js["inv"], run.inv_metric) and js["step"] == run.step_size
            if g.shell[0] < _INF and kind == "hmc":
                assert run.stats["divergent"].any()
        else:
            np.testing.assert_allclose(js["step"], run.step_size, rtol=0.3)
            for x in (out["draws"].reshape(-1, n), run.draws):
                _assert_samples(x, g, sd_rtol=0.35)


# ------------------------------------------------------------------------ chain contract
def test_blocks_do_not_change_the_chain() -> None:
    g = _Gaussian(3, 8)
    cfg = _cfg("nuts", 3, 60, 30, chain_key(1, 0), thin=2)
    got = run_node(_PRELUDE + """
const fn = density(input.density);
const a = new S.Chain(input.cfg, [1, 1, 1], fn), b = new S.Chain(input.cfg, [1, 1, 1], fn);
const oa = S.newOutput(input.cfg), ob = S.newOutput(input.cfg);
const first = a.run(1e6, oa), again = a.run(5, oa);
ob.iterDivergent = null;  // optional
let blocks = 0;
while (b.run(7, ob)) blocks++;
output({first, again, blocks, total: b.total(), it: b.iteration(), kept: b.kept(),
        same: oa.draws.every((v, i) => Object.is(v, ob.draws[i])), sa: a.step(), sb: b.step(),
        inv: a.invMetric(), invIsCopy: a.invMetric() !== a.invMetric(), da: oa.draws});
""", {"density": g.payload(), "cfg": cfg})
    assert (got["first"], got["again"], got["blocks"]) == (120, 0, 18)
    assert got["total"] == got["it"] == 120 and got["kept"] == 30
    assert got["same"] and got["sa"] == got["sb"] and got["invIsCopy"]
    assert np.all(np.isfinite(got["da"])) and np.all(got["inv"] > 0)


def test_config_validation() -> None:
    g = _Gaussian(3, 8)
    good = _cfg("nuts", 3, 10, 10, (1, 2))
    bad = [("n", -1), ("n", 1.5), ("kind", 2), ("maxDepth", 0), ("maxDepth", 31),
           ("jitter", "yes"), ("adaptStep", None), ("pairwiseAccept", 2),
           ("targetAccept", 1), ("targetAccept", 0), ("stepSize", 0), ("stepSize", -1),
           ("maxDeltaH", -1), ("warmup", -1), ("nSamples", -2), ("thin", 0), ("thin", 1.5),
           ("key0", -1), ("key1", 2**32), ("key0", 0.5), ("warmup", None)]
    hmc_bad = [("nLeapfrog", 0), ("nLeapfrog", 2.5)]
    got = run_node(_PRELUDE + r"""
const fn = density(input.density);
function err(f) {
  try { f(); } catch (e) { return e.name + ": " + e.message; }
  return "no error";
}
const good = input.good, z = [0, 0, 0], one = [1, 1, 1];
const with_ = (cfg, field, value) => Object.assign({}, cfg, {[field]: value});
const out = {};
for (const [field, value] of input.bad)
  out[field + "=" + value] = err(() => new S.Chain(with_(good, field, value), z, fn));
const hmc = with_(good, "kind", 1);
for (const [field, value] of input.hmcBad)
  out["hmc " + field + "=" + value] = err(() => new S.Chain(with_(hmc, field, value), z, fn));
out.missing = err(() => {
  const c = Object.assign({}, good);
  delete c.maxDeltaH;
  return new S.Chain(c, z, fn);
});
out.q0 = err(() => new S.Chain(good, [0, 0], fn));
out.fn = err(() => new S.Chain(good, z, null));
out.out = err(() => {
  const o = S.newOutput(good);
  o.draws = new Float64Array(3);
  new S.Chain(good, z, fn).run(1, o);
});
out.status = err(() => new S.Chain(good, z, () => undefined).run(1, S.newOutput(good)));
out.nIter = err(() => new S.Chain(good, z, fn).run(-1, S.newOutput(good)));
const rng = new S.Rng(1, 2);
out.depth = err(() => S.nutsTransition(3, z, 0, z, 0.1, one, fn, rng, 0, 1000, false));
out.rng = err(() => S.hmcTransition(3, z, 0, z, 0.1, one, fn, {}, 5, true, 1000));
out.rngKey = err(() => new S.Rng(-1, 0));
out.ok = err(() => new S.Chain(hmc, z, fn).run(20, S.newOutput(hmc)));
let calls = 0;
const throwing = new S.Chain(good, z, (q, lp, g) => {
  if (++calls === 40) throw new Error("in the density");
  return fn(q, lp, g);
});
const o = S.newOutput(good);
out.thrown = err(() => throwing.run(1000, o));
out.after = err(() => throwing.run(1, o));
output(out);
""", {"density": g.payload(), "good": good, "bad": bad, "hmcBad": hmc_bad})
    for field, value in bad:
        msg = got[f"{field}={'null' if value is None else value}"]
        assert msg.startswith("RangeError: cfg." + field), (field, value, msg)
    for field, value in hmc_bad:
        assert got[f"hmc {field}={value}"].startswith("RangeError: cfg." + field)
    assert got["missing"].startswith("RangeError: cfg.maxDeltaH")
    assert got["q0"].startswith("RangeError: q0: expected 3 numbers")
    assert got["fn"].startswith("TypeError: fn")
    assert got["out"].startswith("RangeError: out.draws")
    assert got["status"].startswith("TypeError: density")
    assert got["nIter"].startswith("RangeError: nIter")
    assert got["depth"].startswith("RangeError: maxDepth")
    assert got["rng"].startswith("TypeError: rng")
    assert got["rngKey"].startswith("RangeError: key0")
    assert got["ok"] == "no error"
    # an exception in the density propagates, and ends the chain (stopped mid-iteration)
    assert got["thrown"] == "Error: in the density"
    assert got["after"] == ("Error: chain: ended by an exception in its density: "
                            "Error: in the density")
