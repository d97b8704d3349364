"""Traced execution with `autograph.function`: tracing time, cached-graph
speed against eager numpy, and per-op overhead.

Run from the repository root, with the package installed
(`pip install -e . --no-deps`):

    python benchmarks/tracing.py             # full run, well under 2 minutes
    python benchmarks/tracing.py --quick     # fewer repetitions, noisier

It prints three Markdown tables, each with its target and whether it is met:

(a) tracing time: the first call of a fresh `autograph.function` (conversion,
    trace, graph passes, compilation of the graph), median over
    `--reps` fresh traces per function (the conversion cache is cleared
    before each);
(b) the cached graph against the original function called eagerly on the
    same numpy inputs: results are checked with `np.allclose` first, then
    each side is timed (best of several `timeit` runs, interleaved);
    target: geometric mean of graph/eager <= 1.0x and no function slower
    than eager (ratio <= 1.0x, with 5% allowance for timer noise);
(c) per-op overhead on tiny arrays: a graph of N elementwise ops on a
    2-element array against the same N numpy calls; target <= 2 us per op.

No timed assertions live in the tests; this script only reports.
"""

import argparse
import gc
import math
import os
import statistics
import sys
import time
import timeit

import numpy as np

import autograph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import section  # noqa: E402 - beside this script

TARGET_GEOMEAN = 1.0
TARGET_WORST = 1.05      # "never slower than eager", with 5% for timer noise
TARGET_OVERHEAD_US = 2.0


# ---------------------------------------------------------------------------
# Functions: numeric code with loops and branches, written as plain numpy.
# ---------------------------------------------------------------------------

def newton_sqrt(a, tol):
    """Elementwise sqrt by Newton's method; data-dependent while loop."""
    x = a
    while np.max(np.abs(x * x - a)) > tol:
        x = 0.5 * (x + a / x)
    return x


def bisection(lo, hi, tol):
    """Root of x**3 - 2x - 5 by bisection; while loop with an if inside."""
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if mid * mid * mid - 2.0 * mid - 5.0 > 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def fixed_point_cos(x, tol):
    """x = cos(x) by fixed-point iteration, counting iterations."""
    steps = 0
    delta = tol + 1.0
    while delta > tol:
        new = np.cos(x)
        delta = np.abs(new - x)
        x = new
        steps += 1
    return x, steps


def exp_series(x, eps):
    """exp(x) by its Taylor series, stopping when the term is small."""
    total = 1.0
    term = 1.0
    n = 1
    while np.abs(term) > eps:
        term = term * x / n
        total = total + term
        n += 1
    return total


def piecewise_sum(x):
    """A piecewise function summed over an array with a for loop and elif."""
    total = 0.0
    for v in x:
        if v < -1.0:
            total += -1.0 - 2.0 * (v + 1.0)
        elif v < 1.0:
            total += v * v * v
        else:
            total += 1.0 + 3.0 * (v - 1.0)
    return total


def running_max(x):
    """Running maximum with a branch; writes an output array item by item."""
    out = np.zeros_like(x)
    best = x[0]
    i = 0
    for v in x:
        if v > best:  # noqa: PLR1730 - the branch is the point
            best = v
        out[i] = best
        i += 1  # noqa: SIM113 - enumerate() over a symbolic array unrolls
    return out


def conditional_cumsum(x, limit):
    """Cumulative sum that resets when it exceeds a limit, with continue."""
    total = 0.0
    resets = 0
    for v in x:
        if v < 0.0:
            continue
        total = total + v
        if total > limit:
            total = 0.0
            resets += 1
    return total, resets


def clip_shrink(x, limit):
    """Shrinks the largest entries until all are within the limit."""
    steps = 0
    while np.max(np.abs(x)) > limit:
        x = np.where(np.abs(x) > limit, x * 0.9, x)
        steps += 1
    return x, steps


def power_iteration(a, tol):
    """Dominant eigenvalue of a small matrix; while loop on the change."""
    v = np.ones(a.shape[0]) / np.sqrt(a.shape[0])
    lam = 0.0
    delta = 1.0
    while delta > tol:
        w = a @ v
        new = np.dot(v, w)
        v = w / np.linalg.norm(w)
        delta = np.abs(new - lam)
        lam = new
    return lam


