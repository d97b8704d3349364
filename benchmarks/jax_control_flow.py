"""JAX: converted Python control flow against hand-written `lax`.

Eight functions, each written twice: as plain Python (converted with
`jax.jit(autograph.to_graph(f))`) and as an expert writes it with `lax`
(`jax.jit(f_lax)`). Run from the repository root (jax 0.10.2, CPU, x64):

    python benchmarks/jax_control_flow.py            # publishes the table
    python benchmarks/jax_control_flow.py --no-write # only prints it

For each function, both versions are checked to give the same result, then:

  * trace, and trace+compile: `jax.jit(f).trace(*args)`, then
    `.lower().compile()`, of a fresh function object (the conversion is
    cached; tracing and XLA compilation are not), min over `--reps` runs
    (trace alone: over 8x as many, interleaved converted/hand-written),
    with the garbage collector off while timed (as `timeit` does);
  * run: a call of the compiled function, interleaved converted/hand-written,
    min over rounds of `timeit` batches;
  * eqns: equations of `jax.make_jaxpr(f)`, nested jaxprs included.

Targets (issue 13): run time geomean <= 1.05x and none above 1.15x;
trace+compile geomean <= 1.3x; equations at most 1.2x; warm trace time at
most 1.3x.

A second table (issue 32, `--table stopping` for it alone), measured the
same way, with a column naming the control-flow primitives of each jaxpr:

  * loops that stop early: `clipped_sum` (`for v in x:` with `break`) and
    `first_below` (`return` from a `for` over `enumerate(x)`), 1000
    elements, on inputs where the exit comes at 10%, at 40% and never;
    by hand, a `lax.while_loop` over an index that stops at the exit;
  * a static range: `decay_range`, `for i in range(len(x))` over a traced
    recurrence, at n = 16, 64, 256 (it unrolls, as Python runs it); by hand,
    `lax.fori_loop`;
  * an `if`/`elif`/`else` chain of four branches on a scalar, under
    `jax.vmap` over 4096 elements; by hand, `lax.select_n` under `jax.vmap`.

Targets (issue 32): run time geomean <= 1.05x and none above 1.15x;
trace+compile geomean <= 1.3x, and at most 1.5x for the static range at
n = 256.
No timed assertions live in the tests; this script only reports.
"""

import argparse
import gc
import math
import os
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import autograph  # noqa: E402
from benchmarks.tables import markdown, publish  # noqa: E402

jax.config.update("jax_enable_x64", True)

TARGET_RUN_GEOMEAN, TARGET_RUN_WORST, TARGET_COMPILE_GEOMEAN, TARGET_EQNS = 1.05, 1.15, 1.3, 1.2
TARGET_TRACE = 1.3
TARGET_STATIC_RANGE_COMPILE = 1.5  # trace+compile of the static range at n=256


# The functions, as a user writes them ---------------------------------------

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
    while jnp.abs(x * x - a) > 1e-9:
        x = 0.5 * (x + a / x)
    return x


def clipped_sum(x, limit):
    total = 0.0
    for v in x:
        if v > 0:
            total += v * v
        else:
            total -= v
        if total > limit:
            break
    return total


def first_below(x, t):
    for i, v in enumerate(x):
        if v < t:
            return i
    return -1


def piecewise(x):
    total = 0.0
    for v in x:
        if v < -1.0:
            total += -1.0 - 2.0 * (v + 1.0)
        elif v < 1.0:
            total += v * v * v
        else:
            total += 1.0 + 3.0 * (v - 1.0)
    return total


def power_iteration(a, v, steps):
    for _ in range(steps):
        v = a @ v
        v = v / jnp.linalg.norm(v)
    return v @ a @ v


def bounded_fixed_point(x, tol):
    i = 0
    delta = tol + 1.0
    while i < 200 and delta > tol:
        new = jnp.cos(x)
        delta = jnp.abs(new - x)
        x = new
        i += 1
    return x, i


def decay_sum(x):
    acc = 0.0
    for i in range(len(x)):
        autograph.set_loop_options(unroll=False)  # without it the loop unrolls, as Python runs it
        acc = 0.5 * acc + x[i]
    return acc


def decay_range(x):
    acc = 0.0
    for i in range(len(x)):  # a Python range: Python runs it, so it unrolls
        acc = acc * 0.9 + x[i]
    return acc


def piecewise_scalar(v):
    if v < -1.0:
        y = -1.0 - 2.0 * (v + 1.0)
    elif v < 0.0:
        y = jnp.exp(v) - 1.0
    elif v < 1.0:
        y = v * v * v
    else:
        y = 1.0 + 3.0 * (v - 1.0)
    return y


