"""Converts conditional expressions into `ag__.if_exp`.

    y = a if x > 0 else b      -->      y = ag__.if_exp(x > 0, lambda: a, lambda: b)

Only the chosen operand is evaluated, as in Python. An expression whose
operands bind names (walrus), yield, await or inspect their frame stays as
it is, since wrapping it in a lambda would change its meaning.
"""


from autograph.converters import base

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["transform"]


class _Transformer(base.Transformer):
    expressions = True

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not (deferrable(node.body) and deferrable(node.orelse)):
            return node
        converted = self.operator("if_exp", node.test,
                                   builders.lambda_(node.body), builders.lambda_(node.orelse))
        return builders.located(converted, node)


transform = _Transformer.transform
