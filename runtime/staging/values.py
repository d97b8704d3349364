"""The conventions the staging core shares with `operators.py`: a body
returns nothing, a bare value or a tuple (`normalize`, `pack`); branch
outputs and loop state are handled as flat leaves per variable (`Flat`);
which Python values count as unchanged (`same_python`, `same_leaf`); and
the checks of `range()` with a traced bound."""

import operator

import numpy as np
from autograph.runtime.backends import unchanged
from autograph.runtime.errors import TracingError, user_location
from autograph.runtime.undefined import Undefined, UndefinedReturnValue

__all__ = ["NUMBERS", "Flat", "Retry", "Treedef", "describe_marker", "flatten", "holds", "in_range", "normalize",
           "numpy_holds", "pack", "range_bounds", "same_leaf", "same_python", "TracedRange", "unflatten"]

#: Python's number types: what a backend widens to its own scalars.
NUMBERS = (bool, int, float, complex)


class Retry(Exception):
    """Raised inside a traced body when what the tracer carries must change
    (a type widens, a `return` needs a stand-in): trace again."""


def normalize(result, count, what):
    """A body's result as a tuple of `count` values."""
    if count == 0:
        return ()
    if count == 1:
        return (result,)
    if not isinstance(result, (tuple, list)) or len(result) != count:
        raise TracingError(f"the {what} must return {count} values, got {result!r}")
    return tuple(result)


#: A tuple of `count` values as a body returns them: nothing, a bare value
#: or a tuple (the same rule as a branch given as None, `unchanged`).
pack = unchanged


def same_python(a, b):
    """True if Python values `a` and `b` are the same for a traced program
    (the same object, the same marker, or equal values of one type)."""
    if a is b or (isinstance(a, Undefined) and type(a) is type(b)):
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that cannot say are not the same
        return False


def same_leaf(a, b, is_value):
    """True if a branch output or loop variable is the same whichever way
    the program goes, so that it needs no staging: the same object, or
    equal Python values of one type other than arrays (an array's type does
    not say its dtype; a numpy scalar's does)."""
    if a is b:
        return True
    # The types written out: dynamo guards on each element of a global tuple.
    if is_value(a) and type(a) not in (bool, int, float, complex) and not isinstance(a, np.generic):
        return False
    return same_python(a, b)


def describe_marker(x):
    """How an error names a marker, or None for a value."""
    if type(x) is UndefinedReturnValue:
        return "not returned yet"
    if type(x) is Undefined:
        return "undefined"
    return None


class Flat:
    """A tuple of per-variable values as one list of leaves, and back.
    `flatten(v)` gives (leaves, treedef), `unflatten(treedef, leaves)` the
    value; treedefs compare equal for the same structure."""

    def __init__(self, values, flatten, unflatten):
        # One loop, no comprehensions: under dynamo each comprehension is a
        # frame it traces. (No enumerate(): dynamo guards each builtin that
        # the code it traces calls.)
        self.unflatten = unflatten
        self.treedefs, self.counts, self.leaves, self.owner = [], [], [], []  # owner: leaf -> variable
        for value in values:
            leaves, treedef = flatten(value)
            self.owner.extend([len(self.treedefs)] * len(leaves))
            self.treedefs.append(treedef)
            self.counts.append(len(leaves))
            self.leaves.extend(leaves)

    def rebuild(self, leaves):
        out, pos = [], 0
        for treedef, n in zip(self.treedefs, self.counts, strict=True):
            out.append(self.unflatten(treedef, list(leaves[pos:pos + n])))
            pos += n
        return tuple(out)


class Treedef:
    """The structure of a container, as `flatten` gives it: equal for equal
    structures, whatever the order in which a dict's keys were inserted."""

    __slots__ = ("orders", "spec")

    def __init__(self, spec, orders):
        self.spec, self.orders = spec, orders  # orders: each dict's keys as inserted

    def __eq__(self, other):
        return type(other) is Treedef and self.spec == other.spec

    __hash__ = None

    def __repr__(self):
        return f"Treedef({self.spec!r})"


def flatten(obj):
    """(leaves, treedef) of `obj`, a nesting of tuples, lists, dicts, named
    tuples and slices. A dict gives its values in the order of its sorted
    keys (as inserted, if they do not sort): two dicts with the same keys
    give their values in the same order, as in JAX's pytrees."""
    leaves, orders = [], []
    return leaves, Treedef(_spec(obj, leaves, orders), orders)


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        return tuple(d)


