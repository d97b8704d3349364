"""How conversion cost grows with function size and nesting depth.

Run from the repository root, with the package installed:

    python benchmarks/scaling.py            # full run, well under 3 minutes
    python benchmarks/scaling.py --quick    # smaller sizes, a few seconds

It generates functions of 100 ... 10,000 lines of mixed statements (ifs,
loops, assignments, calls), and functions of nested `if`s and nested `for`
loops of depth 5 ... 50, and `elif` chains of 100 ... 1,000 branches, converts each with `autograph.to_graph` and prints
a table of conversion time (the fastest of three conversions where one takes
under a second) and time per line (or per level). Each generated
function is also run once, original and converted, and the results compared.
It then checks that

* time per line stays roughly constant with size (the largest size costs at
  most `LINEAR_TOLERANCE` times the per-line time of the smallest);
* no conversion raises RecursionError (or anything else);
* 32 threads converting and calling 1,000 functions each (the same 1,000
  fresh functions in a different order per thread, so threads race to
  convert each one, then 100 functions of their own: 4,200 conversions in
  all) get correct results; the test suite runs a smaller version.

Python refuses to compile more than 20 statically nested blocks (loops,
`try`, `with`), so nested loops deeper than 20 are reported as "original
does not compile" and skipped; nested `if`s have no such limit.

The generators are imported by tests/test_limits.py.
"""

import argparse
import itertools
import linecache
import os
import random
import sys
import threading
import time
import traceback

import autograph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import section  # noqa: E402 - beside this script

SIZES = (100, 300, 1000, 3000, 10000)
DEPTHS = (5, 10, 20, 30, 50)
ELIF_LENGTHS = (100, 300, 1000)
LINEAR_TOLERANCE = 3.0
ELIF_TARGET_LENGTH, ELIF_TARGET_SECONDS = 1000, 1.0
PYTHON_BLOCK_LIMIT = 20

_serial = itertools.count()


# Generators ---------------------------------------------------------------

def helper(a, b):
    """A global the generated functions call."""
    return (a * 7 + b) % 1009


def _chunk(index):
    """A few lines of realistic statements at indentation 1; `index` varies
    constants so that no two chunks (and no two functions) are the same."""
    k = index % 97 + 2
    kind = index % 6
    if kind == 0:
        return [
            f"    a = (a * {k} + b) % 1000",
            f"    if a > {k * 5}:",
            "        b = helper(a, b)",
            "    else:",
            f"        c = c + a % {k}",
        ]
    if kind == 1:
        return [
            f"    for i in range({index % 3 + 1}):",
            f"        a = (a + i * {k}) % 997",
            f"        if i == {index % 2}:",
            "            continue",
            "        items.append(a)",
        ]
    if kind == 2:
        return [
            "    k = 0",
            f"    while k < {index % 3 + 1}:",
            "        k += 1",
            f"        c = (c + k * {k}) % 991",
            f"        if c > {k * 9}:",
            "            break",
        ]
    if kind == 3:
        return [
            f"    b = max(a, b, {k}) % 983",
            "    c = c + len(items) % 5",
            f"    flag = a > b and c % {k} != 0 or not items",
        ]
    if kind == 4:
        return [
            f"    if not flag and b > {k}:",
            f"        a = a - {k} if a > {k} else a + {k}",
            f"    elif c % {k} == 1:",
            "        items = items[-8:]",
            "    else:",
            "        b = (b + 1) % 977",
        ]
    return [
        "    for j, v in enumerate(items[-3:]):",
        f"        c = (c + v * j + {k}) % 971",
        f"    d[a % {k}] = c",
        "    total = sum(items[-4:]) + a",
    ]


def mixed_source(lines, name="f"):
    """Source of a function of about `lines` lines of mixed statements."""
    serial = next(_serial)
    body = [f"def {name}(x):", f"    a, b, c = x, {serial % 1000}, 1", "    items, d, flag, total = [], {}, False, 0"]
    index = serial * 7
    while len(body) < lines - 1:
        body.extend(_chunk(index))
        index += 1
    body.append("    return a, b, c, flag, total, len(items), sorted(d.items())")
    return "\n".join(body) + "\n"


def nested_ifs_source(depth, name="f"):
    serial = next(_serial)
    body = [f"def {name}(x):", f"    r = {serial}"]
    for level in range(depth):
        indent = "    " * (level + 1)
        body.append(f"{indent}if x > {level}:")
        body.append(f"{indent}    r = r + {level} * x")
        if level % 3 == 2:
            body.append(f"{indent}else:")
            body.append(f"{indent}    r = r - 1")
    body.append("    return r")
    return "\n".join(body) + "\n"


