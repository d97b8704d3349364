"""The graph IR: nodes, blocks (the bodies of `cond` and `while_loop`), graphs.

A `Graph` is a `Block` whose parameters are the placeholders. A block is an
ordered list of nodes plus its output values; a node reads values defined
earlier in its own block or in an enclosing block (lexical scoping), so a
branch or loop body refers to outer values directly. Kinds of node:

  op           `fn(*args, **kwargs)`: a numpy callable; args may nest values
  const        a constant value
  placeholder  a graph input
  param        a loop variable of a `while_loop` (owned by that node)
  cond         blocks = [true_block, false_block], args = (pred,)
  while        blocks = [test_block, body_block], args = initial values;
               attrs["params"] are the loop variables both blocks read

`str(graph)` prints one node per line; `graph.to_dot()` gives Graphviz text.
"""

import itertools

import numpy as np
from autograph.runtime.tracer import trees
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["Block", "Graph", "Node", "format_type"]

_ids = itertools.count()


class Node:
    __slots__ = (
        "args",
        "attrs",
        "block",
        "blocks",
        "effect",
        "fn",
        "id",
        "kind",
        "kwargs",
        "loc",
        "name",
        "outputs",
    )

    def __init__(self, kind, name, fn=None, args=(), kwargs=None, blocks=(), effect=False,
                 attrs=None):
        self.kind = kind
        self.name = name
        self.fn = fn
        self.args = args
        self.kwargs = kwargs or {}
        self.outputs = []
        self.blocks = list(blocks)
        self.block = None
        self.effect = effect
        self.attrs = attrs or {}
        self.id = next(_ids)
        self.loc = None   # (file, line) of the user's code that traced it

    def inputs(self):
        """The symbolic values this node reads directly (not through its blocks)."""
        found = trees.leaves(self.args) + trees.leaves(self.kwargs)
        return [v for v in found if type(v) is SymbolicArray]

    def has_effect(self):
        if self.effect:
            return True
        return any(n.has_effect() for b in self.blocks for n in b.nodes)

    def __repr__(self):
        return f"<Node {self.kind} {self.name} #{self.id}>"


class Block:
    """An ordered list of nodes, the values it produces and its parameters."""

    def __init__(self, parent=None, label="block"):
        self.parent = parent
        self.label = label
        self.params = []
        self.nodes = []
        self.outputs = []
        self.active = False

    def encloses(self, other):
        """True if `other` is this block or nested inside it."""
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False

    def walk(self):
        """Every node of this block and of nested blocks, in order."""
        for node in self.nodes:
            yield node
            for b in node.blocks:
                yield from b.walk()


def format_type(value):
    """`float32[3,4]` for an array value, `int` for a Python-scalar value."""
    if value.weak:
        return _WEAK_NAMES[value.dtype.kind]
    dims = ",".join("?" if d is None else str(d) for d in value.static_shape)
    return f"{value.dtype.name}[{dims}]"


_WEAK_NAMES = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


def _format_const(obj):
    if isinstance(obj, np.ndarray):
        if obj.size <= 6:
            return np.array2string(obj, separator=", ").replace("\n", "")
        return f"<{obj.dtype.name}[{','.join(map(str, obj.shape))}]>"
    if isinstance(obj, np.dtype):
        return repr(obj.name)
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return repr(np.dtype(obj).name)
    if isinstance(obj, np.generic):
        return repr(obj.item())
    if callable(obj):
        return getattr(obj, "__name__", repr(obj))
    return repr(obj)


class _Namer:
    def __init__(self):
        self.names = {}
        self.used = set()
        self.counter = 0

    def __call__(self, value):
        name = self.names.get(value)
        if name is None:
            hint = value.name
            if hint and hint.isidentifier() and hint not in self.used:
                name = hint
            else:
                name = str(self.counter)
                self.counter += 1
            self.used.add(name)
            self.names[value] = name
        return name


def _render(obj, ref):
    """Source-like text for an argument tree: values through `ref`."""
    t = type(obj)
    if t is SymbolicArray:
        return ref(obj)
    if t is tuple:
        inner = ", ".join(_render(x, ref) for x in obj)
        return f"({inner},)" if len(obj) == 1 else f"({inner})"
    if t is list:
        return "[" + ", ".join(_render(x, ref) for x in obj) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {_render(v, ref)}" for k, v in obj.items()) + "}"
    if t is slice:
        parts = [("" if p is None else _render(p, ref)) for p in (obj.start, obj.stop, obj.step)]
        return ":".join(parts[:2]) + (":" + parts[2] if parts[2] else "")
    if obj is Ellipsis:
        return "..."
    return _format_const(obj)


def _call_text(node, ref):
    if node.kind == "const":
        return f"constant({_format_const(node.attrs['value'])})"
    if node.name == "getitem":
        target, index = node.args
        if type(index) is not tuple:
            index = (index,)
        return f"{ref(target)}[{', '.join(_render(i, ref) for i in index)}]"
    parts = [_render(a, ref) for a in node.args]
    parts += [f"{k}={_render(v, ref)}" for k, v in node.kwargs.items()]
    return f"{node.name}({', '.join(parts)})"


