"""Nested Python containers (tuple, list, dict, slice) with array leaves."""

__all__ = ["leaves", "map_leaves"]


def leaves(obj, out=None):
    """The leaves of `obj` in order (containers are tuple, list, dict, slice)."""
    if out is None:
        out = []
    t = type(obj)
    if t is tuple or t is list:
        for item in obj:
            leaves(item, out)
    elif t is dict:
        for item in obj.values():
            leaves(item, out)
    elif t is slice:
        leaves(obj.start, out)
        leaves(obj.stop, out)
        leaves(obj.step, out)
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):
        for item in obj:
            leaves(item, out)
    else:
        out.append(obj)
    return out


def map_leaves(fn, obj):
    """`obj` with every leaf replaced by `fn(leaf)`."""
    t = type(obj)
    if t is tuple:
        return tuple(map_leaves(fn, item) for item in obj)
    if t is list:
        return [map_leaves(fn, item) for item in obj]
    if t is dict:
        return {k: map_leaves(fn, v) for k, v in obj.items()}
    if t is slice:
        return slice(map_leaves(fn, obj.start), map_leaves(fn, obj.stop), map_leaves(fn, obj.step))
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return t(*(map_leaves(fn, item) for item in obj))
    return fn(obj)
