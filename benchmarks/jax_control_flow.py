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


# Measurements ----------------------------------------------------------------

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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--reps", type=int, default=5, help="trace+compile repetitions")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    args = parser.parse_args(argv)

    rows, run_ratios, compile_ratios, trace_ratios, eqn_ratios = [], [], [], [], []
    for f, f_lax, inputs in _inputs():
        converted = autograph.to_graph(f)
        expected = jax.tree_util.tree_map(np.asarray, jax.jit(f_lax)(*inputs))
        got = jax.tree_util.tree_map(np.asarray, jax.jit(converted)(*inputs))
        for e, g in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(got)):
            np.testing.assert_allclose(g, e, rtol=1e-9)
        eqns = [count_eqns(jax.make_jaxpr(g)(*inputs).jaxpr) for g in (converted, f_lax)]
        times = [first_call_times(lambda g=g: fresh(g), inputs, args.reps) for g in (converted, f_lax)]
        trace_s, compile_s = trace_times((converted, f_lax), inputs, 8 * args.reps), [c for _, c in times]
        compiled = [jax.jit(g).lower(*inputs).compile() for g in (converted, f_lax)]
        run_s = run_times(compiled, inputs, args.rounds, batch=200)
        run_ratios.append(_ratio(*run_s))
        compile_ratios.append(_ratio(*compile_s))
        trace_ratios.append(_ratio(*trace_s))
        eqn_ratios.append(_ratio(*eqns))
        rows.append([f.__name__, f"{run_s[0] * 1e6:.1f}", f"{run_s[1] * 1e6:.1f}", f"{run_ratios[-1]:.2f}x",
                     f"{trace_s[0] * 1e3:.2f}", f"{trace_s[1] * 1e3:.2f}", f"{trace_ratios[-1]:.2f}x",
                     f"{compile_s[0] * 1e3:.1f}", f"{compile_s[1] * 1e3:.1f}", f"{compile_ratios[-1]:.2f}x",
                     f"{eqns[0]} / {eqns[1]}"])

    def geomean(xs):
        return math.exp(sum(map(math.log, xs)) / len(xs))

    rows.append(["geomean", "", "", f"{geomean(run_ratios):.2f}x", "", "", f"{geomean(trace_ratios):.2f}x",
                 "", "", f"{geomean(compile_ratios):.2f}x", f"{geomean(eqn_ratios):.2f}x"])
    header = ["function", "run, converted (us)", "run, lax (us)", "ratio", "trace, converted (ms)",
              "trace, lax (ms)", "ratio", "trace+compile, converted (ms)", "trace+compile, lax (ms)", "ratio",
              "eqns converted / lax"]
    met = (geomean(run_ratios) <= TARGET_RUN_GEOMEAN and max(run_ratios) <= TARGET_RUN_WORST
           and geomean(compile_ratios) <= TARGET_COMPILE_GEOMEAN and max(eqn_ratios) <= TARGET_EQNS)
    trace_met = max(trace_ratios) <= TARGET_TRACE
    text = (markdown(header, rows) + "\n\n"
            f"Targets: run time geomean <= {TARGET_RUN_GEOMEAN}x and none above {TARGET_RUN_WORST}x "
            f"(worst: {max(run_ratios):.2f}x); trace+compile geomean <= {TARGET_COMPILE_GEOMEAN}x; "
            f"equations <= {TARGET_EQNS}x (worst: {max(eqn_ratios):.2f}x): {'met' if met else 'NOT met'}. "
            f"Trace alone <= {TARGET_TRACE}x (worst: {max(trace_ratios):.2f}x): "
            f"{'met' if trace_met else 'NOT met'}. "
            f"jax {jax.__version__}, {jax.devices()[0].platform.upper()}, x64.\n")
    publish("jax-control-flow", text, write=not args.no_write)


if __name__ == "__main__":
    main()
