"""`TorchBackend`: what the staging core asks of torch, with the mixins
of this package for numbers, aliasing, indexing and dynamo.

Importing this module does not import torch: the backend claims a type only
once torch is imported (`owns_type`, `prepare`), and only then binds the
names below (`_load`).
"""

import builtins
import sys

from autograph.runtime import staging
from autograph.runtime.backends import Backend
from autograph.runtime.torch import compat, dynamo_hooks, export, graphs
from autograph.runtime.torch.aliasing import Aliasing
from autograph.runtime.torch.dynamo_staging import DynamoStaging
from autograph.runtime.torch.indexing import Indexing
from autograph.runtime.torch.numbers import Numbers, is_symbolic
from autograph.runtime.undefined import Undefined

__all__ = ["TorchBackend", "TorchRange"]

# Bound by `_load` once torch is imported: read as this module's globals by
# the methods that dynamo traces (dynamo guards each global it reads, on
# every call of the compiled function: one module, one guard per name).
torch = pytree = _torch_cond = _torch_while_loop = _torch_full = _Tensor = _dispatch_modes = _function_modes = None
_BUILTINS = {}
_TRANSFORMS = {}


def _load():
    global torch, pytree, _torch_cond, _torch_while_loop, _torch_full, _Tensor, _dispatch_modes, _function_modes
    if torch is None:
        compat.load()
        dynamo_hooks.install(compat.torch)
        pytree = compat.pytree
        _torch_cond, _torch_while_loop, _torch_full = compat.torch.cond, compat.while_loop, compat.torch.full
        _Tensor = compat.torch.Tensor
        _dispatch_modes, _function_modes = compat.mode_stacks()
        _BUILTINS.update({builtins.range: _range, builtins.len: _len})
        _TRANSFORMS.update(_transforms(compat.torch, compat.while_loop))
        torch = compat.torch


def _transforms(torch, while_loop):
    """torch's functions that take the user's functions to trace, by the
    ((position, keyword), ...) of those arguments."""
    import torch.utils.checkpoint
    func = ((0, "func"),)
    table = {f: func for f in (torch.func.grad, torch.func.grad_and_value, torch.func.vmap, torch.func.jacrev,
                               torch.func.jacfwd, torch.func.hessian, torch.func.vjp, torch.func.jvp,
                               torch.func.linearize, torch.func.functionalize)}
    table[torch.vmap] = func
    table[torch.cond] = ((1, "true_fn"), (2, "false_fn"))
    table[while_loop] = ((0, "cond_fn"), (1, "body_fn"))
    table[torch.utils.checkpoint.checkpoint] = ((0, "function"),)
    return table


def _prime(backend):
    """Tells dispatch at once that `backend` claims torch's other value
    types too (dynamo guards on the dispatch cache, and a type it first
    meets while it traces would change the cache after the trace), and how
    to tell the numbers that dynamo traces as symbols."""
    from autograph.runtime.backends import claim, set_symbolic_numbers
    claim(backend, (torch.Tensor, torch.nn.Parameter, *compat.SYMBOLIC))
    set_symbolic_numbers(backend, is_symbolic, torch.compiler.is_dynamo_compiling)


class TorchRange(staging.TracedRange):
    __slots__ = ()
    traced_by, staged_as = "torch", "a while_loop"


def _kind(dtype):
    return 0 if dtype == torch.bool else 2 if dtype.is_floating_point or dtype.is_complex else 1


def _is_traced(x):
    """`TorchBackend.is_traced`, for the builtins."""
    return isinstance(x, torch.Tensor) and (
        torch.compiler.is_dynamo_compiling() or compat.is_fake(x) and getattr(x, "constant", None) is None)


def _describe(x):
    return f"{str(x.dtype).replace('torch.', '')}[{','.join(map(str, x.shape))}]"


def _range(*args):
    if not builtins.any(_is_traced(a) or is_symbolic(a) for a in args):
        return builtins.range(*args)
    # A symbolic bound (n.item(), x.shape[0] of a dynamic dimension) as a
    # traced tensor: what the loop's bodies can read.
    args = [torch.scalar_tensor(a, dtype=torch.int64) if is_symbolic(a) else a for a in args]
    bounds = staging.range_bounds(
        args, lambda a: isinstance(a, torch.Tensor),
        lambda a: a.numel() == 1 and _kind(a.dtype) == 1, _describe)
    return TorchRange(*(a.reshape(()) if isinstance(a, torch.Tensor) else a for a in bounds))


