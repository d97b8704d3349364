"""A staged `if`: `lax.select` of both branches' outputs where both are
small and side-effect free (`selectable`; a branch whose gradient could be
NaN reads its inputs through a `stop_gradient` where it is not taken),
else `lax.cond`.

Where the current trace records a jaxpr, both branches are traced into it,
one after the other, and their equations are moved into the cond's
branches only where a select will not do (`_cond_here`): each branch is
traced once, whichever form it takes."""

import builtins

import jax
import jax.numpy as jnp
from autograph.runtime.jax import compat, values
from jax import lax

__all__ = ["SELECT_MAX_ELEMENTS", "selectable", "stage_cond"]

def stage_cond(pred, branches):
    # Both branches run before anything is emitted: the second one settles
    # the outputs and raises Retry if the first must change. A branch that
    # computes nothing (`if c: break`) runs after the other one.
    pred = values.predicate(pred, branches.what, branches.loc)
    compat.drop_dead_equations()
    eqns = compat.recorded_equations()
    outs = _cond_traced(pred, branches) if eqns is None else _cond_here(pred, branches, eqns)
    compat.drop_dead_equations()
    return outs


def _cond_here(pred, branches, eqns):
    """The `if` where the current trace records a jaxpr (`eqns`, its
    equations so far): both branches are traced into it, one after the
    other, as the code of a `select` would be. Where `selectable` takes
    the equations each recorded, their outputs are selected; otherwise
    (effects, loops, conds, more work than the rule allows) the equations
    are moved out of the trace into one jaxpr per branch (`_closed`), which
    `lax.cond` runs: nothing of them, effects above all, stays where it
    would run whichever way the program goes. Each branch is traced once."""
    trivial, start = branches.trivial, len(eqns)
    outs, spans = [None, None], [None, None]
    try:
        for k in sorted((0, 1), key=trivial.__getitem__):
            mark = len(eqns)
            outs[k] = branches.callback(k)()
            spans[k] = (mark, len(eqns))
        recorded = [compat.live(eqns[a:b]) for a, b in spans]
        rule = _rule([r for r, t in zip(recorded, trivial) if not t], branches)
        if rule is _SELECT:
            return _select(pred, branches, *outs)
        closed = [compat.closed_jaxpr(r, o) for r, o in zip(recorded, outs)]
    except BaseException:
        compat.unrecord(eqns, start)  # a branch that raised (Retry: traced again), or settled
        raise
    compat.unrecord(eqns, start)
    del recorded, outs
    if rule is _GUARDED:
        return _select(pred, branches, *(_guarded(pred, k, c) for k, c in enumerate(closed)))
    return lax.cond(pred, *(jax.extend.core.jaxpr_as_fun(c) for c in closed))


def _cond_traced(pred, branches):
    """The `if` where the current trace records no jaxpr (an eager `vmap`
    or `grad` of converted code, say) or jax has none to record into: each
    branch traced into a jaxpr of its own (`_trace`) unless it computes
    nothing, then `_choose`."""
    outs, trivial = [None, None], branches.trivial
    for k in sorted((0, 1), key=trivial.__getitem__):
        outs[k] = branches.callback(k)() if trivial[k] else _trace(branches.callback(k))
    return _choose(pred, branches, *outs)


# Primitives whose derivative is finite wherever their operands are: where a
# branch uses only these, `select` gives the gradient `lax.cond` gives.
_SMOOTH = frozenset("""
    add sub mul neg max min abs sign select_n convert_element_type copy copy_p integer_pow square
    eq ne lt le gt ge and or not xor broadcast_in_dim reshape squeeze expand_dims slice dynamic_slice
    concatenate reduce_sum dot_general transpose pjit jit
""".split())

SELECT_MAX_ELEMENTS = 64
_STAGED = frozenset({"while", "scan", "cond", "custom_jvp_call", "custom_vjp_call"})


_SELECT, _GUARDED = "select", "guarded select"


def selectable(recorded, branches):
    """Whether the branches that recorded the equations `recorded` (a list
    per branch that computes something) become a `select` (`_rule`)."""
    return _rule(recorded, branches) is not None


