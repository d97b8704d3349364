"""Errors raised while tracing, each naming the user's construct, file and line."""

from autograph.runtime.errors import AutographError

__all__ = [
    "BranchMismatchError",
    "LoopStateError",
    "ScopeError",
    "SymbolicBoolError",
    "TracingError",
    "UndefinedOutputError",
    "UnsupportedFunctionError",
]


class TracingError(AutographError):
    """Base class of the tracer's errors."""


class UnsupportedFunctionError(TracingError, TypeError):
    """A numpy function the tracer cannot stage was called on a symbolic array."""


class SymbolicBoolError(TracingError, TypeError):
    """`bool()` (or `int()`, `len()`, ...) of a symbolic value in unconverted code."""


class UndefinedOutputError(TracingError):
    """A variable defined in only one branch of a symbolic `if` (or only inside
    a symbolic loop) is used after it."""


class BranchMismatchError(TracingError, TypeError):
    """The branches of a symbolic `if` give a variable different dtypes or shapes."""


class LoopStateError(TracingError, TypeError):
    """A loop variable changes its dtype or shape across iterations of a symbolic loop."""


class ScopeError(TracingError):
    """A symbolic value escaped the branch or loop body that created it."""
