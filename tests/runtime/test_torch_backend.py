"""The PyTorch backend, through real `torch.export.export` of modules whose
`forward` runs functions converted by `autograph.to_graph`.

Each exported program runs on concrete tensors that take every way through
its conditions, and its result is compared with the unconverted function
run eagerly on the same tensors (plain Python control flow)."""

import inspect

import pytest

torch = pytest.importorskip("torch")

from autograph.runtime.tracer.errors import (  # noqa: E402
    BranchMismatchError,
    LoopStateError,
    UndefinedOutputError,
)

import autograph  # noqa: E402
from tests.runtime.exported_graphs import Converted, assert_same  # noqa: E402


def export(f, *args):
    return torch.export.export(Converted(f), args)


def operators(exported):
    """The names of the operators that the exported graphs call (nested too)."""
    return {getattr(node.target, "__name__", str(node.target)).split(".")[0]
            for module in exported.graph_module.modules() if isinstance(module, torch.fx.GraphModule)
            for node in module.graph.nodes if node.op == "call_function"}


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def check(f, *argsets):
    """Exports f on the first arguments; runs the program on each set."""
    exported = export(f, *argsets[0])
    for args in argsets:
        assert_same(f(*args), exported.module()(*args))
    return operators(exported)


def t(*values, dtype=None):
    return torch.tensor(values[0] if len(values) == 1 else values, dtype=dtype)


# if ------------------------------------------------------------------------

def relu_or_square(x):
    if x.sum() > 0:
        y = x * x
    else:
        y = -x
    return y


def test_if_becomes_cond():
    assert "cond" in check(relu_or_square, (t(0.0, 1.0, 2.0),), (t(0.0, -1.0, -2.0),))


def early_return(x):
    if x > 0:
        return x * 2
    return -x


def test_return_in_traced_if():
    assert "cond" in check(early_return, (t(3.0),), (t(-3.0),))


def nested_with_parameters(x, w):
    if x.sum() > 0:
        if x[0] > 1:
            y = x @ w
        else:
            y = x * 2
    else:
        y = x - 1
    return y


def test_nested_ifs_read_outer_tensors():
    w = torch.arange(4.0).reshape(2, 2)
    check(nested_with_parameters, (t(2.0, 1.0), w), (t(0.5, 1.0), w), (t(-2.0, 1.0), w))


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.forward = autograph.to_graph(self.plain_forward)

    def plain_forward(self, x):
        if x.sum() > 0:
            x = self.linear(x)
        return x


def test_module_parameters_read_in_a_branch_are_operands():
    torch.manual_seed(0)
    gate = Gate()
    exported = torch.export.export(gate, (torch.ones(3),))
    for x in (torch.ones(3), -torch.ones(3)):
        assert_same(gate.plain_forward(x), exported.module()(x))
    cond = next(n for n in exported.graph.nodes if n.op == "call_function"
                and n.target is torch.ops.higher_order.cond)
    assert {"p_linear_weight", "p_linear_bias"} <= {a.name for a in cond.args[3]}


def same_python_number_in_both_branches(x):
    if x > 0:
        n = 3
        y = x
    else:
        n = 3
        y = -x
    for _ in range(n):  # n is still the Python int 3 after the traced if
        y = y + 1
    return y


def test_python_numbers_equal_in_both_branches_stay_python():
    ops = check(same_python_number_in_both_branches, (t(2.0),), (t(-2.0),))
    assert "while_loop" not in ops


def number_meets_tensor(x):
    if x.sum() > 0:
        y = 0
    else:
        y = x
    return y


def test_python_number_takes_the_other_branch_dtype_and_shape():
    exported = export(number_meets_tensor, t(-1.0, -2.0))
    assert_same(t(-1.0, -2.0), exported.module()(t(-1.0, -2.0)))
    assert_same(torch.zeros(2), exported.module()(t(1.0, 2.0)))


