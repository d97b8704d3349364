"""cond / while_loop / for_loop through the runtime operators, with
hand-written 'already converted' functions (as the transpiler emits them)."""

import collections
import inspect

import autograph.runtime as ag__
import numpy as np
import pytest
from autograph.runtime import tracer
from autograph.runtime.tracer.errors import (
    BranchMismatchError,
    LoopStateError,
    SymbolicBoolError,
    UndefinedOutputError,
)

from autograph.traced_function import function


def here():
    """'file:line' of the caller's next line."""
    frame = inspect.currentframe().f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


def line_of(fn, text):
    """The line number of the first line of fn's source containing text."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def run(fn, *args):
    return function(fn, autograph=False)(*args)


# cond

def conv_abs(x):
    def if_body():
        return -x

    def else_body():
        return x
    y = ag__.if_stmt(x < 0, if_body, else_body, (), ("y",))
    return y


@pytest.mark.parametrize("value", [-3.0, 2.0, np.float32(-1.5)])
def test_cond_matches_python(value):
    value = np.asarray(value)
    assert run(conv_abs, value) == conv_abs(value)
    assert run(conv_abs, value).dtype == value.dtype


def test_cond_graph_holds_both_branches():
    f = function(conv_abs, autograph=False)
    g = f.get_concrete_function(np.float64(1.0)).graph
    assert g.count_nodes("cond") == 1
    cond = next(n for n in g.walk() if n.kind == "cond")
    assert [b.nodes[0].name for b in cond.blocks if b.nodes] == ["negative"]
    assert f(np.float64(-2.0)) == 2.0 and f(np.float64(5.0)) == 5.0
    assert f.trace_count == 1


def conv_python_constant_branch(x):
    def if_body():
        return x * 2, True

    def else_body():
        return 0, False
    y, flag = ag__.if_stmt(x > 0, if_body, else_body, (), ("y", "flag"))
    return y, flag


def test_cond_python_values_become_constants():
    for v in (np.float32(3.0), np.float32(-3.0)):
        y, flag = run(conv_python_constant_branch, v)
        ey, eflag = conv_python_constant_branch(v)
        assert y == ey and np.asarray(y).dtype == np.float32
        assert flag == eflag and type(flag) is bool


def conv_no_else(x):
    def if_body():
        ag__.call(print)("positive")
    ag__.if_stmt(x > 0, if_body, None, (), ())
    return x + 1


def test_cond_without_else_and_outputs(capsys):
    f = function(conv_no_else, autograph=False)
    assert f(np.float64(1.0)) == 2.0
    assert f(np.float64(-1.0)) == 0.0
    assert capsys.readouterr().out == "positive\n"


def conv_undefined(x):
    def if_body():
        y = x + 1
        return y

    def else_body():
        return ag__.Undefined("y")
    y = ag__.if_stmt(x > 0, if_body, else_body, (), ("y",))
    return y


def test_variable_defined_in_one_branch_error():
    with pytest.raises(UndefinedOutputError) as info:
        run(conv_undefined, np.float64(1.0))
    line = line_of(conv_undefined, 'ag__.if_stmt')
    assert str(info.value) == (
        f"'y' is defined in the true branch but not in the false branch of an `if` whose "
        f"condition is symbolic ({__file__}:{line}), and it is used after the `if`; define it "
        "in both branches (or before the `if`)")
    assert isinstance(info.value, ag__.AutographError)


def conv_dtype_mismatch(x):
    def if_body():
        return x.astype(np.float32)

    def else_body():
        return x.astype(np.int64)
    return ag__.if_stmt(x[0] > 0, if_body, else_body, (), ("z",))


def test_branch_dtype_mismatch_error():
    with pytest.raises(BranchMismatchError) as info:
        run(conv_dtype_mismatch, np.ones(3))
    line = line_of(conv_dtype_mismatch, 'ag__.if_stmt')
    assert str(info.value) == (
        f"'z' is float32[3] in the true branch but int64[3] in the false branch of an `if` whose "
        f"condition is symbolic ({__file__}:{line}); both branches must give it the same dtype "
        "and shape")


def conv_shape_mismatch(x):
    def if_body():
        return x

    def else_body():
        return x[:2]
    return ag__.if_stmt(x[0] > 0, if_body, else_body, (), ("z",))


def test_branch_shape_mismatch_error():
    with pytest.raises(BranchMismatchError, match=r"'z' is float64\[3\] in the true branch but "
                       r"float64\[2\] in the false branch"):
        run(conv_shape_mismatch, np.ones(3))


def unconverted_if(x):
    if x > 0:
        return x
    return -x


def test_bool_of_symbolic_in_unconverted_code():
    with pytest.raises(SymbolicBoolError) as info:
        run(unconverted_if, np.float64(1.0))
    line = line_of(unconverted_if, 'if x > 0')
    assert str(info.value) == (
        f"the truth value of a symbolic array (<symbolic bool[] from greater>) is not known while "
        f"tracing ({__file__}:{line}): Python control flow (`if`, `while`, `for`, `and`, `or`, "
        "`not`, `assert`) on a symbolic value needs the function to be converted. Convert it "
        "with autograph (use autograph.function, or autograph.to_graph) so that the statement "
        "becomes a graph operation")


# while

def conv_collatz(n):
    steps = 0

    def loop_test(n, steps):
        return n != 1

    def loop_body(n, steps):
        def if_body(n):
            return n // 2

        def else_body(n):
            return 3 * n + 1
        n = ag__.if_stmt(n % 2 == 0, if_body, else_body, (n,), ("n",))
        steps += 1
        return n, steps
    n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps), ("n", "steps"))
    return steps


@pytest.mark.parametrize("n", [1, 6, 27, 97])
def test_while_matches_python(n):
    f = function(conv_collatz, autograph=False)
    assert f(np.int64(n)) == conv_collatz(n)
    assert type(f(np.int64(n))) is int  # Python counter stays a Python int
    assert f.trace_count == 1


def conv_float_state(x, n):
    total = 0

    def loop_test(total, n):
        return n > 0

    def loop_body(total, n):
        return total + x, n - 1
    total, n = ag__.while_stmt(loop_test, loop_body, (total, n), ("total", "n"))
    return total


def test_while_python_number_state_takes_dtype_of_body():
    x = np.float32(0.5)
    got = run(conv_float_state, x, np.int32(4))
    assert got == conv_float_state(x, np.int32(4)) == 2.0
    assert np.asarray(got).dtype == np.float32


def conv_loop_dtype_change(x, n):
    def loop_test(x, n):
        return n > 0

    def loop_body(x, n):
        return x.astype(np.float64), n - 1
    x, n = ag__.while_stmt(loop_test, loop_body, (x, n), ("x", "n"))
    return x


def test_loop_state_dtype_change_error():
    with pytest.raises(LoopStateError) as info:
        run(conv_loop_dtype_change, np.ones(2, np.float32), np.int64(3))
    line = line_of(conv_loop_dtype_change, 'ag__.while_stmt')
    assert str(info.value) == (
        f"'x' is float32[2] before an iteration of a `while` loop whose condition is symbolic "
        f"({__file__}:{line}) but float64[2] after it; loop variables must keep their dtype and "
        "shape across iterations: give it its final dtype and shape before the loop (for example "
        "with .astype())")


def conv_loop_shape_change(x, n):
    def loop_test(x, n):
        return n > 0

    def loop_body(x, n):
        return np.concatenate([x, x]), n - 1
    x, n = ag__.while_stmt(loop_test, loop_body, (x, n), ("x", "n"))
    return x


def test_loop_state_shape_change_error():
    with pytest.raises(LoopStateError, match=r"'x' is float64\[2\] before an iteration .* but "
                       r"float64\[4\] after it"):
        run(conv_loop_shape_change, np.ones(2), np.int64(3))


# for

def conv_for_range(x, n):
    s = np.zeros_like(x)
    flag = False

    def extra_test(s, flag):
        return ag__.not_(flag)

    def loop_body(i, s, flag):
        s = s + x * i

        def if_body():
            return True

        def else_body():
            return flag
        flag = ag__.if_stmt(np.sum(s) > 20, if_body, else_body, (), ("flag",))
        return s, flag
    s, flag = ag__.for_stmt(ag__.call(range)(n), extra_test, loop_body, (s, flag),
                            ("s", "flag"))
    return s


@pytest.mark.parametrize("n", [0, 1, 3, 10])
def test_for_over_symbolic_range_with_break_flag(n):
    x = np.ones(3, np.float32)
    got = run(conv_for_range, x, np.int64(n))
    expected = conv_for_range(x, n)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def conv_for_array(xs):
    total = 0.0

    def loop_body(row, total):
        return total + np.sum(row)
    total = ag__.for_stmt(xs, None, loop_body, (total,), ("total",))
    return total


@pytest.mark.parametrize("shape", [(3, 2), (0, 2)])
def test_for_over_symbolic_array(shape):
    xs = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    f = function(conv_for_array, autograph=False)
    assert f(xs) == conv_for_array(xs)
    # A static empty leading axis means no iteration: no loop node at all.
    assert f.get_concrete_function(xs).graph.count_nodes("while") == (1 if shape[0] else 0)


def test_for_over_array_with_unknown_length():
    from autograph.traced_function import Spec
    f = function(conv_for_array, autograph=False, input_signature=[Spec((None, 2), "float64")])
    for k in (0, 1, 4):
        xs = np.ones((k, 2))
        assert f(xs) == conv_for_array(xs)
    assert f.trace_count == 1


# logical operators, print, assert, setitem, builtins

def conv_logic(x):
    a = ag__.and_(x > 0, lambda: x < 10)
    b = ag__.or_(x < -5, lambda: x > 5)
    c = ag__.not_(a)
    return a, b, c


@pytest.mark.parametrize("v", [-7.0, 0.0, 3.0, 12.0])
def test_logical_operators(v):
    assert run(conv_logic, np.float64(v)) == conv_logic(v)


def conv_short_circuit(x, i):
    return ag__.and_(i < 3, lambda: x[i] > 0)


def test_and_short_circuits_at_run_time():
    x = np.array([1.0, -1.0, 1.0])
    f = function(conv_short_circuit, autograph=False)
    assert bool(f(x, np.int64(0))) is True
    assert bool(f(x, np.int64(5))) is False  # x[5] is never evaluated


def conv_print_assert(x):
    ag__.call(print)("x is", x)
    ag__.assert_stmt(x > 0, lambda: "x must be positive")
    return x * 2


def test_print_runs_every_time_and_assert_checks(capsys):
    f = function(conv_print_assert, autograph=False)
    f(np.float64(1.0))
    f(np.float64(2.0))
    assert capsys.readouterr().out == "x is 1.0\nx is 2.0\n"
    with pytest.raises(AssertionError, match="^x must be positive\n"):
        f(np.float64(-1.0))


def conv_setitem(x, i, v):
    x = ag__.setitem(x, i, v)
    return x


def test_setitem_is_functional():
    x = np.zeros(4, np.int32)
    got = run(conv_setitem, x, np.int64(2), 7.9)
    expected = x.copy()
    expected[2] = 7.9
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int32 and x[2] == 0


def conv_builtins(x):
    call = ag__.call
    return (call(len)(x), call(abs)(-x[0]), call(max)(x), call(min)(x[0], x[1]),
            call(sum)(x), call(int)(x[1]), call(float)(x[2]), call(bool)(x[0]),
            call(any)(x > 2))


def test_builtins():
    x = np.array([3, 1, 2], np.int32)
    got = run(conv_builtins, x)
    expected = conv_builtins(x)
    assert got == expected
    assert [type(v) for v in got] == [type(v) for v in expected]


def test_converted_asarray_through_the_call_hook_if_it_consults_the_backend():
    be = tracer.BACKEND
    with tracer.Graph() as g:
        x = g.placeholder((2,), "int32")
        y = be.builtin(np.asarray)(x, np.float32)
        z = be.builtin(np.array)([x[0], x[1]])
    assert y.dtype == np.float32 and z.shape == (2,)
    np.testing.assert_array_equal(g.run((y, z), {x: [1, 2]})[1], [1, 2])


def test_escaping_branch_value_is_an_error():
    leaked = collections.deque()  # a C container: staging cannot see what is stored in it

    def conv(x):
        def if_body():
            y = x + 1
            leaked.append(y)
            return y

        def else_body():
            return x
        y = ag__.if_stmt(x > 0, if_body, else_body, (), ("y",))
        return y + leaked[0]

    with pytest.raises(tracer.ScopeError, match="used outside it"):
        run(conv, np.float64(1.0))


def test_attribute_of_a_slotted_object_set_in_one_branch_is_an_error():
    class Slot:
        __slots__ = ("value",)
    leaked = Slot()

    def conv(x):
        def if_body():
            leaked.value = x + 1
            return x

        def else_body():
            return x
        return ag__.if_stmt(x > 0, if_body, else_body, (), ("y",)) + leaked.value

    with pytest.raises(UndefinedOutputError, match="'leaked.value' is defined in the true branch but not"):
        run(conv, np.float64(1.0))


def test_list_grown_in_one_branch_is_an_error():
    leaked = []

    def conv(x):
        def if_body():
            y = x + 1
            leaked.append(y)
            return y

        def else_body():
            return x
        return ag__.if_stmt(x > 0, if_body, else_body, (), ("y",))

    with pytest.raises(BranchMismatchError, match="'leaked' has a different structure"):
        run(conv, np.float64(1.0))
