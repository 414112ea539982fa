"""The pure-Python IndexPlan (used where NumPy is absent, e.g. Pyodide with the tfjs backend)
computes the same result shape and flat positions as NumPy's indexing, for every index kind."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.ops import indexing as ix


def _pure(index, shape):
    plan = ix.IndexPlan.__new__(ix.IndexPlan)
    plan.in_shape = shape
    plan._flat = None
    plan.backend_cache = None
    plan._pure = False
    if not isinstance(index, tuple):
        index = (index,)
    # lists stand for arrays, as they would without NumPy
    plan._init_pure(tuple(i.tolist() if isinstance(i, np.ndarray) else i for i in index), shape)
    out_shape, flat = ix._pure_plan(plan.numpy_index, shape)
    return plan, out_shape, flat


CASES = [
    ((3, 5), (slice(1, None), slice(None, None, 2))),
    ((3, 2), 1),
    ((3, 2), -1),
    ((2, 3), (None, Ellipsis, 0)),
    ((3, 2), [0, 0, 2]),
    ((2, 3), (slice(None), [2, 0])),
    ((3, 2), np.array([True, False, True])),
    ((2, 3), np.array([[True, False, True], [False, True, True]])),
    ((4, 5), (slice(None, None, -1), slice(4, 0, -2))),
    ((4, 5), (slice(3, None, -3), slice(None))),
    ((2, 3, 4), (0, slice(None), [1, 3])),  # int and array separated by a slice: block first
    ((2, 3, 4), (slice(None), 0, [1, 3])),  # int next to array: block in place
    ((2, 3, 4), ([0, 1], slice(None), [1, 3])),
    ((2, 3, 4), ([[0], [1]], slice(1, 3), [[1, 2, 3]])),
    ((2, 3, 4), (Ellipsis, [0, -1])),
    ((2, 3, 4), (None, [1, 0], None, slice(None), 2)),
    ((5,), slice(2, 2)),
    ((5,), slice(10, 20)),
    ((0, 3), slice(None)),
    ((), ()),
    ((), None),
    ((3, 4), ([[0, 1], [2, 2]], [[3], [0]])),
    ((3, 4), (1, [])),
]


@pytest.mark.parametrize("shape,index", CASES, ids=[str(i) for i in range(len(CASES))])
def test_pure_plan_matches_numpy(shape, index) -> None:
    ref = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if isinstance(index, tuple) and any(isinstance(k, list) and not k for k in index):
        want = ref[tuple(np.asarray(k, dtype=np.int64) if isinstance(k, list) else k
                         for k in index)]
    else:
        want = ref[tuple(np.asarray(k) if isinstance(k, list) else k for k in index)
                   if isinstance(index, tuple) else
                   (np.asarray(index) if isinstance(index, list) else index)]
    plan, out_shape, flat = _pure(index, shape)
    assert out_shape == want.shape
    assert plan.out_shape == want.shape
    assert flat == want.ravel().tolist()
    assert plan.is_unique() == (len(set(flat)) == len(flat))


@pytest.mark.parametrize("shape,index,err", [
    ((3,), 3, IndexError),
    ((3,), (0, 0), IndexError),
    ((3,), [0, 5], IndexError),
    ((3, 2), (Ellipsis, Ellipsis), IndexError),
    ((3,), [True, False], IndexError),
    ((3, 2), ([0, 1], [0, 1, 0]), IndexError),
    ((3,), [0.5], TypeError),
    ((3,), "a", TypeError),
])
def test_pure_plan_errors(shape, index, err) -> None:
    with pytest.raises(err, match="index"):
        _pure(index, shape)


def test_index_with_tensors_pure() -> None:
    _plan, out_shape, flat = _pure((tb.tensor([2, 0]), tb.tensor([True, False, True])), (3, 3))
    ref = np.arange(9).reshape(3, 3)[np.array([2, 0]), np.array([True, False, True])]
    assert out_shape == ref.shape and flat == ref.ravel().tolist()