def _len(obj):
    if type(obj) is TorchRange:
        step = obj.step
        sign = (1 if step > 0 else -1) if type(step) is int else torch.sign(step)
        return torch.clamp((obj.stop - obj.start + step - sign) // step, min=0)
    if isinstance(obj, torch.Tensor) and obj.dim():
        return obj.shape[0]  # a dynamic dimension stays symbolic: Python's len() would specialize it
    return builtins.len(obj)


def _template(args, sep, end):
    """A format string for torch's print: `print(*args, sep, end)` with the
    tensors as `{}` slots."""
    parts = ["{}" if isinstance(a, torch.Tensor) else str(a).replace("{", "{{").replace("}", "}}")
             for a in args]
    return sep.join(parts) + end[:-1]


class TorchBackend(staging.StagingBackend):
    """Stages control flow on traced tensors into torch's control-flow
    operators. Its methods for numbers, aliasing, indexing and dynamo are
    those of the classes of the same names (`_adopt`)."""

    __slots__ = ()  # see Backend
    name = "torch"
    traced = "traced by torch"
    array, cast_hint = "tensor", ".to()"
    arrays_change_in_place = True
    static_shapes = ("torch's while_loop carries '{name}' with one shape in every iteration; make "
                     "'{name}' its largest size before the loop and write into it ({name}[i] = ...)")

    def __init__(self):
        if "torch" in sys.modules:
            _load()

    def tracks_places(self):
        # Under torch.compile dynamo follows the Python side effects of the
        # bodies itself (and cannot trace the walk over closures).
        return not self.compiling()

    def owns_type(self, cls):
        if issubclass(cls, TorchRange):
            return True
        if "torch" not in sys.modules:
            return False
        _load()
        if issubclass(cls, torch.Tensor) or cls in compat.SYMBOLIC:
            if not torch.compiler.is_dynamo_compiling():
                _prime(self)
            return True
        return False

    def tracing(self):
        if torch is None:
            if "torch" not in sys.modules:
                return False
            _load()
        return bool(_dispatch_modes() or _function_modes()) or compat.tracing()

    def prepare(self):
        if "torch" in sys.modules:
            _load()
            _prime(self)

    # What dynamo traces on every staged statement is written as methods:
    # dynamo guards each module function that the code it traces reads (on
    # every call of the compiled function), but no method of the backend
    # (see dynamo_staging.py).

    # Facts that hold for a whole trace, which dynamo takes as constants: it
    # runs these outside the trace (`_dynamo_marked_constant`, what
    # torch.compiler.assume_constant_result sets) and guards nothing, where
    # reading `torch.compiler.is_dynamo_compiling` or a dtype through torch
    # would cost guards on this module, on torch and on each attribute, and
    # a check that torch is the module that torch.cond reads.

    def compiling(self):
        """True while dynamo traces (`torch.compiler.is_dynamo_compiling()`
        in the code that it traces)."""
        return compat.tracing()

    def tensor_type(self):
        # Read from this module, not through torch, and not as a constant of
        # the trace: dynamo checks that a class it finds under two names is
        # one object (type() of a tensor names torch.Tensor too), and it cannot
        # name a constant's result in that check under dynamic shapes.
        return _Tensor

    def dtype(self, kind):
        """The dtype of a Python number whose type is named `kind` ("bool",
        "int", "float"). (Dynamo's guard on the global state covers the
        default dtype.)"""
        return torch.bool if kind == "bool" else torch.int64 if kind == "int" else torch.get_default_dtype()

    compiling._dynamo_marked_constant = True
    dtype._dynamo_marked_constant = True

    def in_body(self):
        """True while torch traces a cond or while_loop body (or dynamo a
        probe of one)."""
        return self.dynamo_in_body() if self.compiling() else export.depth() > 0

    def export_bodies(self):
        """The numbers of the bodies that torch.export's non-strict mode
        traces now, outermost first (export.py)."""
        return export.bodies()

    def is_traced(self, x):
        """True for a tensor whose value is unknown while tracing (dynamo knows
        none: `is_fake` is not for it to call)."""
        return isinstance(x, self.tensor_type()) and (
            self.compiling() or compat.is_fake(x) and getattr(x, "constant", None) is None)

    def torch_cond(self, pred, true_fn, false_fn, grad=True):
        """torch.cond, with autograd off where `grad` is False
        (`DynamoStaging._keeps_grad`). torch.cond read from this module:
        torch's own module stays the only place where dynamo finds torch (a
        second one is a check on every call)."""
        if grad:
            return _torch_cond(pred, true_fn, false_fn, ())
        with torch.no_grad():
            return _torch_cond(pred, true_fn, false_fn, ())

    def torch_while_loop(self, cond_fn, body_fn, init):
        return _torch_while_loop(cond_fn, body_fn, init)

    def tree_map(self, fn, values):
        return pytree.tree_map(fn, values)

    def concrete(self, x):
        """`bool(x)` if x's value is known, else None. A condition on a symbolic
        number has a value when torch can decide it: on a dimension it guards
        (as the unconverted function does), on an `.item()` value (an unbacked
        symbol) it has none. `guard_or_false` and `guard_or_true` ask that
        without failing, and dynamo traces both."""
        if self.is_traced(x):
            return None
        if is_symbolic(x):
            flag = x if type(x) in (bool, torch.SymBool) else x != 0
            known = compat.guard_or_false(flag)
            return known if known == compat.guard_or_true(flag) else None
        return bool(x)

    # These ask about tensors first, and write Python's types out: dynamo
    # guards, on every call, each element of a module's container that the
    # code it traces reads (a builtin it reads is one guard for all code).

    def is_value(self, x):
        return isinstance(x, self.tensor_type()) or type(x) in (bool, int, float)

    def is_scalar(self, x):
        """True for a Python value that is its own only leaf: what most state
        is, said without the staging core's containers, whose code dynamo
        would trace (and guard on) for each."""
        t = type(x)
        return t is bool or t is int or t is float or t is complex or t is str or x is None

    def typeof(self, x):
        """(shape, dtype, weak): weak for a Python number (or a tensor that
        stands for one)."""
        if isinstance(x, self.tensor_type()):
            return (tuple(x.shape), x.dtype, self.is_number(x))
        return ((), self.dtype(type(x).__name__), True)

    def describe_type(self, t):
        shape, dtype, weak = t
        text = f"{str(dtype).replace('torch.', '')}[{','.join(map(str, shape))}]"
        return text + " (from a Python number)" if weak else text

    def merge(self, a, b):
        """The type that both a and b can take as one variable, or None."""
        if a[:2] == b[:2]:
            return a if a[2] and b[2] else (a[0], a[1], False)
        if a[2] and b[2]:
            return ((), torch.promote_types(a[1], b[1]), True)
        (weak, strong) = (a, b) if a[2] else (b, a)
        if weak[2] and _kind(weak[1]) <= _kind(strong[1]):
            return strong
        return None

    def cast(self, x, t):
        """x as a tensor of type t (shape, dtype, weak); None for a Python
        number that t's dtype cannot hold (`staging.holds`)."""
        shape, dtype, _ = t
        if isinstance(x, self.tensor_type()):
            x = x if x.dtype == dtype else x.to(dtype)
            # Only a number's 0-d stand-in has another shape than its merged
            # type; sizes are not compared: in a while_loop body under dynamo,
            # comparing a dynamic size with the type's (the enclosing graph's)
            # fails in torch ("argument of type: LazyProxy").
            return x if x.dim() == len(shape) else x.expand(shape).clone()
        if not self.compiling() and not self.holds(x, dtype):
            return None  # (dynamo's torch.full raises "value cannot be converted ... without overflow")
        return _torch_full(shape, x, dtype=dtype)

    def holds(self, x, dtype):
        """`staging.holds` for a tensor's dtype."""
        if type(x) is int and dtype != torch.bool and not dtype.is_floating_point and not dtype.is_complex \
                and not is_symbolic(x):
            info = torch.iinfo(dtype)
            return staging.holds(x, "i", info.min, info.max)
        if type(x) is float and dtype.is_floating_point and not is_symbolic(x):
            info = torch.finfo(dtype)
            return staging.holds(x, "f", -float(info.max), float(info.max))
        return True

    def same_leaf(self, a, b):
        # A tensor's type does not say its dtype: it is not the same leaf as
        # another tensor (`values.same_leaf`, without numpy's scalars).
        if a is b:
            return True
        return not isinstance(a, self.tensor_type()) and staging.same_python(a, b)

    def predicate(self, flag, what, loc):
        return self.boolean(flag)

    def boolean(self, flag):
        """A traced condition as the boolean scalar tensor torch wants."""
        if not isinstance(flag, self.tensor_type()):
            if is_symbolic(flag):
                return torch.scalar_tensor(flag, dtype=torch.bool) if type(flag) in (bool, torch.SymBool) else \
                    torch.scalar_tensor(flag) != 0
            return torch.tensor(bool(flag))
        if flag.numel() != 1:
            # What `bool()` of the tensor says in unconverted code.
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if flag.dim() != 0:
            flag = flag.reshape(())
        return flag if flag.dtype == self.dtype("bool") else flag != 0

    def stage_cond(self, pred, branches):
        if self.compiling():
            return self.dynamo_cond(pred, branches)
        return export.stage_cond(self, pred, branches)

    def stage_loop(self, loop):
        if self.compiling():
            return self.dynamo_loop(loop)
        return export.stage_loop(self, loop)

    def entering(self, loop):
        """`loop.init()`, after erasing the values that an earlier attempt made
        for it and that this one does not use (a type widened)."""
        init = tuple(loop.init())
        self.discard(loop.memo.get("init", ()), init + tuple(loop.leaves))
        loop.memo["init"] = init
        return init

    def discard(self, values, kept=()):
        """Erases the operations that made the traced tensors among `values`
        (but those in `kept`) from the graph: torch.export keeps every
        operation. (The loop's test ran once before the loop, to tell that
        it is traced; the while_loop runs it again.)"""
        for value in values:
            if self.is_traced(value) and not [k for k in kept if k is value]:  # (no builtins.any: a guard each)
                if self.compiling():
                    self.erase_traced(value)
                else:
                    graphs.erase_value(value)

    def flatten(self, value):
        if isinstance(value, self.tensor_type()) or self.is_scalar(value) or isinstance(value, Undefined):
            return [value], None  # a value that is its own only leaf (values.flatten gives a Treedef)
        return super().flatten(value)

    def unflatten(self, treedef, leaves):
        if treedef is None:
            return leaves[0]
        return super().unflatten(treedef, leaves)

    def zeros(self, shape, dtype):
        return torch.zeros(shape, dtype=dtype)

    def buffer_write(self, buffer, index, value):
        index = torch.as_tensor(index, dtype=torch.int64).reshape(1)
        return torch.index_copy(buffer, 0, index, value.unsqueeze(0))

    def logical_not(self, value):
        return self.number(torch.logical_not(value))  # `not x` is a Python bool

    def logical_and(self, a, b):
        return torch.logical_and(a, b)

    def logical_or(self, a, b):
        return torch.logical_or(a, b)

    def counted(self, iterable):
        if type(iterable) is TorchRange:
            return staging.Counted(iterable.start, iterable.stop, iterable.step, lambda i: i,
                                   self.over_range())
        return NotImplemented

    def print_(self, *args, sep=" ", end="\n", **kwargs):
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        # torch's print operator fails export's checks inside a cond or
        # while_loop body; there the print runs once, while tracing.
        if kwargs or not end.endswith("\n") or not self.compiling() and export.depth() \
                or not builtins.any(self.is_traced(a) for a in args):
            return builtins.print(*args, sep=sep, end=end, **kwargs)
        compat.print_op(_template(args, sep, end), *[a for a in args if isinstance(a, torch.Tensor)])
        return None

    def assert_(self, test, msg_fn):
        concrete = self.concrete(test)
        if concrete is not None:
            return Backend.assert_(self, concrete, msg_fn)
        loc = self.location()
        message = msg_fn() if msg_fn is not None else f"assertion failed ({loc})"
        compat.assert_async(self.predicate(test, "an `assert`", loc), str(message))
        return None

    def check(self, ok, error):
        # torch's run-time check raises a RuntimeError: its message names the error.
        compat.assert_async(ok, f"{type(error).__name__}: {error}")
        return None

    def stack(self, values, axis):
        if "torch" not in sys.modules:
            return NotImplemented
        _load()
        if not builtins.any(isinstance(v, torch.Tensor) for v in values):
            return NotImplemented
        return torch.stack([v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for v in values], dim=axis)

    def builtin(self, func):
        return _BUILTINS.get(func)

    def function_arguments(self, f):
        if "torch" not in sys.modules:
            return None
        _load()
        return _TRANSFORMS.get(f)


def _adopt(cls, *groups):
    """Copies into `cls` the methods and attributes of the classes `groups`
    (each a group of the backend's methods, in a module of its own) that it
    does not define itself. Not bases: dynamo guards, for each method it
    looks up on the backend, that no class before the one that defines it
    in the MRO defines it too (30 guards on every call of a compiled
    function, with these four as bases)."""
    for group in groups:
        for name, value in vars(group).items():
            if not (name.startswith("__") and name.endswith("__")) and name not in vars(cls):
                setattr(cls, name, value)


_adopt(TorchBackend, DynamoStaging, Aliasing, Numbers, Indexing)
