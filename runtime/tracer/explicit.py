"""The explicit-graph flow (TensorFlow 1 style): a `Graph` that code is
traced into inside `with graph:`, with placeholders, and `Graph.run`, which
fetches values of the graph, feeding its placeholders or any other of its
values (a fed value replaces the computed one, as in TensorFlow 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from autograph.runtime.tracer import context, passes, trees
from autograph.runtime.tracer import graph as ir
from autograph.runtime.tracer.casting import cast
from autograph.runtime.tracer.compiler import compile_graph
from autograph.runtime.tracer.errors import TracingError
from autograph.runtime.tracer.graph import format_type
from autograph.runtime.tracer.results import protect_results
from autograph.runtime.tracer.symbolic import SymbolicArray

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

__all__ = ["Graph", "run_fetches"]


class Graph(ir.Graph):
    """A graph to trace into explicitly:

        with Graph() as g:
            x = g.placeholder((), "float64")
            y = converted(x)
        g.run(y, {x: 9.0})
    """

    def __enter__(self) -> Graph:
        context.push_graph(self)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        context.pop_graph(self)
        return False

    def placeholder(self, shape: Sequence[int | None], dtype: DTypeLike, name: str | None = None) -> SymbolicArray:
        """A new graph input of the given static shape (None for unknown
        dimensions) and dtype."""
        return context.placeholder(self, shape, dtype, name)

    def run(self, fetches: Any, feed_dict: Mapping[SymbolicArray, Any] | None = None) -> Any:
        """Computes `fetches` (a symbolic value or nested containers of them)
        with placeholders, or other values of the graph, fed from
        `feed_dict` {value: array}."""
        return run_fetches(self, fetches, feed_dict or {})


def run_fetches(graph, fetches, feed_dict):
    """`Graph.run`: computes the symbolic values in `fetches` (nested
    containers allowed) with values fed from `feed_dict`: placeholders, or
    any other value of the graph, which the fed value then replaces (as in
    TensorFlow 1)."""
    if graph.active:
        raise TracingError("Graph.run must be called after the `with graph:` block has exited")
    for key in feed_dict:
        _check_member(graph, key, "feed_dict key")
    wanted = [v for v in trees.leaves(fetches) if type(v) is SymbolicArray]
    for v in wanted:
        _check_member(graph, v, "fetch")
    params = set(graph.params)
    fed = [v for v in feed_dict if v not in params]
    key = (tuple(id(v) for v in wanted), tuple(id(v) for v in fed), sum(1 for _ in graph.walk()))
    cache = graph.__dict__.setdefault("_run_cache", {})
    entry = cache.get(key)
    if entry is None:
        clone, mapping = graph.clone()
        clone.outputs = [mapping[v] for v in wanted]
        if fed:
            _replace_by_inputs(clone, [mapping[v] for v in fed])
        passes.optimize(clone)
        protect_results(graph, wanted, clone)
        used = passes.used_values(clone)
        inputs = graph.params + fed
        needed = [p for p, q in zip(inputs, clone.params, strict=True) if q in used]
        entry = cache[key] = (compile_graph(clone), needed, inputs)
    compiled, needed, inputs = entry
    feeds = []
    for p in inputs:
        if p in feed_dict:
            feeds.append(_feed(p, feed_dict[p]))
        elif any(p is q for q in needed):
            raise TracingError(f"placeholder {p.name or ''} ({p!r}) must be fed to compute the fetches")
        else:
            feeds.append(None)
    results = iter(compiled(*feeds))
    return trees.map_leaves(lambda v: next(results) if type(v) is SymbolicArray else v, fetches)


def _graph_of(value):
    block = value.node.block
    while block is not None and block.parent is not None:
        block = block.parent
    return block


def _check_member(graph, value, what):
    """Raises unless `value` is a value of `graph` that Graph.run can use."""
    if type(value) is not SymbolicArray:
        raise TypeError(f"{what} {value!r} is not a symbolic value: feed_dict keys and fetches are "
                        f"placeholders or other values of graph {graph.name!r}")
    owner = _graph_of(value)
    if owner is not graph:
        where = f"graph {owner.name!r}" if owner is not None else "no graph"
        raise ValueError(f"{what} {_describe(value)} is a value of {where}, not of graph "
                         f"{graph.name!r} that is being run")
    if value.node.block is not graph:
        raise ValueError(f"{what} {_describe(value)} is computed inside the {value.node.block.label} of a "
                         "symbolic `if` or loop; fetch or feed values of the graph's top level "
                         "(outputs of the `if` or loop)")


def _describe(value):
    return f"{value.name!r} ({value!r})" if value.name else repr(value)


def _replace_by_inputs(graph, values):
    """Makes each of `values` a new input of `graph`: every use reads the input."""
    replace = {}
    for v in values:
        q = context.placeholder(graph, v.static_shape, v.dtype, v.name)
        q.weak = v.weak
        replace[v] = q

    def sub(x):
        return replace.get(x, x) if type(x) is SymbolicArray else x

    for node in graph.walk():
        node.args = trees.map_leaves(sub, node.args)
        node.kwargs = trees.map_leaves(sub, node.kwargs)
        for b in node.blocks:
            b.outputs = [sub(x) for x in b.outputs]
    graph.outputs = [sub(x) for x in graph.outputs]


def _feed(value, fed):
    """`fed` as the run-time value of `value` (a placeholder or another value)."""
    name = f"{'placeholder' if value.node.kind == 'placeholder' else 'value'} {value.name!r}" if value.name \
        else "a placeholder" if value.node.kind == "placeholder" else "a value"
    array = cast(fed, value.dtype, f"the value fed to {name} ({format_type(value)})")
    shape = value.static_shape
    if array.ndim != len(shape) or any(d is not None and d != a for d, a in zip(shape, array.shape, strict=True)):
        raise ValueError(
            f"cannot feed a value of shape {array.shape} to a placeholder of shape "
            f"({', '.join('None' if d is None else str(d) for d in shape)})")
    return array.item() if value.weak else array
