"""The command line: `python -m autograph to-code FILE.py:FUNCTION [--diff]`.
Output is compared with `autograph.to_code` run in-process on the same
file; every error prints exactly one line `autograph: error: ...` on stderr
and exits with status 2."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

import autograph

SOURCE = textwrap.dedent('''
    def square_if_positive(x):
        if x > 0:
            x = x * x
        else:
            x = 0.0
        return x


    def helper(v):
        return v + 1


    def calls_helper(xs):
        total = 0
        for x in xs:
            if x and total < 10:
                total += helper(x)
        return total


    class Shape:
        def area(self, w, h):
            if w > 0 and h > 0:
                return w * h
            return 0
''')


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograph", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "cli_snippets.py"
    path.write_text(SOURCE)
    return path


def _load(path, qualname):
    spec = importlib.util.spec_from_file_location(f"cli_inprocess_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    target = module
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _assert_single_error(result):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("autograph: error:"), result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("qualname", ["square_if_positive", "calls_helper", "Shape.area"])
def test_to_code_prints_the_generated_code(module_file, qualname):
    result = _run("to-code", f"{module_file}:{qualname}")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    expected = autograph.to_code(_load(module_file, qualname))
    assert result.stdout.rstrip("\n") == expected.rstrip("\n")


def test_to_code_output_has_converted_control_flow(module_file):
    result = _run("to-code", f"{module_file}:square_if_positive")
    assert "x = ag__.if_stmt(x > 0, if_body, else_body, (x,), ('x',))" in result.stdout
    assert result.stdout.startswith("def square_if_positive(x):")


def test_relative_path_from_the_files_directory(module_file):
    result = _run("to-code", f"{module_file.name}:square_if_positive", cwd=module_file.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n") == autograph.to_code(_load(module_file, "square_if_positive")).rstrip("\n")


def test_diff_prints_a_unified_diff(module_file):
    result = _run("to-code", f"{module_file}:square_if_positive", "--diff")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("---")
    assert lines[1].startswith("+++")
    assert lines[2].startswith("@@")
    assert "-    if x > 0:" in lines
    assert "+    x = ag__.if_stmt(x > 0, if_body, else_body, (x,), ('x',))" in lines
    assert " def square_if_positive(x):" in lines


def test_diff_added_lines_are_the_generated_code(module_file):
    result = _run("to-code", f"{module_file}:square_if_positive", "--diff")
    generated = autograph.to_code(_load(module_file, "square_if_positive")).splitlines()
    body = result.stdout.splitlines()[2:]
    rebuilt = [line[1:] for line in body if line[:1] in (" ", "+")]
    assert rebuilt == generated


def test_missing_file(tmp_path):
    _assert_single_error(_run("to-code", f"{tmp_path / 'nope.py'}:f"))


def test_missing_function(module_file):
    result = _run("to-code", f"{module_file}:no_such_function")
    _assert_single_error(result)
    assert "no_such_function" in result.stderr


def test_missing_method(module_file):
    _assert_single_error(_run("to-code", f"{module_file}:Shape.no_such_method"))


def test_syntax_error_in_file(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    return 1\n")
    result = _run("to-code", f"{path}:f")
    _assert_single_error(result)
    assert "syntax" in result.stderr.lower()


@pytest.mark.parametrize("argument", ["just_a_file.py", "no_colon"])
def test_argument_without_colon(module_file, argument):
    _assert_single_error(_run("to-code", argument))


def test_argument_without_function_name(module_file):
    _assert_single_error(_run("to-code", f"{module_file}:"))


def test_file_that_raises_on_import(tmp_path):
    path = tmp_path / "raises_on_import.py"
    path.write_text("raise RuntimeError('boom at import')\n\ndef f():\n    return 1\n")
    result = _run("to-code", f"{path}:f")
    _assert_single_error(result)
    assert "boom at import" in result.stderr


def test_function_that_cannot_be_converted(tmp_path):
    path = tmp_path / "gen.py"
    path.write_text("def g(n):\n    for i in range(n):\n        yield i\n")
    _assert_single_error(_run("to-code", f"{path}:g"))


def test_target_that_is_not_a_function(tmp_path):
    path = tmp_path / "values.py"
    path.write_text("X = 1\n")
    _assert_single_error(_run("to-code", f"{path}:X"))


def test_no_file_is_left_behind(module_file):
    before = sorted(os.listdir(module_file.parent))
    _run("to-code", f"{module_file}:calls_helper")
    after = sorted(p for p in os.listdir(module_file.parent) if p != "__pycache__")
    assert after == [p for p in before if p != "__pycache__"]


def test_inlined_prints_the_code_that_runs(module_file):
    result = _run("to-code", f"{module_file}:square_if_positive", "--inlined")
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    # The Python meaning of the `if` is inlined behind a check of the condition,
    # with the operator call as the fallback for a symbolic one.
    assert "if cond is True or cond is False or ag__.is_python(cond):" in shown
    assert "x = ag__.if_stmt(cond, if_body, else_body, (x,), ('x',))" in shown
    assert shown != _run("to-code", f"{module_file}:square_if_positive").stdout
    # Its entry hands a call outside every trace to the statements as written.
    assert "if not tracing():\n        return as_written(x)\n" in shown
    # It is the code that runs: compiled with ag__ bound and inside a trace,
    # it computes what the original does; outside, it calls `as_written`.
    namespace = {"ag__": autograph.runtime, "tracing": lambda: True}
    exec(compile(shown, "<inlined>", "exec"), namespace)
    assert namespace["square_if_positive"](3.0) == 9.0 and namespace["square_if_positive"](-1.0) == 0.0
    namespace.update(tracing=lambda: False, as_written=lambda x: ("as written", x))
    assert namespace["square_if_positive"](3.0) == ("as written", 3.0)
