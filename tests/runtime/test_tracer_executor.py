"""The compiled executor: Python operators instead of ufunc calls, item
updates in place when sound, trivial `cond`s folded, outputs as eager."""

import autograph.runtime as ag__
import numpy as np
import pytest
from autograph.runtime import tracer
from autograph.runtime.tracer import inplace, passes

from autograph.tracing import function


def body_lines(concrete):
    return [line.strip() for line in concrete.source.splitlines()[1:]]


# Infix operators.

@pytest.mark.parametrize("a, b", [
    (np.float64(1.5), np.float64(-2.0)),
    (np.int64(7), np.int64(-3)),
    (np.float32(2.5), np.float32(4.0)),
    (np.int8(100), np.int8(27)),
    (np.array([1.0, -2.0]), np.array([3.0, 0.5])),
])
def test_operators_run_as_python_operators_with_ufunc_results(a, b):
    def ops(a, b):
        return (a + b, a - b, a * b, a / b, a // b, a % b, a > b, a <= b, a == b, a != b,
                -a, abs(b), 2 * a, a + 1, 0.5 - b)

    f = function(ops, autograph=False)
    with np.errstate(all="ignore"):  # int8 overflows: eager numpy warns as well
        got = f(a, b)
        expected = (np.add(a, b), np.subtract(a, b), np.multiply(a, b), np.true_divide(a, b),
                    np.floor_divide(a, b), np.remainder(a, b), np.greater(a, b),
                    np.less_equal(a, b), np.equal(a, b), np.not_equal(a, b), np.negative(a),
                    np.absolute(b), np.multiply(2, a), np.add(a, 1), np.subtract(0.5, b))
    for g, e in zip(got, expected):
        assert type(g) is type(e)
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)
    source = f.get_concrete_function(a, b).source
    assert "v2 = v0 + v1" in source and "v8 = v0 > v1" in source
    assert "add_" not in source and "greater_" not in source


def test_python_complex_operand_keeps_the_ufunc():
    # `1j * np.float64(2)` is Python's complex product (a Python complex);
    # the graph's type is numpy's complex128, so the ufunc call stays.
    f = function(lambda x: 1j * x, autograph=False)
    got = f(np.float64(2.0))
    assert type(got) is np.complex128 and got == 2j
    assert "multiply_" in f.get_concrete_function(np.float64(2.0)).source


def test_while_test_is_one_expression():
    def count(n):
        i = 0
        while i < n:
            i += 1
        return i

    f = function(count)
    assert f(np.int64(5)) == 5
    assert "while v2 < v0:" in body_lines(f.get_concrete_function(np.int64(5)))


# Item updates in place.

def fill(x):
    out = np.zeros_like(x)
    i = 0
    for v in x:
        out[i] = v * 2
        i += 1
    return out


def test_item_update_in_a_loop_is_in_place():
    f = function(fill)
    x = np.arange(5.0)
    np.testing.assert_array_equal(f(x), x * 2)
    lines = body_lines(f.get_concrete_function(x))
    # One copy when the loop is entered, then updates in place.
    assert any(line.startswith("v") and "] = " in line and "setitem" not in line
               for line in lines)
    assert not any("setitem_impl" in line for line in lines)
    assert any("array_" in line for line in lines)
    # The folded zeros constant is not written into: a second call agrees.
    np.testing.assert_array_equal(f(x + 1), (x + 1) * 2)
    np.testing.assert_array_equal(f(x), x * 2)


