"""What tests export and check in the programs that `torch.export.export`
gives: the module that runs a converted function (`Converted`), the graphs
(subgraphs of `cond` and `while_loop` included), the operators they call,
and their dead nodes; and the comparison of a traced run's result with the
eager one (`assert_same`)."""

import operator

import torch

import autograph


def assert_same(expected, actual):
    """`actual` (tensors, as a traced run gives them) has the structure of
    `expected` (the eager result), and each leaf its value; tensor leaves
    also their dtype and shape."""
    expected, actual = (torch.utils._pytree.tree_flatten(v) for v in (expected, actual))
    assert expected[1] == actual[1]
    for e, a in zip(expected[0], actual[0], strict=True):
        assert isinstance(a, torch.Tensor)
        if isinstance(e, torch.Tensor):
            assert (a.dtype, a.shape) == (e.dtype, e.shape)
        torch.testing.assert_close(a, torch.as_tensor(e, dtype=a.dtype), rtol=1e-6, atol=1e-6)


class Converted(torch.nn.Module):
    """A module whose forward is the converted `f`: what torch.export takes."""

    def __init__(self, f):
        super().__init__()
        self.f = autograph.to_graph(f)

    def forward(self, *args):
        return self.f(*args)


def graphs(exported):
    """The exported program's graph and its subgraphs (cond branches, loop
    tests and bodies)."""
    return [m.graph for m in exported.graph_module.modules() if isinstance(m, torch.fx.GraphModule)]


def dead_nodes(exported):
    """The `call_function` nodes of the exported graphs whose result nothing
    uses and that have no effect. Not counted: `operator.getitem` of an
    operator's outputs, which torch adds for every output of a `cond` or
    `while_loop` (a hand-written program has them too)."""
    return [node.format_node() for graph in graphs(exported) for node in graph.nodes
            if node.op == "call_function" and not node.users and not node.is_impure()
            and node.target is not operator.getitem]


def targets(exported):
    """The names of the operators that the exported graphs call, in order."""
    return [getattr(node.target, "__name__", str(node.target)).split(".")[0]
            for graph in graphs(exported) for node in graph.nodes if node.op == "call_function"]