def conditional_expression_and_logic(x):
    y = x * 2 if x > 1 else x - 1
    ok = x > 0 and x < 10
    either = x < -5 or x > 5
    return y, ok, either, not x > 2


def test_conditional_expressions_and_boolean_operators():
    ops = check(conditional_expression_and_logic, *[(t(v),) for v in (-7.0, 0.5, 3.0, 11.0)])
    assert {"cond", "logical_not"} <= ops


# loops ---------------------------------------------------------------------

def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1  # in place on a tensor: the body gets a copy
    return steps


def test_while_becomes_while_loop():
    ops = check(collatz_steps, (t(6),), (t(1),), (t(27),))
    assert {"while_loop", "cond"} <= ops
    # Torch checks that no body modifies its inputs when it functionalizes.
    program = export(collatz_steps, t(6)).run_decompositions()
    assert int(program.module()(t(27))) == collatz_steps(27) == 111


def newton_sqrt(a):
    x = a
    while torch.abs(x * x - a) > 1e-6:
        x = 0.5 * (x + a / x)
    return x


def test_newton_iteration():
    assert "while_loop" in check(newton_sqrt, (t(2.0, dtype=torch.float64),),
                                 (t(81.0, dtype=torch.float64),))


def widening_counter(x):
    t = 0
    while t < x:
        t = t + 0.75
    return t


def test_loop_state_from_a_python_int_widens_to_float():
    exported = export(widening_counter, t(2.0))
    assert float(exported.module()(t(2.0))) == widening_counter(2.0) == 2.25
    assert float(exported.module()(t(-1.0))) == 0.0


def return_inside_while(x):
    i = 0
    while i < 10:
        if x * i > 20:
            return i
        i += 1
    return -1


def test_return_inside_traced_loop():
    check(return_inside_while, (t(3.0),), (t(0.5),))


def triangular(n):
    total = 0
    for k in range(n):
        total += k
    return total, len(range(1, n, 2))


def test_range_of_a_traced_bound_becomes_while_loop():
    assert "while_loop" in check(triangular, (t(7),), (t(0),), (t(1),))


# other statements ----------------------------------------------------------

def item_updates(x):
    y = torch.zeros(3)
    for i in range(3):
        y[i] = x[i] * 2
    y[0] += 1
    if x.sum() > 0:
        y[1] = 7.0
    return y


def test_item_assignment_on_traced_tensors_is_functional():
    assert "cond" in check(item_updates, (t(1.0, 2.0, 3.0),), (t(-1.0, -2.0, -3.0),))


def prints_and_asserts(x):
    print("x =", x, sep=" ", end="!\n")
    assert x > 0, "x must be positive"
    return x + 1


def test_print_and_assert_run_when_the_program_runs(capfd):
    exported = export(prints_and_asserts, t(2.0))
    capfd.readouterr()
    assert float(exported.module()(t(5.0))) == 6.0
    assert capfd.readouterr().out == "x = 5.0!\n"
    with pytest.raises(RuntimeError, match="x must be positive"):
        exported.module()(t(-1.0))


def python_only(x):
    # Each branch gives a different dtype, the loop changes the shape, and
    # the item assignment modifies the caller's tensor: all plain Python.
    if x.sum() > 0:
        y = x.int()
    else:
        y = "negative"
    while x.numel() < 8:
        x = torch.cat([x, x])
    x[0] = 100.0
    return y, x


def test_eager_tensors_run_python():
    converted = autograph.to_graph(python_only)
    for values in ([1.0, 2.0], [-1.0, -2.0]):
        a, b = torch.tensor(values), torch.tensor(values)
        expected, actual = python_only(a), converted(b)
        assert expected[0] == actual[0] if isinstance(expected[0], str) else \
            torch.equal(expected[0], actual[0])
        assert torch.equal(expected[1], actual[1]) and torch.equal(a, b)


def countdown(n, scale):
    total = 0
    while n:
        if n % 3:
            total += (n and scale) if total < 10 else 1.5
        n -= 1
    return total, not total


