"""The JAX backend: Python control flow on JAX tracers becomes `jax.lax`
control flow.

Under `jax.jit` (or `jax.vmap`, `jax.grad`, ...) converted code meets JAX
tracers. Where a condition's value is known while tracing (under an eager
`jax.grad`, say) the statement runs as plain Python, exactly as the
unconverted function would. Where it is abstract:

  * `if` and conditional expressions become `lax.select` where both
    branches are small and side-effect free (`_selectable`), else `lax.cond`;
  * `while` becomes `lax.while_loop`;
  * `for` over a traced array or over `enumerate`/`zip` of traced arrays
    becomes `lax.scan` over the rows, over a static `range()` with
    `set_loop_options(unroll=False)` a `lax.fori_loop` (both reverse-mode
    differentiable); where the loop can `break` or `return`, a
    `lax.while_loop` over the index that stops when it does
    (`_bounded_while`, which differentiates as the scan form); over `range()`
    of a traced bound, `lax.while_loop`;
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
import math
import sys
import weakref

import numpy as np
from autograph.runtime import staging
from autograph.runtime.backends import FROM_FIRST, Backend
from autograph.runtime.errors import (
    TracingError,
)
from autograph.runtime.staging import places

__all__ = ["JaxBackend", "JaxRange", "JaxZip"]

_NUMBERS = (bool, int, float, complex)

jax = jnp = lax = None


def _load():
    global jax, jnp, lax
    if jax is None:
        import jax as jax_module
        import jax.extend.core  # noqa: F401 - jaxpr_as_fun
        import jax.numpy as jnp_module
        jax, jnp, lax = jax_module, jnp_module, jax_module.lax


class JaxRange(staging.TracedRange):
    __slots__ = ()
    traced_by, staged_as = "JAX", "a lax loop"


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
    if isinstance(x, jax.core.Tracer) and math.prod(x.shape) == 1 and x.to_concrete_value() is None:
        return None  # without the error bool() builds, which costs more than the rest of an `if`
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
    """x as a value of type t (shape, dtype, weak); None for a Python
    number that t's dtype cannot hold (`staging.numpy_holds`)."""
    shape, dtype, _ = t
    if isinstance(x, jax.core.Tracer) and x.dtype == dtype and x.shape == shape:
        return x  # as jnp.asarray gives it, without a call
    if type(x) in _NUMBERS and not staging.numpy_holds(x, dtype):
        return None
    if type(x) in _NUMBERS and shape == ():
        if t[2] and _typeof(x) == t:
            return x  # a Python number that stays one: lax takes it as it is
        if not t[2]:
            return np.asarray(x, dtype)  # a constant, without an operation to make it
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
    if isinstance(flag, jax.core.Tracer) and flag.shape == () and flag.dtype == bool:
        return flag  # as below gives it, without asking jnp
    if jnp.size(flag) != 1:
        raise TracingError(
            f"the condition of {what} ({loc}) must be a scalar, got {_BACKEND.describe(flag)}; use "
            "jnp.any() or jnp.all() to reduce it")
    if jnp.shape(flag) != ():
        flag = jnp.reshape(flag, ())
    return flag if flag.dtype == bool else flag != 0


# dead equations ---------------------------------------------------------------

def _drop_dead_equations():
    """Lets JAX drop, from the jaxprs being traced, the equations whose
    results nobody uses: the loop test that generated code evaluates to
    find out that it is traced, a retried attempt. The frame of a jaxpr
    being traced holds its equations; this makes it hold the ones recorded
    so far weakly, as JAX's own reference-counting DCE (`auto_dce`, used
    for its tangent traces) does: an equation then stays only while a
    tracer of its results lives. Equations with effects always stay. Needs
    jax's internal trace state; where that is not there (another jax
    version), nothing changes."""
    try:
        from weakref import ReferenceType, ref

        from jax._src import core
        from jax._src.interpreters import partial_eval as pe
        trace = core.trace_ctx.trace
    except (ImportError, AttributeError):
        return
    while trace is not None:
        eqns = getattr(getattr(trace, "frame", None), "tracing_eqns", None)
        if isinstance(trace, pe.DynamicJaxprTrace) and type(eqns) is list:
            # Back to the last equation made weak by an earlier call.
            k = len(eqns)
            while k and type(eqns[k - 1]) is not ReferenceType:
                k -= 1
                if type(eqns[k]) is pe.TracingEqn and not eqns[k].effects:
                    eqns[k] = ref(eqns[k])
        trace = getattr(trace, "parent_trace", None)


