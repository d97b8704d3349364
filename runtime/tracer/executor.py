"""Runs a graph with numpy by compiling it once to Python source.

Every node becomes one statement on local variables (`v7 = add(v3, 2.0)`),
a `cond` becomes an `if`/`else`, a `while_loop` a `while` loop; numpy
callables and constants are bound as closure names. Running a graph is then
a single call of a Python function: no per-op dispatch, dictionary lookup or
shape check at run time.
"""

import math
import operator

import numpy as np
from autograph.runtime.tracer import inplace, trees
from autograph.runtime.tracer.errors import TracingError
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["CompiledGraph", "compile_graph", "run_fetches"]


_INFIX = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.lt: "<", operator.le: "<=", operator.gt: ">",
    operator.ge: ">=", operator.eq: "==", operator.ne: "!=",
}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
_CALLS = {operator.abs: "abs", divmod: "divmod"}
_LOGICAL = {np.logical_and: "&", np.logical_or: "|"}


def _plain(x):
    """An operand of an infix operator that keeps numpy's ufunc semantics:
    not a container (`[1] * n` repeats a list) and not a Python complex
    (`1j * np.float64(2)` is Python's complex product, not numpy's)."""
    t = type(x)
    if t is SymbolicArray:
        return not (x.weak and x.dtype.kind == "c")
    return t is bool or t is int or t is float


def _strong_bool(x):
    return type(x) is SymbolicArray and x.dtype.kind == "b" and not x.weak


def _bool_operand(x):
    return type(x) is bool or (type(x) is SymbolicArray and x.dtype.kind == "b")


class _Codegen:
    def __init__(self, plan=None):
        self.names = {}
        self.namespace = {}
        self.fn_names = {}
        self.lines = []
        self.counter = 0
        self.plan = plan or inplace.Plan()

    def var(self, value):
        name = self.names.get(value)
        if name is None:
            name = self.names[value] = f"v{len(self.names)}"
        return name

    def bind(self, obj, hint="k"):
        key = id(obj)
        name = self.fn_names.get(key)
        if name is None:
            base = "".join(c if c.isalnum() else "_" for c in hint)[:24] or "k"
            name = f"{base}_{len(self.namespace)}"
            self.namespace[name] = obj
            self.fn_names[key] = name
        return name

    def render(self, obj):
        t = type(obj)
        if t is SymbolicArray:
            return self.var(obj)
        if t is tuple:
            return "(" + "".join(self.render(x) + ", " for x in obj) + ")"
        if t is list:
            return "[" + ", ".join(self.render(x) for x in obj) + "]"
        if t is dict:
            return "{" + ", ".join(f"{self.render(k)}: {self.render(v)}" for k, v in obj.items()) + "}"
        if t is slice:
            return f"slice({self.render(obj.start)}, {self.render(obj.stop)}, {self.render(obj.step)})"
        if obj is None or obj is Ellipsis or t is bool or t is int or t is str:
            return repr(obj)
        if t is float and math.isfinite(obj):
            return repr(obj)
        if t is np.ndarray and obj.ndim == 0:
            # A 0-d constant runs as a numpy scalar, as eager numpy gives one.
            obj = obj[()]
        return self.bind(obj, "k")

    def operand(self, obj):
        text = self.render(obj)
        return f"({text})" if text.startswith("-") else text

    def infix(self, node):
        """The node as a Python operator expression, or None."""
        fn, args = node.fn, node.args
        if node.kwargs or node.attrs.get("multi"):
            return None
        pyop = node.attrs.get("pyop", fn)
        if len(args) == 2 and pyop in _INFIX:
            if fn is pyop or all(_plain(a) for a in args):
                return f"{self.operand(args[0])} {_INFIX[pyop]} {self.operand(args[1])}"
        elif len(args) == 1 and pyop in _PREFIX:
            if fn is pyop or _plain(args[0]):
                return f"{_PREFIX[pyop]}{self.operand(args[0])}"
        elif pyop in _CALLS and (fn is pyop or all(_plain(a) for a in args)):
            return f"{_CALLS[pyop]}({', '.join(self.render(a) for a in args)})"
        elif fn in _LOGICAL and len(args) == 2 and all(_bool_operand(a) for a in args) \
                and any(_strong_bool(a) for a in args):
            # np.bool_ & bool is np.logical_and on booleans, without the ufunc call.
            return f"{self.operand(args[0])} {_LOGICAL[fn]} {self.operand(args[1])}"
        elif fn is np.logical_not and len(args) == 1 and _strong_bool(args[0]):
            return f"~{self.operand(args[0])}"
        return None

    def call(self, node):
        if node.name == "getitem":
            target, index = node.args
            return f"{self.render(target)}[{self.render(index)}]"
        text = self.infix(node)
        if text is not None:
            return text
        fname = self.bind(node.fn, getattr(node.fn, "__name__", node.name))
        parts = [self.render(a) for a in node.args]
        parts += [f"{k}={self.render(v)}" for k, v in node.kwargs.items()]
        return f"{fname}({', '.join(parts)})"

    def emit(self, line, indent):
        self.lines.append("    " * indent + line)

    @staticmethod
    def lhs(names):
        return "".join(n + ", " for n in names)

    def assign(self, targets, values, indent):
        if len(targets) == 1:
            if targets[0] != values[0]:
                self.emit(f"{targets[0]} = {values[0]}", indent)
        elif targets:
            self.emit(f"{self.lhs(targets)}= {self.lhs(values)}", indent)

    def block(self, block, indent):
        start = len(self.lines)
        for node in block.nodes:
            kind = node.kind
            if kind == "const":
                value = node.attrs["value"]
                self.names[node.outputs[0]] = self.render(value)
            elif kind == "op":
                if node.id in self.plan.in_place:
                    target, index, value = node.args
                    name = self.render(target)
                    self.emit(f"{name}[{self.render(index)}] = {self.render(value)}", indent)
                    self.names[node.outputs[0]] = name
                    continue
                outs = [self.var(v) for v in node.outputs]
                rhs = self.call(node)
                if not outs:
                    self.emit(rhs, indent)
                elif len(outs) == 1 and not node.attrs.get("multi"):
                    self.emit(f"{outs[0]} = {rhs}", indent)
                else:
                    self.emit(f"{self.lhs(outs)}= {rhs}", indent)
            elif kind == "cond":
                outs = [self.var(v) for v in node.outputs]
                self.emit(f"if {self.render(node.args[0])}:", indent)
                for i, b in enumerate(node.blocks):
                    if i == 1:
                        self.emit("else:", indent)
                    mark = len(self.lines)
                    self.block(b, indent + 1)
                    self.assign(outs, [self.render(v) for v in b.outputs], indent + 1)
                    if len(self.lines) == mark:
                        self.emit("pass", indent + 1)
            elif kind == "while":
                params = [self.var(p) for p in node.attrs["params"]]
                test, body = node.blocks
                inits = [self.render(v) for v in node.args]
                for i in self.plan.entry_copies.get(node.id, ()):
                    # The loop updates this variable in place: its own buffer.
                    inits[i] = f"{self.bind(np.array, 'array')}({inits[i]})"
                self.assign(params, inits, indent)
                test_start = len(self.lines)
                self.block(test, indent + 1)
                flag = self.render(test.outputs[0])
                if len(self.lines) == test_start + 1 and \
                        self.lines[-1].startswith("    " * (indent + 1) + flag + " = "):
                    # A one-line test: `while v3 < 200:`.
                    expr = self.lines.pop()[len("    " * (indent + 1) + flag + " = "):]
                    self.lines.insert(test_start, "    " * indent + f"while {expr}:")
                else:
                    self.lines.insert(test_start, "    " * indent + "while True:")
                    self.emit(f"if not {flag}:", indent + 1)
                    self.emit("break", indent + 2)
                mark = len(self.lines)
                self.block(body, indent + 1)
                self.assign(params, [self.render(v) for v in body.outputs], indent + 1)
                if len(self.lines) == mark:
                    self.emit("pass", indent + 1)
                for out, p in zip(node.outputs, params):
                    self.names[out] = p
            else:
                raise TracingError(f"cannot run a node of kind {kind!r}")
        return len(self.lines) > start


