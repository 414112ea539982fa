"""Smoke test of bench/dask_bench.py's parts that need no cluster (a few seconds): the rounds'
rotation, the per-task slope, tb.sbc's ranks in one process, and bench/run.py's splicing of one
module's section into RESULTS.md. The cluster parts run with
``BENCH_QUICK=1 .venv/bin/python bench/run.py dask_bench`` (about a minute: two LocalClusters)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # dask_bench puts bench/ on sys.path for its siblings
    return mod


@pytest.fixture(scope="module")
def db():
    return _load("dask_bench")


def test_rounds_rotate_and_pass_a_seed_per_round(db) -> None:
    calls: list[tuple[str, int]] = []
    fns = {k: (lambda s, k=k: calls.append((k, s)) or s) for k in "abc"}
    out = db.interleaved(fns, 3)
    assert out == {"a": [1, 2, 3], "b": [1, 2, 3], "c": [1, 2, 3]}
    assert [k for k, _ in calls] == list("abc" "bca" "cab")


def test_per_task_cost_is_the_slope_between_two_sizes(db) -> None:
    per_task, per_call = db._slope([0.5 + 2 * 0.1, 0.5 + 16 * 0.1], 2, 16)
    assert per_task == pytest.approx(0.1) and per_call == pytest.approx(0.5)


def test_quick_config_is_small_and_rounds_follow_bench_rounds(db, monkeypatch) -> None:
    monkeypatch.setenv("BENCH_ROUNDS", "4")
    cfg = db.config(quick=True)
    assert cfg["sbc"]["rounds"] == cfg["overhead"]["rounds"] == 4
    assert all(s["rounds"] == 4 for s in cfg["scaling"])
    monkeypatch.delenv("BENCH_ROUNDS")
    monkeypatch.delenv("SBC_REPS", raising=False)
    assert db.config(quick=False)["sbc"]["reps"] == 200  # issue 17's target


def test_sbc_ranks_in_one_process(db) -> None:
    import tensorbridge as tb

    if not hasattr(tb, "sbc"):
        pytest.skip("tb.sbc (runtime/ppl/sbc.py) is not in this tree")
    ranks = db.sbc_ranks(2, 3, 20, 50, None)
    assert ranks.shape == (2, 10)  # mu, tau, eta[0..7]
    assert ranks.dtype.kind == "i" and ranks.min() >= 0 and ranks.max() <= 99
    np.testing.assert_array_equal(ranks, db.sbc_ranks(2, 3, 20, 50, None))  # seeded


def test_splice_replaces_one_section_and_keeps_the_rest() -> None:
    run = _load("run")
    text = "# Results\n\n- date: x\n\n## a_bench\n\nold a\n\n## c_bench\n\nold c\n"
    assert run.splice_sections(text, {}) == text
    new = run.splice_sections(text, {"c_bench": ["## c_bench", "", "new c"],
                                     "b_bench": ["## b_bench", "", "new b"]})
    assert new == ("# Results\n\n- date: x\n\n## a_bench\n\nold a\n\n## b_bench\n\nnew b\n\n"
                   "## c_bench\n\nnew c\n")


def test_labelled_section_sits_beside_the_modules_own(capsys) -> None:
    run = _load("run")
    text = "# Results\n\n## dask_bench\n\nhere\n\n## js_bridge\n\njs\n"
    new = run.splice_sections(text, {"dask_bench (16 CPUs)": ["## dask_bench (16 CPUs)", "",
                                                              "there"]})
    assert new == ("# Results\n\n## dask_bench\n\nhere\n\n## dask_bench (16 CPUs)\n\nthere\n\n"
                   "## js_bridge\n\njs\n")
    with pytest.raises(SystemExit):  # a label names a spliced section only
        run.main(["dask_bench", "--label", "16 CPUs"])
    assert "--label names a spliced section" in capsys.readouterr().err
