"""converters/except_handlers.py: an `except` clause that could catch a
backend's refusal (a TracingError) re-raises it first, so that a trace never
goes on past one with the handler's values (a wrong answer); clauses that
name only other builtin exceptions stay as written; every other exception
is handled as written."""

import numpy as np
import pytest
from autograph.runtime.errors import UndefinedOutputError
from harness import assert_same_behaviour

import autograph


def broad(x):
    try:
        return 10 // x
    except Exception:
        return -1


def bare(x):
    try:
        return 10 // x
    except:  # noqa: E722
        return -1


def named_tuple_of_types(x):
    try:
        return [1, 2][x]
    except (IndexError, TypeError) as error:
        return type(error).__name__


def narrow(x):
    try:
        return 10 // x
    except ZeroDivisionError:
        return -1


def test_a_clause_that_may_catch_a_refusal_reraises_it_first():
    for f in (broad, bare, named_tuple_of_types):
        code = autograph.to_code(f)
        assert "ag__.reraise_refusal()" in code, code
        head, handler = code.split("except", 1)
        assert handler.splitlines()[1].strip() == "ag__.reraise_refusal()", code


def test_a_clause_of_other_builtin_exceptions_stays_as_written():
    assert "reraise_refusal" not in autograph.to_code(narrow)


def ZeroDivisionError_shadowed(x):  # noqa: N802
    ZeroDivisionError = Exception  # noqa: N806
    try:
        return 10 // x
    except ZeroDivisionError:
        return -1


def test_a_rebound_builtin_name_is_not_trusted():
    assert "ag__.reraise_refusal()" in autograph.to_code(ZeroDivisionError_shadowed)


@pytest.mark.parametrize("f", [broad, bare, named_tuple_of_types, narrow, ZeroDivisionError_shadowed])
def test_other_exceptions_are_handled_as_written(f):
    assert_same_behaviour(f, [(2,), (0,), (5,), ("a",)])


def defined_in_one_branch(x):
    if x.sum() > 0:
        y = x * 2
    return y


def catches_the_refusal(x):
    try:
        return defined_in_one_branch(x)
    except Exception:
        return x


def test_a_caught_refusal_stops_a_jax_trace():
    jax = pytest.importorskip("jax")
    with pytest.raises(UndefinedOutputError) as info:
        jax.jit(autograph.to_graph(catches_the_refusal))(np.ones(2))
    line = catches_the_refusal.__code__.co_firstlineno + 3
    assert f"the `except` clause at {__file__}:{line} (in catches_the_refusal) caught this error" in \
        "\n".join(info.value.__notes__)


def test_a_caught_refusal_stops_the_numpy_tracer():
    with pytest.raises(UndefinedOutputError):
        autograph.function(catches_the_refusal)(np.ones(2))
