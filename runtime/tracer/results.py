"""What a compiled graph hands back to its caller.

Eager numpy makes a new array for every `np.zeros(3)` and every `x + 1`,
so a caller may write into a result without changing anything else. A
compiled graph keeps its constants between calls, and its passes merge
equal values (`x + 1, x + 1` becomes one value), so a result could be a
buffer the next call returns again, or the same buffer as another result.
`protect_results` adds a copy for exactly those results:

  * a result that may share memory with a constant array of the graph;
  * a result that may share memory with an earlier result where the traced
    graph (the ops the user's code ran, as eager numpy runs them) did not.

A result that is an input, or a view of one, stays so: eager code returns
the caller's own object there too.

Sharing is over-approximated by *roots*: the buffers a value may view. An
op known to allocate its result (a ufunc, a cast, a copy, a reduction, ...)
makes a root of its own; any other op may return a view of its inputs.
"""

import numpy as np
from autograph.runtime.tracer import inplace
from autograph.runtime.tracer.graph import Node
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["copy_result", "protect_results"]


def copy_result(value):
    """A copy of an array result (numpy scalars are immutable: as they are)."""
    return value.copy() if isinstance(value, np.ndarray) else value


def _impl(func):
    return getattr(func, "_implementation", func)


# Functions whose result never views their array arguments.
_ALLOCATING = {_impl(f) for f in (
    np.sum, np.mean, np.max, np.min, np.prod, np.any, np.all, np.argmax, np.argmin, np.dot,
    np.vdot, np.inner, np.outer, np.tensordot, np.cross, np.kron, np.concatenate, np.stack,
    np.vstack, np.hstack, np.dstack, np.column_stack, np.zeros_like, np.ones_like,
    np.full_like, np.empty_like, np.clip, np.cumsum, np.cumprod, np.copy, np.sort, np.argsort,
    np.std, np.var, np.median, np.percentile, np.quantile, np.trace, np.tril, np.triu,
    np.repeat, np.take, np.take_along_axis, np.count_nonzero, np.isclose, np.interp,
    np.convolve, np.linalg.norm, np.linalg.inv, np.linalg.det, np.linalg.solve, np.linalg.pinv,
    np.linalg.cholesky, np.linalg.eigh, np.linalg.qr, np.linalg.svd, np.linalg.slogdet,
    copy_result, inplace.setitem_impl)}


def _allocates(node, out):
    if out.weak:
        return True
    fn = node.fn
    if isinstance(fn, np.ufunc) or node.name == "astype":
        return True
    if node.name == "getitem":
        return out.static_shape == () and node.args[1] is not Ellipsis and not isinstance(node.args[1], tuple)
    return _impl(fn) in _ALLOCATING


_KEPT = "kept"


def _roots(graph, values):
    """{value: frozenset of roots} for `values` of `graph`. A root is a
    node id (a buffer the node made), ("input", i) or (_KEPT, id) for a
    constant array, which the graph keeps between calls."""
    roots = {}

    def r(v):
        return roots.get(v, frozenset()) if type(v) is SymbolicArray else frozenset()

    def union(vs):
        return frozenset().union(*(r(v) for v in vs))

    def forward(block):
        for node in block.nodes:
            kind = node.kind
            if kind == "const":
                value = node.attrs["value"]
                kept = isinstance(value, np.ndarray) and value.ndim > 0
                roots[node.outputs[0]] = frozenset([(_KEPT, node.id)]) if kept else frozenset()
            elif kind == "placeholder" or kind == "param":
                pass
            elif kind == "cond":
                for b in node.blocks:
                    forward(b)
                for i, out in enumerate(node.outputs):
                    roots[out] = union(b.outputs[i] for b in node.blocks)
            elif kind == "while":
                params = node.attrs["params"]
                for p, a in zip(params, node.args, strict=True):
                    roots[p] = r(a)
                while True:
                    for b in node.blocks:
                        forward(b)
                    new = [roots[p] | r(out) for p, out in zip(params, node.blocks[1].outputs, strict=True)]
                    if all(n == roots[p] for n, p in zip(new, params, strict=True)):
                        break
                    for p, n in zip(params, new, strict=True):
                        roots[p] = n
                for out, p in zip(node.outputs, params, strict=True):
                    roots[out] = roots[p]
            else:
                setitem = node.fn is inplace.setitem_impl
                for out in node.outputs:
                    if setitem:
                        # Done in place only on a buffer the graph made in this call.
                        made = frozenset(x for x in r(node.args[0]) if type(x) is int)
                        roots[out] = made | {node.id}
                    elif _allocates(node, out):
                        roots[out] = frozenset([node.id])
                    else:
                        roots[out] = union(node.inputs()) or frozenset([node.id])

    for i, p in enumerate(graph.params):
        roots[p] = frozenset([("input", i)])
    forward(graph)
    return [r(v) for v in values]


def _shares(roots):
    """Pairs (i, j), i < j, of results whose roots meet."""
    owners = {}
    pairs = set()
    for j, rs in enumerate(roots):
        for root in rs:
            for i in owners.get(root, ()):
                pairs.add((i, j))
            owners.setdefault(root, []).append(j)
    return pairs


def protect_results(reference, reference_outputs, graph):
    """Makes `graph.outputs` (the optimized form of `reference_outputs`,
    values of the graph `reference`) safe to hand to the caller: adds a copy
    node for each result that needs one (see the module docstring)."""
    outputs = graph.outputs
    roots = _roots(graph, outputs)
    wanted = {j for j, rs in enumerate(roots) if any(type(x) is tuple and x[0] == _KEPT for x in rs)}
    new_pairs = _shares(roots)
    if new_pairs:
        new_pairs -= _shares(_roots(reference, reference_outputs))
        wanted.update(j for _, j in new_pairs)
    if not wanted:
        return graph
    separate = {j for _, j in new_pairs}
    copies = {}
    result = list(outputs)
    for j in sorted(wanted):
        v = outputs[j]
        if type(v) is not SymbolicArray or v.weak:
            continue
        if v in copies and j not in separate:
            result[j] = copies[v]   # the same value twice, as in the traced graph
            continue
        node = Node("op", "copy", copy_result, (v,))
        node.block = graph
        out = SymbolicArray(node, 0, v.static_shape, v.dtype, False, v.name)
        node.outputs.append(out)
        graph.nodes.append(node)
        copies.setdefault(v, out)
        result[j] = out
    graph.outputs = result
    return graph