def jacobi(a, b, tol, max_iter):
    """Jacobi iterations for a diagonally dominant system, with an iteration cap
    (an array argument, so the `for` is a graph loop rather than unrolled)."""
    d = np.diag(a)
    r = a - np.diag(d)
    x = np.zeros_like(b)
    for _ in range(max_iter):
        new = (b - r @ x) / d
        if np.max(np.abs(new - x)) < tol:
            x = new
            break
        x = new
    return x


def isqrt(n):
    """Integer square root by binary search on int64 scalars."""
    lo = n - n
    hi = n + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid <= n // mid:
            lo = mid
        else:
            hi = mid
    return lo


def _spd(n, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


_rng = np.random.default_rng(0)
_signal = _rng.standard_normal(200)

CASES = [
    # (function, args)  -- every argument numpy, so it becomes a graph input
    (newton_sqrt, (np.linspace(1.0, 1e6, 8), np.float64(1e-6))),
    (bisection, (np.float64(0.0), np.float64(5.0), np.float64(1e-12))),
    (collatz_steps, (np.int64(837799),)),
    (gcd, (np.int64(832040), np.int64(514229))),
    (fixed_point_cos, (np.float64(1.0), np.float64(1e-12))),
    (exp_series, (np.float64(3.5), np.float64(1e-15))),
    (piecewise_sum, (np.linspace(-3.0, 3.0, 200),)),
    (running_max, (_signal,)),
    (conditional_cumsum, (_signal, np.float64(4.0))),
    (clip_shrink, (_signal * 10.0, np.float64(1.0))),
    (power_iteration, (_spd(6, 1), np.float64(1e-12))),
    (jacobi, (_spd(8, 2), np.arange(8.0), np.float64(1e-12), np.int64(1000))),
    (isqrt, (np.int64(10 ** 15),)),
]


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------

def _same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-9, atol=0.0)


