"""The functions whose generated code `tests/test_golden.py` pins byte for
byte, one per converter or interaction of converters. The expected text of
`autograph.to_code(NAME)` is `tests/golden/NAME.txt`.

To accept an intended change of generated code:

    python -m tests.test_golden --update     # then read `git diff tests/golden`
"""

import numpy as np

import autograph


def helper(x):
    return x + 1


def if_else(x):
    if x > 0:
        x = x * x
    else:
        x = 0.0
    return x


def if_without_else(x, y):
    if x > y:
        x = y
    return x


def if_elif_else(x):
    if x > 10:
        label = "big"
    elif x > 0:
        label = "small"
    else:
        label = "negative"
    return label


def defined_in_one_branch(flag):
    if flag:
        y = 1
    return y


def while_loop(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def while_else(n):
    while n > 0:
        n -= 3
    else:
        n = -n
    return n


def for_loop(xs):
    total = 0
    for x in xs:
        total += x
    return total


def for_tuple_target(pairs):
    total = 0
    for i, (a, b) in enumerate(pairs):
        total += i * a - b
    return total


def for_break(xs, limit):
    found = -1
    for i, x in enumerate(xs):
        if x > limit:
            found = i
            break
    return found


def for_else(xs, target):
    for x in xs:
        if x == target:
            result = "found"
            break
    else:
        result = "missing"
    return result


def while_continue(n):
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        total += i
    return total


def return_in_loop(xs):
    for x in xs:
        if x < 0:
            return x
    return 0


def return_in_loop_else(xs, limit):
    # Only the loop's `else` returns: the loop itself has no `do_return` test.
    total = 0
    for x in xs:
        total += x
    else:
        if total > limit:
            return total
    return -total


def return_or_none(x):
    # Falling off the end returns None: that branch is kept, not passed as None.
    if x > 0:
        return x


def return_in_if(x):
    if x > 0:
        return x
    x = -x
    return x * 2


def nested_loops(n):
    count = 0
    for i in range(n):
        j = 0
        while j < i:
            count += j
            j += 1
    return count


def conditional_expression(x):
    return x if x > 0 else -x


def logical_operators(a, b, c):
    if a and not b or c:
        return a or b
    return a and c


def assert_statement(x):
    assert x > 0, f"x must be positive, got {x}"
    return x


def calls(x):
    y = helper(x)
    z = len([y, y])
    return np.sqrt(y) + z


def item_updates(x, i):
    out = np.zeros(3)
    out[i] = x
    out[0] += 1
    return out


def loop_options(x):
    while x > 1:
        autograph.set_loop_options(maximum_iterations=10)
        x = x / 2
    return x


def closure_in_loop(n):
    fns = []
    for i in range(n):
        fns.append(lambda: i)  # noqa: B023 - late binding is what this case pins
    return [f() for f in fns]


def lambda_function(x):
    return (lambda v: v if v > 0 else 0)(x)


def try_in_loop(xs):
    total = 0
    for x in xs:
        try:
            total += 10 // x
        except ZeroDivisionError:
            break
    return total


FUNCTIONS = [
    if_else, if_without_else, if_elif_else, defined_in_one_branch, while_loop, while_else, for_loop,
    for_tuple_target, for_break, for_else, while_continue, return_in_loop, return_in_loop_else, return_or_none,
    return_in_if, nested_loops,
    conditional_expression, logical_operators, assert_statement, calls, item_updates, loop_options,
    closure_in_loop, lambda_function, try_in_loop,
]
