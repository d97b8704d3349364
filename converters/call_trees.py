"""Routes calls through the runtime's call hook.

    y = f(x, k=2)      -->      y = ag__.call(f)(x, k=2)

`ag__.call(f)` returns the converted `f` for user code (converted on first
call), a runtime override for the builtins a backend may need (`print`,
`len`, `range`, ...), or `f` itself. The call keeps its own argument syntax,
so evaluation order is Python's. Calls to other builtins (`str`, `list`,
`super`, `locals`, ...) stay as they are when their name is not rebound.

A method whose name ends in one underscore changes its receiver in place,
as torch names them (`y.add_(v)`, `y.zero_()`); the object it changes (the
receiver, or what an item of it is read from) goes through a hook that
lets a backend refuse the change (`Backend.in_place`):

    y[0].add_(v)       -->      ag__.call(ag__.in_place(y)[0].add_)(v)
"""

import builtins

import gast
from autograph.converters import base

from autograph import builders

__all__ = ["transform"]


class _Transformer(base.Transformer):
    expressions = True

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == self.ctx.ag:
            return node
        if isinstance(func, gast.Name) and self._plain_builtin(func.id):
            return node
        if isinstance(func, gast.Attribute) and func.attr.endswith("_") and not func.attr.endswith("__"):
            self._changed_in_place(func)
        node.func = builders.located(self.operator("call", func), func)
        return node

    def _changed_in_place(self, method):
        """Routes the object that `method` (`y[0].add_`) changes in place, `y`,
        through `in_place`: the receiver with its item reads taken off (an
        item is a view of its object), read where Python reads it."""
        parent, field = method, "value"
        while True:
            node = getattr(parent, field)
            if isinstance(node, gast.Subscript):
                parent, field = node, "value"
            elif self._item_read(node):  # `ag__.getitem(y, i, 'y')` (item_reads.py)
                parent, field = node.args, 0
            else:
                break
        wrapped = builders.located(self.operator("in_place", node), node)
        if field == 0:
            parent[0] = wrapped
        else:
            setattr(parent, field, wrapped)

    def _item_read(self, node):
        func = node.func if isinstance(node, gast.Call) else None
        return (isinstance(func, gast.Attribute) and func.attr == "getitem" and isinstance(func.value, gast.Name)
                and func.value.id == self.ctx.ag)

    def _plain_builtin(self, identifier):
        """A builtin that no backend overrides and that the user does not
        rebind: calling it through the hook would change nothing."""
        return (hasattr(builtins, identifier) and identifier not in self.ctx.overridden_builtins
                and identifier not in self.ctx.scope.locals and identifier not in self.ctx.globals)


transform = _Transformer.transform
