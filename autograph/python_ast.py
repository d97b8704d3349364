"""gast trees back to Python's own `ast`, for `compile` and `ast.unparse`.

The converters work on gast, whose nodes are the same across Python
versions; what runs is compiled from Python's `ast`. `to_ast` makes the
second from the first in one walk. gast's own `gast_to_ast` does the same
through a generic `NodeTransformer` (a dictionary of fields built per
node, every field looked up by name); it took 30% of a conversion.

The two trees differ only where gast is uniform and `ast` is not: gast
writes a parameter, and the name bound by `except E as name`, as a
`Name`; `ast` has `arg` nodes and a string. Every other node is the `ast`
class of the same name with the fields `ast` declares (gast's extra
fields, such as `Name.annotation`, are dropped).
"""

import ast

import gast

__all__ = ["to_ast"]

_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def to_ast(node):
    """The `ast` tree equal to gast tree `node`."""
    layout = _LAYOUTS.get(type(node)) or _layout(type(node))
    if layout.shared is not None:
        return layout.shared
    if layout.special is not None:
        return layout.special(node)
    new = layout.target()
    # Fields and positions are plain instance attributes of both kinds of node.
    attributes, keep = new.__dict__, layout.keep
    for key, value in node.__dict__.items():
        if key in keep:
            if type(value) is list:
                value = [item if item is None or type(item) is str else to_ast(item) for item in value]
            elif isinstance(value, _GAST):
                value = to_ast(value)
            attributes[key] = value
    return new


_GAST = gast.AST


def _value(value):
    if type(value) is list:
        return [item if item is None or type(item) is str else to_ast(item) for item in value]
    return to_ast(value) if isinstance(value, _GAST) else value


class _Layout:
    """What one gast class becomes: its `ast` class and the attributes it
    keeps (the fields that `ast` declares, and positions), or one shared
    instance for a class without either (a context or an operator, which
    `ast.parse` shares too), or a function of its own (`_SPECIAL`)."""

    __slots__ = ("target", "keep", "shared", "special")

    def __init__(self, cls):
        self.target = getattr(ast, cls.__name__)
        self.keep = frozenset(self.target._fields + self.target._attributes)
        self.shared = None if self.keep else self.target()
        self.special = _SPECIAL.get(cls.__name__)


_LAYOUTS = {}


def _layout(cls):
    layout = _LAYOUTS[cls] = _Layout(cls)
    return layout


def _located(new, node):
    for attribute in _POSITION:
        value = getattr(node, attribute, None)
        if value is not None:
            setattr(new, attribute, value)
    return new


def _arg(name):
    """A parameter: gast's `Name` as `ast.arg`."""
    if name is None:
        return None
    return _located(ast.arg(arg=name.id, annotation=_value(name.annotation),
                            type_comment=getattr(name, "type_comment", None)), name)


def _arguments(node):
    return ast.arguments(
        posonlyargs=[_arg(a) for a in node.posonlyargs], args=[_arg(a) for a in node.args],
        vararg=_arg(node.vararg), kwonlyargs=[_arg(a) for a in node.kwonlyargs],
        kw_defaults=_value(node.kw_defaults), kwarg=_arg(node.kwarg), defaults=_value(node.defaults))


def _except_handler(node):
    new = ast.ExceptHandler(type=_value(node.type), name=node.name.id if node.name is not None else None,
                            body=_value(node.body))
    return _located(new, node)


_SPECIAL = {"arguments": _arguments, "ExceptHandler": _except_handler}
