"""Staged control flow against the unconverted function: closures, items and
attributes changed in place, names first bound in loops, sizes from traced
values, chained comparisons (issue 10).

Each program runs eagerly (unconverted, on concrete values), in the numpy
tracer (`autograph.function`) and under `jax.jit(autograph.to_graph(f))`;
the staged runs must give the eager result or raise the error given."""

import inspect

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from autograph.runtime.errors import (  # noqa: E402
    BranchMismatchError,
    LoopStateError,
    TracingError,
    UndefinedOutputError,
)

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


# Programs that must give the eager result ---------------------------------------

def closure_reads_while_counter(n):
    i = 0

    def g():
        return i + 2
    s = 0
    while i < n:
        s = s * 10 + g()
        i += 1
    return s


def closure_reads_for_counter(a):
    i = 0

    def g():
        return i + 2
    s = 0
    for _ in a:
        s = s * 10 + g()
        i += 1
    return s


def closure_reads_branch_value(a):
    i = 0

    def g():
        return i * 10
    if a > 0:
        i = 1
    else:
        i = 2
    return g()


def lambda_sees_loop_value(n):
    k = 1
    scale = lambda: k * 2  # noqa: E731
    total = 0
    while k < n:
        total += scale()
        k += 1
    return total, k


def dict_item_in_both_branches(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    else:
        x["b"] = -1
    return x


def list_item_in_both_branches(a):
    x = [a, 0]
    if a > 0:
        x[1] = 1
    else:
        x[1] = -1
    return x


def nested_item_in_both_branches(a):
    x = {"a": {"b": 0}}
    if a > 0:
        x["a"]["b"] = 1
    else:
        x["a"]["b"] = -1
    return x["a"]["b"]


def item_seen_through_alias(a):
    x = [0, 0]
    y = x
    if a > 0:
        x[0] = a
    else:
        x[0] = -a
    return y[0], y is x


def item_in_one_branch_of_existing_key(a):
    x = {"b": 0}
    if a > 0:
        x["b"] = 5
    return x["b"]


def item_updated_in_while(n):
    x = {"k": 0}
    i = 0
    while i < n:
        x["k"] = x["k"] + i
        i += 1
    return x["k"]


class Counter:
    """Stands for a `tf.Variable`: its methods change its state."""

    def __init__(self):
        self.value = 0

    def assign_add(self, delta):
        self.value = self.value + delta


def object_updated_in_branches(c):
    v = Counter()
    if c > 0:
        v.assign_add(1)
    else:
        v.assign_add(2)
    return v.value


def object_updated_in_while(n):
    v = Counter()
    i = 0
    while i < n:
        v.assign_add(2)
        i += 1
    return v.value


def object_in_while_test(n):
    v = Counter()
    while v.value < n:
        v.assign_add(3)
    return v.value


def attribute_of_argument(c):
    v = Counter()
    set_by_sign(v, c)
    return v.value


def set_by_sign(v, c):
    if c > 0:
        v.value = c
    else:
        v.value = -c


def name_first_bound_in_while(n):
    i = 0
    while i < n:
        i = n + 1
        j = i + 1
    return i, j


def name_first_bound_in_for(a):
    for v in a:
        last = v * 2
    return last


class Record:
    pass


def attribute_first_set_in_while(n):
    o = Record()
    i = 0
    while i < n:
        o.total = i * 2
        i += 1
    return o.total


AGREE = [
    (closure_reads_while_counter, [np.int64(0), np.int64(1), np.int64(3)]),
    (closure_reads_for_counter, [np.arange(2), np.arange(0)]),
    (closure_reads_branch_value, [np.int64(1), np.int64(-1)]),
    (lambda_sees_loop_value, [np.int64(1), np.int64(4)]),
    (dict_item_in_both_branches, [np.int64(1), np.int64(-1)]),
    (list_item_in_both_branches, [np.int64(1), np.int64(-1)]),
    (nested_item_in_both_branches, [np.int64(1), np.int64(-1)]),
    (item_seen_through_alias, [np.int64(3), np.int64(-3)]),
    (item_in_one_branch_of_existing_key, [np.int64(1), np.int64(-1)]),
    (item_updated_in_while, [np.int64(0), np.int64(4)]),
    (object_updated_in_branches, [np.int64(1), np.int64(-1)]),
    (object_updated_in_while, [np.int64(0), np.int64(3)]),
    (object_in_while_test, [np.int64(0), np.int64(5)]),
    (attribute_of_argument, [np.int64(2), np.int64(-2)]),
    (name_first_bound_in_while, [np.int64(1), np.int64(5)]),
    (name_first_bound_in_for, [np.arange(3), np.arange(1)]),
    (attribute_first_set_in_while, [np.int64(1), np.int64(3)]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, inputs", AGREE, ids=[f.__name__ for f, _ in AGREE])
def test_staged_run_equals_eager(f, inputs, backend):
    staged = BACKENDS[backend](f)
    for x in inputs:
        assert_same(f(x), staged(x))


def test_python_values_keep_late_binding():
    def f(n):
        fns = []
        i = 0
        while i < n:
            fns.append(lambda: i)  # noqa: B023 - late binding is the point
            i += 1
        return [g() for g in fns]
    assert autograph.to_graph(f)(3) == f(3) == [3, 3, 3]


# Programs that must raise ----------------------------------------------------------

def item_in_one_branch_only(a):
    x = {"a": a}
    if a > 0:
        x["b"] = 1
    return x


def list_grown_in_loop(a):
    fns = []
    for v in a:
        fns.append(lambda v=v: v)
    return fns[0]()


@pytest.mark.parametrize("backend", BACKENDS)
def test_item_set_in_one_branch_is_an_error(backend):
    line = line_of(item_in_one_branch_only, "if a > 0")
    with pytest.raises(UndefinedOutputError,
                       match=rf"'x\['b'\]' is defined in the true branch but not in the false branch "
                             rf"of an `if` .*test_staged_semantics.py:{line}\)"):
        BACKENDS[backend](item_in_one_branch_only)(np.int64(1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_grown_in_staged_loop_is_an_error(backend):
    line = line_of(list_grown_in_loop, "for v in a")
    with pytest.raises(LoopStateError, match=rf"'fns' changes structure in an iteration of a `for` loop "
                                             rf".*test_staged_semantics.py:{line}\)"):
        BACKENDS[backend](list_grown_in_loop)(np.arange(3))


def different_objects_in_branches(a):
    x = {"k": 0}
    if a > 0:
        x["k"] = "positive"
    else:
        x["k"] = "negative"
    return x["k"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_item_values_must_agree(backend):
    with pytest.raises(BranchMismatchError, match=r"'x\['k'\]' is a Python str \('positive'\)|"
                                                  r"'x\['k'\]' is a Python str"):
        BACKENDS[backend](different_objects_in_branches)(np.int64(1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, name", [(name_first_bound_in_while, "'j'"),
                                     (attribute_first_set_in_while, "'o.total'")])
def test_name_first_bound_in_loop_that_ran_zero_times_is_an_error(f, name, backend):
    line = line_of(f, "while i < n")
    message = rf"{name} first defined inside the loop at .*test_staged_semantics.py:{line} is unbound after it: " \
        "the loop ran zero times"
    staged = BACKENDS[backend](f)
    with pytest.raises(Exception, match=message) as info:  # noqa: B017 - JAX wraps the AssertionError
        staged(np.int64(0))
    assert info.type is AssertionError or backend == "jax"


def name_first_bound_as_python_object(n):
    i = 0
    while i < n:
        label = "positive"
        i += 1
    return label


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_object_first_bound_in_loop_is_an_error(backend):
    with pytest.raises(UndefinedOutputError, match=r"'label' is defined inside a `while` loop .* it is a Python "
                                                   r"str, and only a number or an array can be first defined"):
        BACKENDS[backend](name_first_bound_as_python_object)(np.int64(2))


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
