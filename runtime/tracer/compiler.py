"""Runs a graph with numpy by compiling it once to Python source.

Every node becomes one statement on local variables (`v7 = add(v3, 2.0)`),
a `cond` becomes an `if`/`else` (an `if` alone in an `else` an `elif`), a
`while_loop` a `while` or `for` loop; numpy callables and constants are
bound as closure names. A value read once, right after it is computed, is
inlined there as an expression, at most MAX_INLINE_DEPTH deep, so that the
code stays within the parser's limits at any graph size. Copies that `cond`
and loops need are coalesced by register allocation. Running a graph is then
a single call of a Python function: no per-op dispatch, dictionary lookup or
shape check at run time. The body runs in a `try` whose handler notes on an
error the user's line that traced the failing op.
"""

import math
import operator
import re
from collections import deque

import numpy as np
from autograph.runtime.tracer import inplace, passes
from autograph.runtime.tracer.errors import TracingError, add_traced_line
from autograph.runtime.tracer.for_loops import for_form, pyop
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["CompiledGraph", "compile_graph"]

#: How deep single-use values nest into one expression before they get a
#: statement of their own (Python's parser allows 200 parentheses).
MAX_INLINE_DEPTH = 8


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


def _group(text):
    """`text` as an operand of `not`: a name as is, an expression in parentheses."""
    return text if text.isidentifier() else f"({text})"


def _atomic(text):
    """True if `text` is a name, a call `f(...)` or an item `x[...]`: no
    parentheses needed."""
    if text.isidentifier():
        return True
    end = text[-1:]
    opening = text.find("(" if end == ")" else "[")
    if end not in ")]" or opening < 1 or not text[:opening].isidentifier():
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


