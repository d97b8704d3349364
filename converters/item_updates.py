"""Routes item assignment and augmented assignment through runtime hooks,
so that a functional backend can return updated copies, and a backend can
tell an array that stands for a Python number (`+=` makes a new one) from
one that `+=` changes in place.

    x += v            -->      x = ag__.iadd(x, v)
    x[i] = v          -->      x = ag__.setitem(x, i, v)
    x[i] += v         -->      x = ag__.setitem(x, i, ag__.iadd(x[i], v))
    x[f(i)] += v      -->      index = f(i)
                               x = ag__.setitem(x, index, ag__.iadd(x[index], v))
    x[i], x[j] = a, b -->      item, item_1 = a, b
                               x = ag__.setitem(x, i, item)
                               x = ag__.setitem(x, j, item_1)
    x[f(i)] = g(v)    -->      item = g(v)
                               x = ag__.setitem(x, f(i), item)
    obj.a += v        -->      obj.a = ag__.iadd(obj.a, v)

For Python values `setitem` assigns in place and returns the same object,
and `iadd` is `operator.iadd`, so the meaning is Python's. Only item targets
whose object is a local name are rewritten, where evaluation order is
unchanged: the index is made of names, constants, and attributes and
items of names (`i`, `-1`, `(i, j)`, `self.pos`, `perm[k]`, or arithmetic
and comparisons of those: `i + 1`, `n % 3`, `x < 0`; slices of those:
`1:n`, `(i, ::2)`), or, for `x[index] = value`, the value is
(`x[np.arange(3)] = 0.0`, `x[idx.astype(int)] = v * 2`). Other targets
stay as they are. (Python evaluates the index after the value, the
rewrite before it, and for `x[i + 1] += v` twice: the same number each
time, unless an operand is an object of your own whose arithmetic or
attributes have side effects.)
"""

import gast
from autograph.converters import base

from autograph import builders
from autograph.analysis import deferrable

__all__ = ["HOOKS", "OPERATORS", "transform"]

#: The runtime hook of each augmented assignment's operator, and back.
HOOKS = {
    gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.MatMult: "imatmul",
    gast.Div: "itruediv", gast.FloorDiv: "ifloordiv", gast.Mod: "imod", gast.Pow: "ipow",
    gast.LShift: "ilshift", gast.RShift: "irshift", gast.BitAnd: "iand", gast.BitXor: "ixor",
    gast.BitOr: "ior",
}
OPERATORS = {hook: op for op, hook in HOOKS.items()}


def _simple(node):
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.Attribute):
        return isinstance(node.value, gast.Name)
    if isinstance(node, gast.Subscript):
        return isinstance(node.value, gast.Name) and _simple(node.slice)
    if isinstance(node, gast.UnaryOp):
        return _simple(node.operand)
    if isinstance(node, gast.BinOp):
        return _simple(node.left) and _simple(node.right)
    if isinstance(node, gast.Compare):
        return _simple(node.left) and all(_simple(c) for c in node.comparators)
    if isinstance(node, (gast.Tuple, gast.List)):
        return all(_simple(e) for e in node.elts)
    if isinstance(node, gast.Slice):
        return all(part is None or _simple(part) for part in (node.lower, node.upper, node.step))
    return False


def _index(node):
    """An index as an argument: `a:b:c` as `slice(a, b, c)`."""
    if isinstance(node, gast.Slice):
        call = builders.call(builders.name("slice"), *(part or builders.const(None)
                                                        for part in (node.lower, node.upper, node.step)))
        call.written_as_slice = True  # to_code shows `a:b:c` (as_written.py)
        return call
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[_index(e) for e in node.elts], ctx=gast.Load())
    return node


