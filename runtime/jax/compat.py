"""Everything this backend takes from JAX's private API (`jax._src`), in
one place, each use beside the public form it falls back to.

The backend traces branches and loop bodies into jaxprs itself, so that
one trace serves both the test of a rule (may this `if` be a `select`?)
and the staged operation. JAX's public API has no way to:

  * trace a function into a jaxpr as a child of the trace being recorded
    (`jax.make_jaxpr` starts a new one, with a cache keyed by function and
    an inspection of the signature that cost more than a small branch):
    `jaxpr_of`;
  * read or edit the equations that the trace being recorded holds so far
    (`recorded_equations`, `drop_dead_equations`, `closed_jaxpr`), or copy
    a jaxpr's equations into it without running each primitive's rules
    again (`inline`; public: `jax.extend.core.jaxpr_as_fun`);
  * bind `while_loop` or `scan` on jaxprs already traced (`while_loop`,
    `scan`; public: `lax.while_loop`, `lax.scan`, which trace again).

Where the private names are missing (another jax version), each function
takes its public form. `TESTED_VERSION` is the jax release the backend is
tested with; another one gets one warning when the backend loads.
"""

import builtins
import warnings
from weakref import ReferenceType, ref

import jax
from jax import lax

try:
    from jax._src import config, core, dtypes, linear_util, source_info_util
    from jax._src.interpreters import partial_eval as pe
    from jax._src.lax.control_flow.loops import scan_p, while_p
except ImportError:  # another jax: the public forms below
    pe = None

__all__ = ["TESTED_VERSION", "check_version", "closed_jaxpr", "drop_dead_equations", "inline", "jaxpr_of", "live",
           "recorded_equations", "trace_state", "unrecord", "scan", "while_loop"]

TESTED_VERSION = "0.10.2"


def check_version(version=None):
    """Warns once, naming the version, where jax is not the release this
    backend is tested with."""
    version = jax.__version__ if version is None else version
    if version != TESTED_VERSION:
        warnings.warn(
            f"autograph's JAX backend is tested with jax {TESTED_VERSION}, and jax {version} is installed: "
            f"it uses jax internals (autograph/runtime/jax/compat.py) that may have changed; "
            f"if staging fails, install jax=={TESTED_VERSION}", RuntimeWarning, stacklevel=2)


def _recording():
    """The trace being recorded into a jaxpr, or None (an eager `vmap` or
    `grad`, or no private API)."""
    if pe is None:
        return None
    try:
        trace = core.trace_ctx.trace
    except AttributeError:
        return None
    return trace if type(trace) is pe.DynamicJaxprTrace else None


def tracing():
    """True while jax traces (`jit`, `grad`, `vmap`, ...): the current trace
    is not the eager one. Public API: none (without it: False, and a long
    static range unrolls, as it did)."""
    if pe is None:
        return False
    try:
        trace = core.trace_ctx.trace
    except AttributeError:
        return False
    return type(trace) is not core.EvalTrace


def trace_state():
    """(the thread-local trace context, the eager trace's type): jax
    traces nothing where `type(context.trace) is eager` (`JaxBackend.tracing`
    asks this on every call of a converted function). None without the
    private API: converted code then keeps its staged paths."""
    context = getattr(core, "trace_ctx", None) if pe is not None else None
    if context is None or not hasattr(context, "trace") or not hasattr(core, "EvalTrace"):
        return None
    return context, core.EvalTrace


def drop_dead_equations():
    """Lets JAX drop, from the jaxprs being traced, the equations whose
    results nobody uses: the loop test that generated code evaluates to
    find out that it is traced, a retried attempt. The frame of a jaxpr
    being traced holds its equations; this makes it hold the ones recorded
    so far weakly, as JAX's own reference-counting DCE (`auto_dce`, used
    for its tangent traces) does: an equation then stays only while a
    tracer of its results lives. Equations with effects always stay.
    Public API: none (nothing changes without it)."""
    if pe is None:
        return
    try:
        trace = core.trace_ctx.trace
    except AttributeError:
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


def recorded_equations():
    """The equations recorded so far by the jaxpr being traced, or None where
    the current trace records none (or jax has no such trace). Public API:
    none."""
    trace = _recording()
    eqns = getattr(getattr(trace, "frame", None), "tracing_eqns", None)
    return eqns if type(eqns) is list else None


def live(entries):
    """The equations of `entries` (a part of a frame's `tracing_eqns`) that
    are still there: those held weakly may be gone."""
    eqns = []
    for e in entries:
        if type(e) is ReferenceType:
            e = e()
        if e is not None:
            eqns.append(e)
    return eqns


def unrecord(eqns, start):
    """Takes the equations recorded from `start` on out of the trace: those
    with effects at once, the others once nothing uses their results (held
    weakly, as `drop_dead_equations` does)."""
    kept = []
    for e in eqns[start:]:
        if type(e) is ReferenceType:
            kept.append(e)
        elif not e.effects:
            kept.append(ref(e))
    eqns[start:] = kept


