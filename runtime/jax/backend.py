"""`JaxBackend`: what the staging core asks of JAX, answered by the modules
of this package.

Importing this module does not import jax: the backend claims a type only
once jax is imported (`owns_type`), and only then loads the modules that
use it (`_load`), so it costs nothing to programs that do not use jax.
"""

import builtins
import sys

from autograph.runtime import staging
from autograph.runtime.backends import FROM_FIRST, Backend
from autograph.runtime.errors import fresh
from autograph.runtime.staging import places

__all__ = ["JaxBackend"]

#: From how many iterations a `for` over a Python range whose body only
#: computes is one staged loop under a JAX trace (runtime/static_ranges.py);
#: shorter ones unroll, which XLA runs as fast and compiles about as fast.
RANGE_LOOP_MIN = 16

# The modules that import jax, bound by `_load` once jax is imported.
jax = jnp = compat = cond = loops = values = None
_trace_context = _eager_trace = None  # compat.trace_state(), once jax is loaded
_BUILTINS = {}
_TRANSFORMS = {}


def _load(backend):
    global jax, jnp, compat, cond, loops, values
    if jax is not None:
        return
    import jax as jax_module
    import jax.extend.core  # noqa: F401 - jaxpr_as_fun
    import jax.numpy as jnp_module
    from autograph.runtime.jax import builtins as jax_builtins
    from autograph.runtime.jax import compat as compat_module
    from autograph.runtime.jax import cond as cond_module
    from autograph.runtime.jax import loops as loops_module
    from autograph.runtime.jax import values as values_module
    compat_module.check_version()
    _BUILTINS.update(jax_builtins.overrides(backend.describe))
    _TRANSFORMS.update(jax_builtins.transforms())
    global _trace_context, _eager_trace
    _trace_context, _eager_trace = compat_module.trace_state() or (None, None)
    jnp, compat, cond, loops, values = jnp_module, compat_module, cond_module, loops_module, values_module
    jax = jax_module  # last: another thread that sees it set finds the rest bound


def _print_callback(template, kwargs):
    def show(*shown):
        shown = iter(shown)
        builtins.print(*[next(shown) if v is _SLOT else v for v in template], **kwargs)
    return show


_SLOT = object()


