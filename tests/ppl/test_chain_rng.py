"""One random-stream design for every door: the per-chain Philox streams give the same numbers
with NumPy (Python, R) and with the pure-Python arrays of Pyodide (Node, the browser)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tensorbridge.runtime.backends import python_arrays
from tensorbridge.runtime.ppl.chain_rng import (
    KEY_TAG,
    PURPOSE_STEP_SEARCH,
    ChainStreams,
    chain_key,
)
from tensorbridge.runtime.random import philox4x32


def _pure(x) -> list[float]:
    return [float(v) for v in x.ravel().tolist()] if hasattr(x, "ravel") else list(x)


def _draws(np_module) -> dict[str, list[float]]:
    rng = ChainStreams(2024, [0, 1, 2], np_module)
    out = {"init": _pure(rng.uniform(-2.0, 2.0, size=(3, 5)))}
    rng.restart(7)
    out["normal"] = _pure(rng.standard_normal((3, 3)))  # odd: half a Box-Muller pair left
    out["random"] = _pure(rng.random((4, 3)))
    out["uniform"] = _pure(rng.uniform(size=3))
    rng.restart(7, PURPOSE_STEP_SEARCH)
    out["search"] = _pure(rng.random((200, 3)))  # more than one refill
    return out


def test_numpy_and_pure_python_streams_are_the_same_numbers() -> None:
    native, pure = _draws(np), _draws(python_arrays)
    assert native.keys() == pure.keys()
    for k in native:
        assert native[k] == pure[k], k  # bit for bit


def test_keys_and_uniforms_follow_the_documented_construction() -> None:
    seed = 2**40 + 17
    key = chain_key(seed, 3)
    assert key == philox4x32((3, 0, 0, KEY_TAG), (seed & 0xFFFFFFFF, seed >> 32))[:2]
    rng = ChainStreams(seed, [3], np)
    rng.restart(5, 1)
    w = philox4x32((0, 0, 5, 1), key)
    want = [((w[0] >> 5) * 2.0**26 + (w[1] >> 6)) * 2.0**-53,
            ((w[2] >> 5) * 2.0**26 + (w[3] >> 6)) * 2.0**-53]
    assert rng.uniform(size=(1, 2)).ravel().tolist() == want
    rng.restart(5, 1)
    z = rng.standard_normal((1, 2)).ravel().tolist()
    r = math.sqrt(-2.0 * math.log(1.0 - want[0]))
    assert z == [r * math.cos(2 * math.pi * want[1]), r * math.sin(2 * math.pi * want[1])]


def test_a_chains_numbers_do_not_depend_on_its_batch() -> None:
    alone = ChainStreams(11, [2], np)
    batch = ChainStreams(11, [0, 1, 2], np)
    for rng in (alone, batch):
        rng.restart(3)
    np.testing.assert_array_equal(alone.standard_normal((1, 4))[0],
                                  batch.standard_normal((3, 4))[2])
    np.testing.assert_array_equal(alone.random((5, 1))[:, 0], batch.random((5, 3))[:, 2])


def test_streams_are_uniform_and_normal() -> None:
    rng = ChainStreams(1, [0, 1], np)
    u = rng.uniform(size=(2, 20000))
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    assert 0.0 <= u.min() and u.max() < 1.0
    z = rng.standard_normal((2, 20000))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.03
    # different chains, different seeds: different numbers
    assert not np.array_equal(u[0], u[1])
    other = ChainStreams(2, [0, 1], np).uniform(size=(2, 5))
    assert not np.array_equal(other, ChainStreams(1, [0, 1], np).uniform(size=(2, 5)))


def test_size_must_put_the_chains_on_the_right_axis() -> None:
    rng = ChainStreams(1, [0, 1], np)
    with pytest.raises(ValueError, match="chains on its first axis"):
        rng.standard_normal((3, 2))


def test_conformance_rows_follow_the_documented_construction() -> None:
    """tests/conformance/random.json's expected numbers, recomputed from philox4x32 alone (not
    from ChainStreams), so the rows every door replays cannot drift from the documentation."""
    import json
    from pathlib import Path

    rows = {r["id"]: r for r in json.loads((Path(__file__).resolve().parents[1] / "conformance"
                                            / "random.json").read_text())["cases"]}

    def uniforms(chain: int, iteration: int, purpose: int, m: int) -> list[float]:
        key = philox4x32((chain, 0, 0, KEY_TAG), (2024, 0))[:2]
        out: list[float] = []
        for block in range((m + 1) // 2):
            w = philox4x32((block, 0, iteration, purpose), key)
            out += [((w[0] >> 5) * 2.0**26 + (w[1] >> 6)) * 2.0**-53,
                    ((w[2] >> 5) * 2.0**26 + (w[3] >> 6)) * 2.0**-53]
        return out[:m]

    init = [-2.0 + 4.0 * u for c in range(3) for u in uniforms(c, 0, 2, 2)]
    assert rows["chain-streams-uniform"]["result"]["values"] == init
    normals = []
    for c in range(3):
        u1, u2 = uniforms(c, 5, 0, 2)
        r = math.sqrt(-2.0 * math.log(1.0 - u1))
        normals += [r * math.cos(2 * math.pi * u2), r * math.sin(2 * math.pi * u2)]
    np.testing.assert_allclose(rows["chain-streams-normal"]["result"]["values"], normals,
                               rtol=4e-15)


def test_conformance_simulate_row_follows_the_generator_construction() -> None:
    """random.json's seeded-simulate row, recomputed from philox4x32 alone: Generator(7)'s
    blocks from counter 0, 53-bit uniforms, Box-Muller's cos branch."""
    import json
    from pathlib import Path

    row = next(r for r in json.loads((Path(__file__).resolve().parents[1] / "conformance"
                                      / "random.json").read_text())["cases"]
               if r["id"] == "simulate-seeded")
    words: list[int] = []
    for block in range(6):
        words += philox4x32((block, 0, 0, 0), (7, 0))
    u = [((words[2 * i] >> 5) * 67108864.0 + (words[2 * i + 1] >> 6)) * 2.0**-53
         for i in range(12)]
    z = [math.sqrt(-2 * math.log1p(-u[2 * i])) * math.cos(2 * math.pi * u[2 * i + 1])
         for i in range(6)]
    np.testing.assert_allclose(row["result"]["values"], z, rtol=4e-15)