def test_item_update_never_writes_into_an_argument():
    def zero_first(x):
        x[0] = 0.0
        x[1] = 0.0
        return x

    f = function(zero_first)
    x = np.ones(3)
    np.testing.assert_array_equal(f(x), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(x, [1.0, 1.0, 1.0])
    lines = body_lines(f.get_concrete_function(x))
    # The first update copies the argument, the second writes into the copy.
    name = lines[0].split(" = ")[0]
    assert "setitem_impl" in lines[0]
    assert lines[1] == f"{name}[1] = 0.0"


def test_item_update_copies_when_the_old_value_is_still_read():
    with tracer.Graph("g") as g:
        x = g.placeholder((3,), "float64", "x")
        a = ag__.setitem(x, 0, 5.0)
        b = ag__.setitem(a, 1, 7.0)     # `a` is read afterwards: a copy
        c = a + 1.0
    out = g.run([a, b, c], {x: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(out[0], [5.0, 2.0, 3.0])
    np.testing.assert_array_equal(out[1], [5.0, 7.0, 3.0])
    np.testing.assert_array_equal(out[2], [6.0, 3.0, 4.0])
    g.outputs = [b, c]
    plan = inplace.analyze(g)
    assert plan.in_place == set()


def test_item_update_copies_when_a_view_is_still_read():
    with tracer.Graph("g") as g:
        x = g.placeholder((2, 2), "float64", "x")
        a = ag__.setitem(x, (0, 0), 5.0)   # a copy of x
        row = a[0]                         # a view of a
        b = ag__.setitem(a, (0, 1), 7.0)   # row still read: must copy
        s = row + 0.0
    out = g.run([b, s], {x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_array_equal(out[0], [[5.0, 7.0], [3.0, 4.0]])
    np.testing.assert_array_equal(out[1], [5.0, 2.0])


def test_loop_variable_aliased_by_another_is_copied():
    def conv(x):
        def test(i, a, b):
            return i < 3

        def body(i, a, b):
            b = a
            a = ag__.setitem(a, i, 9.0)
            return i + 1, a, b
        i, a, b = ag__.while_stmt(test, body, (np.int64(0), x, x), ("i", "a", "b"))
        return a, b

    a, b = function(conv, autograph=False)(np.zeros(3))
    np.testing.assert_array_equal(a, [9.0, 9.0, 9.0])
    np.testing.assert_array_equal(b, [9.0, 9.0, 0.0])


# Trivial cond.

def test_cond_whose_branches_give_the_same_values_is_folded():
    def conv(x, y):
        def if_body():
            return y, x

        def else_body():
            return y, x
        return ag__.if_stmt(x > 0, if_body, else_body, (), ("a", "b"))

    f = function(conv, autograph=False)
    assert f(np.float64(1.0), np.float64(2.0)) == (2.0, 1.0)
    c = f.get_concrete_function(np.float64(1.0), np.float64(2.0))
    assert c.traced_graph.count_nodes("cond") == 1
    assert c.graph.count_nodes("cond") == 0


def test_cond_keeps_outputs_that_differ():
    def conv(x, y):
        def if_body():
            return y, x * 2

        def else_body():
            return y, x
        return ag__.if_stmt(x > 0, if_body, else_body, (), ("a", "b"))

    f = function(conv, autograph=False)
    assert f(np.float64(1.0), np.float64(5.0)) == (5.0, 2.0)
    c = f.get_concrete_function(np.float64(1.0), np.float64(5.0))
    assert c.graph.count_nodes("cond") == 1
    assert len(c.graph.nodes[-1].outputs) == 1
    graph = c.traced_graph.clone()[0]
    passes.fold_constants(graph)
    assert len(graph.nodes[-1].outputs) == 1


# Outputs as eager numpy gives them.

def conv_relu(x):
    def if_body():
        return x

    def else_body():
        return 0.0
    return ag__.if_stmt(x > 0, if_body, else_body, (), ("y",))


def test_zero_d_constant_output_is_a_numpy_scalar():
    f = function(conv_relu, autograph=False)
    got = f(np.float64(-2.0))
    assert type(got) is np.float64 and got == 0.0
    assert type(f(np.float64(3.0))) is np.float64


def test_input_signature_keeps_numpy_scalars():
    f = function(lambda x: x, input_signature=[((), "float64")], autograph=False)
    assert type(f(np.float64(2.0))) is np.float64


def conv_concrete_mismatch(x):
    def if_body():
        return np.ones(3)

    def else_body():
        return x
    return ag__.if_stmt(x > 0, if_body, else_body, (), ("y",))


def test_concrete_array_is_described_as_numpy():
    with pytest.raises(tracer.BranchMismatchError) as info:
        function(conv_concrete_mismatch, autograph=False)(np.float64(1.0))
    assert str(info.value).startswith(
        "'y' is a numpy float64[3] array in the true branch but float64[] in the false branch "
        "of an `if` whose condition is symbolic (")
