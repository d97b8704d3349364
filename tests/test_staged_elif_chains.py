"""`if`/`elif` chains on traced values, staged at once.

An `elif` whose else branch holds nothing else and whose test has no side
effect (`runtime.operators.pure_elif_stmt`) lets a staged `if` evaluate the
chain's tests up front and stage its branches as a balanced tree of conds
(`StagingBackend.cond_chain`): tracing nests log2(branches) conds where one
per `elif` raised `RecursionError` past about 100 branches. A chain of
fewer than `MIN_FLAT_CHAIN` such `elif`s is staged one cond per `elif`; the
tests of small chains lower that bound to stage them at once. Differential:
each chain, staged by the numpy tracer and under `jax.jit`, equals Python.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from autograph.converters import fast_paths
from autograph.runtime.errors import BranchMismatchError, UndefinedOutputError

import autograph
from benchmarks import scaling


def _staged(f, backend):
    if backend == "numpy":
        traced = autograph.function(f)
        return lambda *args: traced(*(np.float64(a) if type(a) is float else a for a in args))
    traced = jax.jit(autograph.to_graph(f), static_argnums=tuple(range(1, f.__code__.co_argcount)))
    return lambda x, *rest: traced(jnp.asarray(x), *rest)


def _cond_depth(jaxpr):
    """How deeply the conds of a jaxpr nest."""
    depth = 0
    for eqn in jaxpr.eqns:
        inner = [_cond_depth(b.jaxpr) for b in eqn.params.get("branches", ())]
        depth = max(depth, (1 + max(inner)) if eqn.primitive.name == "cond" else 0)
    return depth


BACKENDS = ["numpy", "jax"]


@pytest.fixture
def flat(monkeypatch):
    """Chains of one `elif` on are staged at once (functions converted
    while the test runs)."""
    monkeypatch.setattr(fast_paths, "MIN_FLAT_CHAIN", 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_500_branch_elif_chain_on_a_traced_value_stages_and_matches(backend):
    f = scaling.make_function(scaling.elif_chain_source(500))
    staged = _staged(f, backend)
    for x in (-1.0, 0.5, 17.0, 250.0, 498.5, 499.0, 600.0):
        assert float(staged(x)) == f(x), x


def _chain_with_state(length, changes_at, walrus_at):
    """A chain whose branches read a state variable `s`, one changes it, and
    one test binds a walrus read by its branch: in the code that runs, its
    links are defined side by side (fast_paths.CHAIN_SEGMENT), except where
    a branch reads a name that a link binds (the walrus) and must stay in it."""
    lines = ["def f(x, s):", "    r = 0.0"]
    for i in range(length):
        keyword = "if" if i == 0 else "elif"
        if i == walrus_at:
            lines += [f"    {keyword} (t := x * 2.0) < {2 * i}:", "        r = t + s"]
        elif i == changes_at:
            lines += [f"    {keyword} x < {i}:", "        s = s + 1.0", f"        r = s * {i}"]
        else:
            lines += [f"    {keyword} x < {i}:", f"        r = s * {i} + x"]
    lines += ["    else:", "        r = -x", "    return r + s"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("backend", ["python"] + BACKENDS)
def test_a_long_chain_with_state_and_a_walrus_matches_python(backend):
    f = scaling.make_function(_chain_with_state(60, changes_at=45, walrus_at=20))
    try:
        run = autograph.to_graph(f) if backend == "python" else _staged(f, backend)
        for x in [i - 0.5 for i in range(-1, 63)]:
            assert float(run(x, 3.0)) == f(x, 3.0), x
    finally:
        scaling.forget(f)


def _cond_chain(length):
    """A chain whose branches compute too much to be selects (a sum over
    65 elements): each is a branch of a cond."""
    f = scaling.make_function(scaling.elif_chain_source(length).replace("r = x *", "r = jnp.sin(x + ROW).sum() *"))
    f.__globals__.update(jnp=jnp, ROW=jnp.arange(65.0))
    return f


def test_a_long_chain_nests_conds_logarithmically_under_jax():
    # 200 branches: a tree of depth 8 over the first 193, whose last leaf
    # is the rest of the chain, one cond per `elif`.
    jaxpr = jax.make_jaxpr(autograph.to_graph(_cond_chain(200)))(1.0).jaxpr
    assert _cond_depth(jaxpr) == 8 + fast_paths.MIN_FLAT_CHAIN - 1


def test_a_short_chain_stages_one_cond_per_elif():
    jaxpr = jax.make_jaxpr(autograph.to_graph(_cond_chain(fast_paths.MIN_FLAT_CHAIN)))(1.0).jaxpr
    assert _cond_depth(jaxpr) == fast_paths.MIN_FLAT_CHAIN


def mixed(x, mode):
    if x < 0:
        r = -x
    elif mode == 1:
        r = x + 100
    elif x < 2:
        r = x * 2
    elif mode == 2:
        r = x + 200
    elif x < 4:
        r = x * 4
    else:
        r = x * 8
    return r


def with_items(x):
    d = {"hits": 0.0, "last": -1.0}
    if x < 1:
        d["hits"] = x
    elif x < 2:
        d["last"] = x * 2
    elif x < 3:
        d["hits"] = x * 3
        d["last"] = 3.0
    elif x < 4:
        pass
    else:
        d["last"] = x
    return d["hits"] + 10 * d["last"]


def some_unchanged(x, y):
    if x < 0:
        y = y - 1
    elif x < 1:
        y = y * 2
    elif x < 2:
        x = x + 5
    return x + y


def _bump(v):
    return v + 1


def test_that_calls(x):
    if x < 0:
        r = 0.0
    elif _bump(x) < 2:
        r = 1.0
    elif x < 3:
        r = 3.0
    else:
        r = 4.0
    return r


CASES = [
    (mixed, [(-1.0, 1), (1.0, 1), (1.0, 2), (3.0, 2), (3.0, 3), (5.0, 3), (1.5, 0)]),
    (with_items, [(0.5,), (1.5,), (2.5,), (3.5,), (4.5,)]),
    (some_unchanged, [(-1.0, 3.0), (0.5, 3.0), (1.5, 3.0), (2.5, 3.0)]),
    (test_that_calls, [(-1.0,), (0.5,), (2.5,), (3.5,)]),
]
test_that_calls.__test__ = False


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", [(f, a) for f, inputs in CASES for a in inputs],
                         ids=[f"{f.__name__}{a}" for f, inputs in CASES for a in inputs])
def test_chains_match_python(flat, backend, f, args):
    assert float(_staged(f, backend)(*args)) == pytest.approx(f(*args))


def raises_in_one_branch(x):
    if x < 0:
        r = -x
    elif x < 1:
        r = x * 2
    elif x < 2:
        raise ValueError("x between 1 and 2")
    elif x < 3:
        r = x * 3
    else:
        r = x
    return r


def test_a_raise_in_one_branch_of_a_chain_is_raised_where_python_raises(flat):
    staged = autograph.function(raises_in_one_branch)
    for x in (-1.0, 0.5, 2.5, 7.0):
        assert staged(np.float64(x)) == raises_in_one_branch(x)
    with pytest.raises(ValueError, match="x between 1 and 2"):
        staged(np.float64(1.5))
    assert staged.trace_count == 1


def mismatched(x):
    if x < 0:
        r = 1.0
    elif x < 1:
        r = 2.0
    elif x < 2:
        r = "three"
    else:
        r = 4.0
    return r


def undefined_in_one(x):
    if x < 0:
        r = 1.0
    elif x < 1:
        r = 2.0
    elif x < 2:
        q = 3.0  # noqa: F841 -- the branch that leaves r undefined
    else:
        r = 4.0
    return r


@pytest.mark.parametrize("f, error, words", [
    (mismatched, BranchMismatchError, "'r' is a Python str ('three') in the true branch"),
    (undefined_in_one, UndefinedOutputError, "'r' is defined in the false branch but not in the true"),
])
def test_an_error_in_a_chain_names_the_elif_that_gives_it(flat, f, error, words):
    line = f.__code__.co_firstlineno + 5  # the third test: `elif x < 2`
    with pytest.raises(error) as raised:
        autograph.function(f)(np.float64(0.5))
    assert words in str(raised.value)
    assert f"test_staged_elif_chains.py:{line})" in str(raised.value)


def test_a_chain_exports_with_torch_and_matches():
    # torch.export traces each cond's branches more than once: the tests of
    # the tree's nodes are made before any branch is traced (one made in a
    # branch's trace and used in the next raised "fake tensor in the
    # exported program"), and nested conds cost it time exponential in their
    # depth (one cond per `elif`: 16 branches took minutes).
    import torch

    f = scaling.make_function(scaling.elif_chain_source(16))
    converted = autograph.to_graph(f)

    class Chain(torch.nn.Module):
        def forward(self, x):
            return converted(x)

    exported = torch.export.export(Chain(), (torch.tensor(1.5),), strict=False).module()
    for x in (-1.0, 0.5, 3.0, 8.0, 15.5, 20.0):
        assert float(exported(torch.tensor(x))) == f(x), x