# The same functions in hand-written lax -------------------------------------

def collatz_lax(n):
    def body(c):
        n, steps = c
        return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), steps + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


def newton_lax(a):
    return lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-9, lambda x: 0.5 * (x + a / x), a)


def clipped_sum_lax(x, limit):
    n = x.shape[0]

    def body(c):
        i, total, _ = c
        v = x[i]
        total = total + jnp.where(v > 0, v * v, -v)
        return i + 1, total, total > limit
    return lax.while_loop(lambda c: (c[0] < n) & ~c[2], body, (0, 0.0, False))[1]


def first_below_lax(x, t):
    n = x.shape[0]
    i = lax.while_loop(lambda i: (i < n) & (x[jnp.minimum(i, n - 1)] >= t), lambda i: i + 1, 0)
    return jnp.where(i < n, i, -1)


def piecewise_lax(x):
    def body(total, v):
        return total + jnp.where(v < -1.0, -1.0 - 2.0 * (v + 1.0),
                                 jnp.where(v < 1.0, v * v * v, 1.0 + 3.0 * (v - 1.0))), None
    return lax.scan(body, 0.0, x)[0]


def power_iteration_lax(a, v, steps):
    def body(_, v):
        v = a @ v
        return v / jnp.linalg.norm(v)
    v = lax.fori_loop(0, steps, body, v)
    return v @ a @ v


def bounded_fixed_point_lax(x, tol):
    def body(c):
        x, _, i = c
        new = jnp.cos(x)
        return new, jnp.abs(new - x), i + 1
    x, _, i = lax.while_loop(lambda c: (c[2] < 200) & (c[1] > tol), body, (x, tol + 1.0, 0))
    return x, i


def decay_sum_lax(x):
    return lax.fori_loop(0, x.shape[0], lambda i, acc: 0.5 * acc + x[i], 0.0)


def decay_range_lax(x):
    return lax.fori_loop(0, x.shape[0], lambda i, acc: acc * 0.9 + x[i], 0.0)


def piecewise_scalar_lax(v):
    index = (v >= -1.0).astype(jnp.int32) + (v >= 0.0) + (v >= 1.0)
    return lax.select_n(index, -1.0 - 2.0 * (v + 1.0), jnp.exp(v) - 1.0, v * v * v, 1.0 + 3.0 * (v - 1.0))


def _inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 32))
    x = jnp.asarray(rng.uniform(-2.0, 2.0, 1000))
    return [
        (collatz, collatz_lax, (jnp.asarray(27),)),
        (newton, newton_lax, (jnp.asarray(1234.5),)),
        (clipped_sum, clipped_sum_lax, (x, jnp.asarray(700.0))),
        (first_below, first_below_lax, (x, jnp.asarray(-1.99))),
        (piecewise, piecewise_lax, (x,)),
        (power_iteration, power_iteration_lax, (jnp.asarray(a @ a.T), jnp.ones(32), jnp.asarray(50))),
        (bounded_fixed_point, bounded_fixed_point_lax, (jnp.asarray(0.3), jnp.asarray(1e-12))),
        (decay_sum, decay_sum_lax, (jnp.asarray(rng.standard_normal(256)),)),
    ]


EXIT_AT = ((0.1, "exit 10%"), (0.4, "exit 40%"), (None, "no exit"))


def _stopping_inputs(n=1000):
    """Issue 32: (label, converted, hand-written, args, expected or None).
    The loops that stop early get inputs on which they stop at 10% and at 40%
    of the array and on which they never stop; the static range unrolls at
    n = 16, 64, 256; the elif chain runs under jax.vmap."""
    rng = np.random.default_rng(1)
    cases = []
    x = rng.uniform(-2.0, 2.0, n)
    partial = np.cumsum(np.where(x > 0, x * x, -x))
    for at, label in EXIT_AT:
        k = None if at is None else int(at * n)
        limit = partial[-1] + 1.0 if k is None else (partial[k - 1] + partial[k]) / 2  # total > limit first at k
        cases.append((f"clipped_sum ({label})", autograph.to_graph(clipped_sum), clipped_sum_lax,
                      (jnp.asarray(x), jnp.asarray(limit)), partial[-1] if k is None else partial[k]))
    for at, label in EXIT_AT:
        k = None if at is None else int(at * n)
        y = rng.uniform(0.0, 2.0, n)
        if k is not None:
            y[k] = -0.5
        cases.append((f"first_below ({label})", autograph.to_graph(first_below), first_below_lax,
                      (jnp.asarray(y), jnp.asarray(0.0)), -1 if k is None else k))
    for m in (16, 64, 256):
        cases.append((f"decay_range (n={m})", autograph.to_graph(decay_range), decay_range_lax,
                      (jnp.asarray(rng.standard_normal(m)),), None))
    cases.append(("piecewise_scalar (vmap, 4096)", jax.vmap(autograph.to_graph(piecewise_scalar)),
                  jax.vmap(piecewise_scalar_lax), (jnp.asarray(rng.uniform(-3.0, 3.0, 4096)),), None))
    return cases


