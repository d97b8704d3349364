"""CPython's own test suites, run on converted standard-library modules.

Run from the repository root, with the package installed
(`pip install -e . --no-deps`):

    python benchmarks/stdlib_suites.py                 # full run, about a minute
    python benchmarks/stdlib_suites.py --only difflib  # one module
    python benchmarks/stdlib_suites.py --no-write      # print only

For each pure-Python module of `MODULES` whose test module (`test.test_NAME`)
this Python has, it

* runs the module's unittest suite as it is (`loadTestsFromModule`, a quiet
  `TextTestRunner`);
* converts the module: every plain Python function defined in its file
  (module-level functions, and the methods of its classes: functions,
  staticmethods, classmethods, property accessors) is replaced by
  `autograph.to_graph(fn)`; what `to_graph` declines comes back unchanged and
  is counted as left. Module objects of the same file that the test module
  holds (`test_statistics` imports fresh copies of `statistics`, with and
  without its C accelerator) are converted the same way;
* runs the same suite on the converted module, checks that it fails exactly
  the tests the original fails, and names any test that fails only when
  converted; then restores the original functions.

Original and converted runs alternate across `--repeats` (the best time of
each is kept), after one untimed run of each (the converted functions build
their statements as written on their first call). Short suites run several
times per timing so that one timing lasts at least `--min-run-s`; the table
gives seconds per suite run. The target (issue 31): converted at most 1.3x
the time of the original.
"""

import argparse
import gc
import importlib
import io
import logging
import math
import os
import sys
import time
import types
import unittest
import warnings
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tables import markdown, section

MODULES = ["textwrap", "colorsys", "shlex", "difflib", "fractions", "statistics"]
TARGET_RATIO = 1.3


# ---------------------------------------------------------------------------
# Converting a module in place, and putting it back
# ---------------------------------------------------------------------------


class _Collect(logging.Handler):
    """Keeps autograph's warnings (a function it cannot convert) instead of
    printing them."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


class ConvertedModule:
    """The plain Python functions of `modules` (module objects of one file),
    converted with `to_graph`; `install()` puts the converted ones in place,
    `restore()` the originals."""

    def __init__(self, autograph, modules, log, aliases=()):
        self.autograph = autograph
        self.log = log
        self.filename = os.path.realpath(modules[0].__file__)
        self.replacements = []  # (owner, name, original raw value, converted raw value)
        self.converted = {}  # id(function) -> converted function (or the function itself)
        self.functions = {}  # id(function) -> function, for the count
        self.left = []  # (qualname, reason)
        self.seconds = 0.0
        for module in modules:
            self._module(module)
        # Names other modules (the test module) imported from the module
        # (`from textwrap import dedent`) are replaced too.
        replaced = {id(original): new for _, _, original, new in self.replacements}
        for namespace in aliases:
            for name, value in list(vars(namespace).items()):
                if id(value) in replaced and isinstance(value, types.FunctionType):
                    self._replace(namespace, name, value, replaced[id(value)])

    def _ours(self, fn):
        return isinstance(fn, types.FunctionType) and os.path.realpath(fn.__code__.co_filename) == self.filename

    def _convert(self, fn):
        """The converted `fn` (the same function when to_graph declines it)."""
        if id(fn) in self.converted:
            return self.converted[id(fn)]
        self.functions[id(fn)] = fn
        before = len(self.log.messages)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = self.autograph.to_graph(fn)
        except Exception as e:  # noqa: BLE001 - a failure is a result here
            result = fn
            self.log.messages.append(f"autograph: to_graph raised {type(e).__name__}: {e}")
        self.seconds += time.perf_counter() - t0
        if result is fn:
            said = self.log.messages[before:]
            self.left.append((fn.__qualname__, said[0] if said else "returned unchanged, no warning"))
        self.converted[id(fn)] = result
        return result

    def _module(self, module):
        for name, value in list(vars(module).items()):
            if self._ours(value):
                self._replace(module, name, value, self._convert(value))
            elif isinstance(value, type) and value.__module__ == module.__name__:
                self._class(value, set())

    def _class(self, cls, seen):
        if id(cls) in seen:
            return
        seen.add(id(cls))
        for name, value in list(vars(cls).items()):
            new = self._member(value)
            if new is not None:
                self._replace(cls, name, value, new)
            elif isinstance(value, type) and value.__module__ == cls.__module__:
                self._class(value, seen)

    def _member(self, value):
        """The converted raw class attribute `value`, with its descriptor
        rebuilt; None when it holds no function of ours."""
        if self._ours(value):
            return self._convert(value)
        if isinstance(value, (staticmethod, classmethod)) and self._ours(value.__func__):
            return type(value)(self._convert(value.__func__))
        if type(value) is property:
            accessors = [value.fget, value.fset, value.fdel]
            if not any(self._ours(f) for f in accessors):
                return None
            fget, fset, fdel = (self._convert(f) if self._ours(f) else f for f in accessors)
            return property(fget, fset, fdel, value.__doc__)
        return None

    def _replace(self, owner, name, original, new):
        if new is not original:
            self.replacements.append((owner, name, original, new))

    def install(self):
        for owner, name, _, new in self.replacements:
            setattr(owner, name, new)

    def restore(self):
        for owner, name, original, _ in reversed(self.replacements):
            setattr(owner, name, original)

    @property
    def counts(self):
        """(functions converted, functions found)."""
        total = len(self.functions)
        return total - len(self.left), total


# ---------------------------------------------------------------------------
# Running a suite
# ---------------------------------------------------------------------------


def _exception_line(traceback_text):
    """The first line of the exception of a formatted traceback."""
    lines = traceback_text.rstrip("\n").splitlines()
    last_frame = max((i for i, line in enumerate(lines) if line.startswith("  ")), default=-1)
    rest = [line for line in lines[last_frame + 1:] if line.strip()]
    return rest[0] if rest else (lines[-1] if lines else "")


def run_suite(test_module):
    """(seconds, tests run, {failing test id: first line of its error})."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(test_module)
    runner = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        result = runner.run(suite)
        seconds = time.perf_counter() - t0
    failing = {test.id(): _exception_line(text) for test, text in result.failures + result.errors}
    for test in result.unexpectedSuccesses:
        failing[test.id()] = "unexpected success"
    return seconds, result.testsRun, failing


