"""Converted code under real `torch.export.export`, strict (dynamo traces
the bytecode) and non-strict (torch traces the Python run): conditions on
`.item()` values, `range()` of them and loops over a dimension declared
with `torch.export.Dim` are staged, and the exported programs are lean
(`dead_nodes`).

Each program is exported once and run on arguments that take every way
through its conditions (dynamic shapes: at three sizes); its results are
compared with the unconverted function run eagerly."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

from autograph.runtime.errors import TracingError  # noqa: E402

import autograph  # noqa: E402
from tests.runtime import in_place_programs as in_place  # noqa: E402
from tests.runtime.exported_graphs import Converted, assert_same, dead_nodes, targets  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import torch_control_flow as programs  # noqa: E402

STRICT = pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])


def t(*values, dtype=None):
    return torch.tensor(values[0] if len(values) == 1 else values, dtype=dtype)


def check(f, *argsets, strict, dynamic_shapes=None):
    """Exports f on the first arguments; runs the program on each set and
    checks that it has no dead nodes. Returns the operators it calls."""
    exported = torch.export.export(Converted(f), argsets[0], strict=strict, dynamic_shapes=dynamic_shapes)
    for args in argsets:
        assert_same(f(*args), exported.module()(*args))
    assert dead_nodes(exported) == []
    return targets(exported)


# .item() values and dynamic dimensions ---------------------------------------------

def on_item(x):
    if x.sum().item() > 0:  # an unbacked symbol
        y = x * 2
    else:
        y = -x
    return y


def item_expression(x):
    return x + 1 if x.max().item() > 2 else x - 1


def repeat_item(x, n):
    for _ in range(n.item()):
        x = x * 2
    return x


def count_from_item(x):
    n = x.sum().item()
    total = x * 0
    for i in range(n):
        total = total + i
    return total


def over_a_dimension(x):
    total = x.sum() * 0
    for i in range(x.shape[0]):
        total = total * 2 + i
    return total


@STRICT
def test_condition_on_item_becomes_cond(strict):
    assert "cond" in check(on_item, (t(1.0, 2.0),), (t(-1.0, -2.0),), strict=strict)
    assert "cond" in check(item_expression, (t(1.0, 3.0),), (t(1.0, 2.0),), strict=strict)


@STRICT
def test_range_of_item_becomes_while_loop(strict):
    assert "while_loop" in check(repeat_item, (t(1.0, 2.0), t(3)), (t(1.0, 2.0), t(0)), strict=strict)
    assert "while_loop" in check(count_from_item, (t(2, 1),), (t(0, 0),), (t(1, -3),), strict=strict)


@STRICT
def test_loop_over_a_dynamic_dimension_does_not_specialize_it(strict):
    """Exported once with the dimension dynamic, run at three sizes."""
    operators = check(over_a_dimension, (torch.arange(4.0),), (torch.arange(2.0),), (torch.arange(9.0),),
                      strict=strict, dynamic_shapes=(({0: torch.export.Dim("n")},),))
    assert "while_loop" in operators


# The benchmark's programs (benchmarks/torch_control_flow.py) ---------------------

@STRICT
@pytest.mark.parametrize("name, f, argsets", [(name, f, argsets) for name, f, _, argsets in programs.CASES],
                         ids=[name for name, *_ in programs.CASES])
def test_benchmark_programs(name, f, argsets, strict):
    check(f, *argsets, strict=strict)


# Loop state that starts as a Python number -------------------------------------

def count_steps(x):
    steps = 0
    before = 0
    while x > 0:
        before = steps  # an int in Python: `steps += 1` does not change it
        steps += 1
        x = x - 1
    return before, steps


def test_number_updated_in_place_in_a_loop_is_a_new_value():
    """`steps += 1` on loop state that stands for a Python int makes a new
    tensor (`add`), as Python makes a new int: no in-place `add_` that
    `before` would see. (The one copy is of `before`, which the body gives
    back as it got it: torch forbids a body's output to be its input.)"""
    operators = check(count_steps, (t(3),), (t(1),), (t(0),), strict=False)
    assert "add_" not in operators and operators.count("clone") == 1


def test_collatz_counts_steps_without_copies():
    operators = check(programs.collatz, (t(27),), (t(1),), strict=False)
    assert "add_" not in operators and "clone" not in operators


# Constant tensors made while tracing, read by a body --------------------------

def add_constant_in_branch(x):
    c = torch.tensor(0.25, dtype=torch.float64)
    y = torch.ones_like(x)
    if x.sum() > 0:
        y = y - c
    else:
        for i in range(2):
            y[i] += c  # found by tools/traced_fuzz.py --torch (seed 100025)
    return y


def add_constant_in_loop(x):
    step = torch.tensor([0.5, 1.5], dtype=torch.float64)
    while x.sum() < 10:
        x = x + step
    return x


@STRICT
def test_constant_tensor_read_by_a_body_is_an_input_of_its_operator(strict):
    """Non-strict export keeps a constant tensor that a body reads from
    outside only if it is an input of the body's cond or while_loop: in
    the body's own graph it was lost (the branch added zero)."""
    assert "cond" in check(add_constant_in_branch, (t(1.0, 2.0, dtype=torch.float64),),
                           (t(-1.0, -2.0, dtype=torch.float64),), strict=strict)
    assert "while_loop" in check(add_constant_in_loop, (t(1.0, 2.0, dtype=torch.float64),),
                                 (t(20.0, 0.0, dtype=torch.float64),), strict=strict)


def update_through_an_alias(x):
    y = x * 1
    z = y
    z[0] = 5.0  # in place, as Python's: `y` is `z`
    return y


@STRICT
def test_item_assignment_outside_bodies_is_in_place(strict):
    check(update_through_an_alias, (t(1.0, 2.0),), strict=strict)


@pytest.mark.parametrize("f, argsets", in_place.EXACT, ids=[v[0].__name__ for v in in_place.EXACT])
@STRICT
def test_a_tensor_changed_in_place_in_a_body_is_written_back(f, argsets, strict):
    """The exported program changes the caller's argument as Python does."""
    exported = torch.export.export(Converted(f), in_place.clones(argsets[0]), strict=strict)
    for args in argsets:
        expected, actual = in_place.clones(args), in_place.clones(args)
        assert_same(f(*expected), exported.module()(*actual))
        assert_same(expected, actual)
    assert dead_nodes(exported) == []


@pytest.mark.parametrize("f, args, text, line", in_place.REFUSED + in_place.REFUSED_IN_ONE_GRAPH,
                         ids=[v[0].__name__ for v in in_place.REFUSED + in_place.REFUSED_IN_ONE_GRAPH])
@STRICT
def test_a_change_in_place_that_cannot_be_written_back_is_refused(f, args, text, line, strict):
    with pytest.raises(TracingError) as info:
        torch.export.export(Converted(f), in_place.clones(args), strict=strict)
    message = str(info.value)
    assert text in message and [where for where in in_place.locations(f, line) if where in message], message


@pytest.mark.parametrize("f, args, text, line", in_place.REFUSED_UNDER_DYNAMO,
                         ids=[v[0].__name__ for v in in_place.REFUSED_UNDER_DYNAMO])
def test_a_change_in_place_of_a_tensor_read_from_outside(f, args, text, line):
    """Refused under strict export (dynamo); non-strict export gives Python's result."""
    with pytest.raises(TracingError, match=text):
        torch.export.export(Converted(f), in_place.clones(args), strict=True)
    exported = torch.export.export(Converted(f), in_place.clones(args), strict=False)
    expected, actual = in_place.clones(args), in_place.clones(args)
    assert_same(f(*expected), exported.module()(*actual))
    assert_same(expected, actual)


class Keeper:
    """An object of the user's that keeps a tensor."""


def keeps_then_adds_after_a_branch(x, c, keeper):
    y = x * 1
    keeper.last = y
    if c.sum() > 0:
        y = y * 2
    y += 1  # Python adds to keeper.last too where c <= 0
    return keeper.last * 1


class Keeps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f, self.keeper = autograph.to_graph(keeps_then_adds_after_a_branch), Keeper()

    def forward(self, x, c):
        return self.f(x, c, self.keeper)


@STRICT
def test_a_change_of_a_tensor_that_an_attribute_holds_is_refused(strict):
    """An object's attribute holds the tensor that passes through the `if`."""
    error = TracingError
    with pytest.raises(error, match="that is `y` after an `if` whose condition is traced by torch"):
        torch.export.export(Keeps(), (t(1.0, 2.0), t(-1.0)), strict=strict)


def adds_to_a_view_in_a_branch(x, y):
    a = x[0]
    if y.sum() > 0:
        a += 1  # Python adds to x[0] too
    return a, x


@STRICT
def test_a_view_changed_in_place_in_a_body_is_refused(strict):
    error = TracingError
    with pytest.raises(error, match="`a` is a view of another tensor"):
        torch.export.export(Converted(adds_to_a_view_in_a_branch), (t(1.0, 2.0), t(1.0)), strict=strict)


@torch.no_grad()
def plain_torch_nested_conds_without_grad(ratio, x):
    def inner(r, x):
        return torch.cond(r < 1, lambda r, x: x * 0.9, lambda r, x: x * 1.0, (r, x))
    return torch.cond(ratio == 0, lambda r, x: x * 0.5, inner, (ratio, x))


class PlainNestedConds(torch.nn.Module):
    def forward(self, ratio, x):
        return plain_torch_nested_conds_without_grad(ratio, x)


@STRICT
def test_torch_exports_no_nested_cond_inside_a_no_grad_function(strict):
    """torch's own behaviour, without autograph (docs/pytorch.md,
    Limitations): export's pass that puts a grad-mode region into a
    submodule loses the graphs of a cond nested in another, so a converted
    `@torch.no_grad()` function with an `if` that returns and a later traced
    `if` does not export either. When this fails, torch has fixed it: drop
    the limitation from the docs."""
    with pytest.raises(AttributeError, match="has no attribute 'true_graph_0'"):
        torch.export.export(PlainNestedConds(), (t(0.5), t(1.0, 1.0)), strict=strict)
