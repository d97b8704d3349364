"""Lowers `return` statements so that control flow stays structured.

Most functions need nothing: a `return` directly in the function body stays,
and an `if` whose branches return becomes `return ag__.if_stmt(...)` when it
is the last statement (after the statements that follow a returning branch
move into the other branch):

    if x < 0:                          def if_body():
        return -x                          return -x
    y = x * 2             -->          def else_body():
    return y                               y = x * 2
                                           return y
                                       return ag__.if_stmt(x < 0, if_body, else_body, (), ('return',))

A `return` inside a loop, or inside an `if` that other statements follow,
becomes a flag and a value; later statements run under `if not do_return:`
and loops stop when the flag is set:

    for x in xs:                       do_return = False
        if x > 3:                      retval = ag__.UndefinedReturnValue()
            return x                   for x in xs:      # while not do_return
    return -1              -->             if x > 3:
                                               retval = x
                                               do_return = True
                                       if not do_return:
                                           retval = -1
                                       return ag__.return_value(retval)

`UndefinedReturnValue` means "no return ran yet": `return_value` turns it
into None (the function fell off its end), and a backend may stand a
placeholder for it in a branch or iteration that has not returned.

A `return` inside a `finally` clause swallows the exception in flight, which
a flag cannot do: it stays a real `return` when every path through the
clause returns and the function needs no flag; otherwise the function is
not converted (ConversionError, saying so).
"""

import gast
from autograph.converters import jumps

from autograph import builders
from autograph.errors import ConversionError

__all__ = ["transform"]


def _is_return(stmt):
    return isinstance(stmt, gast.Return)


def _tail_only(stmts, is_tail):
    """True if every `return` in `stmts` can stay a real `return`: it is
    not inside a loop, and each `if` around it is the block's last
    statement in tail position."""
    for index, stmt in enumerate(stmts):
        tail = is_tail and index == len(stmts) - 1
        if isinstance(stmt, (gast.While, gast.For, gast.AsyncFor)):
            if jumps.contains([stmt], _is_return, into_loops=True):
                return False
        elif isinstance(stmt, gast.If):
            if jumps.contains([stmt], _is_return, into_loops=True):
                if not tail or not (_tail_only(stmt.body, True) and _tail_only(stmt.orelse, True)):
                    return False
        elif isinstance(stmt, gast.Try) or type(stmt).__name__ == "TryStar":
            if not (_tail_only(stmt.body, tail and not stmt.orelse) and _tail_only(stmt.orelse, tail)
                    and _tail_only(stmt.finalbody, jumps.always_jumps(stmt.finalbody, _is_return))
                    and all(_tail_only(h.body, tail) for h in stmt.handlers)):
                return False
        elif isinstance(stmt, (gast.With, gast.AsyncWith)):
            if not _tail_only(stmt.body, tail):
                return False
        elif isinstance(stmt, gast.Match):
            if not all(_tail_only(case.body, tail) for case in stmt.cases):
                return False
    return True


def transform(node, ctx):
    if not jumps.contains(node.body, _is_return, into_loops=True):
        return node
    node.body = jumps.structure(node.body, _is_return, into_loops=True)
    if _tail_only(node.body, True):
        return node
    _check_no_return_in_finally(node, ctx)
    do_return = ctx.namer.new("do_return")
    retval = ctx.namer.new("retval")

    def replace(stmt):
        value = stmt.value if stmt.value is not None else builders.const(None)
        # The value first: if computing it raises, no return happened.
        return [builders.assign(builders.store(retval), value),
                builders.assign(builders.store(do_return), builders.const(True))]

    def on_loop(loop):
        stop_when(loop, do_return)
        if loop.orelse:
            guard = gast.If(test=builders.not_(builders.name(do_return)), body=loop.orelse, orelse=[])
            loop.orelse = [builders.located(guard, loop.orelse[0])]

    def reset():
        return [builders.assign(builders.store(do_return), builders.const(False)),
                builders.assign(builders.store(retval), builders.call(
                    builders.attr(ctx.ag, "UndefinedReturnValue")))]

    body, _ = jumps.lower(node.body, _is_return, replace, do_return, True, on_loop, reset)
    first = node.body[0] if node.body else node
    undefined = builders.call(builders.attr(ctx.ag, "UndefinedReturnValue"))
    result = builders.call(builders.attr(ctx.ag, "return_value"), builders.name(retval))
    node.body = builders.located([
        builders.assign(builders.store(do_return), builders.const(False)),
        builders.assign(builders.store(retval), undefined),
    ], first) + body + builders.located([builders.ret(result)], node.body[-1] if node.body else node)
    return node


def _statements(stmts):
    """The statements in `stmts` and nested in them (not in nested scopes)."""
    stack = list(reversed(stmts))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in reversed(getattr(stmt, field, None) or []):
                stack.extend(reversed(child.body) if isinstance(child, (gast.ExceptHandler, gast.match_case))
                             else [child])


def _check_no_return_in_finally(node, ctx):
    for stmt in _statements(node.body):
        returns = [s for s in _statements(getattr(stmt, "finalbody", None) or []) if _is_return(s)]
        if returns:
            raise ConversionError(
                f"cannot convert {ctx.qualname} ({ctx.filename}:{returns[0].lineno}): a `return` inside a "
                "`finally` clause swallows the exception in flight, which conversion can express only when every "
                "path through the clause ends in `return` and the function returns nowhere from inside a loop "
                "or from the middle of a block. Make every path through the `finally` clause return, or move "
                "the `return` after the try statement")


def stop_when(loop, flag):
    """Makes `loop` stop before its next iteration once `flag` is set: a
    `while` test becomes `not flag and test`; a `for` gets `flag` in its
    `stop_flags`, which becomes the loop's extra test."""
    if isinstance(loop, gast.While):
        stop = builders.not_(builders.name(flag))
        if isinstance(loop.test, gast.Constant) and loop.test.value is True:
            loop.test = builders.located(stop, loop.test)
        else:
            loop.test = builders.located(gast.BoolOp(op=gast.And(), values=[stop, loop.test]), loop.test)
    else:
        flags = getattr(loop, "stop_flags", [])
        if flag not in flags:
            loop.stop_flags = flags + [flag]
