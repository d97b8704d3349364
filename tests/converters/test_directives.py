"""converters/directives.py: `autograph.set_loop_options(...)` written in a
loop is removed from the body and its keywords become the options dict, the
last argument of `ag__.while_stmt` / `ag__.for_stmt`; Python execution is
unchanged."""

import inspect

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


def shape_invariants_by_name(x):
    y = x[:1]
    while x.sum() > 0:
        autograph.set_loop_options(shape_invariants=[(y, (None,))], maximum_iterations=3)
        y = y + 1
        x = x - 1
    return y


def test_shape_invariants_name_their_variables():
    assert ("{'shape_invariants': [('y', (None,))], 'maximum_iterations': 3})"
            in autograph.to_code(shape_invariants_by_name))


def misspelled_option(x):
    while x > 0:
        autograph.set_loop_options(maximum_iteration=3)
        x -= 1
    return x


def positional_option(x):
    while x > 0:
        autograph.set_loop_options(3)
        x -= 1
    return x


def options_from_a_dict(x, options):
    while x > 0:
        autograph.set_loop_options(**options)
        x -= 1
    return x


def invariants_not_written_out(x, invariants):
    while x > 0:
        autograph.set_loop_options(shape_invariants=invariants)
        x -= 1
    return x


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


OPTIONS = "maximum_iterations, shape_invariants, parallel_iterations, swap_memory, unroll"


@pytest.mark.parametrize("fn, words", [
    (misspelled_option, f"set_loop_options() has no option 'maximum_iteration'; its options are {OPTIONS}"),
    (positional_option, "set_loop_options() takes its options by name (set_loop_options(maximum_iterations=10))"),
    (options_from_a_dict, "set_loop_options(**...) cannot be converted: write each option by name in the call"),
    (invariants_not_written_out, "set_loop_options(shape_invariants=...) takes a list of (variable, shape) "
                                 "pairs written in the call, such as [(y, (None,))]"),
], ids=lambda f: getattr(f, "__name__", ""))
def test_directive_errors_name_the_line(fn, words):
    with pytest.raises(autograph.ConversionError) as info:
        autograph.to_code(fn)
    where = f"{__file__}:{_line(fn, 'set_loop_options(')}"
    assert str(info.value) == f"cannot convert {fn.__qualname__} ({where}): {words}"


def test_an_unknown_option_is_an_error_when_the_code_runs_unconverted_too():
    with pytest.raises(TypeError) as info:
        misspelled_option(2)
    where = f"{__file__}:{_line(misspelled_option, 'set_loop_options(')}"
    assert str(info.value) == \
        f"set_loop_options() has no option 'maximum_iteration'; its options are {OPTIONS} ({where})"
    with pytest.raises(autograph.ConversionError, match="has no option 'maximum_iteration'"):
        autograph.to_graph(misspelled_option, strict=True)
