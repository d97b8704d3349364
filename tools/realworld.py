"""Real-world check: convert every function of a few PyPI libraries and run
their own test suites, unconverted and converted.

Setup (once; a separate venv that still sees the installed `autograph`):

    python3 -m venv /tmp/realworld/venv --system-site-packages
    . /tmp/realworld/venv/bin/activate
    python -c "import autograph" || pip install -e /work/main --no-deps
    pip install pytest pytest-timeout freezegun hypothesis \\
        toolz==1.2.0 more-itertools==11.2.1 inflection==0.5.1 tabulate==0.10.0 \\
        parse==1.22.4 semver==3.1.2 humanize==4.17.0 boltons==26.2.0 \\
        python-dateutil==2.9.0.post0
    mkdir -p /tmp/realworld/sdists && cd /tmp/realworld/sdists
    pip download --no-binary :all: --no-deps \\
        toolz==1.2.0 more-itertools==11.2.1 inflection==0.5.1 tabulate==0.10.0 \\
        parse==1.22.4 semver==3.1.2 humanize==4.17.0 boltons==26.2.0 \\
        python-dateutil==2.9.0.post0
    for f in *.tar.gz; do tar xzf "$f"; done

The sdists are only needed for their test suites; the code under test is the
installed (wheel) copy of the same version, except where a suite's own pytest
configuration puts its source tree first (semver: `pythonpath = src`). The
plugin imports the library before collection in both runs, so both use the
same copy (the JSON results record which).

Run (with the venv active):

    python tools/realworld.py                      # every library below, Markdown table
    python tools/realworld.py toolz parse          # some of them
    python tools/realworld.py toolz=/path/to/tests # a library with a test path of your choice
    python tools/realworld.py --sdists DIR --out DIR --verbose
    python tools/realworld.py --skip-mangled python-dateutil  # past the name-mangling bug

Each library's suite runs twice in a fresh `python -m pytest` process. The
converted run loads this file as a pytest plugin (`-p realworld`) which, in
`pytest_configure` (before any test module is imported), imports every module
of the library and replaces

- module-level functions (and lambdas) whose code lives in the library,
- functions in class `__dict__`s (plain, `staticmethod`, `classmethod`,
  `property` getters/setters/deleters, `functools.cached_property`), also
  of nested classes,

with `autograph.to_graph(...)` of them, in the defining module and wherever
else in the library the same object is bound (re-exports such as
`from .itertoolz import groupby` in `toolz/__init__.py`) and inside module-level
dicts, lists and tuples (tabulate's table formats hold functions and compare
them by identity), in `functools.partial` objects and in objects holding one
(toolz's `curry`). Functions kept in other ways (decorators' closures) stay
the original. Generator, coroutine
and async generator functions are left as they are by design and counted
apart; functions without source in the library's own files (namedtuple and
dataclass methods built with `exec`) are not counted. A conversion whose
result is the original object (autograph's warning "could not convert") is
counted as "returned as is"; one that raises as "raised".

Per-test outcomes of both runs are written as JSON under --out
(default /tmp/realworld/results); the tests that pass unconverted but fail
converted are listed after the table, with --verbose with their errors.
"""

import argparse
import functools
import importlib
import inspect
import json
import logging
import os
import pkgutil
import subprocess
import sys
import time
import types

# name: (distribution, import packages, test path inside the sdist, extra pytest args)
LIBRARIES = {
    # the tests live inside the package: importlib mode imports them from the
    # sdist without shadowing the installed `toolz` (no "import file mismatch")
    "toolz": ("toolz", ["toolz"], "toolz-{v}/toolz/tests", ["--import-mode=importlib"]),
    "more-itertools": ("more-itertools", ["more_itertools"], "more_itertools-{v}/tests", []),
    "inflection": ("inflection", ["inflection"], "inflection-{v}/test_inflection.py", []),
    "tabulate": ("tabulate", ["tabulate"], "tabulate-{v}/test", []),
    "parse": ("parse", ["parse"], "parse-{v}/tests", []),
    "semver": ("semver", ["semver"], "semver-{v}/tests", []),
    "humanize": ("humanize", ["humanize"], "humanize-{v}/tests", []),
    "boltons": ("boltons", ["boltons"], "boltons-{v}/tests", []),
    # setup.cfg turns warnings into errors, its own unregistered marks included
    "python-dateutil": ("python-dateutil", ["dateutil"], "python-dateutil-{v}/tests",
                        ["-W", "ignore::pytest.PytestUnknownMarkWarning"]),
}

_ENV_PACKAGES = "REALWORLD_PACKAGES"   # comma-separated import names; set: convert
_ENV_OUT = "REALWORLD_OUT"             # JSON file for outcomes and conversion counts
_ENV_SKIP_MANGLED = "REALWORLD_SKIP_MANGLED"  # set: leave functions using private names


