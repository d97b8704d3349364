"""Conversion options: strict conversion, include and exclude, and what the
error says after a fall-back.

`strict=True` (to_graph, convert, function) or AUTOGRAPH_STRICT=1 makes every
fall-back (no source, `locals()`, a generator, ...) a ConversionError that
names the function and says why, for the function and for each callee;
`include`/`exclude` choose the modules whose functions converted code
converts when it calls them. Without strict, a later SymbolicBoolError in
code that was not converted names that function and says why.
"""

import importlib
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from autograph.runtime.tracer.errors import SymbolicBoolError, TracingError

import autograph
from autograph import ConversionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _exec_made(name="made_by_exec"):
    """A function without source (exec without a linecache entry)."""
    namespace = {}
    exec(f"def {name}(x):\n    if x > 0:\n        return x * 2\n    return -x\n", namespace)
    return namespace[name]


def uses_locals(x):
    scope = locals()
    if x > 0:
        return x + len(scope)
    return -x


def generates(x):
    for i in range(3):
        yield x * i


def returns_in_finally(x):
    try:
        y = x * 2
    finally:
        if x > 0:
            return y  # noqa: B012 - the construct under test
    return -x


same_line_a, same_line_b = (lambda x: x + 1 if x > 0 else -1), (lambda x: x + 1 if x > 0 else -1)


def _strict(f):
    """The ConversionError of strict conversion; checks to_graph, convert
    and function all raise it."""
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(f, strict=True)
    with pytest.raises(ConversionError):
        autograph.convert(strict=True)(f)
    traced = autograph.function(f, strict=True)
    with pytest.raises(ConversionError):
        traced(np.float64(1.0))
    message = str(info.value)
    assert "strict" in message and "would run unconverted" in message, message
    return message


# Strict conversion ----------------------------------------------------------------------

@pytest.mark.parametrize("f, name, why", [
    (_exec_made(), "made_by_exec", "source is not available"),
    (uses_locals, "uses_locals", "`locals()` reads the function's local variables"),
    (generates, "generates", "generator"),
    (returns_in_finally, "returns_in_finally", "a `return` inside a `finally` clause"),
    (same_line_a, "lambda at", "several lambdas on that line"),
    (hex, "hex", "no Python source"),
], ids=["no_source", "locals", "generator", "return_in_finally", "two_lambdas", "builtin"])
def test_strict_raises_for_every_fall_back(f, name, why, caplog):
    caplog.set_level(logging.WARNING, logger="autograph")
    message = _strict(f)
    assert name in message and why in message, message
    # Without strict: a warning, and the function itself, which behaves as before.
    assert autograph.to_graph(f, strict=False) is f


def convertible(x):
    if x > 0:
        return x * 3
    return x


def test_strict_converts_what_converts():
    g = autograph.to_graph(convertible, strict=True)
    assert g is not convertible and [g(v) for v in (2, -2)] == [convertible(v) for v in (2, -2)]
    traced = autograph.function(convertible, strict=True)
    assert [traced(np.float64(v)) for v in (2.0, -2.0)] == [convertible(v) for v in (2.0, -2.0)]


def test_strict_travels_to_callees():
    made = _exec_made("callee_without_source")

    def caller(x):
        if x > 1:
            return made(x) + 1
        return 0

    lenient = autograph.to_graph(caller)
    assert [lenient(v) for v in (3, 0)] == [caller(v) for v in (3, 0)]
    strict = autograph.to_graph(caller, strict=True)
    assert strict(0) == 0  # the callee is converted when it is first called
    with pytest.raises(ConversionError) as info:
        strict(3)
    message = str(info.value)
    assert "callee_without_source" in message and "source is not available" in message
    assert "called from converted code at" in message and __file__ in message
    # The lenient conversion of `caller` (and its callee) is not affected.
    assert lenient(3) == caller(3)


def test_strict_callee_under_function():
    made = _exec_made("traced_callee_without_source")

    def caller(x):
        return made(x) + 1

    with pytest.raises(ConversionError, match="traced_callee_without_source"):
        autograph.function(caller, strict=True)(np.float64(2.0))


def test_nonrecursive_strict_leaves_callees_alone():
    made = _exec_made("not_a_callee_to_convert")

    def caller(x):
        return made(x) + 1

    g = autograph.to_graph(caller, recursive=False, strict=True)
    assert g(3) == caller(3)


_ENV_SCRIPT = """
import autograph
namespace = {}
exec("def from_exec(x):\\n    return x\\n", namespace)
try:
    autograph.to_graph(namespace["from_exec"])
    print("no error")
except autograph.ConversionError as error:
    print("ConversionError:", error)
print("explicit strict=False:", autograph.to_graph(namespace["from_exec"], strict=False) is namespace["from_exec"])
"""