def _recorded_equations():
    """The equations recorded so far by the jaxpr being traced, or None where
    the current trace records none (or jax has no such trace)."""
    try:
        from jax._src import core
        from jax._src.interpreters import partial_eval as pe
        trace = core.trace_ctx.trace
    except (ImportError, AttributeError):
        return None
    eqns = getattr(getattr(trace, "frame", None), "tracing_eqns", None)
    return eqns if type(trace) is pe.DynamicJaxprTrace and type(eqns) is list else None


# cond ------------------------------------------------------------------------

def _cond(pred, branches):
    # Both branches run before anything is emitted: the second one settles
    # the outputs and raises Retry if the first must change. A branch that
    # computes nothing (`if c: break`) runs here, after the other one: its
    # outputs are values of this trace.
    pred = _pred(pred, branches.what, branches.loc)
    _drop_dead_equations()
    outs, trivial = [None, None], branches.trivial
    for k in sorted((0, 1), key=trivial.__getitem__):
        outs[k] = branches.callback(k)() if trivial[k] else _trace(branches.callback(k))
    outs = _choose(pred, *outs)
    _drop_dead_equations()
    return outs


# Primitives whose derivative is finite wherever their operands are: where a
# branch uses only these, `select` gives the gradient `lax.cond` gives.
_SMOOTH = frozenset("""
    add sub mul neg max min abs sign select_n convert_element_type copy copy_p integer_pow square
    eq ne lt le gt ge and or not xor broadcast_in_dim reshape squeeze expand_dims slice dynamic_slice
    concatenate reduce_sum dot_general transpose pjit jit
""".split())

SELECT_MAX_ELEMENTS = 64


def _selectable(closed):
    """The rule for `select`: both branches together compute at most
    SELECT_MAX_ELEMENTS array elements (the sizes of their equations'
    results, nested equations included: 64 scalar operations, or one on an
    array of 64 elements), have no effects (print,
    assert, callbacks) and no loops or conds; and either every output is an
    integer or boolean, or every primitive is one of _SMOOTH (so that
    `jax.grad` through the branch not taken adds zeros, never NaN)."""
    seen, count = set(), 0
    stack = [c.jaxpr for c in closed]
    while stack:
        jaxpr = stack.pop()
        if jaxpr.effects:
            return False
        for eqn in jaxpr.eqns:
            count += builtins.sum(math.prod(d if type(d) is int else SELECT_MAX_ELEMENTS + 1
                                            for d in getattr(v.aval, "shape", ())) for v in eqn.outvars)
            seen.add(eqn.primitive.name)
            for param in eqn.params.values():
                inner = getattr(param, "jaxpr", param)
                if hasattr(inner, "eqns"):
                    stack.append(inner)
                elif isinstance(param, (tuple, list)) and param and hasattr(getattr(param[0], "jaxpr", None), "eqns"):
                    return False  # branches of a cond
    if count > SELECT_MAX_ELEMENTS or seen & {"while", "scan", "cond", "custom_jvp_call", "custom_vjp_call"}:
        return False
    exact = not builtins.any(jnp.issubdtype(v.aval.dtype, jnp.inexact) for c in closed for v in c.jaxpr.outvars)
    return exact or seen <= _SMOOTH


def _trace(fn):
    """`fn()` traced into a closed jaxpr, leaving nothing in the trace that
    calls it: as `jax.make_jaxpr(fn)()` (`_jaxpr_of`)."""
    return _jaxpr_of(fn, (), "cond")


