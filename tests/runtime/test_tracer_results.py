"""Results of a traced function are as independent as eager numpy's: a copy
is a copy, a constant is new in every call, two results share memory only
where eager results do (runtime/tracer/results.py)."""

import numpy as np
import pytest

from autograph.traced_function import Graph, function


def _results(value):
    return list(value) if isinstance(value, tuple) else [value]


def _sharing(results, inputs):
    """Which results are the same object, share memory with each other or with an input."""
    arrays = [r for r in results if isinstance(r, np.ndarray)]
    same = [[a is b for b in arrays] for a in arrays]
    shared = [[np.shares_memory(a, b) for b in arrays] for a in arrays]
    with_inputs = [[np.shares_memory(a, x) for x in inputs] for a in arrays]
    return same, shared, with_inputs


def dup_copy(x):
    return np.copy(x)


def dup_method(x):
    return x.copy()


def dup_array(x):
    return np.array(x)


def dup_asarray_copy(x):
    return np.asarray(x, copy=True)


def dup_array_ndmin(x):
    return np.array(x, ndmin=2)


def constant_result(x):
    return x * 2, np.zeros(3)


def folded_constant(x):
    return np.zeros_like(x)


def view_of_constant(x):
    return np.ones((3, 3))[0], x[0] + np.ones((3, 3))[1]


def equal_results(x):
    return x + 1, x + 1


def same_result_twice(x):
    y = x + 1
    return y, y


def input_itself(x):
    return x, x[1:]


def filled_in_loop(x):
    out = np.zeros(3)
    for i in range(len(x)):
        out[i] = x[i] * 2
    return out


def constant_in_branch(x):
    if x[0] > 0:
        y = np.ones(3)
    else:
        y = x * 2
    return y


def copies_then_updates(x):
    a = np.copy(x)
    b = np.copy(x)
    a[0] = 5.0
    return a, b, x


def scalars(x):
    return np.sum(x), np.float64(2.0), 3


CASES = [dup_copy, dup_method, dup_array, dup_asarray_copy, dup_array_ndmin, constant_result,
         folded_constant, view_of_constant, equal_results, same_result_twice, input_itself,
         filled_in_loop, constant_in_branch, copies_then_updates, scalars]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_results_are_as_independent_as_eager(fn):
    traced = function(fn)
    for call in range(3):
        x = np.arange(1.0, 4.0)
        x_eager = x.copy()
        got, expected = _results(traced(x)), _results(fn(x_eager))
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert type(g) is type(e)
            np.testing.assert_array_equal(g, e)
        assert _sharing(got, [x]) == _sharing(expected, [x_eager])
        # Writing into the results changes what eager code would change, and
        # nothing that a later call sees.
        for g, e in zip(got, expected, strict=True):
            if isinstance(g, np.ndarray) and g.size:
                g.flat[0] = 100.0 + call
                e.flat[0] = 100.0 + call
        np.testing.assert_array_equal(x, x_eager)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)


def test_copy_is_not_the_input():
    x = np.ones(3)
    y = function(dup_copy)(x)
    y[0] = 99.0
    assert x[0] == 1.0


def test_copy_of_a_python_scalar_is_a_zero_d_array():
    def f(x, n):
        return np.copy(n * 1.5) + x

    got = function(f)(np.float64(1.0), 2)
    assert type(got) is type(f(np.float64(1.0), 2))


def test_graph_run_results_are_not_kept_between_runs():
    with Graph() as g:
        p = g.placeholder((3,), "float64")
        zeros = np.zeros_like(p)
        a, b = p + 1, p + 1
    first = g.run([zeros, a, b], {p: np.ones(3)})
    assert first[1] is not first[2]
    first[0][0] = 5.0
    first[1][0] = 7.0
    again = g.run([zeros, a, b], {p: np.ones(3)})
    np.testing.assert_array_equal(again[0], np.zeros(3))
    np.testing.assert_array_equal(again[2], np.full(3, 2.0))