class JaxBackend(staging.StagingBackend):
    """Stages control flow on abstract JAX tracers into `jax.lax` operations."""

    name = "jax"
    traced = "traced by JAX"
    static_shapes = ("JAX arrays have static shapes, so lax.while_loop and lax.scan carry '{name}' with "
                     "one shape; make '{name}' its largest size before the loop and write into it "
                     "({name} = {name}.at[i].set(...)), or keep the loop out of jax.jit")

    def owns_type(self, cls):
        if "jax" not in sys.modules:
            return False
        _load(self)
        return issubclass(cls, (jax.core.Tracer, loops.JaxRange, loops.JaxZip))

    def tracing(self):
        if jax is None:
            if "jax" not in sys.modules:
                return False
            _load(self)
        # (asked on every call of a converted function: no call of its own)
        return _trace_context is None or type(_trace_context.trace) is not _eager_trace

    def concrete(self, value):
        return values.concrete(value)

    def is_value(self, x):
        return values.is_value(x)

    def typeof(self, x):
        return values.typeof(x)

    def merge(self, a, b):
        return values.merge(a, b)

    def cast(self, x, t):
        return values.cast(x, t)

    def describe_type(self, t):
        return values.describe_type(t)

    def predicate(self, flag, what, loc):
        return values.predicate(flag, what, loc)

    def stage_cond(self, pred, branches):
        return cond.stage_cond(pred, branches)

    def stage_loop(self, loop):
        return loops.stage_loop(loop)

    def narrowed_float(self, t):
        if t[2] and t[1].kind == "f" and t[1].itemsize < 8:  # without jax_enable_x64: a weak float32
            return (f"JAX without jax_enable_x64 carries it as a {t[1].name}", t[1].name,
                    "jax.config.update('jax_enable_x64', True)")
        return None

    def flatten(self, value):
        return jax.tree_util.tree_flatten(value)

    def unflatten(self, treedef, leaves):
        return jax.tree_util.tree_unflatten(treedef, leaves)

    def zeros(self, shape, dtype):
        return jnp.zeros(shape, dtype)

    def buffer_write(self, buffer, index, value):
        return buffer.at[index].set(value)

    def logical_not(self, value):
        return jnp.logical_not(value)

    def logical_and(self, a, b):
        return jnp.logical_and(a, b)

    def logical_or(self, a, b):
        return jnp.logical_or(a, b)

    def counted(self, iterable):
        return loops.counted(iterable, self.over_range, self.over_arrays)

    def stages_range(self, n):
        if n < RANGE_LOOP_MIN or "jax" not in sys.modules:
            return False
        _load(self)
        return compat.tracing()

    def first_iteration(self, body, item, state, count):
        # The iteration runs as Python. If it made the state JAX values and
        # changed nothing else (no places, no effects staged), the loop is
        # staged from it on: what it staged is then dead, and dropped.
        recorded = places.Recorded((body,), [(f"<state {k}>", v) for k, v in enumerate(state)])
        eqns = compat.recorded_equations()
        mark = None if eqns is None else len(eqns)
        result = body(item, *state)
        if mark is None or recorded.changed() or builtins.any(e.effects for e in compat.live(eqns[mark:])):
            return result
        if builtins.any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(result)):
            return FROM_FIRST
        return result

    def print_(self, *args, **kwargs):
        if not builtins.any(values.is_tracer(a) for a in args):
            return builtins.print(*args, **kwargs)
        template = [_SLOT if values.is_tracer(a) else a for a in args]
        jax.debug.callback(_print_callback(template, kwargs), *[a for a in args if values.is_tracer(a)],
                           ordered=True)
        return None

    def assert_(self, test, msg_fn):
        concrete = values.concrete(test)
        if concrete is not None:
            return Backend.assert_(self, concrete, msg_fn)
        return self.check(test, AssertionError(msg_fn()) if msg_fn is not None else AssertionError())

    def check(self, ok, error):
        # jax shows the error's text, not its notes: the notes join the text
        # (of an error shown as its message: not a KeyError, shown as a repr).
        notes = getattr(error, "__notes__", None)
        message = "\n".join([str(error)] + notes) if notes and type(error).__str__ is BaseException.__str__ \
            else None

        def run(ok):
            if not ok:
                raise fresh(error, message)
        jax.debug.callback(run, jnp.all(ok), ordered=True)
        return None

    def setitem(self, target, index, value):
        if not isinstance(target, jax.Array):
            if type(target).__module__ != "numpy":
                target[index] = value   # Python's own error, as eager code gives it
                return target
            target = jnp.asarray(target)   # `out = np.zeros(3)`, then `out[i] = traced`
        if values.is_tracer(index) and index.dtype == bool and index.shape == target.shape[:index.ndim] \
                and jnp.ndim(value) <= target.ndim - index.ndim:
            # `y[y < 0] = 0` with a traced mask: what numpy writes is a select
            # (jax indexes with concrete masks only: the count sets a shape).
            mask = index.reshape(index.shape + (1,) * (target.ndim - index.ndim))
            return jnp.where(mask, jnp.asarray(value, target.dtype), target)
        return target.at[index].set(value)

    def function_arguments(self, f):
        if "jax" not in sys.modules:
            return None
        _load(self)
        return _TRANSFORMS.get(f)

    def stack(self, values, axis):
        if "jax" not in sys.modules:
            return NotImplemented
        _load(self)
        if not builtins.any(isinstance(v, jax.Array) for v in values):
            return NotImplemented
        return jnp.stack(values, axis=axis)

    def builtin(self, func):
        return _BUILTINS.get(func)
