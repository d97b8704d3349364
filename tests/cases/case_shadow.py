"""Shadowed builtins: module globals and locals named `range`, `print`, `len`."""

from tests.cases import case, log

_builtin_range = range


def range(*args):  # noqa: A001 - shadowing on purpose
    log("custom range", args)
    return _builtin_range(*args)


def print(*args, **kwargs):  # noqa: A001
    log("custom print", args)


@case((3,), (0,))
def global_shadowed_range(n):
    out = []
    for i in range(n):
        out.append(i)
    return out


@case((3,),)
def global_shadowed_print(n):
    for i in range(n):
        print("hello", i)
    return n


@case((3,),)
def local_len_shadow(n):
    len = lambda x: 42  # noqa: E731
    out = []
    for i in range(n):
        if len(out) == 42:
            out.append(i)
    return out


@case((3,),)
def local_named_range(n):
    range = [10, 20, 30]
    total = 0
    for v in range:
        if v > n:
            total += v
    return total


@case((3,),)
def local_named_print_conditional(n):
    if n > 2:
        print = lambda *a: log("local print", a)  # noqa: E731
    else:
        print = log
    print("x", n)
    return n


@case((3,),)
def parameter_named_len(len):
    out = []
    i = 0
    while i < len:
        out.append(i)
        i += 1
    return out


@case((3,),)
def shadowed_isinstance_and_type(n):
    isinstance = lambda a, b: "shadowed"  # noqa: E731
    type = "t"
    if n:
        return isinstance(n, int), type
    return None


shadowed_global = "module global"


@case((0,), (1,))
def local_shadowing_global_read_before_branch_assignment(c):
    # `shadowed_global` is local in the whole function (assigned below), so
    # the first read raises UnboundLocalError; it must never see the global.
    y = shadowed_global  # noqa: F823
    if c:
        shadowed_global = 1  # noqa: F841
    return y
