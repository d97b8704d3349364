"""A traced `if` whose branches are traced where it is (runtime/jax/cond.py, `_cond_here`):
a `select` where the rule of docs/jax.md takes the branches, with the
equations of hand-written `jnp.where`; otherwise their equations move into a
`lax.cond`, so that effects (callbacks, prints, asserts) run only in the
branch taken and nothing of either branch stays behind. Differential: the
converted function against the unconverted one (or hand-written `lax` where
the unconverted one cannot run: under `vmap`)."""

import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import lax  # noqa: E402

import autograph  # noqa: E402
from tests.runtime.test_jax_equations import dead, jaxprs  # noqa: E402

jax.config.update("jax_enable_x64", True)


def primitives(fn, *args):
    """The primitives of `jax.make_jaxpr(fn)`, nested jaxprs included, sorted."""
    return sorted(e.primitive.name for j in jaxprs(jax.make_jaxpr(fn)(*args).jaxpr) for e in j.eqns)


def top_level(fn, *args):
    return [e.primitive.name for e in jax.make_jaxpr(fn)(*args).jaxpr.eqns]


# select: the equations of lax.select (jnp.where adds a jit around each) -------------------------------------------

def two_outputs(x, n):
    if x > 0:
        y = x * 2.0
        n = n + 1
    else:
        y = x - 1.0
    return y, n


def two_outputs_select(x, n):
    c = x > 0
    return lax.select(c, x * 2.0, x - 1.0), lax.select(c, n + 1, n)


def nested(x):
    if x < -1.0:
        y = -1.0 - 2.0 * (x + 1.0)
    elif x < 1.0:
        y = x * x * x
    else:
        y = 1.0 + 3.0 * (x - 1.0)
    return y


def nested_select(x):
    return lax.select(x < -1.0, -1.0 - 2.0 * (x + 1.0), lax.select(x < 1.0, x * x * x, 1.0 + 3.0 * (x - 1.0)))


@pytest.mark.parametrize("fn, by_hand, args", [
    (two_outputs, two_outputs_select, (1.5, np.int64(3))),
    (nested, nested_select, (0.5,)),
])
def test_a_selected_if_has_the_equations_of_a_hand_written_select(fn, by_hand, args):
    converted = autograph.to_graph(fn)
    assert primitives(converted, *args) == primitives(by_hand, *args)
    assert dead(jax.make_jaxpr(converted)(*args).jaxpr) == 0
    for a in (2.0, -3.0, 0.25):
        call = (a,) + args[1:]
        np.testing.assert_allclose(jax.jit(converted)(*call), fn(*call))
        grads = [jax.grad(lambda v, g=g: first(g(v, *args[1:])))(a) for g in (fn, converted)]
        np.testing.assert_allclose(jax.jit(jax.grad(lambda v: first(converted(v, *args[1:]))))(a), grads[0])
        np.testing.assert_allclose(grads[1], grads[0])


def first(out):
    return out[0] if isinstance(out, tuple) else out


# effects: only in the branch taken ---------------------------------------------

CALLS = []


def with_callback(x):
    y = x * 2.0
    if x > 0:
        jax.debug.callback(lambda v: CALLS.append(("taken", float(v))), x)
        y = y + 1.0
    else:
        y = y - 1.0
    return y


def with_callback_lax(x):
    def taken(x, y):
        jax.debug.callback(lambda v: CALLS.append(("taken", float(v))), x)
        return y + 1.0
    return lax.cond(x > 0, taken, lambda x, y: y - 1.0, x, x * 2.0)


def eager(x):
    """`with_callback` as Python runs it: its calls."""
    y = x * 2.0
    if x > 0:
        CALLS.append(("taken", float(x)))
        y = y + 1.0
    else:
        y = y - 1.0
    return y


def calls_of(run):
    CALLS.clear()
    out = run()
    jax.effects_barrier()
    got = list(CALLS)
    CALLS.clear()
    return out, got


