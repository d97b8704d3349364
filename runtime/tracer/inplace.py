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
        if _sym(p) and p.static_shape == () and p.dtype.kind in "iu":
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
        return out.static_shape == () and _scalar_index(node.args[1])
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
        self.has_set = set()   # ids of nodes that are, or contain, a setitem
        self.pos = {}          # node id -> position in program order
        self.end = {}          # node id -> last position inside it
        self.param_pos = {}    # loop variable -> position of its loop
        self.holders = {}      # root -> values that may share it
        self.plan = Plan()
        self.candidates = {}   # while node id -> set of param indices

    # Reads and definitions of a node, including its nested blocks.

    def reads(self, node):
        if not node.blocks:
            return node.inputs()
        key = node.id
        found = self.reads_cache.get(key)
        if found is None:
            found = set(node.inputs())
            for b in node.blocks:
                found.update(v for v in b.outputs if _sym(v))
                for inner in b.nodes:
                    found.update(self.reads(inner))
            self.reads_cache[key] = found
        return found

    def defs(self, node):
        if not node.blocks:
            return node.outputs
        key = node.id
        found = self.defs_cache.get(key)
        if found is None:
            found = set(node.outputs)
            found.update(node.attrs.get("params", ()))
            for b in node.blocks:
                for inner in b.nodes:
                    found.update(self.defs(inner))
            self.defs_cache[key] = found
        return found

    def number(self, block, counter):
        """Positions in program order; True if the block holds a setitem."""
        found = False
        for node in block.nodes:
            self.pos[node.id] = counter[0]
            for param in node.attrs.get("params", ()):
                self.param_pos[param] = counter[0]
            counter[0] += 1
            inner = _is_setitem(node)
            for b in node.blocks:
                inner = self.number(b, counter) or inner
            self.end[node.id] = counter[0] - 1
            if inner:
                self.has_set.add(node.id)
                found = True
        return found

    def defined_at(self, value):
        """The position after which `value` exists (-1: a graph input)."""
        if value.node.kind == "param":
            return self.param_pos.get(value, -1)
        return self.end.get(value.node.id, -1)

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
            if node.id not in self.has_set:
                continue
            for b in node.blocks:
                self.find_candidates(b)
            if node.kind == "while":
                body = node.blocks[1]
                params = node.attrs["params"]
                chosen = set()
                for i, (p, out) in enumerate(zip(params, body.outputs, strict=True)):
                    if self._updates(out, p):
                        chosen.add(i)
                if chosen:
                    self.candidates[node.id] = chosen

    # Roots (forward, with a fixpoint over loops).

    def r(self, v):
        if not _sym(v):
            return _NONE
        return self.roots.get(v, _NONE)

    def set_roots(self, value, roots):
        self.roots[value] = roots
        for root in roots:
            if type(root) is tuple:
                self.holders.setdefault(root, set()).add(value)

    def forward(self, block):
        for node in block.nodes:
            kind = node.kind
            if kind == "const" or kind == "placeholder":
                self.roots[node.outputs[0]] = _OUTSIDE
            elif kind == "op":
                if _is_setitem(node):
                    target = self.r(node.args[0])
                    # An update of a buffer the graph owns may write into it:
                    # the result shares its roots. Otherwise it copies: a
                    # buffer of its own.
                    self.set_roots(node.outputs[0], target if _ownable(target)
                                   else frozenset([("set", node.id)]))
                    continue
                shared = None
                for out in node.outputs:
                    if _fresh(node, out):
                        self.roots[out] = _FRESH
                    else:
                        if shared is None:
                            shared = frozenset().union(*(self.r(v) for v in node.inputs()))
                            # A value that may be a view: it shares its inputs'
                            # buffers and is not one the graph owns.
                            shared = shared if _VIEW in shared else shared | {_VIEW}
                        self.set_roots(out, shared)
            elif kind == "cond":
                for b in node.blocks:
                    self.forward(b)
                for i, out in enumerate(node.outputs):
                    self.set_roots(out, frozenset().union(*(self.r(b.outputs[i]) for b in node.blocks)))
            elif kind == "while":
                params = node.attrs["params"]
                copied = self.candidates.get(node.id, ())
                init = [frozenset([("copy", node.id, i)]) if i in copied else self.r(a)
                        for i, a in enumerate(node.args)]
                for p, roots in zip(params, init, strict=True):
                    self.set_roots(p, roots)
                test, body = node.blocks
                for _ in range(50):
                    self.forward(test)
                    self.forward(body)
                    changed = False
                    for p, out in zip(params, body.outputs, strict=True):
                        new = self.roots[p] | self.r(out)
                        if new != self.roots[p]:
                            self.set_roots(p, new)
                            changed = True
                    if not changed:
                        break
                else:  # pragma: no cover - roots only grow, over a finite set
                    raise RuntimeError("in-place analysis did not converge")
                for out, p in zip(node.outputs, params, strict=False):
                    self.set_roots(out, self.roots[p])
            else:
                for out in node.outputs:
                    self.roots[out] = _OUTSIDE

    # Decisions (liveness), only where a setitem is.

    def decide(self, block, live):
        """`live`: values read after this block (besides its outputs) and
        defined before it. Going backward, `acc` holds the values read later
        that exist at the current node."""
        nodes = block.nodes
        first = next((k for k, n in enumerate(nodes) if n.id in self.has_set), None)
        if first is None:
            return
        acc = set(v for v in block.outputs if _sym(v))
        acc.update(live)
        for k in range(len(nodes) - 1, first - 1, -1):
            node = nodes[k]
            # What this node defines is not there yet when it runs.
            acc.difference_update(node.outputs)
            if node.id in self.has_set:
                if _is_setitem(node):
                    self.decide_setitem(node, acc)
                elif node.kind == "cond":
                    for b in node.blocks:
                        self.decide(b, acc)
                elif node.kind == "while":
                    test, body = node.blocks
                    outer = set()
                    for b in node.blocks:
                        outer.update(v for v in b.outputs if _sym(v))
                        for inner in b.nodes:
                            outer.update(self.reads(inner))
                    outer -= self.defs(node)
                    outer |= acc
                    # The test: conservatively, everything the loop reads stays live.
                    self.decide(test, outer | set(node.attrs["params"]) | self._all_reads(body))
                    self.decide(body, outer)
            acc.update(self.reads(node))

    def _all_reads(self, block):
        found = set(v for v in block.outputs if _sym(v))
        for node in block.nodes:
            found.update(self.reads(node))
        return found

    def decide_setitem(self, node, live):
        """In place if no value read later and available here (defined
        before `node`) may share a buffer with the target."""
        target = node.args[0]
        if not _sym(target):
            return
        roots = self.r(target)
        if not _ownable(roots) or target in live:
            return
        here = self.pos[node.id]
        sharers = sum(len(self.holders.get(root, ())) for root in roots)
        if sharers < len(live):
            candidates = (v for root in roots for v in self.holders.get(root, ()) if v in live)
        else:
            candidates = (v for v in live if self.r(v) & roots)
        for v in candidates:
            if v is not target and self.defined_at(v) < here:
                return
        self.plan.in_place.add(node.id)


_NONE = frozenset()
_OUTSIDE = frozenset([_EXTERNAL])
_VIEW = "view"
_FRESH = frozenset(["fresh"])


def analyze(graph):
    """The in-place plan of `graph` (see the module docstring)."""
    a = _Analysis()
    if not a.number(graph, [0]):
        return a.plan
    a.find_candidates(graph)
    for p in graph.params:
        a.roots[p] = _OUTSIDE
    a.forward(graph)
    a.decide(graph, set(v for v in graph.outputs if _sym(v)))
    a.plan.entry_copies = {k: sorted(v) for k, v in a.candidates.items()}
    return a.plan
