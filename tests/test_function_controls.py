"""Controls of autograph.function: reduce_retracing, run_functions_eagerly,
keyword arguments bound by the function's signature."""

import logging
import threading

import numpy as np
import pytest
from autograph.runtime.tracer.symbolic import SymbolicArray

import autograph
from autograph.traced_function import Spec


def total(x):
    s = 0.0
    for v in x:
        if v > 0:
            s += v
    return s


# reduce_retracing

def test_reduce_retracing_generalizes_the_dimension_that_changed():
    f = autograph.function(total, reduce_retracing=True)
    for n in range(1, 12):
        x = np.arange(n, dtype=np.float64) - 3
        assert f(x) == total(x)
    assert f.trace_count == 2     # float64[1], then float64[None] for every later length
    assert "%x: float64[?]" in str(f.get_concrete_function(np.ones(20)))
    assert f.trace_count == 2


def test_without_reduce_retracing_every_length_traces():
    f = autograph.function(total)
    for n in range(1, 5):
        f(np.ones(n))
    assert f.trace_count == 4


def test_reduce_retracing_keeps_dimensions_that_did_not_change():
    f = autograph.function(lambda x: np.sum(x, axis=0), autograph=False, reduce_retracing=True)
    for n in range(1, 6):
        np.testing.assert_array_equal(f(np.ones((n, 3))), np.full(3, float(n)))
    assert f.trace_count == 2
    assert str(f.get_concrete_function(np.ones((9, 3)))).startswith("graph <lambda>(%x: float64[?,3]):")
    f(np.ones((4, 5)))                   # the second dimension changes: one more trace
    f(np.ones((6, 7)))
    assert f.trace_count == 3
    assert str(f.get_concrete_function(np.ones((2, 2)))).startswith("graph <lambda>(%x: float64[?,?]):")


def test_reduce_retracing_does_not_merge_dtypes_ranks_or_python_values():
    f = autograph.function(lambda x, k: x * k, autograph=False, reduce_retracing=True)
    f(np.ones(2), 2)
    f(np.ones(2, np.float32), 2)        # dtype
    f(np.ones((2, 2)), 2)               # rank
    f(np.ones(2), 3)                    # Python value
    assert f.trace_count == 4
    np.testing.assert_array_equal(f(np.ones(5), 3), [3.0] * 5)    # generalizes float64[2] with k=3
    np.testing.assert_array_equal(f(np.ones(7), 3), [3.0] * 7)
    assert f.trace_count == 5


def test_reduce_retracing_in_nested_arguments():
    f = autograph.function(lambda xs: xs[0].sum() + xs[1].sum(), autograph=False, reduce_retracing=True)
    for n in range(1, 6):
        assert f([np.ones(n), np.ones(2)]) == n + 2
    assert f.trace_count == 2


def test_retrace_warning_suggests_reduce_retracing_for_shapes_only(caplog):
    f = autograph.function(lambda x: x * 2, autograph=False)
    g = autograph.function(lambda x, k: x * k, autograph=False)
    with caplog.at_level(logging.WARNING, logger="autograph"):
        for n in range(1, 8):
            f(np.ones(n))
            g(np.ones(2), n)
    shapes, values = [r.getMessage() for r in caplog.records]
    assert shapes.endswith("or give an input_signature with None dimensions, or use reduce_retracing=True.")
    assert values.endswith("or give an input_signature with None dimensions.")


# run_functions_eagerly

def test_run_functions_eagerly_runs_the_python_function():
    seen = []

    @autograph.function
    def f(x):
        seen.append(type(x))
        return total(x)

    x = np.array([1.0, -2.0, 3.0])
    assert f(x) == 4.0 and f.trace_count == 1
    assert f(x) == 4.0            # through the fast entry of the cached signature
    assert seen == [SymbolicArray]
    autograph.run_functions_eagerly(True)
    try:
        assert f(x) == 4.0
        assert f(np.ones(5)) == 5.0
        assert f(x=x) == 4.0
    finally:
        autograph.run_functions_eagerly(False)
    assert seen == [SymbolicArray, np.ndarray, np.ndarray, np.ndarray]
    assert f.trace_count == 1
    assert f(np.ones(5)) == 5.0 and f.trace_count == 2
    assert seen[-1] is SymbolicArray


def test_run_functions_eagerly_as_a_context_manager_restores_the_setting():
    f = autograph.function(lambda x: x * 2, autograph=False)
    with autograph.run_functions_eagerly(True):
        with autograph.run_functions_eagerly(False):
            assert f(np.float64(1.0)) == 2.0
            assert f.trace_count == 1
        assert f(np.float64(1.0)) == 2.0 and f(np.float32(1.0)) == 2.0
        assert f.trace_count == 1
    assert f(np.float32(1.0)) == 2.0 and f.trace_count == 2


def test_run_functions_eagerly_with_an_input_signature_and_breakpoint_style_code():
    values = []

    @autograph.function(input_signature=[Spec((None,))])
    def f(x):
        values.append(float(x[0]))      # needs a concrete value: fails when traced
        return x * 2

    with autograph.run_functions_eagerly(True):
        np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    assert values == [1.0] and f.trace_count == 0


def test_run_functions_eagerly_applies_to_all_threads():
    f = autograph.function(lambda x: x + 1, autograph=False)
    results = []
    with autograph.run_functions_eagerly(True):
        t = threading.Thread(target=lambda: results.append(f(np.float64(1.0))))
        t.start()
        t.join()
    assert results == [2.0] and f.trace_count == 0


# Keyword arguments

def test_keyword_arguments_under_an_input_signature():
    @autograph.function(input_signature=[Spec((), "int64")])
    def twice(n):
        return n * 2

    assert twice(n=3) == 6 and twice(3) == 6
    assert twice.trace_count == 1
    with pytest.raises(TypeError, match=r"^twice\(\): got an unexpected keyword argument 'm'$"):
        twice(3, m=3)
    with pytest.raises(TypeError, match=r"^twice\(\): missing a required argument: 'n'$"):
        twice(m=3)


def test_keywords_bind_to_their_parameters():
    f = autograph.function(lambda x, k=2: x * k, autograph=False)
    assert f(np.float64(1.0), 3) == 3.0
    assert f(np.float64(1.0), k=3) == 3.0
    assert f(x=np.float64(1.0), k=3) == 3.0
    assert f.trace_count == 1
    assert f(np.float64(1.0)) == 2.0
    with pytest.raises(TypeError, match=r"^<lambda>\(\): multiple values for argument 'x'$"):
        f(np.float64(1.0), x=np.float64(2.0))


def test_keyword_only_and_var_keyword_arguments():
    @autograph.function(autograph=False)
    def f(x, *, scale, **extra):
        return x * scale + sum(extra.values())

    assert f(np.float64(1.0), scale=np.float64(2.0), a=1, b=2) == 5.0
    assert f(np.float64(1.0), b=2, a=1, scale=np.float64(2.0)) == 5.0
    assert f.trace_count == 1


def test_methods_bind_self():
    class Model:
        def __init__(self, w):
            self.w = w

        @autograph.function
        def apply(self, x, bias=0.0):
            return x * self.w + bias

    m = Model(3.0)
    assert m.apply(np.float64(2.0)) == 6.0
    assert m.apply(np.float64(2.0), bias=1.0) == m.apply(np.float64(2.0), 1.0) == 7.0
    assert Model.apply.trace_count == 2