@pytest.mark.parametrize("x", [2.0, -2.0])
def test_a_callback_in_a_branch_runs_only_when_the_branch_is_taken(x):
    converted = autograph.to_graph(with_callback)
    expected = calls_of(lambda: eager(x))
    for run in (lambda: jax.jit(converted)(x), lambda: jax.jit(jax.jit(converted))(x)):
        out, calls = calls_of(run)
        assert (float(out), calls) == expected
    # grad: the primal runs the callback once, where the branch is taken.
    expected_grad = calls_of(lambda: jax.grad(with_callback_lax)(x))
    for run in (lambda: jax.grad(converted)(x), lambda: jax.jit(jax.grad(converted))(x),
                lambda: jax.grad(jax.jit(converted))(x)):
        out, calls = calls_of(run)
        assert (float(out), calls) == (float(expected_grad[0]), expected_grad[1])
    assert float(expected_grad[0]) == 2.0
    assert expected_grad[1] == calls_of(lambda: eager(x))[1]


def test_a_callback_in_a_branch_under_vmap_runs_as_lax_cond_runs_it():
    xs = jnp.array([1.0, -1.0, 3.0])
    converted = autograph.to_graph(with_callback)
    for wrap in (jax.vmap, lambda f: jax.jit(jax.vmap(f))):
        expected = calls_of(lambda wrap=wrap: wrap(with_callback_lax)(xs))
        out, calls = calls_of(lambda wrap=wrap: wrap(converted)(xs))
        np.testing.assert_allclose(out, expected[0])
        assert sorted(calls) == sorted(expected[1])


def test_no_effect_and_no_dead_equation_is_left_outside_the_cond():
    converted = autograph.to_graph(with_callback)
    jaxpr = jax.make_jaxpr(converted)(1.0).jaxpr
    assert "debug_callback" not in top_level(converted, 1.0)
    assert "cond" in top_level(converted, 1.0)
    assert dead(jaxpr) == 0
    assert primitives(converted, 1.0) == primitives(with_callback_lax, 1.0)


def printing(x):
    if x > 0:
        print("positive", x)
        x = x + 1
    return x


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_a_print_in_a_branch_prints_only_when_taken(x, capfd):
    converted = jax.jit(autograph.to_graph(printing))
    capfd.readouterr()
    out = converted(x)
    jax.effects_barrier()
    printed = capfd.readouterr().out
    expected = printing(x)
    assert (float(out), printed) == (expected, capfd.readouterr().out)


def asserting(x):
    if x > 0:
        assert x < 10, "too large"
        x = x * 2
    return x


def test_an_assert_in_a_branch_checks_only_when_taken():
    converted = jax.jit(autograph.to_graph(asserting))
    assert float(converted(-20.0)) == asserting(-20.0)
    assert float(converted(3.0)) == asserting(3.0)
    with pytest.raises(Exception, match="too large"):
        converted(20.0)
        jax.effects_barrier()


# retried branches, loops inside, leak checking --------------------------------------

def settles_late(x):
    # The true branch, traced first, gives `y` a Python int; the false branch
    # a float array: the `if` is traced again with the merged type.
    if x > 0:
        jax.debug.callback(lambda v: CALLS.append(("taken", float(v))), x)
        y = 1
    else:
        y = x * 0.5
    return y


@pytest.mark.parametrize("x", [2.0, -2.0])
def test_a_branch_traced_again_leaves_no_effect_behind(x):
    converted = autograph.to_graph(settles_late)
    jaxpr = jax.make_jaxpr(converted)(x).jaxpr
    assert dead(jaxpr) == 0
    assert [e.primitive.name for e in jaxpr.eqns].count("debug_callback") == 0
    out, calls = calls_of(lambda: jax.jit(converted)(x))
    assert float(out) == (1.0 if x > 0 else x * 0.5)
    assert calls == ([("taken", x)] if x > 0 else [])


def loop_in_branch(x, n):
    if x > 0:
        while x < n:
            x = x * 2.0
    else:
        x = -x
    return x


def test_a_loop_in_a_branch_makes_a_cond():
    converted = autograph.to_graph(loop_in_branch)
    assert top_level(converted, 1.0, 100.0).count("cond") == 1
    assert "while" not in top_level(converted, 1.0, 100.0)
    assert dead(jax.make_jaxpr(converted)(1.0, 100.0).jaxpr) == 0
    for x in (3.0, -3.0, 200.0):
        assert float(jax.jit(converted)(x, 100.0)) == loop_in_branch(x, 100.0)


