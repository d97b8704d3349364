"""`and`/`or` whose later operands are pure (names and constants compared:
converters/logical_expressions.py) on traced booleans: one mechanism in
the shared core (`operators.and_`/`or_`, `StagingBackend.logical`) gives the
backend's logical and/or instead of a cond, in a loop test and anywhere
else, for the numpy tracer, JAX (jaxpr) and PyTorch (torch.export, strict
and non-strict, and torch.compile's graph). Each program runs on arguments
that take every way through its conditions and is compared with the
unconverted function run eagerly; a Python first operand short-circuits as
Python."""

import numpy as np
import pytest

import autograph


def count_while_both(x, n):
    while (x > 0).all() and n < 10:
        x = x - 1
        n = n + 1
    return x, n


def count_while_either(x, n):
    steps = 0
    while (x > 0).all() or n < 3:
        x = x - 1
        n = n + 1
        steps += 1
    return x, n, steps


def joined_values(x, n):
    both = (x > 0).all() and n < 2
    either = (x > 5).any() or n == 3
    return both, either, not (x < 0).all() and n != 0


def impure_right_operand(x, n):
    while (x > 0).all() and x.sum() < n:  # a call: evaluated only where Python would
        x = x - 1
    return x


# (function, argument sets as numpy values): every way out of each test.
PROGRAMS = [
    (count_while_both, [(np.array([3.0, 5.0]), np.int64(0)),  # x stops the loop
                        (np.array([30.0, 50.0]), np.int64(0)),  # n stops it
                        (np.array([-1.0, 2.0]), np.int64(0)),  # x is false at once
                        (np.array([1.0, 2.0]), np.int64(20))]),  # n is false at once
    (count_while_either, [(np.array([3.0, 5.0]), np.int64(0)), (np.array([-1.0, 2.0]), np.int64(0)),
                          (np.array([-1.0, 2.0]), np.int64(5)), (np.array([4.0, 9.0]), np.int64(7))]),
    (joined_values, [(np.array([1.0, 9.0]), np.int64(0)), (np.array([1.0, 2.0]), np.int64(3)),
                     (np.array([-1.0, -2.0]), np.int64(1)), (np.array([-1.0, 2.0]), np.int64(5))]),
]
LOOPS = [count_while_both, count_while_either]


def as_numpy(values):
    return [np.asarray(v) for v in (values if isinstance(values, tuple) else (values,))]


def assert_same(expected, actual):
    for e, a in zip(as_numpy(expected), as_numpy(actual), strict=True):
        assert a.shape == e.shape
        np.testing.assert_allclose(a, e)


# numpy tracer -------------------------------------------------------------------

@pytest.mark.parametrize("f, argsets", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_numpy_tracer(f, argsets):
    traced = autograph.function(f)
    for args in argsets:
        assert_same(f(*args), traced(*args))
    assert traced.trace_count == 1
    graph = str(traced.get_concrete_function(*argsets[0]))
    assert "cond(" not in graph, graph


def test_a_call_on_the_right_stays_a_cond():
    graph = str(autograph.function(impure_right_operand).get_concrete_function(np.array([3.0, 5.0]), np.int64(4)))
    assert "cond(" in graph


def and_short_circuits(flag, x):
    if flag:
        limit = 3
    return flag and limit < x  # `limit` is unbound where `flag` is false


def or_short_circuits(flag, x):
    if not flag:
        limit = 3
    return flag or limit < x  # `limit` is unbound where `flag` is true


@pytest.mark.parametrize("f", [and_short_circuits, or_short_circuits])
def test_python_first_operand_short_circuits_as_python(f):
    assert "pure=True" in autograph.to_code(f)
    converted = autograph.to_graph(f)
    for args in [(False, 1), (True, 1), (True, 5), (0, 5), (1, 5), (np.bool_(True), 5), (np.bool_(False), 5)]:
        expected, actual = f(*args), converted(*args)
        assert (type(actual), actual) == (type(expected), expected)


# JAX ------------------------------------------------------------------------------

def primitives(jaxpr):
    found = []
    for eqn in jaxpr.eqns:
        found.append(eqn.primitive.name)
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = sub if hasattr(sub, "eqns") else getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    found.extend(primitives(inner))
    return found


@pytest.mark.parametrize("f, argsets", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_jax(f, argsets):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    converted = autograph.to_graph(f)
    jitted = jax.jit(converted)
    for args in argsets:
        args = tuple(jnp.asarray(a) for a in args)
        assert_same(f(*args), jitted(*args))
    found = primitives(jax.make_jaxpr(converted)(*(jnp.asarray(a) for a in argsets[0])).jaxpr)
    assert "cond" not in found and ("and" in found or "or" in found), found


# PyTorch --------------------------------------------------------------------------

def tensors(args):
    torch = pytest.importorskip("torch")
    return tuple(torch.tensor(a) for a in args)


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
@pytest.mark.parametrize("f, argsets", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_torch_export(f, argsets, strict):
    torch = pytest.importorskip("torch")
    from tests.runtime.exported_graphs import Converted, dead_nodes, targets
    exported = torch.export.export(Converted(f), tensors(argsets[0]), strict=strict)
    for args in argsets:
        assert_same(f(*tensors(args)), exported.module()(*tensors(args)))
    assert dead_nodes(exported) == []
    found = targets(exported)
    assert "cond" not in found and ("logical_and" in found or "logical_or" in found), found


@pytest.mark.parametrize("f, argsets", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_torch_compile(f, argsets):
    torch = pytest.importorskip("torch")
    found = set()

    def backend(gm, inputs):
        for module in gm.modules():
            if isinstance(module, torch.fx.GraphModule):
                found.update(str(n.target) for n in module.graph.nodes if n.op == "call_function")
        return gm

    torch._dynamo.reset()
    function = torch.compile(autograph.to_graph(f), fullgraph=True, backend=backend)
    for args in argsets:
        assert_same(f(*tensors(args)), function(*tensors(args)))
    assert not any("cond" in target for target in found), found
    assert any("logical_" in target for target in found), found
