"""break/continue/return interacting with loops, try/finally and with."""

from tests.cases import case, log


class Recorder:
    def __init__(self, name, suppress=False):
        self.name = name
        self.suppress = suppress

    def __enter__(self):
        log("enter", self.name)
        return self

    def __exit__(self, typ, val, tb):
        log("exit", self.name, typ.__name__ if typ else None)
        return self.suppress


@case((3,), (0,), (10,))
def return_in_nested_loops(n):
    for i in range(5):
        j = 0
        while j < 5:
            if i * j == n:
                return (i, j)
            j += 1
    return None


@case((2,), (7,))
def return_in_try_finally_in_loop(n):
    for i in range(5):
        try:
            if i == n:
                return i
        finally:
            log("finally", i)
    return -1


@case((2,), (7,))
def break_in_try_finally(n):
    for i in range(5):
        try:
            if i == n:
                break
            log("body", i)
        finally:
            log("finally", i)
    return i


@case((2,), (7,))
def continue_in_try_finally(n):
    out = []
    for i in range(4):
        try:
            if i == n:
                continue
            out.append(i)
        finally:
            out.append(-i)
    return out


@case((1,), (5,))
def return_in_with_in_loop(n):
    for i in range(3):
        with Recorder(i):
            if i == n:
                return "returned", i
    return "done"


@case((1,), (5,))
def break_in_with_in_loop(n):
    for i in range(3):
        with Recorder(i):
            if i == n:
                break
            log("body", i)
    return i


@case((1,), (5,))
def continue_in_with_in_while(n):
    i = 0
    while i < 3:
        i += 1
        with Recorder(i):
            if i == n:
                continue
            log("after", i)
    return i


@case((1,),)
def finally_overrides_return(n):
    for i in range(3):
        try:
            return "try"
        finally:
            if n:
                return "finally"


@case((1,), (0,))
def finally_swallow_with_break(n):
    for i in range(3):
        try:
            raise ValueError("x")
        finally:
            if n:
                break
    return "after"


@case((3,), (0,))
def return_none_explicit(n):
    for i in range(n):
        if i == 1:
            return
    return "end"


@case((4,),)
def continue_then_break(n):
    out = []
    for i in range(n * 3):
        if i % 2 == 0:
            continue
        if i > n:
            break
        out.append(i)
    return out


@case((2,), (3,))
def return_inside_while_else(n):
    i = 0
    while i < n:
        i += 1
    else:
        if i == 2:
            return "else-return"
    return "end"


@case((2,), (3,))
def return_from_for_else(n):
    for i in range(n):
        pass
    else:
        return "else", i
    return "never"


@case((5,),)
def break_inside_nested_while_only_inner(n):
    out = []
    for i in range(3):
        k = 0
        while True:
            k += 1
            if k >= n:
                break
        out.append(k + i)
    return out


@case((1,), (0,))
def return_in_except(n):
    for i in range(3):
        try:
            if n:
                raise ValueError(i)
        except ValueError as e:
            return "caught", str(e)
    return "none"


@case((2,), (9,))
def return_in_else_of_try(n):
    for i in range(4):
        try:
            pass
        except Exception:
            pass
        else:
            if i == n:
                return i
    return None


@case((3,),)
def many_returns_types(n):
    if n == 0:
        return 0
    for i in range(n):
        if i == 1:
            return [i]
    return "s"


@case((5,),)
def break_continue_in_same_loop_else(n):
    log_ = []
    for i in range(n):
        if i == 1:
            continue
        if i == 3:
            break
        log_.append(i)
    else:
        log_.append("else")
    return log_


@case((3,), (4,))
def early_return_skips_side_effects(n):
    log("start")
    for i in range(n):
        log("i", i)
        if i == 2 and n == 3:
            return "early"
    log("end")
    return "late"


@case((3,),)
def nested_function_return_does_not_exit_outer(n):
    out = []
    for i in range(n):
        def inner(v):
            if v > 1:
                return "big"
            return "small"

        out.append(inner(i))
    return out


@case((2,), (5,))
def loop_in_finally_with_break(n):
    out = []
    try:
        out.append("try")
    finally:
        for i in range(5):
            if i == n:
                break
            out.append(i)
    return out


@case((0,), (1,), (3,))
def try_else_skipped_after_break(n):
    for i in range(n):
        try:
            break
        except ValueError:
            pass
        else:
            print("else ran", i)
    return "end"


@case((0,), (1,), (3,))
def try_else_skipped_after_continue(n):
    for i in range(n):
        try:
            continue
        except ValueError:
            pass
        else:
            print("else ran", i)
    return "end"


@case((0,), (-1,))
def try_else_skipped_after_nested_return(x):
    if x >= 0:
        try:
            return x
        except ZeroDivisionError:
            pass
        else:
            print("else ran")
    return "end"


@case((0,), (1,))
def return_value_raises_inside_try_in_if(b):
    if b >= 0:
        try:
            return 1 // b
        except ZeroDivisionError:
            pass
    return "after"


@case((0,), (1,))
def return_value_raises_inside_try_in_loop(b):
    for i in range(2):
        try:
            return 1 // b
        except ZeroDivisionError:
            log("caught", i)
    return "after"


@case((0,), (1,))
def return_value_raises_inside_suppressing_with(c):
    if c >= 0:
        with Recorder("r", suppress=True):
            return 1 // c
    return "after"


@case((0,), (1,))
def break_value_order_in_while_else(n):
    i = 0
    while i < 3:
        i += 1
        try:
            if i == 2:
                break
        finally:
            log("finally", i)
    else:
        return "no break"
    return "break", i


@case((0,), (1,))
def return_cancelled_by_finally_in_suppressing_with(a):
    # An exception raised by `finally` abandons the `return`; the
    # suppressing context manager swallows it and execution goes on.
    with Recorder("s", suppress=True):
        if a >= 0:
            try:
                return "ret"
            finally:
                1 // a
    return "after"


@case((0,), (1,))
def break_cancelled_by_exception_in_suppressing_with(n):
    out = []
    for i in range(3):
        with Recorder(i, suppress=True):
            try:
                if i == 1:
                    break
            finally:
                if n == 0:
                    1 // n
        out.append(i)
    return out
