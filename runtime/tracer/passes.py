"""Graph passes run before a graph runs: constant folding, common-subexpression
elimination and dead-code elimination. Each rewrites a graph in place."""

import warnings

import numpy as np
from autograph.runtime.tracer import trees
from autograph.runtime.tracer.graph import Node
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = [
    "eliminate_common_subexpressions",
    "eliminate_dead_code",
    "fold_constants",
    "optimize",
    "used_values",
]

#: Largest array (in elements) that constant folding stores in a graph.
FOLD_LIMIT = 100_000

_SHAPE_ONLY = {getattr(f, "_implementation", f) for f in
               (np.zeros_like, np.ones_like, np.full_like, np.empty_like)}


def optimize(graph):
    """All passes, in order: fold constants, CSE, DCE."""
    fold_constants(graph)
    eliminate_common_subexpressions(graph)
    eliminate_dead_code(graph)
    return graph


def used_values(graph):
    """Every value that some node or block output reads."""
    used = set(graph.outputs)
    for node in graph.walk():
        used.update(node.inputs())
        for b in node.blocks:
            used.update(v for v in b.outputs if type(v) is SymbolicArray)
    return used


# Dead-code elimination.

def eliminate_dead_code(graph):
    """Removes nodes whose outputs are never used and that have no effect
    (print, assert, py_function); prunes unused outputs of `cond` nodes."""
    live = set(graph.outputs)
    _dce(graph, live)
    return graph


def _dce(block, live):
    kept = []
    for node in reversed(block.nodes):
        effect = node.has_effect()
        if not effect and not any(o in live for o in node.outputs):
            continue
        if node.kind == "cond":
            keep = [i for i, o in enumerate(node.outputs) if o in live]
            node.outputs = [node.outputs[i] for i in keep]
            for b in node.blocks:
                b.outputs = [b.outputs[i] for i in keep]
        elif node.kind == "while":
            live.update(node.attrs["params"])
        for b in reversed(node.blocks):
            live.update(b.outputs)
            _dce(b, live)
        live.update(node.inputs())
        kept.append(node)
    kept.reverse()
    block.nodes = kept


# Common-subexpression elimination.

def _const_key(obj):
    t = type(obj)
    if t in (bool, int, float, complex, str, type(None)):
        return (t, obj)
    if isinstance(obj, np.ndarray):
        if obj.size <= 1024:
            return ("array", obj.dtype.str, obj.shape, obj.tobytes())
        return ("id", id(obj))
    if isinstance(obj, np.generic):
        return ("scalar", obj.dtype.str, obj.tobytes())
    if isinstance(obj, np.dtype):
        return ("dtype", obj.str)
    try:
        hash(obj)
        return (t, obj)
    except TypeError:
        return ("id", id(obj))


def _tree_key(obj):
    t = type(obj)
    if t is SymbolicArray:
        return ("v", id(obj))
    if t is tuple or t is list:
        return (t.__name__,) + tuple(_tree_key(x) for x in obj)
    if t is dict:
        return ("dict",) + tuple((k, _tree_key(v)) for k, v in obj.items())
    if t is slice:
        return ("slice", _tree_key(obj.start), _tree_key(obj.stop), _tree_key(obj.step))
    return _const_key(obj)


def _node_key(node):
    if node.kind == "const":
        return ("const", _const_key(node.attrs["value"]), node.outputs[0].weak)
    if node.kind == "op" and not node.effect:
        return ("op", id(node.fn), node.name, _tree_key(node.args), _tree_key(node.kwargs))
    return None


def eliminate_common_subexpressions(graph):
    """Replaces a pure node by an earlier equal one (same function, same
    inputs, same constants) visible in its scope."""
    replace = {}
    _cse(graph, {}, replace)
    graph.outputs = [replace.get(v, v) for v in graph.outputs]
    return graph


def _substitute(node, replace):
    if not replace:
        return

    def sub(v):
        return replace.get(v, v) if type(v) is SymbolicArray else v

    node.args = trees.map_leaves(sub, node.args)
    node.kwargs = trees.map_leaves(sub, node.kwargs)


