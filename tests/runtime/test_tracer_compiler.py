"""The graph compiler (runtime/tracer/compiler.py): Python operators instead of ufunc calls, item
updates in place when sound, trivial `cond`s folded, outputs as eager."""

import autograph.runtime as ag__
import numpy as np
import pytest
from autograph.runtime import tracer
from autograph.runtime.tracer import inplace, passes

import autograph
from autograph.traced_function import function


def body_lines(concrete):
    """The statements of the compiled function, inside its `try` (whose
    handler names the user's line of a failing op)."""
    lines = concrete.source.splitlines()
    assert lines[1] == "    try:" and lines[-3:] == [
        "    except Exception as error:", "        traced_at(error)", "        raise"]
    return [line.strip() for line in lines[2:-3]]


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
    for g, e in zip(got, expected, strict=True):
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
    lines = body_lines(f.get_concrete_function(np.int64(5)))
    # The loop variable is updated in place: no copies through temporaries.
    assert lines == ["v1 = 0", "while v1 < v0:", "v1 = v1 + 1", "return v1"]


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


# Loops as Python `for` loops, copies coalesced, expressions inlined.

def piecewise(x):
    total = 0.0
    for v in x:
        if v < 0.0:
            total += -v
        else:
            total += v * v
    return total


def test_for_over_an_array_is_a_python_for():
    f = function(piecewise)
    x = np.linspace(-2.0, 2.0, 9)
    assert f(x) == piecewise(x)
    lines = body_lines(f.get_concrete_function(x))
    assert any(line.startswith("for v") and line.endswith(" in v0:") for line in lines)
    assert not any(line.startswith("while") for line in lines)
    # The loop-carried total is updated in place, no tuple copies.
    assert not any(", " in line.split(" = ")[0] for line in lines if " = " in line)


def test_for_over_an_array_of_unknown_length_is_a_python_for():
    f = function(piecewise, input_signature=[((None,), "float64")])
    for n in (0, 1, 5):
        x = np.linspace(-1.0, 3.0, n)
        assert f(x) == piecewise(x)
    assert any(line.endswith(" in v0:") and line.startswith("for ")
               for line in body_lines(f.get_concrete_function()))


def test_for_with_the_index_used_is_enumerate():
    def weighted(x):
        total = 0.0
        i = 0
        for v in x:
            total += v * i
            i += 1
        return total

    def enumerated(x):
        total = 0.0
        for i, v in enumerate(x):
            total += v * i
        return total

    x = np.arange(6.0)
    for fn in (weighted, enumerated):
        f = function(fn)
        assert f(x) == fn(x)
        lines = body_lines(f.get_concrete_function(x))
        assert any(line.startswith("for ") for line in lines), lines
        assert not any(line.startswith("while") for line in lines)


def test_for_over_a_range_with_break_is_a_python_for():
    def first_above(x, n, limit):
        found = -1
        for i in range(n):
            if x[i] > limit:
                found = i
                break
        return found

    f = function(first_above)
    x = np.array([0.5, 2.0, 3.0, 0.1])
    for limit in (0.0, 1.0, 2.5, 5.0):
        for n in (0, 2, 4):
            assert f(x, np.int64(n), np.float64(limit)) == first_above(x, n, limit)
    lines = body_lines(f.get_concrete_function(x, np.int64(4), np.float64(1.0)))
    assert any(line.startswith("for ") and "range_" in line for line in lines)
    assert "break" in lines


def test_range_with_step_and_start():
    def total(n):
        s = 0
        for i in range(10, n, -3):
            s += i
        for i in range(1, n, 2):
            s += i * i
        return s

    f = function(total)
    for n in (-2, 1, 2, 10, 11):
        assert f(np.int64(n)) == total(n)
    lines = body_lines(f.get_concrete_function(np.int64(3)))
    assert [line for line in lines if line.startswith("for ")] == [
        "for v1 in range_0(10, v0, -3):", "for v4 in range_0(1, v0, 2):"]


def test_loop_counter_read_after_the_loop_stays_a_while():
    def count(x):
        i = 0
        while i < 5:
            i += 1
        return i + x

    f = function(count)
    assert f(np.float64(0.5)) == 5.5