# --------------------------------------------------------------------------
# Conversion of a package (runs inside the pytest process)


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _package_modules(package_name):
    package = importlib.import_module(package_name)
    modules = [package]
    path = getattr(package, "__path__", None)
    if path:
        for info in pkgutil.walk_packages(path, package_name + "."):
            parts = info.name.split(".")
            if any(p in ("tests", "test", "testing", "conftest") or p.startswith("test_") for p in parts):
                continue
            try:
                modules.append(importlib.import_module(info.name))
            except Exception:  # noqa: BLE001, S112 - optional dependency missing, platform module...
                continue
    return modules


def _uses_private_names(code):
    """Whether `code` (or code nested in it) uses a mangled private name
    (`self.__x` in a class body compiles to `_Class__x`)."""
    for name in code.co_names + code.co_varnames:
        stripped = name.lstrip("_")
        if name.startswith("_") and "__" in stripped and not name.endswith("__"):
            return True
    return any(_uses_private_names(c) for c in code.co_consts if isinstance(c, types.CodeType))


class Converter:
    """Replaces the functions of some packages with their conversions."""

    def __init__(self, package_names):
        import autograph

        self.to_graph = autograph.to_graph
        self.package_names = package_names
        self.roots = []
        self.memo = {}          # id(original function) -> replacement
        self.keep = []          # keeps originals alive so ids stay unique
        self.stats = {"found": 0, "converted": 0, "generators": 0, "unconverted": 0, "raised": 0,
                      "not_replaced": 0, "skipped": 0}
        self.problems = []      # (qualname, kind, message)
        self.handler = _Collect()

    # which functions are ours
    def _own(self, f):
        filename = getattr(getattr(f, "__code__", None), "co_filename", "")
        return any(filename.startswith(root) for root in self.roots)

    def convert_function(self, f):
        key = id(f)
        if key in self.memo:
            return self.memo[key]
        self.keep.append(f)
        name = f"{f.__module__}.{f.__qualname__}"
        self.stats["found"] += 1
        if (inspect.isgeneratorfunction(f) or inspect.iscoroutinefunction(f)
                or inspect.isasyncgenfunction(f)):
            self.stats["generators"] += 1
            self.memo[key] = f
            return f
        if os.environ.get(_ENV_SKIP_MANGLED) and _uses_private_names(f.__code__):
            self.stats["skipped"] += 1
            self.memo[key] = f
            return f
        del self.handler.messages[:]
        try:
            g = self.to_graph(f)
        except Exception as error:  # noqa: BLE001 - counted and reported
            self.stats["raised"] += 1
            self.problems.append((name, "raised", f"{type(error).__name__}: {error}"))
            g = f
        else:
            if g is f:
                self.stats["unconverted"] += 1
                self.problems.append((name, "returned as is", "; ".join(self.handler.messages)
                                      or "silently (no warning)"))
            else:
                self.stats["converted"] += 1
        self.memo[key] = g
        return g

    def _replacement(self, value):
        """The converted counterpart of a class-dict or module value, or None."""
        if isinstance(value, types.FunctionType):
            return self.convert_function(value) if self._own(value) else None
        if isinstance(value, (staticmethod, classmethod)):
            inner = value.__func__
            if isinstance(inner, types.FunctionType) and self._own(inner):
                g = self.convert_function(inner)
                return None if g is inner else type(value)(g)
            return None
        if type(value) is property:
            parts = [value.fget, value.fset, value.fdel]
            new = [self.convert_function(p) if isinstance(p, types.FunctionType) and self._own(p) else p
                   for p in parts]
            if all(a is b for a, b in zip(parts, new)):
                return None
            return property(*new, value.__doc__)
        if type(value) is functools.cached_property:
            inner = value.func
            if isinstance(inner, types.FunctionType) and self._own(inner):
                g = self.convert_function(inner)
                if g is not inner:
                    new = functools.cached_property(g)
                    new.attrname = value.attrname
                    new.__doc__ = value.__doc__
                    return new
        return None

    def _rebind(self, value, depth):
        """`value` with the functions converted so far replaced by their
        conversions, also inside module-level dicts, lists and tuples
        (namedtuples too: tabulate compares `fmt.lineabove == function`)."""
        if isinstance(value, types.FunctionType):
            new = self.memo.get(id(value))
            return value if new is None else new
        if depth == 0:
            return value
        if type(value) is functools.partial:
            new = self.memo.get(id(value.func))
            if new is not None and new is not value.func:
                return functools.partial(new, *value.args, **value.keywords)
            return value
        holder = getattr(value, "__dict__", None)
        if (type(holder) is dict and not isinstance(value, (type, types.ModuleType))
                and any(type(item) is functools.partial for item in holder.values())):
            for key, item in list(holder.items()):   # toolz.curry keeps a partial in _partial
                if type(item) is functools.partial:
                    holder[key] = self._rebind(item, depth - 1)
            return value
        if type(value) is dict:
            for key, item in list(value.items()):
                new = self._rebind(item, depth - 1)
                if new is not item:
                    value[key] = new
        elif type(value) is list:
            for index, item in enumerate(value):
                new = self._rebind(item, depth - 1)
                if new is not item:
                    value[index] = new
        elif isinstance(value, tuple):
            items = [self._rebind(item, depth - 1) for item in value]
            if any(a is not b for a, b in zip(items, value)):
                try:
                    return type(value)(items) if type(value) is tuple else type(value)(*items)
                except TypeError:
                    return value
        return value

    def convert_class(self, cls, seen):
        if id(cls) in seen:
            return
        seen.add(id(cls))
        for name, value in list(vars(cls).items()):
            if isinstance(value, type) and value.__qualname__.startswith(cls.__qualname__ + "."):
                self.convert_class(value, seen)
                continue
            new = self._replacement(value)
            if new is not None and new is not value:
                try:
                    setattr(cls, name, new)
                except (AttributeError, TypeError) as error:   # e.g. a property named __name__
                    self.stats["not_replaced"] += 1
                    self.problems.append((f"{cls.__qualname__}.{name}", "not replaced", str(error)))

    def run(self):
        logger = logging.getLogger("autograph")
        logger.addHandler(self.handler)
        try:
            modules = []
            for package_name in self.package_names:
                package = importlib.import_module(package_name)
                root = os.path.dirname(os.path.abspath(package.__file__))
                if not hasattr(package, "__path__"):   # a single-module library
                    root = os.path.abspath(package.__file__)
                self.roots.append(root)
                modules.extend(_package_modules(package_name))
            seen = set()
            for module in modules:               # convert what each module defines
                for name, value in list(vars(module).items()):
                    if isinstance(value, type) and value.__module__ == module.__name__:
                        self.convert_class(value, seen)
                    elif isinstance(value, types.FunctionType) and self._own(value):
                        setattr(module, name, self.convert_function(value))
            for module in modules:               # and rebind re-exports and tables
                for name, value in list(vars(module).items()):
                    new = self._rebind(value, 3)
                    if new is not value:
                        setattr(module, name, new)
        finally:
            logger.removeHandler(self.handler)
        return self.stats


