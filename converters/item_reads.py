"""Routes item reads whose index a backend may trace through a runtime
hook, so that the backend reads them its own way instead of failing inside
Python's indexing with the framework's error:

    ys = []                      ys = []
    ...                 -->      ...
    return ys[i]                 return ag__.getitem(ys, i, 'ys')

    while i < n:                 def loop_body(s, i):
        s = s + x[i]     -->         s = s + ag__.getitem(x, i, 'x')
        i += 1                       ...

A read is rewritten when its index is not a constant or a slice and either
its object is a name the function binds to a list display or comprehension
(a traced index reads the list's elements stacked, checked when the program
runs), or the index reads a name that a staged statement can output: one
bound inside an `if`, `while` or `for` (a `for` target included), which
holds a traced number after the statement is staged (torch wants a concrete
integer for `x[i]`). The object may be any expression; messages name it
as written. For a Python index `getitem` is `x[i]`. The object is
read before the index, as Python reads them.
"""

import ast

import gast
from autograph.converters import base

from autograph import builders
from autograph.python_ast import to_ast

__all__ = ["transform"]

_STAGED = (gast.If, gast.While, gast.For)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def _bindings(function):
    """(the names `function` binds to a list display or comprehension, the
    names bound inside an `if`, `while` or `for`), in one walk: a node is
    inside such a statement if its parent is one or is inside one."""
    lists, staged = set(), set()
    stack = [(child, False) for child in builders.children(function)]
    while stack:
        node, within = stack.pop()
        if isinstance(node, gast.Assign) and isinstance(node.value, (gast.List, gast.ListComp)):
            lists.update(t.id for t in node.targets if isinstance(t, gast.Name))
        elif within and isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            staged.add(node.id)
        if not isinstance(node, _SCOPES):  # the function's own scope only
            within = within or isinstance(node, _STAGED)
            stack.extend([(child, within) for child in builders.children(node)])
    return lists, staged


def _traceable(index):
    """An index that may be or hold a traced value: not a constant or a
    slice, or a tuple with such an item (`x[i, :]`)."""
    if isinstance(index, gast.Tuple):
        return any(_traceable(e) for e in index.elts)
    if isinstance(index, (gast.Constant, gast.Slice)):
        return False
    return not (isinstance(index, gast.UnaryOp) and isinstance(index.operand, gast.Constant))


class _Transformer(base.Transformer):
    expressions = True

    lists = staged = frozenset()

    @classmethod
    def transform(cls, node, ctx):
        lists, staged = _bindings(node)
        lists &= ctx.scope.locals
        if not lists and not staged:
            return node
        transformer = cls(ctx)
        transformer.lists, transformer.staged = lists, staged
        node.body = [transformer.visit(stmt) for stmt in node.body]
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or not _traceable(node.slice):
            return node
        listed = isinstance(node.value, gast.Name) and node.value.id in self.lists
        if not (listed or any(isinstance(n, gast.Name) and n.id in self.staged for n in builders.nodes(node.slice))):
            return node
        text = ast.unparse(to_ast(node.value))
        return builders.located(self.operator("getitem", node.value, node.slice, gast.Constant(text, None)), node)


transform = _Transformer.transform
