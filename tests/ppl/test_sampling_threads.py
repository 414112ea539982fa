"""``single_threaded_blas``: one OpenBLAS thread inside, the previous count restored after."""

from __future__ import annotations

import pytest

from tensorbridge.runtime.ppl.sampling_threads import _openblas, single_threaded_blas


def test_single_threaded_inside_and_restored_after() -> None:
    api = _openblas()
    if not api:
        pytest.skip("no OpenBLAS loaded in this process")
    before = [get() for get, _ in api]
    with single_threaded_blas():
        assert all(get() == 1 for get, _ in api)
    assert [get() for get, _ in api] == before


def test_restored_when_the_body_raises() -> None:
    api = _openblas()
    before = [get() for get, _ in api]
    with pytest.raises(KeyError), single_threaded_blas():
        raise KeyError("x")
    assert [get() for get, _ in api] == before


def test_sampling_tuning_is_reentrant_and_restores_blas() -> None:
    from tensorbridge.runtime.ppl.sampling_threads import retain_freed_memory, sampling_tuning

    api = _openblas()
    before = [get() for get, _ in api]
    with sampling_tuning(), sampling_tuning():
        assert all(get() == 1 for get, _ in api)
    retain_freed_memory()  # once per process: later calls do nothing
    assert [get() for get, _ in api] == before
