"""Moves `autograph.set_loop_options(...)` directives into their loop.

    while x > 0:                                   def loop_body(x):
        autograph.set_loop_options(                    x -= 1
            maximum_iterations=10)         -->         return x
        x -= 1                                     x = ag__.while_stmt(loop_test, loop_body, (x,), ('x',),
                                                                       {'maximum_iterations': 10})

The directive has no effect on Python execution; a backend may use the
options when it stages the loop.
"""

import gast
from autograph.converters import base

__all__ = ["transform"]


def _is_directive(stmt):
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return False
    func = stmt.value.func
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    return name == "set_loop_options"


class _Transformer(base.Transformer):
    def visit_While(self, node):
        self.generic_visit(node)
        directives = [s for s in node.body if _is_directive(s)]
        if directives:
            node.body = [s for s in node.body if not _is_directive(s)] or [gast.Pass()]
            node.loop_options = [kw for d in directives for kw in d.value.keywords]
        return node

    visit_For = visit_While


transform = _Transformer.transform
