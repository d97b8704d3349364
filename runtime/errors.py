"""Where in the user's code an error happened, for messages that name it.

Converted code is compiled with the user's own file name and line numbers,
so the innermost frame outside this package is the user's statement.
"""

import sys
import types
import weakref

__all__ = [
    "AutographError",
    "BranchMismatchError",
    "LoopStateError",
    "TracingError",
    "UndefinedOutputError",
    "note_unconverted",
    "unconverted_note",
    "user_location",
]

_PACKAGE = __name__.split(".")[0] + "."


class AutographError(Exception):
    """An error in converted or traced code that names the user's construct,
    file and line, and says what to do."""


class TracingError(AutographError):
    """Base class of the errors a backend raises while tracing."""


class UndefinedOutputError(TracingError):
    """A variable defined in only one branch of a traced `if` (or only inside
    a traced loop) is used after it."""


class BranchMismatchError(TracingError, TypeError):
    """The branches of a traced `if` give a variable different types or shapes."""


class LoopStateError(TracingError, TypeError):
    """A loop variable changes its type or shape across iterations of a traced loop."""


def _no_tracer():
    return None


# While a tracer runs the bytecode of converted code (torch.compile's dynamo),
# the frames are the tracer's: `_traced_location()` says where it is in the
# user's code (None when no such tracer runs).
_traced_location = _no_tracer


def set_traced_location(where):
    global _traced_location
    _traced_location = where


def _user_frame(frame):
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame = frame.f_back
    return frame


def user_location(depth=1):
    """'file:line' of the innermost frame that is not this package's code."""
    where = _traced_location()
    if where is not None:
        return where
    frame = _user_frame(sys._getframe(depth))
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


# Why code runs unconverted. The pipeline notes each function that converted
# code calls unconverted (a conversion that fell back, library code, ...),
# so that an error that unconverted code meets later (`bool()` of a symbolic
# value) says which function was not converted and why, not "convert it".
# Keyed by id (code objects compare by value), weakly.
_unconverted = {}


def note_unconverted(code, note):
    """Records `note` (a sentence naming the function and saying why it is
    not converted) for `code` and the code objects nested in it."""
    stack = [code]
    while stack:
        current = stack.pop()
        key = id(current)
        _unconverted[key] = (weakref.ref(current, lambda _, key=key: _unconverted.pop(key, None)), note)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))


def unconverted_note(depth=1):
    """The note of the innermost frame, from the innermost user frame outwards,
    whose code was noted as unconverted; None if there is none before the
    first frame of converted code (which reads the runtime as `ag__`)."""
    frame = _user_frame(sys._getframe(depth))
    while frame is not None:
        code = frame.f_code
        entry = _unconverted.get(id(code))
        if entry is not None and entry[0]() is code:
            return entry[1]
        if "ag__" in code.co_freevars:
            return None
        frame = frame.f_back
    return None
