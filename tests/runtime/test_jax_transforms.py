"""Functions handed to JAX's transforms from converted code are converted,
as converted code converts the functions it calls: `jax.grad(inner)`,
`jax.vmap(inner)`, `lax.cond(p, inner, ...)` trace `inner`'s `if` on a
traced value as a staged `if` (before: JAX's TracerBoolConversionError).
Each result is compared with the unconverted function's where JAX can run
it, and with hand-written `jnp.where` otherwise."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import autograph


def inner(t):
    if t > 0:
        return 2 * t * t
    return -t


def inner_by_hand(t):
    return jnp.where(t > 0, 2 * t * t, -t)


def grad_of_inner(v):
    return jax.grad(inner)(v)


def grad_by_keyword(v):
    return jax.grad(fun=inner)(v)


def value_and_grad_of_inner(v):
    return jax.value_and_grad(inner)(v)


def vmap_of_inner(xs):
    return jax.vmap(inner)(xs)


def jit_of_inner(v):
    return jax.jit(inner)(v)


def cond_with_inner(p, v):
    return lax.cond(p, inner, lambda t: t * 10.0, v)


def switch_with_inner(k, v):
    return lax.switch(k, [inner, lambda t: t + 1.0], v)


def fori_with_inner(v):
    return lax.fori_loop(0, 3, lambda i, t: inner(t) - 1.0, v)


def scan_with_inner(xs):
    def step(carry, x):
        if x > carry:
            carry = x
        return carry, carry
    return lax.scan(step, -jnp.inf, xs)[1]


def running_max_by_hand(xs):
    return lax.scan(lambda c, x: (jnp.maximum(c, x),) * 2, -jnp.inf, xs)[1]


@pytest.mark.parametrize("f", [grad_of_inner, grad_by_keyword])
@pytest.mark.parametrize("v", [3.0, -2.0])
def test_grad_of_a_function_with_a_traced_if(f, v):
    assert float(jax.jit(autograph.to_graph(f))(v)) == float(jax.grad(inner_by_hand)(v))
    assert float(autograph.to_graph(f)(v)) == float(jax.grad(inner)(v))  # eager grad: concrete values


def test_value_and_grad():
    value, grad = jax.jit(autograph.to_graph(value_and_grad_of_inner))(3.0)
    assert (float(value), float(grad)) == (18.0, 12.0)


def test_vmap_and_jit_of_a_function_with_a_traced_if():
    xs = jnp.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(jax.jit(autograph.to_graph(vmap_of_inner))(xs), inner_by_hand(xs))
    np.testing.assert_array_equal(autograph.to_graph(vmap_of_inner)(xs), inner_by_hand(xs))
    assert float(autograph.to_graph(jit_of_inner)(-2.0)) == inner(-2.0)


@pytest.mark.parametrize("p", [True, False])
def test_lax_cond_with_a_converted_branch(p):
    assert float(jax.jit(autograph.to_graph(cond_with_inner))(p, -3.0)) == (inner(-3.0) if p else -30.0)


@pytest.mark.parametrize("k", [0, 1])
def test_lax_switch_converts_each_branch_of_its_list(k):
    assert float(jax.jit(autograph.to_graph(switch_with_inner))(k, -3.0)) == (inner(-3.0) if k == 0 else -2.0)


def test_lax_fori_loop_and_scan_bodies_are_converted():
    t = 0.5
    for _ in range(3):
        t = inner(t) - 1.0
    assert float(jax.jit(autograph.to_graph(fori_with_inner))(0.5)) == t
    xs = jnp.array([1.0, 3.0, 2.0, 5.0])
    np.testing.assert_array_equal(jax.jit(autograph.to_graph(scan_with_inner))(xs), running_max_by_hand(xs))


def test_generated_code_calls_the_transform_as_written():
    assert "ag__.call(ag__.call(jax.grad)(inner))(v)" in autograph.to_code(grad_of_inner)


def partial_of_vmap(xs):
    return functools.partial(jax.vmap, in_axes=0)(inner)(xs)


def vmap_of_partial(xs):
    return jax.vmap(functools.partial(scaled, k=3.0))(xs)


def scaled(t, k):
    if t > 0:
        return k * t
    return -t


def test_partials_of_transforms_and_of_functions():
    xs = jnp.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(jax.jit(autograph.to_graph(partial_of_vmap))(xs), inner_by_hand(xs))
    np.testing.assert_array_equal(jax.jit(autograph.to_graph(vmap_of_partial))(xs), jnp.where(xs > 0, 3 * xs, -xs))


@autograph.do_not_convert
def kept(t):
    if t > 0:
        return t
    return -t


def grad_of_kept(v):
    return jax.grad(kept)(v)


def test_a_function_left_unconverted_is_named_in_the_tracers_error():
    with pytest.raises(jax.errors.TracerBoolConversionError) as caught:
        jax.jit(autograph.to_graph(grad_of_kept))(3.0)
    note = "\n".join(caught.value.__notes__)
    assert f"`kept` is marked with autograph.do_not_convert, so it runs as Python (defined at {__file__}:" in note
    assert "`grad` was handed it unconverted" in note and "autograph.to_graph(kept)" in note


@autograph.do_not_convert   # stands for a library's function that takes the user's function
def integrate(rhs, y0, steps):
    return lax.fori_loop(0, steps, lambda i, y: y + 0.1 * rhs(y), y0)


def decay(y):
    if y > 1.0:
        return -y
    return -0.5 * y


def solve(y0):
    return integrate(decay, y0, 20)


@pytest.fixture
def registered():
    from autograph.runtime import backends, calls
    yield
    backends._transforms.pop(integrate, None)
    calls.forget_all()


def test_register_transform_converts_the_functions_a_library_is_handed(registered):
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(autograph.to_graph(solve))(3.0)   # `integrate` hands `decay` to jax unconverted
    autograph.register_transform(integrate, "rhs")
    y = 3.0
    for _ in range(20):
        y = y + 0.1 * decay(y)
    np.testing.assert_allclose(float(jax.jit(autograph.to_graph(solve))(3.0)), y, rtol=1e-6)


def test_register_transform_names_the_parameters_it_knows():
    with pytest.raises(TypeError, match=r"'f' is not a parameter of integrate \(its parameters: 'rhs', 'y0', "
                                        r"'steps'\); name a parameter, or give its position"):
        autograph.register_transform(integrate, "f")
