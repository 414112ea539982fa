"""What data a family can produce: ``check_data`` refuses data a discrete family's density is zero
at, when ``distribution(y, ...)`` assigns it (the catalogue's families call it from their
``check_data``, which ``graph.model_compiler.distribution`` calls), and the host values of known
parameters and data that the catalogue's argument checks read."""

from __future__ import annotations

from typing import Any

from ...graph.nodes import GraphNode, LazyArray
from ...host_namespace import to_host, xp
from ...tensor import Tensor

__all__ = ["check_data", "host_values", "is_unknown", "known_host_values"]


def is_unknown(x: Any) -> bool:
    return isinstance(x, LazyArray) and not x.node.known


def host_values(x: Any) -> Any:
    if isinstance(x, LazyArray):
        return to_host(x.node.reference, xp.float64)
    if isinstance(x, Tensor):
        return to_host(x, xp.float64)
    return xp.asarray(x, dtype=xp.float64)


def known_host_values(x: Any) -> Any:
    """Host values of a known parameter or data (a graph node, lazy array, tensor or number);
    None when it depends on variables."""
    if isinstance(x, GraphNode):
        return host_values(x.reference) if x.known else None
    if is_unknown(x):
        return None
    return host_values(x)


def _describe_bad(v: Any, bad: Any) -> str:
    shown = [float(x) for x in xp.asarray(v)[xp.asarray(bad)].reshape(-1)[:3].tolist()]
    words = ", ".join(f"{x:g}" for x in shown)
    n = int(xp.sum(bad))
    return words + (f" and {n - len(shown)} more" if n > len(shown) else "")


def check_data(family: Any, params: dict[str, Any], value: Any) -> None:
    """Refuse data that a discrete family cannot produce (its density there is zero): counts
    must be non-negative whole numbers (poisson, negative_binomial), 0 or 1 (bernoulli), at most
    ``size`` (binomial, beta_binomial) or min(m, k) (hypergeometric), one-hot rows (categorical)
    or counts summing to ``size`` (multinomial, dirichlet_multinomial). ``value`` is the data
    being given the distribution; parameters that depend on variables are not checked. Raises
    ValueError naming ``target`` (the data argument of :func:`tensorbridge.distribution`).
    Continuous families are not checked here (a value outside their support has density zero,
    which the model reports when it is built)."""
    if not getattr(family, "discrete", False):
        return

    v = known_host_values(value)
    if v is None or v.size == 0:
        return
    name = family.name
    whole = xp.isfinite(v) & (xp.floor(v) == v) & (v >= 0)
    if name == "bernoulli":
        bad, words = ~(whole & (v <= 1)), "0 or 1"
    elif name in ("binomial", "beta_binomial"):
        size = known_host_values(params.get("size"))
        bad, words = ~whole, "whole numbers from 0 to size"
        if size is not None:
            bad = bad | (v > xp.broadcast_to(size, xp.broadcast_shapes(size.shape, v.shape)))
    elif name == "hypergeometric":
        bad, words = ~whole, "whole numbers from 0 to min(m, k)"
        m, k = known_host_values(params.get("m")), known_host_values(params.get("k"))
        if m is not None and k is not None:
            top = xp.minimum(m, k)
            bad = bad | (v > xp.broadcast_to(top, xp.broadcast_shapes(top.shape, v.shape)))
    elif name == "categorical":
        one_hot = xp.all((v == 0) | (v == 1), axis=-1) & (xp.sum(v, axis=-1) == 1)
        if not xp.all(one_hot):
            raise ValueError(f"target: {name} data must be one-hot rows (one 1 and otherwise 0 "
                             f"along the last dimension); {int(xp.sum(~one_hot))} row(s) are not")
        return
    elif name in ("multinomial", "dirichlet_multinomial"):
        rows = xp.all(whole, axis=-1)
        size = known_host_values(params.get("size"))
        if size is not None:
            rows = rows & (xp.sum(v, axis=-1) == xp.reshape(size, xp.shape(size)))
        if not xp.all(rows):
            raise ValueError(f"target: {name} data must be rows of non-negative whole counts "
                             f"summing to size; {int(xp.sum(~rows))} row(s) are not")
        return
    else:
        bad, words = ~whole, "non-negative whole numbers (counts)"
    if xp.any(bad):
        raise ValueError(f"target: {name} data must be {words}, got {_describe_bad(v, bad)}")