@pytest.mark.parametrize("value, raises", [("1", True), ("0", False), ("", False)])
def test_autograph_strict_environment_variable(value, raises):
    env = dict(os.environ, AUTOGRAPH_STRICT=value)
    result = subprocess.run([sys.executable, "-c", _ENV_SCRIPT], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    if raises:
        assert first.startswith("ConversionError: cannot convert from_exec: its source is not available"), first
    else:
        assert first == "no error"
    assert second == "explicit strict=False: True"


# include and exclude ----------------------------------------------------------------------

_LIBRARY = """\
def clip(x):
    if x > 1.0:
        return x * 0 + 1.0
    return x
"""

_CALLER = """\
import {module}


def uses_library(x):
    return {module}.clip(x) * 2
"""


@pytest.fixture
def fake_library(tmp_path):
    """A package `ag_fakelib` (with a submodule `ag_fakelib.sub`) installed
    in a site-packages directory, and a user module calling it."""
    site = tmp_path / "site-packages"
    (site / "ag_fakelib").mkdir(parents=True)
    (site / "ag_fakelib" / "__init__.py").write_text(_LIBRARY)
    (site / "ag_fakelib" / "sub.py").write_text(_LIBRARY)
    user = tmp_path / "user"
    user.mkdir()
    (user / "ag_user_top.py").write_text(_CALLER.format(module="ag_fakelib"))
    (user / "ag_user_sub.py").write_text(_CALLER.format(module="ag_fakelib.sub"))
    sys.path[:0] = [str(site), str(user)]
    importlib.invalidate_caches()
    try:
        yield importlib.import_module("ag_user_top"), importlib.import_module("ag_user_sub")
    finally:
        sys.path.remove(str(site))
        sys.path.remove(str(user))
        for name in ("ag_fakelib", "ag_fakelib.sub", "ag_user_top", "ag_user_sub"):
            sys.modules.pop(name, None)


def test_library_code_is_not_converted_and_the_error_says_include(fake_library):
    top, _ = fake_library
    with pytest.raises(SymbolicBoolError) as info:
        autograph.function(top.uses_library)(np.float64(3.0))
    message = str(info.value)
    assert "`clip` is library code (module 'ag_fakelib')" in message, message
    assert "include=['ag_fakelib']" in message
    assert "Convert it with autograph" not in message


@pytest.mark.parametrize("include", ["ag_fakelib", ["ag_fakelib"], ["ag_fakelib.sub"]])
def test_include_converts_library_functions(fake_library, include):
    top, sub = fake_library
    users = [sub] if include == ["ag_fakelib.sub"] else [top, sub]  # a name covers its submodules
    for module in users:
        traced = autograph.function(module.uses_library, include=include)
        for v in (3.0, 0.5):
            assert traced(np.float64(v)) == module.uses_library(v)
    if include == ["ag_fakelib.sub"]:
        with pytest.raises(SymbolicBoolError, match="library code"):
            autograph.function(top.uses_library, include=include)(np.float64(3.0))


def test_include_on_to_graph_converts_the_callee(fake_library):
    top, _ = fake_library
    import ag_fakelib

    autograph.to_graph(top.uses_library, include=["ag_fakelib"])(2.0)
    options = autograph.conversion.Options(include=("ag_fakelib",))
    assert autograph.conversion.cached(ag_fakelib.clip, options) not in (None, ag_fakelib.clip)
    autograph.to_graph(top.uses_library)(2.0)
    assert autograph.conversion.cached(ag_fakelib.clip) is ag_fakelib.clip


def test_exclude_leaves_user_modules_unconverted(fake_library):
    top, _ = fake_library
    import ag_fakelib

    def caller(x):
        return top.uses_library(x) + 1

    included = autograph.function(caller, include=["ag_fakelib"])
    assert included(np.float64(3.0)) == caller(3.0)
    excluded = autograph.function(caller, include=["ag_fakelib"], exclude=["ag_user_top"])
    with pytest.raises(SymbolicBoolError) as info:
        excluded(np.float64(3.0))
    # uses_library runs unconverted, so clip is called by plain Python
    assert "`uses_library` is not converted: its module 'ag_user_top' is excluded" in str(info.value)
    assert autograph.to_graph(caller, exclude=["ag_user_top"])(3.0) == caller(3.0)
    assert ag_fakelib.clip(0.5) == 0.5


@pytest.mark.parametrize("bad", [3, [""], ["not a module"], [None]])
def test_include_and_exclude_take_module_names(bad):
    with pytest.raises(TypeError, match="module names"):
        autograph.to_graph(convertible, include=bad)
    with pytest.raises(TypeError, match="module names"):
        autograph.to_graph(convertible, exclude=bad)


def test_options_are_one_cache_key():
    """The generated code does not depend on the options: one artifact per
    function, one converted function per set of options."""
    plain = autograph.to_graph(convertible)
    strict = autograph.to_graph(convertible, strict=True)
    included = autograph.to_graph(convertible, include=["ag_fakelib"])
    assert plain is autograph.to_graph(convertible)
    assert strict is autograph.to_graph(convertible, strict=True)
    assert included is autograph.to_graph(convertible, include="ag_fakelib")
    assert len({id(plain), id(strict), id(included)}) == 3
    assert plain.__code__ is strict.__code__ is included.__code__


# What a SymbolicBoolError says after a fall-back ----------------------------------------------

def _bool_error(f, *args):
    with pytest.raises(SymbolicBoolError) as info:
        autograph.function(f)(*args)
    message = str(info.value)
    assert "Convert it with autograph" not in message, message
    assert "strict=True" in message and "AUTOGRAPH_STRICT=1" in message, message
    return message


@pytest.mark.parametrize("f, fragments", [
    (_exec_made(), ["autograph cannot convert made_by_exec: its source is not available",
                    "(so `made_by_exec` runs as Python, unconverted)"]),
    (uses_locals, ["cannot convert uses_locals", "`locals()`"]),
    (returns_in_finally, ["cannot convert returns_in_finally", "`return` inside a `finally` clause"]),
    (same_line_b, ["several lambdas on that line"]),
], ids=["exec", "locals", "return_in_finally", "two_lambdas"])
def test_bool_error_after_a_fall_back_names_the_function_and_why(f, fragments, caplog):
    caplog.set_level(logging.WARNING, logger="autograph")
    message = _bool_error(f, np.float64(1.0))
    for fragment in fragments:
        assert fragment in message, message


def test_bool_error_in_a_callee_that_fell_back():
    made = _exec_made("callee_made_by_exec")

    def caller(x):
        return made(x) + 1

    message = _bool_error(caller, np.float64(1.0))
    assert "cannot convert callee_made_by_exec: its source is not available" in message


def test_bool_error_in_a_function_nested_in_one_that_fell_back(caplog):
    def outer(x):
        scope = locals()

        def inner(y):
            if y > 0:
                return y
            return -y
        return inner(x) + len(scope)

    caplog.set_level(logging.WARNING, logger="autograph")
    message = _bool_error(outer, np.float64(1.0))
    assert "cannot convert " in message and "outer" in message and "`locals()`" in message


def test_bool_error_without_a_fall_back_still_says_convert():
    def plain(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(SymbolicBoolError, match="Convert it with autograph"):
        autograph.function(plain, autograph=False)(np.float64(1.0))


_NO_SOURCE_SCRIPT = """\
import numpy as np
import autograph

def sign(x):
    if x > 0:
        return x
    return -x

try:
    autograph.function(sign)(np.float64(1.0))
except Exception as error:
    print(type(error).__name__, error)
"""


@pytest.mark.parametrize("how", ["stdin", "-c"])
def test_bool_error_for_code_from_stdin_or_dash_c(how):
    command = [sys.executable, "-"] if how == "stdin" else [sys.executable, "-c", _NO_SOURCE_SCRIPT]
    result = subprocess.run(command, input=_NO_SOURCE_SCRIPT if how == "stdin" else None, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("SymbolicBoolError"), out + result.stderr
    assert "autograph cannot convert sign: its source is not available" in out
    assert "strict=True" in out and "Convert it with autograph" not in out


# Generators under autograph.function ----------------------------------------------------------

def test_generator_fails_at_trace_time_with_what_to_do(caplog):
    caplog.set_level(logging.WARNING, logger="autograph")
    traced = autograph.function(generates)
    with pytest.raises(TracingError) as info:
        traced(np.float64(2.0))
    message = str(info.value)
    assert "generates returned a generator while it was traced" in message
    assert "cannot trace it" in message and "Return the values instead" in message


def test_function_returning_a_generator_expression_fails_at_trace_time():
    def lazy(x):
        return (x * i for i in range(3))

    with pytest.raises(TracingError, match="lazy returned a generator"):
        autograph.function(lazy)(np.float64(2.0))


def test_generator_iterated_inside_the_traced_function_works(caplog):
    caplog.set_level(logging.WARNING, logger="autograph")

    def total(x):
        return sum(generates(x))

    assert autograph.function(total)(np.float64(2.0)) == total(2.0)


# The README's quick check: every option on the three entry points --------------------------------

def test_entry_points_take_the_options():
    for decorate in (lambda f: autograph.to_graph(f, recursive=True, strict=True, include=["m"], exclude=["n"]),
                     autograph.convert(recursive=True, strict=True, include=["m"], exclude=["n"]),
                     lambda f: autograph.function(f, strict=True, include=["m"], exclude=["n"])):
        g = decorate(convertible)
        assert [g(np.float64(v)) for v in (2.0, -2.0)] == [convertible(v) for v in (2.0, -2.0)]


def test_docstrings_name_the_options():
    for entry in (autograph.to_graph, autograph.function):
        text = textwrap.dedent(entry.__doc__)
        assert "strict" in text and "include" in text and "exclude" in text
