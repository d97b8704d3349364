"""converters/directives.py: `autograph.set_loop_options(...)` written in a
loop is removed from the body and its keywords become the options dict, the
last argument of `ag__.while_stmt` / `ag__.for_stmt`; Python execution is
unchanged."""

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph
from autograph import set_loop_options

# Snippets -----------------------------------------------------------------

def while_with_options(x):
    while x > 0:
        autograph.set_loop_options(maximum_iterations=10)
        x -= 1
    return x


def for_with_options(xs):
    total = 0
    for x in xs:
        set_loop_options(parallel_iterations=4, swap_memory=True)
        total += x
    return total


def directive_not_first(n):
    i = 0
    while i < n:
        i += 1
        autograph.set_loop_options(maximum_iterations=n)
    return i


def two_directives(n):
    i = 0
    while i < n:
        autograph.set_loop_options(maximum_iterations=100)
        autograph.set_loop_options(shape_invariants=[])
        i += 1
    return i


def only_a_directive(xs):
    for x in xs:
        autograph.set_loop_options(maximum_iterations=3)
    return len(xs)


def nested_loop_options(n):
    total = 0
    for i in range(n):
        autograph.set_loop_options(maximum_iterations=5)
        j = 0
        while j < i:
            autograph.set_loop_options(maximum_iterations=7)
            j += 1
            total += j
    return total


def options_value_from_variable(xs, limit):
    out = []
    for x in xs:
        autograph.set_loop_options(maximum_iterations=limit)
        out.append(x)
    return out


def directive_outside_loop(x):
    autograph.set_loop_options(maximum_iterations=3)
    return x


BEHAVIOUR = [
    (while_with_options, [(0,), (5,), (20,)]),
    (for_with_options, [([1, 2, 3],), ([],)]),
    (directive_not_first, [(3,), (0,)]),
    (two_directives, [(4,)]),
    (only_a_directive, [([1, 2],), ([],)]),
    (nested_loop_options, [(4,), (0,)]),
    (options_value_from_variable, [([1, 2], 1)]),
    (directive_outside_loop, [(1,)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


SHAPES = [
    (while_with_options, "x = ag__.while_stmt(loop_test, loop_body, (x,), ('x',), {'maximum_iterations': 10})"),
    (for_with_options,
     "total = ag__.for_stmt(xs, None, loop_body, (total,), ('total',), "
     "{'parallel_iterations': 4, 'swap_memory': True})"),
    (directive_not_first, "i = ag__.while_stmt(loop_test, loop_body, (i,), ('i',), {'maximum_iterations': n})"),
    (two_directives,
     "i = ag__.while_stmt(loop_test, loop_body, (i,), ('i',), {'maximum_iterations': 100, 'shape_invariants': []})"),
    (only_a_directive, "ag__.for_stmt(xs, None, loop_body, (), (), {'maximum_iterations': 3})"),
    (options_value_from_variable, "ag__.for_stmt(xs, None, loop_body, (), (), {'maximum_iterations': limit})"),
]


@pytest.mark.parametrize("fn,line", SHAPES, ids=[f.__name__ for f, _ in SHAPES])
def test_generated_line(fn, line):
    assert line in lines_of(fn)


@pytest.mark.parametrize("fn", [while_with_options, for_with_options, directive_not_first, two_directives,
                                only_a_directive, nested_loop_options, options_value_from_variable],
                         ids=lambda f: f.__name__)
def test_directive_is_removed_from_the_loop_body(fn):
    assert "set_loop_options" not in autograph.to_code(fn)


def test_nested_loops_keep_their_own_options():
    code = autograph.to_code(nested_loop_options)
    assert "('total', 'j'), {'maximum_iterations': 7})" in code
    assert "{'maximum_iterations': 5})" in code
    assert code.index("{'maximum_iterations': 7}") < code.index("{'maximum_iterations': 5}")


def test_directive_outside_a_loop_stays_a_call():
    assert "set_loop_options" in autograph.to_code(directive_outside_loop)


def test_directive_has_no_effect_on_python_execution():
    assert autograph.set_loop_options(maximum_iterations=1) is None
    assert autograph.to_graph(while_with_options)(50) == 0
