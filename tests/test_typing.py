"""The public API's annotations (issue 35), checked by mypy with the settings
of pyproject.toml ([tool.mypy]: --strict for the modules of the public API
and the backend protocol, the internals read for their types only).

mypy checks the package and two user files at once: tests/typing_user.py,
which uses every public name and must pass (its `assert_type` lines hold only
while `to_graph`, `convert`, `function`, ... keep the types of the functions
they take), and tests/typing_user_errors.py, whose wrong calls must each be
reported, with the error code its `# E: [code]` comment names. Without the
annotations the first fails (Any where a type is asserted) and the second
reports nothing."""

import os
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = shutil.ignore_patterns("__pycache__", "*.pyc")
USER_FILES = ("typing_user.py", "typing_user_errors.py")
ERROR = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): error: (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$")
EXPECTED = re.compile(r"#\s*E:\s*\[(?P<code>[a-z-]+)\]\s*$")


def _layout(top):
    """This checkout's sources in `top` as site-packages holds them (mypy
    finds `autograph.runtime` in `autograph/runtime`, where the package-dir
    mapping installs it), beside the user files."""
    package = top / "autograph"
    shutil.copytree(os.path.join(ROOT, "autograph"), package, ignore=SOURCES)
    for sub in ("converters", "runtime"):
        shutil.copytree(os.path.join(ROOT, sub), package / sub, ignore=SOURCES)
    for name in USER_FILES:
        shutil.copy(os.path.join(ROOT, "tests", name), top / name)
    return top


def _expected_errors():
    with open(os.path.join(ROOT, "tests", "typing_user_errors.py"), encoding="utf-8") as f:
        return {(number, m.group("code")) for number, line in enumerate(f, 1) if (m := EXPECTED.search(line))}


# A cold mypy run over the package and numpy's stubs: 15-20 s alone.
@pytest.mark.slow
def test_public_api_types_are_checked_by_mypy(tmp_path):
    layout = _layout(tmp_path / "src")
    # A cache of its own (a cold run, some seconds): parallel workers share nothing.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", os.path.join(ROOT, "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy_cache"), "--no-color-output", "--no-pretty",
         "autograph", *USER_FILES],
        cwd=str(layout), capture_output=True, text=True, timeout=600, check=False)
    output = result.stdout + result.stderr
    errors = [m for m in map(ERROR.match, output.splitlines()) if m]
    assert result.returncode in (0, 1) and "Found" in output, output[-4000:]
    elsewhere = [m.group(0) for m in errors if m.group("file") != "typing_user_errors.py"]
    assert not elsewhere, "\n".join(elsewhere)
    reported = {(int(m.group("line")), m.group("code")) for m in errors}
    expected = _expected_errors()
    assert len(expected) >= 15
    assert reported == expected, (f"missing: {sorted(expected - reported)}\nunexpected: {sorted(reported - expected)}\n"
                                  + output[-4000:])