def closed_jaxpr(recorded, outs):
    """The closed jaxpr of the equations `recorded` (of the trace being
    recorded) that compute `outs`: what they read from before them is its
    constants, the tracers themselves (as `lax.cond` takes a function's
    closure). Public API: none; only called where `recorded_equations` gave
    equations."""
    trace, where = core.trace_ctx.trace, source_info_util.current()
    made, free, body = set(), {}, []
    for e in recorded:
        for t in e.in_tracers:
            if type(t.val) is core.Var and t.val not in made:
                free.setdefault(t.val, t)
        made.update(e.outvars)
        body.append(core.JaxprEqn([t.val for t in e.in_tracers], e.outvars, e.primitive, e.params, e.effects,
                                  e.source_info, e.ctx))
    outvars = []
    for x in outs:
        t = trace.to_jaxpr_tracer(x if isinstance(x, jax.core.Tracer) else dtypes.canonicalize_value(x), where)
        if type(t.val) is core.Var and t.val not in made:
            free.setdefault(t.val, t)
        outvars.append(t.val)
    constvars = list(free)
    jaxpr = core.Jaxpr(constvars, [], outvars, body, pe.make_jaxpr_effects(constvars, [], outvars, body),
                       linear_util.DebugInfo("cond", "branch", None, None))
    return core.ClosedJaxpr(jaxpr, [free[v] for v in constvars])


def jaxpr_of(fn, avals, what):
    """`fn(*args)` for arguments of the abstract values `avals`, traced
    into a closed jaxpr, as `jax.make_jaxpr` gives it: `fn` returns a list
    of arrays. A child of the trace being recorded, as the one `lax.cond`
    and `lax.while_loop` make for their functions, without what they add
    around it (a cache keyed by the function, whose every call is new here,
    and the inspection of its signature): that costs more than tracing a
    small branch. Public API: `jax.make_jaxpr`, where jax has no such trace
    or checks for leaked tracers (jax_check_tracer_leaks)."""
    try:
        leaks = pe is None or config.check_tracer_leaks.value
    except AttributeError:
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


def inline(jaxpr, consts, *args):
    """The outputs of `jaxpr` on `consts` and `args`, its equations copied
    into the trace being recorded: `jaxpr_as_fun(ClosedJaxpr(jaxpr,
    consts))(*args)` without running each primitive's rules again (as `jit`
    inlines a nested `jit`). Public API: `jax.extend.core.jaxpr_as_fun`,
    where the current trace records no jaxpr (an eager `vmap`, say) or jax
    has no such function."""
    trace = _recording()
    inline_into = getattr(pe, "inline_jaxpr_into_trace", None)
    if trace is None or inline_into is None:
        return jax.extend.core.jaxpr_as_fun(jax.extend.core.ClosedJaxpr(jaxpr, list(consts)))(*args)
    where = source_info_util.current()
    inputs = [trace.to_jaxpr_tracer(x, where) for x in (*consts, *args)]
    return [trace.to_jaxpr_tracer(x, where) for x in inline_into(trace, where, jaxpr, (), *inputs)]


def _keeps_types(avals, out_avals):
    """A body's outputs `out_avals` have the types `avals` of its carry (but
    weak types, as `lax.while_loop` and `lax.scan` allow)."""
    return pe is not None and builtins.all(core.typematch(a, t) for a, t in zip(avals, out_avals))


def while_loop(test, body, init):
    """`lax.while_loop` of a loop whose test and body are traced already
    (closed jaxprs of the carry): what `lax.while_loop` binds once it has
    traced its functions, the primitive `while` of the two jaxprs, where
    jax has it and the body keeps the carry's types. Public API:
    `lax.while_loop` of functions that copy the jaxprs' equations
    (`inline`)."""
    if len(init) != len(body.out_avals) or not _keeps_types([jax.typeof(x) for x in init], body.out_avals):
        return lax.while_loop(lambda c: inline(test.jaxpr, test.consts, *c)[0],
                              lambda c: inline(body.jaxpr, body.consts, *c), init)
    cond_jaxpr, cond_consts = pe.separate_consts(test)
    body_jaxpr, body_consts = pe.separate_consts(body)
    return while_p.bind(*cond_consts, *body_consts, *init, cond_nconsts=builtins.len(cond_consts),
                        cond_jaxpr=cond_jaxpr, body_nconsts=builtins.len(body_consts), body_jaxpr=body_jaxpr)


def scan(step, init, xs, length):
    """The carry after `length` iterations of `carry = step(carry, rows)`
    over the rows of the arrays `xs` (a `lax.scan` without outputs per
    row; `step` takes and gives lists): the body traced once into a jaxpr
    (`jaxpr_of`), bound as the primitive `scan`, as `lax.scan` binds it
    once it has traced its function, where jax has it and the body keeps
    the carry's types. Public API: `lax.scan` of a function that copies
    the jaxpr's equations (`inline`)."""
    count = builtins.len(init)
    if pe is not None:
        avals = [jax.typeof(x) for x in init] + [core.mapped_aval(length, 0, jax.typeof(x)) for x in xs]
    else:
        avals = [jax.typeof(x) for x in init] + [jax.typeof(x[0]) for x in xs]
    closed = jaxpr_of(lambda *args: step(list(args[:count]), list(args[count:])), avals, "scan")
    if not _keeps_types(avals, closed.out_avals):
        return lax.scan(lambda c, rows: (inline(closed.jaxpr, closed.consts, *c, *rows), None), init, list(xs),
                        length)[0]
    jaxpr, consts = pe.separate_consts(closed)
    return scan_p.bind(*consts, *init, *xs, reverse=False, length=length, jaxpr=jaxpr,
                       num_consts=builtins.len(consts), num_carry=count, unroll=1)
