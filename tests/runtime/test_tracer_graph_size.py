"""Large graphs compile and run: long unrolled chains, many outputs, long
symbolic `elif` chains (the compiled code stays within the parser's limits
on nesting). Results are compared with eager numpy; timings live in
benchmarks/graph_size.py."""

import contextlib

import numpy as np
from autograph.runtime.tracer import context, passes
from autograph.runtime.tracer.compiler import compile_graph
from autograph.runtime.tracer.explicit import Graph
from autograph.runtime.tracer.graph import Block

from autograph.traced_function import function


def chain(x, n):
    for _ in range(n):
        x = x * 1.001 + 0.5
    return x


def test_unrolled_chain_of_10000_ops_equals_eager():
    f = function(chain)
    for x in (np.float64(1.0), np.linspace(0.0, 1.0, 4)):
        np.testing.assert_array_equal(f(x, 5000), chain(x, 5000))
    concrete = f.get_concrete_function(np.float64(1.0), 5000)
    assert concrete.traced_graph.count_nodes() >= 10_000


def many_outputs(x, n):
    return [x * i + 1.0 for i in range(n)]


def test_10000_outputs_equal_eager():
    f = function(many_outputs)
    x = np.array([1.0, -2.0])
    got, expected = f(x, 10_000), many_outputs(x, 10_000)
    assert len(got) == len(expected) == 10_000
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def _elif_chain_graph(n):
    """The graph of `if x == 0: y = x * 0 elif x == 1: y = x * 1 ... else: y = x`
    (n symbolic branches, each nested in the false branch of the previous),
    built without recursion."""
    with Graph("elif_chain") as g:
        x = g.placeholder((), "int64", "x")
        with contextlib.ExitStack() as scopes:
            levels = []
            for i in range(n):
                pred = x == i
                outer = context.current_block()
                then, other = Block(outer, "true branch"), Block(outer, "false branch")
                with context.block_scope(then):
                    then.outputs = [x * i]
                scopes.enter_context(context.block_scope(other))
                levels.append((scopes.pop_all(), pred, then, other))
            value = x
            for scope, pred, then, other in reversed(levels):
                other.outputs = [value]
                scope.close()
                (value,) = context.emit("cond", "cond", None, (pred,), {}, [((), x.dtype, False)],
                                        blocks=(then, other))
    g.outputs = [value]
    return g, x


def eager_elif_chain(x, n):
    for i in range(n):
        if x == i:
            return x * i
    return x


def test_elif_chain_of_200_branches_compiles_flat_and_equals_eager():
    g, x = _elif_chain_graph(200)
    passes.optimize(g)
    compiled = compile_graph(g, bare=True)
    lines = compiled.source.splitlines()
    assert sum(1 for line in lines if line.lstrip().startswith("elif ")) == 199
    # Nesting does not grow per branch (def, try, if, body).
    assert max(len(line) - len(line.lstrip()) for line in lines) <= 12
    for value in (0, 1, 57, 199, 200, -3):
        v = np.int64(value)
        got = compiled(v)
        assert got == eager_elif_chain(v, 200) and type(got) is type(eager_elif_chain(v, 200))
    # Through Graph.run (clone, passes, compile) as well.
    assert g.run(g.outputs[0], {x: 150}) == 150 * 150


def test_long_chain_keeps_one_intermediate_array_alive():
    # Each statement of the compiled chain reuses the name of the one before
    # (read only there), so the previous array is freed: memory as eager.
    f = function(chain)
    x = np.ones(100_000)
    lines = f.get_concrete_function(x, 200).source.splitlines()
    targets = {line.split(" = ")[0].strip() for line in lines if " = " in line}
    assert len(targets) == 1
    np.testing.assert_array_equal(f(x, 200), chain(x, 200))