def test_python_numbers_do_not_ask_the_symbolic_number_hook_outside_dynamo():
    """With the torch backend registered, dispatch tells a number that dynamo
    traces as a symbol (type int, float or bool there) through a hook that
    it asks only while dynamo traces: eager converted code on Python numbers
    never calls it."""
    import sys

    from autograph.runtime import backends
    from autograph.runtime.torch import numbers
    hooks = {numbers.is_symbolic.__code__}
    converted = autograph.to_graph(countdown)
    converted(2, 2.0)  # the first call converts and registers what it needs
    assert backends._is_symbolic is numbers.is_symbolic  # installed: torch is loaded
    called = set()
    sys.setprofile(lambda frame, event, arg: called.add(frame.f_code) if event == "call" else None)
    try:
        result = converted(7, 2.0)
    finally:
        sys.setprofile(None)
    assert result == countdown(7, 2.0)
    assert called and not hooks & called


# errors name the variable, the construct and the user's line ---------------

def dtype_mismatch(x):
    if x > 0:
        y = torch.tensor(1, dtype=torch.int32)
    else:
        y = x
    return y


def test_branch_dtype_mismatch_error():
    with pytest.raises(BranchMismatchError) as info:
        export(dtype_mismatch, t(1.0))
    message = str(info.value)
    assert "'y' is int32[] in the true branch but float32[] in the false branch" in message
    assert f"{__file__}:{line_of(dtype_mismatch, 'if x > 0')}" in message


def shape_mismatch(x):
    if x.sum() > 0:
        z = x[:2]
    else:
        z = x
    return z


def test_branch_shape_mismatch_error():
    with pytest.raises(BranchMismatchError) as info:
        export(shape_mismatch, t(1.0, 2.0, 3.0))
    message = str(info.value)
    assert "'z' is float32[2] in the true branch but float32[3] in the false branch" in message
    assert f"{__file__}:{line_of(shape_mismatch, 'if x.sum() > 0')}" in message


def one_branch_only(x):
    if x > 0:
        z = x
    return z


def test_variable_defined_in_one_branch_error():
    with pytest.raises(UndefinedOutputError, match="'z' is defined in the true branch but not in "
                       "the false branch"):
        export(one_branch_only, t(1.0))


def shape_changes(x):
    y = torch.zeros(2)
    while x > 0:
        y = torch.cat([y, y])
        x = x - 1
    return y


def test_loop_shape_change_error():
    with pytest.raises(LoopStateError) as info:
        export(shape_changes, t(3))
    assert "'y' is float32[2] before an iteration" in str(info.value)
    assert f"{__file__}:{line_of(shape_changes, 'while x > 0')}" in str(info.value)


# .item() values and dynamic dimensions -----------------------------------------

def on_item(x):
    if x.sum().item() > 0:  # an unbacked symbol under torch.export
        y = x * 2
    else:
        y = -x
    return y


def test_condition_on_item_becomes_cond():
    assert "cond" in check(on_item, (t(1.0, 2.0),), (t(-1.0, -2.0),))


def repeat_item(x, n):
    for _ in range(n.item()):
        x = x * 2
    return x


def test_range_of_item_becomes_while_loop():
    assert "while_loop" in check(repeat_item, (t(1.0, 2.0), t(3)), (t(1.0, 2.0), t(0)))


def over_a_dimension(x):
    total = x.sum() * 0
    for i in range(x.shape[0]):
        total = total * 2 + i
    return total


def test_loop_over_a_dynamic_dimension_does_not_specialize_it():
    exported = torch.export.export(Converted(over_a_dimension), (torch.ones(4),),
                                   dynamic_shapes={"args": ((torch.export.Dim("n"),),)})
    assert "while_loop" in operators(exported)
    for n in (2, 5, 9):
        assert_same(over_a_dimension(torch.ones(n)), exported.module()(torch.ones(n)))
