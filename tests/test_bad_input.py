"""Bad input: functions without (current) source, ambiguous lambdas, hiding
decorators, non-callables; conversion writes no files and evaluates no
strings.

For what cannot be converted, `to_code` raises ConversionError and
`to_graph` returns the entity itself after one warning on the "autograph"
logger; both messages name the function and say why.
"""

import ast
import importlib
import linecache
import logging
import os
import pathlib
import py_compile
import re
import sys
import tempfile
import textwrap
import threading

import pytest

import autograph
from autograph import ConversionError

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture
def warnings_(caplog):
    caplog.set_level(logging.WARNING, logger="autograph")
    return caplog


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "autograph" and r.levelno >= logging.WARNING]


def assert_unconvertible(f, caplog, *fragments):
    """to_code raises ConversionError and to_graph returns `f` with one
    warning; each message contains every fragment."""
    with pytest.raises(ConversionError) as info:
        autograph.to_code(f)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))
    caplog.clear()
    assert autograph.to_graph(f) is f
    messages = _warnings(caplog)
    assert len(messages) == 1, messages
    for fragment in fragments:
        assert fragment in messages[0], (fragment, messages[0])
    assert "unconverted" in messages[0]
    return str(info.value), messages[0]


_modules = []


def _import_module(tmp_path, name, source):
    """Writes `source` to tmp_path/name.py and imports it (fresh)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    sys.path.insert(0, str(tmp_path))
    try:
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
    _modules.append(name)
    return module, path


@pytest.fixture(autouse=True)
def _unload_modules():
    yield
    while _modules:
        sys.modules.pop(_modules.pop(), None)


# No source ----------------------------------------------------------------------

def test_exec_without_linecache(warnings_):
    namespace = {}
    exec("def made_by_exec(x):\n    if x:\n        return 1\n    return 2\n", namespace)
    f = namespace["made_by_exec"]
    assert_unconvertible(f, warnings_, "made_by_exec", "source is not available", "'<string>'")
    assert autograph.to_graph(f)(0) == 2


def test_pyc_only_module(tmp_path, warnings_):
    source = tmp_path / "pyc_only_mod.py"
    source.write_text("def from_pyc(x):\n    if x > 0:\n        return 'pos'\n    return 'neg'\n")
    py_compile.compile(str(source), cfile=str(tmp_path / "pyc_only_mod.pyc"), doraise=True)
    source.unlink()
    linecache.checkcache()
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.invalidate_caches()
        module = importlib.import_module("pyc_only_mod")
    finally:
        sys.path.remove(str(tmp_path))
    _modules.append("pyc_only_mod")
    assert module.__file__.endswith(".pyc")
    f = module.from_pyc
    assert_unconvertible(f, warnings_, "from_pyc", "source is not available", "pyc_only_mod.py")
    assert autograph.to_graph(f)(1) == "pos"


# Builtins that no other test converts: the warning is logged once per
# function and process.
@pytest.mark.parametrize("builtin, name", [(divmod, "divmod"), ([].append, "list.append"), (print, "print")])
def test_builtins_and_c_functions(builtin, name, warnings_):
    assert_unconvertible(builtin, warnings_, name, "no Python source")


def test_source_that_does_not_parse(warnings_):
    namespace = {}
    filename = "<does-not-parse>"
    exec(compile("def unparsable_now(x):\n    if x:\n        return 1\n    return 2\n", filename, "exec"), namespace)
    linecache.cache[filename] = (30, None, ["def unparsable_now(x):\n", "    if x:: nope\n"], filename)
    try:
        assert_unconvertible(namespace["unparsable_now"], warnings_, "unparsable_now", "does not parse",
                             f"{filename}:1")
    finally:
        linecache.cache.pop(filename, None)


# Source changed on disk after import ------------------------------------------------

_ORIGINAL = """\
import math


def {name}(x):
    if x > 0:
        return 'original positive'
    return 'original other'


def after():
    return 1
"""

_CHANGED = {
    # same arguments, different body, at the same lines
    "same_args": """\
import math


def {name}(x):
    if x < 0:
        return 'NEW TEXT'
    return 'NEW TEXT too'


def after():
    return 1
""",
    # different arguments
    "other_args": """\
import math


def {name}(y, z):
    if y > 0:
        return 'NEW TEXT'
    return 'NEW TEXT too'
""",
    # fewer lines: the definition's line no longer exists
    "fewer_lines": """\
import math
""",
    # another definition at that line
    "other_def": """\
import math


def something_else(x):
    return 'NEW TEXT'
