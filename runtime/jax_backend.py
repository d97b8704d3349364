"""The JAX backend: Python control flow on JAX tracers becomes `jax.lax`
control flow.

Under `jax.jit` (or `jax.vmap`, `jax.grad`, ...) converted code meets JAX
tracers. Where a condition's value is known while tracing (under an eager
`jax.grad`, say) the statement runs as plain Python, exactly as the
unconverted function would. Where it is abstract:

  * `if` and conditional expressions become `lax.cond`;
  * `while` becomes `lax.while_loop`;
  * `for` over a traced array, over `enumerate`/`zip` of traced arrays or over
    `range()` of a traced bound becomes `lax.fori_loop` (reverse-mode
    differentiable), or `lax.while_loop` when the loop can `break`;
  * `and`, `or`, `not`, `print`, `assert`, `x[i] = v` and the builtins `range`,
    `len`, `int`, `float`, `bool`, `min`, `max`, `sum`, `any`, `all`,
    `enumerate` and `zip` get their traced meaning.

Branch outputs and loop state are pytrees. Their array leaves (tracers,
arrays, Python numbers) are what `lax` carries; every other leaf (a string,
None, a function, ...) must be the same whichever way the program goes. A
Python number that meets an array takes the array's dtype, as with
`jnp.where`; arrays must agree in dtype and shape.

Importing this module does not import jax: the backend claims a type only
once jax is imported, so it costs nothing to programs that do not use jax.
"""

import builtins
import sys

from autograph.runtime import staging
from autograph.runtime.backends import Backend
from autograph.runtime.errors import (
    TracingError,
    user_location,
)

__all__ = ["JaxBackend", "JaxRange", "JaxZip"]

_NUMBERS = (bool, int, float, complex)

jax = jnp = lax = None


def _load():
    global jax, jnp, lax
    if jax is None:
        import jax as jax_module
        import jax.numpy as jnp_module
        jax, jnp, lax = jax_module, jnp_module, jax_module.lax


class JaxRange:
    """`range(start, stop, step)` with a traced bound: what a converted `for`
    loop turns into a `lax` loop."""

    __slots__ = ("start", "step", "stop")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def __repr__(self):
        return f"range({self.start!r}, {self.stop!r}, {self.step!r})"

    def __iter__(self):
        raise TracingError(
            f"cannot iterate in Python over a range whose bound is traced by JAX "
            f"({user_location()}); convert the function with autograph so that the `for` "
            "loop becomes a lax loop")


class JaxZip:
    """`enumerate(x, start)` or `zip(x, y, ...)` over arrays of which one is
    traced: a converted `for` loop runs one `lax` loop over the shortest."""

    __slots__ = ("arrays", "kind", "start")

    def __init__(self, kind, arrays, start=0):
        self.kind, self.arrays, self.start = kind, tuple(arrays), start

    def __iter__(self):
        return iter(builtins.enumerate(*self.arrays, self.start) if self.kind == "enumerate"
                    else builtins.zip(*self.arrays, strict=False))


def _is_tracer(x):
    return isinstance(x, jax.core.Tracer)


def _concrete(x):
    """`bool(x)` if x's value is known while tracing, else None."""
    try:
        return bool(x)
    except jax.errors.ConcretizationTypeError:
        return None


def _is_abstract(x):
    return _is_tracer(x) and x.to_concrete_value() is None


def _is_value(x):
    return type(x) in _NUMBERS or isinstance(x, jax.Array) or hasattr(x, "__array__") \
        and hasattr(x, "dtype") and hasattr(x, "shape")


def _typeof(x):
    t = jax.typeof(x)
    return (t.shape, t.dtype, t.weak_type)


def _describe_type(t):
    shape, dtype, weak = t
    text = f"{dtype.name}[{','.join(map(str, shape))}]"
    return text + " (weakly typed: from a Python number)" if weak else text


def _merge(a, b):
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


