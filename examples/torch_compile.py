"""`torch.compile(..., fullgraph=True)` of a model whose forward has
data-dependent control flow: converted by autograph, the `if` becomes
`torch.cond` and the `while` a `while_loop`, in one graph.

    pip install ".[torch]" && python examples/torch_compile.py
"""

import importlib.util
import sys

if importlib.util.find_spec("torch") is None:
    print('This example needs PyTorch: pip install ".[torch]" (from the repository root)')
    sys.exit(0)

import torch  # noqa: E402

import autograph  # noqa: E402


class Refine(torch.nn.Module):
    """Applies its layer until the update is small (at most 100 times), and
    takes the absolute value of a negative result."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = torch.nn.Linear(4, 4)

    def plain_forward(self, x):
        steps = 0
        while steps < 100 and (torch.tanh(self.layer(x)) - x).abs().max() > 1e-4:
            x = 0.5 * (x + torch.tanh(self.layer(x)))
            steps += 1
        if x.sum() < 0:
            x = -x
        return x, steps

    forward = autograph.to_graph(plain_forward)


def main():
    model = Refine()
    x = torch.ones(4)
    try:
        torch.compile(model.plain_forward, fullgraph=True)(x)
    except Exception as e:  # noqa: BLE001 - shown, not handled
        print(f"# the unconverted forward: {type(e).__name__}")
    compiled = torch.compile(model, fullgraph=True)
    explanation = torch._dynamo.explain(model)(x)
    print(f"# converted: {explanation.graph_count} graph, {explanation.graph_break_count} graph breaks")
    for x in (torch.ones(4), -torch.ones(4)):
        eager, steps = model.plain_forward(x)
        out, compiled_steps = compiled(x)
        print(f"# same result as eager: {torch.allclose(eager, out)}, steps {steps} == {int(compiled_steps)}")


if __name__ == "__main__":
    main()