""",
}


@pytest.mark.parametrize("change", sorted(_CHANGED))
def test_source_changed_on_disk_after_import(change, tmp_path, warnings_):
    name = f"changed_{change}"
    module, path = _import_module(tmp_path, f"mod_{change}", _ORIGINAL.format(name=name))
    f = getattr(module, name)
    assert linecache.getlines(str(path))  # linecache holds the original text
    path.write_text(_CHANGED[change].format(name=name))
    os.utime(path, (1, 1))  # a different mtime, whatever the clock's resolution
    linecache.checkcache()
    assert "NEW TEXT" in "".join(linecache.getlines(str(path))) or change == "fewer_lines"

    with pytest.raises(ConversionError) as info:
        code = autograph.to_code(f)
        pytest.fail(f"to_code converted the new text of the file:\n{code}")
    message = str(info.value)
    assert name in message and "changed" in message, message
    warnings_.clear()
    g = autograph.to_graph(f)
    assert g is f, f"to_graph converted the new text: g(1) = {g(1)!r}, f(1) = {f(1)!r}"
    (warning,) = _warnings(warnings_)
    assert name in warning and "changed" in warning and "unconverted" in warning
    assert g(1) == "original positive" and g(-1) == "original other"


_BYTECODE_ONLY = """\
import math

sign = lambda x: 'lambda positive' if x {op} 0 else 'lambda other'


def {name}(x):
    if math.isfinite(x) and x {op} 0:
        return 'positive'
    return 'other'
"""


def test_edit_that_changes_only_the_bytecode_is_refused(tmp_path, warnings_):
    """`x > 0` edited into `x < 0` after import keeps every name, variable
    and constant: only the bytecode tells that the text is not what runs."""
    module, path = _import_module(tmp_path, "bytecode_only_mod", _BYTECODE_ONLY.format(name="edited", op=">"))
    path.write_text(_BYTECODE_ONLY.format(name="edited", op="<"))
    os.utime(path, (1, 1))
    linecache.checkcache()
    for f, name in ((module.edited, "edited"), (module.sign, "lambda at")):
        with pytest.raises(ConversionError, match="no longer matches") as info:
            autograph.to_code(f)
        assert name in str(info.value) and str(path) in str(info.value)
        g = autograph.to_graph(f)
        assert g is f
        assert [g(v) for v in (1, -1)] == [f(v) for v in (1, -1)]
    assert module.edited(1) == "positive" and module.sign(1) == "lambda positive"


def test_unedited_module_with_imports_converts(tmp_path):
    """The check compiles the found text as the file does (Python 3.11
    compiles `module.method()` of an imported name in its own way)."""
    module, _ = _import_module(tmp_path, "unedited_mod", _BYTECODE_ONLY.format(name="unedited", op=">"))
    for f in (module.unedited, module.sign):
        g = autograph.to_graph(f)
        assert g is not f
        assert [g(v) for v in (1, -1, 0.5)] == [f(v) for v in (1, -1, 0.5)]


# Lambdas sharing a line ---------------------------------------------------------------

_LAMBDAS = """\
same_a, same_b = (lambda x: x + 1 if x > 0 else -1), (lambda x: x * 10 if x > 0 else -10)
diff_a, diff_b = (lambda x: x + 1 if x > 0 else -1), (lambda y, z=2: y * z if y > 0 else -z)
twin_a, twin_b = (lambda x: x + 1), (lambda x: x + 1)
"""


@pytest.fixture
def lambdas(tmp_path):
    module, _ = _import_module(tmp_path, "lambdas_mod", _LAMBDAS)
    return module


@pytest.mark.parametrize("name, expected", [
    ("same_a", "lambda: x + 1"), ("same_b", "lambda: x * 10"),
    ("diff_a", "lambda: x + 1"), ("diff_b", "lambda: y * z"),
])
def test_lambdas_sharing_a_line_convert_to_themselves(lambdas, name, expected):
    f = getattr(lambdas, name)
    code = autograph.to_code(f)
    assert expected in code, code
    g = autograph.to_graph(f)
    assert g is not f
    for x in (-3, 0, 4):
        assert g(x) == f(x)


def test_identical_lambdas_on_one_line_fall_back_with_a_clear_message(lambdas, warnings_):
    for f in (lambdas.twin_a, lambdas.twin_b):
        _, warning = assert_unconvertible(f, warnings_, "lambda", "lambdas_mod.py:3", "several lambdas on that line")
        assert autograph.to_graph(f)(1) == 2


# Decorators that hide the function ----------------------------------------------------

_DECORATED = """\
import functools


def logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        CALLS.append(f.__name__)
        return f(*args, **kwargs)
    return wrapper


CALLS = []


@logged
def wrapped(x):
    if x > 0:
        return 'pos'
    return 'nonpos'


class Checked:
    def __init__(self, f):
        self.f = f

    def __call__(self, x):
        if x > 100:
            return 'big'
        return self.f(x)


@Checked
def objected(x):
    if x > 0:
        return 'pos'
    return 'nonpos'


def impostor(x):
    return 'impostor'


