"""Hand-written functions for differential testing (original vs converted).

Each module in this package registers functions with `@case(inputs...)`.
Every positional argument of `case` is a tuple of arguments to call the
function with; `case(..., kwargs=[{...}])` adds keyword-argument calls.
Functions may record side effects with `log(...)`; the harness compares the
log of the original run with the log of the converted run.
"""

import importlib
import pkgutil

CASES = []  # list of (qualified name, function, [(args, kwargs), ...], options)

LOG = []


def log(*values):
    """Records a side effect and returns the last value (or None)."""
    LOG.append(values if len(values) != 1 else values[0])
    return values[-1] if values else None


def case(*inputs, kwargs=(), run_async=False, name=None):
    """Registers the decorated function with the given argument tuples."""

    def register(fn):
        calls = [(tuple(args), {}) for args in inputs]
        calls += [((), dict(kw)) for kw in kwargs]
        if not calls:
            calls = [((), {})]
        qualname = name or f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"
        CASES.append((qualname, fn, calls, {"run_async": run_async}))
        return fn

    return register


def load_all():
    """Imports every case module and returns the registry."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("case_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return CASES
