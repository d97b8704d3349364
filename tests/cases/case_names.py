"""User variables named like the transpiler's generated names."""

from tests.cases import case


@case((3,), (0,))
def user_var_ag__(n):
    ag__ = 0
    for i in range(n):
        if i:
            ag__ += i
    return ag__


@case((1,), (0,))
def user_vars_if_body_else_body(n):
    if_body = "if"
    else_body = "else"
    if n:
        if_body = else_body + "!"
    else:
        else_body = if_body + "?"
    return if_body, else_body


@case((3,),)
def user_vars_loop_body_loop_test(n):
    loop_body = []
    loop_test = 0
    while loop_test < n:
        loop_body.append(loop_test)
        loop_test += 1
    return loop_body, loop_test


@case((3,),)
def user_vars_state_break_retval(n):
    state = 0
    break_ = False
    retval = None
    do_return = "no"
    for itr in range(n):
        state += itr
        if itr == 1:
            break_ = True
            retval = state
            do_return = "yes"
            break
    return state, break_, retval, do_return, itr


@case((3,), (0,))
def user_functions_named_like_generated(n):
    def if_body(x):
        return x + 1

    def else_body(x):
        return x - 1

    def loop_body(x):
        return x * 2

    r = 0
    for i in range(n):
        if i % 2:
            r = if_body(r)
        else:
            r = else_body(r)
        r = loop_body(r)
    return r


@case((3,), (0,))
def user_var_named_like_runtime_ops(n):
    if_stmt = 1
    while_stmt = 2
    for_stmt = 3
    and_ = 4
    or_ = 5
    not_ = 6
    ld = 7
    Undefined = 8
    if n and if_stmt:
        while_stmt += for_stmt if not_ else ld
    return if_stmt, while_stmt, for_stmt, and_, or_, not_, ld, Undefined


@case((3,),)
def user_param_named_ag__(ag__):
    out = []
    for i in range(ag__):
        out.append(i)
    return out


@case((3,), (0,))
def user_var_undefined_named_retval(n):
    for i in range(n):
        retval = i
    return retval


@case((2,),)
def user_vars_named_with_numeric_suffixes(n):
    if_body_1 = 1
    loop_body_1 = 2
    state_1 = 3
    ag___1 = 4
    for i in range(n):
        if i:
            if_body_1 += 1
            loop_body_1 *= 2
        state_1 -= 1
        ag___1 += i
    return if_body_1, loop_body_1, state_1, ag___1


@case((2,),)
def user_vars_dunder_like(n):
    __ag = 1
    _ag__ = 2
    for i in range(n):
        __ag += _ag__
    return __ag, _ag__


@case((1,), (0,))
def user_var_undefined_named_if_body(n):
    if n:
        if_body = 1
    return if_body
