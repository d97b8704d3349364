"""autograph.traced_function: function, Spec, Graph, py_function."""

import inspect
import logging

import numpy as np
import pytest
from autograph.runtime.tracer.errors import SymbolicBoolError

import autograph
from autograph.traced_function import Graph, Spec, function, py_function


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def weighted(x, n):
    s = np.zeros_like(x)
    for i in range(n):
        if i % 3 == 0:
            continue
        s = s + x * i
    return s


def clipped_norm(x, limit):
    norm = np.sqrt(np.sum(x * x))
    if norm > limit:
        x = x * (limit / norm)
    return x


# Through the transpiler (autograph.to_graph).

@pytest.mark.parametrize("n", [1, 7, 27])
def test_collatz(n):
    f = function(collatz)
    assert f(np.int64(n)) == collatz(n)
    assert f.trace_count == 1


@pytest.mark.parametrize("n", [0, 4, 9])
def test_for_range_with_continue(n):
    f = function(weighted)
    x = np.arange(3, dtype=np.float32)
    got = f(x, np.int64(n))
    expected = weighted(x, n)
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    assert f.get_concrete_function(x, np.int64(n)).graph.count_nodes("while") == 1


@pytest.mark.parametrize("limit", [0.5, 100.0])
def test_symbolic_if(limit):
    f = function(clipped_norm)
    x = np.array([3.0, 4.0])
    np.testing.assert_allclose(f(x, np.float64(limit)), clipped_norm(x, limit))
    assert f.get_concrete_function(x, np.float64(limit)).graph.count_nodes("cond") == 1


def test_decorator_forms_and_attributes():
    @function
    def f(x):
        return x + 1

    @function(autograph=False)
    def g(x):
        return x + 1

    assert f.python_function.__name__ == "f" and g.python_function.__name__ == "g"
    assert f(np.float64(1)) == 2.0 and g(np.float64(1)) == 2.0


# Caching and retracing.

def test_cache_by_shape_and_dtype_and_python_value():
    calls = []

    @function(autograph=False)
    def f(x, k):
        calls.append(1)  # a Python side effect: trace time only
        return x * k

    f(np.ones(3), 2)
    f(np.zeros(3), 2)
    assert f.trace_count == 1 and len(calls) == 1
    f(np.ones(4), 2)
    f(np.ones(3, np.float32), 2)
    f(np.ones(3), 3)
    assert f.trace_count == 4 and len(calls) == 4
    np.testing.assert_array_equal(f(np.ones(3), 3), [3, 3, 3])
    assert f.trace_count == 4


def test_retrace_warning_names_the_changing_argument(caplog):
    @function(autograph=False)
    def f(x, k):
        return x * k

    with caplog.at_level(logging.WARNING, logger="autograph"):
        for k in range(6):
            f(np.ones(2), k)
        assert caplog.records == []
        f(np.ones(2), 6)
    assert f.trace_count == 7
    [record] = caplog.records
    assert record.name == "autograph"
    assert record.getMessage() == (
        "autograph.function 'f' has been retraced 6 times; argument 'k' changed between calls "
        "(0, 1, 2, 3, 4, 5, 6). Each new Python value or array shape/dtype triggers a new trace: "
        "pass numbers as numpy arrays, or give an input_signature with None dimensions.")


def test_input_signature_single_trace():
    @function(input_signature=[Spec((None,), "float64"), Spec((), "int64")], autograph=False)
    def f(x, k):
        return np.sum(x) * k

    assert f(np.ones(3), 2) == 6.0
    assert f(np.ones(10), np.int64(3)) == 30.0
    assert f.trace_count == 1
    with pytest.raises(TypeError, match=r"argument 'x' of f has dtype float32, its "
                       r"input_signature says Spec\(\(None,\), 'float64'\)"):
        f(np.ones(3, np.float32), 2)
    with pytest.raises(TypeError, match=r"argument 'x' of f has shape \(2, 2\)"):
        f(np.ones((2, 2)), 2)


def test_autograph_false_symbolic_if_raises_clear_error():
    f = function(clipped_norm, autograph=False)
    with pytest.raises(SymbolicBoolError, match=r"Convert it with autograph \(use "
                       r"autograph.function, or autograph.to_graph\)"):
        f(np.ones(2), np.float64(1.0))


def test_print_of_symbolic_runs_every_call_python_print_once(capsys):
    def f(x):
        print("tracing")
        print("x =", x)
        return x

    g = function(f)
    g(np.float64(1.0))
    g(np.float64(2.0))
    # The converted print of a symbolic value is an op; the other one runs at trace time...
    out = capsys.readouterr().out.splitlines()
    assert out == ["tracing", "x = 1.0", "x = 2.0"]


