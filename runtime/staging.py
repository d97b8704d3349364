"""What the backends that stage control flow into a tracer's own operators
share (the JAX and PyTorch backends; the numpy tracer uses the conventions):

  * the conventions of `operators.py`: a body returns nothing, a bare value
    or a tuple (`normalize`, `pack`);
  * branch outputs and loop state as flat leaves, per variable (`Flat`);
  * which Python values count as unchanged (`same_python`);
  * the check of one traced loop iteration (`check_iteration`), and the
    errors, which name the variable, the construct and the user's line.

A backend describes its values with a `Values` object.
"""

import operator

from autograph.runtime.backends import Backend
from autograph.runtime.errors import (
    BranchMismatchError,
    LoopStateError,
    TracingError,
    UndefinedOutputError,
    user_location,
)
from autograph.runtime.undefined import Undefined, UndefinedReturnValue

__all__ = ["Flat", "Retry", "StagingBackend", "Values", "check_iteration", "describe_marker", "in_range",
           "normalize", "pack", "range_bounds", "same_python"]


class Values:
    """What the shared checks need to know of a backend's values: the words
    for its arrays ("array", "tensor") and for changing a dtype
    (".astype()"), and functions: `is_value(x)` (a number or one of its
    arrays), `typeof(x)` ((shape, dtype, weak), weak for a Python number),
    `merge(a, b)` (the type both can take, or None) and `describe_type(t)`
    (for messages)."""

    def __init__(self, array, cast, is_value, typeof, merge, describe_type):
        self.array, self.cast = array, cast
        self.is_value, self.typeof, self.merge = is_value, typeof, merge
        self.describe_type = describe_type

    def describe(self, x):
        marker = describe_marker(x)
        if marker is not None:
            return marker
        if type(x) in (bool, int, float, complex):
            return f"a Python {type(x).__name__} ({x!r})"
        if self.is_value(x):
            return self.describe_type(self.typeof(x))
        return f"a Python {type(x).__name__}"


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


def pack(values, count):
    """A tuple of `count` values as a body returns them."""
    if count == 0:
        return None
    if count == 1:
        return values[0]
    return tuple(values)


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


def describe_marker(x):
    """How an error names a marker, or None for a value."""
    if type(x) is UndefinedReturnValue:
        return "not returned yet"
    if type(x) is Undefined:
        return "undefined"
    return None


class Flat:
    """A tuple of per-variable values as one list of leaves, and back.
    `flatten(v)` gives (leaves, treedef); `unflatten(treedef, leaves)`."""

    def __init__(self, values, flatten, unflatten):
        flat = [flatten(v) for v in values]
        self.unflatten = unflatten
        self.treedefs = [t for _, t in flat]
        self.leaves = [leaf for ls, _ in flat for leaf in ls]
        self.owner = [i for i, (ls, _) in enumerate(flat) for _ in ls]  # leaf -> variable

    def rebuild(self, leaves):
        out, pos = [], 0
        for treedef in self.treedefs:
            n = treedef.num_leaves
            out.append(self.unflatten(treedef, leaves[pos:pos + n]))
            pos += n
        return tuple(out)


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


def in_range(i, stop, step):
    """Whether counter `i` has not passed `stop`, for a positive or negative
    (or traced) `step`."""
    if type(step) is int:
        return i < stop if step > 0 else i > stop
    return ((step > 0) & (i < stop)) | ((step < 0) & (i > stop))


# Branches ---------------------------------------------------------------------

def branch_structure_error(name, true_value, false_value, what, loc):
    return BranchMismatchError(
        f"'{name}' has a different structure in the true branch ({true_value!r}) and in the "
        f"false branch ({false_value!r}) of {what} ({loc})")


def one_branch_error(name, defined_in_true, what, loc):
    defined, missing = ("true", "false") if defined_in_true else ("false", "true")
    return UndefinedOutputError(
        f"'{name}' is defined in the {defined} branch but not in the {missing} branch of "
        f"{what} ({loc}), and it is used after the `if`; define it in both branches (or "
        "before the `if`)")


def branch_python_error(name, true_text, false_text, what, loc):
    return BranchMismatchError(
        f"'{name}' is {true_text} in the true branch but {false_text} in the false branch of "
        f"{what} ({loc}); Python values other than numbers must be the same in both branches")


def branch_type_error(name, true_text, false_text, what, loc):
    return BranchMismatchError(
        f"'{name}' is {true_text} in the true branch but {false_text} in the false branch of "
        f"{what} ({loc}); both branches must give it the same dtype and shape")


# Loops ------------------------------------------------------------------------