# Measurements ----------------------------------------------------------------

CONTROL_FLOW = ("while", "scan", "cond")


def control_flow(jaxpr):
    """The control-flow primitives of `jaxpr`, nested ones included, as
    'while', 'scan+cond', ... or 'none'."""
    found = set()

    def walk(j):
        for eqn in j.eqns:
            if eqn.primitive.name in CONTROL_FLOW:
                found.add(eqn.primitive.name)
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    inner = sub if hasattr(sub, "eqns") else getattr(sub, "jaxpr", None)
                    if inner is not None and hasattr(inner, "eqns"):
                        walk(inner)
    walk(jaxpr)
    return "+".join(p for p in CONTROL_FLOW if p in found) or "none"


def count_eqns(jaxpr):
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = sub if hasattr(sub, "eqns") else getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    total += count_eqns(inner)
    return total


def first_call_times(make, args, reps):
    """(trace, trace+compile) of a fresh function, min over `reps`."""
    trace = total = math.inf
    for _ in range(reps):
        f = make()
        gc.collect()
        gc.disable()  # as timeit does: a collection's pause belongs to no one function
        try:
            start = time.perf_counter()
            traced = jax.jit(f).trace(*args)
            middle = time.perf_counter()
            traced.lower().compile()
            end = time.perf_counter()
        finally:
            gc.enable()
        trace, total = min(trace, middle - start), min(total, end - start)
    return trace, total


def trace_times(functions, args, reps):
    """Trace alone of a fresh function of each of `functions`, interleaved,
    min over `reps` rounds: tracing takes milliseconds, so that a burst of
    load on the machine falls on both versions alike."""
    best = [math.inf] * len(functions)
    for _ in range(reps):
        for k, g in enumerate(functions):
            f = fresh(g)
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                jax.jit(f).trace(*args)
                best[k] = min(best[k], time.perf_counter() - start)
            finally:
                gc.enable()
    return best


def run_times(compiled, args, rounds, batch):
    best = [math.inf] * len(compiled)
    for _ in range(rounds):
        for k, f in enumerate(compiled):
            t = timeit.timeit(lambda f=f: jax.block_until_ready(f(*args)), number=batch) / batch
            best[k] = min(best[k], t)
    return best


def fresh(f):
    """A new function object for `f`, so that jax.jit caches nothing."""
    return lambda *args: f(*args)


def _ratio(a, b):
    return a / b


def measure(converted, by_hand, inputs, args):
    """The figures of one row: times (s) and equations, converted then by hand."""
    expected = jax.tree_util.tree_map(np.asarray, jax.jit(by_hand)(*inputs))
    got = jax.tree_util.tree_map(np.asarray, jax.jit(converted)(*inputs))
    for e, g in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(g, e, rtol=1e-9)
    jaxprs = [jax.make_jaxpr(g)(*inputs).jaxpr for g in (converted, by_hand)]
    times = [first_call_times(lambda g=g: fresh(g), inputs, args.reps) for g in (converted, by_hand)]
    trace_s, compile_s = trace_times((converted, by_hand), inputs, 8 * args.reps), [c for _, c in times]
    compiled = [jax.jit(g).lower(*inputs).compile() for g in (converted, by_hand)]
    run_s = run_times(compiled, inputs, args.rounds, batch=200)
    return {"run": run_s, "trace": trace_s, "compile": compile_s, "eqns": [count_eqns(j) for j in jaxprs],
            "flow": [control_flow(j) for j in jaxprs], "result": got}


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def table(named):
    """The Markdown table of [(label, figures)], with a geomean row, and the
    ratios {'run': [...], 'trace': [...], 'compile': [...], 'eqns': [...]}."""
    rows, ratios = [], {key: [] for key in ("run", "trace", "compile", "eqns")}
    for label, m in named:
        for key in ratios:
            ratios[key].append(_ratio(*m[key]))
        run_s, trace_s, compile_s = m["run"], m["trace"], m["compile"]
        rows.append([label, f"{run_s[0] * 1e6:.1f}", f"{run_s[1] * 1e6:.1f}", f"{ratios['run'][-1]:.2f}x",
                     f"{trace_s[0] * 1e3:.2f}", f"{trace_s[1] * 1e3:.2f}", f"{ratios['trace'][-1]:.2f}x",
                     f"{compile_s[0] * 1e3:.1f}", f"{compile_s[1] * 1e3:.1f}", f"{ratios['compile'][-1]:.2f}x",
                     f"{m['eqns'][0]} / {m['eqns'][1]}"]
                    + ([f"{m['flow'][0]} / {m['flow'][1]}"] if "flow" in m else []))
    rows.append(["geomean", "", "", f"{geomean(ratios['run']):.2f}x", "", "", f"{geomean(ratios['trace']):.2f}x",
                 "", "", f"{geomean(ratios['compile']):.2f}x", f"{geomean(ratios['eqns']):.2f}x"]
                + ([""] if named and "flow" in named[0][1] else []))
    header = ["function", "run, converted (us)", "run, lax (us)", "ratio", "trace, converted (ms)",
              "trace, lax (ms)", "ratio", "trace+compile, converted (ms)", "trace+compile, lax (ms)", "ratio",
              "eqns converted / lax"] + (["control flow converted / lax"] if named and "flow" in named[0][1] else [])
    return markdown(header, rows), ratios


