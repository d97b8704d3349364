"""Converts conditional expressions into `ag__.if_exp`.

    y = a if x > 0 else b      -->      y = ag__.if_exp(x > 0, lambda: a, lambda: b)

Only the chosen operand is evaluated, as in Python. An expression whose
operands bind names (walrus), yield, await or inspect their frame stays as
it is, since wrapping it in a lambda would change its meaning.
"""

import gast

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["transform"]


class _Transformer(gast.NodeTransformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not (deferrable(node.body) and deferrable(node.orelse)):
            return node
        converted = builders.call(builders.attr(self.ctx.ag, "if_exp"), node.test,
                                   builders.lambda_(node.body), builders.lambda_(node.orelse))
        return builders.located(converted, node)


def transform(node, ctx):
    transformer = _Transformer(ctx)
    node.body = [transformer.visit(stmt) for stmt in node.body]
    return node
