"""if / elif / else, conditional expressions, maybe-undefined variables."""

from tests.cases import case, log


@case((1,), (0,), (-3,))
def if_simple(x):
    if x > 0:
        x = x * 2
    return x


@case((1,), (0,), (-3,))
def if_else(x):
    if x > 0:
        y = 1
    else:
        y = -1
    return y


@case((5,), (0,), (-3,), (15,), (10,))
def if_elif_chain(x):
    if x > 10:
        r = "big"
    elif x > 3:
        r = "medium"
    elif x == 0:
        r = "zero"
    else:
        r = "small"
    return r


@case((1, 2), (2, 1), (3, 3), (-1, 0))
def nested_ifs(a, b):
    if a > 0:
        if b > a:
            r = "b>a>0"
        else:
            if b == a:
                r = "eq"
            else:
                r = "a>b"
    else:
        r = "neg"
    return r


@case((1,), (-1,))
def if_defines_in_one_branch_read_after(x):
    if x > 0:
        y = 10
    return y


@case((1,), (-1,))
def if_defines_in_else_only(x):
    if x > 0:
        pass
    else:
        z = 3
    return z + 1


@case((1,), (-1,))
def if_read_only_when_defined(x):
    if x > 0:
        y = 10
    if x > 0:
        return y
    return 0


@case((1,), (-1,), (0,))
def if_multiple_outputs(x):
    a, b, c = 1, 2, 3
    if x > 0:
        a = 10
        b = 20
    elif x < 0:
        c = 30
    else:
        a, b, c = c, b, a
    return a, b, c


@case((3,), (-3,))
def if_modifies_list(x):
    lst = [1]
    if x > 0:
        lst.append(x)
    else:
        lst = lst + [x, x]
    return lst


@case((1,), (0,), (-1,))
def ternary_simple(x):
    return "pos" if x > 0 else ("zero" if x == 0 else "neg")


@case((1,), (0,))
def ternary_side_effects(x):
    a = log("a", 1) if x else log("b", 2)
    b = log("c", 3) if not x else log("d", 4)
    return a, b


@case((1,), (0,))
def ternary_in_loop(x):
    out = []
    for i in range(4):
        out.append(i if i % 2 == x else -i)
    return out


@case((2,), (-2,))
def if_in_expression_function_call(x):
    def f(v):
        return v * 10

    return f(x if x > 0 else -x)


@case((1,), (0,))
def if_pass_only(x):
    if x:
        pass
    else:
        pass
    return x


@case((1,), (0,))
def if_print(x):
    if x:
        print("yes", x)
    else:
        print("no", x)
    print("done")


@case(([],), ([1],), ("",), ("a",), (None,), (0.0,), ({},))
def if_truthiness(v):
    if v:
        return "truthy"
    return "falsy"


@case((1,), (-1,))
def if_deletes_variable(x):
    y = 5
    if x > 0:
        del y
    return y


@case((1,), (-1,))
def if_nested_undefined_message(x):
    if x > 0:
        if x > 5:
            q = 1
    return q


@case((1,), (0,))
def if_with_return_in_one_branch(x):
    if x:
        return "early"
    y = "late"
    return y


@case((1,), (0,))
def if_both_branches_return(x):
    if x:
        return 1
    else:
        return 2


@case((1,), (0,), (2,))
def if_return_in_elif_only(x):
    r = []
    if x == 0:
        r.append("zero")
    elif x == 1:
        return "one"
    r.append("after")
    return r


@case((1,), (0,))
def if_no_return_falls_off(x):
    if x:
        return 5


@case((1, 2), (0, 2), (1, 0))
def if_chained_comparison(a, b):
    if 0 < a < b:
        return "ordered"
    if a == b == 0:
        return "zeros"
    return "other"


@case((1,), (0,))
def if_modifies_argument(x):
    if x:
        x = "changed"
    return x


@case((4,), (7,))
def if_in_while_condition_var(x):
    flag = x % 2 == 0
    if flag:
        kind = "even"
    else:
        kind = "odd"
    return kind, flag


@case((1,), (0,))
def if_undefined_then_defined_later(x):
    if x:
        v = 1
    v = 2
    return v


@case((1,), (-1,))
def if_unused_branch_var(x):
    if x > 0:
        tmp = x * 3
        res = tmp + 1
    else:
        res = 0
    return res


@case((3,), (-3,))
def if_tuple_unpack_branch(x):
    if x > 0:
        a, (b, c) = 1, (2, 3)
    else:
        a, b, c = -1, -2, -3
    return a + b * c


@case((1,), (0,))
def if_condition_is_call(x):
    def check(v):
        log("check", v)
        return v > 0

    if check(x):
        return "ok"
    return "no"


@case((1,), (0,))
def if_then_read_undefined_in_print(x):
    if x:
        msg = "hi"
    print(msg)


@case((0,), (1,))
def dead_code_after_return_defines_loop_var(c):
    if c:
        return 1
        for i in range(3):
            pass
    return i


@case((0,), (1,))
def dead_code_after_return_in_match_defines(c):
    match c:
        case 1:
            return 1
            y = 2
    return y


@case((0,), (1,))
def dead_code_after_return_in_loop_defines(c):
    for k in range(c):
        return k
        y = 2
    return y


@case((0,), (1,))
def read_before_assignment_in_later_branch(c):
    y = 0
    y += x  # noqa: F821
    if c:
        x = 1  # noqa: F841
    return y


@case((0,), (1,))
def attribute_augassign_reads_local_assigned_later_in_branch(c):
    class B:
        a = 0

    b = B()
    b.a -= x  # noqa: F821
    if c:
        pass
    else:
        x = 1  # noqa: F841
    return b.a
