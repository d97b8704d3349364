"""Routes calls through the runtime's call hook.

    y = f(x, k=2)      -->      y = ag__.call(f)(x, k=2)

`ag__.call(f)` returns the converted `f` for user code (converted on first
call), a runtime override for the builtins a backend may need (`print`,
`len`, `range`, ...), or `f` itself. The call keeps its own argument syntax,
so evaluation order is Python's. Calls to other builtins (`str`, `list`,
`super`, `locals`, ...) stay as they are when their name is not rebound.

A method whose name ends in one underscore changes its receiver in place,
as torch names them (`y.add_(v)`, `y.zero_()`); each object it may change
goes through a hook that lets a backend refuse the change
(`Backend.in_place`): the receiver, and, where that is an item or a view
attribute (`.T`, `.data`, ...) of an object, which for a tensor shares its
memory, that object too:

    y.add_(v)          -->      ag__.call(ag__.in_place(y).add_)(v)
    y[0].add_(v)       -->      ag__.call(ag__.in_place(ag__.in_place(y)[0]).add_)(v)
"""

import builtins

import gast
from autograph.converters import base

from autograph import builders

__all__ = ["transform"]


# The attributes that give a tensor's memory as another tensor object.
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag"})


class _Transformer(base.Transformer):
    expressions = True

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if self.is_runtime(func):
            return node
        if isinstance(func, gast.Name) and self._plain_builtin(func.id):
            return node
        if isinstance(func, gast.Attribute) and func.attr.endswith("_") and not func.attr.endswith("__"):
            func.value = self._changed_in_place(func.value)
        node.func = builders.located(self.operator("call", func), func)
        return node

    def _changed_in_place(self, receiver):
        """`receiver` (of `y[0].add_`) routed through `in_place`, and so is
        the object it is an item or a view attribute of (`y`: a tensor's
        item is a view of it, and so is `y.T`; a tensor in a list is the
        list's item itself), each read where Python reads it."""
        if isinstance(receiver, gast.Subscript):
            receiver.value = self._changed_in_place(receiver.value)
        elif isinstance(receiver, gast.Call) and self.is_runtime(receiver.func, "getitem"):  # item_reads.py
            receiver.args[0] = self._changed_in_place(receiver.args[0])
        elif isinstance(receiver, gast.Attribute) and receiver.attr in _VIEW_ATTRIBUTES:
            receiver.value = self._changed_in_place(receiver.value)
        return builders.located(self.operator("in_place", receiver), receiver)

    def _plain_builtin(self, identifier):
        """A builtin that no backend overrides and that the user does not
        rebind: calling it through the hook would change nothing."""
        return (hasattr(builtins, identifier) and identifier not in self.ctx.overridden_builtins
                and identifier not in self.ctx.scope.locals and identifier not in self.ctx.globals)


transform = _Transformer.transform
