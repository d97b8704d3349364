"""Dead-code elimination, common-subexpression elimination, constant folding."""

import autograph.runtime as ag__
import numpy as np
from autograph.runtime import tracer
from autograph.runtime.tracer import passes
from autograph.runtime.tracer.compiler import compile_graph


def names(g):
    return [n.name for n in g.walk()]


def test_dead_code_elimination_keeps_effects():
    with tracer.Graph("g") as g:
        x = g.placeholder((2,), "float64", "x")
        unused = np.exp(x) * 3
        ag__.call(print)("x", x)
        y = x + 1
    g.outputs = [y]
    assert names(g) == ["exp", "multiply", "print", "add"]
    passes.eliminate_dead_code(g)
    assert names(g) == ["print", "add"]
    del unused


def test_dead_code_elimination_prunes_unused_cond_outputs():
    with tracer.Graph("g") as g:
        x = g.placeholder((), "float64", "x")
        a, b = ag__.if_stmt(x > 0, lambda: (x + 1, np.sin(x)), lambda: (x - 1, np.cos(x)), (),
                            ("a", "b"))
    g.outputs = [a]
    passes.eliminate_dead_code(g)
    assert names(g) == ["greater", "cond", "add", "subtract"]
    assert compile_graph(g)(2.0) == (3.0,)


def test_common_subexpression_elimination():
    with tracer.Graph("g") as g:
        x = g.placeholder((3,), "float64", "x")
        a = np.exp(x) + 1
        b = np.exp(x) + 1
        c = np.exp(x) + 2
    g.outputs = [a, b, c]
    passes.eliminate_common_subexpressions(g)
    assert names(g) == ["exp", "add", "add"]
    assert g.outputs[0] is g.outputs[1]
    out = compile_graph(g)(np.zeros(3))
    np.testing.assert_array_equal(out[1], [2, 2, 2])
    np.testing.assert_array_equal(out[2], [3, 3, 3])


def test_cse_does_not_merge_effects():
    with tracer.Graph("g") as g:
        x = g.placeholder((), "float64", "x")
        ag__.call(print)(x)
        ag__.call(print)(x)
    passes.optimize(g)
    assert names(g) == ["print", "print"]


def test_cse_reuses_outer_value_inside_branch_but_not_the_reverse():
    with tracer.Graph("g") as g:
        x = g.placeholder((), "float64", "x")
        e = np.exp(x)
        y = ag__.if_stmt(x > 0, lambda: np.exp(x) * 2, lambda: np.sin(x), (), ("y",))
        z = np.sin(x)
    g.outputs = [e, y, z]
    passes.eliminate_common_subexpressions(g)
    # exp inside the branch is the outer exp; sin after the if is not the branch's sin.
    assert names(g) == ["exp", "greater", "cond", "multiply", "sin", "sin"]


def test_constant_folding():
    with tracer.Graph("g") as g:
        x = g.placeholder((2,), "float32", "x")
        c = tracer.context.constant(np.float32(3))
        d = c * 2 + 1
        z = np.zeros_like(x) + d
        y = x * d
    g.outputs = [y, z]
    passes.optimize(g)
    assert [n.kind for n in g.walk()] == ["const", "const", "op"]
    assert str(g) == (
        "graph g(%x: float32[2]):\n"
        "  %0 = constant(7.0) : float32[]\n"
        "  %1 = constant([7., 7.]) : float32[2]\n"
        "  %2 = multiply(%x, %0) : float32[2]\n"
        "  return %2, %1")
    y_val, z_val = compile_graph(g)(np.ones(2, np.float32))
    assert y_val.dtype == np.float32 and list(y_val) == [7, 7]


def test_constant_folding_inlines_cond_with_constant_predicate():
    with tracer.Graph("g") as g:
        x = g.placeholder((), "float64", "x")
        p = tracer.context.constant(np.bool_(True))
        y = ag__.if_stmt(p, lambda: x + 1, lambda: x - 1, (), ("y",))
    g.outputs = [y]
    passes.optimize(g)
    assert names(g) == ["add"]
    assert compile_graph(g)(1.0) == (2.0,)


def test_passes_run_before_a_function_runs():
    from autograph.traced_function import function

    def f(x):
        unused = np.exp(x)  # noqa: F841
        return np.sin(x) + np.sin(x) + np.ones_like(x)

    c = function(f, autograph=False).get_concrete_function(np.ones(2))
    assert [n.name for n in c.graph.walk()] == ["sin", "add", "constant", "add"]
    assert [n.name for n in c.traced_graph.walk()] == ["exp", "sin", "sin", "add", "ones_like",
                                                       "add"]
