"""Errors raised in converted code must not advise converting it.

Conversion leaves comprehensions, generator expressions and calls that
iterate (`list()`, `any()`) as Python runs them: a symbolic value reaching
them is an error, and its message says what to write instead, naming the
user's line, where code that is not converted is told to convert it.
"""

import inspect

import numpy as np
import pytest
from autograph.runtime.errors import TracingError
from autograph.runtime.tracer.errors import SymbolicBoolError

import autograph


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def comprehension_condition(x):
    return [v for v in x if v > 0]


def any_of_generator(x):
    return any(v > 0 for v in x)


def comprehension_over_unknown_length(x):
    return [v * 2 for v in x]


def zip_over_unknown_length(x):
    return list(zip(x, x))


def unconverted_condition(x):
    return [v for v in x if v > 0]


def item_assignment_through_an_attribute(x):
    box = Box()
    box.y = x * 1
    box.y[0] = 2.0
    return box.y


class Box:
    pass


def slice_assignment(x):
    y = x * 1
    y[1:] = 0.0
    return y


CASES = [
    (comprehension_condition, 3, SymbolicBoolError, "if v > 0",
     "conversion leaves comprehensions and generator expressions as Python runs them"),
    (any_of_generator, 3, SymbolicBoolError, "any(",
     "Compute it with array operations instead (np.any, np.all, np.where)"),
    (comprehension_over_unknown_length, None, TracingError, "for v in x",
     "only a `for` statement of converted code loops over it"),
    (zip_over_unknown_length, None, TracingError, "zip(x, x)",
     "only a `for` statement of converted code loops over it"),
    (item_assignment_through_an_attribute, 3, TracingError, "box.y[0]", "write `y = <target>`"),
]


@pytest.mark.parametrize("fn, length, error, construct, words", CASES, ids=[c[0].__name__ for c in CASES])
def test_converted_code_is_not_told_to_convert(fn, length, error, construct, words):
    traced = autograph.function(fn, input_signature=[autograph.Spec((length,), "float64")])
    with pytest.raises(error) as info:
        traced(np.ones(3))
    message = str(info.value)
    assert words in message, message
    assert f"({__file__}:{line_of(fn, construct)})" in message, message
    assert "onvert the function" not in message and "onvert it with" not in message, message


def test_unconverted_code_is_told_to_convert():
    traced = autograph.function(unconverted_condition, autograph=False)
    with pytest.raises(SymbolicBoolError) as info:
        traced(np.ones(3))
    assert "needs the function to be converted. Convert it with autograph" in str(info.value)


def test_unconverted_item_assignment_is_told_to_convert():
    traced = autograph.function(slice_assignment, autograph=False)
    with pytest.raises(TracingError, match="convert the function with autograph"):
        traced(np.ones(3))
