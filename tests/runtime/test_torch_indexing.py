"""Indexing a tensor with a staged statement's number under PyTorch: `x[i]`
and `y[i] = v` where `i` is the counter of a staged `while`, the variable of
a `for` over a traced `range`, or a number that a staged loop outputs.

In the unconverted function `i` is a Python int; staged, it is a traced
0-d integer tensor, and torch's indexing wants its value ("Could not
extract specialized integer from data-dependent expression"). Converted
code reads such an index with `aten.index` and writes with `index_put_`
(converters/item_reads.py, `TorchBackend.getitem`): bounds and negative
indices as Python's, checked when the program runs.

Each function runs under `torch.compile(fullgraph=True)` (0 graph breaks),
the default mode, and strict and non-strict `torch.export` (exported once,
run at several bounds), against the unconverted function run eagerly."""

import pytest

torch = pytest.importorskip("torch")

import autograph  # noqa: E402
from tests.runtime.exported_graphs import Converted, assert_same, dead_nodes, graphs  # noqa: E402


def read_in_while(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x[i]
        i += 1
    return s


def read_in_range(x, n):
    s = x[0] * 0
    for i in range(n):
        s = s + x[i] * x[i - 1]
    return s


def read_rows_and_items(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i, 1] + x[i][0] + x[i, :].sum() + x[:, 1][i]
    return s


def read_from_the_end(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[-i - 1]
    return s


def write_in_range(x, n):
    y = torch.zeros(4)
    for i in range(n):
        y[i] = x[i] * 2
    return y


def write_rows(x, n):
    y = torch.zeros_like(x)
    for i in range(n):
        y[i] = x[i].flip(0)
        y[i, 0] += 1
    return y


def count_then_read(x, n):
    steps = 0
    while steps < n:
        steps += 1
    return x[steps]


def index_from_a_branch(x):
    if x.sum() > 0:
        k = 1
    else:
        k = 3
    return x[k]


CASES = [
    (read_in_while, lambda: torch.tensor([1.5, 2.5, 3.0, -4.0]), (0, 2, 4)),
    (read_in_range, lambda: torch.tensor([1.5, 2.5, 3.0, -4.0]), (0, 1, 4)),
    (read_rows_and_items, lambda: torch.arange(8.0).reshape(4, 2), (0, 3, 4)),
    (read_from_the_end, lambda: torch.tensor([1.5, 2.5, 3.0, -4.0]), (0, 2, 4)),
    (write_in_range, lambda: torch.tensor([1.5, 2.5, 3.0, -4.0]), (0, 2, 4)),
    (write_rows, lambda: torch.arange(8.0).reshape(4, 2), (0, 3, 4)),
    (count_then_read, lambda: torch.tensor([1.5, 2.5, 3.0, -4.0]), (0, 2, 3)),
]
IDS = [f.__name__ for f, _, _ in CASES]


@pytest.mark.parametrize("f, make, bounds", CASES, ids=IDS)
def test_compiled_fullgraph_without_graph_breaks(f, make, bounds):
    converted = autograph.to_graph(f)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(converted)(make(), torch.tensor(bounds[1]))
    assert (explanation.graph_count, explanation.graph_break_count) == (1, 0)
    torch._dynamo.reset()
    compiled = torch.compile(converted, fullgraph=True, backend="eager")
    for n in bounds:
        assert_same(f(make(), n), compiled(make(), torch.tensor(n)))


@pytest.mark.parametrize("f, make, bounds", CASES, ids=IDS)
def test_compiled_in_default_mode(f, make, bounds):
    torch._dynamo.reset()
    compiled = torch.compile(autograph.to_graph(f), backend="eager")
    for n in bounds:
        assert_same(f(make(), n), compiled(make(), torch.tensor(n)))


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non-strict"])
@pytest.mark.parametrize("f, make, bounds", CASES, ids=IDS)
def test_exported_once_and_run_at_each_bound(f, make, bounds, strict):
    exported = torch.export.export(Converted(f), (make(), torch.tensor(bounds[1])), strict=strict)
    assert dead_nodes(exported) == []
    for n in bounds:
        assert_same(f(make(), n), exported.module()(make(), torch.tensor(n)))


def test_a_read_is_one_index_operation():
    exported = torch.export.export(Converted(read_in_while), (torch.ones(4), torch.tensor(2)))
    body = [n.target for g in graphs(exported) for n in g.nodes if n.op == "call_function"]
    assert body.count(torch.ops.aten.index.Tensor) == 1
    assert torch.ops.aten.item.default not in body


def test_index_from_a_branch():
    converted = autograph.to_graph(index_from_a_branch)
    torch._dynamo.reset()
    compiled = torch.compile(converted, fullgraph=True, backend="eager")
    exported = torch.export.export(Converted(index_from_a_branch), (torch.ones(4),))
    for x in (torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([-1.0, 2.0, -3.0, 4.0])):
        assert_same(index_from_a_branch(x), compiled(x))
        assert_same(index_from_a_branch(x), exported.module()(x))


@pytest.mark.parametrize("f", [read_in_while, write_in_range], ids=["read", "write"])
def test_an_index_out_of_range_raises_when_the_program_runs(f):
    with pytest.raises(IndexError):
        f(torch.ones(4), 5)  # as Python raises it
    exported = torch.export.export(Converted(f), (torch.ones(4), torch.tensor(2)))
    with pytest.raises((IndexError, RuntimeError), match="out of bounds|index 4"):
        exported.module()(torch.ones(4), torch.tensor(5))
    torch._dynamo.reset()
    compiled = torch.compile(autograph.to_graph(f), fullgraph=True)  # inductor checks the bounds in its kernel
    with pytest.raises((IndexError, RuntimeError), match="out of bounds|index 4"):
        compiled(torch.ones(4), torch.tensor(5))


def test_eager_tensors_and_python_ints_index_as_python_does():
    x = torch.arange(6.0).reshape(3, 2).clone()
    converted = autograph.to_graph(read_rows_and_items)
    assert_same(read_rows_and_items(x, 3), converted(x, 3))
    row = autograph.to_graph(count_then_read)(x, 2)
    assert row._base is x  # a view, as `x[2]` gives


# Loops over a dimension declared dynamic -----------------------------------------

def running_sums(x):
    out = torch.zeros_like(x)
    s = x[0] * 0
    for i in range(x.shape[0]):
        s = s + x[i]
        out[i] = s
    return out


def reversed_copy(x):
    n = len(x)
    out = torch.zeros_like(x)
    for i in range(n):
        out[i] = x[n - 1 - i]
    return out


def carried_buffer(x):
    out = torch.zeros_like(x)
    for _ in range(x.shape[0]):
        out = out.clone() + 1
    return out


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "non-strict"])
@pytest.mark.parametrize("f", [running_sums, reversed_copy, carried_buffer])
def test_a_loop_over_a_dynamic_dimension_is_exported_once_for_every_size(f, strict):
    # `len(x)` keeps the dimension symbolic, and a carried tensor of that size
    # is cast without comparing its sizes (which fails in torch's while_loop).
    n = torch.export.Dim("n", min=2)
    exported = torch.export.export(Converted(f), (torch.arange(5.0),), dynamic_shapes=(({0: n},),), strict=strict)
    assert "while_loop" in str(exported.graph)
    for size in (2, 3, 7):
        x = torch.arange(float(size)) - 1.5
        assert_same(f(x), exported.module()(x))


@pytest.mark.parametrize("f", [running_sums, reversed_copy, carried_buffer])
def test_a_loop_over_a_dynamic_dimension_compiles_once(f):
    torch._dynamo.reset()
    compiled = torch.compile(autograph.to_graph(f), fullgraph=True, dynamic=True, backend="eager")
    for size in (2, 3, 7):
        x = torch.arange(float(size)) - 1.5
        assert_same(f(x), compiled(x))
