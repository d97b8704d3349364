"""What the torch backend installs in the core for dynamo, which runs the
bytecode of converted code itself: the call hook's path (calls.py), which
converts a callee outside the trace, and the user's location in errors
(errors.py), both asked outside the trace, as constants, where a test of
`is_dynamo_compiling()` in the trace would cost guards; and the runtime's
own code kept from being compiled as frames of their own.
"""

import functools
import os
import sys
import traceback
import types

from autograph.runtime import calls, errors
from autograph.runtime.torch import compat
from autograph.runtime.torch.aliasing import PACKAGE

__all__ = ["install", "traced_location"]


def install(torch):
    """Routes the call hook and error locations through dynamo-safe paths
    while dynamo traces."""
    calls.set_bytecode_tracer(torch.compiler.is_dynamo_compiling, _outside, _ready)
    errors.set_traced_location(traced_location)
    errors.set_refusal(refuse)


def _ready():
    """Keeps dynamo from compiling this package's runtime functions as
    frames of their own (it still traces them inside converted code): when
    dynamo cannot trace a statement, it runs the statement's operator call
    as Python, and that must run the operator as Python throughout, with
    the tensors' values, as the unconverted statement would. Run once,
    while dynamo traces, outside the trace."""
    _skip_runtime_code()
    return True


@functools.cache
def _skip_runtime_code():
    for code in _runtime_code():
        compat.skip_code(code)


def _runtime_code():
    """The code objects of the runtime's modules, nested ones included."""
    found, stack = set(), []
    for name, module in list(sys.modules.items()):
        if name.startswith(PACKAGE + "runtime") and module is not None:
            for value in vars(module).values():
                members = vars(value).values() if isinstance(value, type) else (value,)
                for member in members:
                    member = getattr(member, "__func__", member)
                    if isinstance(member, types.FunctionType) and member.__module__ == name:
                        stack.append(member.__code__)
    while stack:
        code = stack.pop()
        if code not in found:
            found.add(code)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _converted_outside(convert, f):
    """Runs `convert(f)` while dynamo traces, outside the trace: dynamo calls
    a function marked as having a constant result as it is, with the
    values of its arguments, and takes its result as a constant. A
    function is no constant that dynamo can call, so it waits in `_held`
    under a name of its own, which dynamo reads like any attribute (and
    so knows where it comes from: the closure of converted code holds
    objects that dynamo wraps only when they have a source)."""
    converted = convert(f)
    name = f"converted_{id(converted)}"
    setattr(_held, name, converted)
    return name


def traced_location():
    """'file:line' of the user's statement that dynamo is tracing, or None
    where dynamo traces nothing (its stack of the user's frames is empty:
    eager code, torch.export's non-strict mode). While dynamo traces, it
    runs this outside the trace, as a constant (and so `_ready`): one guard
    on every call of the compiled function, where a test of
    `is_dynamo_compiling()` in the trace would add more."""
    stack = compat.user_stack()
    if not stack:
        return None
    _ready()
    for frame in reversed(stack):
        if not frame.filename.startswith(_RUNTIME_DIR):
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


# What `torch.compiler.assume_constant_result` does (importing it costs
# torch._dynamo's import, 1.5 s, in programs that never compile).
_converted_outside._dynamo_marked_constant = True
traced_location._dynamo_marked_constant = True
_ready._dynamo_marked_constant = True
_held = types.SimpleNamespace()
_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # runtime/


def _generated(code):
    return errors.is_generated(code)


_generated._dynamo_marked_constant = True


def _outside(convert, f):
    """`convert(f)` while dynamo traces. A function of generated code (a
    lambda or a def inside converted code) is its own conversion; dynamo
    may have made it in the trace, and could not hand it to
    `_converted_outside`, so it is asked about its code."""
    if _generated(f.__code__):
        return f
    try:
        # torch.jit.script_if_tracing's wrapper: dynamo calls the function it
        # keeps, and cannot hand the wrapper itself to `_converted_outside`.
        f = f.__original_fn
    except AttributeError:
        pass
    return getattr(_held, _converted_outside(convert, f))


def refuse(cls, args):
    """Raises `cls(*args)`, a TracingError that code dynamo traces is
    making, outside the trace, where dynamo would otherwise hand it on in
    its own words ("Observed exception", with ours only in its debug
    context): under `torch.compile(fullgraph=True)` and strict
    `torch.export`. The error is then also one of dynamo's `UserError`s,
    which dynamo re-raises as it is, its message first. Elsewhere (eager
    code, non-strict export, and where dynamo may break the graph: the
    default mode, where the statement then runs as Python on the tensors'
    values) the error is raised where it is made."""
    if not compat.tracing():
        return
    translator = compat.current_translator()
    if translator.one_graph or translator.error_on_graph_break or translator.export:
        raise _in_dynamos_hands(cls)(*args)


refuse._dynamo_marked_constant = True


@functools.cache
def _in_dynamos_hands(cls):
    """`cls`, one of the package's errors, as also one of dynamo's
    `UserError`s (which dynamo re-raises unwrapped): `except cls` still
    catches it."""
    from torch._dynamo.exc import UserError, UserErrorType

    def __init__(self, *args):  # (not cls.__init__, which would refuse again)
        self.msg = self.message = str(args[0]) if args else ""
        self.error_type = UserErrorType.DYNAMIC_CONTROL_FLOW
        # The user's frames that dynamo traced, which it shows under the
        # message ("from user code"), without the runtime's and dynamo's.
        torch = compat.torch
        skipped = (_RUNTIME_DIR, os.path.dirname(torch._dynamo.__file__) + os.sep)
        self.real_stack = traceback.StackSummary.from_list(
            [frame for frame in torch._guards.TracingContext.extract_stack() if not frame.filename.startswith(skipped)])
        self.skip_frame = self.logged = False

    return type(cls.__name__, (cls, UserError), {"__init__": __init__, "__str__": cls.__str__,
                                                  "__module__": cls.__module__, "__qualname__": cls.__qualname__})