# --------------------------------------------------------------------------
# The pytest plugin (loaded with -p realworld)

_state = {"outcomes": {}, "conversion": None, "location": {}}


def pytest_configure(config):
    packages = os.environ.get(_ENV_PACKAGES, "")
    names = [n for n in os.environ.get("REALWORLD_IMPORTS", "").split(",") if n]
    for name in names:                            # same copy of the library in both runs
        module = importlib.import_module(name)
        _state["location"][name] = getattr(module, "__file__", None)
    if packages:
        converter = Converter([n for n in packages.split(",") if n])
        started = time.time()
        stats = converter.run()
        _state["conversion"] = dict(stats, seconds=round(time.time() - started, 2),
                                    problems=converter.problems)


def pytest_runtest_logreport(report):
    outcomes = _state["outcomes"]
    previous = outcomes.get(report.nodeid)
    if report.failed:
        text = str(report.longrepr) if report.longrepr is not None else ""
        if previous is None or previous[0] != "failed":
            outcomes[report.nodeid] = ("failed", text[-4000:])
    elif report.skipped:
        if previous is None:
            outcomes[report.nodeid] = ("skipped", "")
    elif report.when == "call" and (previous is None or previous[0] != "failed"):
        outcomes[report.nodeid] = ("passed", "")


def pytest_collectreport(report):
    if report.failed:
        _state["outcomes"][report.nodeid or "<collection>"] = ("error", str(report.longrepr)[-4000:])


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get(_ENV_OUT)
    if out:
        with open(out, "w") as handle:
            json.dump({"outcomes": _state["outcomes"], "conversion": _state["conversion"],
                       "location": _state["location"], "exitstatus": int(exitstatus)}, handle)


# --------------------------------------------------------------------------
# Driver


def _version(distribution):
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _has_timeout_plugin():
    try:
        importlib.import_module("pytest_timeout")
        return True
    except ImportError:
        return False


