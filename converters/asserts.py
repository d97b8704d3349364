"""Converts `assert` statements into `ag__.assert_stmt`.

    assert x > 0, f"bad {x}"     -->     ag__.assert_stmt(x > 0, lambda: f"bad {x}")

The message is a lambda, evaluated only when the assertion fails. Under
`python -O` assertions are removed, as Python removes them.
"""

import gast
from autograph.converters import base

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["transform"]


class _Transformer(base.Transformer):

    def visit_Assert(self, node):
        if not __debug__:
            return builders.located(gast.Pass(), node)
        if node.msg is not None and not deferrable(node.msg):
            return node
        args = [node.test] + ([builders.lambda_(node.msg)] if node.msg is not None else [])
        call = self.operator("assert_stmt", *args)
        return builders.located(builders.expr_stmt(call), node)


transform = _Transformer.transform