def _jaxpr_of(fn, avals, what):
    """`fn(*args)` for arguments of the abstract values `avals`, traced
    into a closed jaxpr, as `jax.make_jaxpr` gives it: `fn` returns a list
    of arrays. A child of the trace being recorded, as the one `lax.cond`
    and `lax.while_loop` make for their functions, without what they add
    around it (a cache keyed by the function, whose every call is new here,
    and the inspection of its signature): that costs more than tracing a
    small branch. Through `make_jaxpr` where jax has no such trace, or
    checks for leaked tracers (jax_check_tracer_leaks)."""
    try:
        from jax._src import config, core, dtypes, linear_util, source_info_util
        from jax._src.interpreters import partial_eval as pe
        leaks = config.check_tracer_leaks.value
    except (ImportError, AttributeError):
        leaks = True
    if leaks:
        return jax.make_jaxpr(lambda *args: list(fn(*args)))(
            *[jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals])
    debug = linear_util.DebugInfo(what, getattr(fn, "__name__", what), None, None)
    trace = pe.DynamicJaxprTrace(debug, parent_trace=core.trace_ctx.trace)
    try:
        with source_info_util.reset_name_stack():
            where = source_info_util.current()
            args = [trace.new_arg(a, where) for a in avals]
            with core.set_current_trace(trace):
                outs = [trace.to_jaxpr_tracer(dtypes.canonicalize_value(x), where) for x in fn(*args)]
            jaxpr, consts = trace.frame.to_jaxpr(trace, outs, debug, where)
    finally:
        trace.invalidate()
    return core.ClosedJaxpr(jaxpr, consts)


def _choose(pred, *branches):
    """The outputs of the branch that `pred` picks, from each branch's
    traced jaxpr or, for one that computes nothing, its outputs: `lax.select`
    of both where `_selectable` says that is safe (XLA:CPU runs a small
    select faster than a conditional), else `lax.cond`."""
    traced = [b for b in branches if type(b) is not list]
    if not _selectable(traced):
        return lax.cond(pred, *(jax.extend.core.jaxpr_as_fun(b) if type(b) is not list else (lambda b=b: b)
                                for b in branches))
    outs = [b if type(b) is list else _inline(b.jaxpr, b.consts) for b in branches]
    return [a if a is b else lax.select(pred, a, b) for a, b in zip(*outs)]


def _inline(jaxpr, consts, *args):
    """The outputs of `jaxpr` on `consts` and `args`, its equations copied
    into the trace being recorded: `jaxpr_as_fun(ClosedJaxpr(jaxpr,
    consts))(*args)` without running each primitive's rules again (as `jit`
    inlines a nested `jit`). Through `jaxpr_as_fun` where the current trace
    records no jaxpr (an eager `vmap`, say) or jax has no such function."""
    try:
        from jax._src import core, source_info_util
        from jax._src.interpreters import partial_eval as pe
        trace, inline = core.trace_ctx.trace, pe.inline_jaxpr_into_trace
        records = type(trace) is pe.DynamicJaxprTrace
    except (ImportError, AttributeError):
        records = False
    if not records:
        return jax.extend.core.jaxpr_as_fun(jax.extend.core.ClosedJaxpr(jaxpr, list(consts)))(*args)
    where = source_info_util.current()
    inputs = [trace.to_jaxpr_tracer(x, where) for x in (*consts, *args)]
    return [trace.to_jaxpr_tracer(x, where) for x in inline(trace, where, jaxpr, (), *inputs)]


# loops -----------------------------------------------------------------------

