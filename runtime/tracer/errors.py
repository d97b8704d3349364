"""Errors raised while tracing, each naming the user's construct, file and line.

The errors of branches and loops are shared by every backend that stages
control flow; they live in `autograph.runtime.errors` and are importable
from here too."""

from autograph.runtime.errors import (
    BranchMismatchError,
    LoopStateError,
    TracingError,
    UndefinedOutputError,
)

__all__ = [
    "BranchMismatchError",
    "LoopStateError",
    "ScopeError",
    "SymbolicBoolError",
    "TracingError",
    "UndefinedOutputError",
    "UnsupportedFunctionError",
]


class UnsupportedFunctionError(TracingError, TypeError):
    """A numpy function the tracer cannot stage was called on a symbolic array."""


class SymbolicBoolError(TracingError, TypeError):
    """`bool()` (or `int()`, `len()`, ...) of a symbolic value in unconverted code."""


class ScopeError(TracingError):
    """A symbolic value escaped the branch or loop body that created it."""
