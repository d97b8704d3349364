"""A staged `while` (and a `for` that can stop early) is the primitive
`while` of the jaxprs its test and body were traced into once
(runtime/jax/compat.py, `while_loop`), as `lax.while_loop` binds it: differential tests of
what JAX's transformations make of it (vmap, jvp, grad, leak checking,
effects in the body), the converted function against the unconverted one."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import autograph  # noqa: E402
from tests.runtime.test_jax_equations import dead  # noqa: E402

jax.config.update("jax_enable_x64", True)


def assert_same(got, expected):
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected), strict=True):
        assert jnp.asarray(g).dtype == jnp.asarray(e).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12)


def weak_start(x, n):
    # `total` enters as a Python float (weakly typed) and leaves the body
    # as a float64 array: it is carried strongly typed.
    total = 0.0
    i = 0
    while i < n:
        total = total + x[i] * x[i]
        i += 1
    return total, i


def halve_until(x, t):
    steps = 0
    while x > t:
        x = x * 0.5
        steps += 1
    return x, steps


def first_above(x, t, k):
    while k < x.shape[0]:
        if x[k] > t:
            return k * 1.5
        k += 1
    return -1.0


X = np.array([0.5, -2.0, 3.0, 1.5])


@pytest.mark.parametrize("fn, args", [
    (weak_start, (X, 3)), (weak_start, (X, 0)), (halve_until, (40.0, 1.0)), (halve_until, (0.5, 1.0)),
    (first_above, (X, 1.0, 0)), (first_above, (X, 9.0, 0)),
])
def test_jit_equals_python(fn, args):
    converted = autograph.to_graph(fn)
    assert_same(jax.jit(converted)(*args), fn(*args))
    assert dead(jax.make_jaxpr(converted)(*args).jaxpr) == 0
    with jax.checking_leaks():
        assert_same(jax.jit(converted)(*args), fn(*args))


def test_vmap_of_a_while_with_a_batched_test():
    converted = autograph.to_graph(halve_until)
    xs = jnp.array([40.0, 0.5, 3.0, 1000.0])
    expected = [halve_until(float(x), 1.0) for x in xs]
    for run in (jax.vmap(converted, (0, None)), jax.jit(jax.vmap(converted, (0, None))),
                jax.vmap(jax.jit(converted), (0, None))):
        got = run(xs, 1.0)
        assert_same(got[0], jnp.array([e[0] for e in expected]))
        assert [int(s) for s in got[1]] == [e[1] for e in expected]


def test_vmap_of_a_loop_whose_return_first_runs_inside_it():
    converted = autograph.to_graph(first_above)
    ts = jnp.array([1.0, 9.0, -5.0, 2.0])
    got = jax.jit(jax.vmap(converted, (None, 0, None)))(X, ts, 0)
    assert_same(got, jnp.array([first_above(X, float(t), 0) for t in ts]))


@pytest.mark.parametrize("x", [40.0, 3.0])
def test_jvp_and_grad_through_a_while(x):
    converted = autograph.to_graph(halve_until)
    expected = jax.jvp(lambda v: halve_until(v, 1.0)[0], (x,), (1.0,))
    assert_same(jax.jvp(lambda v: jax.jit(converted)(v, 1.0)[0], (x,), (1.0,)), expected)
    assert_same(jax.jit(lambda v, t: jax.jvp(lambda w: converted(w, 1.0)[0], (v,), (t,)))(x, 1.0), expected)


def test_grad_of_a_for_that_stops_early_through_the_weak_start():
    def clipped(x, limit):
        total = 0.0
        for v in x:
            total += v * v
            if total > limit:
                break
        return total
    converted = autograph.to_graph(clipped)
    x = jnp.array([0.5, -2.0, 3.0, 1.5])
    for limit in (2.0, 100.0):
        expected = jax.grad(clipped)(x, limit)
        assert_same(jax.jit(jax.grad(converted))(x, limit), expected)
        assert_same(jax.grad(jax.jit(converted))(x, limit), expected)
        assert_same(jax.jit(converted)(x, limit), clipped(np.asarray(x), limit))


SEEN = []


def noisy(x):
    while x < 10.0:
        jax.debug.callback(lambda v: SEEN.append(float(v)), x)
        x = x * 2.0
    return x


def test_a_callback_in_a_while_body_runs_once_per_iteration():
    SEEN.clear()
    out = jax.jit(autograph.to_graph(noisy))(1.5)
    jax.effects_barrier()
    got = list(SEEN)
    SEEN.clear()
    expected = noisy(1.5)  # eagerly, the callback runs at once
    jax.effects_barrier()
    assert (float(out), got) == (expected, SEEN)


# scans: a `for` over an array's rows, over enumerate(), over a static range not unrolled

def over_rows(x):
    total = 0.0
    for v in x:
        if v < 0.0:
            total += -v
        else:
            total += v * v
    return total


def over_enumerate(x):
    total = 0.0
    for i, v in enumerate(x):
        total = total + i * v
    return total


def over_range(x):
    acc = 0.0
    for i in range(x.shape[0]):
        autograph.set_loop_options(unroll=False)
        acc = 0.5 * acc + x[i]
    return acc


@pytest.mark.parametrize("fn", [over_rows, over_enumerate, over_range])
def test_scans_under_jit_vmap_and_grad(fn):
    converted = autograph.to_graph(fn)
    assert "scan" in [e.primitive.name for e in jax.make_jaxpr(converted)(X).jaxpr.eqns]
    assert_same(jax.jit(converted)(X), fn(jnp.asarray(X)))
    xs = jnp.stack([X, -X, X * 2.0])
    assert_same(jax.jit(jax.vmap(converted))(xs), jnp.stack([fn(r) for r in xs]))
    assert_same(jax.jit(jax.grad(converted))(X), jax.grad(fn)(jnp.asarray(X)))
    assert_same(jax.grad(jax.jit(converted))(X), jax.grad(fn)(jnp.asarray(X)))
    with jax.checking_leaks():
        assert_same(jax.jit(converted)(X), fn(jnp.asarray(X)))


# A loop that stops: the body runs only where the loop's test held

def first_below(x, t):
    for i, v in enumerate(x):
        if v < t:
            return i
    return -1


def clipped_sum(x, limit):
    total = 0.0
    for v in x:
        if total + v > limit:
            break
        total += v
    return total


def _while_body(fn, *args):
    # The loop, in the `custom_jvp` that wraps it where it carries floats.
    eqns = jax.make_jaxpr(autograph.to_graph(fn))(*args).jaxpr.eqns
    if eqns[-1].primitive.name == "custom_jvp_call":
        eqns = eqns[-1].params["call_jaxpr"].jaxpr.eqns
    loop, = [e for e in eqns if e.primitive.name == "while"]
    body = loop.params["body_jaxpr"].jaxpr
    read = {v for e in body.eqns for v in e.invars if isinstance(v, jax.extend.core.Var)}
    return body, body.invars[loop.params["body_nconsts"]:], read | {v for v in body.outvars
                                                                     if isinstance(v, jax.extend.core.Var)}


def test_a_loop_that_returns_carries_the_flag_and_the_value_without_selects():
    # As a hand-written `while_loop` that stops at the exit: the body never
    # reads the return flag it is entered with (the loop's test ran: it is
    # false) and gives the counter as the returned value (read only where
    # the flag is set), not a select of it and the zeros it came in with.
    x = jnp.linspace(1.0, 2.0, 50)
    body, (counter, flag, returned), used = _while_body(first_below, x, 0.5)
    assert flag not in used and returned not in used
    assert body.outvars[2] is counter
    assert [e.primitive.name for e in body.eqns].count("select_n") <= 1
    f = jax.jit(autograph.to_graph(first_below))
    for t in (0.5, 1.0, 1.5, 2.5):
        assert int(f(x, t)) == first_below(np.asarray(x), t)


def test_a_loop_that_breaks_does_not_read_the_break_flag_in_its_body():
    x = jnp.linspace(0.0, 1.0, 50)
    body, carried, used = _while_body(clipped_sum, x, 3.0)
    flags = [v for v in carried if v.aval.dtype == jnp.bool_]
    assert len(flags) == 1 and flags[0] not in used
    f = jax.jit(autograph.to_graph(clipped_sum))
    for limit in (-1.0, 3.0, 100.0):
        assert_same(f(x, limit), clipped_sum(np.asarray(x), limit))
        assert_same(jax.grad(autograph.to_graph(clipped_sum))(x, limit), jax.grad(clipped_sum)(x, limit))
    assert_same(jax.vmap(f, (None, 0))(x, jnp.array([-1.0, 3.0, 100.0])),
                jnp.array([clipped_sum(np.asarray(x), v) for v in (-1.0, 3.0, 100.0)]))