def nested_loops_source(depth, name="f"):
    """Nested `for` loops; only the outer three iterate more than once, so
    running it stays cheap."""
    serial = next(_serial)
    body = [f"def {name}(x):", f"    r = {serial}"]
    for level in range(depth):
        indent = "    " * (level + 1)
        bound = "x" if level < 3 else "1"
        body.append(f"{indent}for i{level} in range({bound}):")
        body.append(f"{indent}    r = r + i{level} + {level}")
    body.append("    return r")
    return "\n".join(body) + "\n"


def and_chain_source(length, name="f"):
    """One `return` of `length` comparisons joined by `and` (as in a long
    `__eq__` or `__bool__`)."""
    serial = next(_serial)
    terms = " and ".join(f"x > {i - serial % 2}" for i in range(length))
    return f"def {name}(x):\n    return {terms}\n"


def nested_ifexp_source(depth, name="f"):
    """One `return` of `depth` nested conditional expressions."""
    expression = str(next(_serial))
    for level in range(depth):
        expression = f"({level} if x > {level} else {expression})"
    return f"def {name}(x):\n    return {expression}\n"


def elif_chain_source(length, name="f"):
    """One `if` followed by `length - 1` `elif`s and an `else`: x below
    each bound picks its branch, so inputs up to `length` reach any one."""
    serial = next(_serial)
    body = [f"def {name}(x):"]
    for i in range(length):
        body.append(f"    {'if' if i == 0 else 'elif'} x < {i}:")
        body.append(f"        r = x * {i} + {serial}")
    body += ["    else:", "        r = -x", "    return r"]
    return "\n".join(body) + "\n"


def make_function(source, name="f"):
    """The function `name` defined by `source`, compiled under a fresh file
    name registered in linecache (as IPython does), so it has source."""
    filename = f"<autograph-scaling-{next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"helper": helper, "__name__": "scaling_generated"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def forget(function):
    linecache.cache.pop(function.__code__.co_filename, None)


# Measurements --------------------------------------------------------------

def measure(source, inputs=(0, 3, 50), repeats=3):
    """(conversion seconds, matches) for the function in `source`: the
    fastest of `repeats` conversions of fresh copies (one if it takes a
    second or more), as timeit reports the fastest of its runs."""
    best = None
    for _ in range(repeats):
        f = make_function(source)
        start = time.perf_counter()
        g = autograph.to_graph(f)
        elapsed = time.perf_counter() - start
        if g is f:
            raise AssertionError("to_graph returned the function unconverted")
        matches = all(g(x) == f(x) for x in inputs)
        forget(f)
        best = elapsed if best is None else min(best, elapsed)
        if not matches or elapsed >= 1.0:
            break
    return best, matches


def _row(label, size, unit, elapsed, matches):
    per_unit = f"{elapsed * 1e6 / size:>12.1f} {unit:<5}"
    return f"| {label:<20} | {size:>6} | {elapsed * 1e3:>10.1f} | {per_unit} | {'yes' if matches else 'NO':>7} |"