def timed(test_module, number):
    """Seconds per suite run over `number` runs, and the failures seen."""
    gc.collect()
    total, failing, tests = 0.0, {}, 0
    for _ in range(number):
        seconds, tests, failed = run_suite(test_module)
        total += seconds
        failing.update(failed)
    return total / number, tests, failing


def measure(autograph, name, repeats, min_run_s, log):
    """One row of the table, as a dict; or a string saying why the module is
    skipped."""
    try:
        module = importlib.import_module(name)
        test_module = importlib.import_module(f"test.test_{name}")
    except Exception as e:  # noqa: BLE001 - reported as the reason to skip
        return f"cannot import {name} or test.test_{name}: {type(e).__name__}: {e}"
    if not getattr(module, "__file__", "").endswith(".py"):
        return f"{name} is not a pure-Python module ({getattr(module, '__file__', 'built in')})"
    twins = [m for m in vars(test_module).values()
             if isinstance(m, types.ModuleType) and m is not module
             and getattr(m, "__file__", None) == module.__file__]

    # The untimed first runs: correctness, warm-up, and how many suite runs
    # one timing needs.
    first, tests, original_failing = run_suite(test_module)
    number = max(1, math.ceil(min_run_s / max(first, 1e-6)))
    converted = ConvertedModule(autograph, [module] + twins, log, aliases=[test_module])
    try:
        converted.install()
        first_converted, converted_tests, converted_failing = run_suite(test_module)
        converted.restore()
        best = {"original": math.inf, "converted": math.inf}
        for repeat in range(repeats):
            order = ["original", "converted"] if repeat % 2 == 0 else ["converted", "original"]
            for variant in order:
                if variant == "converted":
                    converted.install()
                try:
                    seconds, n, failing = timed(test_module, number)
                finally:
                    converted.restore()
                best[variant] = min(best[variant], seconds)
                (converted_failing if variant == "converted" else original_failing).update(failing)
    finally:
        converted.restore()
    done, total = converted.counts
    only_converted = {t: e for t, e in converted_failing.items() if t not in original_failing}
    return {
        "name": name, "tests": tests, "converted_tests": converted_tests, "done": done, "total": total,
        "conversion_s": converted.seconds, "original_s": best["original"], "converted_s": best["converted"],
        "first_converted_s": first_converted, "number": number, "twins": len(twins),
        "ratio": best["converted"] / best["original"], "left": converted.left,
        "only_converted": only_converted,
        "only_original": sorted(t for t in original_failing if t not in converted_failing),
    }


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _reason(message):
    """A warning without the function's name: 'cannot convert X: why; ...'."""
    text = message.removeprefix("autograph: ")
    if text.startswith("cannot convert ") and ": " in text:
        text = text.split(": ", 1)[1]
    text = text.split("; it is returned unconverted")[0]
    return text if len(text) <= 110 else text[:107] + "..."


