"""The builtins that mean something else on JAX tracers: `range` of a
traced bound, `len` of such a range, `enumerate`/`zip` of traced arrays
(iterables a `for` stages), `int`/`float`/`bool` of a traced scalar, and
the reductions `min`, `max`, `sum`, `any`, `all` of a traced array."""

import builtins

import jax.numpy as jnp
from autograph.runtime import staging
from autograph.runtime.jax import values
from autograph.runtime.jax.loops import JaxRange, JaxZip
from jax import lax

__all__ = ["overrides", "transforms"]


def _range(describe):
    def impl(*args):
        if not builtins.any(values.is_abstract(a) for a in args):
            return builtins.range(*args)
        return JaxRange(*staging.range_bounds(
            args, values.is_tracer, lambda a: jnp.ndim(a) == 0 and jnp.issubdtype(a.dtype, jnp.integer), describe))
    return impl


def _len(obj):
    if type(obj) is JaxRange:
        n = (obj.stop - obj.start + obj.step - jnp.sign(obj.step)) // obj.step
        return jnp.maximum(n, 0)
    return builtins.len(obj)


def _loopable(x):
    return values.is_tracer(x) and jnp.ndim(x) >= 1


def _enumerate(iterable, start=0):
    if _loopable(iterable) and values.is_abstract(iterable):
        return JaxZip("enumerate", (iterable,), start)
    return builtins.enumerate(iterable, start)


def _zip(*iterables, **kwargs):
    if not kwargs and iterables and builtins.all(values.is_value(a) and jnp.ndim(a) >= 1
                                                 for a in iterables) \
            and builtins.any(values.is_abstract(a) for a in iterables):
        return JaxZip("zip", iterables)
    return builtins.zip(*iterables, **kwargs)  # noqa: B905 - the caller's own arguments


def _to(pytype, dtype_of):
    def impl(*args, **kwargs):
        if builtins.len(args) == 1 and not kwargs and values.is_abstract(args[0]) \
                and jnp.size(args[0]) == 1:
            x = jnp.reshape(args[0], ())
            if pytype is bool:
                return x != 0
            return lax.convert_element_type(x, dtype_of())
        return pytype(*args, **kwargs)
    return impl


def _minmax(pyfunc, better):
    def impl(*args, **kwargs):
        if kwargs or builtins.len(args) != 1 and not builtins.any(values.is_abstract(a) for a in args):
            return pyfunc(*args, **kwargs)
        if builtins.len(args) == 1:
            x = args[0]
            if not (values.is_abstract(x) and jnp.ndim(x) == 1):
                return pyfunc(x)
            return (jnp.min if pyfunc is builtins.min else jnp.max)(x)
        # Python keeps the first of equal (or unordered) values.
        result = args[0]
        for a in args[1:]:
            result = jnp.where(better(a, result), a, result)
        return result
    return impl


def _sum(iterable, start=0):
    if not (values.is_abstract(iterable) and jnp.ndim(iterable) >= 1):
        return builtins.sum(iterable, start)
    total = jnp.sum(iterable, axis=0)
    return total if type(start) is int and start == 0 else start + total


def _reduce(pyfunc, name):
    def impl(iterable):
        if not (values.is_abstract(iterable) and jnp.ndim(iterable) >= 1):
            return pyfunc(iterable)
        return getattr(jnp, name)(iterable, axis=0) if jnp.ndim(iterable) > 1 else \
            getattr(jnp, name)(iterable)
    return impl


def _default_int():
    return jnp.asarray(0).dtype


def _default_float():
    return jnp.asarray(0.0).dtype


def overrides(describe):
    """The builtins that converted code calls with JAX tracers, by the
    builtin they stand for; `describe` shows a value in messages."""
    return {
        builtins.range: _range(describe),
        builtins.len: _len,
        builtins.enumerate: _enumerate,
        builtins.zip: _zip,
        builtins.int: _to(int, _default_int),
        builtins.float: _to(float, _default_float),
        builtins.bool: _to(bool, None),
        builtins.min: _minmax(builtins.min, lambda a, b: a < b),
        builtins.max: _minmax(builtins.max, lambda a, b: a > b),
        builtins.sum: _sum,
        builtins.any: _reduce(builtins.any, "any"),
        builtins.all: _reduce(builtins.all, "all"),
    }


def transforms():
    """The jax functions that take the user's functions to trace, by the
    ((position, keyword), ...) of those arguments (lax.switch's is a list)."""
    import jax
    fun = ((0, "fun"),)
    table = {f: fun for f in (jax.grad, jax.value_and_grad, jax.jacfwd, jax.jacrev, jax.hessian, jax.vmap, jax.jit,
                              jax.checkpoint, jax.pmap, jax.linearize, jax.vjp, jax.jvp)}
    table.update({
        lax.cond: ((1, "true_fun"), (2, "false_fun")),
        lax.switch: ((1, "branches"),),
        lax.while_loop: ((0, "cond_fun"), (1, "body_fun")),
        lax.fori_loop: ((2, "body_fun"),),
        lax.scan: ((0, "f"),),
        lax.map: ((0, "f"),),
    })
    return table
