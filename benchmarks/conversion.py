"""Conversion time and eager overhead of the transpiler on the benchmark corpus.

Run from the repository root, with the package installed
(`pip install -e . --no-deps`):

    python benchmarks/conversion.py              # full run, under ~2 minutes
    python benchmarks/conversion.py --reps 3     # quicker, noisier
    python benchmarks/conversion.py --only sort  # functions whose name contains "sort"

For every `(function, args)` in `benchmarks/corpus.py` it measures, in one
run, so that a loaded or slow machine moves both sides of each ratio:

* the floor: median over `--reps` of `compile(ast.parse(source))` of the
  function's own source, what Python itself pays to turn the text into
  code;
* conversion time: median over `--reps` fresh conversions with
  `autograph.to_graph` (the conversion cache is cleared, or bypassed with a
  fresh copy of the function, before each one), and its multiple of the
  floor;
* the as-written build: the time a converted function's first call outside
  every trace adds, building its statements as written (median over
  `--reps`);
* eager overhead: time of `converted(*args)` over time of `original(*args)`,
  each the best of several timeit runs, interleaved: outside every trace
  the converted function runs its statements as written;
* the converted code's overhead: the same ratio with
  `autograph.runtime.run_as_written(False)`, which runs the converted code
  on the same Python values, as it runs inside a trace;
* correctness: `converted(*args) == original(*args)`; any mismatch is
  reported, since a benchmark of wrong code is meaningless.

It prints a Markdown table and the summary against the targets of issue 31:
the median conversion at most 5x parse+compile; eager overhead geomean at
most 1.3x, and no function above 2x. Absolute times on these machines vary
2x from run to run; the multiples hold.

If `diastatic-malt` (a standalone fork of TensorFlow's AutoGraph, import name
`malt`) is importable, the same measurements are made with `malt.to_graph` and
shown in extra columns, with the ratio of ours to theirs. The `bench` extra
installs it:

    pip install -e ".[bench]" && python benchmarks/conversion.py

Functions malt cannot convert, or whose converted version raises or returns
a different result, count as failures in its columns; callees that malt
silently leaves unconverted ("could not transform ... will run it as-is")
are flagged with `*`.
"""

import argparse
import ast
import contextlib
import gc
import inspect
import logging
import math
import os
import statistics
import sys
import textwrap
import time
import timeit
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus import CASES
from tables import section

TARGET_CONVERSION_MULTIPLE = 5.0  # of parse+compile, median over the corpus
TARGET_EAGER_GEOMEAN = 1.3
TARGET_EAGER_WORST = 2.0


# ---------------------------------------------------------------------------
# The two transpilers behind one small interface
# ---------------------------------------------------------------------------


def _fresh_copy(f):
    """A copy of `f` that no conversion cache has seen.

    Code objects compare (and hash) by value, so `f.__code__.replace()` alone
    would still hit a cache keyed by code object; an extra unused constant
    makes the copy's code object distinct without changing its behaviour,
    name, file or line numbers (so its source is still found).
    """
    code = f.__code__.replace(co_consts=f.__code__.co_consts + (object(),))
    g = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f.__qualname__
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


class Ours:
    label = "autograph"

    def __init__(self, autograph):
        self.autograph = autograph
        self.has_clear_cache = hasattr(autograph, "clear_cache")

    def convert(self, f):
        return self.autograph.to_graph(f)

    def time_fresh_conversion(self, f):
        g = f
        if self.has_clear_cache:
            try:
                self.autograph.clear_cache()
            except Exception as e:  # noqa: BLE001 - report it, measure anyway
                print(f"WARNING: autograph.clear_cache() raised {type(e).__name__}: {e}; "
                      "using fresh copies of the functions instead", file=sys.stderr)
                self.has_clear_cache = False
        if not self.has_clear_cache:
            g = _fresh_copy(f)
        t0 = time.perf_counter()
        self.autograph.to_graph(g)
        return time.perf_counter() - t0

    def time_written_build(self, f):
        """Time of building the function's statements as written, which a
        converted function does on its first call outside every trace."""
        self.autograph.clear_cache()
        converted = self.autograph.to_graph(f)
        t0 = time.perf_counter()
        converted.__autograph_as_written__()
        return time.perf_counter() - t0

    @contextlib.contextmanager
    def converted_code(self):
        """A context in which converted functions run their converted code
        on Python values, as they do inside a trace."""
        previous = self.autograph.runtime.run_as_written(False)
        try:
            yield
        finally:
            self.autograph.runtime.run_as_written(previous)


