"""A `for` over a Python range of at least RANGE_LOOP_MIN items whose body
only computes is one staged loop under a JAX trace (before: unrolled, 1,023
equations at n=256), with results equal to the unrolled loop's; a body
that could do otherwise once traced than once per item (a Python value
that changes type, a side effect, a list that grows, an index out of
bounds, a call of something else than JAX, numpy or a pure builtin, the
loop variable used other than as an index) stays a Python loop.

Each case is differential: converted under jax.jit (and grad, vmap)
against the unconverted function run eagerly."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from autograph.runtime.jax.backend import RANGE_LOOP_MIN

import autograph

jax.config.update("jax_enable_x64", True)

N = 64


def decay(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc * 0.9 + x[i]
    return acc


def matrix_rows(w, v):
    out = jnp.zeros(w.shape[0])
    for i in range(w.shape[0]):
        out = out.at[i].set(jnp.tanh(w[i, :] @ v).sum())
    return out


def power_iteration(a):
    v = jnp.ones(a.shape[0])
    for _ in range(N):
        v = a @ v
        v = v / jnp.linalg.norm(v)
    return v


def nested_ifs(x):
    acc = 0.0
    for i in range(N):
        if x[i] > 0:
            acc = acc + x[i]
        else:
            acc = acc - 0.5 * x[i]
    return acc


def item_update(x):
    y = jnp.zeros_like(x)
    for i in range(len(x) - 1, -1, -1):
        y[i] = x[i] * 2.0
    return y


def _numpy_version(f):
    """`f` with `jnp` bound to numpy: item_update run eagerly (JAX arrays
    take no item assignment, numpy's do)."""
    import types
    return types.FunctionType(f.__code__, {**f.__globals__, "jnp": np}, f.__name__)


STAGED = [
    (decay, lambda: (jnp.linspace(-1.0, 1.0, N),)),
    (matrix_rows, lambda: (jnp.arange(N * 3.0).reshape(N, 3) / 100, jnp.ones(3))),
    (power_iteration, lambda: (jnp.eye(4) + 0.1,)),
    (nested_ifs, lambda: (jnp.sin(jnp.arange(N * 1.0)),)),
    (item_update, lambda: (jnp.arange(N * 1.0),)),
]
EAGER = {item_update: lambda x: _numpy_version(item_update)(np.asarray(x))}


def _loops(jaxpr):
    """The names of the loop primitives in `jaxpr`, nested ones included."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in ("scan", "while"):
            found.append(eqn.primitive.name)
        for sub in jax.core.jaxprs_in_params(eqn.params):
            found += _loops(sub)
    return found


def _equations(jaxpr):
    return sum(1 + sum(_equations(s) for s in jax.core.jaxprs_in_params(e.params)) for e in jaxpr.eqns)


@pytest.mark.parametrize("f, make", STAGED, ids=[f.__name__ for f, _ in STAGED])
def test_a_long_range_that_only_computes_is_one_loop(f, make):
    args = make()
    staged = jax.jit(autograph.to_graph(f))
    np.testing.assert_allclose(staged(*args), EAGER.get(f, f)(*args), rtol=1e-12)
    jaxpr = jax.make_jaxpr(staged)(*args).jaxpr
    assert _loops(jaxpr) == ["scan"]
    assert _equations(jaxpr) < 60


def test_grad_and_vmap_of_a_staged_range():
    x = jnp.linspace(-1.0, 1.0, N)
    converted = autograph.to_graph(decay)
    np.testing.assert_allclose(jax.grad(converted)(x), jax.grad(decay)(x), rtol=1e-12)
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(jax.jit(jax.vmap(converted))(xs), jax.vmap(decay)(xs), rtol=1e-12)


def test_a_short_range_unrolls():
    x = jnp.ones(RANGE_LOOP_MIN - 1)
    assert _loops(jax.make_jaxpr(jax.jit(autograph.to_graph(decay)))(x).jaxpr) == []
    assert _loops(jax.make_jaxpr(jax.jit(autograph.to_graph(decay)))(jnp.ones(RANGE_LOOP_MIN)).jaxpr) == ["scan"]


def prints(x):
    acc = 0.0
    for i in range(len(x)):
        print("step")
        acc = acc + x[i]
    return acc


def appends(x):
    out = []
    for i in range(len(x)):
        out.append(x[i] * 2)
    return jnp.stack(out)


def counts(x):
    acc, count = 0.0, 0
    for i in range(len(x)):
        acc = acc + x[i]
        count += 1
    return acc * count


def past_the_end(x):
    # (JAX reads a clamped row past the end, eagerly too: a list would raise.)
    acc = 0.0
    for i in range(len(x) + 1):
        acc = acc + x[i]
    return acc


def arithmetic(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + x[i] * i
    return acc


def random_draws(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + x[i] * np.random.default_rng(i).random()
    return acc


BUFFER = np.zeros(1)


def numpy_in_place(x):
    acc = 0.0
    for i in range(len(x)):
        np.copyto(BUFFER, BUFFER + 1.0)
        acc = acc + x[i]
    return acc


class Counter:
    calls = 0


def attribute(x):
    acc = 0.0
    for i in range(len(x)):
        Counter.calls = Counter.calls + 1
        acc = acc + x[i]
    return acc


def helper(v):
    return v * 2


def user_callee(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + helper(x[i])
    return acc


UNROLLED = [prints, appends, counts, past_the_end, arithmetic, random_draws, numpy_in_place, attribute,
            user_callee]


@pytest.mark.parametrize("f", UNROLLED, ids=[f.__name__ for f in UNROLLED])
def test_a_body_that_may_do_more_than_compute_stays_a_python_loop(f, capsys):
    x = jnp.linspace(0.0, 1.0, N)
    Counter.calls, BUFFER[0] = 0, 0.0
    expected = f(x)
    expected_out, expected_calls, expected_buffer = capsys.readouterr().out, Counter.calls, BUFFER[0]
    Counter.calls, BUFFER[0] = 0, 0.0
    staged = jax.jit(autograph.to_graph(f))
    np.testing.assert_allclose(staged(x), expected, rtol=1e-12)
    assert capsys.readouterr().out == expected_out
    assert (Counter.calls, BUFFER[0]) == (expected_calls, expected_buffer)
    assert _loops(jax.make_jaxpr(jax.jit(autograph.to_graph(f)))(x).jaxpr) == []


def test_on_python_values_the_loop_is_python():
    assert autograph.to_graph(decay)([1.0] * N) == decay([1.0] * N)
    assert autograph.to_graph(counts)(list(range(N))) == counts(list(range(N)))
    with pytest.raises(IndexError):
        autograph.to_graph(past_the_end)([1.0] * N)
