"""Indexing with a traced integer scalar (a staged loop's counter): `x[i]`
and `x[i] = v` in converted code, where Python's indexing would want the
value (torch raises "Could not extract specialized integer from
data-dependent expression"), become `aten.index` and `index_put_`, which
read the item and check its bounds when the program runs."""

from autograph.runtime.torch import compat

__all__ = ["Indexing"]


class Indexing:
    """The torch backend's methods for indexing."""

    __slots__ = ()

    def getitem(self, target, index):
        parts = self.scalar_indices(target, index)
        if parts is None:
            return target[index]
        view, indices = parts
        return compat.torch.ops.aten.index.Tensor(view, indices)

    def setitem(self, target, index, value):
        # In place, as Python does: a name or a view that holds `target` sees
        # the change. A body that torch traces gets a copy of an input it
        # changes (export.py's `_call`, `DynamoStaging._probe`), as for `x += 1`.
        self.refuse_view_output(target)
        parts = self.scalar_indices(target, index)
        if parts is None:
            target[index] = value
            return target
        view, indices = parts
        value = value if isinstance(value, self.tensor_type()) else view.new_full((), value)
        view.index_put_(indices, value if value.dtype == view.dtype else value.to(view.dtype))
        return target

    def scalar_indices(self, target, index):
        """For an index of a tensor that holds a traced integer scalar (a
        staged loop's counter): Python's indexing would want its value (torch
        raises "Could not extract specialized integer from data-dependent
        expression"), so (what the other items select: a view of `target`,
        the index list of `aten.index` and `index_put_` for it: each such
        scalar at the dimension it indexes), which read the item and check
        its bounds when the program runs. None for another index: Python's
        indexing does."""
        if not isinstance(target, self.tensor_type()):
            return None
        items = index if type(index) is tuple else (index,)
        basic, indices = [], []
        for item in items:
            if isinstance(item, self.tensor_type()):
                if item.dim() != 0 or item.dtype == self.dtype("bool") or item.is_floating_point() \
                        or item.is_complex() or not self.is_traced(item):
                    return None
                basic.append(slice(None))
                indices.append(item)
            elif type(item) is slice:
                basic.append(item)
                indices.append(None)
            elif type(item) is int or type(item) is compat.torch.SymInt:
                basic.append(item)  # its dimension goes
            else:
                return None  # `...`, None, a list: Python's indexing, as it is
        if not [i for i in indices if i is not None]:
            return None
        while indices[-1] is None:
            indices.pop()
        plain = [b for b in basic if not (type(b) is slice and b == slice(None))]
        return (target[tuple(basic)] if plain else target), indices
