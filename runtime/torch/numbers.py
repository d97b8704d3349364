"""Which tensors stand for Python numbers while torch traces converted code.

A variable that held an int, float or bool before a staged `if` or loop
holds a 0-d tensor after it, which the torch backend marks as standing for
the number (`Numbers.number`): `steps += 1` on it makes a new
tensor, as Python makes a new int, where `+=` on any other tensor changes
it in place, as in eager code.

What Python's arithmetic makes from numbers is a number as well, so a
tensor that arithmetic makes from such tensors and Python numbers only
(`n = steps * 2`, `-steps`, `steps > 1`) stands for a number too. One that
a tensor of the user's took part in (`steps + x.sum()`), or that torch made
(`torch.tensor(steps)`), is a tensor in the unconverted function as well.

That is decided when it is asked (on `+=`, a staged statement's types, a
body's copies), from the graph that torch is tracing: `derived` walks back
from the tensor's node through the arithmetic that made it to marked
nodes. No operation is watched as it runs, and nothing is added to the
graph. Under dynamo the walk runs outside the trace (dynamo_trace.py);
under torch.export's non-strict mode `node_of` finds the node.

The backend's methods that mark and tell such tensors are the mixin
`Numbers`. Nothing here imports torch: these run only while torch traces.
"""

import sys

from autograph.runtime.torch import compat

__all__ = ["MARK", "NUMBERS", "Numbers", "arithmetic", "derived", "is_symbolic", "node_of"]

NUMBERS = (bool, int, float)

# What Python does to numbers, as torch traces it: the operators (dynamo's
# graph calls the functions of module `operator`, and tensor methods, the
# graph of torch.export's non-strict mode calls aten's operators), `abs`,
# `min` and `max`, `not` (autograph's logical_not).
_OPERATIONS = {
    "add", "sub", "rsub", "mul", "truediv", "div", "true_divide", "floordiv", "floor_divide", "mod",
    "remainder", "pow", "neg", "pos", "positive", "abs", "invert", "bitwise_not", "and_", "or_", "xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift", "bitwise_left_shift",
    "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge", "not_", "logical_not",
    "maximum", "minimum", "clamp", "clamp_min", "clamp_max",
}
_ARITHMETIC = frozenset(_OPERATIONS | {f"__{name.rstrip('_')}__" for name in _OPERATIONS}
                        | {f"__r{name.rstrip('_')}__" for name in _OPERATIONS})
del _OPERATIONS

#: The key of an fx node's meta that marks it as making a number's stand-in.
MARK = "autograph_number"


def arithmetic(function):
    """True if `function` (a function, an operator, or a method's name) is one
    of Python's operations on numbers."""
    name = function if type(function) is str else getattr(function, "__name__", "")
    return name.split(".")[0] in _ARITHMETIC


def derived(node, lifted=None):
    """True if fx `node` makes what stands for a Python number: a node marked
    (`MARK`), or the 0-d result of Python's arithmetic whose tensor
    operands all stand for numbers (the others being numbers). In the
    unconverted function that is arithmetic on numbers, which gives a
    number; `steps + x.sum()` and `torch.tensor(steps)` give tensors, and
    `+=` changes those in place. `lifted` maps an input of a body's graph
    to the node outside that it stands for."""
    tensor = sys.modules["torch"].Tensor
    pending, seen = [node], set()
    while pending:
        node = pending.pop()
        if node in seen or node.meta.get(MARK):
            continue
        seen.add(node)
        if lifted and node in lifted:
            pending.append(lifted[node])
            continue
        value = _value(node)
        if node.op not in ("call_function", "call_method") or not arithmetic(node.target) \
                or not isinstance(value, tensor) or value.dim():
            return False
        operands = [n for n in node.all_input_nodes if isinstance(_value(n), tensor)]
        if not operands:  # (Python's arithmetic makes a tensor from a tensor; a probe's nodes may be erased)
            return False
        pending.extend(operands)
    return True


