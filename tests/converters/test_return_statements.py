"""converters/return_statements.py: returns in tail position stay returns
(an `if` whose branches return becomes `return ag__.if_stmt(...)`); other
returns become the flag `do_return` and the value `retval`, with later
statements guarded and loops stopped when the flag is set."""

import contextlib

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

# Snippets -----------------------------------------------------------------

def structured(x):
    if x < 0:
        return -x
    y = x * 2
    return y


def if_else_both_return(x):
    if x > 0:
        return "pos"
    else:
        return "non-pos"


def elif_returns(x):
    if x > 10:
        return "big"
    elif x > 0:
        return "small"
    return "none"


def return_in_for(xs):
    for x in xs:
        if x > 3:
            return x
    return -1


def return_in_while(n):
    i = 0
    while i < n:
        if i * i > n:
            return i
        i += 1
    return None


def return_in_nested_loops(rows):
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if v == 0:
                return i, j
    return None


def return_with_loop_else(xs):
    for x in xs:
        if x < 0:
            return "negative"
    else:
        log("else")
    return "all non-negative"


def implicit_none(x):
    if x:
        log("side")
        return
    log("after")


def no_return_at_all(x):
    log(x)


def return_then_more_statements(x):
    if x > 0:
        log("pos")
        if x > 5:
            return "big"
        log("not big")
    log("end")
    return "done"


def return_in_try_finally(x):
    try:
        if x:
            return "try"
        log("no return")
    finally:
        log("finally")
    return "after"


def return_in_with(xs):
    with contextlib.suppress(KeyError):
        for x in xs:
            if x == 2:
                return "found"
    return "missing"


def return_evaluation_order(xs):
    for x in xs:
        if x:
            return log(("ret", x))
        log(("skip", x))
    return log("end")


def user_names_do_return(xs):
    do_return = "user"
    retval = "user too"
    for x in xs:
        if x:
            return do_return, retval, x
    return None


def plain_function(x):
    y = x + 1
    return y


def finally_always_returns(x):
    y = 0
    try:
        if x > 2:
            raise ValueError("swallowed by the return in finally")
        y = x * 2
    finally:
        return y - x  # noqa: B012 - the construct under test


def finally_returns_what_the_try_computed(x):
    try:
        y = x * 2
        if y > 3:
            y = y - 10
    finally:
        return y + 1  # noqa: B012 - the construct under test


def finally_overrides_the_try_return(x):
    try:
        return x + 1
    finally:
        if x > 2:
            return 0  # noqa: B012 - the construct under test
        else:
            return x * 10


def finally_returns_inside_a_returning_branch(x):
    if x > 0:
        try:
            1 // (x - 1)
        finally:
            if x > 5:
                return "big"  # noqa: B012 - the construct under test
            return "small"  # noqa: B012 - the construct under test
    return "non-positive"


def return_in_loop_else_only(xs, limit):
    total = 0
    for x in xs:
        total += x
    else:
        if total > limit:
            return total
    while total > limit:
        total -= 1
    else:
        if total < 0:
            return -1
    return -total


