"""Lowering jumps (`return`, `break`, `continue`) into flags and guards.

One mechanism serves the three jump converters. Within the region a jump
leaves (a loop body, or the whole function for `return`):

1. Structuring: where one branch of an `if` always jumps, the statements
   after the `if` move into the other branch, so no flag is needed:

       if x < 0:                 if x < 0:
           break         -->         break
       total += x                else:
                                     total += x

2. Flags: each remaining jump becomes `flag = True` (plus whatever the
   converter adds, e.g. the return value); every statement after one that
   may have jumped runs under `if not flag:`.
"""

import gast

from autograph import builders

__all__ = ["NEVER", "MAYBE", "ALWAYS", "always_jumps", "structure", "lower", "contains"]

NEVER, MAYBE, ALWAYS = 0, 1, 2

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_LOOPS = (gast.While, gast.For, gast.AsyncFor)


def _is_try(stmt):
    return isinstance(stmt, gast.Try) or type(stmt).__name__ == "TryStar"


def _child_blocks(stmt, into_loops):
    """The statement lists nested directly in `stmt` that a jump can leave
    through."""
    if isinstance(stmt, gast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, _LOOPS):
        return [stmt.body, stmt.orelse] if into_loops else [stmt.orelse]
    if isinstance(stmt, (gast.With, gast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, gast.Try) or type(stmt).__name__ == "TryStar":
        return [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]
    if isinstance(stmt, gast.Match):
        return [case.body for case in stmt.cases]
    return []


def contains(stmts, is_jump, into_loops):
    """True if a jump is among `stmts` or nested in them."""
    for stmt in stmts:
        if is_jump(stmt):
            return True
        if any(contains(block, is_jump, into_loops) for block in _child_blocks(stmt, into_loops)):
            return True
    return False


def always_jumps(stmts, is_jump):
    """True if every path through `stmts` ends in a jump."""
    if not stmts:
        return False
    last = stmts[-1]
    if is_jump(last):
        return True
    if isinstance(last, gast.If):
        return always_jumps(last.body, is_jump) and always_jumps(last.orelse, is_jump)
    if _is_try(last):  # a `finally` clause that always jumps ends every path
        return always_jumps(last.finalbody, is_jump)
    return False


def structure(stmts, is_jump, into_loops):
    """Moves statements that follow an `if` with an always-jumping branch
    into its other branch (step 1 of the module docstring), recursively."""
    result = []
    for index, stmt in enumerate(stmts):
        for block in _child_blocks(stmt, into_loops):
            block[:] = structure(block, is_jump, into_loops)
        result.append(stmt)
        if is_jump(stmt):
            return result
        if isinstance(stmt, gast.If) and index + 1 < len(stmts) \
                and (always_jumps(stmt.body, is_jump) or always_jumps(stmt.orelse, is_jump)):
            _append(result, structure(stmts[index + 1:], is_jump, into_loops), is_jump)
            return result
    return result


def _append(block, rest, is_jump):
    """Extends `block` with `rest` (both structured) as structuring `block +
    rest` would: into the other branch of a last `if` one of whose branches
    always jumps (again in that branch), and nowhere after a jump (the rest
    is dead code). Only this seam is walked, not the blocks again: an
    `elif` chain whose branches return is walked once."""
    while block:
        last = block[-1]
        if is_jump(last) or (_is_try(last) and always_jumps(last.finalbody, is_jump)):
            return
        if not isinstance(last, gast.If):
            break
        if always_jumps(last.body, is_jump):
            block = last.orelse
        elif always_jumps(last.orelse, is_jump):
            block = last.body
        else:
            break
    block.extend(rest)


def lower(stmts, is_jump, replace, flag, into_loops, on_loop=None, reset=None):
    """Step 2 of the module docstring. `replace(jump)` gives the statements
    that stand for a jump; `on_loop(loop)` is called for each loop whose
    body a jump leaves (into_loops=True), which must then stop when `flag`
    is set (a jump in the loop's `else` only does not stop it).
    `reset()` gives the statements that undo a jump: an exception raised
    after it (in a `finally` clause or an `__exit__`) abandons the jump, so
    an `except` clause around it starts with them (default `flag = False`).
    Returns (statements, NEVER | MAYBE | ALWAYS)."""
    if reset is None:
        def reset():
            return [builders.assign(builders.store(flag), builders.const(False))]
    result = []
    for index, stmt in enumerate(stmts):
        if is_jump(stmt):
            result.extend(builders.located(replace(stmt), stmt))
            return result, ALWAYS
        status = NEVER
        if isinstance(stmt, gast.If):
            stmt.body, body = lower(stmt.body, is_jump, replace, flag, into_loops, on_loop, reset)
            stmt.orelse, orelse = lower(stmt.orelse, is_jump, replace, flag, into_loops, on_loop, reset)
            if body == orelse == ALWAYS:
                status = ALWAYS
            elif body or orelse:
                status = MAYBE
        else:
            leaves_loop = False  # a jump in the body of loop `stmt`
            for block in _child_blocks(stmt, into_loops):
                block[:], inner = lower(block, is_jump, replace, flag, into_loops, on_loop, reset)
                if inner != NEVER:
                    status = MAYBE
                    leaves_loop = leaves_loop or (isinstance(stmt, _LOOPS) and block is stmt.body)
                    if _is_try(stmt) and block is stmt.body:
                        if stmt.orelse:
                            # A jump out of the try body skips its else clause.
                            guard = gast.If(test=builders.not_(builders.name(flag)), body=stmt.orelse, orelse=[])
                            stmt.orelse = [builders.located(guard, stmt.orelse[0])]
                        for handler in stmt.handlers:
                            handler.body[:0] = builders.located(reset(), handler)
                    if isinstance(stmt, (gast.With, gast.AsyncWith)) and block is stmt.body:
                        # The context manager may swallow an exception raised
                        # after a jump (in a `finally`): the jump is then
                        # abandoned, as in Python.
                        handler = gast.ExceptHandler(type=builders.name("BaseException"), name=None,
                                                     body=reset() + [gast.Raise(exc=None, cause=None)])
                        guarded = gast.Try(body=list(stmt.body), handlers=[handler], orelse=[], finalbody=[])
                        stmt.body[:] = [builders.located(guarded, stmt.body[0])]
            if leaves_loop and on_loop is not None:
                on_loop(stmt)
        result.append(stmt)
        if status == ALWAYS:
            return result, ALWAYS
        if status == MAYBE:
            rest, _ = lower(stmts[index + 1:], is_jump, replace, flag, into_loops, on_loop, reset)
            if rest:
                guard = gast.If(test=builders.not_(builders.name(flag)), body=rest, orelse=[])
                result.append(builders.located(guard, rest[0]))
            return result, MAYBE
    return result, NEVER
