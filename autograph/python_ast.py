"""Python's own `ast` to gast and back: `from_ast` for the trees that
parsing gives the converters, `to_ast` for `compile` and `ast.unparse`.

The converters work on gast, whose nodes are the same across Python
versions; what runs is compiled from Python's `ast`. Each function makes
one tree from the other in one walk. gast's own `ast_to_gast` and
`gast_to_ast` do the same through a generic `NodeTransformer` (a
dictionary of fields built per node, every field looked up by name): they
took a third of a conversion.

The two trees differ only where gast is uniform and `ast` is not: gast
writes a parameter, and the name bound by `except E as name`, as a
`Name`; `ast` has `arg` nodes and a string. Every other node is the `ast`
class of the same name with the fields `ast` declares (gast's extra
fields, such as `Name.annotation`, are dropped).
"""

import ast

import gast

__all__ = ["from_ast", "to_ast"]

_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def to_ast(node):
    """The `ast` tree equal to gast tree `node`."""
    return _CONVERTERS[type(node)](node)


def _converter(cls):
    """The function that converts a node of gast class `cls`."""
    target = getattr(ast, cls.__name__)
    keep = frozenset(target._fields + target._attributes)
    special = _SPECIAL.get(cls.__name__)
    if special is not None:
        return special
    if not keep:  # a context or an operator: one instance, as ast.parse shares them
        shared = target()

        def convert(node):
            return shared
        return convert
    items = _ITEMS
    nodes = _CONVERTERS
    fields = target._fields
    # gast's fields that `ast` lacks (a Name's annotation and type comment).
    extra = tuple(f for f in cls._fields + cls._attributes if f not in keep)

    def convert(node):
        new = target()
        # Fields and positions are plain instance attributes of both kinds
        # of node: all are copied, then the nodes among them converted.
        attributes = new.__dict__
        attributes.update(node.__dict__)
        for key in extra:
            attributes.pop(key, None)
        for key in fields:
            value = attributes.get(key)
            kind = type(value)
            if kind is list:
                attributes[key] = [items[type(item)](item) for item in value]
            else:
                found = nodes[kind]
                if found is not None:
                    attributes[key] = found(value)
        return new
    return convert


def _same(value):
    return value


class _ByClass(dict):
    """Converters by class, each made on first use: `_CONVERTERS` has
    None for a class that is not a node (a field's int, str or None),
    `_ITEMS` a function that returns the item as it is (a `Global`'s
    strings, a `Dict`'s None keys)."""

    def __init__(self, other):
        super().__init__()
        self.other = other

    def __missing__(self, cls):
        found = self[cls] = _converter(cls) if issubclass(cls, _GAST) else self.other
        return found


_GAST = gast.AST
_CONVERTERS = _ByClass(None)
_ITEMS = _ByClass(_same)


def _value(value):
    if type(value) is list:
        return [item if item is None or type(item) is str else to_ast(item) for item in value]
    return to_ast(value) if isinstance(value, _GAST) else value


def _located(new, node, lines=0):
    """`new` with `node`'s position, its line numbers moved by `lines`."""
    for attribute in _POSITION:
        value = getattr(node, attribute, None)
        if value is not None:
            setattr(new, attribute, value + lines if attribute in _LINES else value)
    return new


_LINES = ("lineno", "end_lineno")


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


def from_ast(node, lines=0):
    """The gast tree equal to `ast` tree `node` (as `gast.ast_to_gast`
    makes it), its line numbers moved by `lines`."""
    return (_FROM_AST.get(type(node)) or _from_converter(type(node)))(node, lines)


def _from_value(value, lines):
    if type(value) is list:
        return [item if item is None or type(item) is str else from_ast(item, lines) for item in value]
    return from_ast(value, lines) if isinstance(value, ast.AST) else value


def _from_converter(cls):
    """The function that converts a node of `ast` class `cls`, as
    `_converter` does the other way."""
    target = getattr(gast, cls.__name__)
    fields = target._fields
    # gast's fields that `ast` lacks here: a Name's annotation and type
    # comment (a parameter's, in gast), type parameters before 3.12.
    absent = tuple(f for f in fields if f not in cls._fields)
    if not fields and not cls._attributes:  # a context or an operator
        def convert(node, lines):
            return target()
    else:
        own = cls._fields
        moved = tuple(a for a in cls._attributes if a in _LINES)

        def convert(node, lines):
            new = target()
            # Copied at once, then the nodes among the fields converted and
            # the line numbers moved.
            attributes = new.__dict__
            attributes.update(node.__dict__)
            for key in own:
                value = attributes.get(key)
                if type(value) is list:
                    attributes[key] = [item if item is None or type(item) is str else from_ast(item, lines)
                                       for item in value]
                elif isinstance(value, _AST):
                    attributes[key] = from_ast(value, lines)
            if lines:
                for key in moved:
                    item = attributes.get(key)
                    if item is not None:
                        attributes[key] = item + lines
            for key in absent:
                attributes[key] = [] if key == "type_params" else None
            return new
    _FROM_AST[cls] = convert
    return convert


def _param(node, lines):
    """A parameter: `ast.arg` as gast's `Name` in the `Param` context."""
    return _located(gast.Name(id=node.arg, ctx=gast.Param(), annotation=_from_value(node.annotation, lines),
                              type_comment=getattr(node, "type_comment", None)), node, lines)


def _from_except_handler(node, lines):
    name = None if node.name is None else gast.Name(id=node.name, ctx=gast.Store(), annotation=None,
                                                     type_comment=None)
    return _located(gast.ExceptHandler(type=_from_value(node.type, lines), name=name,
                                       body=_from_value(node.body, lines)), node, lines)


_AST = ast.AST
_FROM_AST = {ast.arg: _param, ast.ExceptHandler: _from_except_handler}
