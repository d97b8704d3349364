"""Limits: recursion depth, function size, nesting depth, memory, threads.

Fast versions of what benchmarks/scaling.py measures in full (that script
also holds the program generators used here).
"""

import ast
import gc
import os
import sys
import threading
import tracemalloc

import pytest

import autograph
from autograph import conversion, python_ast
from benchmarks import scaling

# Recursion ------------------------------------------------------------------

def plain(n):
    if n == 0:
        return 0
    return plain(n - 1) + 1


def in_if(n):
    if n > 0:
        return in_if(n - 1) + 1
    else:
        return 0


def in_loop(n):
    total = 0
    for _ in range(1):
        if n > 0:
            total = in_loop(n - 1) + 1
    return total


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


SHAPES = [plain, in_if, in_loop, is_even]


def _max_depth(f, limit):
    """The largest n for which f(n) does not raise RecursionError (bisection;
    each probe runs from this same frame, so both functions are measured
    with the same stack beneath them)."""
    lo, hi = 0, limit + 10
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            f(mid)
        except RecursionError:
            hi = mid - 1
        else:
            lo = mid
    return lo


def _depths(f, limit=None):
    converted = autograph.to_graph(f)
    assert converted is not f
    old = sys.getrecursionlimit()
    if limit is not None:
        sys.setrecursionlimit(limit)
    try:
        converted(3)  # warm: converts callees (is_odd) before measuring
        return _max_depth(f, sys.getrecursionlimit()), _max_depth(converted, sys.getrecursionlimit())
    finally:
        sys.setrecursionlimit(old)


@pytest.mark.parametrize("f", SHAPES, ids=lambda f: f.__name__)
def test_recursion_reaches_original_depth(f):
    original, converted = _depths(f)
    assert original > 900  # the default limit of 1000, minus pytest's frames
    # Target: converted >= original. Missed by a constant at the deepest
    # call only (README, known limitations): on Python 3.11 the inlined fast
    # path stores a condition before testing it (`cond = n == 0`), and a
    # comparison not fused with its jump is a C call that counts one level
    # towards the limit; and a call of an overridden builtin (`range` here)
    # runs the override's Python frame.
    shortfall = 2 if sys.version_info < (3, 12) else 1
    assert converted >= original - shortfall, (
        f"converted {f.__name__} recursed {converted} levels, the original {original}")


@pytest.mark.parametrize("f", SHAPES, ids=lambda f: f.__name__)
def test_recursion_costs_no_frames_per_level(f):
    """Whatever the gap at the default limit, it must not grow with the
    depth: the converted function adds no frame per recursion level."""
    low = _depths(f, 1000)
    high = _depths(f, 3000)
    assert high[0] - low[0] >= 1900
    assert (high[0] - high[1]) <= (low[0] - low[1]) + 1, (low, high)


# Size and nesting -----------------------------------------------------------

def _convert_and_compare(source, inputs=(0, 1, 3, 7, 50)):
    f = scaling.make_function(source)
    try:
        g = autograph.to_graph(f)
        assert g is not f, "returned unconverted"
        autograph.to_code(f)  # the readable form unparses too
        for x in inputs:
            assert g(x) == f(x), x
    finally:
        scaling.forget(f)


def test_two_thousand_line_function_converts_and_matches():
    source = scaling.mixed_source(2000)
    assert source.count("\n") >= 2000
    _convert_and_compare(source)


def test_if_nesting_depth_50_converts_and_matches():
    _convert_and_compare(scaling.nested_ifs_source(50))


def test_a_thousand_branch_elif_chain_converts_and_matches():
    # Each `elif` runs in the loop of runtime.operators._else: no call deeper
    # per branch, so every branch is reached, as in Python.
    _convert_and_compare(scaling.elif_chain_source(1000), inputs=(-1, 0, 7, 500, 998, 999, 1000, 5000))


def _function_depth(node, depth=0):
    """How deeply function definitions nest in `node` (no recursion: the
    trees here are deep)."""
    deepest, stack = depth, [(node, depth)]
    while stack:
        node, depth = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = depth + isinstance(child, ast.FunctionDef)
            deepest = max(deepest, inner)
            stack.append((child, inner))
    return deepest


def test_the_code_that_runs_defines_a_long_chains_links_side_by_side():
    # Python compiles nested functions in time quadratic in their depth: the
    # running code of a chain of 400 `elif`s defines their functions in
    # segments of CHAIN_SEGMENT links, where to_code shows one inside the other.
    from autograph.converters import fast_paths
    f = scaling.make_function(scaling.elif_chain_source(400))
    try:
        shown, running = conversion.deep(_trees, f, what="convert")
        assert _function_depth(shown) >= 400
        assert _function_depth(running) <= 400 // fast_paths.CHAIN_SEGMENT + 4
        g = autograph.to_graph(f)
        assert [g(x) for x in (-1, 0, 15.5, 16.5, 17, 200, 398.5, 399, 400)] == \
            [f(x) for x in (-1, 0, 15.5, 16.5, 17, 200, 398.5, 399, 400)]
    finally:
        scaling.forget(f)


