"""converters/conditional_expressions.py: `a if c else b` becomes
`ag__.if_exp(c, lambda: a, lambda: b)`; only the chosen operand is
evaluated; operands with walrus stay Python."""

import re

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

# Snippets -----------------------------------------------------------------

def simple(x):
    y = 1 if x > 0 else 2
    return y


def returns_ifexp(x):
    return "pos" if x > 0 else "non-pos"


def nested(x):
    return "big" if x > 10 else "mid" if x > 3 else "small"


def logged(c):
    return log("then") if log(c) else log("else")


def only_chosen_raises(c, d):
    return d["k"] if c else 0


def ifexp_in_loop(xs):
    out = []
    for x in xs:
        out.append(x if x % 2 else -x)
    return out


def ifexp_with_logical(a, b):
    return (a and b) if a or b else not a


def walrus_operand(x):
    r = (y := x + 1) if x else 0  # noqa: F841
    return r, x


def walrus_in_test(x):
    r = "a" if (y := x * 2) > 2 else "b"
    return r, y


def ifexp_reads_maybe_unbound(x):
    if x > 5:
        z = x
    return z if x > 0 else -1


def ifexp_in_lambda_default(x):
    f = lambda v=(1 if x else 2): v  # noqa: E731
    return f()


BEHAVIOUR = [
    (simple, [(1,), (0,), (-1,)]),
    (returns_ifexp, [(1,), (0,)]),
    (nested, [(11,), (5,), (0,)]),
    (logged, [(1,), (0,), ("",)]),
    (only_chosen_raises, [(0, {}), (1, {}), (1, {"k": 3})]),
    (ifexp_in_loop, [([1, 2, 3, 4],), ([],)]),
    (ifexp_with_logical, [(1, 2), (0, 2), (0, 0), (1, 0)]),
    (walrus_operand, [(0,), (3,)]),
    (walrus_in_test, [(0,), (3,)]),
    (ifexp_reads_maybe_unbound, [(6,), (3,), (-1,)]),
    (ifexp_in_lambda_default, [(0,), (1,)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_only_the_chosen_operand_runs_after_the_test():
    converted = autograph.to_graph(logged)
    del LOG[:]
    assert converted(1) == "then"
    assert LOG == [1, "then"]
    del LOG[:]
    assert converted(0) == "else"
    assert LOG == [0, "else"]


SHAPES = [
    (simple, "y = ag__.if_exp(x > 0, lambda: 1, lambda: 2)"),
    (returns_ifexp, "return ag__.if_exp(x > 0, lambda: 'pos', lambda: 'non-pos')"),
    (nested, "return ag__.if_exp(x > 10, lambda: 'big', lambda: ag__.if_exp(x > 3, lambda: 'mid', lambda: 'small'))"),
    (ifexp_with_logical,
     "return ag__.if_exp(ag__.or_(a, lambda: b, pure=True), lambda: ag__.and_(a, lambda: b, pure=True), "
     "lambda: ag__.not_(a))"),
    (walrus_in_test, "r = ag__.if_exp((y := (x * 2)) > 2, lambda: 'a', lambda: 'b')"),
]


@pytest.mark.parametrize("fn,line", SHAPES, ids=[f.__name__ for f, _ in SHAPES])
def test_generated_line(fn, line):
    assert line in lines_of(fn)


def test_walrus_operand_stays_python():
    code = autograph.to_code(walrus_operand)
    assert "ag__.if_exp" not in code
    assert "r = (y := (x + 1)) if x else 0" in lines_of(walrus_operand)


def test_maybe_unbound_read_in_operand_is_checked():
    code = autograph.to_code(ifexp_reads_maybe_unbound)
    assert code.count("ag__.Undefined('z')") == 1
    assert re.search(r"lambda: ag__\.ld\w*\(z\)", code), code
    with pytest.raises(UnboundLocalError, match="'z'"):
        autograph.to_graph(ifexp_reads_maybe_unbound)(3)