@lambda f: impostor
def replaced(x):
    if x > 0:
        return 'pos'
    return 'nonpos'
"""


@pytest.fixture
def decorated(tmp_path):
    module, _ = _import_module(tmp_path, "decorated_mod", _DECORATED)
    return module


def test_functools_wraps_wrapper_converts_the_wrapper(decorated):
    code = autograph.to_code(decorated.wrapped)
    assert code.startswith("def wrapper(*args, **kwargs):"), code
    g = autograph.to_graph(decorated.wrapped)
    assert g.__wrapped__ is decorated.wrapped.__wrapped__
    del decorated.CALLS[:]
    assert [g(x) for x in (-1, 1)] == ["nonpos", "pos"]
    assert decorated.CALLS == ["wrapped", "wrapped"]  # the wrapper still runs


def test_decorator_returning_a_callable_object(decorated):
    code = autograph.to_code(decorated.objected)
    assert code.startswith("def __call__(self, x):"), code
    g = autograph.to_graph(decorated.objected)
    assert [g(x) for x in (-1, 1, 500)] == ["nonpos", "pos", "big"]


def test_decorator_replacing_the_function(decorated):
    code = autograph.to_code(decorated.replaced)
    assert code.startswith("def impostor(x):") and "'pos'" not in code, code
    g = autograph.to_graph(decorated.replaced)
    assert [g(x) for x in (-1, 1)] == ["impostor", "impostor"]


# Not callable -------------------------------------------------------------------------------

@pytest.mark.parametrize("entity", [3, "def f(): pass", None, [len], object()],
                         ids=["int", "str", "None", "list", "object"])
@pytest.mark.parametrize("api", ["to_graph", "to_code"])
def test_not_callable_is_a_type_error(api, entity):
    with pytest.raises(TypeError) as info:
        getattr(autograph, api)(entity)
    message = str(info.value)
    assert "callable" in message and repr(entity) in message, message


# No files, no evaluated strings ---------------------------------------------------------------

def _listing(directory):
    found = set()
    for root, dirs, files in os.walk(directory):
        found.update(os.path.join(root, name) for name in dirs + files)
    return found


def test_conversion_writes_no_files(tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    cwd = tmp_path / "cwd"
    temp.mkdir()
    cwd.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.chdir(cwd)
    module, path = _import_module(tmp_path, "nofiles_mod", """\
        def no_files(x, n):
            total = 0
            for i in range(n):
                if i % 2:
                    continue
                total += (lambda v: v * x)(i)
            while total > 100:
                total //= 2
            return total if total > 3 else -total
    """)
    before_src = _listing(tmp_path)
    opened = []

    def hook(event, args):
        if watching.is_set() and event in ("open", "os.mkdir", "os.rename", "shutil.copyfile", "os.remove"):
            if event != "open" or (isinstance(args[1], str) and any(m in args[1] for m in "wax+")):
                opened.append((event, args[:2]))

    watching = _watch(hook)
    watching.set()
    try:
        assert "def no_files" in autograph.to_code(module.no_files)
        g = autograph.to_graph(module.no_files)
        assert g(3, 10) == module.no_files(3, 10)
        autograph.set_verbosity(3)
        autograph.clear_cache()
        autograph.to_graph(module.no_files)(2, 5)
    finally:
        watching.clear()
        autograph.set_verbosity(0)
    assert opened == []
    assert _listing(temp) == set()
    assert _listing(cwd) == set()
    assert _listing(tmp_path) == before_src


_hooks = []
_hook_lock = threading.Lock()


def _watch(hook):
    """Installs an audit hook (they cannot be removed: it is inert unless
    the returned event is set)."""
    flag = threading.Event()

    def audit(event, args):
        if flag.is_set():
            hook(event, args)

    with _hook_lock:
        sys.addaudithook(audit)
        _hooks.append(audit)
    return flag


def test_conversion_evaluates_no_strings(tmp_path):
    """At run time: while converting, nothing is exec'd or eval'd, and the
    only strings compiled are the user's own source (parsing it); the code
    that runs is compiled from generated ASTs."""
    module, path = _import_module(tmp_path, "noeval_mod", """\
        def no_eval(x):
            if x > 0:
                x = x * 2
            label = 'exec("boom")' if x else "eval('1')"
            return x, label
    """)
    file_text = path.read_text()
    events = []
    watching = _watch(lambda event, args: events.append((event, args)) if event in ("compile", "exec") else None)
    watching.set()
    try:
        autograph.to_code(module.no_eval)
        g = autograph.to_graph(module.no_eval)
    finally:
        watching.clear()
    assert g(2) == module.no_eval(2)
    assert [e for e, _ in events if e == "exec"] == []
    compiled = [args[0] for event, args in events if event == "compile"]
    assert any(isinstance(source, ast.AST) for source in compiled)
    for source in compiled:
        if isinstance(source, (str, bytes)):
            text = source.decode() if isinstance(source, bytes) else source
            text = text.removeprefix("if 1:\n")
            assert text in file_text, f"compiled a string that is not the user's source:\n{text}"
        else:
            assert isinstance(source, ast.AST), type(source)


# Source-level: where the package uses eval, exec, compile ---------------------------------------

_PACKAGE_DIRS = ("autograph", "converters", "runtime")
# (file, function it is in, what is called): each reviewed.
_ALLOWED = {
    # the converted function's generated tree (an ast.Module) -> code object
    ("autograph/conversion.py", "_compile", "compile"),
    # a lambda's parsed tree, compiled to compare its bytecode with the live lambda's
    ("autograph/parsing.py", "_same_lambda_code", "compile"),
    # the CLI imports the user's file it was asked to convert (`autograph to-code FILE:FUNC`)
    ("autograph/cli.py", "_load", "exec_module"),
    # the numpy tracer's graph compiler: Python source generated from a traced graph; names are
    # generated (v0, k_3, ...), constants are repr() of int/float/str/bool or bound objects
    ("runtime/tracer/compiler.py", "compile_graph", "compile"),
    ("runtime/tracer/compiler.py", "compile_graph", "exec"),
    # `re.compile` of a constant pattern (the scan matches any `.compile(`)
    ("runtime/tracer/compiler.py", "<module>", "compile"),
    # the def's source text as found in the user's file, compiled (never run)
    # to check that it still describes the live function
    ("autograph/parsing.py", "_compiles_with", "compile"),
    # autograph.function's fast entry: a def whose parameter names are the
    # traced function's own (identifiers, checked by Python when it defined them)
    ("autograph/traced_function.py", "_make_entry", "compile"),
    ("autograph/traced_function.py", "_make_entry", "exec"),
    # the check that a graph's captured state is unchanged: generated names (o0, o1, ...) for
    # bound objects, repr() of the global names (identifiers from the code's co_names)
    ("autograph/captured_state.py", "_compile", "compile"),
    ("autograph/captured_state.py", "_compile", "exec"),
}
_CALLS = {"eval", "exec", "compile", "exec_module", "execfile", "run_code", "run_path", "__import__"}


def _dynamic_calls():
    found = set()
    for directory in _PACKAGE_DIRS:
        for path in sorted((ROOT / directory).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            relative = path.relative_to(ROOT).as_posix()
            functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for function in functions + [tree]:
                body = function.body if function is not tree else [
                    n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
                for node in (n for stmt in body for n in ast.walk(stmt)):
                    if isinstance(node, ast.Call):
                        callee = node.func
                        called = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", None)
                        if called in _CALLS:
                            where = function.name if function is not tree else "<module>"
                            found.add((relative, where, called, ast.unparse(node.args[0]) if node.args else ""))
    return found


def test_package_source_evaluates_no_strings():
    found = _dynamic_calls()
    assert {(f, w, c) for f, w, c, _ in found} <= _ALLOWED, sorted(found)
    by_key = {(f, w, c): first for f, w, c, first in found}
    # conversion compiles a tree built by python_ast.to_ast, never a string
    assert by_key[("autograph/conversion.py", "_compile", "compile")] == "tree"
    conversion = (ROOT / "autograph/conversion.py").read_text()
    assert re.search(r"tree = to_ast\(module\)\s+try:\s+code = compile\(tree,", conversion)
    assert by_key[("autograph/parsing.py", "_same_lambda_code", "compile")] == "tree"
    assert "expr = to_ast(gast.Expression(body=node))" in (ROOT / "autograph/parsing.py").read_text()
    # no bare-name use of eval/exec elsewhere (getattr(builtins, "eval") and the like)
    for directory in _PACKAGE_DIRS:
        for path in (ROOT / directory).rglob("*.py"):
            text = path.read_text()
            assert not re.search(r"""(getattr\([^)]*|\[)["'](eval|exec)["']""", text), path


# Identical functions in different files ------------------------------------------------------

def test_identical_functions_in_two_files_are_not_confused(tmp_path):
    """Code objects compare equal whatever their file: the conversion of one
    must not be handed out for the other (tracebacks would name the wrong
    file)."""
    source = """\
        def twin_in_file(x):
            if x:
                return 1 // x
            return 1 // x
    """
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, first_path = _import_module(tmp_path / "a", "twin_file_a", source)
    second, second_path = _import_module(tmp_path / "b", "twin_file_b", source)
    assert first.twin_in_file.__code__ == second.twin_in_file.__code__  # Python's view
    for module, path in ((first, first_path), (second, second_path)):
        g = autograph.to_graph(module.twin_in_file)
        assert g.__code__.co_filename == str(path)
        with pytest.raises(ZeroDivisionError) as info:
            g(0)
        assert info.traceback[-1].path == path
