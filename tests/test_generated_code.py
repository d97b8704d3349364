"""Static checks of the code `autograph.to_code` generates for every case
in tests/cases:

* it passes `ruff check --select E9,F` (syntax errors, undefined names,
  unused variables, ...), apart from findings the original function has
  itself. The generated functions of each case module are written to one
  file that starts with `import autograph.runtime as ag__` and
  `from tests.cases.<module> import *`; ruff runs once over all of them;
* it never declares `nonlocal` a variable that no nested function
  captures (state travels as parameters and return values);
* it never binds the runtime's name (`ag__` or its hygienic variant);
* every function it adds is a helper named if_body / else_body /
  loop_test / extra_test / loop_body, possibly with a numeric suffix, and every
  other name it adds is a known generated name (`itr`, flags, ...).
"""

import ast
import collections
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import autograph
from autograph.errors import ConversionError
from tests.cases import load_all

CASES = load_all()
IDS = [c[0] for c in CASES]

HELPER = re.compile(r"(if_body|else_body|loop_test|extra_test|loop_body)(_\d+)?")
GENERATED_NAME = re.compile(r"(if_body|else_body|loop_test|extra_test|loop_body|itr|do_return|retval|break_|continue_"
                            r"|item|index|ag_)(_?\d+)?|ag__")
RUNTIME_ATTRIBUTES = set(autograph.runtime.__all__)
# Builtins generated code may use: `try: x / except NameError:` for a variable
# that may be bound, `x: object` for a cell that only body functions set, and
# `except BaseException:` that abandons a jump when a `with` swallows an exception.
GENERATED_BUILTINS = {"NameError", "object", "BaseException", "slice"}
# Findings that generated code has and the original has not, accepted with
# a reason. A local whose every binding is dead code and that a nested
# function reads stays a local of the function through `w: object`, which
# ruff cannot see as a binding.
ACCEPTED_FINDINGS = {
    "case_functions.dead_code_after_continue_read_by_closure": [("F821", "Undefined name `w`")],
    "case_functions.closure_reads_variable_whose_binding_is_dead_code":
        [("F821", "Undefined name `cm`")] * 2,
}
# Why to_code may refuse a case: the documented reasons.
REFUSALS = ("is a generator or coroutine function", "inside a `finally` clause is not supported",
            "a `return` inside a `finally` clause swallows")


def _generated(fn):
    try:
        return autograph.to_code(fn)
    except ConversionError as error:
        return error


def _original(fn):
    return textwrap.dedent(inspect.getsource(fn))


# ruff ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ruff_findings(tmp_path_factory):
    """{case name: ([generated findings], [original findings])}, each a
    (code, message) pair; one ruff run over all files."""
    directory = tmp_path_factory.mktemp("generated")
    by_module = collections.defaultdict(list)
    for name, fn, _, _ in CASES:
        code = _generated(fn)
        if isinstance(code, str):
            by_module[fn.__module__].append((name, code, _original(fn)))
    spans = {}  # (file, kind) -> [(first line, last line, case name)]
    for module, entries in by_module.items():
        short = module.rsplit(".", 1)[-1]
        for kind, index in (("generated", 1), ("original", 2)):
            lines = (["import autograph.runtime as ag__"] if kind == "generated" else []) + [
                f"from {module} import *", "", ""]
            ranges = []
            for entry in entries:
                first = len(lines) + 1
                lines.extend(entry[index].rstrip("\n").splitlines())
                ranges.append((first, len(lines), entry[0]))
                lines.extend(["", ""])
            path = directory / f"{kind}_{short}.py"
            path.write_text("\n".join(lines) + "\n")
            spans[str(path)] = (kind, ranges)
    target = f"py{sys.version_info.major}{sys.version_info.minor}"
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--ignore-noqa", "--select", "E9,F",
         "--ignore", "F403,F405,F811", "--target-version", target, "--output-format", "json", str(directory)],
        capture_output=True, text=True, timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert result.returncode in (0, 1), result.stderr
    findings = collections.defaultdict(lambda: ([], []))
    for item in json.loads(result.stdout):
        kind, ranges = spans[os.path.realpath(item["filename"])] if os.path.realpath(item["filename"]) in spans \
            else spans[item["filename"]]
        row = item["location"]["row"]
        owner = next((name for first, last, name in ranges if first <= row <= last), None)
        assert owner is not None, item  # the prefix lines must be clean
        message = re.sub(r"\s+", " ", item["message"])
        findings[owner][0 if kind == "generated" else 1].append((item["code"], message, row))
    return findings


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=IDS)
def test_ruff_accepts_generated_code(name, fn, calls, opts, ruff_findings):
    code = _generated(fn)
    if isinstance(code, ConversionError):
        assert any(reason in str(code) for reason in REFUSALS), str(code)
        return
    generated, original = ruff_findings.get(name, ([], []))
    allowed = collections.Counter((c, m) for c, m, _ in original)
    allowed.update(ACCEPTED_FINDINGS.get(name, []))
    new = []
    for c, m, row in generated:
        if allowed[(c, m)]:
            allowed[(c, m)] -= 1
        else:
            new.append(f"{c} {m} (line {row} of the file)")
    assert not new, "ruff findings in generated code:\n  " + "\n  ".join(new) + "\n\n" + code


def test_every_case_is_checked_by_ruff(ruff_findings):
    converted = [name for name, fn, _, _ in CASES if isinstance(_generated(fn), str)]
    assert len(converted) >= len(CASES) - 10


# Structure of the generated code ----------------------------------------------

