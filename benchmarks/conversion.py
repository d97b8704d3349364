"""Conversion time and eager overhead of the transpiler on the benchmark corpus.

Run from the repository root, with the package installed
(`pip install -e . --no-deps`):

    python benchmarks/conversion.py              # full run, under ~2 minutes
    python benchmarks/conversion.py --reps 3     # quicker, noisier
    python benchmarks/conversion.py --only sort  # functions whose name contains "sort"

For every `(function, args)` in `benchmarks/corpus.py` it measures

* conversion time: median over `--reps` fresh conversions with
  `autograph.to_graph` (the conversion cache is cleared, or bypassed with a
  fresh copy of the function, before each one);
* eager overhead: time of `converted(*args)` over time of `original(*args)`,
  each the best of several timeit runs, interleaved;
* correctness: `converted(*args) == original(*args)`; any mismatch is
  reported, since a benchmark of wrong code is meaningless.

It prints a Markdown table, the median conversion time and the geometric mean
of the eager ratios, against the targets (median conversion <= 3 ms, eager
geomean <= 2.0x).

If `diastatic-malt` (a standalone fork of TensorFlow's AutoGraph, import name
`malt`) is importable, the same measurements are made with `malt.to_graph` and
shown in extra columns, with the ratio of ours to theirs. To keep it out of the
main environment, install it into a virtualenv that sees the system packages
and run the script with that interpreter:

    python3 -m venv /tmp/maltenv --system-site-packages
    /tmp/maltenv/bin/pip install diastatic-malt
    /tmp/maltenv/bin/python benchmarks/conversion.py

Functions malt cannot convert, or whose converted version raises or returns
a different result, count as failures in its columns; callees that malt
silently leaves unconverted ("could not transform ... will run it as-is")
are flagged with `*`.
"""

import argparse
import gc
import inspect
import logging
import math
import os
import statistics
import sys
import time
import timeit
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus import CASES
from tables import section

TARGET_CONVERSION_MS = 3.0
TARGET_EAGER_GEOMEAN = 2.0


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


def measure(tool, f, args, reps, repeats, min_run_s, fallback_counter=None):
    """Returns a dict: conv_s, orig_s, call_s, ratio, error, flagged (malt fallbacks)."""
    out = {"conv_s": None, "orig_s": None, "call_s": None, "ratio": None,
           "error": None, "flagged": False}
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
    except Exception as e:  # noqa: BLE001
        out["error"] = f"timing the converted call raised {type(e).__name__}: {_short(e)}"
        return out
    try:
        out["conv_s"] = _median_conversion(tool, f, reps)
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


def _row_cells(r):
    if r["error"]:
        return ["FAIL", "—", "FAIL"]
    mark = "*" if r["flagged"] else ""
    return [_fmt(r["conv_s"] * 1e3, ".2f"), _fmt(r["call_s"] * 1e6, ".1f"),
            _fmt(r["ratio"], ".2f", "×") + mark]


def _report(rows, malt_tool, malt_note):
    """Prints the table and the summary; returns the failures."""
    header = ["function", "lines", "conversion ms", "original µs", "converted µs", "ratio"]
    if malt_tool is not None:
        header += ["malt conv ms", "malt µs", "malt ratio", "conv ours/malt", "eager ours/malt"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for name, lines, r, m in rows:
        orig = r["orig_s"] if r["orig_s"] is not None else (m["orig_s"] if m else None)
        ours_cells = _row_cells(r)
        cells = [name, str(lines), ours_cells[0], _fmt(orig and orig * 1e6, ".1f"),
                 ours_cells[1], ours_cells[2]]
        if malt_tool is not None:
            cells += _row_cells(m)
            both = not r["error"] and not m["error"]
            cells += [_fmt(both and r["conv_s"] / m["conv_s"] or None, ".2f", "×"),
                      _fmt(both and r["ratio"] / m["ratio"] or None, ".2f", "×")]
        print("| " + " | ".join(cells) + " |")

    # Summary
    print()
    ok = [r for _, _, r, _ in rows if not r["error"]]
    med_conv = _median([r["conv_s"] for r in ok])
    geo = _geomean([r["ratio"] for r in ok])
    print(f"autograph: {len(ok)}/{len(rows)} functions converted and correct")
    if med_conv is not None:
        verdict = "OK" if med_conv * 1e3 <= TARGET_CONVERSION_MS else "MISSED"
        print(f"- median conversion time: {med_conv * 1e3:.2f} ms "
              f"(target <= {TARGET_CONVERSION_MS:g} ms: {verdict})")
        verdict = "OK" if geo <= TARGET_EAGER_GEOMEAN else "MISSED"
        print(f"- eager overhead, geometric mean: {geo:.2f}× "
              f"(target <= {TARGET_EAGER_GEOMEAN:g}×: {verdict})")
    failures = [(name, r["error"]) for name, _, r, _ in rows if r["error"]]
    for name, err in failures:
        print(f"- FAILURE {name}: {err}")

    print()
    if malt_tool is None:
        print(malt_note or "diastatic-malt skipped (--no-malt)")
    else:
        m_ok = [m for _, _, _, m in rows if not m["error"]]
        print(f"{malt_note}: {len(m_ok)}/{len(rows)} functions converted and correct, "
              f"{len(rows) - len(m_ok)} failure(s), "
              f"{sum(m['flagged'] for m in m_ok)} with callees left unconverted (*)")
        if m_ok:
            print(f"- median conversion time: {_median([m['conv_s'] for m in m_ok]) * 1e3:.2f} ms")
            print(f"- eager overhead, geometric mean: {_geomean([m['ratio'] for m in m_ok]):.2f}×")
        both = [(r, m) for _, _, r, m in rows if not r["error"] and not m["error"]]
        if both:
            print(f"- ours vs malt on the {len(both)} functions both handle: conversion time "
                  f"geomean {_geomean([r['conv_s'] / m['conv_s'] for r, m in both]):.2f}×, "
                  f"median {_median([r['conv_s'] for r, _ in both]) / _median([m['conv_s'] for _, m in both]):.2f}×; "
                  f"eager overhead geomean {_geomean([r['ratio'] / m['ratio'] for r, m in both]):.2f}× "
                  "(below 1 means ours is faster)")
        for name, _, _, m in rows:
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
            malt_note = ("diastatic-malt is not installed (see this script's "
                         "docstring to run it alongside)")

    t_start = time.perf_counter()
    rows = []
    for f, args in cases:
        lines = len(inspect.getsource(f).splitlines())
        r_ours = measure(ours, f, args, opts.reps, opts.repeats, min_run_s)
        r_malt = None
        if malt_tool is not None:
            r_malt = measure(malt_tool, f, args, opts.reps, opts.repeats, min_run_s,
                             fallback_counter)
        rows.append((f.__name__, lines, r_ours, r_malt))

    with section("conversion", write=not opts.no_write):
        failures = _report(rows, malt_tool, malt_note)
    print(f"\n{len(rows)} functions, total benchmark time {time.perf_counter() - t_start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