def _rule(recorded, branches):
    """How an `if` whose branches recorded the equations `recorded` (a list
    per branch that computes something) is staged: `_SELECT` or `_GUARDED`
    where together they compute at most SELECT_MAX_ELEMENTS array elements
    (the sizes of their equations' results, nested equations included: 64
    scalar operations, or one on an array of 64 elements), have no effects
    (print, assert, callbacks) and no loops or conds; else None (`lax.cond`).
    A plain `_SELECT` where every output of the `if` is an integer or
    boolean or every primitive is one of _SMOOTH (`jax.grad` through the
    branch not taken adds zeros, never NaN); otherwise `_GUARDED`: each
    branch reads its floating-point inputs through a `stop_gradient` where
    it is not taken (`_guarded`), as `jax.vmap` of `lax.cond` does, so that
    no gradient flows through it, NaN or not."""
    seen, count = set(), 0
    for eqn in _nested(recorded):
        if eqn.effects:
            return None
        for v in eqn.outvars:
            size = 1
            for d in getattr(v.aval, "shape", ()):
                size *= d if type(d) is int else SELECT_MAX_ELEMENTS + 1
            count += size
        if count > SELECT_MAX_ELEMENTS:
            return None
        name = eqn.primitive.name
        if name in _STAGED:
            return None
        seen.add(name)
        for param in eqn.params.values():
            if type(param) in (tuple, list) and param and hasattr(getattr(param[0], "jaxpr", None), "eqns"):
                return None  # branches of a cond
    if seen <= _SMOOTH or not builtins.any(_inexact(t[1]) for t, _ in branches.carried()):
        return _SELECT
    return _GUARDED


def _nested(eqn_lists):
    """Each equation of the lists `eqn_lists`, and of the jaxprs nested in
    their parameters (a pjit's, a custom_jvp's; not a cond's branches)."""
    stack = list(eqn_lists)
    while stack:
        for eqn in stack.pop():
            yield eqn
            for param in eqn.params.values():
                inner = getattr(param, "jaxpr", param)
                if hasattr(inner, "eqns"):
                    stack.append(inner.eqns)


def _guarded(pred, k, closed):
    """The outputs of branch `k` (0: true, 1: false), traced into the
    closed jaxpr `closed`, its equations copied where the `if` is, each
    floating-point value it reads from outside taken through a
    `stop_gradient` where the branch is not taken: its value is the same,
    and no derivative flows through the branch not taken. A branch of
    _SMOOTH primitives only needs no guard."""
    # (Then it adds zeros where it is not taken, as a plain select does.)
    if {eqn.primitive.name for eqn in _nested([closed.jaxpr.eqns])} <= _SMOOTH:
        return compat.inline(closed.jaxpr, closed.consts)
    consts = []
    for c in closed.consts:
        if _inexact(jnp.result_type(c)):
            held = lax.stop_gradient(c)
            c = lax.select(pred, c, held) if k == 0 else lax.select(pred, held, c)
        consts.append(c)
    return compat.inline(closed.jaxpr, consts)


def _choose(pred, branches, *outs):
    """The outputs of the branch that `pred` picks, from each branch's
    traced jaxpr or, for one that computes nothing, its outputs: `lax.select`
    of both where `selectable` says that is safe (XLA:CPU runs a small
    select faster than a conditional), else `lax.cond`."""
    traced = [b for b in outs if type(b) is not list]
    rule = _rule([c.jaxpr.eqns for c in traced], branches)
    if rule is None:
        return lax.cond(pred, *(jax.extend.core.jaxpr_as_fun(b) if type(b) is not list else (lambda b=b: b)
                                for b in outs))
    if rule is _GUARDED:
        outs = [b if type(b) is list else _guarded(pred, k, b) for k, b in enumerate(outs)]
    else:
        outs = [b if type(b) is list else compat.inline(b.jaxpr, b.consts) for b in outs]
    return _select(pred, branches, *outs)


def _select(pred, branches, true_outs, false_outs):
    """`lax.select` of the branches' outputs, but for an output that only
    one branch gives a value (a `return` that ran there): that value."""
    return [a if a is b else (a, b)[k] if k is not None else lax.select(pred, a, b)
            for a, b, k in zip(true_outs, false_outs, branches.returned_in(), strict=True)]



def _trace(fn):
    """`fn()` traced into a closed jaxpr, leaving nothing in the trace that
    calls it: as `jax.make_jaxpr(fn)()`."""
    return compat.jaxpr_of(fn, (), "cond")


_INEXACT = {}


def _inexact(dtype):
    """`jnp.issubdtype(dtype, jnp.inexact)`, remembered per dtype."""
    known = _INEXACT.get(dtype)
    if known is None:
        known = _INEXACT[dtype] = bool(jnp.issubdtype(dtype, jnp.inexact))
    return known
