"""The greta-style model graph: data, variable, operation and distribution nodes."""

from .bijectors import Bijector, Constraint, biject_to, greater_than, interval, less_than, real
from .families import Family
from .model_compiler import Model, calculate, distribution, make_distribution, model
from .nodes import GraphNode, LazyArray, as_data, model_backend, set_model_backend, variable
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
    "distribution",
    "greater_than",
    "interval",
    "less_than",
    "make_distribution",
    "model",
    "real",
    "simulate",
    "variable",
]