class _Codegen:
    """Compiles a graph to structured statements on registers, allocates the
    registers to Python names (coalescing copies whose variables do not
    interfere) and prints the statements.

    Statements: ("line", defs, multi, text, node) | ("move", dsts, srcs, weight) |
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
        self.related = set()
        self.group = {}
        self.parent = []
        self.uses = {}
        self.defs = {}
        self.inline = {}
        self.alias = {}    # register -> the name it shares (see `emit`)
        self.split = set() # single-use registers given a statement of their own

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
        if pyop(node) is operator.ne and len(node.args) == 2 and not node.kwargs:
            x, zero = node.args
            if type(x) is SymbolicArray and x.static_shape == () and x.dtype.kind in "biuf" \
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
                                  f"{name}[{self.render(index)}] = {self.render(value)}", node))
                    self.regs[node.outputs[0]] = self.reg(target)
                    continue
                rhs = self.call(node)
                outs = [self.reg(v) for v in node.outputs]
                stmts.append(("line", outs, len(outs) != 1 or bool(node.attrs.get("multi")), rhs, node))
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
        form = for_form(node, self.used)
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
                    test_stmts = [("line", test_stmts[0][1], False, better, flag_node)]
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
            if not form.inc_read:
                self.skip.add(form.inc.id)
        body_stmts = self.block(body)
        # Copies into loop variables first (weight +1), then those of branches.
        body_stmts.append(("move", [regs[i] for i in keep],
                           [self.render(body.outputs[i]) for i in keep], self.depth + 0.5))
        self.depth -= 1
        for out, r in zip(node.outputs, regs, strict=False):
            self.regs[out] = r
        return [entry, ("loop", head, test_stmts, flag, body_stmts)]

    # Register allocation: liveness, interference, coalescing of moves.

    def interfere(self, defs, live, exclude=()):
        """Records that `defs` interfere with the registers in `live`, for
        the pairs that copies connect (directly or not): no other pair can
        ever share a name, so no other pair is looked at."""
        adj, group = self.adj, self.group
        for d in defs:
            members = group.get(d)
            if members is None:
                continue
            for x in members & live if len(members) < len(live) else live & members:
                if x != d and x not in exclude:
                    adj.setdefault(d, set()).add(x)
                    adj.setdefault(x, set()).add(d)

    def reads(self, text):
        """The move-related registers `text` reads (liveness is tracked for
        them only: they alone may share a name)."""
        if "\x01" not in text:
            return set()
        related = self.related
        return {r for r in map(int, _TOKEN.findall(text)) if r in related}

    def live(self, stmts, out):
        """Live registers before `stmts` given those live after; records
        interference at every definition."""
        regs = self.reads
        live = set(out)
        for s in reversed(stmts):
            kind = s[0]
            if kind == "line":
                defs = s[1]
                if defs:
                    self.interfere(defs, live | set(defs))
                    live.difference_update(defs)
                live |= regs(s[3])
            elif kind == "move":
                dsts, srcs = s[1], s[2]
                after = live | set(dsts)
                reads = set()
                for d, src in zip(dsts, srcs, strict=True):
                    used = regs(src)
                    bare = used if len(used) == 1 and src == f"\x01{min(used)}\x02" else ()
                    self.interfere([d], after, bare)
                    reads |= used
                live.difference_update(dsts)
                live |= reads
            elif kind == "if":
                live = self.live(s[2], live) | self.live(s[3], live) | regs(s[1])
            elif kind == "loop":
                head, test, flag, body = s[1:]
                after = set(live)
                top = set(after)
                if head is not None:
                    top |= regs(head[1]) - set(head[0])
                while True:
                    body_in = self.live(body, top)
                    test_out = after | body_in | (regs(flag) if flag else set())
                    test_in = self.live(test, test_out)
                    if head is not None:
                        self.interfere(head[0], test_in | set(head[0]))
                        new = after | (regs(head[1]) - set(head[0])) | (test_in - set(head[0]))
                    else:
                        new = test_in
                    if new <= top:
                        break
                    top |= new
                live = top
            elif kind == "return":
                live |= regs(s[1])
        return live

    def find(self, r):
        parent = self.parent
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    def allocate(self, stmts, params):
        """Coalesces move-related registers that do not interfere. Only
        registers that some copy relates are tracked; parameters (all
        defined at once) never share a name."""
        moves = []

        def collect(block):
            for s in block:
                if s[0] == "move":
                    for d, src in zip(s[1], s[2], strict=True):
                        m = _TOKEN.fullmatch(src)
                        if m is not None:
                            moves.append((-s[3], len(moves), d, int(m.group(1))))
                elif s[0] == "if":
                    collect(s[2])
                    collect(s[3])
                elif s[0] == "loop":
                    collect(s[2])
                    collect(s[4])
        collect(stmts)
        self.related = {r for m in moves for r in m[2:]}
        # The groups of registers that copies connect.
        parent = {r: r for r in self.related}

        def root(r):
            while parent[r] != r:
                parent[r] = parent[parent[r]]
                r = parent[r]
            return r
        for _, _, d, src in moves:
            parent[root(d)] = root(src)
        groups = {}
        for r in self.related:
            groups.setdefault(root(r), set()).add(r)
        self.group = {r: groups[root(r)] for r in self.related}
        self.live(stmts, set())
        self.parent = list(range(self.count))
        fixed = set(params)   # class representatives that hold a parameter
        adj = self.adj
        for _, _, d, src in sorted(moves):
            a, b = self.find(d), self.find(src)
            if a == b or b in adj.get(a, ()) or (a in fixed and b in fixed):
                continue
            if a > b:
                a, b = b, a
            self.parent[b] = a
            if b in fixed:
                fixed.add(a)
            for n in adj.pop(b, ()):
                adj[n].discard(b)
                adj[n].add(a)
                adj.setdefault(a, set()).add(n)

    # Printing.

    def name(self, r):
        r = self.find(r)
        return self.alias.get(r) or f"v{r}"

    def sub(self, text):
        """`text` with registers as names, or as the expression inlined for
        them; `self.depth_used`: the deepest inlined expression it took."""
        self.depth_used = 0
        self.nodes_used = []
        self.names_read = []
        if "\x01" not in text:
            return text
        whole = _TOKEN.fullmatch(text) is not None

        def replace(m):
            r = self.find(int(m.group(1)))
            entry = self.inline.pop(r, None)
            if entry is None:
                self.names_read.append(r)
                return self.alias.get(r) or f"v{r}"
            expr, depth, nodes, names = entry
            self.depth_used = max(self.depth_used, depth)
            self.nodes_used += nodes
            self.names_read += names
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

    def emit(self, stmts, trailing=None):
        """The printable items of `stmts`; `trailing`: the text evaluated
        right after them. Items: ("line", text, nodes) | ("if", clauses,
        else_items) with clauses [(test, items, nodes)] | ("block", header,
        items, nodes); `nodes` lists the (expression, node) pairs a line
        evaluates, for errors at run time."""
        items = []
        for i, s in enumerate(stmts):
            kind = s[0]
            following = self.evaluated(stmts[i + 1]) if i + 1 < len(stmts) else trailing
            r = self.inlinable(s, following)
            if r is not None:
                text = self.sub(s[3])
                depth = self.depth_used + 1
                nodes = self.nodes_used + [(text, s[4])]
                if depth <= MAX_INLINE_DEPTH:
                    self.inline[r] = (text, depth, nodes, self.names_read)
                    continue
                # Deep enough: a statement of its own, so that no expression
                # nests without bound (the parser's limits). It takes the
                # name of the previous such value that it reads (read only
                # here), so that a long chain keeps one array alive, not one
                # per statement.
                previous = next((q for q in self.names_read if q in self.split), None)
                if previous is not None:
                    self.split.discard(previous)
                    self.alias[r] = self.name(previous)
                self.split.add(r)
                items.append(("line", f"{self.name(r)} = {text}", nodes))
                continue
            if kind == "line":
                defs, multi, text = s[1], s[2], self.sub(s[3])
                nodes = self.nodes_used + [(text, s[4])]
                if not defs:
                    items.append(("line", text, nodes))
                elif multi:
                    items.append(("line", "".join(self.name(d) + ", " for d in defs) + "= " + text, nodes))
                else:
                    items.append(("line", f"{self.name(defs[0])} = {text}", nodes))
            elif kind == "move":
                pairs, nodes = [], []
                for d, src in zip(s[1], s[2], strict=True):
                    pair = (self.name(d), self.sub(src))
                    nodes += self.nodes_used
                    if pair[0] != pair[1]:
                        pairs.append(pair)
                if len(pairs) > 1 and _conflict(pairs):
                    items.append(("line", ", ".join(d for d, _ in pairs) + " = "
                                  + ", ".join(src for _, src in pairs), nodes))
                else:
                    # Sequential copies; an inlined expression stays with its line.
                    for d, src in pairs:
                        items.append(("line", f"{d} = {src}", nodes))
                        nodes = []
            elif kind == "if":
                test = self.sub(s[1])
                nodes = self.nodes_used
                then, other = self.emit(s[2]), self.emit(s[3])
                if not then and not other:
                    if nodes:
                        items.append(("line", test, nodes))
                    continue
                if not then:
                    if len(other) == 1 and other[0][0] == "if":
                        then = [("line", "pass", [])]
                    else:
                        test, then, other = f"not {_group(test)}", other, []
                clauses = deque([(test, then, nodes)])
                if len(other) == 1 and other[0][0] == "if":
                    # An `if` alone in an `else`: `elif`, at the same depth.
                    _, inner, other = other[0]
                    inner.appendleft(clauses[0])
                    clauses = inner
                items.append(("if", clauses, other))
            elif kind == "loop":
                head, test, flag, body = s[1:]
                inner = []
                if head is None:
                    test_items = self.emit(test, flag)
                    flag_text = self.sub(flag)
                    if not test_items:
                        # The test is one expression: `while v3 < 200:`.
                        header, nodes = f"while {flag_text}:", self.nodes_used
                    else:
                        header, nodes = "while True:", []
                        inner.extend(test_items)
                        inner.append(("if", deque([(f"not {_group(flag_text)}", [("line", "break", [])],
                                                    self.nodes_used)]), []))
                else:
                    header = self.sub(head[1])
                    nodes = self.nodes_used
                    inner.extend(self.emit(test, flag))
                    if flag is not None:
                        flag_text = self.sub(flag)
                        inner.append(("if", deque([(f"not {_group(flag_text)}", [("line", "break", [])],
                                                    self.nodes_used)]), []))
                inner.extend(self.emit(body))
                items.append(("block", header, inner or [("line", "pass", [])], nodes))
            elif kind == "return":
                items.append(("line", f"return {self.sub(s[1])}", self.nodes_used))
        return items


def _conflict(pairs):
    """True if some copy reads a name that an earlier copy of `pairs` assigns."""
    assigned = set()
    for d, src in pairs:
        if assigned and any(name in assigned for name in _NAME.findall(src)):
            return True
        assigned.add(d)
    return False


_NAME = re.compile(r"\bv\d+\b")


def _render_items(items, indent, lines, where):
    """Appends the text of `items` to `lines`; `where[i]`: the nodes line i
    evaluates (a list index, 0-based)."""
    pad = "    " * indent
    for item in items:
        kind = item[0]
        if kind == "line":
            lines.append(pad + item[1])
            where.append(item[2])
        elif kind == "if":
            clauses, other = item[1], item[2]
            for j, (test, body, nodes) in enumerate(clauses):
                lines.append(f"{pad}{'if' if j == 0 else 'elif'} {test}:")
                where.append(nodes)
                _render_items(body, indent + 1, lines, where)
            if other:
                lines.append(f"{pad}else:")
                where.append([])
                _render_items(other, indent + 1, lines, where)
        else:
            lines.append(pad + item[1])
            where.append(item[3])
            _render_items(item[2], indent + 1, lines, where)


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
    # The body runs in a `try` (free when nothing fails) whose handler adds
    # to an error the user's line that traced the failing op.
    lines, where = ["    try:"], [[], []]
    _render_items(gen.emit(stmts), 2, lines, where)
    lines += ["    except Exception as error:", "        traced_at(error)", "        raise"]
    name = f"run_{_ident(graph.name)}"
    source = f"def {name}({', '.join(gen.name(p) for p in params)}):\n" + "\n".join(lines) + "\n"
    namespace = dict(gen.namespace)
    filename = f"<autograph graph {graph.name}>"
    code = compile(source, filename, "exec")
    namespace["traced_at"] = lambda error: add_traced_line(error, graph.name, filename, source, where)
    exec(code, namespace)
    return CompiledGraph(graph, outputs, source, namespace[name])


def _ident(name):
    text = "".join(c if c.isalnum() else "_" for c in str(name))
    return text if text and not text[0].isdigit() else "g_" + text