class _Transformer(base.Transformer):

    def _local(self, node):
        scope = self.ctx.scope
        return (isinstance(node, gast.Name) and node.id in scope.locals and node.id not in scope.captured)

    def _subscript(self, target, value=None, index_once=False):
        """True for an item target to rewrite: of `x[index] op= v`, or of
        `x[index] = value` (where a simple value lets the index be any
        expression that means the same evaluated first); with `index_once`,
        of `x[index] op= v` whose index is not simple (it is then evaluated
        once, into a fresh name)."""
        # (A slice is written `slice(a, b, c)`: not where the function or its
        # module binds the name `slice`.)
        if not isinstance(target, gast.Subscript):
            return False
        simple = _simple(target.slice)
        if index_once:
            fits = not simple and deferrable(target.slice)
        else:
            fits = simple or value is not None and _simple(value) and deferrable(target.slice)
        return (self._local(target.value) and fits
                and not (("slice" in self.ctx.scope.locals or "slice" in (self.ctx.globals or ()))
                         and any(isinstance(n, gast.Slice) for n in builders.nodes(target.slice)))
                and not any(isinstance(n, gast.Name) and n.id in self.ctx.scope.captured
                            for n in builders.nodes(target.slice)))

    def _load(self, target):
        """A copy of `target` (or of an index) with its own store context made
        Load; what it holds keeps its contexts (a comprehension's target)."""
        import copy
        loaded = copy.deepcopy(target)
        pending = [loaded]
        while pending:
            node = pending.pop()
            if isinstance(getattr(node, "ctx", None), gast.Store):
                node.ctx = gast.Load()
                pending.extend(getattr(node, "elts", ()))
        return loaded

    def _setitem(self, target, value):
        obj = target.value.id
        return builders.assign(builders.store(obj), builders.call(
            builders.attr(self.ctx.ag, "setitem"), builders.name(obj), _index(self._load(target.slice)), value))

    def _items(self, target):
        """The item targets of `target` to rewrite with the values first
        (`x[i], x[j] = ...`, or `x[f(i)] = g(v)`), or None."""
        items = target.elts if isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) > 1 \
            else [target] if self._subscript(target, index_once=True) else None
        if items and all(self._subscript(t) or self._subscript(t, index_once=True) for t in items):
            return items
        return None

    def visit_Assign(self, node):
        items = self._items(node.targets[0]) if len(node.targets) == 1 and deferrable(node.value) else None
        if items and not (len(items) == 1 and _simple(node.value)):
            # The values first, then each item in turn (its index evaluated then), as Python does.
            names = [self.ctx.namer.new("item") for _ in items]
            stored = gast.Tuple(elts=[builders.store(n) for n in names], ctx=gast.Store()) if len(names) > 1 \
                else builders.store(names[0])
            converted = [builders.located(builders.assign(stored, node.value), node)]
            for target, name in zip(items, names, strict=True):
                update = builders.located(self._setitem(target, builders.name(name)), node)
                update.original = builders.located(builders.assign(target, builders.name(name)), node)
                converted.append(update)
            return converted
        if len(node.targets) == 1 and self._subscript(node.targets[0], node.value) and deferrable(node.value):
            converted = builders.located(self._setitem(node.targets[0], node.value), node)
            # control_flow restores the statement where the object may be
            # unbound: Python evaluates the value before it reads the object.
            converted.original = node
            return converted
        return node

    def visit_AugAssign(self, node):
        target, hook = node.target, HOOKS[type(node.op)]
        if isinstance(target, gast.Name):
            updated = self.operator(hook, builders.name(target.id), node.value)
            return builders.located(builders.assign(builders.store(target.id), updated), node)
        if self._subscript(target):
            updated = self.operator(hook, self._load(target), node.value)
            return builders.located(self._setitem(target, updated), node)
        if self._subscript(target, index_once=True):
            # `x[f(i)] += v`: the index once, into a fresh name, as Python evaluates it once.
            index = self.ctx.namer.new("index")
            named = gast.Subscript(value=target.value, slice=builders.name(index), ctx=gast.Store())
            updated = self.operator(hook, self._load(named), node.value)
            return [builders.located(builders.assign(builders.store(index), _index(self._load(target.slice))), node),
                    builders.located(self._setitem(named, updated), node)]
        if isinstance(target, gast.Attribute) and isinstance(target.value, gast.Name) \
                and target.value.id not in self.ctx.scope.captured:
            updated = self.operator(hook, self._load(target), node.value)
            return builders.located(builders.assign(target, updated), node)
        return node


transform = _Transformer.transform
