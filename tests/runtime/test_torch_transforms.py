"""Functions handed to torch's transforms and control-flow operators from
converted code are converted first, as converted code converts the
functions it calls: `torch.vmap(inner)` and `torch.cond(p, inner, ...)`
trace `inner`'s `if` on a tensor as a staged `if` under `torch.compile`
(before: dynamo's "Data-dependent branching"). Results are compared with
hand-written `torch.where`."""

import torch

import autograph


def inner(t):
    if t > 0:
        return 2 * t * t
    return -t


def inner_by_hand(t):
    return torch.where(t > 0, 2 * t * t, -t)


def vmap_of_inner(xs):
    return torch.vmap(inner)(xs)


def func_vmap_of_inner(xs):
    return torch.func.vmap(inner)(xs)


def branch(x):
    if x.sum() > 2:
        return x * 2
    return x - 1


def cond_with_a_branch_that_branches(x):
    return torch.cond(x[0] > 0, branch, lambda x: x * 0, (x,))


XS = torch.tensor([1.0, -2.0, 3.0])


def test_vmap_of_a_function_with_a_traced_if_under_torch_compile():
    for f in (vmap_of_inner, func_vmap_of_inner):
        compiled = torch.compile(autograph.to_graph(f), fullgraph=True, backend="eager")
        torch.testing.assert_close(compiled(XS), inner_by_hand(XS))


def test_torch_cond_with_a_branch_that_branches_compiles():
    # (Non-strict torch.export of it fails inside torch.cond's own dynamo
    # trace of the branch: "Argument 'result' of Node 'size' was used before
    # it has been defined", the PyTorch issue's "graph we build wrong".)
    def by_hand(x):
        return torch.where(x[0] > 0, torch.where(x.sum() > 2, x * 2, x - 1), x * 0)
    compiled = torch.compile(autograph.to_graph(cond_with_a_branch_that_branches), fullgraph=True, backend="eager")
    for x in (XS, torch.tensor([1.0, 0.5, 0.5]), -XS):
        torch.testing.assert_close(compiled(x), by_hand(x))


def test_eager_grad_runs_the_python_branch():
    # Eager torch.func.grad has concrete values: the `if` is Python's.
    grad = autograph.to_graph(lambda v: torch.func.grad(inner)(v))
    assert float(grad(torch.tensor(3.0))) == 12.0 and float(grad(torch.tensor(-3.0))) == -1.0