def small_and_large(x, v):
    if x > 0:
        if x > 1:    # small: a select inside the outer branch
            x = x + 1.0
        v = v * 3.0  # 100 elements: the outer `if` is a cond
    return x, v


def test_a_selected_if_inside_a_cond_branch():
    converted = autograph.to_graph(small_and_large)
    v = jnp.arange(100.0)
    assert top_level(converted, 1.0, v).count("cond") == 1
    assert dead(jax.make_jaxpr(converted)(1.0, v).jaxpr) == 0
    for x in (2.0, 0.5, -1.0):
        got = jax.jit(converted)(x, v)
        expected = small_and_large(x, v)
        np.testing.assert_allclose(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1])


def counted(x):
    next(COUNT)  # runs when the branch is traced (a C object: no place that staging records)
    return x + 1.0


COUNT = itertools.count()


def traced_branches(x):
    if x > 0:
        jax.debug.callback(lambda v: None, x)
        x = counted(x)
    else:
        x = counted(x) * 2.0
    return x


def test_each_branch_is_traced_once_even_where_it_becomes_a_cond():
    converted = autograph.to_graph(traced_branches)
    before = next(COUNT)
    jaxpr = jax.make_jaxpr(converted)(1.0)
    assert next(COUNT) - before == 3
    assert "cond" in [e.primitive.name for e in jaxpr.jaxpr.eqns]


@pytest.mark.parametrize("fn, args", [
    (two_outputs, (1.5, np.int64(3))), (with_callback, (2.0,)), (settles_late, (-2.0,)),
    (loop_in_branch, (3.0, 100.0)),
])
def test_under_tracer_leak_checking(fn, args):
    converted = autograph.to_graph(fn)
    with jax.checking_leaks():
        got = jax.jit(converted)(*args)
    jax.effects_barrier()
    CALLS.clear()
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(fn(*args)), strict=True):
        np.testing.assert_allclose(g, e)


# a chain of small branches, one of which can overflow: selects, no NaN gradient ------------

def piecewise(v):
    if v < -1.0:
        y = -1.0 - 2.0 * (v + 1.0)
    elif v < 0.0:
        y = jnp.exp(-v * 800.0) - 1.0   # inf where v < -0.9: never taken there
    elif v < 1.0:
        y = v * v * v
    else:
        y = 1.0 + 3.0 * (v - 1.0)
    return y


def piecewise_select_n(v):
    index = (v >= -1.0).astype(jnp.int32) + (v >= 0.0) + (v >= 1.0)
    return lax.select_n(index, -1.0 - 2.0 * (v + 1.0), jnp.exp(-v * 800.0) - 1.0, v * v * v, 1.0 + 3.0 * (v - 1.0))


def test_a_chain_of_small_branches_under_vmap_has_the_equations_of_select_n_and_its_gradient():
    converted = autograph.to_graph(piecewise)
    xs = jnp.array([-3.0, -1.0, -0.5, -0.001, 0.0, 0.5, 1.0, 2.5])
    count = [len(jax.make_jaxpr(jax.vmap(f))(xs).jaxpr.eqns) for f in (converted, piecewise_select_n)]
    assert count[0] <= 1.2 * count[1], count
    assert "cond" not in primitives(jax.vmap(converted), xs)
    expected = [piecewise(x) for x in xs]
    np.testing.assert_allclose(jax.jit(jax.vmap(converted))(xs), expected)
    # jax.grad of the select_n a user writes is NaN where the exp overflows
    # (0 * inf); the converted chain's is Python's, branch by branch.
    grads = jax.jit(jax.vmap(jax.grad(converted)))(xs)
    assert bool(jnp.isnan(jax.vmap(jax.grad(piecewise_select_n))(xs)).any())
    np.testing.assert_allclose(grads, [jax.grad(piecewise)(x) for x in xs])
    np.testing.assert_allclose(jax.vmap(jax.grad(jax.jit(converted)))(xs), grads)