def run_suite(name, imports, test_path, extra, convert, out_file, timeout):
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    env[_ENV_OUT] = out_file
    env["REALWORLD_IMPORTS"] = ",".join(imports)
    env.pop(_ENV_PACKAGES, None)
    if convert:
        env[_ENV_PACKAGES] = ",".join(imports)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "realworld", "-p", "no:cacheprovider",
               "-o", "addopts=", "-W", "ignore::DeprecationWarning", "--tb=short",
               "--continue-on-collection-errors"]
    if _has_timeout_plugin():
        command += ["--timeout", "120"]
    command += extra + [test_path]
    if os.path.exists(out_file):
        os.remove(out_file)
    started = time.time()
    try:
        proc = subprocess.run(command, env=env, cwd="/tmp", capture_output=True, text=True,
                              timeout=timeout, check=False)
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        tail = [f"timed out after {timeout}s"]
    elapsed = time.time() - started
    if not os.path.exists(out_file):
        return {"outcomes": {}, "conversion": None, "error": "\n".join(tail), "seconds": elapsed}
    with open(out_file) as handle:
        result = json.load(handle)
    result["seconds"] = elapsed
    result["tail"] = tail
    return result


def _count(outcomes, kind):
    return sum(1 for outcome, _ in outcomes.values() if outcome == kind)


def _first_error_line(text):
    lines = [line for line in text.splitlines() if line.startswith("E ")]
    return (lines[0] if lines else (text.strip().splitlines() or [""])[-1])[:200]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("libraries", nargs="*", help="NAME or NAME=TEST_PATH (default: all)")
    parser.add_argument("--sdists", default="/tmp/realworld/sdists", help="where the sdists are unpacked")
    parser.add_argument("--out", default="/tmp/realworld/results", help="per-test JSON results")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per suite run")
    parser.add_argument("--verbose", action="store_true", help="show errors of regressed tests")
    parser.add_argument("--skip-mangled", action="store_true",
                        help="leave functions that use private (mangled) names unconverted, "
                             "to see past that known bug")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    if args.skip_mangled:
        os.environ[_ENV_SKIP_MANGLED] = "1"
    selected = args.libraries or list(LIBRARIES)
    rows, regressions, problems = [], {}, {}
    for item in selected:
        name, _, test_path = item.partition("=")
        distribution, imports, default_path, extra = LIBRARIES.get(name, (name, [name.replace("-", "_")], None, []))
        version = _version(distribution)
        if version is None:
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        if not test_path:
            test_path = os.path.join(args.sdists, default_path.format(v=version))
        if not os.path.exists(test_path):
            print(f"{name}: no tests at {test_path}, skipped", file=sys.stderr)
            continue
        print(f"{name} {version}: running {test_path}", file=sys.stderr)
        plain = run_suite(name, imports, test_path, extra, False, os.path.join(args.out, f"{name}.plain.json"),
                          args.timeout)
        converted = run_suite(name, imports, test_path, extra, True,
                              os.path.join(args.out, f"{name}.converted.json"), args.timeout)
        stats = converted.get("conversion") or {}
        total = len(plain["outcomes"])
        print(f"  {plain['seconds']:.0f}s unconverted, {converted['seconds']:.0f}s converted", file=sys.stderr)
        for result in (plain, converted):
            if result.get("error"):
                print(f"  run failed: {result['error']}", file=sys.stderr)
        rows.append((name, version, stats.get("found", "?"),
                     stats["converted"] - stats["not_replaced"] if stats else "?",
                     stats.get("generators", "?"),
                     "?" if not stats else f"{stats['unconverted'] + stats['raised']}"
                                           f" ({stats['unconverted']} / {stats['raised']})",
                     f"{_count(plain['outcomes'], 'passed')} / {total}",
                     f"{_count(converted['outcomes'], 'passed')} / {total}"))
        regressions[name] = {
            nodeid: converted["outcomes"].get(nodeid, ("missing", ""))
            for nodeid, (outcome, _) in plain["outcomes"].items()
            if outcome == "passed" and converted["outcomes"].get(nodeid, ("missing",))[0] != "passed"
        }
        problems[name] = stats.get("problems", [])
        if stats.get("skipped"):
            print(f"  {stats['skipped']} functions using private names left unconverted (--skip-mangled)",
                  file=sys.stderr)

    print("| library | version | functions found | converted | left unconverted (generators/coroutines) "
          "| failed to convert (returned as is / raised) | tests passed unconverted | tests passed converted |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    for name, lost in regressions.items():
        if problems.get(name):
            print(f"\n{name}: functions not converted")
            for qualname, kind, message in problems[name]:
                print(f"  {qualname}: {kind}: {message[:300]}")
        if lost:
            print(f"\n{name}: {len(lost)} tests pass unconverted but not converted")
            for nodeid, (outcome, text) in sorted(lost.items()):
                print(f"  {nodeid}: {outcome}: {_first_error_line(text)}")
                if args.verbose:
                    print("    " + text.replace("\n", "\n    "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
