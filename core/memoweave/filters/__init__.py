"""The portable filter language: parse, render, evaluate and build filters.

The semantics are defined in :mod:`memoweave.filters.ast`; :func:`evaluate` is their
executable reference.
"""

from memoweave.filters.ast import OPERATORS, And, Comparison, FilterNode, Not, Operator, Or, Scalar
from memoweave.filters.evaluate import Predicate, compile_filter, evaluate
from memoweave.filters.helpers import conjoin, scope_filter
from memoweave.filters.parse import parse_filter, to_dict

__all__ = [
    "OPERATORS",
    "And",
    "Comparison",
    "FilterNode",
    "Not",
    "Operator",
    "Or",
    "Predicate",
    "Scalar",
    "compile_filter",
    "conjoin",
    "evaluate",
    "parse_filter",
    "scope_filter",
    "to_dict",
]