def node_of(t):
    """The fx node that makes tensor `t` in the graph that torch.export's
    non-strict mode traces now, or None."""
    mode = compat.get_proxy_mode()
    if mode is None or not compat.has_proxy_slot(t, mode.tracer):
        return None
    return compat.get_proxy_slot(t, mode.tracer).proxy.node


def _value(node):
    """The value that fx `node` gives while it is traced (a fake tensor, ...)."""
    return node.meta.get("val", node.meta.get("example_value"))


def is_symbolic(x):
    """True for a symbolic number (torch.SymBool, SymInt, SymFloat): a
    dimension declared dynamic, or a value that `.item()` gives, under
    `torch.export` (strict or not) or `torch.compile`. Dynamo gives such a
    number the type int, float or bool, and `has_static_value` tells."""
    if type(x) in compat.SYMBOLIC:
        return True
    return type(x) in NUMBERS and compat.torch.compiler.is_dynamo_compiling() and not compat.has_static_value(x)


class Numbers:
    """The torch backend's methods for the tensors that stand for Python
    numbers."""

    __slots__ = ()

    def number(self, t):
        """Marks tensor `t` as standing for a Python number (a variable that held
        an int, float or bool before a staged `if` or loop): `steps += 1` on it
        makes a new tensor, as Python makes a new int, where `+=` on any other
        tensor changes it in place (`augmented`). An attribute, which dynamo
        traces (a lookup by `id()` would make it guard on the frame;
        `markable` lets it set one): `_autograph_number`, written as a literal
        where it is read or set (dynamo guards each read of a module
        constant, on every call of the compiled function). The node that
        makes `t` in the graph being traced is marked too, for
        `derived`."""
        if isinstance(t, self.tensor_type()):
            if self.compiling():
                self.markable(t)
                t._autograph_number = self.graph_token()
            else:
                t._autograph_number = True
                node = node_of(t)
                if node is not None:
                    node.meta[MARK] = True
        return t

    def marked(self, x):
        """True for a tensor that `number` marked in the program being traced.
        Dynamo sets the attribute on the tensors that a compiled function
        returns as well: there it holds the token of the graph that marked it,
        which counts in that graph and, after a graph break, in the rest of the
        function; the tensors of an eager run (no fake tensors) are never
        numbers. `is_number` also tells the tensors that arithmetic made from
        numbers."""
        if not isinstance(x, self.tensor_type()):
            return False
        mark = getattr(x, "_autograph_number", None)
        if mark is None:
            return False
        if self.compiling():
            return mark == self.graph_token() or self.resuming()
        return compat.is_fake(x)

    def is_number(self, x):
        """True for a tensor that stands for a Python number: one that `number`
        marked, or one that Python's arithmetic made from such tensors and
        numbers only (`n = steps * 2`, an int in the unconverted function),
        which `derived` tells; this marks it then."""
        if self.marked(x):
            return True
        if not isinstance(x, self.tensor_type()) or x.dim():
            return False
        if self.compiling():
            return self.mark_derived(x)
        node = node_of(x) if compat.is_fake(x) else None
        # (Without torch functions: a body's capture, export.py, would take the nodes' values for operands.)
        with compat.disable_torch_function():
            if node is None or not derived(node):
                return False
        self.number(x)
        return True

    def copy(self, t):
        """A copy of tensor `t`, standing for a number if `t` does, and then
        marked as `t` is by `mark_views` (`+=` on such a copy, in a body,
        makes a new number, where a view would change in place; `+=` on
        another tensor changes the copy, and `write_back` refuses it)."""
        if not self.is_number(t):
            return t.clone()
        c = self.number(t.clone())
        mark = getattr(t, "_autograph_view", None)
        if mark is not None:
            if self.compiling():
                self.markable(c)
            c._autograph_view = mark
        return c

    def augmented(self, op, plain, target, value):
        # (First: a number on one way through a staged statement may be a view on another.)
        self.refuse_view_output(target)
        if self.is_number(target):  # a new number, as Python makes
            result = plain(target, value)
            return self.number(result) if type(value) in NUMBERS or is_symbolic(value) or self.is_number(value) \
                else result
        return op(target, value)
