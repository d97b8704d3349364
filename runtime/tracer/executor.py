"""Runs a graph with numpy by compiling it once to Python source.

Every node becomes one statement on local variables (`v7 = add(v3, 2.0)`),
a `cond` becomes an `if`/`else`, a `while_loop` a `while` loop; numpy
callables and constants are bound as closure names. Running a graph is then
a single call of a Python function: no per-op dispatch, dictionary lookup or
shape check at run time.
"""

import math
import operator
import re

import numpy as np
from autograph.runtime.tracer import inplace, passes, trees
from autograph.runtime.tracer.casting import cast
from autograph.runtime.tracer.errors import TracingError
from autograph.runtime.tracer.results import protect_results
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


_TOKEN = re.compile("\x01(\\d+)\x02")


def _regs(text):
    """The registers a piece of generated text reads."""
    if "\x01" not in text:
        return set()
    return {int(m) for m in _TOKEN.findall(text)}


def _group(text):
    """`text` as an operand of `not`: a name as is, an expression in parentheses."""
    return text if text.isidentifier() else f"({text})"


def _atomic(text):
    """True if `text` is a name or a call `f(...)`: no parentheses needed."""
    if text.isidentifier():
        return True
    head, paren, _ = text.partition("(")
    if not paren or not head.isidentifier() or not text.endswith(")"):
        return False
    depth = 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
        elif c in "'\"":
            return False
    return True


def _pyop(node):
    return node.attrs.get("pyop", node.fn)


def _inside(value, scope):
    """True if `value` is defined inside `scope` (a loop's block)."""
    if type(value) is not SymbolicArray:
        return False
    block = value.node.block
    return block is not None and scope is not None and scope.encloses(block)


def _const_value(value):
    if type(value) is SymbolicArray:
        node = value.node
        return node.attrs["value"] if node.kind == "const" else None
    return value


