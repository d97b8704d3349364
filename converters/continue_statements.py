"""Lowers `continue` into a flag that is reset at the top of each iteration.

    for x in xs:                       for x in xs:
        if x < 0:                          if x < 0:
            continue           -->             pass
        total += x                         else:
                                               total += x

When structuring alone cannot remove it (a `continue` nested deeper), a
flag does, and the rest of the body runs under `if not continue_:`:

    for x in xs:                       for x in xs:
        if x < 0:                          continue_ = False
            if x < -5:                     if x < 0:
                continue                       if x < -5:
            x = -x                                 continue_ = True
        total += x                             else:
                                                   x = -x
                                           if not continue_:
                                               total += x
"""

import gast
from autograph.converters import base, jumps

from autograph import builders

__all__ = ["transform"]


def _is_continue(stmt):
    return isinstance(stmt, gast.Continue)


class _Transformer(base.Transformer):
    def visit_While(self, node):
        self.generic_visit(node)
        if not jumps.contains(node.body, _is_continue, into_loops=False):
            return node
        body = _drop_tail_continues(jumps.structure(node.body, _is_continue, into_loops=False))
        if not jumps.contains(body, _is_continue, into_loops=False):
            node.body = body or [builders.located(gast.Pass(), node)]
            return node
        flag = self.ctx.namer.new("continue_")

        def replace(stmt):
            return [builders.assign(builders.store(flag), builders.const(True))]

        body, _ = jumps.lower(body, _is_continue, replace, flag, into_loops=False)
        reset = builders.located(builders.assign(builders.store(flag), builders.const(False)), node.body[0])
        node.body = [reset] + body
        return node

    visit_For = visit_While


def _drop_tail_continues(stmts):
    """A `continue` that is the last statement on its path does nothing."""
    if not stmts:
        return stmts
    last = stmts[-1]
    if isinstance(last, gast.Continue):
        return stmts[:-1] or [builders.located(gast.Pass(), last)]
    if isinstance(last, gast.If):
        last.body = _drop_tail_continues(last.body)
        last.orelse = _drop_tail_continues(last.orelse)
    return stmts


transform = _Transformer.transform
