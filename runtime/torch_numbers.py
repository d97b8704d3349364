"""Which tensors stand for Python numbers while torch traces converted code.

A variable that held an int, float or bool before a staged `if` or loop
holds a 0-d tensor after it, which the torch backend marks as standing for
the number (torch_backend.py, `_number`): `steps += 1` on it makes a new
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
graph. Under dynamo the walk runs outside the trace (torch_dynamo.py);
under torch.export's non-strict mode `node_of` finds the node.

Nothing here imports torch: these run only while torch traces.
"""

import sys

__all__ = ["arithmetic", "derived", "node_of"]

# What Python does to numbers, as torch traces it: the operators (dynamo's
# graph calls the functions of module `operator`, and tensor methods, the
# graph of torch.export's non-strict mode calls aten's operators), `abs`,
# `min` and `max`, `not` (autograph's logical_not).
_ARITHMETIC = {
    "add", "sub", "rsub", "mul", "truediv", "div", "true_divide", "floordiv", "floor_divide", "mod",
    "remainder", "pow", "neg", "pos", "positive", "abs", "invert", "bitwise_not", "and_", "or_", "xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift", "bitwise_left_shift",
    "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge", "not_", "logical_not",
    "maximum", "minimum", "clamp", "clamp_min", "clamp_max",
}
_ARITHMETIC |= {f"__{name.rstrip('_')}__" for name in list(_ARITHMETIC)} \
    | {f"__r{name.rstrip('_')}__" for name in list(_ARITHMETIC)}

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
        pending.extend(n for n in node.all_input_nodes if isinstance(_value(n), tensor))
    return True


def node_of(t):
    """The fx node that makes tensor `t` in the graph that torch.export's
    non-strict mode traces now, or None."""
    from torch.fx.experimental.proxy_tensor import get_proxy_mode, get_proxy_slot, has_proxy_slot
    mode = get_proxy_mode()
    if mode is None or not has_proxy_slot(t, mode.tracer):
        return None
    return get_proxy_slot(t, mode.tracer).proxy.node


def _value(node):
    """The value that fx `node` gives while it is traced (a fake tensor, ...)."""
    return node.meta.get("val", node.meta.get("example_value"))
