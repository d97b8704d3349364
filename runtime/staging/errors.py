"""Every error of a staged `if` or loop, whichever backend stages it: the
texts name the user's variable, the construct (`what`, for example "an `if`
whose condition is traced by JAX") and the user's line (`loc`), and say what
to do. Branch and loop rules raise only what these functions build."""

import types

from autograph.runtime.errors import BranchMismatchError, LoopStateError, TracingError, UndefinedOutputError

__all__ = [
    "branch_python", "branch_structure", "branch_type", "branches_do_not_settle", "cannot_enter",
    "defined_in_loop", "global_rebound", "list_changed", "list_unbounded", "loop_does_not_settle", "loop_python_change",
    "loop_structure", "loop_type_change", "number_out_of_range", "one_branch", "returned_in_loop", "shape_invariants",
    "raised_in_branch", "show",
]


def show(value):
    """`repr(value)` for messages, with functions shown by where the user
    defined them (a lambda made in a loop body is not the body's)."""
    t = type(value)
    if t is list:
        return "[" + ", ".join(show(v) for v in value) + "]"
    if t is tuple:
        return "(" + ", ".join(show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in value.items()) + "}"
    if t is types.FunctionType:
        code = value.__code__
        name = "a lambda" if value.__name__ == "<lambda>" else f"function {value.__name__}"
        return f"<{name} defined at {code.co_filename}:{code.co_firstlineno}>"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, (int, float, complex, bool)):
        # An array or a traced value: its type, not its values, which a
        # tracer may not have (torch's dynamo refuses repr() of a tensor).
        kind = "tensor" if type(dtype).__module__ == "torch" else "array"
        return f"<{kind} of shape {tuple(shape)} and dtype {dtype}>"
    return repr(value)


# Branches ---------------------------------------------------------------------

def raised_in_branch(error, branch, where, what, loc):
    return TracingError(
        f"the {branch} of {what} ({loc}) raises {type(error).__name__}({show(str(error))}) at {where}: "
        "this backend cannot stage an error that the program raises on one way only, so it would be "
        "raised whichever way the condition goes. Check the condition where it is a Python value "
        "(before tracing, or on the inputs' shapes), or return a flag instead of raising")


def branch_structure(name, true_value, false_value, what, loc):
    return BranchMismatchError(
        f"'{name}' has a different structure in the true branch ({show(true_value)}) and in the "
        f"false branch ({show(false_value)}) of {what} ({loc})")


def one_branch(name, defined_in_true, what, loc):
    defined, missing = ("true", "false") if defined_in_true else ("false", "true")
    return UndefinedOutputError(
        f"'{name}' is defined in the {defined} branch but not in the {missing} branch of "
        f"{what} ({loc}), and it is used after the `if`; define it in both branches (or "
        "before the `if`)")


def branch_python(name, true_text, false_text, what, loc):
    return BranchMismatchError(
        f"'{name}' is {true_text} in the true branch but {false_text} in the false branch of "
        f"{what} ({loc}); Python values other than numbers must be the same in both branches")


def branch_type(name, true_text, false_text, what, loc):
    return BranchMismatchError(
        f"'{name}' is {true_text} in the true branch but {false_text} in the false branch of "
        f"{what} ({loc}); both branches must give it the same dtype and shape")


def number_out_of_range(error, name, value_text, type_text, what, loc):
    """A Python number that the type its variable takes in a staged
    statement cannot hold (it would wrap, or become inf)."""
    return error(
        f"'{name}' is {value_text}, which {type_text} cannot hold, and {what} ({loc}) gives it that "
        f"type (from its other branch, or from the loop body): the value would change. Give '{name}' "
        "a dtype that holds both before the statement, or keep it in range")


def branches_do_not_settle(what, loc):
    return BranchMismatchError(f"the outputs of {what} ({loc}) do not settle on one type")


# Loops ------------------------------------------------------------------------

def loop_structure(name, before, after, what, loc):
    hint = ""
    if type(before) is list and type(after) is list and len(after) > len(before):
        hint = f"; to grow a list in a traced loop, append to it (`{name}.append(...)`) instead of making a new one"
    return LoopStateError(
        f"'{name}' changes structure in an iteration of {what} ({loc}): "
        f"{show(before)} before it, {show(after)} after it{hint}")


def returned_in_loop(name, text, array, what, loc):
    return LoopStateError(
        f"'{name}' (the function's return value) is {text} when returned inside {what} "
        f"({loc}); a value returned inside a traced loop must be a number or an {array} of "
        "known shape")


def defined_in_loop(name, described, what, loc):
    return UndefinedOutputError(
        f"'{name}' is defined inside {what} ({loc}) but not before it, and it is used after the "
        f"loop; it is {described}, and only a number or an array can be first defined in a traced "
        "loop (the loop may run zero times); define it before the loop")


def loop_python_change(name, before_text, after_text, array, what, loc):
    return LoopStateError(
        f"'{name}' is {before_text} before an iteration of {what} ({loc}) but {after_text} after "
        f"it; only numbers and {array}s can change in a traced loop")


def loop_type_change(name, before_text, after_text, cast, what, loc, invariant=None):
    """`cast` is the advice ("for example with .astype()"), or None where
    the new value is not one the loop could carry; `invariant`, where only
    dimensions change and the backend can let them, the option to declare."""
    advice = "" if cast is None else (
        f": give it its final dtype and shape before the loop (for example with {cast})")
    if invariant is not None:
        advice += f", or let its shape change with autograph.set_loop_options({invariant}) in the loop"
    return LoopStateError(
        f"'{name}' is {before_text} before an iteration of {what} ({loc}) but {after_text} after "
        f"it; loop variables must keep their dtype and shape across iterations{advice}")


def narrowed_float(name, value, narrowed, what, loc):
    how, dtype, enable = narrowed
    return LoopStateError(
        f"'{name}' is a Python float ({value!r}) that stays one through {what} ({loc}): Python computes "
        f"it in float64, but {how}, so the loop would compute another value. Enable float64 ({enable}), "
        f"or make it an array of the dtype you mean before the loop ({name} = np.{dtype}({value!r}))")


def cannot_enter(name, type_text, what, loc):
    return LoopStateError(f"'{name}' cannot enter {what} ({loc}) as {type_text}")


def list_unbounded(name, array, what, loc):
    return LoopStateError(
        f"'{name}' is a list appended to in {what} ({loc}), whose number of iterations is not "
        f"known while tracing: the loop keeps the elements as rows of one {array}, whose number of "
        "rows must be known. Bound the loop with `autograph.set_loop_options(maximum_iterations=N)` "
        "as the first statement of its body, or loop over a range or an array of known length")


def list_changed(name, what, loc):
    return LoopStateError(
        f"'{name}' is a list that an iteration of {what} ({loc}) changes otherwise than by appending "
        "to it (pop, insert, remove, del or an item set): inside a traced loop a list can only be "
        "appended to, or have items set without changing its length; build a new list after the "
        "loop instead")


def global_rebound(name, module, what, loc):
    return TracingError(
        f"{what} ({loc}) rebinds the global variable '{name}' of module {module!r}: a staged statement "
        "runs its branches (or its body once) while tracing, so the change would happen once, while "
        "tracing, not where and each time the program runs. Return the new value from the function instead "
        f"(or keep it in a variable or an argument), or keep '{name}' out of traced code")


def shape_invariants(what, loc, why):
    return LoopStateError(f"set_loop_options(shape_invariants=...) of {what} ({loc}): {why}")


def loop_does_not_settle(what, loc):
    return LoopStateError(f"the loop variables of {what} ({loc}) do not settle on one dtype")
