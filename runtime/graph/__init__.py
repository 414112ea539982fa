"""The greta-style model graph: data, variable, operation and distribution nodes."""

from typing import Any

from .bijectors import Bijector, Constraint, biject_to, greater_than, interval, less_than, real
from .families import Family, Normal
from .model import Model, calculate, distribution, make_distribution, model
from .nodes import GraphNode, LazyArray, as_data, variable


def normal(mean: Any, sd: Any, dim: Any = None) -> LazyArray:
    """A normal distribution: a prior when used as a variable (``mu = normal(0, 10)``), or a
    likelihood via ``distribution(y, normal(mu, sd))``."""
    return make_distribution(Normal(), {"mean": mean, "sd": sd}, dim)


__all__ = [
    "Bijector",
    "Constraint",
    "Family",
    "GraphNode",
    "LazyArray",
    "Model",
    "as_data",
    "biject_to",
    "calculate",
    "distribution",
    "greater_than",
    "interval",
    "less_than",
    "make_distribution",
    "model",
    "normal",
    "real",
    "variable",
]
