"""Where in the user's code an error happened, for messages that name it.

Converted code is compiled with the user's own file name and line numbers,
so the innermost frame outside this package is the user's statement.
"""

import contextlib
import dis
import sys
import threading
import types
import weakref

__all__ = [
    "reraise_refusal",
    "AutographError",
    "BranchMismatchError",
    "LoopStateError",
    "TracingError",
    "UndefinedOutputError",
    "generated_construct",
    "is_generated",
    "note_generated",
    "note_unconverted",
    "raised_at",
    "recording_errors",
    "swallowed",
    "unconverted_note",
    "user_location",
]

_PACKAGE = __name__.split(".")[0] + "."


class AutographError(Exception):
    """An error in converted or traced code that names the user's construct,
    file and line, and says what to do."""


class TracingError(AutographError):
    """Base class of the errors a backend raises while tracing."""

    def __init__(self, *args):
        # (BaseException.__new__ has set `args`; no super() call, which torch's dynamo cannot trace.)
        recorders = _recorders.stack
        if recorders:
            recorders[-1].append(self)
        _refuse(type(self), args)


def _refuse_nothing(cls, args):
    return None


# Called with each TracingError's class and arguments as it is made: a
# tracer that would hand the error on in its own words raises it here
# itself (runtime/torch/dynamo_hooks.py: `refuse`).
_refuse = _refuse_nothing


def set_refusal(refuse):
    """Installs `refuse(cls, args)`, called as each TracingError is made."""
    global _refuse
    _refuse = refuse


class _Recorders(threading.local):
    def __init__(self):
        self.stack = []


_recorders = _Recorders()


@contextlib.contextmanager
def recording_errors():
    """Collects the TracingErrors created in this thread inside (a list),
    for `swallowed`: a trace must not complete after user code caught one."""
    found = []
    _recorders.stack.append(found)
    try:
        yield found
    finally:
        _recorders.stack.pop()


def reraise_refusal():
    """Raises again the exception that converted code's `except` clause is
    handling if it is a TracingError: a backend's refusal, after which a
    trace cannot go on as Python would (converters/except_handlers.py)."""
    error = sys.exc_info()[1]
    if isinstance(error, TracingError):
        frame = sys._getframe(1)
        code = frame.f_code
        error.add_note(
            f"autograph: the `except` clause at {code.co_filename}:{frame.f_lineno} (in {code.co_name}) "
            "caught this error, which stops the trace: past it the trace could not go on as Python runs the "
            f"function. {_WHAT_TO_DO}")
        raise error


_WHAT_TO_DO = ("Let the error propagate (catch narrower exceptions than Exception or TypeError around traced "
               "values), and fix what it says")


def swallowed(errors):
    """The first of `errors` (TracingErrors that `recording_errors` collected)
    that was raised and then caught outside this package (by the user's
    `try`/`except`, or a `return` in `finally`), with a note naming where
    it was caught; None if there is none. (The head of an error's traceback
    is the frame that caught it.)"""
    for error in errors:
        tb = error.__traceback__
        if tb is None or tb.tb_frame.f_globals.get("__name__", "").startswith(_PACKAGE):
            continue
        code = tb.tb_frame.f_code
        error.add_note(
            f"autograph: this error was raised while tracing and caught by a `try` statement at "
            f"{code.co_filename}:{tb.tb_lineno} (in {code.co_name}), an `except` clause or a `return` in "
            "`finally`; the trace went on without what raised it, so its graph would not be the program "
            f"the function runs eagerly. {_WHAT_TO_DO}")
        return error
    return None


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


def raised_at(error):
    """'file:line' of the innermost frame of `error`'s traceback that is not
    this package's code (where the user's code raised it), or None."""
    found, tb = None, error.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_globals.get("__name__", "").startswith(_PACKAGE):
            found = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


# The code objects that conversion generated (nested ones included: the
# comprehensions and functions inside a converted function), so that an error
# raised in converted code does not advise converting it. id(code) -> weak
# reference: code objects compare equal by value, so a WeakSet would also
# claim the user's code that equals a generated one.
_generated = {}
_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})


def note_generated(code):
    """Records `code`, and the code objects nested in it, as generated."""
    stack = [code]
    while stack:
        current = stack.pop()
        key = id(current)
        _generated[key] = weakref.ref(current, lambda _, key=key: _generated.pop(key, None))
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))


def is_generated(code):
    """True if `code` was produced by conversion."""
    reference = _generated.get(id(code))
    return reference is not None and reference() is code


def generated_construct(depth=1):
    """What the innermost user frame runs, if conversion generated it:
    "comprehension" (a comprehension or generator expression inside a
    converted function, which conversion leaves as Python runs it),
    "converted" (other converted code), or None (code that is not
    converted)."""
    frame = _user_frame(sys._getframe(depth))
    if frame is None or not is_generated(frame.f_code):
        return None
    return "comprehension" if frame.f_code.co_name in _COMPREHENSIONS else "converted"


_RAISE = dis.opmap["RAISE_VARARGS"]


def raised_by_statement(error):
    """True if a `raise` statement of converted code raised `error` (the
    innermost frame of its traceback runs generated code and stopped at a
    `raise`): the user's own error, not one that a library or the tracer
    raised on a traced value."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return is_generated(code) and 0 <= tb.tb_lasti < len(code.co_code) and code.co_code[tb.tb_lasti] == _RAISE


def fresh(error, message=None):
    """A copy of exception `error` to raise again (each raise of one object
    would add to its traceback), with its notes; with `message` as its only
    argument if given (and its type takes one)."""
    try:
        copy = type(error)(*((message,) if message is not None else error.args))
    except Exception:
        return error.with_traceback(None)
    copy.__dict__.update(error.__dict__)
    return copy


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