def _format_block(block, ref, indent, lines):
    pad = "  " * indent
    for node in block.nodes:
        outs = ", ".join("%" + ref(v) for v in node.outputs)
        types = ", ".join(format_type(v) for v in node.outputs)
        lhs = f"{outs} = " if outs else ""
        rhs_types = f" : {types}" if types else ""
        if node.kind == "cond":
            lines.append(f"{pad}{lhs}cond({'%' + ref(node.args[0])}){rhs_types}")
            for label, b in zip(("then", "else"), node.blocks, strict=True):
                lines.append(f"{pad}  {label}:")
                _format_block(b, ref, indent + 2, lines)
        elif node.kind == "while":
            params = node.attrs["params"]
            inits = ", ".join(_render(v, lambda x: "%" + ref(x)) for v in node.args)
            lines.append(f"{pad}{lhs}while_loop({inits}){rhs_types}")
            sig = ", ".join(f"%{ref(p)}: {format_type(p)}" for p in params)
            for label, b in zip(("test", "body"), node.blocks, strict=True):
                lines.append(f"{pad}  {label}({sig}):")
                _format_block(b, ref, indent + 2, lines)
        else:
            lines.append(f"{pad}{lhs}{_call_text(node, lambda x: '%' + ref(x))}{rhs_types}")
    if block.outputs or block.parent is not None:
        lines.append(f"{pad}return " + ", ".join("%" + ref(v) for v in block.outputs))


class Graph(Block):
    """A traced program: placeholders (params), nodes and outputs."""

    def __init__(self, name="graph"):
        super().__init__(None, "graph")
        self.name = name

    def __str__(self):
        ref = _Namer()
        sig = ", ".join(f"%{ref(p)}: {format_type(p)}" for p in self.params)
        lines = [f"graph {self.name}({sig}):"]
        _format_block(self, ref, 1, lines)
        return "\n".join(lines)

    def clone(self):
        """A copy of this graph and the map {old value: new value}."""
        mapping = {}
        g = Graph(self.name)
        for p in self.params:
            node = Node("placeholder", "placeholder")
            node.block = g
            q = SymbolicArray(node, 0, p.static_shape, p.dtype, p.weak, p.name)
            node.outputs.append(q)
            g.params.append(q)
            mapping[p] = q
        _clone_block(self, g, mapping)
        g.outputs = [mapping.get(v, v) for v in self.outputs]
        return g, mapping

    def count_nodes(self, kind=None, name=None):
        """How many nodes (in all blocks) have this kind and/or op name."""
        return sum(1 for n in self.walk()
                   if (kind is None or n.kind == kind) and (name is None or n.name == name))

    def to_dot(self):
        """The graph as Graphviz `dot` text; cond/while bodies are clusters."""
        ref = _Namer()
        lines = [f'digraph "{self.name}" {{', "  node [shape=box, fontname=monospace];"]
        producer = {}

        def node_id(node):
            return f"n{node.id}"

        for p in self.params:
            producer[p] = f"p{id(p)}"
            lines.append(f'  p{id(p)} [label="%{ref(p)}: {format_type(p)}", shape=ellipse];')

        def emit_block(block, depth):
            pad = "  " * depth
            for node in block.nodes:
                label = node.kind if node.kind in ("cond", "while") else node.name
                types = ", ".join(format_type(v) for v in node.outputs)
                text = f"{label}\\n{types}" if types else label
                lines.append(f'{pad}{node_id(node)} [label="{_escape(text)}"];')
                for v in node.inputs():
                    if v in producer:
                        lines.append(f"{pad}{producer[v]} -> {node_id(node)};")
                for v in node.outputs:
                    producer[v] = node_id(node)
                for p in node.attrs.get("params", ()):
                    producer[p] = node_id(node)
                for i, b in enumerate(node.blocks):
                    lines.append(f"{pad}subgraph cluster_{node.id}_{i} {{")
                    lines.append(f'{pad}  label="{node.kind} {b.label}";')
                    emit_block(b, depth + 1)
                    out = f"o{node.id}_{i}"
                    lines.append(f'{pad}  {out} [label="return", shape=plaintext];')
                    for v in b.outputs:
                        if v in producer:
                            lines.append(f"{pad}  {producer[v]} -> {out};")
                    lines.append(f"{pad}}}")
                    lines.append(f"{pad}{out} -> {node_id(node)} [style=dashed];")

        emit_block(self, 1)
        lines.append('  out [label="outputs", shape=ellipse];')
        for v in self.outputs:
            if v in producer:
                lines.append(f"  {producer[v]} -> out;")
        lines.append("}")
        return "\n".join(lines)


def _clone_block(src, dst, mapping):

    def sub(v):
        return mapping.get(v, v) if type(v) is SymbolicArray else v

    for node in src.nodes:
        attrs = dict(node.attrs)
        new = Node(node.kind, node.name, node.fn, trees.map_leaves(sub, node.args),
                   trees.map_leaves(sub, node.kwargs), (), node.effect, attrs)
        new.block = dst
        new.loc = node.loc
        parent = dst
        if node.kind == "while":
            scope = Block(dst, "while_loop")
            params = []
            for p in node.attrs["params"]:
                pn = Node("param", "param")
                pn.block = scope
                q = SymbolicArray(pn, 0, p.static_shape, p.dtype, p.weak, p.name)
                pn.outputs.append(q)
                mapping[p] = q
                params.append(q)
            attrs["params"] = params
            attrs["scope"] = scope
            parent = scope
        for b in node.blocks:
            nb = Block(parent, b.label)
            _clone_block(b, nb, mapping)
            nb.outputs = [sub(v) for v in b.outputs]
            new.blocks.append(nb)
        for v in node.outputs:
            q = SymbolicArray(new, v.index, v.static_shape, v.dtype, v.weak, v.name)
            new.outputs.append(q)
            mapping[v] = q
        dst.nodes.append(new)


def _escape(text):
    return text.replace('"', '\\"')
