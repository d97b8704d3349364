"""converters/continue_statements.py: `continue` is removed by structuring
(the rest of the body moves into the other branch) where it can be, and
otherwise becomes the flag `continue_`, reset at the top of each iteration,
with the rest of the body under `if not continue_:`."""


import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

# Snippets -----------------------------------------------------------------

def structured_continue(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        total += x
    return total


def nested_continue(xs):
    total = 0
    for x in xs:
        if x < 0:
            if x < -5:
                continue
            x = -x
        total += x
    return total


def while_continue(n):
    i = 0
    odd = []
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odd.append(i)
    return odd


def tail_continue(xs):
    out = []
    for x in xs:
        out.append(x)
        continue
    return out


def continue_in_else_branch(xs):
    out = []
    for x in xs:
        if x > 0:
            out.append(x)
        else:
            continue
        out.append("after")
    return out


def continue_with_loop_else(xs):
    out = []
    for x in xs:
        if x % 2:
            continue
        out.append(x)
    else:
        out.append("else")
    return out


def continue_in_try(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                continue
            out.append(1 // x)
        except ZeroDivisionError:
            out.append("never")
        finally:
            out.append("f")
    return out


def continue_in_except(xs):
    out = []
    for x in xs:
        try:
            v = 10 // x
        except ZeroDivisionError:
            continue
        out.append(v)
    return out


def continue_in_inner_loop(rows):
    out = []
    for row in rows:
        for v in row:
            if v < 0:
                continue
            out.append(v)
        out.append("|")
    return out


def continue_logs_order(xs):
    for x in xs:
        log(("start", x))
        if x == 1:
            if log(("check", x)):
                continue
        log(("end", x))


def user_names_continue_(xs):
    continue_ = 0
    for x in xs:
        if x > 0:
            if x > 5:
                continue
            x = x * 2
        continue_ += x
    return continue_


BEHAVIOUR = [
    (structured_continue, [([1, -2, 3],), ([],), ([-1],)]),
    (nested_continue, [([1, -2, -7, 3],), ([],)]),
    (while_continue, [(0,), (5,)]),
    (tail_continue, [([1, 2],)]),
    (continue_in_else_branch, [([1, -1, 2],)]),
    (continue_with_loop_else, [([1, 2, 3, 4],), ([],)]),
    (continue_in_try, [([1, 0, 2],)]),
    (continue_in_except, [([1, 0, 5],)]),
    (continue_in_inner_loop, [([[1, -1, 2], [-3]],)]),
    (continue_logs_order, [([0, 1, 2],)]),
    (user_names_continue_, [([1, 7, -3],)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_structured_continue_needs_no_flag():
    lines = lines_of(structured_continue)
    assert "continue" not in lines
    assert not any("continue_" in line for line in lines)
    assert "total = ag__.if_stmt(x < 0, None, else_body, (total,), ('total',))" in lines


def test_tail_continue_is_dropped():
    lines = lines_of(tail_continue)
    assert "continue" not in lines
    assert not any("continue_" in line for line in lines)


def test_nested_continue_uses_a_flag_reset_each_iteration():
    code = autograph.to_code(nested_continue)
    lines = lines_of(nested_continue)
    assert "continue_ = False" in lines
    assert "continue_ = True" in lines
    assert "total = ag__.if_stmt(ag__.not_(continue_), if_body, None, (total,), ('total',))" in lines
    # the reset is the first statement of the loop body
    body = code[code.index("def loop_body("):].splitlines()
    assert body[1].strip() == "continue_ = False"
    # the flag does not survive an iteration: it is not loop state
    assert "'continue_')" not in next(line for line in lines if "ag__.for_stmt(" in line)


def test_continue_in_except_handler_stays_valid():
    lines = lines_of(continue_in_except)
    assert "continue" not in lines


def test_user_variable_named_continue_makes_flag_continue_1():
    lines = lines_of(user_names_continue_)
    assert "continue_ = 0" in lines
    assert "continue_1 = False" in lines
    assert "continue_1 = True" in lines
