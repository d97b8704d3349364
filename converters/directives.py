"""Moves `autograph.set_loop_options(...)` directives into their loop.

    while x > 0:                                   def loop_body(x):
        autograph.set_loop_options(                    x -= 1
            maximum_iterations=10)         -->         return x
        x -= 1                                     x = ag__.while_stmt(loop_test, loop_body, (x,), ('x',),
                                                                       {'maximum_iterations': 10})

The directive has no effect on Python execution; a backend may use the
options when it stages the loop. An option not in `OPTIONS` is an error
(ConversionError naming it and the line).
"""

import gast
from autograph.converters import base

from autograph.errors import ConversionError

__all__ = ["OPTIONS", "transform"]

#: The options of `set_loop_options`, as `autograph.set_loop_options` documents them.
OPTIONS = ("maximum_iterations", "shape_invariants", "parallel_iterations", "swap_memory", "unroll")


def _is_directive(stmt):
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return False
    func = stmt.value.func
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    return name == "set_loop_options"


def unknown_option(name):
    """The words of the error for `set_loop_options({name}=...)`."""
    return f"set_loop_options() has no option '{name}'; its options are {', '.join(OPTIONS)}"


def _by_name(invariants, where):
    """`[(v, shape), ...]` as `[('v', shape), ...]`: the runtime matches the
    pairs to the loop's variables by name."""
    pairs = invariants.elts if isinstance(invariants, (gast.List, gast.Tuple)) else None
    if pairs is None or not all(isinstance(p, (gast.List, gast.Tuple)) and len(p.elts) == 2
                                and isinstance(p.elts[0], gast.Name) for p in pairs):
        raise ConversionError(f"{where}: set_loop_options(shape_invariants=...) takes a list of "
                              "(variable, shape) pairs written in the call, such as [(y, (None,))]")
    return gast.List(elts=[gast.Tuple(elts=[gast.Constant(value=p.elts[0].id, kind=None), p.elts[1]],
                                      ctx=gast.Load()) for p in pairs], ctx=gast.Load())


class _Transformer(base.Transformer):
    def _check(self, directive):
        where = f"cannot convert {self.ctx.qualname} ({self.ctx.filename}:{directive.lineno})"
        call = directive.value
        if call.args:
            raise ConversionError(f"{where}: set_loop_options() takes its options by name "
                                  "(set_loop_options(maximum_iterations=10))")
        for keyword in call.keywords:
            if keyword.arg is None:
                raise ConversionError(f"{where}: set_loop_options(**...) cannot be converted: write each "
                                      "option by name in the call")
            if keyword.arg not in OPTIONS:
                raise ConversionError(f"{where}: {unknown_option(keyword.arg)}")
            if keyword.arg == "shape_invariants":
                keyword.value = _by_name(keyword.value, where)

    def visit_While(self, node):
        self.generic_visit(node)
        directives = [s for s in node.body if _is_directive(s)]
        for directive in directives:
            self._check(directive)
        if directives:
            node.body = [s for s in node.body if not _is_directive(s)] or [gast.Pass()]
            node.loop_options = [kw for d in directives for kw in d.value.keywords]
            self.ctx.loop_options = True
        return node

    visit_For = visit_While


transform = _Transformer.transform
