"""Which functional item updates the executor may do in place.

`x = ag__.setitem(x, i, v)` is functional in the graph: a `setitem` node
returns an updated copy. Copying every time makes a loop that fills an array
item by item O(n^2). The executor may instead write into the target's buffer
when no value that is still read afterwards can see that buffer:

  * every buffer the target may share (its *roots*) was made by the graph
    itself: by an earlier `setitem` copy or by a copy the executor makes
    when a loop that updates one of its variables is entered; never a
    placeholder (the caller's array) or a constant (kept across calls);
  * the target itself is dead after the update, and no other value that is
    available there and read later may share one of its roots.

Roots come from a forward pass over the graph (a fixpoint over loops): a
buffer made by a node is a root; an op that may return a view of its
inputs (`getitem`, `reshape`, an unknown function) shares its inputs'
roots; a `cond` or loop output shares the roots of every value it may be.
Liveness is computed on the structured graph: after a node, a value is read
later in its block, by the block's outputs, or (through the context passed
down) after the enclosing `cond`/loop, or in the next iteration of an
enclosing loop when it was defined outside that loop.
"""

import numpy as np
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["Plan", "analyze", "setitem_impl"]

_EXTERNAL = "external"


def setitem_impl(target, index, value):
    """The functional update: an updated copy (always an ndarray)."""
    result = np.array(target)
    result[index] = value
    return result


class Plan:
    """The result of `analyze`: node ids of setitems done in place, and
    {while node id: [param indices copied when the loop is entered]}."""

    def __init__(self):
        self.in_place = set()
        self.entry_copies = {}


def _sym(v):
    return type(v) is SymbolicArray


def _is_setitem(node):
    return node.kind == "op" and node.fn is setitem_impl


def _scalar_index(index):
    parts = index if type(index) is tuple else (index,)
    for p in parts:
        if type(p) is int or type(p) is bool:
            continue
        if _sym(p) and p.shape == () and p.dtype.kind in "iu":
            continue
        return False
    return True


def _fresh(node, out):
    """True if `out` never shares memory with the node's inputs."""
    if out.weak:
        return True  # a Python scalar: immutable
    fn = node.fn
    if isinstance(fn, np.ufunc):
        return True  # ufuncs allocate their results (out= is refused)
    if node.name == "getitem":
        return out.shape == () and _scalar_index(node.args[1])
    if node.name == "astype":
        return True
    return False


def _ownable(roots):
    """True if every buffer in `roots` was made by the graph as an ndarray
    (a setitem copy, or a copy made when a loop is entered)."""
    return bool(roots) and all(type(r) is tuple and r[0] in ("set", "copy") for r in roots)


