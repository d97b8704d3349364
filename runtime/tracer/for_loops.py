"""Which `while_loop` nodes the graph compiler runs as a Python `for`.

A loop whose counter is a Python int counted from `start` by a constant
`step` while `i < stop` becomes `for i in range(start, stop, step)`; one
that reads `x[i]` of one array becomes `for v in x` (or `enumerate(x)`).
"""

import operator

import numpy as np
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["for_form", "pyop"]


def pyop(node):
    return node.attrs.get("pyop", node.fn)


def _inside(value, scope):
    """True if `value` is defined inside `scope` (a loop's block)."""
    if type(value) is not SymbolicArray:
        return False
    block = value.node.block
    return block is not None and scope is not None and scope.encloses(block)


def _const_value(value):
    if type(value) is SymbolicArray:
        node = value.node
        return node.attrs["value"] if node.kind == "const" else None
    return value


class _ForLoop:
    """How a counted `while_loop` node runs as a Python `for`: `form` is
    "iter" (`for v in x`), "enumerate" (`for i, v in enumerate(x)`) or
    "range" (`for i in range(start, stop, step)`)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def for_form(node, used):
    """The `for` form of a `while_loop` node whose loop variable `i` (a
    Python int) is only counted from `start` by a constant `step` while
    `i < stop` (stop loop-invariant), possibly `& more` (a `break` flag),
    and is not used after the loop; None when the loop is not of that form."""
    params = node.attrs["params"]
    scope = node.attrs.get("scope")
    test, body = node.blocks
    if scope is None or not test.outputs or any(n.has_effect() for n in test.nodes):
        return None
    flag = test.outputs[0]
    if type(flag) is not SymbolicArray or flag.node.block is not test or flag.node.kind != "op":
        return None
    cmp, conj, more = flag.node, None, None
    if (pyop(cmp) is operator.and_ or cmp.fn is np.logical_and) and len(cmp.args) == 2 \
            and not cmp.kwargs:
        first, more = cmp.args
        if type(first) is not SymbolicArray or first.node.block is not test \
                or first.node.kind != "op" or type(more) is not SymbolicArray:
            return None
        conj, cmp = cmp, first.node
    op = pyop(cmp)
    if op not in (operator.lt, operator.gt) or cmp.kwargs or len(cmp.args) != 2:
        return None
    counter, stop = cmp.args
    k = next((j for j, p in enumerate(params) if p is counter), None)
    if k is None or not counter.weak or counter.dtype.kind not in "iu" \
            or node.outputs[k] in used or more is counter:
        return None
    if type(stop) is SymbolicArray:
        if stop.static_shape != () or stop.dtype.kind not in "iu" or _inside(stop, scope):
            return None
    elif type(stop) is not int:
        return None
    inc = body.outputs[k]
    if type(inc) is not SymbolicArray or inc.node.block is not body or inc.node.kind != "op":
        return None
    inc = inc.node
    if pyop(inc) is not operator.add or inc.kwargs or len(inc.args) != 2 \
            or inc.args[0] is not counter:
        return None
    step = inc.args[1]
    if type(step) is not int or step == 0 or (step > 0) != (op is operator.lt):
        return None
    for n in test.nodes:
        if n is not cmp and n is not conj and any(v is counter for v in n.inputs()):
            return None
    if conj is not None and sum(1 for n in test.nodes
                                for v in n.inputs() if v is cmp.outputs[0]) != 1:
        return None
    # How the body reads the counter: `x[i]` of one loop-invariant array, or otherwise.
    items, arrays, other = [], set(), False
    for j, out in enumerate(body.outputs):
        if out is counter and j != k:
            other = True
    for n in body.walk():
        if n is inc:
            continue
        for b in n.blocks:
            if any(v is counter for v in b.outputs):
                other = True
        if not any(v is counter for v in n.inputs()):
            continue
        if n.kind == "op" and n.name == "getitem" and n.args[1] is counter \
                and counter is not n.args[0] and len(n.outputs) == 1:
            items.append(n)
            arrays.add(n.args[0])
        else:
            other = True
    # Whether the body reads `i + step` itself (`x[i:i + 1]`): then the `for`
    # computes it too; otherwise the `for` replaces it.
    stepped = inc.outputs[0]
    inc_read = any(v is stepped for n in body.walk() if n is not inc for v in n.inputs()) \
        or any(v is stepped for n in body.walk() for b in n.blocks for v in b.outputs) \
        or any(out is stepped for j, out in enumerate(body.outputs) if j != k)
    start = node.args[k]
    fields = dict(index=k, cmp=cmp, conj=conj, more=more, inc=inc, inc_read=inc_read, start=start, stop=stop,
                  step=step, items=[], array=None)
    if len(arrays) == 1 and step == 1 and _const_value(start) == 0 and type(_const_value(start)) is int:
        (x,) = arrays
        if type(x) is SymbolicArray and not x.weak and x.static_shape and not _inside(x, scope) and (
                (type(stop) is int and x.static_shape[0] == stop)
                or (type(stop) is SymbolicArray and stop.node.kind == "op" and stop.node.fn is len
                    and len(stop.node.args) == 1 and stop.node.args[0] is x)):
            fields.update(items=items, array=x)
            return _ForLoop(form="enumerate" if other else "iter", **fields)
    return _ForLoop(form="range", **fields)