def _loop(loop):
    """`loop` as a `lax.while_loop`; where its trip count is known, as a
    `fori_loop` (differentiable in reverse mode), or, if it can stop early
    (`break`, `return`), as a while loop that stops when it does
    (`_bounded_while`, differentiable too)."""
    _drop_dead_equations()
    if loop.trip_count is None or loop.stops_early:
        body, consts = _traced_body(loop)
        if loop.trip_count is None:
            carry = lax.while_loop(loop.cond_fun, lambda c: body(c, *consts), loop.init())
        else:
            carry = _bounded_while(loop.cond_fun, body, consts, loop.init(), loop.trip_count)
    elif loop.rows is not None and loop.indexed:
        # Over arrays: a scan over their rows, as hand-written code does.
        def step(c, rows):
            loop.rows[0] = rows
            return loop.counted_body_fun(c), None
        carry = lax.scan(step, loop.init(), loop.rows[1])[0]
    else:
        # The loop's counter (its first carried value) is not carried: a scan
        # needs none (the body reads the rows), a fori_loop has its own.
        start, step = loop.counter
        if loop.rows is not None:
            def scan_step(c, rows):
                loop.rows[0] = rows
                return loop.counted_body_fun([start] + c)[1:], None
            carry = lax.scan(scan_step, loop.init()[1:], loop.rows[1])[0]
        else:
            def body(k, c):
                out = loop.counted_body_fun([k if step == 1 else start + k * step] + c)[1:]
                _drop_dead_equations()  # the counter's own step
                return out
            first = start if step == 1 else 0
            carry = lax.fori_loop(first, first + loop.trip_count, body, loop.init()[1:])
        carry = [start + loop.trip_count * step] + list(carry)
    _drop_dead_equations()
    return carry


def _traced_body(loop):
    """The body of a `lax.while_loop` form of `loop`, traced once: `(body,
    consts)`, where `body(carry, *consts)` copies the traced equations into
    the trace that calls it (`_inline`). A `return` that first runs in the
    loop joins its carry without a second trace (`Loop.reuses_returns`):
    the traced body does not take its value."""
    before, init = sorted(loop.types), loop.init()
    loop.reuses_returns = True
    closed = _jaxpr_of(lambda *carry: loop.body_fun(list(carry)), [jax.typeof(x) for x in init], "while_loop")
    after = sorted(loop.types)
    taken = [after.index(j) for j in before]
    jaxpr = closed.jaxpr
    if builtins.len(taken) == builtins.len(after):
        return (lambda c, *consts: _inline(jaxpr, consts, *c)), list(closed.consts)
    return (lambda c, *consts: _inline(jaxpr, consts, *[c[k] for k in taken])), list(closed.consts)


def _bounded_while(cond_fun, body, body_consts, init, trip_count):
    """`lax.while_loop(cond_fun, lambda c: body(c, *body_consts), init)`
    that stops after at most `trip_count` iterations, differentiable in
    reverse mode.

    Run, it is a `while_loop`: it stops as soon as `cond_fun` fails. Where
    it carries floating-point values it is a `custom_jvp` whose derivative
    is that of `trip_count` iterations of `cond(cond_fun(c), body_fun, id)`
    (a `scan`), which `jax.grad` can transpose: under `jax.grad(jax.jit(f))`
    differentiation happens after the loop is traced, so the loop must
    carry its own rule. Both forms come from one trace of each function."""
    if not builtins.any(jnp.issubdtype(jnp.result_type(x), jnp.inexact) for x in init):
        return lax.while_loop(cond_fun, lambda c: body(c, *body_consts), init)
    test, cond_consts = _closure_convert(cond_fun, init)
    split = builtins.len(body_consts)

    def cond(c, *consts):
        return test(c, *consts)[0]

    def as_while(init, *consts):
        return lax.while_loop(lambda c: cond(c, *consts[split:]), lambda c: body(c, *consts[:split]), init)

    def as_scan(init, *consts):
        def iteration(_, c):
            return lax.cond(cond(c, *consts[split:]), lambda c: body(c, *consts[:split]), lambda c: c, c)
        return lax.fori_loop(0, trip_count, iteration, init)

    loop = jax.custom_jvp(as_while)
    loop.defjvp(lambda primals, tangents: jax.jvp(as_scan, primals, tangents))
    return loop(init, *body_consts, *cond_consts)


def _closure_convert(fn, init):
    """`jax.closure_convert(fn, init)` for a loop's test or body, which take
    the carry (a list of arrays): `(converted, consts)`, where
    `converted(carry, *consts)` gives the list of `fn`'s outputs, copying
    `fn`'s traced equations into the trace that calls it (`_inline`)."""
    closed = _jaxpr_of(lambda *carry: jax.tree_util.tree_leaves(fn(list(carry))), [jax.typeof(x) for x in init],
                       "while_loop")
    return (lambda c, *consts: _inline(closed.jaxpr, consts, *c)), list(closed.consts)


