"""Converts `and`, `or` and `not` into runtime operators.

    a and b and c      -->      ag__.and_(a, lambda: b, lambda: c)
    a or b             -->      ag__.or_(a, lambda: b)
    not a              -->      ag__.not_(a)
    a < b <= c         -->      ag__.compare(a, ('<', '<='), b, lambda: c)

Later operands are lambdas, so short-circuit evaluation is Python's. A
chained comparison is Python's `and` of its pairs, each operand evaluated
once, left to right. Operands

that bind names (walrus), yield, await or inspect their frame stay as they
are.
"""

import gast
from autograph.converters import base

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["transform"]

_SYMBOLS = {gast.Eq: "==", gast.NotEq: "!=", gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=",
            gast.Is: "is", gast.IsNot: "is not", gast.In: "in", gast.NotIn: "not in"}


class _Transformer(base.Transformer):
    expressions = True

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not all(deferrable(value) for value in node.values[1:]):
            return node
        operator = "and_" if isinstance(node.op, gast.And) else "or_"
        rest = [builders.lambda_(value) for value in node.values[1:]]
        return builders.located(self.operator(operator, node.values[0], *rest), node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2 or not all(deferrable(value) for value in node.comparators[1:]):
            return node
        ops = gast.Tuple(elts=[builders.const(_SYMBOLS[type(op)]) for op in node.ops], ctx=gast.Load())
        rest = [builders.lambda_(value) for value in node.comparators[1:]]
        return builders.located(self.operator("compare", node.left, ops,
                                                node.comparators[0], *rest), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        return builders.located(self.operator("not_", node.operand), node)


transform = _Transformer.transform