def test_loop_variables_swap_without_temporaries():
    def gcd(a, b):
        while b != 0:
            a, b = b, a % b
        return a

    f = function(gcd)
    for a, b in ((832040, 514229), (12, 18), (7, 0), (0, 5)):
        assert f(np.int64(a), np.int64(b)) == gcd(np.int64(a), np.int64(b))
    lines = body_lines(f.get_concrete_function(np.int64(1), np.int64(1)))
    assert lines == ["while v1:", "v0, v1 = v1, v0 % v1", "return v0"]


def test_branch_outputs_assign_loop_variables_directly():
    def bisection(lo, hi, tol):
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            if mid * mid - 2.0 > 0.0:
                hi = mid
            else:
                lo = mid
        return lo

    f = function(bisection)
    args = (np.float64(0.0), np.float64(2.0), np.float64(1e-9))
    assert f(*args) == bisection(*args)
    lines = body_lines(f.get_concrete_function(*args))
    assert "v1 = v3" in lines or "v1 = v4" in lines or any(
        line.startswith("v1 = v") and line.count("v") == 2 for line in lines)
    assert not any(", " in line.split(" = ")[0] for line in lines if " = " in line)


def test_loop_variable_read_after_its_update_keeps_the_old_value():
    def shift(x):
        a = 1.0
        b = 2.0
        for v in x:
            old = a
            a = a + v
            b = b * old      # reads the value of `a` before the update
        return a, b

    f = function(shift)
    x = np.array([1.0, 2.0, 3.0])
    assert f(x) == shift(x)


def test_nested_loops_and_conds_agree_with_eager():
    def nested(x, y):
        total = 0.0
        count = 0
        for v in x:
            for w in y:
                if v > w:
                    total += v - w
                    count += 1
                elif v == w:
                    continue
                else:
                    total, count = total - 1.0, count + 2
        return total, count

    f = function(nested)
    x, y = np.array([0.0, 1.0, 2.5]), np.array([1.0, 2.5, -1.0, 0.0])
    assert f(x, y) == nested(x, y)


# The cached-signature entry.

def test_entry_checks_types_shapes_and_dtypes():
    f = function(lambda x, y: x * y, autograph=False)
    assert f(np.float64(2.0), np.float64(3.0)) == 6.0
    got = f(np.int64(2), np.int64(3))
    assert type(got) is np.int64 and got == 6
    np.testing.assert_array_equal(f(np.ones(2), np.ones(2)), [1.0, 1.0])
    np.testing.assert_array_equal(f(np.ones(3), np.ones(3)), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(f(np.ones(3, np.float32), np.ones(3, np.float32)), [1, 1, 1])
    assert f(np.ones(3, np.float32), np.ones(3, np.float32)).dtype == np.float32
    assert f(y=np.float64(2.0), x=np.float64(4.0)) == 8.0
    assert f(2.0, 5.0) == 10.0
    assert f.trace_count == 6   # keywords bind to their parameters: (float64, float64) again
    with pytest.raises(TypeError):
        f(np.float64(1.0))
    with pytest.raises(TypeError):
        f(np.float64(1.0), np.float64(1.0), np.float64(1.0))
    assert isinstance(f, type(function(lambda x: x)))


def test_entry_inside_another_trace_inlines():
    inner = function(lambda x: x + 1.0, autograph=False)
    assert inner(np.float64(1.0)) == 2.0
    outer = function(lambda x: inner(x) * 2.0, autograph=False)
    assert outer(np.float64(1.0)) == 4.0
    assert outer.get_concrete_function(np.float64(1.0)).graph.count_nodes("op") == 2


# Errors while a compiled graph runs name the user's line of the failing op.

def _line_of(marker):
    """The line number in this file of the line that ends with `marker`."""
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(marker))


def gather(x, i):
    y = x * 2.0
    return y[i] + 1.0   # gather: the failing op


def three_lines(x, i):
    a = x[i]            # three_lines: the failing op
    b = np.exp(a)
    return b + 1.0