def trace_time(fn, args, reps):
    times = []
    for _ in range(reps):
        autograph.clear_cache()
        traced = autograph.function(fn)
        gc.collect()
        t0 = time.perf_counter()
        traced(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def best_time(call, target_seconds):
    """Seconds per call: best of 5 runs of a loop sized to ~target_seconds."""
    number, elapsed = 1, 0.0
    while True:
        elapsed = timeit.timeit(call, number=number)
        if elapsed > target_seconds / 5 or number >= 1 << 20:
            break
        number *= 2 if elapsed == 0 else max(2, min(10, int(target_seconds / 5 / elapsed)))
    return min(timeit.repeat(call, number=number, repeat=5)) / number


def interleaved(calls, target_seconds, rounds):
    """Per call in `calls`, the best over `rounds` interleaved measurements."""
    best = [math.inf] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            best[i] = min(best[i], best_time(call, target_seconds))
    return best


def _us(seconds):
    return f"{seconds * 1e6:,.1f}"


def table_a(reps):
    rows, medians = [], []
    for fn, args in CASES:
        t = trace_time(fn, args, reps)
        medians.append(t)
        rows.append(f"| `{fn.__name__}` | {t * 1e3:.2f} |")
    print("Conversion + trace + graph passes + compilation of the graph; median of "
          f"{reps} fresh traces per function.\n")
    print("| function | first call (ms) |")
    print("| --- | ---: |")
    print("\n".join(rows))
    print(f"| **median over functions** | **{statistics.median(medians) * 1e3:.2f}** |\n")


def table_b(target_seconds, rounds):
    rows, ratios, failures = [], [], []
    for fn, args in CASES:
        traced = autograph.function(fn)
        expected = fn(*args)
        got = traced(*args)
        if not _same(got, expected):
            failures.append(fn.__name__)
            rows.append(f"| `{fn.__name__}` | - | - | WRONG RESULT: {got!r} != {expected!r} |")
            continue
        graph = traced.get_concrete_function(*args).graph
        eager_t, graph_t = interleaved(
            [lambda fn=fn, args=args: fn(*args), lambda traced=traced, args=args: traced(*args)],
            target_seconds, rounds)
        ratio = graph_t / eager_t
        ratios.append(ratio)
        shape = ", ".join(_arg_text(a) for a in args)
        nodes = f"{graph.count_nodes()} nodes, {graph.count_nodes('while')} while, " \
                f"{graph.count_nodes('cond')} cond"
        rows.append(f"| `{fn.__name__}({shape})` | {nodes} | {_us(eager_t)} | {_us(graph_t)} | "
                    f"{ratio:.2f}x |")
    geomean = math.exp(statistics.fmean(math.log(r) for r in ratios)) if ratios else math.nan
    worst = max(ratios) if ratios else math.nan
    print("Same numpy inputs; results checked with `np.allclose` before timing; best of "
          f"{rounds} interleaved `timeit` runs. Ratio = graph / eager (lower is better).\n")
    print("| function (inputs) | graph | eager (us) | graph (us) | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    print("\n".join(rows))
    print()
    print("| measure | measured | target | met |")
    print("| --- | ---: | ---: | --- |")
    print(f"| geomean graph/eager | {geomean:.2f}x | <= {TARGET_GEOMEAN:.1f}x | "
          f"{_yes(geomean <= TARGET_GEOMEAN)} |")
    print(f"| slowest graph/eager | {worst:.2f}x | <= {TARGET_WORST:.2f}x (never slower) | "
          f"{_yes(worst <= TARGET_WORST)} |")
    print(f"| wrong results | {len(failures)} | 0 | {_yes(not failures)} |\n")
    return failures


def _arg_text(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return f"{a.dtype.name}"
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def chain(n):
    """A function of n elementwise numpy ops (a Python loop: unrolled when traced)."""
    def f(x):
        for i in range(n):
            k = i % 4
            if k == 0:
                x = x * 0.999
            elif k == 1:
                x = x + 0.001
            elif k == 2:
                x = np.sin(x)
            else:
                x = np.maximum(x, -1.0)
        return x
    return f


def table_c(sizes, target_seconds, rounds):
    print("A graph of N elementwise ops (multiply, add, sin, maximum in turn) against the same "
          "N numpy calls made eagerly; overhead per op = (graph - numpy) / N.\n")
    print("| N | numpy (us) | graph (us) | graph / N (us) | overhead / N (us) | target | met |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    x = np.array([0.3, -0.7])
    worst = -math.inf
    for n in sizes:
        fn = chain(n)
        traced = autograph.function(fn)
        assert _same(traced(x), fn(x))
        graph = traced.get_concrete_function(x).graph
        ops = graph.count_nodes("op")
        # The eager function also pays for its Python loop and branches;
        # compare with straight-line numpy calls so the graph is not flattered.
        straight = _straight_line(n)
        numpy_t, graph_t = interleaved([lambda s=straight: s(x), lambda t=traced: t(x)],
                                       target_seconds, rounds)
        per_op = graph_t / n
        overhead = (graph_t - numpy_t) / n
        worst = max(worst, per_op)
        print(f"| {n} ({ops} op nodes) | {_us(numpy_t)} | {_us(graph_t)} | {per_op * 1e6:.2f} | "
              f"{overhead * 1e6:+.2f} | <= {TARGET_OVERHEAD_US:.1f} | "
              f"{_yes(per_op <= TARGET_OVERHEAD_US)} |")
    print("\n`numpy` is the N calls as straight-line Python (the cheapest eager form); the "
          "target applies to graph time / N.\n")


def _straight_line(n):
    lines = ["def straight(x):"]
    for i in range(n):
        lines.append("    x = " + ["x * 0.999", "x + 0.001", "sin(x)", "maximum(x, -1.0)"][i % 4])
    lines.append("    return x")
    namespace = {"sin": np.sin, "maximum": np.maximum}
    exec("\n".join(lines), namespace)  # noqa: S102 - our own generated code
    return namespace["straight"]


def _yes(ok):
    return "yes" if ok else "**NO**"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, noisier")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md as it is")
    options = parser.parse_args(argv)
    write = not (options.no_write or options.quick)
    reps, target, rounds = (3, 0.02, 2) if options.quick else (7, 0.05, 3)
    start = time.perf_counter()
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}\n")
    with section("tracing-first-call", write):
        table_a(reps)
    with section("tracing-cached-graph", write):
        failures = table_b(target, rounds)
    with section("tracing-per-op", write):
        table_c([10, 100, 1000], target, rounds)
    print(f"(total benchmark time {time.perf_counter() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
