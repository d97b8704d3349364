"""A refusal of converted code reaches the user in the package's words in
every torch mode: under `torch.compile(fullgraph=True)` and strict
`torch.export`, whose tracer (dynamo) would hand an error raised in the code
it traces on as its own ("Observed exception", ours only in its debug
context), as under non-strict export: the package's exception, its message
first, naming the variable, the construct and the user's line. In
`torch.compile`'s default mode the statement runs as Python instead, with
Python's result."""

import pytest

torch = pytest.importorskip("torch")

from autograph.runtime.errors import BranchMismatchError, LoopStateError, TracingError, UndefinedOutputError  # noqa: E402

import autograph  # noqa: E402
from tests.runtime.exported_graphs import Converted, assert_same  # noqa: E402


def defined_in_one_branch(x):
    if x.sum() > 0:
        y = x * 2
    return y


def python_object_chosen_by_a_tensor(x):
    if x.sum() > 0:
        mode = "double"
    else:
        mode = "negate"
    return x * 2 if mode == "double" else -x


def loop_changes_a_dtype(x):
    n = torch.zeros((), dtype=torch.int64)
    while x.sum() < 10:
        x = x * 2
        n = n + 0.5
    return x, n


def list_of_a_tensor_in_one_branch(x):
    # (from torch.optim.lbfgs._strong_wolfe: `bracket = [t_prev, t]` in some
    # branches only; the message shows the tensor by its type, since dynamo
    # refuses repr() of one)
    bracket = [0]
    if x.sum() > 0:
        bracket = [0, x.sum()]
    return bracket


def view_changed_in_a_branch(x, c):
    a = x[0]
    if c.sum() > 0:
        a += 1
    return a, x


def number_or_tensor_after_an_if(x, t):
    # Python's `k += 1` changes the tensor in place where the branch ran
    # (`old` sees it) and makes a new int where it did not (`old` is 0).
    k = 0
    if x.sum() > 0:
        k = t * 2
    old = k
    k += 1
    return old, k


def number_or_tensor_of_a_conditional_expression(x, t):
    k = t * 2 if x.sum() > 0 else 0
    k += 1
    return k


def number_or_tensor_after_a_loop(x, t):
    k = 0
    while x.sum() > 0:
        k = t * 2
        x = x - 1
    old = k
    k += 1
    return old, k


def number_or_tensor_in_a_loop_body(x, t):
    k = 0
    while x.sum() > 0:
        k += 1  # an int in the first iteration, a tensor in the others
        k = k * t
        x = x - 1
    return k


# (function, arguments, the error's class, what its first line says, the line of `f` it names)
REFUSED = [
    (defined_in_one_branch, (torch.ones(2),), UndefinedOutputError,
     "'y' is defined in the true branch but not in the false branch of an `if`", 1),
    (python_object_chosen_by_a_tensor, (torch.ones(2),), BranchMismatchError,
     "'mode' is a Python str ('double') in the true branch but a Python str ('negate')", 1),
    (loop_changes_a_dtype, (torch.ones(2),), LoopStateError, "'n'", 2),
    (list_of_a_tensor_in_one_branch, (torch.ones(2),), BranchMismatchError,
     "'bracket' has a different structure in the true branch ([0, <tensor of shape () and dtype torch.float32>])",
     5),
    (view_changed_in_a_branch, (torch.ones(2), torch.ones(1)), TracingError,
     "`a` is a view of another tensor", 2),
    (number_or_tensor_after_an_if, (torch.ones(2), torch.ones(2)), TracingError,
     "which is a Python number on one way through that statement and a tensor on the other", 7),
    (number_or_tensor_of_a_conditional_expression, (torch.ones(2), torch.ones(2)), TracingError,
     "that is the value of a conditional expression whose condition is traced by torch", 2),
    (number_or_tensor_after_a_loop, (torch.ones(2), torch.ones(2)), TracingError,
     "which is a Python number on one way through that statement and a tensor on the other", 6),
    (number_or_tensor_in_a_loop_body, (torch.ones(2), torch.ones(2)), TracingError,
     "which is a Python number on one way through that statement and a tensor on the other", 3),
]
IDS = [case[0].__name__ for case in REFUSED]


def _fullgraph(f, args):
    torch._dynamo.reset()
    return torch.compile(autograph.to_graph(f), fullgraph=True, backend="eager")(*args)


def _strict_export(f, args):
    return torch.export.export(Converted(f), args, strict=True)


def _export(f, args):
    return torch.export.export(Converted(f), args, strict=False)


@pytest.mark.parametrize("mode", [_fullgraph, _strict_export, _export], ids=["fullgraph", "strict-export", "export"])
@pytest.mark.parametrize("f, args, error, text, line", REFUSED, ids=IDS)
def test_the_refusal_is_ours_in_every_mode(f, args, error, text, line, mode):
    with pytest.raises(error) as info:
        mode(f, tuple(a.clone() for a in args))
    first = str(info.value).splitlines()[0]
    assert text in first, first
    assert f"{__file__}:{f.__code__.co_firstlineno + line}" in first, first
    assert type(info.value).__module__ == "autograph.runtime.errors"
    assert "Observed exception" not in str(info.value)


@pytest.mark.parametrize("f, args, error, text, line", REFUSED, ids=IDS)
def test_default_mode_runs_the_refused_statement_as_python(f, args, error, text, line):
    if f is defined_in_one_branch:
        args = (-torch.ones(2),)  # Python raises too: y is unbound
        with pytest.raises(UnboundLocalError):
            torch.compile(autograph.to_graph(f), backend="eager")(*args)
        return
    torch._dynamo.reset()
    expected, actual = tuple(a.clone() for a in args), tuple(a.clone() for a in args)
    # (a Python number stays one here: compared as Python compares it)
    torch.testing.assert_close(torch.compile(autograph.to_graph(f), backend="eager")(*actual), f(*expected))
    torch.testing.assert_close(actual, expected)


def catches_the_refusal(x):
    try:
        return defined_in_one_branch(x)
    except Exception:
        return x


@pytest.mark.parametrize("mode", [_fullgraph, _strict_export, _export], ids=["fullgraph", "strict-export", "export"])
def test_a_refusal_that_the_users_code_catches_still_stops_the_trace(mode):
    # What the trace would hold after the `except` (x) is not what Python
    # runs (x * 2 here; an UnboundLocalError where x.sum() <= 0).
    with pytest.raises(UndefinedOutputError):
        mode(catches_the_refusal, (torch.ones(2),))


def test_default_mode_runs_a_caught_refusal_as_python():
    torch._dynamo.reset()
    compiled = torch.compile(autograph.to_graph(catches_the_refusal), backend="eager")
    assert_same(catches_the_refusal(torch.ones(2)), compiled(torch.ones(2)))
