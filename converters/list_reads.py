"""Routes the reads `ys[i]` of a list made in the function through a
runtime hook, so that an index traced by a backend reads the list (its
elements stacked, the index checked when the program runs) instead of
failing inside Python's list indexing with the framework's error.

    ys = []                      ys = []
    ...                 -->      ...
    return ys[i]                 return ag__.list_item(ys, i, 'ys')

For a Python index `list_item` is `ys[i]`. Only names bound to a list
display or comprehension in the function are rewritten, and only reads
whose index is not a constant or a slice: other subscripts stay as they
are. `ys` is read before `i`, as Python reads them.
"""

import gast
from autograph.converters import base

from autograph import builders

__all__ = ["transform"]


def _lists(body):
    """The names that the function binds to a list display or comprehension."""
    names = set()
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)) \
                    and node is not stmt:
                continue
            if isinstance(node, gast.Assign) and isinstance(node.value, (gast.List, gast.ListComp)):
                names.update(t.id for t in node.targets if isinstance(t, gast.Name))
    return names


def _traceable(index):
    """An index that may be a traced value: not a constant, not a slice."""
    if isinstance(index, (gast.Constant, gast.Slice)):
        return False
    if isinstance(index, gast.UnaryOp) and isinstance(index.operand, gast.Constant):
        return False
    return not (isinstance(index, gast.Tuple) and any(isinstance(e, gast.Slice) for e in index.elts))


class _Transformer(base.Transformer):
    expressions = True

    names = frozenset()  # the function's lists

    @classmethod
    def transform(cls, node, ctx):
        names = _lists(node.body) & ctx.scope.locals
        if not names:
            return node
        transformer = cls(ctx)
        transformer.names = names
        node.body = [transformer.visit(stmt) for stmt in node.body]
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        value = node.value
        if isinstance(node.ctx, gast.Load) and isinstance(value, gast.Name) \
                and value.id in self.names and _traceable(node.slice):
            return builders.located(self.operator("list_item", value, node.slice, gast.Constant(value.id, None)),
                                    node)
        return node


transform = _Transformer.transform
