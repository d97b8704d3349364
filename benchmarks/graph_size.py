"""Graph size: trace, compile and run time and peak memory of the numpy
tracer's graphs from 1,000 to 100,000 ops, beside eager numpy.

Run from the repository root, with the package installed
(`pip install -e . --no-deps`):

    python benchmarks/graph_size.py             # full run, about a minute
    python benchmarks/graph_size.py --quick     # sizes up to 10,000 ops
    python benchmarks/graph_size.py --no-write  # print only

Each row runs in a fresh subprocess, so that its peak memory (`ru_maxrss`,
which includes the interpreter, numpy and autograph, about 40 MB) is its own.

(a) an unrolled chain: `for _ in range(n): x = x * 1.001 + 0.5` (a Python
    loop, traced into 2n ops), on a float64 scalar. Columns: ops in the
    traced graph; trace s (running the function on symbolic values);
    compile s (graph passes and compilation to Python); run s (first call
    of the compiled graph); eager s (the same loop on numpy values); trace
    us per op; peak MB. Targets: 100,000 ops trace, compile and run in under
    60 s and 1 GiB; trace time per op flat from 1,000 to 100,000 ops.
(b) other shapes: a function returning 10,000 values; a symbolic `elif`
    chain of 200 branches; the docs' data-dependent `break` example with
    2,000 iterations; a Python loop of 3,000 symbolic `if`s whose results
    are all returned. Results are checked against eager numpy.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tables import markdown, publish  # noqa: E402

TARGET_SECONDS = 60.0
TARGET_MB = 1024.0


def chain(x, n):
    for _ in range(n):
        x = x * 1.001 + 0.5
    return x


def many_outputs(x, n):
    return [x * i + 1.0 for i in range(n)]


def elif_chain(x, n):
    """`if x == 0: y = x * 0  elif x == 1: y = x * 1 ... else: y = x`, as
    converted code runs it (the operators, without the converter)."""
    import autograph.runtime as ag__

    def branch(i):
        if i == n:
            return x
        return ag__.if_stmt(x == i, lambda: x * i, lambda: branch(i + 1), (), ("y",))
    return branch(0)


def eager_elif_chain(x, n):
    """What `elif_chain` computes, as plain Python."""
    for i in range(n):
        if x == i:
            return x * i
    return x


def find(x, target, n):
    """The docs' example: a Python loop whose `break` depends on a symbolic value."""
    idx = -1
    for i in range(n):
        if x[i] == target:
            idx = i
            break
    return idx


def absolute_values(x, n):
    """A Python loop of symbolic `if`s whose results all stay live."""
    out = []
    for i in range(n):
        if x[i] > 0:
            y = x[i]
        else:
            y = -x[i]
        out.append(y)
    return out


def _phases(fn, args, eager):
    """Traces `fn(*args)` into a graph, compiles it, runs it, and runs
    `eager()` (the original function on the same numpy values): seconds
    per phase, and whether the results are equal."""
    from autograph.runtime.tracer import context, passes
    from autograph.runtime.tracer.compiler import compile_graph
    from autograph.runtime.tracer.graph import Graph

    graph = Graph(fn.__name__)
    t0 = time.perf_counter()
    placeholders = [context.placeholder(graph, np.shape(a), np.asarray(a).dtype, f"a{i}")
                    for i, a in enumerate(args)]
    context.push_graph(graph)
    try:
        result = fn(*placeholders)
    finally:
        context.pop_graph(graph)
    graph.outputs = list(result) if isinstance(result, list) else [result]
    t1 = time.perf_counter()
    ops = graph.count_nodes()
    passes.optimize(graph)
    compiled = compile_graph(graph)
    t2 = time.perf_counter()
    got = compiled(*args)
    t3 = time.perf_counter()
    expected = eager()
    t4 = time.perf_counter()
    expected = expected if isinstance(expected, list) else [expected]
    ok = len(got) == len(expected) and all(np.array_equal(g, e) for g, e in zip(got, expected, strict=True))
    return dict(ops=ops, trace=t1 - t0, compile=t2 - t1, run=t3 - t2, eager=t4 - t3, ok=ok,
                peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def one(kind, n):
    """One measurement, in this process (a subprocess of `main`)."""
    sys.setrecursionlimit(10_000)   # the tracer recurses once per nested `if`
    if kind == "chain":
        x = np.float64(1.0)
        return _phases(lambda x: chain(x, n), [x], lambda: chain(x, n))
    if kind == "outputs":
        x = np.float64(2.0)
        return _phases(lambda x: many_outputs(x, n), [x], lambda: many_outputs(x, n))
    if kind == "elif":
        x = np.int64(n - 1)
        return _phases(lambda x: elif_chain(x, n), [x], lambda: eager_elif_chain(x, n))
    if kind == "break":
        import autograph
        converted = autograph.to_graph(find)
        x, target = np.arange(n), np.int64(n - 3)
        return _phases(lambda x, t: converted(x, t, n), [x, target], lambda: find(x, target, n))
    if kind == "ifs":
        import autograph
        converted = autograph.to_graph(absolute_values)
        x = np.random.default_rng(0).normal(size=n)
        return _phases(lambda x: converted(x, n), [x], lambda: absolute_values(x, n))
    raise ValueError(kind)


def measure(kind, n):
    out = subprocess.run([sys.executable, __file__, "--one", kind, str(n)], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1][:80]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _row(label, m):
    if "error" in m:
        return [label, "-", "-", "-", "-", "-", "-", "-", m["error"]]
    total = m["trace"] + m["compile"] + m["run"]
    return [label, f"{m['ops']:,}", f"{m['trace']:.2f}", f"{m['compile']:.2f}", f"{m['run']:.3f}",
            f"{m['eager']:.3f}", f"{m['trace'] / m['ops'] * 1e6:.0f}", f"{m['peak']:.0f}",
            ("yes" if m["ok"] else "NO") + ("" if total < TARGET_SECONDS and m["peak"] < TARGET_MB
                                            else " (over target)")]


HEADER = ["graph", "ops", "trace s", "compile s", "run s", "eager s", "trace us/op", "peak MB",
          "equal to eager"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--one", nargs=2)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return
    steps = [500, 1500, 5000] if args.quick else [500, 1500, 5000, 15000, 50000]
    rows = [_row(f"chain of {2 * n:,} ops", measure("chain", n)) for n in steps]
    text = ("(a) an unrolled chain `x = x * 1.001 + 0.5` (2 ops per step); target: 100,000 ops in "
            f"under {TARGET_SECONDS:.0f} s and {TARGET_MB:.0f} MB, trace us/op flat\n\n"
            + markdown(HEADER, rows))
    publish("graph-size-chain", text, write=not args.no_write)
    print()
    shapes = [("10,000 outputs", "outputs", 10_000), ("elif chain of 200 branches", "elif", 200),
              ("break example, 2,000 iterations", "break", 2_000),
              ("Python loop of 3,000 symbolic ifs", "ifs", 3_000)]
    rows = [_row(label, measure(kind, n)) for label, kind, n in shapes]
    text = "(b) other graph shapes\n\n" + markdown(HEADER, rows)
    publish("graph-size-shapes", text, write=not args.no_write)


if __name__ == "__main__":
    main()