def loop_gather(x, n):
    total = 0.0
    i = 0
    while i < n:
        total += x[i]   # loop_gather: the failing op
        i += 1
    return total


def test_run_time_error_names_the_users_line_and_keeps_its_type():
    f = function(gather)
    assert f(np.ones(3), np.int64(2)) == 3.0
    with pytest.raises(IndexError, match="index 3 is out of bounds") as info:
        f(np.ones(3), np.int64(3))
    (note,) = info.value.__notes__
    assert f"{__file__}:{_line_of('# gather: the failing op')}" in note
    assert "graph 'gather'" in note and "'getitem'" in note
    assert "return y[i] + 1.0" in note


def test_run_time_error_in_an_inlined_expression_names_the_line_of_its_own_op():
    f = function(three_lines)
    lines = body_lines(f.get_concrete_function(np.ones(3), np.int64(0)))
    # The three ops are one line of the compiled code.
    assert lines == ["return exp_0(v0[v1]) + 1.0"]
    with pytest.raises(IndexError) as info:
        f(np.ones(3), np.int64(5))
    assert f"{__file__}:{_line_of('# three_lines: the failing op')}" in info.value.__notes__[0]


def test_run_time_error_inside_a_symbolic_loop_names_the_line_in_the_loop():
    f = function(loop_gather)
    assert f(np.arange(4.0), np.int64(4)) == 6.0
    with pytest.raises(IndexError) as info:
        f(np.arange(4.0), np.int64(6))
    assert f"{__file__}:{_line_of('# loop_gather: the failing op')}" in info.value.__notes__[0]


def test_run_time_error_of_an_explicit_graph_names_the_line():
    with tracer.Graph("g") as g:
        x = g.placeholder((None,), "float64", "x")
        i = g.placeholder((), "int64", "i")
        y = x[i]   # explicit graph: the failing op
    assert g.run(y, {x: [1.0, 2.0], i: 1}) == 2.0
    with pytest.raises(IndexError) as info:
        g.run(y, {x: [1.0, 2.0], i: 2})
    assert f"{__file__}:{_line_of('# explicit graph: the failing op')}" in info.value.__notes__[0]


def grow_until(x, n):
    # Issue 33: the compiled loop dropped `i + 1` (the counter's step, which
    # the `for` replaced) that the slice reads: NameError: name 'v9'.
    v = x[:1]
    if n > 0:
        for i in range(n):
            autograph.set_loop_options(shape_invariants=[(v, (None,))])
            v = np.concatenate([v, x[i:i + 1] * 2])
            if i > 1:
                break
    return v


def windows(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i:i + 2].sum() * (i + 1)
    return total


@pytest.mark.parametrize("f, argsets", [
    (grow_until, [(np.arange(5.0), np.int64(4)), (np.arange(5.0), np.int64(2)), (np.arange(5.0), np.int64(0))]),
    (windows, [(np.arange(6.0), np.int64(4)), (np.arange(6.0), np.int64(0))]),
])
def test_a_counted_loop_whose_body_reads_the_next_counter(f, argsets):
    traced = autograph.function(f)
    for args in argsets:
        np.testing.assert_array_equal(traced(*args), f(*(a.item() if a.ndim == 0 else a for a in args)))


def gather_sum(x, idx):
    s = 0.0
    for i in idx:
        s += x[i]
    return s


def test_an_error_while_the_graph_runs_ends_at_the_users_line():
    import traceback
    f = autograph.function(gather_sum)
    with pytest.raises(IndexError) as info:
        f(np.arange(3.0), np.array([0, 1, 3]))
    innermost = traceback.extract_tb(info.value.__traceback__)[-1]
    line = gather_sum.__code__.co_firstlineno + 3
    assert (innermost.filename, innermost.lineno, innermost.name) == (__file__, line, "gather_sum")
    assert innermost.line == "s += x[i]"
    assert f"raised by the op 'getitem' of graph 'gather_sum', traced at {__file__}:{line}: s += x[i]" \
        in info.value.__notes__[-1]
    np.testing.assert_array_equal(f(np.arange(3.0), np.array([0, 2])), gather_sum(np.arange(3.0), [0, 2]))
