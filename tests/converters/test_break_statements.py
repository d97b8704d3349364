"""converters/break_statements.py: `break` becomes the flag `break_`, which
the loop's test checks (`while not break_ and test`, or the `for` loop's
extra test); a loop's `else` clause runs under `if not break_:`."""

import contextlib

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

# Snippets -----------------------------------------------------------------

def while_break_else(x):
    total = 0
    while x > 0:
        x -= 1
        if x == 3:
            break
        total += x
    else:
        total = -1
    return total


def for_break(xs, stop):
    seen = []
    for x in xs:
        if x == stop:
            break
        seen.append(x)
    return seen


def for_break_else(xs, stop):
    for x in xs:
        if x == stop:
            found = True
            break
    else:
        found = False
    return found


def for_else_without_break(xs):
    total = 0
    for x in xs:
        total += x
    else:
        total = -total
    return total


def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


def nested_loops_break_inner(rows):
    out = []
    for row in rows:
        for v in row:
            if v < 0:
                break
            out.append(v)
        out.append("|")
    return out


def break_deep_in_ifs(xs):
    total = 0
    for x in xs:
        if x > 0:
            if x > 10:
                break
            total += 1
        total += x
    return total


def break_and_continue(xs):
    out = []
    for x in xs:
        if x is None:
            continue
        if x < 0:
            break
        out.append(x)
    else:
        out.append("done")
    return out


def break_in_try(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                break
            out.append(10 // x)
        finally:
            out.append("f")
    return out


def break_in_with(xs):
    out = []
    for x in xs:
        with contextlib.suppress(ZeroDivisionError):
            if x == 2:
                break
            out.append(1 // x)
    return out


def break_consumes_no_extra_item(it):
    for x in it:
        if x == 2:
            break
    return x, next(it, "exhausted")


def walrus_test_with_else(values):
    it = iter(values)
    out = []
    while (n := next(it, None)) is not None:
        if n < 0:
            break
        out.append(n)
    else:
        out.append("else")
    return out


def loop_var_after_break(xs):
    for x in xs:
        if x > 2:
            break
    return x


def user_names_break_(xs):
    break_ = "user"
    for x in xs:
        if x:
            break
    return break_


def while_else_break_print(n):
    while n > 0:
        print("n", n)
        if n == 2:
            break
        n -= 1
    else:
        print("no break")
    return n


BEHAVIOUR = [
    (while_break_else, [(0,), (2,), (5,), (10,)]),
    (for_break, [([1, 2, 3, 4], 3), ([1, 2], 9), ([], 1)]),
    (for_break_else, [([1, 2, 3], 2), ([1, 2, 3], 7), ([], 0)]),
    (for_else_without_break, [([1, 2],), ([],)]),
    (while_true_break, [(1,), (4,)]),
    (nested_loops_break_inner, [([[1, 2, -1, 3], [4], [-5, 6]],), ([],)]),
    (break_deep_in_ifs, [([1, 2, 11, 3],), ([-1, 5],)]),
    (break_and_continue, [([1, None, 2, -1, 3],), ([1, None, 2],), ([],)]),
    (break_in_try, [([1, 2, 0, 3],), ([5],)]),
    (break_in_with, [([1, 0, 2, 3],), ([0, 1],)]),
    (walrus_test_with_else, [([1, 2, -1, 3],), ([1, 2],), ([],)]),
    (loop_var_after_break, [([1, 2, 3, 4],), ([1],), ([],)]),
    (user_names_break_, [([0, 1],)]),
    (while_else_break_print, [(3,), (1,), (0,)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_break_consumes_no_extra_item_from_an_iterator():
    assert break_consumes_no_extra_item(iter([1, 2, 3, 4])) == (2, 3)
    assert autograph.to_graph(break_consumes_no_extra_item)(iter([1, 2, 3, 4])) == (2, 3)


def test_while_break_shape():
    lines = lines_of(while_break_else)
    assert "break_ = False" in lines
    assert "return ag__.and_(ag__.not_(break_), lambda: x > 0, pure=True)" in lines
    assert "break_ = True" in lines
    assert "total = ag__.if_stmt(ag__.not_(break_), if_body, None, (total,), ('total',))" in lines
    assert not any(line == "break" for line in lines)


def test_for_break_uses_flag_as_extra_test():
    lines = lines_of(for_break)
    assert "break_ = False" in lines
    assert "return ag__.not_(break_)" in lines
    assert any(line.startswith("break_ = ag__.for_stmt(xs, extra_test, loop_body,")
               or (line.startswith("seen, break_ = ag__.for_stmt(xs, extra_test, loop_body,")) for line in lines), lines
    assert "break" not in lines


def test_loop_without_break_has_no_flag_and_else_runs_after():
    code = autograph.to_code(for_else_without_break)
    assert "break_" not in code
    lines = lines_of(for_else_without_break)
    index = next(i for i, line in enumerate(lines) if "ag__.for_stmt(" in line)
    assert lines[index + 1] == "total = -total"


def test_while_true_break_test_is_just_the_flag():
    lines = lines_of(while_true_break)
    assert "return ag__.not_(break_)" in lines


def test_inner_break_gets_its_own_flag_in_the_inner_loop():
    code = autograph.to_code(nested_loops_break_inner)
    assert "break_ = False" in code
    # the flag is reset for each outer iteration: it is set inside the outer body
    outer_body = code.index("def loop_body(")
    assert code.index("break_ = False") > outer_body


def test_user_variable_named_break_makes_flag_break_1():
    lines = lines_of(user_names_break_)
    assert "break_ = 'user'" in lines
    assert "break_1 = False" in lines
    assert "break_1 = True" in lines
    assert "break_ = True" not in lines
    assert autograph.to_graph(user_names_break_)([0, 1]) == "user"
