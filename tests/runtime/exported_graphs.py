"""What tests export and check in the programs that `torch.export.export`
gives: the module that runs a converted function (`Converted`), the graphs
(subgraphs of `cond` and `while_loop` included), the operators they call,
and their dead nodes."""

import operator

import torch

import autograph


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