def scaling_table(sizes, depths):
    """Prints the table; returns a list of failure messages."""
    failures = []
    print("| kind                 |   size | convert ms |   us per unit    | matches |")
    print("| -------------------- | ------ | ---------- | ---------------- | ------- |")
    per_line = {}
    for size in sizes:
        try:
            elapsed, matches = measure(mixed_source(size))
        except BaseException as error:  # noqa: BLE001 - a benchmark reports everything
            failures.append(f"mixed {size} lines: {type(error).__name__}: {error}")
            print(f"| mixed lines          | {size:>6} | FAILED: {type(error).__name__}")
            continue
        per_line[size] = elapsed / size
        print(_row("mixed lines", size, "line", elapsed, matches))
        if not matches:
            failures.append(f"mixed {size} lines: converted result differs from the original")
    for kind, generate in (("nested ifs", nested_ifs_source), ("nested loops", nested_loops_source),
                           ("nested x if c else y", nested_ifexp_source),
                           ("`and` operands", and_chain_source)):
        for depth in depths:
            source = generate(depth)
            try:
                compile(source, "<check>", "exec")
            except SyntaxError as error:
                print(f"| {kind:<20} | {depth:>6} | original does not compile: {error.msg}")
                continue
            try:
                elapsed, matches = measure(source)
            except BaseException as error:  # noqa: BLE001
                failures.append(f"{kind} depth {depth}: {type(error).__name__}: {error}")
                print(f"| {kind:<20} | {depth:>6} | FAILED: {type(error).__name__}")
                continue
            print(_row(kind, depth, "level", elapsed, matches))
            if not matches:
                failures.append(f"{kind} depth {depth}: converted result differs from the original")
    elif_seconds = {}
    for length in ELIF_LENGTHS:
        try:
            elapsed, matches = measure(elif_chain_source(length), inputs=(-1, 0, length // 2, length - 1, length))
        except BaseException as error:  # noqa: BLE001
            failures.append(f"elif chain of {length}: {type(error).__name__}: {error}")
            print(f"| {'`elif` branches':<20} | {length:>6} | FAILED: {type(error).__name__}")
            continue
        elif_seconds[length] = elapsed
        print(_row("`elif` branches", length, "branch", elapsed, matches))
        if not matches:
            failures.append(f"elif chain of {length}: converted result differs from the original")
    if ELIF_TARGET_LENGTH in elif_seconds:
        seconds = elif_seconds[ELIF_TARGET_LENGTH]
        met = seconds < ELIF_TARGET_SECONDS
        print(f"\n`elif` chain of {ELIF_TARGET_LENGTH:,} branches: {seconds * 1e3:.0f} ms to convert "
              f"(target < {ELIF_TARGET_SECONDS * 1e3:.0f} ms, issue 33): {'met' if met else 'NOT met'}")
    if len(per_line) >= 2:
        smallest, largest = min(per_line), max(per_line)
        ratio = per_line[largest] / per_line[smallest]
        print(f"\ntime per line at {largest} lines / at {smallest} lines: {ratio:.2f} "
              f"(tolerance {LINEAR_TOLERANCE})")
        if ratio > LINEAR_TOLERANCE:
            failures.append(f"time per line grows with size: x{ratio:.2f} from {smallest} to {largest} lines")
    return failures


def _thread_source(name, i, salt):
    return (f"def {name}(x):\n"
            f"    if x > {i % 7}:\n"
            f"        x = x * {salt % 5 + 2} + {i}\n"
            f"    for k in range({i % 3}):\n"
            f"        x = x + k\n"
            f"    while x > 1000:\n"
            f"        x = x // 3\n"
            f"    return x\n")


def thread_check(threads=32, shared=1000, private=0):
    """Every thread converts (with `to_graph`) and calls the same `shared`
    fresh functions, each thread in its own order, so that threads race to
    convert the same function, and then `private` functions of its own.
    Returns (seconds, list of errors)."""
    errors = []
    pool = [make_function(_thread_source(f"s{i}", i, i), f"s{i}") for i in range(shared)]
    barrier = threading.Barrier(threads)

    def check(tid, f):
        g = autograph.to_graph(f)
        if g is f:
            errors.append(f"thread {tid}: {f.__name__} returned unconverted")
            return False
        for x in (0, 10, 5000):
            if g(x) != f(x):
                errors.append(f"thread {tid}: {f.__name__}({x}) = {g(x)!r}, expected {f(x)!r}")
                return False
        return True

    def work(tid):
        try:
            order = list(range(shared))
            random.Random(tid).shuffle(order)
            barrier.wait()
            for i in order:
                if not check(tid, pool[i]):
                    return
            for i in range(private):
                f = make_function(_thread_source(f"t{tid}_{i}", i, tid), f"t{tid}_{i}")
                ok = check(tid, f)
                forget(f)
                if not ok:
                    return
        except BaseException:  # noqa: BLE001
            errors.append(f"thread {tid}: {traceback.format_exc()}")

    start = time.perf_counter()
    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for f in pool:
        forget(f)
    return time.perf_counter() - start, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and thread counts")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md as it is")
    options = parser.parse_args(argv)
    sizes = SIZES[:3] if options.quick else SIZES
    depths = DEPTHS[:3] if options.quick else DEPTHS
    print(f"Python {sys.version.split()[0]}, recursion limit {sys.getrecursionlimit()}\n")
    with section("scaling", write=not (options.no_write or options.quick)):
        failures = scaling_table(sizes, depths)
        shared, private = (200, 5) if options.quick else (1000, 100)
        elapsed, errors = thread_check(32, shared, private)
        print(f"\n32 threads, each converting and calling {shared} shared + {private} own functions: "
              f"{elapsed:.1f} s, {len(errors)} errors")
    failures.extend(errors[:5])
    if failures:
        print("\nFAILURES:")
        for failure in failures:
            print(" -", failure)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
