"""The signature cache of `autograph.function`: memory it holds, the cost of
a cached call by kind of arguments, and tracing from several threads.

Run from the repository root, with the package installed
(`pip install -e . --no-deps`):

    python benchmarks/signature_cache.py            # about a minute
    python benchmarks/signature_cache.py --quick    # fewer retraces and repetitions

It prints three Markdown tables (and writes them into docs/performance.md):

(a) memory: bytes of array arguments passed against bytes the function
    still holds after the calls (tracemalloc, after gc); target: what is held
    stays under 20 MB after 10,000 retraces and does not grow with the
    arguments' sizes;
(b) a cached call, per kind of arguments, against calling the same Python
    function eagerly on the same values (best of several `timeit` runs);
(c) 16 threads calling one function with 128 signatures in different
    orders, against one thread making the same calls: traces made (target:
    exactly 128) and wall time.
"""

import argparse
import gc
import logging
import os
import random
import sys
import threading
import time
import timeit
import tracemalloc

import numpy as np

import autograph
from autograph import signature_cache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import markdown, publish  # noqa: E402 - beside this script

TARGET_HELD_MB = 20.0


def affine(x):
    return x * 2.0 + 1.0


def held_after(calls):
    """(bytes passed, bytes held) by `calls()`, which returns the bytes of
    the arguments it passed and the function it called (kept while measured)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    passed, function = calls()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del function
    return passed, held


def memory_table(retraces):
    rows = []

    def big_shapes():
        f = autograph.function(affine, autograph=False)
        passed = 0
        for n in range(10):
            x = np.ones(10_000_000 + n)     # 80 MB, a new shape each call
            f(x)
            passed += x.nbytes
        return passed, f

    def many_shapes():
        f = autograph.function(affine, autograph=False)
        passed = 0
        for n in range(1, retraces + 1):
            x = np.ones(n)
            f(x)
            passed += x.nbytes
        assert f.trace_count == retraces
        return passed, f

    for name, calls in (("10 calls, new 80 MB shapes", big_shapes),
                        (f"{retraces:,} retraces (shapes 1..{retraces:,})", many_shapes)):
        passed, held = held_after(calls)
        rows.append([name, f"{passed / 1e6:,.1f}", f"{held / 1e6:,.2f}",
                     "yes" if held / 1e6 < TARGET_HELD_MB else "NO"])
    return markdown(["calls", "MB passed", "MB held after", f"held < {TARGET_HELD_MB:g} MB"], rows)


class Model:
    def __init__(self):
        self.scale = 2.0
        self.bias = np.ones(4)

    def apply(self, x):
        return x * self.scale + self.bias


def best_us(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def call_table(number, repeat):
    x, y = np.ones(4), np.ones(5)
    model = Model()

    def traced(fn, *calls):
        f = autograph.function(fn, autograph=False)
        for args, kwargs in calls:
            f(*args, **kwargs)
        return f

    one = traced(affine, ((x,), {}))
    two = traced(affine, ((x,), {}), ((y,), {}))
    scalar = traced(lambda x, k: x * k, ((x, 3), {}))
    method = traced(Model.apply, ((model, x), {}))
    keyword = traced(lambda x, scale=2.0: x * scale, ((x,), {"scale": 3.0}))
    cases = [
        ("arrays, one signature (the fast entry)", lambda: one(x), lambda: affine(x), 1),
        ("arrays, two signatures in turn", lambda: (two(x), two(y)), lambda: (affine(x), affine(y)), 2),
        ("an array and a Python int", lambda: scalar(x, 3), lambda: x * 3, 1),
        ("an object argument (self of a method)", lambda: method(model, x), lambda: model.apply(x), 1),
        ("a keyword argument", lambda: keyword(x, scale=3.0), lambda: x * 3.0, 1),
    ]
    rows = []
    for name, traced_call, eager_call, calls in cases:
        t = best_us(traced_call, number, repeat) / calls
        e = best_us(eager_call, number, repeat) / calls
        rows.append([name, f"{t:.2f}", f"{e:.2f}", f"{t - e:+.2f}"])
    return markdown(["a cached call with", "traced (us)", "eager numpy (us)", "difference (us)"], rows)


def thread_table():
    sizes = list(range(1, 129))
    rows = []
    for threads in (1, 16):
        f = autograph.function(affine, autograph=False)
        orders = [random.Random(i).sample(sizes, len(sizes)) for i in range(16)]

        def work(i, f=f, orders=orders, threads=threads):
            for order in (orders[i::threads]):
                for n in order:
                    f(np.ones(n))

        start = time.perf_counter()
        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        wall = time.perf_counter() - start
        rows.append([threads, 16 * 128, f.trace_count, "yes" if f.trace_count == 128 else "NO", f"{wall:.2f}"])
    return markdown(["threads", "calls", "traces", "exactly 128", "wall (s)"], rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    logging.getLogger("autograph").setLevel(logging.ERROR)
    retraces = 2_000 if args.quick else 10_000
    number, repeat = (2_000, 3) if args.quick else (20_000, 5)
    print(f"signature cache size {signature_cache.CACHE_SIZE}\n")
    publish("signature-cache-memory", memory_table(retraces), write=not args.no_write)
    print()
    publish("signature-cache-calls", call_table(number, repeat), write=not args.no_write)
    print()
    publish("signature-cache-threads", thread_table(), write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