def _tree_of(fn):
    code = _generated(fn)
    if isinstance(code, ConversionError):
        assert any(reason in str(code) for reason in REFUSALS), str(code)
        return None, None
    try:
        return ast.parse(code), ast.parse(_original(fn))
    except SyntaxError as error:
        pytest.fail(f"to_code output is not valid Python ({error.msg}, line {error.lineno}):\n{code}", pytrace=False)


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=IDS)
def test_generated_code_is_valid_python(name, fn, calls, opts):
    _tree_of(fn)


def _runtime_names(tree):
    return {node.value.id for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.attr in RUNTIME_ATTRIBUTES}


def _bound_names(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _identifiers(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
    return found


def _captured(fn):
    """Names a nested scope of `fn` (at any depth) shares with `fn`, or that `fn`
    declares nonlocal: the only legitimate `nonlocal` names."""
    names = set(fn.__code__.co_cellvars) | set(fn.__code__.co_freevars)
    stack = [c for c in fn.__code__.co_consts if inspect.iscode(c)]
    while stack:
        code = stack.pop()
        names |= set(code.co_cellvars) | set(code.co_freevars)
        stack.extend(c for c in code.co_consts if inspect.iscode(c))
    return names


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=IDS)
def test_nonlocal_only_for_captured_variables(name, fn, calls, opts):
    tree, _ = _tree_of(fn)
    if tree is None:
        return
    declared = {n for node in ast.walk(tree) if isinstance(node, ast.Nonlocal) for n in node.names}
    assert declared <= _captured(fn), f"nonlocal for uncaptured variables: {sorted(declared - _captured(fn))}"


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=IDS)
def test_runtime_name_is_never_bound(name, fn, calls, opts):
    tree, original = _tree_of(fn)
    if tree is None:
        return
    bound = _bound_names(tree)
    runtime = _runtime_names(tree)
    assert not (runtime & bound), f"generated code binds the runtime name {sorted(runtime & bound)}"
    if "ag__" not in _bound_names(original):
        assert "ag__" not in bound


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=IDS)
def test_added_names_are_helpers(name, fn, calls, opts):
    tree, original = _tree_of(fn)
    if tree is None:
        return
    user = _identifiers(original)
    added_functions = {node.name for node in ast.walk(tree)
                       if isinstance(node, ast.FunctionDef) and node.name not in user}
    bad_helpers = sorted(n for n in added_functions if not HELPER.fullmatch(n))
    assert not bad_helpers, f"unexpected helper functions: {bad_helpers}"
    added = _identifiers(tree) - user
    bad_names = sorted(n for n in added if not GENERATED_NAME.fullmatch(n) and n not in GENERATED_BUILTINS)
    assert not bad_names, f"unexpected generated names: {bad_names}"


def test_generated_code_uses_the_runtime():
    uses = 0
    for _, fn, _, _ in CASES:
        code = _generated(fn)
        if isinstance(code, str) and re.search(r"\bag__\.(if_stmt|while_stmt|for_stmt)\(", code):
            uses += 1
    assert uses >= len(CASES) // 2


# The code to_code shows, run as it reads --------------------------------------

def _shown_function(fn, code):
    """Executes the text of `to_code(fn)` (the functional form; what runs may
    add Python fast paths) in a copy of `fn`'s globals."""
    namespace = dict(fn.__globals__)
    for runtime_name in _runtime_names(ast.parse(code)):
        namespace[runtime_name] = autograph.runtime
    exec(compile(code, f"<to_code of {fn.__qualname__}>", "exec"), namespace)
    shown = namespace[fn.__name__]
    shown.__kwdefaults__ = fn.__kwdefaults__
    shown.__defaults__ = fn.__defaults__
    return shown


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=IDS)
def test_shown_code_behaves_like_the_original(name, fn, calls, opts):
    from tests.cases import LOG
    from tools.program_generator import compare, observe

    tree, _ = _tree_of(fn)
    if tree is None:
        return
    code = autograph.to_code(fn)
    shown = _shown_function(fn, code)
    failures = []
    for args, kwargs in calls:
        expected = observe(fn, args, kwargs, log=LOG, run_async=opts["run_async"])
        actual = observe(shown, args, kwargs, log=LOG, run_async=opts["run_async"])
        diffs = compare(expected, actual)
        if diffs:
            failures.append(f"  call {name}(*{args!r}, **{kwargs!r}):\n    " + "\n    ".join(diffs))
    assert not failures, "the code to_code shows differs from the original:\n" + "\n".join(failures) + "\n\n" + code


def test_every_generated_node_has_a_position(monkeypatch):
    """Generated nodes get their statement's position when they are built:
    the code compiles on the first try, with no whole-tree repair pass (which
    would cost a failed compile and a walk of the tree per conversion). The
    random programs of test_random_programs.py are checked the same way."""
    from test_random_programs import refuse_position_repairs

    from autograph import conversion

    monkeypatch.setattr(conversion, "ast", conversion.ast)
    refuse_position_repairs()
    conversion.clear_cache()
    functions = [fn for _, fn, _, _ in CASES]
    for fn in functions:
        try:
            autograph.to_graph(fn)
        except ConversionError:
            pass


def test_a_case_that_lowering_empties_gets_a_positioned_pass(monkeypatch):
    # A match_case has no position of its own: the `pass` that fills it
    # takes the position of the statement around it.
    from test_random_programs import refuse_position_repairs

    from autograph import conversion

    def skip_fours(xs):
        total = 0
        for x in xs:
            match x:
                case 4:
                    continue
                case _:
                    total += x
        return total
    monkeypatch.setattr(conversion, "ast", conversion.ast)
    refuse_position_repairs()
    conversion.clear_cache()
    assert autograph.to_graph(skip_fours)([1, 4, 5, 4]) == skip_fours([1, 4, 5, 4]) == 6