def _cast(x, t):
    """x as a value of type t (shape, dtype, weak)."""
    shape, dtype, _ = t
    v = jnp.asarray(x)
    if v.dtype != dtype:
        v = lax.convert_element_type(v, dtype)
    if v.shape != shape:
        v = jnp.broadcast_to(v, shape)
    return v


def _pred(flag, what, loc):
    """A traced condition as the boolean scalar `lax` wants."""
    if type(flag) in _NUMBERS:
        return bool(flag)
    if jnp.size(flag) != 1:
        raise TracingError(
            f"the condition of {what} ({loc}) must be a scalar, got {_BACKEND.describe(flag)}; use "
            "jnp.any() or jnp.all() to reduce it")
    if jnp.shape(flag) != ():
        flag = jnp.reshape(flag, ())
    return flag if flag.dtype == bool else flag != 0


def _cond(pred, branches):
    return lax.cond(_pred(pred, branches.what, branches.loc),
                    branches.callback(0), branches.callback(1))


def _loop(loop):
    """`loop` as a `lax.while_loop`, or as a `fori_loop` (differentiable in
    reverse mode) where its trip count is known."""
    if loop.trip_count is None:
        return lax.while_loop(loop.cond_fun, loop.body_fun, loop.init())
    return lax.fori_loop(0, loop.trip_count, lambda _, c: loop.counted_body_fun(c), loop.init())


def _counted(iterable, over_range, over_arrays):
    if type(iterable) is JaxRange:
        return staging.Counted(iterable.start, iterable.stop, iterable.step, lambda i: i,
                               over_range())
    if type(iterable) is not JaxZip and not _is_abstract(iterable):
        return NotImplemented
    arrays = iterable.arrays if type(iterable) is JaxZip else (iterable,)
    for a in arrays:
        if jnp.ndim(a) == 0:
            raise TypeError("iteration over a 0-d array")
    kind = iterable.kind if type(iterable) is JaxZip else None
    stop = builtins.min(jnp.shape(a)[0] for a in arrays)
    return staging.Counted.over_arrays(kind, arrays, getattr(iterable, "start", 0), stop,
                                       over_arrays(kind), stop)


# builtins --------------------------------------------------------------------

def _range(*args):
    if not builtins.any(_is_abstract(a) for a in args):
        return builtins.range(*args)
    return JaxRange(*staging.range_bounds(
        args, _is_tracer,
        lambda a: jnp.ndim(a) == 0 and jnp.issubdtype(a.dtype, jnp.integer), _BACKEND.describe))


def _len(obj):
    if type(obj) is JaxRange:
        n = (obj.stop - obj.start + obj.step - jnp.sign(obj.step)) // obj.step
        return jnp.maximum(n, 0)
    return builtins.len(obj)


def _loopable(x):
    return _is_tracer(x) and jnp.ndim(x) >= 1


def _enumerate(iterable, start=0):
    if _loopable(iterable) and _is_abstract(iterable):
        return JaxZip("enumerate", (iterable,), start)
    return builtins.enumerate(iterable, start)


def _zip(*iterables, **kwargs):
    if not kwargs and iterables and builtins.all(_is_value(a) and jnp.ndim(a) >= 1
                                                 for a in iterables) \
            and builtins.any(_is_abstract(a) for a in iterables):
        return JaxZip("zip", iterables)
    return builtins.zip(*iterables, **kwargs)  # noqa: B905 - the caller's own arguments


def _to(pytype, dtype_of):
    def impl(*args, **kwargs):
        if builtins.len(args) == 1 and not kwargs and _is_abstract(args[0]) \
                and jnp.size(args[0]) == 1:
            x = jnp.reshape(args[0], ())
            if pytype is bool:
                return x != 0
            return lax.convert_element_type(x, dtype_of())
        return pytype(*args, **kwargs)
    return impl


