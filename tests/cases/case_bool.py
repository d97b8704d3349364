"""and / or / not with side effects and short-circuiting; assert."""

from tests.cases import case, log


def t(name, value):
    log(name, value)
    return value


@case((0, 0), (0, 1), (1, 0), (1, 1))
def and_short_circuit(a, b):
    return t("a", a) and t("b", b)


@case((0, 0), (0, 1), (1, 0), (1, 1))
def or_short_circuit(a, b):
    return t("a", a) or t("b", b)


@case((0, 0, 0), (1, 1, 0), (1, 0, 1), (0, 1, 1))
def and_or_mix(a, b, c):
    return t("a", a) and t("b", b) or t("c", c)


@case((0,), (1,), ([],), ("x",))
def not_value(a):
    return not t("a", a)


@case((1, 2), (0, 2), ("", "y"), ([], None))
def and_returns_operand(a, b):
    return (a and b), (a or b)


@case((1, 2, 3), (0, 2, 3), (1, 0, 3), (1, 2, 0))
def and_in_if(a, b, c):
    if t("a", a) and t("b", b) and t("c", c):
        return "all"
    return "not all"


@case((1, 2, 3), (0, 0, 0), (0, 0, 5))
def or_in_while(a, b, c):
    i = 0
    while t("i", i) < 2 or t("a", a) == 99:
        i += 1
    return i


@case((1, 0), (0, 1), (0, 0))
def not_in_if(a, b):
    if not t("a", a) and not t("b", b):
        return "neither"
    return "some"


@case((None,), ([1],), ([],))
def and_guard_attribute(xs):
    return xs is not None and len(xs) > 0 and xs[0]


@case((0,), (5,))
def or_default(v):
    return v or "default"


@case((3,), (-3,))
def assert_pass_fail(x):
    assert x > 0
    return x


@case((3,), (-3,))
def assert_with_message(x):
    assert x > 0, f"x must be positive, got {x}"
    return x


@case((3,), (-3,))
def assert_message_side_effect(x):
    assert t("cond", x > 0), t("msg", "bad")
    return x


@case((3,),)
def assert_in_loop(n):
    for i in range(n + 2):
        assert i < n, ("too big", i)
    return n


@case((1,), (0,))
def assert_with_non_string_message(x):
    assert x, {"x": x}


@case((2, 3), (0, 3), (2, 0))
def boolop_in_comprehension(a, b):
    return [v for v in range(5) if t("v", v) and (v % 2 or a) and b]


@case((1, 2), (0, 0))
def nested_not(a, b):
    return not (not a or not b), not not a


@case((1, 2),)
def boolop_lambda(a, b):
    f = lambda x, y: x and y or "neither"  # noqa: E731
    return f(a, b), f(0, b), f(a, 0)


@case((1,), (0,))
def ternary_with_boolops(a):
    return t("yes", 1) if t("a", a) and t("t", True) else t("no", 0)


@case((3,),)
def chained_comparison_side_effects(n):
    return t("x", 1) < t("y", n) < t("z", 2)


@case((1,), (0,))
def bool_of_custom_object(n):
    class B:
        def __bool__(self):
            log("bool called")
            return bool(n)

    b = B()
    if b:
        r = "true"
    else:
        r = "false"
    return r, (b and "and") == "and", (b or "or") == "or", (not b)


@case((1,), (0,))
def bool_raising_in_condition(n):
    class B:
        def __bool__(self):
            raise RuntimeError("no bool")

    if n:
        return B() and 1
    while B():
        pass
