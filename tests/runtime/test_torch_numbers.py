"""A variable that holds a Python number before a staged `if` or loop holds
a 0-d tensor after it (and in a loop body), standing for the number: `+=`
and the other augmented assignments make a new value, as Python makes a new
int, so that `before = steps; steps += 1` leaves `before` as it was. So do
they on what arithmetic makes from such numbers (`n = steps * 2`), which is
a number in the unconverted function. A user's own tensor, and one made
from a number and a tensor (`steps + x.sum()`, `torch.tensor(steps)`), is
still changed in place, as in eager code.

Each program runs under real `torch.compile` (fullgraph, with no graph
break, and the default mode) and `torch.export` (strict and non-strict),
on arguments that take every way through its conditions; its results are
compared with the unconverted function's."""

import pytest

torch = pytest.importorskip("torch")

import autograph  # noqa: E402
from tests.runtime.exported_graphs import Converted  # noqa: E402
from tests.runtime.test_torch_compile import assert_same, graph_breaks  # noqa: E402


def t(value):
    return torch.tensor(value)


def after_loop(x):
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    before = steps
    steps += 1
    return before, steps


def in_body(x):
    steps = 0
    total = 0
    while x.sum() > 0:
        before = steps
        steps += 1
        total += before
        x = x - 1
    return steps, total


def after_if(x):
    steps = 0
    if x.sum() > 0:
        steps = 2
    before = steps
    steps -= 1
    return before, steps


def several_operators(x):
    n, rate, seen = 1, 1.0, False
    while x.sum() > 0:
        n *= 2
        rate /= 2
        seen = True
        x = x - 1
    old_n, old_rate, old_seen = n, rate, seen
    n *= 3
    n -= 1
    rate *= 0.5
    rate += 1
    seen ^= True
    return old_n, n, old_rate, rate, old_seen, seen


def becomes_float(x):
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    before = steps
    steps /= 2  # an int becomes a float, as in Python
    return before, steps


def second_loop(x):
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    y = x + 2
    last = 0
    while y.sum() > 0:
        last = steps
        steps += 1
        y = y - 1
    return last, steps


def in_branch(x):
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    before = 0
    if x.sum() < 0:
        before = steps
        steps += 10
    return before, steps


def users_tensor(x):
    acc = x * 1
    while x.sum() > 0:
        acc = acc + x
        x = x - 1
    alias = acc
    acc += 1  # a tensor of the user's: in place, `alias` sees it
    return alias, acc


def double(k):
    return k * 2


def computed_from_numbers(x):
    """What Python's arithmetic makes from numbers is a number: `+=` on it
    makes a new one, and `old` keeps the value it had."""
    steps, rate = 0, 1.0
    while x.sum() > 0:
        steps += 1
        rate /= 2
        x = x - 1
    n, m, k, r = steps * 2, -steps, (steps + 1) // 2 % 5, steps * rate
    flag, nothing, big, d, w = steps > 1, not steps, max(steps, 1), double(steps), steps * x.shape[0]
    old = (n, m, k, r, flag, nothing, big, d, w)
    n += 1
    m -= 3
    k *= 4
    r /= 2
    flag |= True
    nothing ^= True
    big += 1
    d += 1
    w += 1
    return old, n, m, k, r, flag, nothing, big, d, w


def computed_in_a_body(x):
    steps = 0
    total = 0
    while x.sum() > 0:
        n = steps * 2
        old = n
        n += 1
        total += old + n
        steps += 1
        x = x - 1
    return steps, total


def computed_then_staged(x):
    """A number computed after one loop, then changed in a branch and in a
    loop, and read in their bodies."""
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    n = steps * 2
    if x.sum() < 0:
        n += 1
    m = 0
    if x.sum() <= 0:
        m = n + 1
        before = m
        m += 1
        m = before * 10 + m
    y = x + 2
    total = 0
    while y.sum() > 0:
        k = n + 1
        before = k
        k += 1
        total += before * 10 + k
        n += 1
        y = y - 1
    old = n
    n += 1
    return old, n, m, total


def computed_in_a_branch(x):
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    if x.sum() < 0:
        n = steps * 2
    else:
        n = 5
    old = n
    n += 1
    return old, n


def negated_tensor(x):
    """`not` of a tensor is a Python bool, and so is `and` of two of them."""
    flag = not x.sum()
    other = not (x > 5).any()
    both = flag and other
    old = (flag, both)
    flag |= True
    both |= True
    return old, flag, both


