"""`jax.jit(autograph.to_graph(f))`: Python control flow on JAX tracers
becomes `lax.cond`, `lax.while_loop` and `lax.fori_loop`.

    pip install ".[jax]" && python examples/jax_jit.py
"""

import importlib.util
import sys

if importlib.util.find_spec("jax") is None:
    print('This example needs JAX: pip install ".[jax]" (from the repository root), or pip install jax')
    sys.exit(0)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import autograph  # noqa: E402


def clipped_sum_of_squares(x, limit):
    """Adds squares until the total passes `limit`: a loop with a `break`
    and a data-dependent `if`, which plain `jax.jit` cannot trace."""
    total = 0.0
    for v in x:
        if v > 0:
            total += v * v
        else:
            total -= v
        if total > limit:
            break
    return total


def newton_sqrt(a):
    x = a
    while jnp.abs(x * x - a) > 1e-6:
        x = 0.5 * (x + a / x)
    return x


def main():
    x = jnp.array([1.0, -2.0, 3.0, 4.0])

    try:
        jax.jit(clipped_sum_of_squares)(x, 5.0)
    except jax.errors.ConcretizationTypeError as e:
        print(f"# plain jax.jit fails: {type(e).__name__}")

    f = jax.jit(autograph.to_graph(clipped_sum_of_squares))
    print(f"# eager: clipped_sum_of_squares(x, 5.0) = {clipped_sum_of_squares(x, 5.0)}; "
          f"jax.jit(to_graph(...)): {f(x, 5.0)}")
    grad = jax.jit(jax.grad(autograph.to_graph(clipped_sum_of_squares)))
    print(f"# gradient through the loop: {grad(x, 100.0)}")

    print(f"# jax.jit(to_graph(newton_sqrt))(2.0) = {jax.jit(autograph.to_graph(newton_sqrt))(2.0)}")

    print("# the jaxpr of the converted function:")
    print(jax.make_jaxpr(autograph.to_graph(clipped_sum_of_squares))(x, 5.0))


if __name__ == "__main__":
    main()
