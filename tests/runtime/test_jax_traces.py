"""How many times JAX tracing runs each block of converted code: every
branch and loop body of the functions of benchmarks/jax_control_flow.py is
traced once, as `lax` traces each function of a hand-written version once
(a loop where a `return` first runs is not traced again to carry the
returned value). Counted by a profile hook on the functions the conversion
makes for the blocks, which keep the user's file and line."""

import collections
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import autograph  # noqa: E402
from benchmarks import jax_control_flow as bench  # noqa: E402

jax.config.update("jax_enable_x64", True)

CASES = {f.__name__: (f, args) for f, _, args in bench._inputs()}


def traced_blocks(fn, *args):
    """{(block name, first line): calls} of the functions defined in `fn`'s
    file while `jax.jit` traces `fn` (converted once before)."""
    converted = autograph.to_graph(fn)
    jax.jit(converted).trace(*args)  # the conversion, cached
    filename = fn.__code__.co_filename
    counts = collections.Counter()

    def hook(frame, event, arg):
        code = frame.f_code
        if event == "call" and code.co_filename == filename and code.co_name != fn.__name__:
            counts[(code.co_name, code.co_firstlineno)] += 1
    fresh = lambda *a: converted(*a)  # noqa: E731 - a function jax.jit has not seen
    sys.setprofile(hook)
    try:
        jax.jit(fresh).trace(*args)
    finally:
        sys.setprofile(None)
    del counts[("<lambda>", fresh.__code__.co_firstlineno)]
    # The test of a `for` that can stop: also called, with a flag set, to
    # find the flags that are false in the body (runtime/staging/loops.py).
    for key in [k for k in counts if k[0].startswith("extra_test")]:
        del counts[key]
    return counts


@pytest.mark.parametrize("name", sorted(set(CASES) - {"decay_sum"}))
def test_each_block_is_traced_once(name):
    f, args = CASES[name]
    counts = traced_blocks(f, *args)
    assert counts and set(counts.values()) == {1}, counts


def test_a_loop_over_a_python_range_of_python_state_runs_its_first_iteration_as_python_then_traces_it():
    # decay_sum: `acc = 0.0` and `for i in range(len(x))` with
    # set_loop_options(unroll=False): the first iteration runs as Python to
    # find out whether the state becomes traced; it does, so the loop is
    # staged from it on, and its body traced once more.
    f, args = CASES["decay_sum"]
    assert set(traced_blocks(f, *args).values()) == {2}


def first_index_above(x, t, k):
    while k < x.shape[0]:
        if x[k] > t:
            return k * 1.5
        k += 1
    return -1.0


def first_match(xs, ys):
    for a, b in zip(xs, ys):
        if a == b:
            return a * b
    return jnp.zeros(())


@pytest.mark.parametrize("fn, args", [
    (first_index_above, (np.array([0.5, 2.0, 3.0]), 1.0, 0)),
    (first_index_above, (np.array([0.5, 0.2]), 1.0, 0)),
    (first_match, (np.array([1.0, 2.0, 3.0]), np.array([0.0, 2.0, 3.0]))),
    (first_match, (np.array([1.0, 2.0]), np.array([0.0, 0.0]))),
])
def test_a_return_in_a_loop_traces_the_body_once_and_gives_pythons_value(fn, args):
    expected = fn(*args)
    got = jax.jit(autograph.to_graph(fn))(*[jnp.asarray(a) for a in args])
    np.testing.assert_allclose(np.asarray(got), expected)
    counts = traced_blocks(fn, *[jnp.asarray(a) for a in args])
    assert counts and set(counts.values()) == {1}, counts


def test_a_return_in_a_loop_is_differentiable_with_one_trace():
    def scaled_first_above(x, t):
        for v in x:
            if v > t:
                return v * v
        return 0.0 * t

    x = jnp.asarray([0.5, 2.0, 3.0])
    grad = jax.grad(lambda x: jax.jit(autograph.to_graph(scaled_first_above))(x, 1.0))(x)
    np.testing.assert_allclose(np.asarray(grad), [0.0, 4.0, 0.0])
    counts = traced_blocks(scaled_first_above, x, 1.0)
    assert counts and set(counts.values()) == {1}, counts
