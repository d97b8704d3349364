"""`torch.export.export` of a module that runs `autograph.to_graph(f)`: the
data-dependent `while` and `if` become `while_loop` and `cond` in the
exported program.

    pip install ".[torch]" && python examples/torch_export.py
"""

import importlib.util
import sys

if importlib.util.find_spec("torch") is None:
    print('This example needs PyTorch: pip install ".[torch]" (from the repository root)')
    sys.exit(0)

import torch  # noqa: E402

import autograph  # noqa: E402


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


class Model(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, n):
        return self.f(n)


def main():
    try:
        torch.export.export(Model(collatz_steps), (torch.tensor(27),))
    except Exception as e:  # noqa: BLE001 - shown, not handled
        print(f"# plain torch.export fails: {type(e).__name__}")

    exported = torch.export.export(Model(autograph.to_graph(collatz_steps)), (torch.tensor(27),))
    for n in (27, 6, 1):
        print(f"# eager: collatz_steps({n}) = {collatz_steps(torch.tensor(n))}; "
              f"exported: {exported.module()(torch.tensor(n))}")
    print("# the exported program:")
    print(exported.graph_module.code.strip())


if __name__ == "__main__":
    main()
