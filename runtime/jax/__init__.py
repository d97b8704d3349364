"""The JAX backend: Python control flow on JAX tracers becomes `jax.lax`
control flow.

Under `jax.jit` (or `jax.vmap`, `jax.grad`, ...) converted code meets JAX
tracers. Where a condition's value is known while tracing (under an eager
`jax.grad`, say) the statement runs as plain Python, exactly as the
unconverted function would. Where it is abstract:

  * `if` and conditional expressions become `lax.select` where both
    branches are small and side-effect free (`cond.selectable`), else `lax.cond`;
  * `while` becomes `lax.while_loop`;
  * `for` over a traced array or over `enumerate`/`zip` of traced arrays
    becomes `lax.scan` over the rows, over a static `range()` with
    `set_loop_options(unroll=False)` a `lax.fori_loop` (both reverse-mode
    differentiable); where the loop can `break` or `return`, a
    `lax.while_loop` over the index that stops when it does
    (which differentiates as the scan form); over `range()`
    of a traced bound, `lax.while_loop`;
  * `and`, `or`, `not`, `print`, `assert`, `x[i] = v` and the builtins `range`,
    `len`, `int`, `float`, `bool`, `min`, `max`, `sum`, `any`, `all`,
    `enumerate` and `zip` get their traced meaning.

Branch outputs and loop state are pytrees. Their array leaves (tracers,
arrays, Python numbers) are what `lax` carries; every other leaf (a string,
None, a function, ...) must be the same whichever way the program goes. A
Python number that meets an array takes the array's dtype, as with
`jnp.where`; arrays must agree in dtype and shape.

The package, one responsibility per module:

  backend.py   `JaxBackend`, what the staging core asks of JAX; loads the
               modules below only once jax is imported, so importing the
               backend costs nothing to programs that do not use jax
  values.py    which values are traced, their types, the type two branches
               or iterations agree on, a value cast to it
  cond.py      a staged `if`: `lax.select` or `lax.cond`
  loops.py     staged loops: `while_loop`, `scan`, `fori_loop`, a loop that
               stops early; the iterables a traced `for` runs over
  builtins.py  `range`, `len`, `int`, `min`, `sum`, ... on traced values
  compat.py    everything taken from jax's private API, each use beside
               its public fallback, and the jax version it is tested with
"""

from autograph.runtime.jax.backend import JaxBackend

__all__ = ["JaxBackend"]
