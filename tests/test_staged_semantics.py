"""Staged semantics particular to some backends (issue 10): the run-time
check of a name first bound in a loop that ran zero times, Python late
binding, the evaluation order of chained comparisons, `in` on a symbolic
array, sizes from traced values in numpy functions. What every backend must
agree on is in tests/runtime/test_conformance.py.

Each program runs eagerly (unconverted, on concrete values), in the numpy
tracer (`autograph.function`) and under `jax.jit(autograph.to_graph(f))`;
the staged runs must give the eager result or raise the error given."""

import inspect

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from autograph.runtime.errors import LoopStateError, TracingError  # noqa: E402

import autograph  # noqa: E402

jax.config.update("jax_enable_x64", True)

BACKENDS = {
    "numpy": autograph.function,
    "jax": lambda f: jax.jit(autograph.to_graph(f)),
}


def assert_same(expected, actual):
    expected = jax.tree_util.tree_map(np.asarray, expected)
    actual = jax.tree_util.tree_map(np.asarray, actual)
    assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual)
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual), strict=True):
        assert e.shape == a.shape
        np.testing.assert_array_equal(a, e)


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


# Names first bound in a loop --------------------------------------------------------

def name_first_bound_in_while(n):
    i = 0
    while i < n:
        i = n + 1
        j = i + 1
    return i, j


class Record:
    pass


def attribute_first_set_in_while(n):
    o = Record()
    i = 0
    while i < n:
        o.total = i * 2
        i += 1
    return o.total


def item_first_set_in_while(n):
    d = {"a": 1}
    i = 0
    while i < n:
        d["b"] = i * 2
        i += 1
    return d["b"]


def test_python_values_keep_late_binding():
    def f(n):
        fns = []
        i = 0
        while i < n:
            fns.append(lambda: i)  # noqa: B023 - late binding is the point
            i += 1
        return [g() for g in fns]
    assert autograph.to_graph(f)(3) == f(3) == [3, 3, 3]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, name", [(name_first_bound_in_while, "'j'"),
                                     (attribute_first_set_in_while, "'o.total'"),
                                     (item_first_set_in_while, '"d\\[\'b\'\\]"')])
def test_name_first_bound_in_loop_that_ran_zero_times_is_an_error(f, name, backend):
    line = line_of(f, "while i < n")
    message = rf"{name} first defined inside the loop at .*test_staged_semantics.py:{line} is unbound after it: " \
        "the loop ran zero times"
    staged = BACKENDS[backend](f)
    with pytest.raises(Exception, match=message) as info:  # noqa: B017 - JAX wraps the AssertionError
        staged(np.int64(0))
    assert info.type is AssertionError or backend == "jax"


# Lambdas made in a staged loop -----------------------------------------------------

def lambdas_made_in_loop(a):
    fns = []
    for v in a:
        fns.append(lambda v=v: v)
    return fns[0]()


@pytest.mark.parametrize("backend", BACKENDS)
def test_lambda_made_in_staged_loop_is_an_error_naming_its_line(backend):
    loop, made = line_of(lambdas_made_in_loop, "for v in a"), line_of(lambdas_made_in_loop, "lambda v=v")
    with pytest.raises(LoopStateError, match=rf"'fns' is a list appended to in a `for` loop .*"
                                             rf"test_staged_semantics.py:{loop}\), and a lambda defined at "
                                             rf".*test_staged_semantics.py:{made} is appended to it"):
        BACKENDS[backend](lambdas_made_in_loop)(np.arange(3))


# numpy arrays changed in place -------------------------------------------------------

def numpy_array_changed_in_branches(x):
    buf = np.zeros(3)
    if x > 0:
        buf[0] = 1
    else:
        buf[0] = 2
    return buf


class Holder:
    def __init__(self):
        self.buf = np.zeros(2)


def numpy_attribute_changed_in_loop(n):
    o = Holder()
    i = 0
    while i < n:
        o.buf[0] = o.buf[0] + 1
        i += 1
    return o.buf


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_array_changed_in_branches(backend):
    staged = BACKENDS[backend](numpy_array_changed_in_branches)
    for x in (np.int64(3), np.int64(-3)):
        assert_same(numpy_array_changed_in_branches(x), staged(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_array_that_cannot_hold_a_traced_value_is_an_error(backend):
    line = line_of(numpy_attribute_changed_in_loop, "while i < n")
    with pytest.raises(TracingError, match=rf"'o.buf' is a numpy array changed in place by staged code "
                                           rf"\(.*test_staged_semantics.py:{line}\), and a numpy array cannot "
                                           "hold a traced value"):
        BACKENDS[backend](numpy_attribute_changed_in_loop)(np.int64(3))


# Expressions on symbolic values ---------------------------------------------------

def chained_equality(x, y, z):
    return x == y == z


def chained_range_check(x, y, z):
    return 0 <= x < y <= z


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [chained_equality, chained_range_check])
def test_chained_comparison(f, backend):
    staged = BACKENDS[backend](f)
    for args in [(1, 1, 1), (1, 2, 1), (1, 2, 2), (3, 2, 2), (-1, 0, 0)]:
        args = tuple(np.int64(a) for a in args)
        assert_same(f(*args), staged(*args))


def test_chained_comparison_evaluates_each_operand_once_in_order():
    calls = []

    def ev(v):
        calls.append(v)
        return v

    def f(x):
        return ev(1) < ev(x) < ev(3) < ev(0)
    expected = f(5), list(calls)
    calls.clear()
    assert (autograph.to_graph(f)(5), calls) == expected == (False, [1, 5, 3])


def contains(a, c):
    return c in a


def test_in_on_a_symbolic_array_is_a_clear_error():
    with pytest.raises(TracingError, match=r"`value in array` on a symbolic array .* write "
                                           r"`np.any\(array == value\)`"):
        autograph.function(contains)(np.arange(3), np.int64(1))


# Sizes from traced values ------------------------------------------------------------

def zeros_of_traced_size(i):
    return np.zeros((1, i, 2)).sum(axis=(0, 2)) + np.ones(i) + np.full((i,), 2.5) + np.empty(i) * 0


def arange_of_traced_bound(n):
    return np.arange(n).sum(), np.arange(1, n), np.arange(n, dtype=np.float32)


def array_of_traced_scalars(i):
    return np.asarray([i]) + np.array([i, 2 * i])


@pytest.mark.parametrize("f, inputs", [
    (zeros_of_traced_size, [np.int64(3), np.int64(0)]),
    (arange_of_traced_bound, [np.int64(4), np.int64(0)]),
    (array_of_traced_scalars, [np.int64(4)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_numpy_tracer_sizes_from_traced_values(f, inputs):
    staged = autograph.function(f)
    for x in inputs:
        assert_same(f(x), staged(x))


@pytest.mark.parametrize("f", [zeros_of_traced_size, arange_of_traced_bound])
def test_jax_sizes_from_traced_values_name_the_argument(f):
    # numpy functions on JAX tracers fail in JAX itself; its message names
    # the argument the size depends on.
    with pytest.raises(TypeError, match=r"depends on the value of the argument [in]\b"):
        jax.jit(autograph.to_graph(f))(np.int64(3))
