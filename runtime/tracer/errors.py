"""Errors raised while tracing, each naming the user's construct, file and line.

The errors of branches and loops are shared by every backend that stages
control flow; they live in `autograph.runtime.errors` and are importable
from here too."""

import linecache
import types

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
    "add_traced_line",
]


class UnsupportedFunctionError(TracingError, TypeError):
    """A numpy function the tracer cannot stage was called on a symbolic array."""


class SymbolicBoolError(TracingError, TypeError):
    """`bool()` (or `int()`, `len()`, ...) of a symbolic value in unconverted code."""


class ScopeError(TracingError):
    """A symbolic value escaped the branch or loop body that created it."""


def add_traced_line(error, graph_name, filename, source, where):
    """Adds a note to `error`, raised while the compiled graph `graph_name`
    (`source`, compiled as `filename`) ran, naming the op that failed and
    the user's file and line that traced it. `where[i]`: the (expression,
    node) pairs that line i + 1 of `source` evaluates."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:
        return
    lineno = tb.tb_lineno
    candidates = where[lineno - 1] if 0 < lineno <= len(where) else []
    candidates = [(text, node) for text, node in candidates if node is not None and node.loc is not None]
    if not candidates:
        return
    node = candidates[-1][1]   # the op of the line itself
    positions = list(tb.tb_frame.f_code.co_positions())
    if 0 <= tb.tb_lasti // 2 < len(positions):
        _, _, start, end = positions[tb.tb_lasti // 2]
        line = source.splitlines()[lineno - 1].encode()
        if start is not None and end is not None:
            span = line[start:end].decode(errors="replace")
            # The innermost op whose expression is the one that failed.
            node = next((n for text, n in candidates if text == span), node)
    file, line_number = node.loc
    text = linecache.getline(file, line_number).strip()
    error.add_note(f"autograph: raised by the op {node.name!r} of graph {graph_name!r}, traced at "
                   f"{file}:{line_number}" + (f": {text}" if text else ""))
    _end_at(error, file, line_number, graph_name)


def _end_at(error, file, line_number, name):
    """Makes `file`:`line_number` (the user's line that traced the op that
    raised) the innermost frame of `error`'s traceback, as the frame of a
    function called `name`: tools that show the innermost frame (a
    debugger, an editor, pytest) show the user's line, not the graph's. The
    frame is `_raise`'s, its code moved to that file and line."""
    code = _RAISE.replace(co_filename=file, co_name=name, co_firstlineno=max(1, line_number - _RAISE_OFFSET))
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=name)
    kept = error.__traceback__
    try:
        types.FunctionType(code, {})(error)
    except BaseException as raised:  # noqa: BLE001 - `error` itself, raised at the user's line
        frame_tb = raised.__traceback__.tb_next  # the frame of `code`, under this one
    error.__traceback__ = kept
    if frame_tb is None or kept is None:
        return
    last = kept
    while last.tb_next is not None:
        last = last.tb_next
    last.tb_next = types.TracebackType(None, frame_tb.tb_frame, frame_tb.tb_lasti, line_number)


def _raise(error):
    raise error


_RAISE = _raise.__code__
_RAISE_OFFSET = max(line for _, _, line in _RAISE.co_lines() if line is not None) - _RAISE.co_firstlineno
