"""Routes calls through the runtime's call hook.

    y = f(x, k=2)      -->      y = ag__.call(f)(x, k=2)

`ag__.call(f)` returns the converted `f` for user code (converted on first
call), a runtime override for the builtins a backend may need (`print`,
`len`, `range`, ...), or `f` itself. The call keeps its own argument syntax,
so evaluation order is Python's. Calls to other builtins (`str`, `list`,
`super`, `locals`, ...) stay as they are when their name is not rebound.
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
        node.func = builders.located(self.operator("call", func), func)
        return node

    def _plain_builtin(self, identifier):
        """A builtin that no backend overrides and that the user does not
        rebind: calling it through the hook would change nothing."""
        return (hasattr(builtins, identifier) and identifier not in self.ctx.overridden_builtins
                and identifier not in self.ctx.scope.locals and identifier not in self.ctx.globals)


transform = _Transformer.transform
