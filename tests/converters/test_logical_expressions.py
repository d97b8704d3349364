"""converters/logical_expressions.py: `and`, `or`, `not` become
`ag__.and_`, `ag__.or_`, `ag__.not_`; later operands are lambdas so that
short-circuiting and evaluation order stay Python's; operands that bind
names (walrus) stay Python."""


import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

# Snippets -----------------------------------------------------------------

def and3(a, b, c):
    return a and b and c


def or2(a, b):
    return a or b


def not1(a):
    return not a


def and_or_mixed(a, b, c):
    return a and b or c


def not_of_and(a, b):
    return not (a and b)


def and_logged(a, b, c):
    return log(a) and log(b) and log(c)


def or_logged(a, b, c):
    return log(a) or log(b) or log(c)


def or_raises_only_if_reached(a, d):
    return a or d["missing"]


def and_raises_only_if_reached(a, d):
    return a and d["missing"]


def nested_logged(a, b, c, d):
    return (log(a) or log(b)) and (log(c) or log(d))


def logical_in_if(a, b):
    if a and not b:
        r = "a-not-b"
    elif a or b:
        r = "some"
    else:
        r = "none"
    return r


def logical_in_while(xs):
    i = 0
    while i < len(xs) and xs[i] > 0:
        i += 1
    return i


def walrus_second_operand(a):
    r = a and (b := a + 1)
    return r, b if a else None


def walrus_first_operand(a):
    r = (b := a * 2) or 7
    return r, b


def walrus_in_if_test(xs):
    if (n := len(xs)) and (m := n * 2):
        return m
    return 0


def not_in_loop(xs):
    count = 0
    for x in xs:
        if not x:
            count += 1
    return count


def lambda_captures(a, b):
    f = lambda: a and b  # noqa: E731
    return f()


BEHAVIOUR = [
    (and3, [(1, 2, 3), (0, 2, 3), (1, "", 3), (1, 2, 0), ([], 0, 1), (1, 2, None)]),
    (or2, [(0, 5), ("", []), ([], ""), (3, 0), (None, 0.0)]),
    (not1, [(0,), (1,), ([],), ([0],), (None,), ("x",)]),
    (and_or_mixed, [(1, 2, 3), (0, 2, 3), (1, 0, 3), (0, 0, 0), (1, [], "c")]),
    (not_of_and, [(1, 1), (1, 0), (0, 1)]),
    (and_logged, [(1, 2, 3), (0, 2, 3), (1, 0, 3), (1, 2, 0)]),
    (or_logged, [(0, 0, 0), (1, 0, 0), (0, 2, 0), (0, 0, 3)]),
    (or_raises_only_if_reached, [(1, {}), (0, {}), (0, {"missing": 4})]),
    (and_raises_only_if_reached, [(0, {}), (1, {}), (1, {"missing": 4})]),
    (nested_logged, [(0, 0, 0, 0), (1, 0, 0, 1), (0, 1, 1, 0), (0, 0, 1, 1)]),
    (logical_in_if, [(1, 0), (1, 1), (0, 1), (0, 0)]),
    (logical_in_while, [([],), ([1, 2, 0, 3],), ([1, 2],), ([-1],)]),
    (walrus_second_operand, [(0,), (1,), (5,)]),
    (walrus_first_operand, [(0,), (2,)]),
    (walrus_in_if_test, [([],), ([1, 2],)]),
    (not_in_loop, [([0, 1, "", None, 3],), ([],)]),
    (lambda_captures, [(1, 2), (0, 2)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_and_evaluation_order_and_short_circuit_log():
    converted = autograph.to_graph(and_logged)
    del LOG[:]
    assert converted(1, 0, 3) == 0
    assert LOG == [1, 0]
    del LOG[:]
    assert converted(1, 2, 3) == 3
    assert LOG == [1, 2, 3]


def test_or_evaluation_order_and_short_circuit_log():
    converted = autograph.to_graph(or_logged)
    del LOG[:]
    assert converted(0, 5, 6) == 5
    assert LOG == [0, 5]


def test_and_or_return_operands_not_booleans():
    assert autograph.to_graph(and3)(1, [], 3) == []
    assert autograph.to_graph(or2)(0, "x") == "x"
    assert autograph.to_graph(not1)([]) is True


# Shape of the generated code ---------------------------------------------

SHAPES = [
    (and3, "return ag__.and_(a, lambda: b, lambda: c, pure=True)"),
    (or2, "return ag__.or_(a, lambda: b, pure=True)"),
    (not1, "return ag__.not_(a)"),
    (and_or_mixed, "return ag__.or_(ag__.and_(a, lambda: b, pure=True), lambda: c, pure=True)"),
    (not_of_and, "return ag__.not_(ag__.and_(a, lambda: b, pure=True))"),
    (and_logged, "return ag__.and_(ag__.call(log)(a), lambda: ag__.call(log)(b), lambda: ag__.call(log)(c))"),
    (lambda_captures, "f = lambda: ag__.and_(a, lambda: b, pure=True)"),
]


@pytest.mark.parametrize("fn,line", SHAPES, ids=[f.__name__ for f, _ in SHAPES])
def test_generated_line(fn, line):
    assert line in lines_of(fn)


def test_walrus_operand_stays_python():
    code = autograph.to_code(walrus_second_operand)
    assert "r = a and (b := (a + 1))" in code
    assert "ag__.and_" not in code


def test_walrus_in_first_operand_is_evaluated_eagerly_not_in_a_lambda():
    # The first operand is evaluated before the operator call, as in Python,
    # so a walrus there may stay where it is; it must never move into a lambda.
    code = autograph.to_code(walrus_first_operand)
    assert "lambda: (b :=" not in code
    assert "(b := (a * 2))" in code


def test_walrus_in_if_test_stays_python_and_works():
    code = autograph.to_code(walrus_in_if_test)
    assert "ag__.and_" not in code
    assert "(n := ag__.call(len)(xs)) and (m := (n * 2))" in code
    assert autograph.to_graph(walrus_in_if_test)([1, 2, 3]) == 6


def test_logical_in_while_test_is_converted():
    code = autograph.to_code(logical_in_while)
    assert "return ag__.and_(i < ag__.call(len)(xs), lambda: xs[i] > 0)" in [
        line.strip() for line in code.splitlines()]


# pure=True: later operands that only compare names and constants ------------

def pure_operands(a, b, c):
    return a and b < 3, a or b is None, a and not b, a and (b == c) != (c >= 1.5), a or "text"


def impure_operands(a, b, c):
    return (a and b.c, a and b[0], a and b + 1 < 3, a and len(b), a or b in c, a and b < 3 < c,
            a and (b and c))


def test_pure_later_operands_are_marked():
    code = autograph.to_code(pure_operands)
    assert code.count("pure=True") == 5, code


def test_impure_later_operands_are_not_marked():
    # An attribute, a subscript, arithmetic, a call, `in` (which iterates), a
    # chained comparison (an operator call) and a nested `and` (a call).
    code = autograph.to_code(impure_operands)
    assert code.count("pure=True") == 1 and "ag__.and_(b, lambda: c, pure=True)" in code, code  # the inner `and`


@pytest.mark.parametrize("args", [(1, 2, 3), (0, 2, 3), (1, None, 1), (1, 5, 5), ("", 0, 2.0), ([], 1.5, 1.5)])
def test_pure_operands_keep_python_values(args):
    assert_same_behaviour(pure_operands, [args])