def _spec(obj, leaves, orders):
    t = type(obj)
    if t is dict:
        keys = _sorted_keys(obj)
        orders.append(tuple(obj))
        return (dict, keys, tuple(_spec(obj[k], leaves, orders) for k in keys))
    if t is tuple or t is list or isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (t, tuple(_spec(item, leaves, orders) for item in obj))
    if t is slice:
        return (slice, tuple(_spec(x, leaves, orders) for x in (obj.start, obj.stop, obj.step)))
    leaves.append(obj)
    return None


def unflatten(treedef, leaves):
    """The container of structure `treedef` with `leaves`."""
    return _build(treedef.spec, iter(leaves), iter(treedef.orders))


def _build(spec, leaves, orders):
    if spec is None:
        return next(leaves)
    t = spec[0]
    if t is dict:
        order = next(orders)
        values = {k: _build(s, leaves, orders) for k, s in zip(spec[1], spec[2], strict=True)}
        return {k: values[k] for k in order}
    items = [_build(s, leaves, orders) for s in spec[1]]
    if t is tuple:
        return tuple(items)
    if t is list:
        return items
    if t is slice:
        return slice(*items)
    return t(*items)


# range() with a traced bound ---------------------------------------------------

def range_bounds(args, is_traced, is_integer_scalar, describe=repr):
    """(start, stop, step) of `range(*args)` where some bound is traced,
    checked as Python checks them: a traced bound must be an integer scalar
    (`is_integer_scalar`), any other must be an index."""
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) == 2:
        (start, stop), step = args, 1
    elif len(args) == 3:
        start, stop, step = args
    else:
        raise TypeError(f"range expected at most 3 arguments, got {len(args)}")
    for a in (start, stop, step):
        if is_traced(a):
            if not is_integer_scalar(a):
                raise TypeError(f"range() bounds must be integer scalars, got {describe(a)}")
        elif type(a) is not int and type(a) is not bool:
            operator.index(a)
    if type(step) is int and step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return start, stop, step


class TracedRange:
    """`range(start, stop, step)` where some bound is traced: what a
    converted `for` loop turns into a staged loop. Each backend subclasses
    it, naming its tracer (`traced_by`) and its loop (`staged_as`)."""

    __slots__ = ("start", "step", "stop")
    traced_by = staged_as = ""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def __repr__(self):
        return f"range({self.start!r}, {self.stop!r}, {self.step!r})"

    def __iter__(self):
        raise TracingError(
            f"cannot iterate in Python over a range whose bound is traced by {self.traced_by} "
            f"({user_location()}): its length is known only when the program runs. Only a `for` statement "
            f"of converted code loops over it (as {self.staged_as}): write the comprehension, `list()`, "
            "`sum()` or other call that iterates over it as a `for` loop, or give the range a Python int bound")


def holds(x, kind, low, high):
    """Whether a variable of a dtype of `kind` ("i": integer, "f": floating)
    whose finite values run from `low` to `high` holds the Python number
    `x` as it is: False for an int out of an integer dtype's range, or a
    finite float beyond a float dtype's largest value (it would wrap, or
    become inf)."""
    if type(x) is int and kind == "i":
        return low <= x <= high
    if type(x) is float and kind == "f" and x == x and abs(x) != float("inf"):
        return low <= x <= high
    return True


def numpy_holds(x, dtype):
    """`holds` for a numpy dtype (JAX's dtypes are numpy's)."""
    kind = "i" if dtype.kind in "iu" else "f" if dtype.kind == "f" else None
    if kind is None or type(x) not in (int, float):
        return True
    try:
        info = np.iinfo(dtype) if kind == "i" else np.finfo(dtype)
    except (TypeError, ValueError):  # a dtype numpy does not describe (bfloat16)
        return True
    if kind == "i":
        return holds(x, kind, int(info.min), int(info.max))
    return holds(x, kind, -float(info.max), float(info.max))


def in_range(i, stop, step):
    """Whether counter `i` has not passed `stop`, for a positive or negative
    (or traced) `step`."""
    if type(step) is int:
        return i < stop if step > 0 else i > stop
    return ((step > 0) & (i < stop)) | ((step < 0) & (i > stop))