def tensors_made_from_numbers(x):
    """A number and a tensor make a tensor, and so does torch.tensor(number):
    `+=` changes those in place, as in the unconverted function."""
    steps = 0
    made = x.sum() * 0
    while x.sum() > 0:
        t = torch.tensor(steps)
        alias = t
        t += 1
        made = made + alias
        steps += 1
        x = x - 1
    u = steps + x.sum()
    v = torch.tensor(steps)
    aliases = (u, v)
    u += 1
    v += 1
    return made, aliases, u, v


PROGRAMS = [after_loop, in_body, after_if, several_operators, becomes_float, second_loop, in_branch,
            users_tensor, computed_from_numbers, computed_in_a_body, computed_then_staged, computed_in_a_branch,
            negated_tensor, tensors_made_from_numbers]
ARGS = [(t([2.0]),), (t([0.0]),), (t([-1.0]),)]
ids = [f.__name__ for f in PROGRAMS]


@pytest.mark.parametrize("f", PROGRAMS, ids=ids)
def test_compile_fullgraph(f):
    converted = autograph.to_graph(f)
    torch._dynamo.reset()
    function = torch.compile(converted, fullgraph=True, backend="eager")
    for args in ARGS:
        assert_same(f(*args), function(*args))
    assert graph_breaks(converted, *ARGS[0]) == (1, 0)


@pytest.mark.parametrize("f", PROGRAMS, ids=ids)
def test_compile_default(f):
    torch._dynamo.reset()
    function = torch.compile(autograph.to_graph(f), backend="eager")
    for args in ARGS:
        assert_same(f(*args), function(*args))


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
@pytest.mark.parametrize("f", PROGRAMS, ids=ids)
def test_export(f, strict):
    exported = torch.export.export(Converted(f), ARGS[0], strict=strict)
    for args in ARGS:
        assert_same(f(*args), exported.module()(*args))


def test_augmented_assignment_keeps_python_meaning_in_eager_code():
    """Python values keep Python's `+=`: a list extends in place, an object's
    `__iadd__` runs, a numpy array and an eager tensor change in place."""
    import numpy as np

    class Counter:
        def __init__(self):
            self.calls = 0

        def __iadd__(self, n):
            self.calls += n
            return self

    def f(x, items, counter, array):
        alias_items, alias_array, alias_x = items, array, x
        items += [1]
        counter += 2
        array += 1
        x += 1
        text = "a"
        text += "b"
        return alias_items, alias_array, alias_x, text

    args = ([0], Counter(), np.zeros(2))
    expected = f(torch.zeros(2), *args)
    counter = Counter()
    items, array, x, text = autograph.to_graph(f)(torch.zeros(2), [0], counter, np.zeros(2))
    assert items == expected[0] and text == expected[3] and counter.calls == 2
    np.testing.assert_array_equal(array, expected[1])
    torch.testing.assert_close(x, expected[2])


def across_a_graph_break(x):
    steps = 0
    while x.sum() > 0:
        steps += 1
        x = x - 1
    torch._dynamo.graph_break()
    before = steps
    steps += 1
    return before, steps


def test_number_across_a_graph_break():
    """torch.compile's default mode goes on after a graph break in a frame of
    its own, whose tensors the graph before the break marked."""
    torch._dynamo.reset()
    function = torch.compile(autograph.to_graph(across_a_graph_break), backend="eager")
    for args in ARGS:
        assert_same(across_a_graph_break(*args), function(*args))


def add_one_in_place(x):
    alias = x
    x += 1  # a tensor the caller gave: in place, as in eager code
    return alias


def test_a_returned_number_is_an_ordinary_tensor_to_its_caller():
    """Dynamo gives the tensors a compiled function returns the attribute
    that marks a number; a later run, compiled or eager, treats such a
    tensor as the caller's own: `+=` changes it in place."""
    torch._dynamo.reset()
    steps = torch.compile(autograph.to_graph(after_loop), fullgraph=True, backend="eager")(t([2.0]))[1]
    for run in (torch.compile(autograph.to_graph(add_one_in_place), fullgraph=True, backend="eager"),
                autograph.to_graph(add_one_in_place)):
        before = steps.clone()
        assert run(steps) is steps
        torch.testing.assert_close(steps, before + 1)
