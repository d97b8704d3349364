"""Which `for` loops over a Python `range` may be staged as one loop while a
backend traces (runtime/static_ranges.py): those whose body only computes,
so that running it once, traced, gives what running it once per item
gives. Read by fast_paths on the body function that control_flow made:

    for i in range(len(x)):                 def loop_body(i, acc):
        acc = acc * 0.9 + x[i]      -->         acc = acc * 0.9 + ag__.getitem(x, i, 'x')
                                                return acc

is stageable, with the callees `range`, `len` to check when it runs and
`x` indexed by the loop variable on axis 0. The body (the functions nested
in it included):

  * reads the loop variable only as an index, alone or as an item of a
    tuple index (`x[i]`, `w[i, 0]`, `out.at[i]`) of a name: the runtime
    checks that every item of the range is in bounds for that axis, so a
    traced index reads what the Python int reads (no clamping);
  * stores only into names (an item update of a local is functional in
    converted code): no attribute or item of another object, no `global`,
    `nonlocal`, `del`, `yield`, `lambda`;
  * calls only functions named from module level (`jnp.sin`, `len`), which
    the runtime resolves and accepts only from JAX (not `jax.debug`),
    `math` and Python's side-effect-free builtins, and
    methods of a local or computed value whose names are array methods
    (`v.sum()`, `out.at[i].set(v)`, `jnp.tanh(v).sum()`).

Loops that `break` or `return` are not staged this way.
"""

import gast
from autograph.converters.base import is_runtime

__all__ = ["stageable"]

# Methods of an array, and of its `.at[...]`, that compute (no list's
# `append`, no dict's `update`).
_METHODS = frozenset({
    "all", "any", "argmax", "argmin", "astype", "clip", "conj", "conjugate", "cumprod", "cumsum", "diagonal",
    "dot", "flatten", "max", "mean", "min", "prod", "ravel", "repeat", "reshape", "round", "squeeze", "std", "sum",
    "swapaxes", "take", "trace", "transpose", "var",
    "set", "add", "subtract", "multiply", "divide", "power", "get",
})
_ATTRIBUTES = frozenset({"T", "at", "real", "imag", "mT"})


def stageable(call, body_fn, ag, local_names):
    """For `call`, control_flow's `ag__.for_stmt(...)` call of a loop without
    a `break` or `return` flag, whose body function is `body_fn` and whose
    enclosing function binds `local_names`: (callees, indexed) if it loops
    over `range(...)`, sets no loop options, and its body only computes,
    else None. `callees`: the dotted names of the module-level functions it
    calls; `indexed`: the (name, axis) pairs that its loop variable indexes."""
    source = call.args[0]
    if not isinstance(source, gast.Call) or _dotted(_callee(source, ag)) != "range" \
            or len(call.args) > 5 or not isinstance(call.args[4], gast.Tuple):
        return None
    names = [e.value for e in call.args[4].elts]
    item = body_fn.args.args[0].id if body_fn.args.args else None
    if item is None or item in names:
        return None
    nodes = list(gast.walk(body_fn))
    parents = {id(child): node for node in nodes for child in gast.iter_child_nodes(node)}
    local = set(local_names)
    for node in nodes:
        if isinstance(node, gast.FunctionDef):
            local.update(a.id for a in node.args.args)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            local.add(node.id)
    callees, indexed = set(), set()
    for node in nodes:
        if isinstance(node, (gast.Global, gast.Nonlocal, gast.Delete, gast.Yield, gast.YieldFrom, gast.Lambda,
                             gast.Await, gast.ClassDef)):
            return None
        if isinstance(node, (gast.Attribute, gast.Subscript)) and not isinstance(node.ctx, gast.Load):
            return None
        if isinstance(node, gast.Name) and node.id == item and node is not body_fn.args.args[0]:
            axis = _index_of(node, parents, ag)
            if axis is None:
                return None
            indexed.add(axis)
        if isinstance(node, gast.Call):
            callee = _callee(node, ag)
            if callee is None:
                continue  # an operator of the runtime
            if callee is False:
                return None
            dotted = _dotted(callee)
            if dotted is not None and dotted.split(".")[0] not in local:
                callees.add(dotted)
            elif not _method(callee, local, ag):
                return None
    return tuple(sorted(callees)), tuple(sorted(indexed))


def _callee(call, ag):
    """What `call` calls: None for an operator of the runtime, the callee of
    `ag__.call(f)(...)`, False for a call of anything else."""
    if is_runtime(call.func, ag):
        return None
    if isinstance(call.func, gast.Call) and is_runtime(call.func.func, ag, "call") and len(call.func.args) == 1:
        return call.func.args[0]
    return False


def _dotted(node):
    """`a.b.c` as text, or None for any other expression."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


def _method(node, local, ag):
    """True for an array method of a local or computed value: `v.sum`,
    `out.at[i].set`, `jnp.tanh(v).sum` (the inner call is checked on its own)."""
    if not (isinstance(node, gast.Attribute) and node.attr in _METHODS):
        return False
    node = node.value
    while True:
        if isinstance(node, gast.Name):
            return node.id in local
        if isinstance(node, gast.Attribute):
            if node.attr not in _ATTRIBUTES:
                return False
            node = node.value
        elif isinstance(node, gast.Subscript):
            node = node.value
        elif isinstance(node, gast.Call) and is_runtime(node.func, ag, "getitem") and node.args:
            node = node.args[0]
        else:
            return isinstance(node, (gast.Call, gast.BinOp, gast.UnaryOp))


def _index_of(name, parents, ag):
    """(object name, axis) where the loop variable `name` is an index of a
    name (`x[i]`, `x[j, i]`, `ag__.getitem(x, i, 'x')`, `x.at[i]`), else None."""
    parent, position = parents.get(id(name)), 0
    if isinstance(parent, gast.Tuple):
        if any(isinstance(e, gast.Starred) or (isinstance(e, gast.Constant) and e.value in (None, Ellipsis))
               for e in parent.elts):
            return None
        position = next(k for k, e in enumerate(parent.elts) if e is name)
        name, parent = parent, parents.get(id(parent))
    if isinstance(parent, gast.Subscript) and parent.slice is name:
        target = parent.value
    elif isinstance(parent, gast.Call) and (is_runtime(parent.func, ag, "getitem")
                                            or is_runtime(parent.func, ag, "setitem")) \
            and len(parent.args) >= 2 and parent.args[1] is name:
        target = parent.args[0]
    else:
        return None
    if isinstance(target, gast.Attribute) and target.attr == "at":  # `x.at[i]`: x's own axes
        target = target.value
    return (target.id, position) if isinstance(target, gast.Name) else None