def _minmax(pyfunc, better):
    def impl(*args, **kwargs):
        if kwargs or builtins.len(args) != 1 and not builtins.any(_is_abstract(a) for a in args):
            return pyfunc(*args, **kwargs)
        if builtins.len(args) == 1:
            x = args[0]
            if not (_is_abstract(x) and jnp.ndim(x) == 1):
                return pyfunc(x)
            return (jnp.min if pyfunc is builtins.min else jnp.max)(x)
        # Python keeps the first of equal (or unordered) values.
        result = args[0]
        for a in args[1:]:
            result = jnp.where(better(a, result), a, result)
        return result
    return impl


def _sum(iterable, start=0):
    if not (_is_abstract(iterable) and jnp.ndim(iterable) >= 1):
        return builtins.sum(iterable, start)
    total = jnp.sum(iterable, axis=0)
    return total if type(start) is int and start == 0 else start + total


def _reduce(pyfunc, name):
    def impl(iterable):
        if not (_is_abstract(iterable) and jnp.ndim(iterable) >= 1):
            return pyfunc(iterable)
        return getattr(jnp, name)(iterable, axis=0) if jnp.ndim(iterable) > 1 else \
            getattr(jnp, name)(iterable)
    return impl


def _default_int():
    return jnp.asarray(0).dtype


def _default_float():
    return jnp.asarray(0.0).dtype


_BUILTINS = {
    builtins.range: _range,
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


def _print_callback(template, kwargs):
    def show(*values):
        values = iter(values)
        builtins.print(*[next(values) if v is _SLOT else v for v in template], **kwargs)
    return show


_SLOT = object()


class JaxBackend(staging.StagingBackend):
    """Stages control flow on abstract JAX tracers into `jax.lax` operations."""

    name = "jax"
    traced = "traced by JAX"

    def owns_type(self, cls):
        if issubclass(cls, (JaxRange, JaxZip)):
            return True
        if "jax" not in sys.modules:
            return False
        _load()
        return issubclass(cls, jax.core.Tracer)

    def concrete(self, value):
        return _concrete(value)

    is_value = staticmethod(_is_value)
    typeof = staticmethod(_typeof)
    merge = staticmethod(_merge)
    cast = staticmethod(_cast)
    describe_type = staticmethod(_describe_type)
    predicate = staticmethod(_pred)
    stage_cond = staticmethod(_cond)
    stage_loop = staticmethod(_loop)

    def flatten(self, value):
        return jax.tree_util.tree_flatten(value)

    def unflatten(self, treedef, leaves):
        return jax.tree_util.tree_unflatten(treedef, leaves)

    def logical_not(self, value):
        return jnp.logical_not(value)

    def logical_and(self, a, b):
        return jnp.logical_and(a, b)

    def counted(self, iterable):
        return _counted(iterable, self.over_range, self.over_arrays)

    def print_(self, *args, **kwargs):
        if not builtins.any(_is_tracer(a) for a in args):
            return builtins.print(*args, **kwargs)
        template = [_SLOT if _is_tracer(a) else a for a in args]
        jax.debug.callback(_print_callback(template, kwargs), *[a for a in args if _is_tracer(a)],
                           ordered=True)
        return None

    def assert_(self, test, msg_fn):
        concrete = _concrete(test)
        if concrete is not None:
            return Backend.assert_(self, concrete, msg_fn)
        message = msg_fn() if msg_fn is not None else None

        def check(ok):
            if not ok:
                raise AssertionError(message) if message is not None else AssertionError
        jax.debug.callback(check, jnp.all(test), ordered=True)
        return None

    def setitem(self, target, index, value):
        if not isinstance(target, jax.Array):
            if type(target).__module__ != "numpy":
                target[index] = value   # Python's own error, as eager code gives it
                return target
            target = jnp.asarray(target)   # `out = np.zeros(3)`, then `out[i] = traced`
        return target.at[index].set(value)

    def builtin(self, func):
        return _BUILTINS.get(func)


_BACKEND = JaxBackend()  # for messages
