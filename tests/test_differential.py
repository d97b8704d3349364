"""Differential tests: every hand-written case in tests/cases, run as the
original Python function and as `autograph.to_graph(f)` (its statements as
written, and its converted code: tools.program_generator.MODES), must return, raise
(same type and message), print and log exactly the same."""

import traceback

import pytest

import autograph
from tests.cases import LOG, load_all
from tools.program_generator import MODES, compare, observe, running

CASES = load_all()


def _to_code(fn):
    try:
        return autograph.to_code(fn)
    except Exception:  # noqa: BLE001
        return "<to_code failed>\n" + traceback.format_exc()


def test_registry_is_large():
    assert len(CASES) >= 150


@pytest.mark.parametrize("name,fn,calls,opts", CASES, ids=[c[0] for c in CASES])
def test_differential(name, fn, calls, opts):
    try:
        converted = autograph.to_graph(fn)
    except Exception:  # noqa: BLE001
        pytest.fail(f"to_graph({name}) raised:\n{traceback.format_exc()}")
    failures = []
    for args, kwargs in calls:
        expected = observe(fn, args, kwargs, log=LOG, run_async=opts["run_async"])
        for mode, as_written in MODES:
            with running(as_written):
                actual = observe(converted, args, kwargs, log=LOG, run_async=opts["run_async"])
            diffs = compare(expected, actual)
            if diffs:
                failures.append(f"  call {name}(*{args!r}, **{kwargs!r}), {mode}:\n    " + "\n    ".join(diffs))
    if failures:
        pytest.fail(
            "converted function differs from the original:\n"
            + "\n".join(failures)
            + "\n\ngenerated code:\n"
            + _to_code(fn),
            pytrace=False,
        )
