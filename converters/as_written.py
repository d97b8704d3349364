"""The converted tree as `to_code` shows it: control flow as operator calls,
and item reads, item assignments and augmented assignments as written.

item_updates.py and item_reads.py route those statements through runtime
hooks, so that a backend can apply them its own way (a functional update of
an immutable array, `+=` on a tensor that stands for a Python number). For
Python values each hook means the statement itself, and the code that runs
inlines that meaning (fast_paths.py; `to-code --inlined` shows it).
What the reader of `to_code` needs is the statement, so this pass, run on
the tree after it was compiled, puts each one back:

    x = ag__.iadd(x, v)                          -->   x += v
    obj.a = ag__.iadd(obj.a, v)                  -->   obj.a += v
    x = ag__.setitem(x, slice(1, n, None), v)    -->   x[1:n] = v
    x = ag__.setitem(x, i, ag__.iadd(x[i], v))   -->   x[i] += v
    ag__.getitem(x, i, 'x')                      -->   x[i]

Only the calls that those two passes make are matched: the hook's target is
the name (or attribute) that the statement assigns.
"""

import gast
from autograph.converters.base import is_runtime
from autograph.converters.item_updates import OPERATORS

__all__ = ["transform"]


def _same(a, b):
    """True for two `x` or `x.a` expressions that name the same thing."""
    if isinstance(a, gast.Name) and isinstance(b, gast.Name):
        return a.id == b.id
    if isinstance(a, gast.Attribute) and isinstance(b, gast.Attribute):
        return a.attr == b.attr and _same(a.value, b.value)
    return False


def _slices(index):
    """An index argument as written: `slice(a, b, c)` as `a:b:c`."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_slices(e) for e in index.elts], ctx=gast.Load())
    if getattr(index, "written_as_slice", False):
        lower, upper, step = (None if isinstance(a, gast.Constant) and a.value is None else a for a in index.args)
        return gast.Slice(lower=lower, upper=upper, step=step)
    return index


class _Writer(gast.NodeTransformer):

    def __init__(self, ag):
        self.ag = ag

    def _hook(self, node, names):
        """The hook's name if `node` calls `ag__.<hook>`, one of `names`."""
        if isinstance(node, gast.Call) and not node.keywords and is_runtime(node.func, self.ag) \
                and node.func.attr in names:
            return node.func.attr
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        if self._hook(node, ("getitem",)) and len(node.args) == 3:
            target, index, _ = node.args
            return gast.copy_location(gast.Subscript(value=target, slice=index, ctx=gast.Load()), node)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) != 1:
            return node
        target, value = node.targets[0], node.value
        hook = self._hook(value, OPERATORS)
        if hook and len(value.args) == 2 and _same(target, value.args[0]):
            return gast.copy_location(gast.AugAssign(target=target, op=OPERATORS[hook](), value=value.args[1]), node)
        if self._hook(value, ("setitem",)) and len(value.args) == 3 and isinstance(target, gast.Name) \
                and _same(target, value.args[0]):
            _, index, item = value.args
            written = gast.Subscript(value=gast.Name(target.id, gast.Load(), None, None), slice=_slices(index),
                                     ctx=gast.Store())
            hook = self._hook(item, OPERATORS)
            if hook and len(item.args) == 2 and isinstance(item.args[0], gast.Subscript) \
                    and _same(item.args[0].value, target) \
                    and gast.dump(item.args[0].slice) == gast.dump(written.slice):
                augmented = gast.AugAssign(target=written, op=OPERATORS[hook](), value=item.args[1])
                return gast.copy_location(augmented, node)
            return gast.copy_location(gast.Assign(targets=[written], value=item, type_comment=None), node)
        return node


def transform(tree, ag):
    """`tree`, a converted function, with the hooks of item_updates and
    item_reads written back as the statements they stand for (in place)."""
    return _Writer(ag).visit(tree)
