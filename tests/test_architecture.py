"""The layout's rules, as import-linter contracts (pyproject.toml,
[tool.importlinter]): the pipeline over the converters over the runtime,
a runtime core that imports no backend and no framework, backends that do
not import each other. Checked on this checkout's sources, laid out as the
installed package is (converters/ and runtime/ inside autograph/)."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = shutil.ignore_patterns("__pycache__", "*.pyc")


def _installed_layout(top):
    """A copy of this checkout's sources in `top`, laid out as site-packages
    holds the package."""
    package = top / "autograph"
    shutil.copytree(os.path.join(ROOT, "autograph"), package, ignore=SOURCES)
    for sub in ("converters", "runtime"):
        shutil.copytree(os.path.join(ROOT, sub), package / sub, ignore=SOURCES)
    return top


def _lint(layout):
    script = ("import sys; from importlinter.cli import lint_imports; "
              f"sys.exit(lint_imports(config_filename={os.path.join(ROOT, 'pyproject.toml')!r}, no_cache=True))")
    env = {**os.environ, "PYTHONPATH": str(layout)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env=env, cwd=str(layout), check=False)


def test_import_contracts_are_kept(tmp_path):
    result = _lint(_installed_layout(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "5 kept, 0 broken" in result.stdout, result.stdout[-4000:]


@pytest.mark.parametrize("module, imports, broken", [
    ("staging/framework.py", "torch", "autograph.runtime.staging.framework -> torch"),
    ("jax/other.py", "autograph.runtime.tracer", "autograph.runtime.jax.other -> autograph.runtime.tracer"),
], ids=["a framework imported by the core", "a backend importing another"])
def test_a_broken_layer_breaks_a_contract(tmp_path, module, imports, broken):
    layout = _installed_layout(tmp_path)
    (layout / "autograph" / "runtime" / module).write_text(f"import {imports}\n")
    result = _lint(layout)
    assert result.returncode != 0
    assert broken in result.stdout
