"""`out[i] = v` where `out` is a concrete numpy array made inside the
function (`np.zeros`) and `i` or `v` is traced: a functional update, as for
traced targets (runtime/operators.py: setitem), with the numpy tracer and
under real `jax.jit`."""

import numpy as np
import pytest

import autograph


def fill_python_loop(x):
    out = np.zeros(3)
    for i in range(len(x)):
        out[i] = x[i] * 2
    return out


def fill_symbolic_loop(x, n):
    out = np.zeros(4)
    for i in range(n):
        out[i] = x[i] * 2
    return out


def fill_in_branch(x):
    out = np.zeros(3)
    for i in range(3):
        if x[i] > 0:
            out[i] = x[i] * 2
    return out


def symbolic_index(x, n):
    out = np.zeros(4, dtype=np.int64)
    out[n] = 7
    return out + x


def int_target_float_value(x):
    out = np.zeros(3, dtype=np.int64)
    out[1] = x[0] * 1.5    # numpy casts on assignment: 3.0 * 1.5 -> 4
    return out


def one_update(x):
    out = np.ones(3)
    out[0] = x[0]
    return out, out.sum()


CASES = [
    (fill_python_loop, (np.arange(1.0, 4.0),)),
    (fill_symbolic_loop, (np.arange(1.0, 5.0), np.int64(3))),
    (fill_in_branch, (np.array([1.0, -2.0, 3.0]),)),
    (symbolic_index, (np.int64(1), np.int64(2))),
    (int_target_float_value, (np.array([3.0, 1.0]),)),
    (one_update, (np.array([5.0, 1.0, 1.0]),)),
]


def _check(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_numpy_tracer(fn, args):
    traced = autograph.function(fn)
    _check(traced(*args), fn(*args))
    _check(traced(*args), fn(*args))   # the constant array is not changed by the first call


# JAX warns that scattering a float into an int array will become an error.
JAX_CASES = [c for c in CASES if c[0] is not int_target_float_value]


@pytest.mark.parametrize("fn, args", JAX_CASES, ids=[c[0].__name__ for c in JAX_CASES])
def test_jax_jit(fn, args):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    got = jax.jit(autograph.to_graph(fn))(*args)
    expected = fn(*args)
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)


def test_read_only_target_raises_as_eager():
    def f(x):
        out = np.broadcast_to(np.zeros(1), (3,))
        out[0] = x
        return out

    with pytest.raises(ValueError, match="read-only"):
        f(np.float64(1.0))
    with pytest.raises(ValueError, match="read-only"):
        autograph.function(f)(np.float64(1.0))


def test_list_target_keeps_python_semantics():
    def f(x):
        out = [0.0, 0.0]
        out[1] = x * 2
        return out[1]

    assert autograph.function(f)(np.float64(2.0)) == f(np.float64(2.0))