class CompiledGraph:
    """A graph compiled to a Python function of its placeholders."""

    def __init__(self, graph, outputs, source, fn):
        self.graph = graph
        self.outputs = outputs
        self.source = source
        self.fn = fn

    def __call__(self, *inputs):
        return self.fn(*inputs)


def compile_graph(graph, outputs=None, bare=False):
    """Compiles `graph` into a function of its placeholders returning the
    tuple of `outputs` (default: graph.outputs), or with `bare` and one
    output, that output."""
    outputs = graph.outputs if outputs is None else outputs
    gen = _Codegen(inplace.analyze(graph))
    params = [gen.var(p) for p in graph.params]
    gen.block(graph, 1)
    if bare and len(outputs) == 1:
        gen.emit(f"return {gen.render(outputs[0])}", 1)
    else:
        gen.emit(f"return ({gen.lhs(gen.render(v) for v in outputs)})", 1)
    source = f"def run_{_ident(graph.name)}({', '.join(params)}):\n" + "\n".join(gen.lines) + "\n"
    namespace = dict(gen.namespace)
    code = compile(source, f"<autograph graph {graph.name}>", "exec")
    exec(code, namespace)
    fn = namespace[f"run_{_ident(graph.name)}"]
    return CompiledGraph(graph, outputs, source, fn)


def _ident(name):
    text = "".join(c if c.isalnum() else "_" for c in str(name))
    return text if text and not text[0].isdigit() else "g_" + text


def run_fetches(graph, fetches, feed_dict):
    """`Graph.run`: computes the symbolic values in `fetches` (nested
    containers allowed) with placeholders fed from `feed_dict`."""
    from autograph.runtime.tracer import context, passes

    if graph.active:
        raise TracingError("Graph.run must be called after the `with graph:` block has exited")
    wanted = [v for v in trees.leaves(fetches) if type(v) is SymbolicArray]
    key = (tuple(id(v) for v in wanted), sum(1 for _ in graph.walk()))
    cache = graph.__dict__.setdefault("_run_cache", {})
    entry = cache.get(key)
    if entry is None:
        clone, mapping = graph.clone()
        clone.outputs = [mapping[v] for v in wanted]
        passes.optimize(clone)
        used = passes.used_values(clone)
        needed = [p for p, q in zip(graph.params, clone.params) if q in used]
        entry = cache[key] = (compile_graph(clone), needed)
    compiled, needed = entry
    feeds = []
    for p in graph.params:
        if p in feed_dict:
            feeds.append(_feed(p, feed_dict[p]))
        elif any(p is q for q in needed):
            raise TracingError(f"placeholder {p.name or ''} ({p!r}) must be fed to compute the fetches")
        else:
            feeds.append(None)
    del context
    results = iter(compiled(*feeds))
    return trees.map_leaves(lambda v: next(results) if type(v) is SymbolicArray else v, fetches)


def _feed(placeholder, value):
    array = np.asarray(value, placeholder.dtype)
    shape = placeholder.shape
    if array.ndim != len(shape) or any(d is not None and d != a for d, a in zip(shape, array.shape)):
        raise ValueError(
            f"cannot feed a value of shape {array.shape} to a placeholder of shape "
            f"({', '.join('None' if d is None else str(d) for d in shape)})")
    return array