def test_nested_function_is_inlined():
    inner = function(lambda x: x * 2, autograph=False)

    @function(autograph=False)
    def outer(x):
        return inner(x) + 1

    assert outer(np.float64(3)) == 7.0
    assert inner.trace_count == 0
    assert [n.name for n in outer.get_concrete_function(np.float64(3)).graph.walk()] == [
        "multiply", "add"]


def test_get_concrete_function():
    f = function(lambda x: np.sin(x), autograph=False)
    c = f.get_concrete_function(np.zeros(2))
    assert f.trace_count == 1
    np.testing.assert_allclose(c(np.ones(2)), np.sin(np.ones(2)))
    assert str(c) == "graph <lambda>(%x: float64[2]):\n  %0 = sin(%x) : float64[2]\n  return %0"
    assert c.to_dot().startswith('digraph "<lambda>"')
    assert f.get_concrete_function(np.zeros(2)) is c


def test_structured_outputs():
    @function(autograph=False)
    def f(x):
        return {"a": x + 1, "b": (x, 3, None)}

    out = f(np.float64(1))
    assert out == {"a": 2.0, "b": (1.0, 3, None)}


# py_function

def test_py_function_runs_python_at_graph_run():
    seen = []

    def host(v):
        seen.append(float(v))
        return np.linalg.eigvalsh(np.diag([v, 2 * v]))

    @function(autograph=False)
    def f(x):
        return py_function(host, [x], Spec((2,), "float64")) + 1

    np.testing.assert_allclose(f(np.float64(1.0)), [2.0, 3.0])
    np.testing.assert_allclose(f(np.float64(2.0)), [3.0, 5.0])
    assert seen == [1.0, 2.0]
    assert f.trace_count == 1


def test_py_function_result_is_checked():
    @function(autograph=False)
    def f(x):
        return py_function(lambda v: np.ones(3), [x], Spec((2,), "float64"))

    with pytest.raises(ValueError, match=r"returned an array of shape \(3,\), its result_spec is "
                       r"Spec\(\(2,\), 'float64'\)"):
        f(np.float64(1.0))


def test_py_function_outside_trace_is_a_call():
    assert py_function(lambda a, b: a + b, [1, 2], Spec((), "int64")) == 3


# Explicit graphs (TF1 flow).

def test_explicit_graph_with_converted_function():
    converted = autograph.to_graph(collatz)
    with Graph() as g:
        x = g.placeholder((), "int64")
        y = converted(x)
    assert g.run(y, {x: 27}) == 111
    assert g.run(y, {x: 6}) == 8


def test_explicit_graph_float_example():
    def f(x):
        if x > 4.0:
            x = np.sqrt(x)
        return x

    converted = autograph.to_graph(f)
    with Graph() as g:
        x = g.placeholder((), "float64")
        y = converted(x)
    assert g.run(y, {x: 9.0}) == 3.0
    assert g.run(y, {x: 2.0}) == 2.0


# `return` inside branches and loops whose condition is symbolic.

def first_negative(x):
    for v in x:
        if v < 0:
            return v
    return 0.0


def find_index(x, t):
    for i in range(4):
        if x[i] == t:
            return i
    return -1


def relu_return(x):
    if x > 0:
        return x
    return 0.0


def steps_until(x):
    n = 0
    while n < 10:
        if x * n > 20:
            return n
        n += 1
    return -1


def return_none_or_value(x):
    if x > 0:
        return
    return None


@pytest.mark.parametrize("values, expected", [([5.0, -6.0, 7.0], -6.0), ([5.0, 6.0, 7.0], 0.0),
                                              ([-1.0, -2.0, 3.0], -1.0)])
def test_return_inside_loop_over_symbolic_array(values, expected):
    f = function(first_negative)
    got = f(np.array(values))
    assert got == expected == first_negative(np.array(values))
    assert type(got) is np.float64
    assert f.trace_count == 1
    assert f.get_concrete_function(np.array(values)).graph.count_nodes("while") == 1


@pytest.mark.parametrize("t, expected", [(7, 2), (5, 0), (9, -1)])
def test_return_inside_python_loop_with_symbolic_condition(t, expected):
    f = function(find_index)
    x = np.array([5, 6, 7, 8])
    assert f(x, np.int64(t)) == expected == find_index(x, t)
    assert f.trace_count == 1


@pytest.mark.parametrize("x", [-2.0, 3.0])
def test_return_inside_symbolic_if(x):
    assert function(relu_return)(np.float64(x)) == relu_return(np.float64(x))


@pytest.mark.parametrize("x", [3.0, 0.5])
def test_return_inside_symbolic_while(x):
    f = function(steps_until)
    assert f(np.float64(x)) == steps_until(x)
    assert f.get_concrete_function(np.float64(x)).graph.count_nodes("while") == 1


def test_return_without_value_in_symbolic_branch():
    assert function(return_none_or_value)(np.float64(1.0)) is None


def return_string_or_nothing(x):
    for v in x:
        if v > 0:
            return "positive"
    return "none"