def first_table(args):
    named = []
    for f, f_lax, inputs in _inputs():
        m = measure(autograph.to_graph(f), f_lax, inputs, args)
        del m["flow"]
        named.append((f.__name__, m))
    text, r = table(named)
    met = (geomean(r["run"]) <= TARGET_RUN_GEOMEAN and max(r["run"]) <= TARGET_RUN_WORST
           and geomean(r["compile"]) <= TARGET_COMPILE_GEOMEAN and max(r["eqns"]) <= TARGET_EQNS)
    trace_met = max(r["trace"]) <= TARGET_TRACE
    return (text + "\n\n"
            f"Targets: run time geomean <= {TARGET_RUN_GEOMEAN}x and none above {TARGET_RUN_WORST}x "
            f"(worst: {max(r['run']):.2f}x); trace+compile geomean <= {TARGET_COMPILE_GEOMEAN}x; "
            f"equations <= {TARGET_EQNS}x (worst: {max(r['eqns']):.2f}x): {'met' if met else 'NOT met'}. "
            f"Trace alone <= {TARGET_TRACE}x (worst: {max(r['trace']):.2f}x): "
            f"{'met' if trace_met else 'NOT met'}. "
            f"jax {jax.__version__}, {jax.devices()[0].platform.upper()}, x64.\n")


def stopping_table(args):
    named = []
    for label, converted, by_hand, inputs, expected in _stopping_inputs():
        m = measure(converted, by_hand, inputs, args)
        if expected is not None:  # the loop stops where the input says
            np.testing.assert_allclose(m["result"], expected, rtol=1e-9)
        named.append((label, m))
    text, r = table(named)
    static = [ratio for (label, _), ratio in zip(named, r["compile"]) if label.startswith("decay_range")]
    chain = [ratio for (label, _), ratio in zip(named, r["eqns"]) if label.startswith("piecewise")]
    met = (geomean(r["run"]) <= TARGET_RUN_GEOMEAN and max(r["run"]) <= TARGET_RUN_WORST
           and geomean(r["compile"]) <= TARGET_COMPILE_GEOMEAN and static[-1] <= TARGET_STATIC_RANGE_COMPILE
           and chain[0] <= TARGET_EQNS)
    return (text + "\n\n"
            f"Targets (issue 32): run time geomean <= {TARGET_RUN_GEOMEAN}x and none above {TARGET_RUN_WORST}x "
            f"(geomean {geomean(r['run']):.2f}x, worst {max(r['run']):.2f}x); trace+compile geomean "
            f"<= {TARGET_COMPILE_GEOMEAN}x (geomean {geomean(r['compile']):.2f}x) and the static range at n=256 "
            f"<= {TARGET_STATIC_RANGE_COMPILE}x ({static[-1]:.2f}x); the elif chain's equations <= "
            f"{TARGET_EQNS}x those of select_n ({chain[0]:.2f}x): {'met' if met else 'NOT met'}. "
            f"jax {jax.__version__}, {jax.devices()[0].platform.upper()}, x64.\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print the tables only")
    parser.add_argument("--reps", type=int, default=5, help="trace+compile repetitions")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    parser.add_argument("--table", choices=("all", "lax", "stopping"), default="all",
                        help="lax: the eight functions; stopping: loops that stop, static ranges, elif chains")
    args = parser.parse_args(argv)
    if args.table in ("all", "lax"):
        publish("jax-control-flow", first_table(args), write=not args.no_write)
    if args.table in ("all", "stopping"):
        publish("jax-control-flow-stopping", stopping_table(args), write=not args.no_write)


if __name__ == "__main__":
    main()
