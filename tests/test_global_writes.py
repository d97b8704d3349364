"""A staged statement that rebinds a global variable is refused, naming the
variable, the statement's line and what to do: the numpy tracer and JAX run
both branches (or the body once) while tracing, so the global would change
once, whichever way the program then goes (before: `flag` was 1 after a
call whose condition was false, and `count` held a symbolic value). The
module's value is left as it was. On Python values the statements run as
Python's, globals included."""

import types

import jax
import numpy as np
import pytest
from autograph.runtime.errors import TracingError

import autograph

flag = None
count = 0


def set_flag(x):
    global flag
    if x > 0:
        flag = 1
    return x * 2


def count_positive(x):
    global count
    if x > 0:
        count = count + 1
    return x


def count_halvings(x):
    global count
    while x > 1:
        x = x / 2
        count += 1
    return x


def _reset():
    global flag, count
    flag, count = None, 0


@pytest.mark.parametrize("f, name", [(set_flag, "flag"), (count_positive, "count"), (count_halvings, "count")])
@pytest.mark.parametrize("run", ["numpy tracer", "jax.jit"])
def test_a_staged_statement_that_rebinds_a_global_is_refused(f, name, run):
    _reset()
    staged = autograph.function(f) if run == "numpy tracer" else jax.jit(autograph.to_graph(f))
    line = f.__code__.co_firstlineno + 2
    with pytest.raises(TracingError, match=rf"\({__file__}:{line}\) rebinds the global variable '{name}' of "
                                           rf"module '{__name__}'.*Return the new value from the function"):
        staged(np.float64(-3.0) if run == "numpy tracer" else -3.0)
    assert (flag, count) == (None, 0)


@pytest.mark.parametrize("f, x", [(set_flag, 2.0), (set_flag, -2.0), (count_positive, 2.0), (count_halvings, 8.0)])
def test_on_python_values_globals_change_as_in_python(f, x):
    _reset()
    expected = f(x), flag, count
    _reset()
    assert (autograph.to_graph(f)(x), flag, count) == expected


# A user module's globals, set through the module (`settings.flag = 1`): the same refusal.
settings = types.ModuleType("settings")
settings.flag, settings.scale = None, 3.0


def set_module_flag(x):
    if x > 0:
        settings.flag = 1
    return x * 2


def count_in_module(x):
    while x > 1:
        x = x / 2
        settings.flag = x
    return x


def read_module_scale(x):
    if x > 0:
        x = x * settings.scale
    return x


@pytest.mark.parametrize("f", [set_module_flag, count_in_module])
@pytest.mark.parametrize("run", ["numpy tracer", "jax.jit"])
def test_a_staged_statement_that_sets_a_user_module_global_is_refused(f, run):
    settings.flag = None
    staged = autograph.function(f) if run == "numpy tracer" else jax.jit(autograph.to_graph(f))
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TracingError, match=rf"\({__file__}:{line}\) rebinds the global variable 'flag' of "
                                           r"module 'settings'.*Return the new value from the function"):
        staged(np.float64(8.0) if run == "numpy tracer" else 8.0)
    assert settings.flag is None


@pytest.mark.parametrize("run", ["numpy tracer", "jax.jit"])
def test_a_staged_statement_may_read_a_user_module_global(run):
    staged = autograph.function(read_module_scale) if run == "numpy tracer" \
        else jax.jit(autograph.to_graph(read_module_scale))
    assert float(staged(np.float64(2.0) if run == "numpy tracer" else 2.0)) == 6.0
    assert float(staged(np.float64(-2.0) if run == "numpy tracer" else -2.0)) == -2.0


@pytest.mark.parametrize("f, x", [(set_module_flag, 2.0), (set_module_flag, -2.0), (count_in_module, 8.0)])
def test_on_python_values_module_globals_change_as_in_python(f, x):
    settings.flag = None
    expected = f(x), settings.flag
    settings.flag = None
    assert (autograph.to_graph(f)(x), settings.flag) == expected
