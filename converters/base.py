"""What the converter passes share: one tree transformer base.

Each pass converts one function at a time (`autograph.conversion` converts
nested functions and classes on their own, before the function that holds
them), so a pass never enters a nested `def`, `async def` or `class`. A
pass that converts statements walks only the statement lists (`body`,
`orelse`, `finalbody`, handlers, match cases): expressions hold no
statements. A pass whose construct can stand in an expression sets
`expressions = True` and walks everything, lambdas included.

    class _Transformer(base.Transformer):
        def visit_Assert(self, node):
            return builders.located(builders.expr_stmt(self.operator("assert_stmt", node.test)), node)

    transform = _Transformer.transform

A visit may return a list of statements in place of the one it was given
(gast's NodeTransformer splices such lists into statement lists; `transform`
does so for the function's own body).
"""

import gast

from autograph import builders

__all__ = ["Transformer"]

_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_AST = gast.AST


def _same(self, node):
    return node


def is_runtime(func, ag, name=None):
    """True if `func` is `ag.name`, where `ag` is the name generated code
    gives the runtime (any runtime attribute where `name` is None)."""
    return (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
            and func.value.id == ag and (name is None or func.attr == name))


class Transformer(gast.NodeTransformer):
    """Base of the converter passes: `transform(node, ctx)` runs the pass on
    the body of function `node`, without entering nested scopes."""

    #: True for the passes that convert expressions: they walk every node.
    expressions = False
    _methods = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._methods = {}  # node class -> the function that visits it (`_method`)

    def __init__(self, ctx):
        self.ctx = ctx

    def visit(self, node):
        """NodeVisitor.visit, with the method looked up once per node class."""
        method = self._methods.get(node.__class__)
        if method is None:
            method = self._method(node.__class__)
        return method(self, node)

    @classmethod
    def _method(cls, node_class):
        method = getattr(cls, "visit_" + node_class.__name__, None)
        if method is None:
            # A node without fields (`Load`, an operator) that no method
            # visits is returned as it is, as generic_visit would.
            method = cls.generic_visit if node_class._fields else _same
        cls._methods[node_class] = method
        return method

    @classmethod
    def transform(cls, node, ctx):
        transformer = cls(ctx)
        body = []
        for stmt in node.body:
            new = transformer.visit(stmt)
            body.extend(new if isinstance(new, list) else [new])
        node.body = body
        return node

    def visit_FunctionDef(self, node):
        return node  # converted on its own

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return self.generic_visit(node) if self.expressions else node

    def visit_Constant(self, node):
        # A constant holds no node. (NodeVisitor's own visit_Constant looks
        # for the visit_Num/visit_Str methods of Python 3.7 first.)
        return node

    def generic_visit(self, node):
        if self.expressions:
            return self._visit_fields(node)
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if type(block) is list and block:
                new = []
                for child in block:
                    result = self.visit(child)
                    if result is not None:
                        new.extend(result if type(result) is list else [result])
                block[:] = new  # in place, as NodeTransformer does
        return node

    def _visit_fields(self, node):
        """NodeTransformer.generic_visit: each child visited, a list's
        items replaced in place by what their visits return (None drops an
        item, a list is spliced in), a field that visits to None deleted."""
        visit = self.visit
        for field in node._fields:
            old = getattr(node, field, None)
            if type(old) is list:
                new = None
                for index, value in enumerate(old):
                    if isinstance(value, _AST):
                        result = visit(value)
                        if result is not value:
                            if new is None:
                                new = old[:index]
                            if result is None:
                                continue
                            if not isinstance(result, _AST):
                                new.extend(result)
                                continue
                            value = result
                    if new is not None:
                        new.append(value)
                if new is not None:
                    old[:] = new
            elif isinstance(old, _AST):
                result = visit(old)
                if result is None:
                    delattr(node, field)
                elif result is not old:
                    setattr(node, field, result)
        return node

    def operator(self, name, *args):
        """A call of the runtime operator `name`: `ag__.name(*args)`."""
        return builders.call(builders.attr(self.ctx.ag, name), *args)

    def is_runtime(self, func, name=None):
        """True if `func` is `ag__.name` (any runtime attribute where `name` is None)."""
        return is_runtime(func, self.ctx.ag, name)