BEHAVIOUR = [
    (return_in_loop_else_only, [([1, 2], 2), ([1, 2], 5), ([], -1), ([-3], -5)]),
    (structured, [(-2,), (3,), (0,)]),
    (if_else_both_return, [(1,), (0,)]),
    (elif_returns, [(11,), (5,), (0,)]),
    (return_in_for, [([1, 5, 2],), ([1, 2],), ([],)]),
    (return_in_while, [(0,), (10,), (1,)]),
    (return_in_nested_loops, [([[1, 2], [3, 0]],), ([[1]],)]),
    (return_with_loop_else, [([1, -1],), ([1, 2],), ([],)]),
    (implicit_none, [(1,), (0,)]),
    (no_return_at_all, [(1,)]),
    (return_then_more_statements, [(1,), (6,), (0,)]),
    (return_in_try_finally, [(1,), (0,)]),
    (return_in_with, [([1, 2, 3],), ([1],)]),
    (return_evaluation_order, [([0, 0, 3, 4],), ([],)]),
    (user_names_do_return, [([0, 1],), ([],)]),
    (finally_always_returns, [(1,), (3,)]),
    (finally_returns_what_the_try_computed, [(1,), (3,)]),
    (finally_overrides_the_try_return, [(1,), (3,)]),
    (finally_returns_inside_a_returning_branch, [(1,), (7,), (2,), (-1,)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_structured_return_becomes_return_if_stmt():
    lines = lines_of(structured)
    assert "return ag__.if_stmt(x < 0, if_body, else_body, (), ('return',))" in lines
    assert "return -x" in lines
    code = autograph.to_code(structured)
    assert "do_return" not in code and "retval" not in code


def test_if_else_both_return_shape():
    lines = lines_of(if_else_both_return)
    assert "return ag__.if_stmt(x > 0, if_body, else_body, (), ('return',))" in lines
    assert "return 'pos'" in lines and "return 'non-pos'" in lines


def test_elif_chain_of_returns_is_nested_structured_returns():
    code = autograph.to_code(elif_returns)
    assert "do_return" not in code
    assert code.count("('return',))") == 2


def test_return_in_loop_uses_flag_and_value():
    lines = lines_of(return_in_for)
    assert lines[1] == "do_return = False"
    assert lines[2].startswith("retval = ")  # the "no return yet" value
    assert "do_return = True" in lines
    assert "retval = x" in lines
    assert "return ag__.not_(do_return)" in lines
    assert lines[-1] in ("return retval", "return ag__.return_value(retval)")
    assert any(line.startswith("do_return, retval = ag__.for_stmt(xs, extra_test, loop_body,") for line in lines)
    assert any(line.startswith("retval = ag__.if_stmt(ag__.not_(do_return),") for line in lines)


def test_return_in_while_stops_the_loop():
    lines = lines_of(return_in_while)
    assert "return ag__.and_(ag__.not_(do_return), lambda: i < n, pure=True)" in lines


def test_a_return_in_a_loop_else_only_does_not_stop_the_loop():
    # The loop cannot return from its body: it has no `do_return` test
    # (no extra test for the `for`, the `while` test unchanged).
    lines = lines_of(return_in_loop_else_only)
    assert "extra_test" not in autograph.to_code(return_in_loop_else_only)
    assert any(line.startswith("total = ag__.for_stmt(xs, None, loop_body,") for line in lines)
    assert "return total > limit" in lines


def test_function_without_nested_returns_is_untouched():
    code = autograph.to_code(plain_function)
    assert "do_return" not in code and "retval" not in code
    assert [line for line in lines_of(plain_function) if line] == ["def plain_function(x):", "y = x + 1", "return y"]


def test_dead_flag_before_last_return_is_dropped():
    lines = lines_of(return_in_for)
    # `do_return = True` for the final `return -1` is read by nothing.
    assert lines.count("do_return = True") == 1


def test_user_variables_named_like_flags_get_fresh_flag_names():
    lines = lines_of(user_names_do_return)
    assert "do_return = 'user'" in lines
    assert "retval = 'user too'" in lines
    assert "do_return_1 = False" in lines
    assert any(line.startswith("retval_1 = ") for line in lines)
    assert lines[-1] in ("return retval_1", "return ag__.return_value(retval_1)")
    assert "do_return = True" not in lines and "retval = x" not in lines


# A `return` inside `finally` swallows the exception in flight. It stays a
# real return when every path through the clause returns and the function
# needs no return flag; otherwise the function is not converted, and the
# error says why.

def finally_returns_on_one_path(x):
    try:
        y = 10 // x
    finally:
        if x > 2:
            return 0  # noqa: B012 - the construct under test
    return y


def finally_return_with_a_return_in_a_loop(xs):
    for x in xs:
        if x > 3:
            return x
    try:
        pass
    finally:
        return -1  # noqa: B012 - the construct under test


@pytest.mark.parametrize("fn", [finally_returns_on_one_path, finally_return_with_a_return_in_a_loop])
def test_return_in_finally_that_needs_a_flag_is_refused_with_the_reason(fn):
    with pytest.raises(autograph.ConversionError) as info:
        autograph.to_code(fn)
    message = str(info.value)
    assert message.startswith(f"cannot convert {fn.__name__} ({__file__}:")
    assert "a `return` inside a `finally` clause swallows the exception in flight" in message
    assert "Make every path through the `finally` clause return, or move the `return` after the try" in message


def test_return_in_finally_stays_a_return():
    lines = lines_of(finally_overrides_the_try_return)
    assert "return x + 1" in lines
    assert "return ag__.if_stmt(x > 2, if_body, else_body, (), ('return',))" in lines


# Traced: a `raise` in a staged branch raises while tracing, and a `return`
# in `finally` swallows it as Python would (converted or not), so the traced
# cases raise nothing.
@pytest.mark.parametrize("x", [1.0, 3.0, 0.0])
def test_return_in_finally_traced(x):
    import numpy as np

    for fn in (finally_returns_what_the_try_computed, finally_overrides_the_try_return):
        traced = autograph.function(fn)
        assert traced(np.float64(x)) == fn(x)
        assert traced.get_concrete_function(np.float64(x)).graph.count_nodes("cond") == 1


def test_return_in_finally_under_jax_jit():
    jax = pytest.importorskip("jax")
    for fn in (finally_returns_what_the_try_computed, finally_overrides_the_try_return):
        jitted = jax.jit(autograph.to_graph(fn))
        for x in (1.0, 3.0):
            assert float(jitted(x)) == fn(x)
