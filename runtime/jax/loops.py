"""Staged loops: `lax.while_loop` where the trip count is unknown, a scan
over an array's rows or a `fori_loop` over a static range where it is
known, and a while loop that stops early, differentiable as the scan form,
where the loop can `break` or `return`. Also the iterables that a `for`
over traced values runs over (`JaxRange`, `JaxZip`)."""

import builtins

import jax
import jax.numpy as jnp
from autograph.runtime import staging
from autograph.runtime.jax import compat, values
from jax import lax

__all__ = ["JaxRange", "JaxZip", "counted", "stage_loop"]


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


def stage_loop(loop):
    """`loop` as a `lax.while_loop`; where its trip count is known, as a
    `fori_loop` (differentiable in reverse mode), or, if it can stop early
    (`break`, `return`), as a while loop that stops when it does
    (`_bounded_while`, differentiable too)."""
    compat.drop_dead_equations()
    if loop.trip_count is None or loop.stops_early:
        body = _traced_body(loop)
        init = loop.init()
        test = compat.jaxpr_of(lambda *carry: [loop.cond_fun(list(carry))], [jax.typeof(x) for x in init], "while_loop")
        if loop.trip_count is None:
            carry = compat.while_loop(test, body, init)
        else:
            carry = _bounded_while(test, body, init, loop.trip_count)
    elif loop.rows is not None and loop.indexed:
        # Over arrays: a scan over their rows, as hand-written code does.
        def step(c, rows):
            loop.rows[0] = rows
            return loop.counted_body_fun(c)
        carry = compat.scan(step, loop.init(), loop.rows[1], loop.trip_count)
    else:
        # The loop's counter (its first carried value) is not carried: a scan
        # needs none (the body reads the rows), a fori_loop has its own.
        start, step = loop.counter
        if loop.rows is not None:
            def scan_step(c, rows):
                loop.rows[0] = rows
                return loop.counted_body_fun([start] + c)[1:]
            carry = compat.scan(scan_step, loop.init()[1:], loop.rows[1], loop.trip_count)
        else:
            def body(c, _):
                k = c[0]
                out = loop.counted_body_fun([k if step == 1 else start + k * step] + c[1:])[1:]
                compat.drop_dead_equations()  # the counter's own step
                return [k + 1] + out
            first = start if step == 1 else 0  # a Python int: the index is weakly typed, as fori_loop's
            carry = compat.scan(body, [first] + loop.init()[1:], (), loop.trip_count)[1:]
        carry = [start + loop.trip_count * step] + list(carry)
    compat.drop_dead_equations()
    return carry


def _traced_body(loop):
    """The body of a `lax.while_loop` form of `loop`, traced once into a
    closed jaxpr from the carry to the carry. A `return` that first runs in
    the loop joins its carry without a second trace (`Loop.reuses_returns`):
    the traced body does not read its value (an input of the jaxpr that
    nothing uses)."""
    before, init = sorted(loop.types), loop.init()
    loop.reuses_returns = True
    closed = compat.jaxpr_of(lambda *carry: loop.body_fun(list(carry)), [jax.typeof(x) for x in init], "while_loop")
    after = sorted(loop.types)
    if builtins.len(before) == builtins.len(after):
        return closed
    jaxpr, given = closed.jaxpr, {after.index(j): v for j, v in zip(before, closed.jaxpr.invars)}
    invars = [given[k] if k in given else jax.extend.core.Var(jaxpr.outvars[k].aval) for k in range(len(after))]
    return jax.extend.core.ClosedJaxpr(jaxpr.replace(invars=invars), closed.consts)


def _bounded_while(test, body, init, trip_count):
    """`compat.while_loop(test, body, init)` that stops after at most
    `trip_count` iterations, differentiable in reverse mode.

    Run, it is a `while_loop`: it stops as soon as `test` fails. Where it
    carries floating-point values it is a `custom_jvp` whose derivative is
    that of `trip_count` iterations of `cond(test(c), body, id)` (a `scan`),
    which `jax.grad` can transpose: under `jax.grad(jax.jit(f))`
    differentiation happens after the loop is traced, so the loop must
    carry its own rule. Both forms come from one trace of each function."""
    if not builtins.any(jnp.issubdtype(jnp.result_type(x), jnp.inexact) for x in init):
        return compat.while_loop(test, body, init)
    split = builtins.len(body.consts)

    def as_while(init, *consts):
        return compat.while_loop(jax.extend.core.ClosedJaxpr(test.jaxpr, consts[split:]),
                      jax.extend.core.ClosedJaxpr(body.jaxpr, consts[:split]), init)

    def as_scan(init, *consts):
        def iteration(_, c):
            return lax.cond(compat.inline(test.jaxpr, consts[split:], *c)[0],
                            lambda c: compat.inline(body.jaxpr, consts[:split], *c), lambda c: c, c)
        return lax.fori_loop(0, trip_count, iteration, init)

    loop = jax.custom_jvp(as_while)
    loop.defjvp(lambda primals, tangents: jax.jvp(as_scan, primals, tangents))
    return loop(init, *body.consts, *test.consts)


def row_at(a, i):
    """`a[i]` for a counter `i` in [0, len(a)): no wrapping of negative indices."""
    starts = (i,) + (0,) * (jnp.ndim(a) - 1)
    return lax.squeeze(lax.dynamic_slice(a, starts, (1,) + jnp.shape(a)[1:], allow_negative_indices=False), (0,))


def counted(iterable, over_range, over_arrays):
    if type(iterable) is JaxRange:
        return _Counted(None, iterable.start, iterable.stop, iterable.step, lambda i: i, over_range())
    if type(iterable) is range:  # set_loop_options(unroll=False): see operators.for_stmt
        return _Counted(None, iterable.start, iterable.stop, iterable.step, lambda i: i,
                        over_range().replace("whose bound is traced by JAX",
                                             "not unrolled (set_loop_options(unroll=False))"),
                        builtins.len(iterable))
    if type(iterable) is not JaxZip and not values.is_abstract(iterable):
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
        return rows[0][k] if rows[0] is not None else row_at(arrays[k], i)

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
