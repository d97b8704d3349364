"""Keeps the package's refusals out of the user's `except` clauses.

    try:                                    try:
        y = f(x)                                y = f(x)
    except Exception:                -->    except Exception:
        y = x                                   ag__.reraise_refusal()
                                                y = x

A backend refuses a statement it cannot stage as Python runs it by raising
a TracingError (runtime/errors.py) while it traces. Caught by the user's
`except Exception` (or a bare `except`, or `except TypeError`, which some
of those errors also are), the trace would go on with the handler's values
where Python runs the statement: a wrong answer. The handler re-raises it
first; any other exception it handles as written. A clause that names only
builtin exceptions that no refusal is (`except ZeroDivisionError:`) is
left as written.
"""

import builtins

import gast
from autograph.converters import base

from autograph import builders

__all__ = ["transform"]

# The builtin exceptions that a refusal is an instance of: TracingError is
# an Exception, some are TypeErrors, and under torch's dynamo RuntimeErrors.
_CATCH_REFUSALS = frozenset({"BaseException", "Exception", "TypeError", "RuntimeError"})


class _Transformer(base.Transformer):

    def visit_ExceptHandler(self, node):
        node = self.generic_visit(node)
        if self._never_a_refusal(node.type):
            return node
        check = builders.expr_stmt(self.operator("reraise_refusal"))
        node.body = [builders.located(check, node)] + node.body
        return node

    def _never_a_refusal(self, types):
        """True if `types` (an except clause's) names only builtin
        exceptions, not rebound here, that no refusal is an instance of."""
        names = types.elts if isinstance(types, gast.Tuple) else [types]
        return all(isinstance(n, gast.Name) and n.id not in _CATCH_REFUSALS and n.id not in self.ctx.globals
                   and n.id not in self.ctx.original_locals
                   and isinstance(getattr(builtins, n.id, None), type)
                   and issubclass(getattr(builtins, n.id), BaseException) for n in names)


transform = _Transformer.transform
