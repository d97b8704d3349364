"""Converts `and`, `or` and `not` into runtime operators.

    a and b and c      -->      ag__.and_(a, lambda: b, lambda: c)
    a or b             -->      ag__.or_(a, lambda: b)
    not a              -->      ag__.not_(a)
    a < b <= c         -->      ag__.compare(a, ('<', '<='), b, lambda: c)

Later operands are lambdas, so short-circuit evaluation is Python's. A
chained comparison is Python's `and` of its pairs, each operand evaluated
once, left to right. Operands that bind names (walrus), yield, await or
inspect their frame stay as they are.

Where every later operand is *pure*, the call says so:

    while (x > 0).all() and n < 10:   -->   ag__.and_(..., lambda: n < 10, pure=True)

An operand is pure when it is a name, a constant, a single comparison
(`==`, `!=`, `<`, `<=`, `>`, `>=`, `is`, `is not`) of pure operands, or `not`
of one: no call, attribute, subscript or arithmetic. On a backend's values
it computes only its comparisons, which have no effect and cannot fail once
traced, so where the first operand is traced the runtime may evaluate the
rest at once and join booleans with the backend's logical and/or instead of
a cond (operators.and_); where it is a Python value, Python short-circuits.
"""

import gast
from autograph.converters import base

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["transform"]

_SYMBOLS = {gast.Eq: "==", gast.NotEq: "!=", gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=",
            gast.Is: "is", gast.IsNot: "is not", gast.In: "in", gast.NotIn: "not in"}


_PURE_COMPARISONS = (gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Is, gast.IsNot)


class _Transformer(base.Transformer):
    expressions = True

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not all(deferrable(value) for value in node.values[1:]):
            return node
        operator = "and_" if isinstance(node.op, gast.And) else "or_"
        rest = [builders.lambda_(value) for value in node.values[1:]]
        call = self.operator(operator, node.values[0], *rest)
        if all(self._pure(value) for value in node.values[1:]):
            call.keywords.append(gast.keyword(arg="pure", value=builders.const(True)))
        return builders.located(call, node)

    def _pure(self, node):
        """True for a name, a constant, one comparison of pure operands, or
        `ag__.not_` of one (see the module docstring)."""
        if isinstance(node, (gast.Name, gast.Constant)):
            return True
        if isinstance(node, gast.Compare):
            return len(node.ops) == 1 and isinstance(node.ops[0], _PURE_COMPARISONS) \
                and self._pure(node.left) and self._pure(node.comparators[0])
        return (isinstance(node, gast.Call) and self.is_runtime(node.func, "not_")
                and len(node.args) == 1 and not node.keywords
                and self._pure(node.args[0]))

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
