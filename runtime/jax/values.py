"""JAX values as the staging core sees them: which are traced, their types
(shape, dtype, weak type), the type two branches or iterations agree on,
and a value cast to it."""

import math

import jax
import jax.numpy as jnp
import numpy as np
from autograph.runtime import staging
from autograph.runtime.errors import TracingError
from jax import lax

NUMBERS = (bool, int, float, complex)


def is_tracer(x):
    return isinstance(x, jax.core.Tracer)


def is_abstract(x):
    """A tracer whose value is not known while tracing."""
    return isinstance(x, jax.core.Tracer) and x.to_concrete_value() is None


def concrete(x):
    """`bool(x)` if x's value is known while tracing, else None."""
    if isinstance(x, jax.core.Tracer) and math.prod(x.shape) == 1 and x.to_concrete_value() is None:
        return None  # without the error bool() builds, which costs more than the rest of an `if`
    try:
        return bool(x)
    except jax.errors.ConcretizationTypeError:
        return None


def is_value(x):
    return type(x) in NUMBERS or isinstance(x, jax.Array) or hasattr(x, "__array__") \
        and hasattr(x, "dtype") and hasattr(x, "shape")


def typeof(x):
    t = jax.typeof(x)
    return (t.shape, t.dtype, t.weak_type)


def describe_type(t):
    shape, dtype, weak = t
    text = f"{dtype.name}[{','.join(map(str, shape))}]"
    return text + " (weakly typed: from a Python number)" if weak else text


def merge(a, b):
    """The type that both a and b can take as one variable, or None."""
    if a[:2] == b[:2]:
        return a if a[2] and b[2] else (a[0], a[1], False)
    if a[2] and b[2] and a[0] == b[0] == ():
        return ((), jnp.result_type(a[1], b[1]), True)
    if a[2] != b[2]:
        (weak, strong) = (a, b) if a[2] else (b, a)
        if weak[0] == () and jnp.result_type(strong[1], weak[1].type(0).item()) == strong[1]:
            return strong
    return None


def cast(x, t):
    """x as a value of type t (shape, dtype, weak); None for a Python
    number that t's dtype cannot hold (`staging.numpy_holds`)."""
    shape, dtype, _ = t
    if isinstance(x, jax.core.Tracer) and x.dtype == dtype and x.shape == shape:
        return x  # as jnp.asarray gives it, without a call
    if type(x) in NUMBERS and not staging.numpy_holds(x, dtype):
        return None
    if type(x) in NUMBERS and shape == ():
        if t[2] and typeof(x) == t:
            return x  # a Python number that stays one: lax takes it as it is
        if not t[2]:
            return np.asarray(x, dtype)  # a constant, without an operation to make it
    v = jnp.asarray(x)
    if v.dtype != dtype:
        v = lax.convert_element_type(v, dtype)
    if v.shape != shape:
        v = jnp.broadcast_to(v, shape)
    return v


def predicate(flag, what, loc):
    """A traced condition as the boolean scalar `lax` wants."""
    if type(flag) in NUMBERS:
        return bool(flag)
    if isinstance(flag, jax.core.Tracer) and flag.shape == () and flag.dtype == bool:
        return flag  # as below gives it, without asking jnp
    if jnp.size(flag) != 1:
        raise TracingError(
            f"the condition of {what} ({loc}) must be a scalar, got {describe_type(typeof(flag))}; use "
            "jnp.any() or jnp.all() to reduce it")
    if jnp.shape(flag) != ():
        flag = jnp.reshape(flag, ())
    return flag if flag.dtype == bool else flag != 0

