import os
import sys

import pytest

# Make the repository root importable so tests can `import tools...` and
# `import tests.cases...`. It is appended, not prepended, so that `autograph`
# itself is the installed package, as a user gets it.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.append(_ROOT)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow(minutes=0): a test of ten seconds or more (about `minutes`); such tests run first, "
                   "the longest first, so that the parallel workers (pytest-xdist, `-n auto` in pyproject.toml) "
                   "finish together")


def _order(item):
    slow = item.get_closest_marker("slow")
    return (0, -slow.args[0]) if slow is not None and slow.args else (0, 0) if slow is not None else (1, 0)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_order)  # stable: otherwise in order


@pytest.fixture
def staged():
    """Converted functions run their converted code outside traces too
    (`run_as_written(False)`), so a test sees each operator's Python path."""
    from autograph import runtime
    previous = runtime.run_as_written(False)
    yield
    runtime.run_as_written(previous)
