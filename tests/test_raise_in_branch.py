"""A `raise` in one branch of a staged `if` is staged as a check: the graph
tests the condition when it runs and raises the error there, where Python
would; the other branch is the statement's only way on. Before, the error
was raised while tracing, whichever way the condition went (`validate(1.0)`
raised `ValueError`), or a `try` around the `if` caught it while tracing
and its handler's result became the function's for every input (`guarded`
returned 2 where Python returns 1). A `try` in the traced function cannot
catch an error raised when the graph runs: the error says so.

Differential: each function, run staged, equals Python's result, or raises
the error Python raises (numpy tracer: the same exception type; JAX: its
runtime error carrying it; torch.export: torch's runtime check)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from autograph.runtime.errors import TracingError

import autograph


def validate(x):
    if x > 0:
        y = x * 2
    else:
        raise ValueError("x must be positive")
    return y


def no_else(x):
    if x < 0:
        raise ValueError("x must be positive")
    return x + 1


def _check_positive(v):
    if v < 0:
        raise ValueError("negative item")
    return v


def each_item(xs):
    total = 0.0
    for v in xs:
        if v > 100:
            raise OverflowError("item too large")
        total += _check_positive(v)
    return total


def nested(x, y):
    if x > 0:
        if y > 0:
            return x * y
        raise KeyError("y")
    return -x


def guarded(x):
    try:
        if x > 0:
            y = 1
        else:
            raise ValueError("no")
    except ValueError:
        y = 2
    return y


CASES = [
    (validate, [(3.0,), (-1.0,)]),
    (no_else, [(2.0,), (-2.0,)]),
    (each_item, [([1.0, 2.0, 3.0],), ([1.0, -2.0, 3.0],), ([1.0, 200.0, -3.0],)]),
    (nested, [(2.0, 3.0), (2.0, -3.0), (-2.0, 3.0)]),
]


def _python(f, args):
    try:
        return f(*args), None
    except Exception as e:
        return None, e


def _ids(cases):
    return [f"{f.__name__}{args}" for f, inputs in cases for args in inputs]


def _flat(cases):
    return [(f, args) for f, inputs in cases for args in inputs]


@pytest.mark.parametrize("f, args", _flat(CASES), ids=_ids(CASES))
def test_numpy_tracer_raises_where_python_raises(f, args):
    expected, error = _python(f, args)
    staged = autograph.function(f)
    arrays = [np.asarray(a, dtype=np.float64) for a in args]
    if error is None:
        assert staged(*arrays) == pytest.approx(expected)
        return
    with pytest.raises(type(error)) as raised:
        staged(*arrays)
    assert str(raised.value) == str(error)
    assert "the graph checks its condition and raises this when it runs" in "\n".join(raised.value.__notes__)
    # The graph is traced once and raises on each run where Python raises.
    with pytest.raises(type(error)):
        staged(*arrays)
    assert staged.trace_count == 1


@pytest.mark.parametrize("f, args", _flat(CASES), ids=_ids(CASES))
def test_jax_jit_raises_where_python_raises(f, args):
    expected, error = _python(f, args)
    staged = jax.jit(autograph.to_graph(f))
    arrays = [jnp.asarray(a) for a in args]
    if error is None:
        assert float(staged(*arrays)) == pytest.approx(expected)
        return
    with pytest.raises(Exception, match=f"{type(error).__name__}: {str(error)}"):
        jax.block_until_ready(staged(*arrays))


def test_jax_grad_and_vmap_through_a_check():
    converted = autograph.to_graph(validate)
    assert jax.grad(converted)(3.0) == 2.0
    assert list(jax.vmap(converted)(jnp.array([1.0, 2.0]))) == [2.0, 4.0]
    with pytest.raises(Exception, match="ValueError: x must be positive"):
        jax.block_until_ready(jax.jit(jax.vmap(converted))(jnp.array([1.0, -2.0])))


@pytest.mark.parametrize("f, args", _flat(CASES[:2]), ids=_ids(CASES[:2]))
def test_torch_export_raises_where_python_raises(f, args):
    expected, error = _python(f, args)
    converted = autograph.to_graph(f)

    class Module(torch.nn.Module):
        def forward(self, x):
            return converted(x)
    exported = torch.export.export(Module(), (torch.tensor(1.0),), strict=False).module()
    if error is None:
        assert float(exported(torch.tensor(args[0]))) == pytest.approx(expected)
        return
    with pytest.raises(RuntimeError, match=f"{type(error).__name__}: {str(error)}"):
        exported(torch.tensor(args[0]))


@pytest.mark.parametrize("run", ["numpy tracer", "jax.jit"])
def test_a_try_around_the_if_does_not_catch_it_and_the_error_says_so(run):
    # Python returns 1 for a positive x and 2 otherwise; staged, the handler
    # cannot run when the graph raises, so a negative x is an error, which
    # says why (before: 2 for every input, silently).
    if run == "numpy tracer":
        staged, value = autograph.function(guarded), np.float64
    else:
        staged, value = jax.jit(autograph.to_graph(guarded)), jnp.float64
    assert int(staged(value(3.0))) == guarded(3.0) == 1
    with pytest.raises(Exception) as raised:
        jax.block_until_ready(staged(value(-3.0)))
    line = guarded.__code__.co_firstlineno + 2
    assert "past any `try` around the `if`" in str(raised.value) + "\n".join(getattr(raised.value, "__notes__", []))
    assert f"{__file__}:{line}" in str(raised.value) + "\n".join(getattr(raised.value, "__notes__", []))


def test_an_error_of_the_tracer_itself_is_not_staged():
    # Not a `raise` of the program: JAX's own error while tracing the
    # branch, which no input makes go away, is raised while tracing.
    def to_numpy(x):
        if x > 0:
            x = np.asarray(x) * 2
        return x
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.jit(autograph.to_graph(to_numpy))(2.0)


def test_a_backend_that_cannot_check_refuses_the_if(monkeypatch):
    from autograph.runtime.jax.backend import JaxBackend
    monkeypatch.setattr(JaxBackend, "check", lambda self, ok, error: NotImplemented)
    def positive(x):  # (a function of its own: jax.jit caches traces by function)
        if x > 0:
            y = x * 2
        else:
            raise ValueError("x must be positive")
        return y
    line = positive.__code__.co_firstlineno
    with pytest.raises(TracingError, match=rf"branch taken where it is false of an `if` whose condition is traced "
                                           rf"by JAX \({__file__}:{line + 1}\) raises ValueError\('x must be "
                                           rf"positive'\) at {__file__}:{line + 4}: .*return a flag instead"):
        jax.jit(autograph.to_graph(positive))(3.0)