class Malt:
    label = "malt"

    def __init__(self, malt):
        self.malt = malt
        from malt.impl import api
        from malt.pyct import cache

        self._api = api
        self._cache = cache

    def convert(self, f):
        return self.malt.to_graph(f)

    def time_fresh_conversion(self, f):
        # malt caches converted functions by code object in its transpiler.
        self._api._TRANSPILER._cache = self._cache.CodeObjectCache()
        t0 = time.perf_counter()
        self.malt.to_graph(f)
        return time.perf_counter() - t0


class _MaltFallbackCounter(logging.Handler):
    """Counts malt's 'could not transform ... will run it as-is' warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if "could not transform" in record.getMessage():
            self.count += 1


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------


def _per_call_times(fns, args, repeats, min_run_s):
    """Best per-call time for each fn in `fns`, runs interleaved."""
    timers = [timeit.Timer("fn(*args)", globals={"fn": fn, "args": args}) for fn in fns]
    numbers = []
    for timer in timers:
        number = 1
        while True:
            if timer.timeit(number) >= min_run_s or number >= 1 << 20:
                break
            number *= 2
        numbers.append(number)
    best = [math.inf] * len(fns)
    for _ in range(repeats):
        for i, (timer, number) in enumerate(zip(timers, numbers)):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def _median_conversion(tool, f, reps):
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        times = [tool.time_fresh_conversion(f) for _ in range(reps)]
    finally:
        if was_enabled:
            gc.enable()
    return statistics.median(times)


def parse_and_compile(f, reps):
    """Median time of `compile(ast.parse(source))` of `f`'s source: the floor
    under any conversion, which parses the same text and compiles a tree."""
    source = textwrap.dedent(inspect.getsource(f))
    filename = inspect.getsourcefile(f)
    times = []
    gc.collect()
    for _ in range(reps):
        t0 = time.perf_counter()
        compile(ast.parse(source, filename), filename, "exec")
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(tool, f, args, reps, repeats, min_run_s, fallback_counter=None):
    """Returns a dict: conv_s, orig_s, call_s, ratio, error, flagged (malt fallbacks)."""
    out = {"conv_s": None, "orig_s": None, "call_s": None, "ratio": None,
           "build_s": None, "staged_ratio": None, "error": None, "flagged": False}
    try:
        converted = tool.convert(f)
    except Exception as e:  # noqa: BLE001 - a failure is a result here
        out["error"] = f"conversion failed: {type(e).__name__}: {_short(e)}"
        return out
    before = fallback_counter.count if fallback_counter else 0
    expected = f(*args)
    try:
        got = converted(*args)
    except Exception as e:  # noqa: BLE001
        out["error"] = f"converted call raised {type(e).__name__}: {_short(e)}"
        return out
    if fallback_counter and fallback_counter.count > before:
        out["flagged"] = True
    if not _same(got, expected):
        out["error"] = f"MISMATCH: converted returned {_short(got)}, original {_short(expected)}"
        return out
    # Eager timing first, while every lazily converted callee is cached;
    # the conversion timing below clears the caches.
    try:
        out["orig_s"], out["call_s"] = _per_call_times([f, converted], args, repeats, min_run_s)
        if hasattr(tool, "converted_code"):
            with tool.converted_code():
                if not _same(converted(*args), expected):
                    out["error"] = "MISMATCH: the converted code (run_as_written(False)) differs"
                    return out
                original, staged = _per_call_times([f, converted], args, repeats, min_run_s)
            out["staged_ratio"] = staged / original
    except Exception as e:  # noqa: BLE001
        out["error"] = f"timing the converted call raised {type(e).__name__}: {_short(e)}"
        return out
    try:
        out["conv_s"] = _median_conversion(tool, f, reps)
        if hasattr(tool, "time_written_build"):
            out["build_s"] = statistics.median(tool.time_written_build(f) for _ in range(reps))
    except Exception as e:  # noqa: BLE001
        out["error"] = f"timing fresh conversions raised {type(e).__name__}: {_short(e)}"
        return out
    out["ratio"] = out["call_s"] / out["orig_s"]
    return out


def _same(a, b):
    return type(a) is type(b) and a == b


def _short(x, limit=90):
    s = x if isinstance(x, str) else repr(x)
    if isinstance(x, BaseException):
        s = str(x).splitlines()[0] if str(x) else ""
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _geomean(xs):
    xs = [x for x in xs if x is not None]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _fmt(x, spec, suffix=""):
    return "—" if x is None else format(x, spec) + suffix


def _row_cells(r, floor):
    """(conversion ms, its multiple of the floor, converted µs, ratio)."""
    if r["error"]:
        return ["FAIL", "—", "—", "FAIL"]
    mark = "*" if r["flagged"] else ""
    return [_fmt(r["conv_s"] * 1e3, ".2f"), _fmt(r["conv_s"] / floor, ".0f", "×"),
            _fmt(r["call_s"] * 1e6, ".1f"), _fmt(r["ratio"], ".2f", "×") + mark]


def _extra_cells(r):
    """(as-written build ms, converted code's ratio): ours only."""
    if r["error"]:
        return ["—", "FAIL"]
    return [_fmt(r["build_s"] * 1e3, ".2f"), _fmt(r["staged_ratio"], ".2f", "×")]


def _summary(label, results, targets=True):
    """The lines of one transpiler's summary: (floor, result) pairs; with
    `targets`, each figure against its target."""
    ok = [(floor, r) for floor, r in results if not r["error"]]
    lines = [f"{label}: {len(ok)}/{len(results)} functions converted and correct"]
    if not ok:
        return lines
    multiple = _median([r["conv_s"] / floor for floor, r in ok])
    ratios = [r["ratio"] for _, r in ok]
    geo, worst = _geomean(ratios), max(ratios)

    def against(value, target):
        return f"; target <= {target:g}×: {'OK' if value <= target else 'MISSED'}" if targets else ""
    lines.append(f"- conversion: median {multiple:.0f}× parse+compile of the same source "
                 f"(median {_median([r['conv_s'] for _, r in ok]) * 1e3:.2f} ms against "
                 f"{_median([floor for floor, _ in ok]) * 1e3:.3f} ms"
                 f"{against(multiple, TARGET_CONVERSION_MULTIPLE)})")
    lines.append(f"- eager overhead: geometric mean {geo:.2f}× ({against(geo, TARGET_EAGER_GEOMEAN)[2:]}), "
                 f"worst {worst:.2f}× ({against(worst, TARGET_EAGER_WORST)[2:]})"
                 if targets else f"- eager overhead: geometric mean {geo:.2f}×, worst {worst:.2f}×")
    if ok[0][1]["build_s"] is not None:
        staged = [r["staged_ratio"] for _, r in ok]
        lines.append(f"- the statements as written, built on a converted function's first call outside a "
                     f"trace: median {_median([r['build_s'] for _, r in ok]) * 1e3:.2f} ms more")
        lines.append(f"- the converted code on the same Python values (what runs inside a trace; "
                     f"`run_as_written(False)`): geometric mean {_geomean(staged):.2f}×, worst {max(staged):.2f}×")
    return lines


def _report(rows, malt_tool, malt_note):
    """Prints the table and the summary; returns the failures."""
    header = ["function", "lines", "parse+compile ms", "conversion ms", "× floor", "as written ms", "original µs",
              "converted µs", "ratio", "converted code ratio"]
    if malt_tool is not None:
        header += ["malt conversion ms", "malt × floor", "malt µs", "malt ratio"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for name, lines, floor, r, m in rows:
        orig = r["orig_s"] if r["orig_s"] is not None else (m["orig_s"] if m else None)
        ours = _row_cells(r, floor)
        extra = _extra_cells(r)
        cells = [name, str(lines), _fmt(floor * 1e3, ".3f"), ours[0], ours[1], extra[0],
                 _fmt(orig and orig * 1e6, ".1f"), ours[2], ours[3], extra[1]]
        if malt_tool is not None:
            cells += _row_cells(m, floor)
        print("| " + " | ".join(cells) + " |")

    print()
    for line in _summary("autograph", [(floor, r) for _, _, floor, r, _ in rows]):
        print(line)
    failures = [(name, r["error"]) for name, _, _, r, _ in rows if r["error"]]
    for name, err in failures:
        print(f"- FAILURE {name}: {err}")

    print()
    if malt_tool is None:
        print(malt_note or "diastatic-malt skipped (--no-malt)")
    else:
        lines = _summary(malt_note, [(floor, m) for _, _, floor, _, m in rows], targets=False)
        flagged = sum(m["flagged"] for *_, m in rows if not m["error"])
        lines[0] += f", {flagged} with callees left unconverted (*)"
        for line in lines:
            print(line)
        for name, _, _, _, m in rows:
            if m["error"]:
                print(f"- malt FAILURE {name}: {m['error']}")

    print()
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=9,
                        help="fresh conversions per function (median is reported)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timeit runs per function and variant (best is kept)")
    parser.add_argument("--min-run-ms", type=float, default=10.0,
                        help="minimum duration of one timeit run")
    parser.add_argument("--only", default="", help="only functions whose name contains this")
    parser.add_argument("--no-malt", action="store_true", help="skip diastatic-malt")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md as it is")
    opts = parser.parse_args(argv)
    min_run_s = opts.min_run_ms / 1e3
    cases = [(f, a) for f, a in CASES if opts.only in f.__name__]

    try:
        import autograph
        autograph.to_graph  # noqa: B018 - the transpiler must be there
    except (ImportError, AttributeError) as e:
        print(f"autograph.to_graph is not available ({e}); install the package "
              "with `pip install -e . --no-deps` from the repository root.")
        return 2
    ours = Ours(autograph)

    malt_tool = None
    malt_note = ""
    fallback_counter = None
    if not opts.no_malt:
        try:
            import malt
            malt_tool = Malt(malt)
            fallback_counter = _MaltFallbackCounter()
            # malt warns through the root logger; with this handler installed
            # nothing is printed (no basicConfig), and the table marks those
            # functions instead.
            logging.getLogger().addHandler(fallback_counter)
            malt_note = f"diastatic-malt {getattr(malt, '__version__', '')}".strip()
        except ImportError:
            malt_note = 'diastatic-malt is not installed (`pip install -e ".[bench]"` runs it alongside)'

    t_start = time.perf_counter()
    rows = []
    for f, args in cases:
        lines = len(inspect.getsource(f).splitlines())
        floor = parse_and_compile(f, opts.reps)
        r_ours = measure(ours, f, args, opts.reps, opts.repeats, min_run_s)
        r_malt = None
        if malt_tool is not None:
            r_malt = measure(malt_tool, f, args, opts.reps, opts.repeats, min_run_s,
                             fallback_counter)
        rows.append((f.__name__, lines, floor, r_ours, r_malt))

    with section("conversion", write=not opts.no_write):
        failures = _report(rows, malt_tool, malt_note)
    print(f"\n{len(rows)} functions, total benchmark time {time.perf_counter() - t_start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