def _short(text, limit=100):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def report(rows, skipped):
    header = ["module", "tests", "functions converted (of total)", "conversion s", "original s",
              "converted s", "ratio", "failures only when converted"]
    cells = []
    for r in rows:
        module = r["name"] + (f" (+{r['twins']} fresh copies)" if r["twins"] else "")
        cells.append([module, r["tests"], f"{r['done']} of {r['total']}", f"{r['conversion_s']:.2f}",
                      f"{r['original_s']:.4f}", f"{r['converted_s']:.4f}", f"{r['ratio']:.2f}×",
                      len(r["only_converted"])])
    print(markdown(header, cells, "lrrrrrrr"))
    print()
    if rows:
        ratios = [r["ratio"] for r in rows]
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        worst = max(rows, key=lambda r: r["ratio"])
        verdict = "OK" if geo <= TARGET_RATIO and worst["ratio"] <= TARGET_RATIO else "MISSED"
        print(f"Converted over original: geometric mean {geo:.2f}×, worst {worst['ratio']:.2f}× "
              f"({worst['name']}); target <= {TARGET_RATIO:g}×: {verdict}.")
        print()
    reasons = Counter(_reason(message) for r in rows for _, message in r["left"])
    if reasons:
        print("Functions left unconverted, by reason:")
        print()
        for reason, count in reasons.most_common():
            print(f"- {count}: {reason}")
        print()
    for r in rows:
        for test, error in sorted(r["only_converted"].items()):
            print(f"- FAILS ONLY WHEN CONVERTED ({r['name']}): `{test}`: {_short(error)}")
        for test in r["only_original"]:
            print(f"- fails only unconverted ({r['name']}): `{test}`")
        if r["converted_tests"] != r["tests"]:
            print(f"- {r['name']}: {r['converted_tests']} tests loaded when converted, {r['tests']} otherwise")
    for name, why in skipped:
        print(f"- skipped {name}: {why}")
    if any(r["only_converted"] or r["only_original"] for r in rows) or skipped:
        print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs of each variant, interleaved (the best is kept)")
    parser.add_argument("--min-run-s", type=float, default=0.2,
                        help="a timing runs a short suite several times, to last at least this")
    parser.add_argument("--only", default="", help="only modules whose name contains this")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md as it is")
    opts = parser.parse_args(argv)

    try:
        import autograph
        autograph.to_graph  # noqa: B018 - the transpiler must be there
    except (ImportError, AttributeError) as e:
        print(f"autograph.to_graph is not available ({e}); install the package "
              "with `pip install -e . --no-deps` from the repository root.")
        return 2

    log = _Collect()
    logger = logging.getLogger("autograph")
    logger.addHandler(log)
    propagate, logger.propagate = logger.propagate, False
    # The first conversion of the process pays for imports and warm-up; not
    # the module's.
    autograph.to_graph(_warm_up)(3)

    t_start = time.perf_counter()
    rows, skipped = [], []
    try:
        for name in MODULES:
            if opts.only not in name:
                continue
            row = measure(autograph, name, opts.repeats, opts.min_run_s, log)
            if isinstance(row, str):
                skipped.append((name, row))
            else:
                rows.append(row)
    finally:
        logger.removeHandler(log)
        logger.propagate = propagate

    with section("stdlib-suites", write=not opts.no_write):
        report(rows, skipped)
    print(f"{len(rows)} modules, total benchmark time {time.perf_counter() - t_start:.1f} s")
    return 1 if any(r["only_converted"] for r in rows) else 0


def _warm_up(n):
    total = 0
    for i in range(n):
        if i % 2:
            total += i
    return total


if __name__ == "__main__":
    raise SystemExit(main())
