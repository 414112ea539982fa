"""cumprod, kron, outer, repeat, tile, segment_sum and index_update (greta's ``[<-``) in a
model: they are composites of lowered ops, so the model's density and gradient lower to C and
to JavaScript and match the NumPy program (and finite differences, through the shared
checks)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled.build import compiler_available

from .node_js import needs_node


def _array_model() -> tb.Model:
    x = tb.normal(0.0, 1.0, dim=4)
    m = tb.reshape(x, (2, 2))
    z = tb.index_update(tb.as_data(np.zeros(6)), (np.array([1, 4]),), tb.reshape(x, (-1,))[1:3])
    mean = (tb.sum(tb.cumprod(tb.tanh(x) + 1.0, 0)) + tb.sum(tb.kron(m, m) * 0.1)
            + tb.sum(tb.outer(x, x) * 0.1) + tb.sum(tb.repeat(x, [1, 0, 2, 1]))
            + tb.sum(tb.tile(m, (2, 1))) + tb.sum(z * z)
            + tb.sum(tb.square(tb.segment_sum(x, [1, 0, 1, 1]))))
    tb.distribution(tb.as_data(np.array([1.0, 2.0])), tb.normal(mean, 3.0))
    return tb.model(x=x)


@pytest.mark.skipif(compiler_available() is not None, reason="no C compiler")
def test_array_functions_lower_to_c() -> None:
    from .test_lowering import _check_model

    _check_model(_array_model())


@needs_node
def test_array_functions_lower_to_javascript() -> None:
    from .test_lowering_js import _check_model

    _check_model(_array_model())
