"""The generated code of `tests/golden/functions.py`, pinned byte for byte
(gast's style: a table of inputs and their exact expected text).

An intended change of generated code is accepted with

    python -m tests.test_golden --update

which rewrites `tests/golden/NAME.txt`; read `git diff tests/golden` before
committing it.
"""

import os
import sys

import pytest

import autograph
from tests.golden.functions import FUNCTIONS

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def _path(function):
    return os.path.join(GOLDEN, function.__name__ + ".txt")


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_generated_code_is_pinned(function):
    with open(_path(function), encoding="utf-8") as f:
        expected = f.read()
    assert autograph.to_code(function) == expected, (
        f"the generated code of {function.__name__} changed; if that is intended, run "
        "`python -m tests.test_golden --update` and read the diff")


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_pinned_code_runs_as_the_original(function):
    # The text pinned is the text to_code shows; it must not drift from the
    # code that runs, which is checked against the original here.
    args = {
        "if_else": [(2.0,), (-1.0,)], "if_without_else": [(3, 1), (1, 3)], "if_elif_else": [(11,), (5,), (-2,)],
        "defined_in_one_branch": [(True,)], "while_loop": [(27,)], "while_else": [(10,)],
        "for_loop": [([1, 2, 3],)], "for_tuple_target": [([(1, 2), (3, 4)],)], "for_break": [([1, 5, 9], 4)],
        "for_else": [([1, 2], 2), ([1, 2], 3)], "while_continue": [(10,)], "return_in_loop": [([3, -4, 5],), ([1],)],
        "return_in_loop_else": [([1, 2], 2), ([1, 2], 5)], "return_or_none": [(1,), (-1,)],
        "return_in_if": [(2,), (-2,)], "nested_loops": [(5,)], "conditional_expression": [(-3,)],
        "logical_operators": [(1, 0, 0), (0, 1, 1), (1, 1, 0)], "assert_statement": [(1,)], "calls": [(3.0,)],
        "item_updates": [(5.0, 2)], "loop_options": [(100.0,)], "closure_in_loop": [(3,)],
        "lambda_function": [(-1,), (2,)], "try_in_loop": [([1, 2, 0, 5],)],
    }[function.__name__]
    converted = autograph.to_graph(function)
    for a in args:
        expected, got = function(*a), converted(*a)
        assert repr(got) == repr(expected), (function.__name__, a)


def update():
    for function in FUNCTIONS:
        with open(_path(function), "w", encoding="utf-8") as f:
            f.write(autograph.to_code(function))
    print(f"wrote {len(FUNCTIONS)} files in {os.path.relpath(GOLDEN)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python -m tests.test_golden --update")
    update()