def _cse(block, table, replace):
    """`table`: {key: node} of the nodes visible here; entries this block
    adds are removed when it ends (one table for the whole graph)."""
    kept, added = [], []
    for node in block.nodes:
        _substitute(node, replace)
        for b in node.blocks:
            _cse(b, table, replace)
        key = _node_key(node)
        if key is not None:
            previous = table.get(key)
            if previous is not None and len(previous.outputs) == len(node.outputs):
                for o, p in zip(node.outputs, previous.outputs, strict=True):
                    replace[o] = p
                continue
            table[key] = node
            added.append((key, previous))
        kept.append(node)
    block.nodes = kept
    block.outputs = [replace.get(v, v) for v in block.outputs]
    if block.parent is not None:
        for key, previous in reversed(added):
            if previous is None:
                del table[key]
            else:
                table[key] = previous


# Constant folding.

def fold_constants(graph):
    """Evaluates pure nodes whose inputs are all constants (and `zeros_like`
    and friends of statically shaped values) into constants; replaces a
    `cond` whose predicate is constant by the branch it takes."""
    replace = {}
    _fold(graph, {}, replace)
    graph.outputs = [replace.get(v, v) for v in graph.outputs]
    return graph


def _as_const_node(value, result, block):
    node = Node("const", "constant", attrs={"value": result})
    node.block = block
    value.node = node
    value.index = 0
    node.outputs.append(value)
    return node


def _evaluate(node, known):
    ins = node.inputs()
    if node.fn in _SHAPE_ONLY and ins and ins[0] not in known and None not in ins[0].static_shape:
        first = ins[0]
        stand_in = {first: np.zeros(first.static_shape, first.dtype)}
        if not all(v in known or v is first for v in ins):
            return None
    elif all(v in known for v in ins):
        stand_in = {}
    else:
        return None

    def value(v):
        if type(v) is not SymbolicArray:
            return v
        return known[v] if v in known else stand_in[v]

    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = node.fn(*trees.map_leaves(value, node.args),
                             **trees.map_leaves(value, node.kwargs))
    except Exception:
        return None
    results = list(result) if node.attrs.get("multi") or len(node.outputs) > 1 else [result]
    if len(results) != len(node.outputs):
        return None
    if any(np.size(r) > FOLD_LIMIT for r in results):
        return None
    return results


def _drop_passthrough(node, replace):
    """Removes the outputs of a `cond` that both branches give as the same
    value (defined before the `cond`): uses of them read that value. True
    if the node has no outputs left."""
    keep = []
    t, f = node.blocks
    for i, out in enumerate(node.outputs):
        a, b = t.outputs[i], f.outputs[i]
        a, b = replace.get(a, a), replace.get(b, b)
        if a is b:
            replace[out] = a
        else:
            keep.append(i)
    if len(keep) != len(node.outputs):
        node.outputs = [node.outputs[i] for i in keep]
        for blk in node.blocks:
            blk.outputs = [blk.outputs[i] for i in keep]
        for j, out in enumerate(node.outputs):
            out.index = j
    return not node.outputs


def _fold(block, known, replace):
    kept = []
    for node in block.nodes:
        _substitute(node, replace)
        if node.kind == "const":
            known[node.outputs[0]] = node.attrs["value"]
        elif node.kind == "op" and not node.effect:
            results = _evaluate(node, known)
            if results is not None:
                for v, r in zip(node.outputs, results, strict=True):
                    kept.append(_as_const_node(v, r, block))
                    known[v] = r
                continue
        elif node.kind == "cond" and _drop_passthrough(node, replace) and not node.has_effect() \
                and not any(b.nodes for b in node.blocks):
            continue  # both branches give the same values and compute nothing
        elif node.kind == "cond" and node.args[0] in known:
            taken = node.blocks[0] if known[node.args[0]] else node.blocks[1]
            _fold(taken, known, replace)
            for inner in taken.nodes:
                inner.block = block
                kept.append(inner)
            for o, v in zip(node.outputs, taken.outputs, strict=True):
                replace[o] = replace.get(v, v)
            continue
        for b in node.blocks:
            _fold(b, known, replace)
        kept.append(node)
    block.nodes = kept
    block.outputs = [replace.get(v, v) for v in block.outputs]