class _Analysis:
    def __init__(self):
        self.roots = {}
        self.reads_cache = {}
        self.defs_cache = {}
        self.plan = Plan()
        self.candidates = {}   # while node id -> set of param indices

    # Reads and definitions of a node, including its nested blocks.

    def reads(self, node):
        key = node.id
        found = self.reads_cache.get(key)
        if found is None:
            found = set(node.inputs())
            for b in node.blocks:
                found.update(v for v in b.outputs if _sym(v))
                for inner in b.nodes:
                    found |= self.reads(inner)
            self.reads_cache[key] = found
        return found

    def defs(self, node):
        key = node.id
        found = self.defs_cache.get(key)
        if found is None:
            found = set(node.outputs)
            found.update(node.attrs.get("params", ()))
            for b in node.blocks:
                for inner in b.nodes:
                    found |= self.defs(inner)
            self.defs_cache[key] = found
        return found

    # Loop variables updated by item assignment.

    def _updates(self, value, param, updated=False):
        """True if `value` (a body output) is `param` after one or more
        setitems (possibly through `cond` and inner loops)."""
        seen = set()
        while _sym(value) and value not in seen:
            seen.add(value)
            if value is param:
                return updated
            node = value.node
            if _is_setitem(node):
                value = node.args[0]
                updated = True
                continue
            index = next(i for i, o in enumerate(node.outputs) if o is value)
            if node.kind == "cond":
                return any(self._updates(b.outputs[index], param, updated)
                           for b in node.blocks)
            if node.kind == "while" and index in self.candidates.get(node.id, ()):
                value = node.args[index]
                updated = True
                continue
            return False
        return False

    def find_candidates(self, block):
        for node in block.nodes:
            for b in node.blocks:
                self.find_candidates(b)
            if node.kind == "while":
                body = node.blocks[1]
                params = node.attrs["params"]
                chosen = set()
                for i, (p, out) in enumerate(zip(params, body.outputs)):
                    if self._updates(out, p):
                        chosen.add(i)
                if chosen:
                    self.candidates[node.id] = chosen

    # Roots (forward, with a fixpoint over loops).

    def r(self, v):
        if not _sym(v):
            return frozenset()
        return self.roots.get(v, frozenset())

    def forward(self, block):
        for node in block.nodes:
            kind = node.kind
            if kind == "const" or kind == "placeholder":
                self.roots[node.outputs[0]] = frozenset([_EXTERNAL])
            elif kind == "op":
                if _is_setitem(node):
                    target = self.r(node.args[0])
                    mine = frozenset([("set", node.id)])
                    # An update of a buffer the graph does not own copies:
                    # its result is a buffer of its own.
                    self.roots[node.outputs[0]] = target | mine if _ownable(target) else mine
                    continue
                shared = frozenset()
                for i, out in enumerate(node.outputs):
                    if _fresh(node, out):
                        self.roots[out] = frozenset([("op", node.id, i)])
                    else:
                        if not shared:
                            shared = frozenset().union(*(self.r(v) for v in node.inputs()))
                        self.roots[out] = shared | {("op", node.id, i)}
            elif kind == "cond":
                for b in node.blocks:
                    self.forward(b)
                for i, out in enumerate(node.outputs):
                    self.roots[out] = frozenset().union(*(self.r(b.outputs[i]) for b in node.blocks))
            elif kind == "while":
                params = node.attrs["params"]
                copied = self.candidates.get(node.id, ())
                init = [frozenset([("copy", node.id, i)]) if i in copied else self.r(a)
                        for i, a in enumerate(node.args)]
                for p, roots in zip(params, init):
                    self.roots[p] = roots
                test, body = node.blocks
                for _ in range(50):
                    self.forward(test)
                    self.forward(body)
                    changed = False
                    for p, out in zip(params, body.outputs):
                        new = self.roots[p] | self.r(out)
                        if new != self.roots[p]:
                            self.roots[p] = new
                            changed = True
                    if not changed:
                        break
                else:  # pragma: no cover - roots only grow, over a finite set
                    raise RuntimeError("in-place analysis did not converge")
                for out, p in zip(node.outputs, params):
                    self.roots[out] = self.roots[p]
            else:
                for out in node.outputs:
                    self.roots[out] = frozenset([_EXTERNAL])

    # Decisions (liveness).

    def decide(self, block, live, excluded):
        """`live`: values read after this block (besides its outputs);
        `excluded`: values not available inside it (defined later)."""
        nodes = block.nodes
        after = [None] * len(nodes)
        later = [None] * len(nodes)
        acc = set(v for v in block.outputs if _sym(v)) | live
        defined = set(excluded)
        for k in range(len(nodes) - 1, -1, -1):
            after[k] = acc
            later[k] = defined | set(nodes[k].outputs)
            defined = defined | self.defs(nodes[k])
            acc = acc | self.reads(nodes[k])
        for k, node in enumerate(nodes):
            if _is_setitem(node):
                self.decide_setitem(node, after[k], later[k])
            elif node.kind == "cond":
                for b in node.blocks:
                    self.decide(b, after[k], later[k])
            elif node.kind == "while":
                test, body = node.blocks
                outer = set()
                for b in node.blocks:
                    outer.update(v for v in b.outputs if _sym(v))
                    for inner in b.nodes:
                        outer |= self.reads(inner)
                outer -= self.defs(node)
                params = set(node.attrs["params"])
                # The test: conservatively, everything the loop reads stays live.
                self.decide(test, after[k] | outer | params | self._all_reads(body), later[k])
                self.decide(body, after[k] | outer, later[k])

    def _all_reads(self, block):
        found = set(v for v in block.outputs if _sym(v))
        for node in block.nodes:
            found |= self.reads(node)
        return found

    def decide_setitem(self, node, live, later):
        target = node.args[0]
        if not _sym(target):
            return
        roots = self.r(target)
        if not _ownable(roots):
            return
        available = live - later
        if target in available:
            return
        for v in available:
            if v is not target and self.r(v) & roots:
                return
        self.plan.in_place.add(node.id)


def analyze(graph):
    """The in-place plan of `graph` (see the module docstring)."""
    a = _Analysis()
    a.find_candidates(graph)
    for p in graph.params:
        a.roots[p] = frozenset([_EXTERNAL])
    a.forward(graph)
    outputs = set(v for v in graph.outputs if _sym(v))
    a.decide(graph, outputs, set())
    a.plan.entry_copies = {k: sorted(v) for k, v in a.candidates.items()}
    return a.plan