def _row(a, i):
    """`a[i]` for a counter `i` in [0, len(a)): no wrapping of negative indices."""
    starts = (i,) + (0,) * (jnp.ndim(a) - 1)
    return lax.squeeze(lax.dynamic_slice(a, starts, (1,) + jnp.shape(a)[1:], allow_negative_indices=False), (0,))


def _counted(iterable, over_range, over_arrays):
    if type(iterable) is JaxRange:
        return _Counted(None, iterable.start, iterable.stop, iterable.step, lambda i: i, over_range())
    if type(iterable) is range:  # set_loop_options(unroll=False): see operators.for_stmt
        return _Counted(None, iterable.start, iterable.stop, iterable.step, lambda i: i,
                        over_range().replace("whose bound is traced by JAX",
                                             "not unrolled (set_loop_options(unroll=False))"),
                        builtins.len(iterable))
    if type(iterable) is not JaxZip and not _is_abstract(iterable):
        return NotImplemented
    arrays = iterable.arrays if type(iterable) is JaxZip else (iterable,)
    for a in arrays:
        if jnp.ndim(a) == 0:
            raise TypeError("iteration over a 0-d array")
    kind = iterable.kind if type(iterable) is JaxZip else None
    stop = builtins.min(jnp.shape(a)[0] for a in arrays)
    first = getattr(iterable, "start", 0)
    # rows[0]: the current rows where the loop is a scan over the arrays.
    rows = [None, tuple(a if jnp.shape(a)[0] == stop else a[:stop] for a in arrays)]

    def row(k, i):
        return rows[0][k] if rows[0] is not None else _row(arrays[k], i)

    if kind is None:
        def item(i):
            return row(0, i)
    elif kind == "enumerate":
        def item(i):
            return (i if type(first) is int and first == 0 else first + i, row(0, i))
    else:
        def item(i):
            return tuple(row(k, i) for k in range(builtins.len(arrays)))
    counted = _Counted(rows, 0, stop, 1, item, over_arrays(kind), stop)
    counted.indexed = kind == "enumerate"
    return counted


class _Counted(staging.Counted):
    """A counted loop, for `_loop`: over the rows of arrays (`rows` not None)
    where it cannot stop early, a `lax.scan` over them, which carries the
    counter only where the loop target is its value (`indexed`: enumerate);
    over a static range, a `fori_loop` whose index gives the counter."""

    indexed = False

    def __init__(self, rows, *args):
        super().__init__(*args)
        self.rows = rows

    def bounded(self, limit):
        # Shapes are static: the trip count is known, and the rows scanned
        # are the first `limit`. (`item` reads the same `rows` list.)
        bounded = super().bounded(limit)
        if self.rows is not None:
            self.rows[1] = tuple(a[:bounded.trip_count] for a in self.rows[1])
        return bounded

    def loop(self, backend, extra_test, body, state, names, loc):
        loop = super().loop(backend, extra_test, body, state, names, loc)
        loop.rows = None if extra_test is not None else self.rows
        loop.indexed, loop.counter = self.indexed, (self.start, self.step)
        return loop


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
    static_shapes = ("JAX arrays have static shapes, so lax.while_loop and lax.scan carry '{name}' with "
                     "one shape; make '{name}' its largest size before the loop and write into it "
                     "({name} = {name}.at[i].set(...)), or keep the loop out of jax.jit")

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
        return _counted(iterable, self.over_range, self.over_arrays)

    def first_iteration(self, body, item, state, count):
        # The iteration runs as Python. If it made the state JAX values and
        # changed nothing else (no places, no effects staged), the loop is
        # staged from it on: what it staged is then dead, and dropped.
        recorded = places.Recorded((body,), [(f"<state {k}>", v) for k, v in enumerate(state)])
        eqns = _recorded_equations()
        mark = None if eqns is None else len(eqns)
        result = body(item, *state)
        if mark is None or recorded.changed() or builtins.any(
                getattr(e() if type(e) is weakref.ReferenceType else e, "effects", None) for e in eqns[mark:]):
            return result
        if builtins.any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(result)):
            return FROM_FIRST
        return result

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
