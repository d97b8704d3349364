"""Data-dependent control flow under torch.compile and torch.export: code
converted by autograph against the same function written by hand with
`torch.cond` and `torch._higher_order_ops.while_loop`, measured in the same
run.

    python benchmarks/torch_control_flow.py            # prints, and writes docs/performance.md
    python benchmarks/torch_control_flow.py --no-write

For each function it times one call (the best of `--repeats` timeit runs,
the variants taking turns) of:

  * `torch.compile(f)`: the original, compiled in the default mode (dynamo
    breaks the graph at each data-dependent condition and runs it in
    Python);
  * `torch.compile(to_graph(f), fullgraph=True)` and the hand-written
    version, compiled the same way (inductor);
  * `torch.compile(to_graph(f))` in the default mode, as a user who does not
    ask for one graph gets it;
  * the programs of `torch.export.export` (non-strict) of both, run with
    `.module()`.

Every variant's result is compared with the original run eagerly first.
Targets: converted code within 1.1x of the hand-written version, compiled
and exported, and compiled converted code, in either mode, no slower than
compiling the original.
"""

import argparse
import os
import sys
import timeit

import torch
from torch._higher_order_ops.while_loop import while_loop

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The checkout this script is in, before an installed autograph (a worktree's own code).
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tables import markdown, publish  # noqa: E402

import autograph  # noqa: E402

TARGET = 1.1


# The functions, as people write them ----------------------------------------

def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def newton(a):
    x = a
    while torch.abs(x * x - a) > 1e-9:
        x = 0.5 * (x + a / x)
    return x


def piecewise(x):
    if x.sum() > 0:
        y = x * 2 + 1
    elif x.mean() > -1:
        y = x * x
    else:
        y = -x
    return y


def power_iteration(a, v):
    change = a.new_ones(())
    while change > 1e-5:
        w = a @ v
        w = w / w.norm()
        change = (w - v).abs().max()
        v = w
    return v


# The same functions written with torch's control-flow operators -------------

def collatz_by_hand(n):
    def cond_fn(n, steps):
        return n != 1

    def body_fn(n, steps):
        n = torch.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, (n,))
        return n, steps + 1

    return while_loop(cond_fn, body_fn, (n.clone(), torch.zeros((), dtype=n.dtype)))[1]


def newton_by_hand(a):
    def cond_fn(x):
        return torch.abs(x * x - a) > 1e-9

    def body_fn(x):
        return (0.5 * (x + a / x),)

    return while_loop(cond_fn, body_fn, (a.clone(),))[0]


def piecewise_by_hand(x):
    def otherwise(x):
        return torch.cond(x.mean() > -1, lambda x: x * x, lambda x: -x, (x,))

    return torch.cond(x.sum() > 0, lambda x: x * 2 + 1, otherwise, (x,))


def power_iteration_by_hand(a, v):
    def cond_fn(v, change):
        return change > 1e-5

    def body_fn(v, change):
        w = a @ v
        w = w / w.norm()
        return w, (w - v).abs().max()

    return while_loop(cond_fn, body_fn, (v.clone(), a.new_ones(())))[0]


torch.manual_seed(0)
_MATRIX = torch.randn(16, 16)
_MATRIX = _MATRIX @ _MATRIX.T

CASES = [
    ("collatz", collatz, collatz_by_hand, [(torch.tensor(27),), (torch.tensor(97),)]),
    ("newton", newton, newton_by_hand, [(torch.tensor(2.0, dtype=torch.float64),),
                                        (torch.tensor(81.0, dtype=torch.float64),)]),
    ("piecewise", piecewise, piecewise_by_hand, [(torch.arange(64.0),), (-torch.arange(64.0) / 100,),
                                                 (-torch.arange(64.0),)]),
    ("power iteration", power_iteration, power_iteration_by_hand, [(_MATRIX, torch.ones(16))]),
]


class _Module(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *args):
        return self.f(*args)


def _check(name, variant, expected, actual):
    expected, actual = torch.as_tensor(expected), torch.as_tensor(actual)
    if not torch.allclose(expected.to(actual.dtype), actual, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"{name}, {variant}: {actual} differs from the original's {expected}")


def _times(variants, args, repeats):
    """Per variant, the best time of one call over `repeats` timeit runs.
    The runs of all variants take turns, so that a load on the machine that
    comes and goes weighs on each variant alike (the ratios compare them)."""
    timers = {variant: timeit.Timer(lambda fn=fn: fn(*args)) for variant, fn in variants.items()}
    numbers = {variant: timer.autorange()[0] for variant, timer in timers.items()}
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeats):
        for variant, timer in timers.items():
            best[variant] = min(best[variant], timer.timeit(numbers[variant]) / numbers[variant])
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    options = parser.parse_args()
    rows = []
    for name, f, by_hand, argsets in CASES:
        converted = autograph.to_graph(f)
        variants = {
            "compiled original": torch.compile(f),
            "compiled converted": torch.compile(converted, fullgraph=True),
            "compiled converted, default mode": torch.compile(autograph.to_graph(f)),
            "compiled by hand": torch.compile(by_hand, fullgraph=True),
            "exported converted": torch.export.export(_Module(converted), argsets[0]).module(),
            "exported by hand": torch.export.export(_Module(by_hand), argsets[0]).module(),
        }
        for variant, fn in variants.items():
            for args in argsets:
                _check(name, variant, f(*args), fn(*args))
        times = _times(variants, argsets[0], options.repeats)
        compiled = times["compiled converted"] / times["compiled by hand"]
        exported = times["exported converted"] / times["exported by hand"]
        versus_original = times["compiled converted"] / times["compiled original"]
        default_mode = times["compiled converted, default mode"] / times["compiled original"]
        rows.append([name] + [f"{times[v] * 1e6:.0f}" for v in variants]
                    + [f"{compiled:.2f}x", f"{exported:.2f}x", f"{versus_original:.2f}x", f"{default_mode:.2f}x"])
    header = ["function"] + [f"{v} (µs)" for v in variants]
    header += ["compiled: converted / by hand", "exported: converted / by hand",
               "compiled: converted / original", "default mode: converted / original"]
    text = (markdown(header, rows) + f"\n\nTargets: converted / by hand <= {TARGET}x; "
            "converted / original <= 1x. One call, best of "
            f"{options.repeats} timeit runs (the variants taking turns); torch {torch.__version__}, CPU, inductor.\n")
    publish("torch_control_flow", text, write=not options.no_write)


if __name__ == "__main__":
    main()