class _ForLoop:
    """How a counted `while_loop` node runs as a Python `for`: `form` is
    "iter" (`for v in x`), "enumerate" (`for i, v in enumerate(x)`) or
    "range" (`for i in range(start, stop, step)`)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def _for_loop(node, used):
    """The `for` form of a `while_loop` node whose loop variable `i` (a
    Python int) is only counted from `start` by a constant `step` while
    `i < stop` (stop loop-invariant), possibly `& more` (a `break` flag),
    and is not used after the loop; None when the loop is not of that form."""
    params = node.attrs["params"]
    scope = node.attrs.get("scope")
    test, body = node.blocks
    if scope is None or not test.outputs or any(n.has_effect() for n in test.nodes):
        return None
    flag = test.outputs[0]
    if type(flag) is not SymbolicArray or flag.node.block is not test or flag.node.kind != "op":
        return None
    cmp, conj, more = flag.node, None, None
    if (_pyop(cmp) is operator.and_ or cmp.fn is np.logical_and) and len(cmp.args) == 2 \
            and not cmp.kwargs:
        first, more = cmp.args
        if type(first) is not SymbolicArray or first.node.block is not test \
                or first.node.kind != "op" or type(more) is not SymbolicArray:
            return None
        conj, cmp = cmp, first.node
    op = _pyop(cmp)
    if op not in (operator.lt, operator.gt) or cmp.kwargs or len(cmp.args) != 2:
        return None
    counter, stop = cmp.args
    k = next((j for j, p in enumerate(params) if p is counter), None)
    if k is None or not counter.weak or counter.dtype.kind not in "iu" \
            or node.outputs[k] in used or more is counter:
        return None
    if type(stop) is SymbolicArray:
        if stop.shape != () or stop.dtype.kind not in "iu" or _inside(stop, scope):
            return None
    elif type(stop) is not int:
        return None
    inc = body.outputs[k]
    if type(inc) is not SymbolicArray or inc.node.block is not body or inc.node.kind != "op":
        return None
    inc = inc.node
    if _pyop(inc) is not operator.add or inc.kwargs or len(inc.args) != 2 \
            or inc.args[0] is not counter:
        return None
    step = inc.args[1]
    if type(step) is not int or step == 0 or (step > 0) != (op is operator.lt):
        return None
    for n in test.nodes:
        if n is not cmp and n is not conj and any(v is counter for v in n.inputs()):
            return None
    if conj is not None and sum(1 for n in test.nodes
                                for v in n.inputs() if v is cmp.outputs[0]) != 1:
        return None
    # How the body reads the counter: `x[i]` of one loop-invariant array, or otherwise.
    items, arrays, other = [], set(), False
    for j, out in enumerate(body.outputs):
        if out is counter and j != k:
            other = True
    for n in body.walk():
        if n is inc:
            continue
        for b in n.blocks:
            if any(v is counter for v in b.outputs):
                other = True
        if not any(v is counter for v in n.inputs()):
            continue
        if n.kind == "op" and n.name == "getitem" and n.args[1] is counter \
                and counter is not n.args[0] and len(n.outputs) == 1:
            items.append(n)
            arrays.add(n.args[0])
        else:
            other = True
    start = node.args[k]
    fields = dict(index=k, cmp=cmp, conj=conj, more=more, inc=inc, start=start, stop=stop,
                  step=step, items=[], array=None)
    if len(arrays) == 1 and step == 1 and _const_value(start) == 0 and type(_const_value(start)) is int:
        (x,) = arrays
        if type(x) is SymbolicArray and not x.weak and x.shape and not _inside(x, scope) and (
                (type(stop) is int and x.shape[0] == stop)
                or (type(stop) is SymbolicArray and stop.node.kind == "op" and stop.node.fn is len
                    and len(stop.node.args) == 1 and stop.node.args[0] is x)):
            fields.update(items=items, array=x)
            return _ForLoop(form="enumerate" if other else "iter", **fields)
    return _ForLoop(form="range", **fields)


class _Codegen:
    """Compiles a graph to structured statements on registers, allocates the
    registers to Python names (coalescing copies whose variables do not
    interfere) and prints the statements.

    Statements: ("line", defs, multi, text) | ("move", dsts, srcs, weight) |
    ("if", test, then, else) | ("loop", head, test, flag, body) with head
    None (a `while`) or (defs, header text) (a `for`) | ("return", text).
    Registers appear in texts as tokens "\\x01<n>\\x02"."""

    def __init__(self, plan=None, used=()):
        self.regs = {}
        self.text = {}
        self.count = 0
        self.namespace = {}
        self.fn_names = {}
        self.plan = plan or inplace.Plan()
        self.used = used
        self.depth = 0
        self.skip = set()
        self.adj = {}
        self.parent = []
        self.uses = {}
        self.defs = {}
        self.inline = {}

    def reg(self, value):
        r = self.regs.get(value)
        if r is None:
            r = self.regs[value] = self.count
            self.count += 1
        return r

    def var(self, value):
        text = self.text.get(value)
        if text is not None:
            return text
        return f"\x01{self.reg(value)}\x02"

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

    def truth(self, node):
        """A cheaper expression with the truth value of the node's result
        (`x != 0` of a scalar is `x`), for a loop test; or None."""
        if _pyop(node) is operator.ne and len(node.args) == 2 and not node.kwargs:
            x, zero = node.args
            if type(x) is SymbolicArray and x.shape == () and x.dtype.kind in "biuf" \
                    and type(zero) in (int, float) and zero == 0:
                return self.var(x)
        return None

    # Graph to statements.

    def block(self, block, skip=()):
        stmts = []
        for node in block.nodes:
            kind = node.kind
            if node.id in self.skip or node in skip:
                continue
            if kind == "const":
                self.text[node.outputs[0]] = self.render(node.attrs["value"])
            elif kind == "op":
                if node.id in self.plan.in_place:
                    target, index, value = node.args
                    name = self.render(target)
                    stmts.append(("line", [], False,
                                  f"{name}[{self.render(index)}] = {self.render(value)}"))
                    self.regs[node.outputs[0]] = self.reg(target)
                    continue
                rhs = self.call(node)
                outs = [self.reg(v) for v in node.outputs]
                stmts.append(("line", outs, len(outs) != 1 or bool(node.attrs.get("multi")), rhs))
            elif kind == "cond":
                outs = [self.reg(v) for v in node.outputs]
                test = self.render(node.args[0])
                branches = []
                for b in node.blocks:
                    inner = self.block(b)
                    inner.append(("move", outs, [self.render(v) for v in b.outputs], self.depth))
                    branches.append(inner)
                stmts.append(("if", test, branches[0], branches[1]))
            elif kind == "while":
                stmts.extend(self.loop(node))
            else:
                raise TracingError(f"cannot run a node of kind {kind!r}")
        return stmts

    def loop(self, node):
        params = node.attrs["params"]
        test, body = node.blocks
        form = _for_loop(node, self.used)
        k = form.index if form is not None else -1
        regs = [self.reg(p) for p in params]
        inits = [self.render(v) for v in node.args]
        for i in self.plan.entry_copies.get(node.id, ()):
            # The loop updates this variable in place: its own buffer.
            inits[i] = f"{self.bind(np.array, 'array')}({inits[i]})"
        keep = [i for i in range(len(params)) if i != k]
        entry = ("move", [regs[i] for i in keep], [inits[i] for i in keep], self.depth)
        self.depth += 1
        if form is None:
            head = None
            test_stmts = self.block(test)
            flag_node = test.outputs[0].node if type(test.outputs[0]) is SymbolicArray else None
            flag = self.render(test.outputs[0])
            if len(test_stmts) == 1 and test_stmts[0][0] == "line" and flag_node is not None \
                    and test_stmts[0][1] == [self.regs.get(test.outputs[0])] \
                    and not test_stmts[0][2]:
                better = self.truth(flag_node)
                if better is not None:
                    test_stmts = [("line", test_stmts[0][1], False, better)]
        else:
            if form.form in ("iter", "enumerate"):
                item = self.reg(form.items[0].outputs[0])
                for n in form.items:
                    self.skip.add(n.id)
                    self.regs[n.outputs[0]] = item
                if form.form == "iter":
                    head = ([item], f"for \x01{item}\x02 in {self.render(form.array)}:")
                else:
                    head = ([regs[k], item], f"for \x01{regs[k]}\x02, \x01{item}\x02 in "
                                             f"{self.bind(enumerate, 'enumerate')}"
                                             f"({self.render(form.array)}):")
            else:
                start, stop = self.render(form.start), self.render(form.stop)
                bounds = stop if start == "0" and form.step == 1 else \
                    f"{start}, {stop}" if form.step == 1 else f"{start}, {stop}, {form.step}"
                head = ([regs[k]], f"for \x01{regs[k]}\x02 in {self.bind(range, 'range')}({bounds}):")
            test_stmts = self.block(test, skip=(form.cmp, form.conj))
            flag = None if form.more is None else self.render(form.more)
            self.skip.add(form.inc.id)
        body_stmts = self.block(body)
        # Copies into loop variables first (weight +1), then those of branches.
        body_stmts.append(("move", [regs[i] for i in keep],
                           [self.render(body.outputs[i]) for i in keep], self.depth + 0.5))
        self.depth -= 1
        for out, r in zip(node.outputs, regs):
            self.regs[out] = r
        return [entry, ("loop", head, test_stmts, flag, body_stmts)]

    # Register allocation: liveness, interference, coalescing of moves.

    def interfere(self, defs, live, exclude=()):
        adj = self.adj
        for d in defs:
            for x in live:
                if x != d and x not in exclude:
                    adj.setdefault(d, set()).add(x)
                    adj.setdefault(x, set()).add(d)

    def live(self, stmts, out):
        """Live registers before `stmts` given those live after; records
        interference at every definition."""
        live = set(out)
        for s in reversed(stmts):
            kind = s[0]
            if kind == "line":
                defs = s[1]
                if defs:
                    self.interfere(defs, live | set(defs))
                    live.difference_update(defs)
                live |= _regs(s[3])
            elif kind == "move":
                dsts, srcs = s[1], s[2]
                after = live | set(dsts)
                reads = set()
                for d, src in zip(dsts, srcs):
                    used = _regs(src)
                    bare = used if len(used) == 1 and src == f"\x01{min(used)}\x02" else ()
                    self.interfere([d], after, bare)
                    reads |= used
                live.difference_update(dsts)
                live |= reads
            elif kind == "if":
                live = self.live(s[2], live) | self.live(s[3], live) | _regs(s[1])
            elif kind == "loop":
                head, test, flag, body = s[1:]
                after = set(live)
                top = set(after)
                if head is not None:
                    top |= _regs(head[1]) - set(head[0])
                while True:
                    body_in = self.live(body, top)
                    test_out = after | body_in | (_regs(flag) if flag else set())
                    test_in = self.live(test, test_out)
                    if head is not None:
                        self.interfere(head[0], test_in | set(head[0]))
                        new = after | (_regs(head[1]) - set(head[0])) | (test_in - set(head[0]))
                    else:
                        new = test_in
                    if new <= top:
                        break
                    top |= new
                live = top
            elif kind == "return":
                live |= _regs(s[1])
        return live

    def find(self, r):
        parent = self.parent
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    def allocate(self, stmts, params):
        """Coalesces move-related registers that do not interfere."""
        self.live(stmts, set())
        for i, a in enumerate(params):
            self.interfere([a], params[i + 1:])
        self.parent = list(range(self.count))
        moves = []

        def collect(block):
            for s in block:
                if s[0] == "move":
                    for d, src in zip(s[1], s[2]):
                        used = _regs(src)
                        if len(used) == 1 and src == f"\x01{next(iter(used))}\x02":
                            moves.append((-s[3], len(moves), d, next(iter(used))))
                elif s[0] == "if":
                    collect(s[2])
                    collect(s[3])
                elif s[0] == "loop":
                    collect(s[2])
                    collect(s[4])
        collect(stmts)
        adj = {r: set(n) for r, n in self.adj.items()}
        for _, _, d, src in sorted(moves):
            a, b = self.find(d), self.find(src)
            if a == b or b in adj.get(a, ()):
                continue
            if a > b:
                a, b = b, a
            self.parent[b] = a
            for n in adj.pop(b, ()):
                adj[n].discard(b)
                adj[n].add(a)
                adj.setdefault(a, set()).add(n)

    # Printing.

    def name(self, r):
        return f"v{self.find(r)}"

    def sub(self, text):
        if "\x01" not in text:
            return text
        whole = _TOKEN.fullmatch(text) is not None

        def replace(m):
            r = self.find(int(m.group(1)))
            expr = self.inline.pop(r, None)
            if expr is None:
                return f"v{r}"
            return expr if whole or _atomic(expr) else f"({expr})"
        return _TOKEN.sub(replace, text)

    def count_uses(self, stmts, params):
        """How often each register (after coalescing) is read and defined."""
        uses, defs = self.uses, self.defs
        for r in params:
            defs[self.find(r)] = defs.get(self.find(r), 0) + 2

        def read(text):
            for m in _TOKEN.findall(text):
                r = self.find(int(m))
                uses[r] = uses.get(r, 0) + 1

        def define(regs, weight=1):
            for r in regs:
                r = self.find(r)
                defs[r] = defs.get(r, 0) + weight

        for s in stmts:
            kind = s[0]
            if kind == "line":
                define(s[1])
                read(s[3])
            elif kind == "move":
                define(s[1])
                for src in s[2]:
                    read(src)
            elif kind == "if":
                read(s[1])
                self.count_uses(s[2], ())
                self.count_uses(s[3], ())
            elif kind == "loop":
                head, test, flag, body = s[1:]
                if head is not None:
                    define(head[0], 2)   # never inlined
                    read(head[1])
                if flag is not None:
                    read(flag)
                self.count_uses(test, ())
                self.count_uses(body, ())
            elif kind == "return":
                read(s[1])

    def inlinable(self, s, following):
        """The register that line `s` defines if it is read once, by the text
        `following` evaluated right after it (it then becomes an expression
        there: one store and load fewer); else None."""
        if s[0] != "line" or len(s[1]) != 1 or s[2] or following is None:
            return None
        r = self.find(s[1][0])
        if self.uses.get(r) != 1 or self.defs.get(r) != 1:
            return None
        if not any(self.find(int(m)) == r for m in _TOKEN.findall(following)):
            return None
        return r

    @staticmethod
    def evaluated(s):
        """The text of statement `s` evaluated first when it runs, or None."""
        kind = s[0]
        if kind == "line" or kind == "if" or kind == "return":
            return s[3] if kind == "line" else s[1]
        if kind == "move":
            return " ".join(s[2])
        return None

    def emit(self, stmts, indent, lines, trailing=None):
        """Prints `stmts`; `trailing`: the text evaluated right after them."""
        pad = "    " * indent
        for i, s in enumerate(stmts):
            kind = s[0]
            following = self.evaluated(stmts[i + 1]) if i + 1 < len(stmts) else trailing
            r = self.inlinable(s, following)
            if r is not None:
                self.inline[r] = self.sub(s[3])
                continue
            if kind == "line":
                defs, multi, text = s[1], s[2], self.sub(s[3])
                if not defs:
                    lines.append(pad + text)
                elif multi:
                    lines.append(pad + "".join(self.name(d) + ", " for d in defs) + "= " + text)
                else:
                    lines.append(f"{pad}{self.name(defs[0])} = {text}")
            elif kind == "move":
                pairs = [(self.name(d), self.sub(src)) for d, src in zip(s[1], s[2])]
                pairs = [(d, src) for d, src in pairs if d != src]
                if len(pairs) > 1 and any(re.search(rf"\b{d}\b", src)
                                          for i, (d, _) in enumerate(pairs)
                                          for _, src in pairs[i + 1:]):
                    lines.append(pad + ", ".join(d for d, _ in pairs) + " = "
                                 + ", ".join(src for _, src in pairs))
                else:
                    lines.extend(f"{pad}{d} = {src}" for d, src in pairs)
            elif kind == "if":
                test = self.sub(s[1])
                then, other = [], []
                self.emit(s[2], indent + 1, then)
                self.emit(s[3], indent + 1, other)
                if then:
                    lines.append(f"{pad}if {test}:")
                    lines.extend(then)
                    if other:
                        lines.append(f"{pad}else:")
                        lines.extend(other)
                elif other:
                    lines.append(f"{pad}if not {_group(test)}:")
                    lines.extend(other)
            elif kind == "loop":
                head, test, flag, body = s[1:]
                inner = []
                if head is None:
                    test_lines = self.emit(test, indent + 1, [], flag)
                    if not test_lines:
                        # The test is one expression: `while v3 < 200:`.
                        lines.append(f"{pad}while {self.sub(flag)}:")
                    else:
                        lines.append(f"{pad}while True:")
                        inner.extend(test_lines)
                        inner.append(f"{pad}    if not {_group(self.sub(flag))}:")
                        inner.append(f"{pad}        break")
                else:
                    lines.append(pad + self.sub(head[1]))
                    self.emit(test, indent + 1, inner, flag)
                    if flag is not None:
                        inner.append(f"{pad}    if not {_group(self.sub(flag))}:")
                        inner.append(f"{pad}        break")
                self.emit(body, indent + 1, inner)
                lines.extend(inner or [pad + "    pass"])
            elif kind == "return":
                lines.append(f"{pad}return {self.sub(s[1])}")
        return lines


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
    used = passes.used_values(graph)
    used.update(v for v in outputs if type(v) is SymbolicArray)
    gen = _Codegen(inplace.analyze(graph), used)
    params = [gen.reg(p) for p in graph.params]
    stmts = gen.block(graph)
    if bare and len(outputs) == 1:
        stmts.append(("return", gen.render(outputs[0])))
    else:
        stmts.append(("return", "(" + "".join(gen.render(v) + ", " for v in outputs) + ")"))
    gen.allocate(stmts, params)
    gen.count_uses(stmts, params)
    lines = gen.emit(stmts, 1, [])
    source = (f"def run_{_ident(graph.name)}({', '.join(gen.name(p) for p in params)}):\n"
              + "\n".join(lines) + "\n")
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
        protect_results(graph, wanted, clone)
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
    from autograph.runtime.tracer.graph import format_type
    name = f"placeholder {placeholder.name!r}" if placeholder.name else "a placeholder"
    array = cast(value, placeholder.dtype, f"the value fed to {name} ({format_type(placeholder)})")
    shape = placeholder.shape
    if array.ndim != len(shape) or any(d is not None and d != a for d, a in zip(shape, array.shape)):
        raise ValueError(
            f"cannot feed a value of shape {array.shape} to a placeholder of shape "
            f"({', '.join('None' if d is None else str(d) for d in shape)})")
    return array