def _trees(f):
    """The trees of `f` that to_code shows and that runs, as `ast` trees."""
    shown, running, _, _ = conversion._trees(f)
    return python_ast.to_ast(shown), python_ast.to_ast(running)


def test_an_elif_chain_takes_no_frame_per_branch():
    f = scaling.make_function(scaling.elif_chain_source(300))
    try:
        g = autograph.to_graph(f)
        assert g(0.5) == f(0.5)
        depth = len(_frames())
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(depth + 60)  # far fewer than 300 branches
        try:
            last = g(298.5)
        finally:
            sys.setrecursionlimit(old)
        assert last == f(298.5)
    finally:
        scaling.forget(f)


def _frames():
    frame, frames = sys._getframe(), []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


def _code_size(code):
    return len(code.co_code) + sum(_code_size(c) for c in code.co_consts if hasattr(c, "co_code"))


@pytest.mark.parametrize("make,low,high", [(scaling.nested_ifs_source, 20, 40),
                                           (scaling.nested_loops_source, 15, 20),
                                           (scaling.nested_ifexp_source, 20, 40),
                                           (scaling.and_chain_source, 20, 40)],
                         ids=["ifs", "loops", "conditional expressions", "and operands"])
def test_code_that_runs_grows_linearly_with_nesting_depth(make, low, high):
    """Each inlined statement keeps its functional fallback, which holds all
    that is nested in it: inlining at every level would grow as depth**2."""
    sizes = {}
    for depth in (low, high):
        f = scaling.make_function(make(depth))
        try:
            sizes[depth] = _code_size(autograph.to_graph(f).__code__)
        finally:
            scaling.forget(f)
    ratio = high / low
    assert sizes[high] <= 1.15 * ratio * sizes[low], (sizes, "quadratic would be", ratio ** 2)


def test_loop_nesting_depth_20_converts_and_matches():
    source = scaling.nested_loops_source(20)
    _convert_and_compare(source, inputs=(0, 1, 3))


def test_python_itself_refuses_21_nested_loops():
    """Why the loop test stops at 20: the original cannot be compiled."""
    with pytest.raises(SyntaxError, match="too many statically nested blocks"):
        compile(scaling.nested_loops_source(21), "<nested>", "exec")


# Long chains: Python compiles them (its compiler is C); the converter's
# tree walks recurse a few frames per level, so these exceeded the default
# recursion limit and crashed conversion with a raw RecursionError.

def _elif_chain(n):
    branches = "".join(f"    elif x == {i}:\n        return {i} * 10\n" for i in range(1, n))
    return f"def f(x):\n    if x == 0:\n        return -5\n{branches}    return -1\n"


def _sum_of_terms(n):
    return "def f(x):\n    return " + " + ".join(f"x * {i}" for i in range(n)) + "\n"


def _and_in_if(n):
    return "def f(x):\n    if " + " and ".join(f"x != {i}" for i in range(n)) + ":\n        return 1\n    return 0\n"


def _or_in_while(n):
    test = " or ".join(f"x == {i}" for i in range(n))
    return f"def f(x):\n    steps = 0\n    while {test}:\n        x = x + 7\n        steps += 1\n    return x, steps\n"


@pytest.mark.parametrize("source", [_elif_chain(200), _sum_of_terms(250), _and_in_if(200), _or_in_while(200)],
                         ids=["elif_200", "sum_250", "and_200_in_if", "or_200_in_while"])
def test_long_chains_convert_and_match(source):
    limit = sys.getrecursionlimit()
    _convert_and_compare(source, inputs=(0, 1, 5, 150, 199, 250, -3))
    assert sys.getrecursionlimit() == limit


def _elif_assigning(n):
    branches = "".join(f"    elif x == {i}:\n        y = x * {i}\n" for i in range(1, n))
    return f"def f(x):\n    if x == 0:\n        y = -5\n{branches}    else:\n        y = -1\n    return y\n"