def test_return_of_non_number_in_symbolic_branch_is_an_error():
    from autograph.runtime.tracer.errors import BranchMismatchError
    with pytest.raises(BranchMismatchError) as info:
        function(return_string_or_nothing)(np.ones(2))
    assert str(info.value).startswith(
        "'retval' is a Python str ('positive') in the true branch but not returned yet in the false branch "
        "of an `if` whose condition is symbolic (")
    assert str(info.value).endswith(
        "); Python values other than numbers must be the same in both branches")


def one_branch_only(x):
    if x > 0:
        y = x
    return y


def test_variable_of_one_branch_still_an_error():
    from autograph.runtime.tracer.errors import UndefinedOutputError
    with pytest.raises(UndefinedOutputError, match="^'y' is defined in the true branch but not "
                       "in the false branch of an `if` whose condition is symbolic"):
        function(one_branch_only)(np.float64(1.0))


# enumerate and zip of symbolic arrays become graph loops.

def weighted_sum(x):
    s = 0.0
    for i, v in enumerate(x):
        s += i * v
    return s


def positive_weighted(x):
    s = 0.0
    for i, v in enumerate(x, 1):
        if v > 0:
            s += i * v
    return s


def dot_loop(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    return s


@pytest.mark.parametrize("fn", [weighted_sum, positive_weighted])
def test_enumerate_of_symbolic_array_is_one_loop(fn):
    f = function(fn)
    x = np.array([1.0, -2.0, 3.0, 4.0])
    assert f(x) == fn(x)
    graph = f.get_concrete_function(x).graph
    assert graph.count_nodes("while") == 1
    assert graph.count_nodes(name="getitem") == 1   # not unrolled


def test_zip_of_symbolic_arrays_with_unknown_lengths():
    f = function(dot_loop, input_signature=[Spec((None,)), Spec((None,))])
    x, y = np.array([1.0, -2.0, 3.0]), np.array([4.0, 5.0, 6.0, 7.0])
    assert f(x, y) == dot_loop(x, y)
    assert f(y, y) == dot_loop(y, y)
    assert f(x[:0], y) == 0.0
    assert f.trace_count == 1
    assert f.get_concrete_function().graph.count_nodes("while") == 1


def test_zip_with_a_concrete_array():
    w = np.array([0.5, 0.25, 2.0])
    f = function(lambda x: dot_loop(x, w))
    x = np.array([1.0, 2.0, 3.0])
    assert f(x) == dot_loop(x, w)
    assert f.get_concrete_function(x).graph.count_nodes("while") == 1


def branches_disagree_on_dtype(x):
    if x > 0:
        y = np.int32(1)
    else:
        z = x
        y = z
    return y


def loop_changes_shape(x):
    y = np.zeros(2)
    while x > 0:
        x = x - 1
        y = np.concatenate([y, y])
    return y


@pytest.mark.parametrize("fn,statement", [(branches_disagree_on_dtype, "if x > 0"),
                                          (loop_changes_shape, "while x > 0")])
def test_tracing_errors_name_the_statements_first_line(fn, statement):
    # Not the statement's last line, where CPython places a multi-line call.
    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if statement in text)
    with pytest.raises(Exception) as info:
        function(fn)(np.float64(2.0))
    assert f"({__file__}:{line})" in str(info.value)


def test_an_input_signature_of_one_spec_says_to_write_a_list():
    with pytest.raises(TypeError, match=r"input_signature of dot_loop is one Spec; it is a list with one Spec per "
                                        r"argument: write input_signature=\[Spec\(\(3,\), 'float64'\)\]"):
        function(dot_loop, input_signature=Spec((3,)))


@pytest.mark.parametrize("signature, says", [
    (Spec, r"must be a list with one Spec per argument"),
    ([Spec((3,)), 3], r"argument 1 is described by 3; write Spec\(shape, dtype\)"),
    ([(3,)], r"Spec: shape must be a tuple of dimensions .*write Spec\(\(3,\)\)"),
])
def test_a_wrong_input_signature_says_what_to_write(signature, says):
    with pytest.raises(TypeError, match=says):
        function(dot_loop, input_signature=signature)


def test_an_input_signature_of_shape_tuples_is_a_list_of_specs():
    f = function(dot_loop, input_signature=[((None,),), ((None,), "float64")])
    assert f.input_signature == [Spec((None,)), Spec((None,))]


def test_function_of_something_not_callable_says_what_to_write():
    with pytest.raises(TypeError, match=r"autograph.function takes the function to trace, got 3: write "
                                        r"autograph.function\(f\)"):
        function(3)
    with pytest.raises(TypeError, match=r"got \[Spec\(\(3,\), 'float64'\)\]"):
        function([Spec((3,))])


def test_spec_of_an_unknown_dtype_says_what_to_write():
    with pytest.raises(TypeError, match=r"Spec: dtype 'floatz' is not a numpy dtype; write one such as 'float64'"):
        Spec((3,), "floatz")
