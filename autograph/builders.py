"""Small builders for the gast nodes that converters emit.

Converters build generated code from these instead of parsing template
strings: it is faster, and each converter reads as the code it produces.
`located(nodes, origin)` gives generated nodes the user's source position, so
that compiled code reports the user's file and line.
"""

import gast

__all__ = [
    "name", "store", "attr", "call", "const", "tuple_", "assign", "expr_stmt", "ret",
    "function", "lambda_", "not_", "located", "params", "children", "nodes",
]


def name(identifier):
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def store(identifier):
    return gast.Name(id=identifier, ctx=gast.Store(), annotation=None, type_comment=None)


def attr(value, attribute):
    """`value.attribute`; `value` is a node or a name."""
    if isinstance(value, str):
        value = name(value)
    return gast.Attribute(value=value, attr=attribute, ctx=gast.Load())


def call(func, *args, **keywords):
    return gast.Call(func=func, args=list(args),
                     keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])


def const(value):
    return gast.Constant(value=value, kind=None)


def tuple_(elements, ctx=None):
    return gast.Tuple(elts=list(elements), ctx=ctx or gast.Load())


def names_tuple(identifiers):
    """`(a, b)` of loads."""
    return tuple_([name(i) for i in identifiers])


def strings_tuple(identifiers):
    """`('a', 'b')`."""
    return tuple_([const(i) for i in identifiers])


def targets(identifiers):
    """The assignment target for outputs: `a` or `a, b`."""
    if len(identifiers) == 1:
        return store(identifiers[0])
    return tuple_([store(i) for i in identifiers], gast.Store())


def values(identifiers):
    """What a body returns for its outputs: `a` or `(a, b)`."""
    if len(identifiers) == 1:
        return name(identifiers[0])
    return names_tuple(identifiers)


def assign(target, value):
    return gast.Assign(targets=[target], value=value, type_comment=None)


def expr_stmt(value):
    return gast.Expr(value=value)


def ret(value):
    return gast.Return(value=value)


def params(identifiers):
    return gast.arguments(
        args=[gast.Name(id=i, ctx=gast.Param(), annotation=None, type_comment=None) for i in identifiers],
        posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def function(function_name, parameters, body):
    return gast.FunctionDef(name=function_name, args=params(parameters), body=body or [gast.Pass()],
                            decorator_list=[], returns=None, type_comment=None, type_params=[])


def lambda_(body):
    """`lambda: body`, marked as generated: it runs at once where it is
    made, so reads inside it are reads of the enclosing scope."""
    node = gast.Lambda(args=params([]), body=body)
    node.generated = True
    return node


def not_(operand):
    return gast.UnaryOp(op=gast.Not(), operand=operand)


_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def located(nodes, origin):
    """Gives `origin`'s position to every node under `nodes` that has none.
    A node that has a position is not entered: user code has positions, and
    generated code gets them when it is built."""
    if origin is None or getattr(origin, "lineno", None) is None:
        return nodes
    position = {field: getattr(origin, field, None) for field in _POSITION}
    if origin.end_lineno != origin.lineno:
        # Only the first line: CPython reports a call of `ag__.name(...)` at
        # the last line of the attribute, which would be the statement's
        # last line, while errors should name the `if` or `while` line.
        position["end_lineno"], position["end_col_offset"] = origin.lineno, origin.col_offset
    stack = list(nodes) if isinstance(nodes, list) else [nodes]
    while stack:
        node = stack.pop()
        if "lineno" in node._attributes:
            if getattr(node, "lineno", None) is not None:
                continue
            node.__dict__.update(position)  # (positions are plain instance attributes)
        stack.extend(children(node))
    return nodes


def children(node):
    """The child nodes of `node`, as a list: `gast.iter_child_nodes` without
    its two generators and without the leaves that have no fields (`Load`,
    operators), which no walk of the converters looks at. Tree walks are a
    good part of conversion time."""
    fields = _NODE_FIELDS.get(node.__class__)
    if fields is None:
        fields = _node_fields(node.__class__)
    found = []
    append = found.append
    AST = gast.AST
    for field in fields:
        child = getattr(node, field, None)
        if type(child) is list:
            for item in child:
                if isinstance(item, AST):
                    append(item)
        elif isinstance(child, AST) and child._fields:
            append(child)
    return found


# The fields that hold a string, a number or a context in every class that
# has them (and a Constant's value): `children` does not look at them.
_LEAF_FIELDS = frozenset({"ctx", "id", "attr", "type_comment", "kind", "level", "module", "conversion", "simple",
                          "is_async"})
_NODE_FIELDS = {}  # node class -> its fields that may hold nodes


def _node_fields(cls):
    fields = _NODE_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS
                                       and not (cls is gast.Constant and f == "value"))
    return fields


def nodes(tree):
    """Every node of `tree` (itself included) but the leaves without
    fields, as a list in no set order: `gast.walk` without its deque and
    generators, for the walks that only test each node."""
    found = [tree]
    for node in found:  # (the loop reaches what it appends)
        found.extend(children(node))
    return found
