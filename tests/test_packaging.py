"""What `python -m build` makes installs and runs: the wheel and the sdist
each go into a fresh virtual environment, where the main example runs
against the installed copy (not this checkout)."""

import os
import re
import site
import subprocess
import sys
import venv

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    assert result.returncode == 0, f"{args}: {result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), ROOT])
    return out


def _version():
    with open(os.path.join(ROOT, "autograph", "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


@pytest.mark.parametrize("kind", ["whl", "tar.gz"])
def test_built_package_installs_and_runs_the_example(dist, tmp_path, kind):
    (archive,) = [p for p in os.listdir(dist) if p.endswith("." + kind)]
    assert f"autograph-{_version()}" in archive
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = str(env_dir / "bin" / "python")
    _run([python, "-m", "pip", "install", "--quiet", "--no-deps", str(dist / archive)])
    # numpy and gast come from this environment (a virtual one too: its base
    # Python's packages would not have them), after the new one's own
    # packages; the package from the archive (installed first: pip would
    # take this environment's copy for it).
    (own,) = (env_dir / "lib").glob("python*/site-packages")
    (own / "outer.pth").write_text("".join(path + "\n" for path in site.getsitepackages()))
    where = _run([python, "-c", "import autograph, autograph.runtime.tracer; print(autograph.__file__)"],
                 cwd=tmp_path)
    assert where.startswith(str(env_dir)), where
    # PEP 561: type checkers read the installed package's annotations.
    assert (own / "autograph" / "py.typed").is_file()
    out = _run([python, os.path.join(ROOT, "examples", "square_if_positive.py")], cwd=tmp_path)
    assert "# traced: autograph.function(collatz_steps)(np.asarray(27)) = 111" in out


def test_every_package_directory_is_installed():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        config = tomllib.load(f)["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for package, folder in config["package-dir"].items():
        for here, _, files in os.walk(os.path.join(ROOT, folder)):
            if "__init__.py" in files:
                relative = os.path.relpath(here, os.path.join(ROOT, folder))
                found.add(package if relative == "." else package + "." + relative.replace(os.sep, "."))
    assert found == listed