def first_defined_error(name, described, what, loc):
    return UndefinedOutputError(
        f"'{name}' is defined inside {what} ({loc}) but not before it, and it is used after the "
        f"loop; it is {described}, and only a number or an array can be first defined in a traced "
        "loop (the loop may run zero times); define it before the loop")

def check_iteration(values, state, flat, leaves, types, new, names, what, loc):
    """Checks one traced iteration: `leaves` (the state's leaves, as the
    loop is entered), `types` (leaf position -> type, for the leaves the
    tracer carries) and `new` (a `Flat` of the state after the body).
    Updates `leaves` and `types` where the loop must start over with a
    wider type or a stand-in for a `return`; returns True if it must."""
    for i, name in enumerate(names):
        if new.treedefs[i] != flat.treedefs[i]:
            raise LoopStateError(
                f"'{name}' changes structure in an iteration of {what} ({loc}): "
                f"{state[i]!r} before it, {new.rebuild(new.leaves)[i]!r} after it")
    again = False
    for j, (before, after) in enumerate(zip(leaves, new.leaves)):
        name = names[flat.owner[j]]
        if j not in types:
            if type(before) is UndefinedReturnValue and not isinstance(after, Undefined):
                if after is None:
                    leaves[j] = None
                elif not values.is_value(after):
                    raise LoopStateError(
                        f"'{name}' (the function's return value) is {values.describe(after)} "
                        f"when returned inside {what} ({loc}); a value returned inside a traced "
                        f"loop must be a number or an {values.array}")
                else:
                    # False, cast to the returned type, is zeros: they stand for
                    # the value until an iteration returns.
                    leaves[j], types[j] = False, values.typeof(after)
                again = True
            elif type(before) is Undefined and type(after) is not Undefined:
                if not values.is_value(after):
                    raise first_defined_error(name, values.describe(after), what, loc)
                # First defined in the loop: it takes the type of its first
                # value; zeros stand for it until an iteration runs.
                leaves[j], types[j] = False, values.typeof(after)
                again = True
            elif not same_python(before, after):
                raise LoopStateError(
                    f"'{name}' is {values.describe(before)} before an iteration of {what} "
                    f"({loc}) but {values.describe(after)} after it; only numbers and "
                    f"{values.array}s can change in a traced loop")
            continue
        merged = values.merge(types[j], values.typeof(after)) if values.is_value(after) else None
        if merged is None or merged[:2] != types[j][:2] and not types[j][2]:
            raise LoopStateError(
                f"'{name}' is {values.describe_type(types[j])} before an iteration of {what} "
                f"({loc}) but {values.describe(after)} after it; loop variables must keep their "
                "dtype and shape across iterations: give it its final dtype and shape before "
                f"the loop (for example with {values.cast})")
        if merged[:2] != types[j][:2]:
            types[j] = merged
            again = True
    return again


# The statements -----------------------------------------------------------------

class StagingBackend(Backend):
    """A backend that runs a statement as Python where its condition's value
    is known while tracing (as the unconverted function would), and stages
    it otherwise. Subclasses give `concrete`, `stage_cond`, `stage_loop` and
    `logical_not`, and `traced_by` for messages ("JAX")."""

    traced_by = "a tracer"

    def concrete(self, value):
        """`bool(value)` if its value is known while tracing, else None."""
        raise NotImplementedError

    def stage_cond(self, pred, true_fn, false_fn, operands, names):
        raise NotImplementedError

    def stage_loop(self, test, body, state, names, what, loc):
        """`while test(*state): state = body(*state)` staged; `body` returns
        the state as a tuple."""
        raise NotImplementedError

    def logical_not(self, value):
        raise NotImplementedError

    def cond(self, pred, true_fn, false_fn, operands, names):
        known = self.concrete(pred)
        if known is not None:
            return Backend.cond(self, known, true_fn, false_fn, operands, names)
        return self.stage_cond(pred, true_fn, false_fn, operands, names)

    def while_loop(self, test, body, state, names, opts):
        state, count = tuple(state), len(names)
        while True:
            flag = test(*state)
            known = self.concrete(flag) if self.owns_type(type(flag)) else bool(flag)
            if known is None:
                return self.stage_loop(
                    test, lambda *s: normalize(body(*s), count, "loop body"), state, names,
                    f"a `while` loop whose condition is traced by {self.traced_by}",
                    user_location())
            if not known:
                return state
            state = normalize(body(*state), count, "loop body")

    def not_(self, value):
        known = self.concrete(value)
        return (not known) if known is not None else self.logical_not(value)

    def and_(self, left, right_fn):
        return self.cond(left, right_fn, lambda: left, (), ("<and expression>",))

    def or_(self, left, right_fn):
        return self.cond(left, lambda: left, right_fn, (), ("<or expression>",))
