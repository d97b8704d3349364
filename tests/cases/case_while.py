"""while loops, while/else, break/continue in while."""

from tests.cases import case, log


@case((5,), (0,), (1,))
def while_count(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s, i


@case((27,), (1,), (6,))
def while_collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@case((5,), (0,))
def while_else_no_break(n):
    i = 0
    while i < n:
        i += 1
    else:
        log("else", i)
    return i


@case((5,), (2,), (0,))
def while_else_with_break(n):
    i = 0
    while i < 4:
        if i == n:
            break
        i += 1
    else:
        return "no break", i
    return "break", i


@case((10,), (0,))
def while_continue(n):
    i = 0
    out = []
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        out.append(i)
    return out


@case((10,),)
def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


@case((3,), (0,))
def while_nested(n):
    out = []
    i = 0
    while i < n:
        j = 0
        while j < i:
            out.append((i, j))
            j += 1
        i += 1
    return out


@case((4,), (0,))
def while_nested_break_inner(n):
    out = []
    i = 0
    while i < n:
        j = 0
        while True:
            if j > i:
                break
            out.append(j)
            j += 1
        i += 1
    return out


@case((5,), (0,))
def while_return_inside(n):
    i = 0
    while i < 100:
        if i == n:
            return "found", i
        i += 1
    return "not found"


@case((3,), (0,))
def while_var_defined_inside_read_after(n):
    i = 0
    while i < n:
        last = i * 10
        i += 1
    return last


@case((3,), (0,))
def while_list_pop(n):
    stack = list(range(n))
    out = []
    while stack:
        out.append(stack.pop())
    return out


@case((3,), (0,))
def while_condition_side_effects(n):
    i = 0

    def test():
        log("test", i)
        return i < n

    while test():
        i += 1
    return i


@case((6,), (1,))
def while_else_continue_last(n):
    i = 0
    while i < n:
        i += 1
        if i % 2:
            continue
        log(i)
    else:
        log("else")
    return i


@case((8,), (3,))
def while_break_in_nested_if(n):
    i = 0
    while i < 10:
        if i > 2:
            if i == n:
                break
        i += 1
    else:
        i = -1
    return i


@case((3,), (5,))
def while_exception_propagates(n):
    i = 0
    while i < 10:
        if i == n:
            raise ValueError("boom at %d" % i)
        i += 1
    return i


@case((4,),)
def while_print(n):
    while n > 0:
        print("n =", n)
        n -= 1


@case((5,), (0,))
def while_multiple_state(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a, b


@case((5,), (0,))
def while_break_else_defines(n):
    i = 0
    while i < 3:
        if i == n:
            found = i
            break
        i += 1
    else:
        found = None
    return found


@case((3,), (0,))
def while_undefined_after_no_iteration(n):
    while n > 0:
        tmp = n
        n -= 1
    return tmp


@case((4,), (7,))
def while_continue_else(n):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i == 3:
            continue
        if i == 6:
            break
        total += i
    else:
        total = -total
    return total


@case((3,),)
def while_walrus_condition(n):
    data = list(range(n))
    out = []
    while (item := (data.pop() if data else None)) is not None:
        out.append(item)
    return out, item