@pytest.mark.parametrize("make", [_elif_chain, _elif_assigning], ids=["returning", "assigning"])
def test_conversion_walks_an_elif_chain_a_bounded_number_of_times(make, monkeypatch):
    # The nodes that the converters' walks visit grow with the chain, not
    # with its square: no pass walks the rest of the chain at every level
    # (item_reads once collected, and jumps once checked, every nested `if`).
    from autograph.converters import jumps

    from autograph import builders
    visits = [0]

    def counting(walk):
        def counted(*args):
            visits[0] += 1
            return walk(*args)
        return counted
    monkeypatch.setattr(builders, "children", counting(builders.children))
    monkeypatch.setattr(jumps, "_child_blocks", counting(jumps._child_blocks))
    counts = []
    for n in (60, 120):
        f = scaling.make_function(make(n))
        visits[0] = 0
        try:
            autograph.to_graph(f)
        finally:
            scaling.forget(f)
        counts.append(visits[0])
    assert counts[1] < 2.3 * counts[0], counts


def test_caller_of_a_long_chain_converts_it_on_call():
    callee = scaling.make_function(_elif_chain(200))
    caller = scaling.make_function("def caller(x):\n    if x:\n        return callee(x) + 1\n"
                                   "    return callee(x)\n", name="caller")
    caller.__globals__["callee"] = callee
    try:
        g = autograph.to_graph(caller)
        assert g is not caller
        assert [g(x) for x in (0, 7, 199, 500)] == [caller(x) for x in (0, 7, 199, 500)]
        assert autograph.conversion.cached(callee) not in (None, callee)
    finally:
        scaling.forget(callee)
        scaling.forget(caller)


def test_chain_too_deep_even_for_the_deep_retry_falls_back_with_a_conversion_error(monkeypatch):
    monkeypatch.setattr(autograph.conversion, "DEEP_RECURSION_LIMIT", 300)
    f = scaling.make_function(_sum_of_terms(400))
    # Other libraries raise the process's limit (torch's dynamo does): the
    # retry takes the larger of the two, so fix the first at Python's default.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        with pytest.raises(autograph.ConversionError, match="cannot convert f: its code nests too deeply"):
            autograph.to_code(f)
        g = autograph.to_graph(f)
        assert g is f and g(3) == sum(3 * i for i in range(400))
    finally:
        sys.setrecursionlimit(limit)
        scaling.forget(f)


# Memory -----------------------------------------------------------------------

def _convert_batch(count, tag):
    for i in range(count):
        name = f"mem_{tag}_{i}"
        source = (f"def {name}(x):\n"
                  f"    if x > {i}:\n"
                  f"        x = x + {i}\n"
                  f"    for k in range(2):\n"
                  f"        x = x * 2\n"
                  f"    return x\n")
        f = scaling.make_function(source, name)
        g = autograph.to_graph(f)
        assert g is not f and g(i + 3) == f(i + 3)
        assert autograph.to_code(f)
        scaling.forget(f)
        del f, g


@pytest.mark.slow
def test_memory_stays_flat_over_thousands_of_short_lived_functions():
    """Run in a fresh interpreter, so that what other tests keep alive
    (logging records, caches of their own) does not count."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run(
        [sys.executable, "-c", "import tests.test_limits as t; t.check_memory_stays_flat()"],
        cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def check_memory_stays_flat():
    """800 functions, each made with exec under its own linecache entry,
    converted (to_graph and to_code), called and deleted. Untraced first
    (tracemalloc slows conversion down several times), then a traced window:
    what a conversion keeps after its function is gone must be nothing (the
    bound allows ~300 bytes a function, which is what exec itself keeps,
    interned names and the like; a leaked conversion costs kilobytes, so a
    few hundred conversions show it)."""
    _convert_batch(100, "warm")
    gc.collect()
    blocks_start = sys.getallocatedblocks()
    _convert_batch(400, "untraced")
    gc.collect()
    blocks_grown = sys.getallocatedblocks() - blocks_start
    assert blocks_grown < 400 * 10, f"{blocks_grown} memory blocks kept after 400 conversions"
    tracemalloc.start()
    try:
        _convert_batch(100, "traced_warm")
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        _convert_batch(200, "traced")
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200 * 300, f"{grown} bytes kept after 200 conversions of deleted functions"


# Threads ----------------------------------------------------------------------

@pytest.mark.slow
def test_32_threads_converting_and_calling_1000_functions_each():
    """Every thread converts and calls the same 1,000 fresh functions in its
    own order (so threads race on each conversion), then 10 of its own."""
    _, errors = scaling.thread_check(threads=32, shared=1000, private=10)
    assert not errors, "\n".join(errors[:5])


def test_threads_get_one_conversion_per_function():
    """Racing threads must all get a correct converted function (never the
    original, never an error); once the race is over, to_graph is stable.
    (Racing threads may get distinct but equivalent function objects.)"""
    f = scaling.make_function(scaling.nested_ifs_source(10))
    results = []
    barrier = threading.Barrier(16)

    def work():
        barrier.wait()
        results.append(autograph.to_graph(f))

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 16
    assert all(g is not f and g(20) == f(20) for g in results)
    assert autograph.to_graph(f) is autograph.to_graph(f)
    scaling.forget(f)
