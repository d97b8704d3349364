"""The torch backend's own errors: in-place changes that torch cannot
stage as Python runs them (it traces bodies on copies, and gives a staged
statement's outputs as new tensors). Each names the variable, the
construct (`what`) and the user's line (`loc`), and says what to do."""

from autograph.runtime.errors import TracingError

__all__ = ["changed_in_place_and_assigned", "origin_changed", "outside_changed_in_place", "view_changed_in_place",
           "view_output_changed"]


def view_changed_in_place(name, what, loc):
    return TracingError(
        f"{name} is a view of another tensor (such as `x[i]`, or a row of `for row in x`), and {what} "
        f"({loc}) changes it in place: torch traces that body on a copy, so the tensor it views would "
        "not change, where Python's would. Change that tensor itself (`x[i] += v`), or make the view a "
        "copy where it is made (`.clone()`)")


def changed_in_place_and_assigned(name, what, loc):
    n = name[1:-1]
    return TracingError(
        f"{what} ({loc}) changes {name} in place (`{n}[i] = v`, `+=`, `.add_(v)`) and then makes {name} "
        "another tensor in the same body: torch traces bodies on copies, and the statement gives back only the "
        f"new tensor, so the tensor that {name} held before cannot be updated as Python's is. Copy it before "
        f"the change (`{n} = {n}.clone()`), or change it after making the new tensor")


def _output(name, what, loc):
    """A staged statement's output `name` (None: a conditional expression's
    value) as messages name it."""
    return f"the value of {what} ({loc})" if name is None else f"{name} after {what} ({loc})"


def view_output_changed(name, what, loc, here, kind):
    n = name[1:-1] if name else "a"
    if kind == "number":
        return TracingError(
            f"a tensor is changed in place ({here}) that is {_output(name, what, loc)}, which is a Python "
            "number on one way through that statement and a tensor on the other: Python changes the tensor in "
            "place on the one way (every name that holds it sees the change) and makes a new number on the "
            "other (no other name sees it), and the graph has one tensor for both ways. Make a new value there "
            f"instead (`{n} = {n} + 1` for `{n} += 1`)")
    if kind == "passed":
        return TracingError(
            f"a tensor is changed in place ({here}) that is {_output(name, what, loc)}, which on some way "
            "through that statement is a tensor that other names may hold (the caller's tensor, a parameter, "
            "a buffer, a tensor that a name outside the statement holds), where a branch gives it as it is "
            "or a loop runs no iteration: torch gives the statement's outputs as new tensors, so that tensor "
            f"would not change, where Python's would. Make a new tensor there instead (`{n} = {n} * 2` for "
            f"`{n} *= 2`, `{n} = {n}.clone()` before `{n}[i] = v`)")
    return TracingError(
        f"a tensor is changed in place ({here}) that is {_output(name, what, loc)}, which on some way "
        f"through that statement is a view of another tensor (such as `{n} = b if c else x[i]`): torch gives "
        "the statement's outputs as new tensors, so the tensor viewed would not change, where Python's would. "
        f"Make a new tensor there (`{n} = {n} * 2` for `{n} *= 2`), or copy the view where it is made (`.clone()`)")


def origin_changed(name, what, loc, here):
    output = "the expression's value" if name is None else name
    return TracingError(
        f"a tensor is changed in place ({here}) that on some way through {what} ({loc}) becomes "
        f"{output} as it is (a branch gives it, or a loop runs no iteration): torch gives the "
        f"statement's outputs as new tensors, so {output} would not "
        f"change, where Python's would. Make a new tensor at {here} instead (`x = x + 1` for `x += 1`, "
        "`x = x.clone()` before `x[i] = v`), or copy the tensor where the statement gives it "
        "(`y = x.clone() if c else -x`)")


def outside_changed_in_place(what, loc):
    return TracingError(
        f"a body of {what} ({loc}) changes in place a tensor that it reads from outside without assigning it, "
        "such as `row[0] = v` after `row = y[0]`, or `y.add_(v)`: torch traces the body on a copy, so `y` would "
        "not change, where Python's would. Assign the variable in the body (`y[0, 0] = v`, `y += v`), which "
        "is then written back")
