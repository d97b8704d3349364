"""Lowers `break` into a flag, and a loop's `else` clause into a guard.

    while x > 0:                       break_ = False
        x -= 1                         while not break_ and x > 0:
        if x == 3:             -->         x -= 1
            break                          if x == 3:
        total += x                             break_ = True
    else:                                  else:
        total = -1                             total += x
                                       if not break_:
                                           total = -1

A `for` loop gets the flag as its extra test (`stop_flags`), checked before
the next item is fetched. A loop without `break` keeps its `else` clause as
plain statements after the loop.
"""

import gast
from autograph.converters import base, jumps
from autograph.converters.return_statements import stop_when

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["transform"]

_LOOPS = (gast.While, gast.For)


def _is_break(stmt):
    return isinstance(stmt, gast.Break)


class _Transformer(base.Transformer):
    def visit_While(self, node):
        self.generic_visit(node)
        return self._loop(node)

    visit_For = visit_While

    def _loop(self, node):
        if isinstance(node, gast.While) and not deferrable(node.test):
            _move_test_into_body(node)
        orelse, node.orelse = node.orelse, []
        if not jumps.contains(node.body, _is_break, into_loops=False):
            return [node] + orelse
        node.body = jumps.structure(node.body, _is_break, into_loops=False)
        flag = self.ctx.namer.new("break_")

        def replace(stmt):
            return [builders.assign(builders.store(flag), builders.const(True))]

        node.body, _ = jumps.lower(node.body, _is_break, replace, flag, into_loops=False)
        stop_when(node, flag)
        result = [builders.located(builders.assign(builders.store(flag), builders.const(False)), node), node]
        if orelse:
            guard = gast.If(test=builders.not_(builders.name(flag)), body=orelse, orelse=[])
            result.append(builders.located(guard, orelse[0]))
        return result


def _move_test_into_body(loop):
    """A test that binds names (walrus) must run in the loop's own scope:

        while (n := f()) > 0:             while True:
            body              -->             if (n := f()) > 0:
        else:                                     body
            done()                            else:
                                                  done()
                                                  break
    """
    loop.body = [builders.located(gast.If(test=loop.test, body=loop.body,
                                           orelse=loop.orelse + [gast.Break()]), loop.test)]
    loop.orelse = []
    loop.test = builders.located(builders.const(True), loop.test)


transform = _Transformer.transform
