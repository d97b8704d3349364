"""A tracer error that the user's own `try` swallows (an `except Exception`,
a `return` in `finally`) would leave a graph of another program than the
function runs eagerly: the trace raises it at its end, with a note naming
where it was caught. `except` clauses on Python values keep working."""

import numpy as np
import pytest
from autograph.runtime.tracer.errors import SymbolicBoolError, TracingError, UnsupportedFunctionError

import autograph


def except_exception(x):
    try:
        scale = np.unique(x).size   # np.unique is not staged: UnsupportedFunctionError
    except Exception:
        scale = 2
    return x * scale


def return_in_finally(x):
    try:
        if x > 0:               # unconverted: bool() of a symbolic value
            return x
    finally:
        return -x               # noqa: B012 - the construct under test


def except_type_error_in_callee(x):
    return helper(x) + 1.0


def helper(x):
    try:
        return np.sum(np.unique(x))
    except TypeError:   # UnsupportedFunctionError is one
        return np.float64(0.0)


def caught_and_kept(x):
    errors = []
    try:
        len(np.zeros(3)[x > 0])   # a boolean mask of unknown length
    except TracingError as e:
        errors.append(e)
    return x


@pytest.mark.parametrize(("fn", "error", "autograph_"), [
    (except_exception, UnsupportedFunctionError, True),
    (return_in_finally, SymbolicBoolError, False),
    (except_type_error_in_callee, UnsupportedFunctionError, True),
    (caught_and_kept, TracingError, True),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_swallowed_tracer_error_stops_the_trace(fn, error, autograph_):
    fn(np.float64(2.0))   # eagerly: runs
    with pytest.raises(error) as info:
        autograph.function(fn, autograph=autograph_)(np.float64(2.0))
    note = "\n".join(info.value.__notes__)
    # Converted code's `except` clause raises it again at once
    # (converters/except_handlers.py); otherwise the trace's end finds it.
    said = "the `except` clause at" if autograph_ else "caught by a `try` statement at"
    assert said in note and "test_swallowed_tracer_errors.py:" in note, note


def python_values_in_try(x, text):
    try:
        n = int(text)
    except ValueError:
        n = -1
    try:
        if x > 0:
            y = x * n
        else:
            y = x
    except ZeroDivisionError:
        y = x
    return y


@pytest.mark.parametrize("text", ["3", "three"])
def test_except_clauses_on_python_values_keep_working(text):
    traced = autograph.function(python_values_in_try)
    for x in (2.0, -2.0):
        assert traced(np.float64(x), text) == python_values_in_try(np.float64(x), text)
