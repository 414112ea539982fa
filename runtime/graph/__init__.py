"""The greta-style model graph: data, variable, operation and distribution nodes."""

from .bijectors import Bijector, Constraint, biject_to, greater_than, interval, less_than, real
from .families import Family
from .model_compiler import Model, calculate, distribution, make_distribution, model
from .nodes import (
    GraphNode,
    LazyArray,
    as_data,
    cholesky_variable,
    model_backend,
    ordered_variable,
    set_model_backend,
    simplex_variable,
    variable,
)
from .simulate import simulate

__all__ = [
    "model_backend",
    "set_model_backend",
    "Bijector",
    "Constraint",
    "Family",
    "GraphNode",
    "LazyArray",
    "Model",
    "as_data",
    "biject_to",
    "calculate",
    "cholesky_variable",
    "distribution",
    "greater_than",
    "interval",
    "less_than",
    "make_distribution",
    "model",
    "ordered_variable",
    "real",
    "simplex_variable",
    "simulate",
    "variable",
]
