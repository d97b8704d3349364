"""The jaxprs of converted code against hand-written `lax`: for each function
of benchmarks/jax_control_flow.py, `jax.make_jaxpr` of the converted
function has no dead equations and at most 1.2x the equations of the
hand-written version (structure only: the benchmark measures the times)."""

import pytest

jax = pytest.importorskip("jax")

import autograph  # noqa: E402
from benchmarks import jax_control_flow as bench  # noqa: E402

jax.config.update("jax_enable_x64", True)

CASES = {f.__name__: (f, f_lax, args) for f, f_lax, args in bench._inputs()}


def jaxprs(jaxpr):
    """`jaxpr` and the jaxprs nested in its equations."""
    yield jaxpr
    for eqn in jaxpr.eqns:
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = sub if hasattr(sub, "eqns") else getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    yield from jaxprs(inner)


def dead(jaxpr):
    """Equations (nested ones included) without effects whose results
    nothing in their jaxpr uses, nor its outputs."""
    count = 0
    for j in jaxprs(jaxpr):
        used = {id(v) for v in j.outvars}
        for eqn in reversed(j.eqns):
            if eqn.effects or any(id(v) in used for v in eqn.outvars):
                used.update(id(v) for v in eqn.invars)
            else:
                count += 1
    return count


def size(jaxpr):
    return sum(len(j.eqns) for j in jaxprs(jaxpr))


@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_jaxpr_is_as_lean_as_hand_written(name):
    f, f_lax, args = CASES[name]
    converted = jax.make_jaxpr(autograph.to_graph(f))(*args).jaxpr
    by_hand = jax.make_jaxpr(f_lax)(*args).jaxpr
    assert dead(converted) == 0
    assert size(converted) <= 1.2 * size(by_hand), (size(converted), size(by_hand))


def test_dead_counts_unused_equations():
    def f(x):
        unused = x * 2  # noqa: F841 - the dead equation this test finds
        return x + 1
    assert dead(jax.make_jaxpr(f)(1.0).jaxpr) == 1
    assert size(jax.make_jaxpr(f)(1.0).jaxpr) == 2
