"""Traced differential fuzzing: random numeric functions from
tools.numeric_generator (numpy arrays, data-dependent `if`/`while`/`for`,
break/continue/return, item updates) run eagerly and through
`autograph.function` (first call traces, later calls run the cached graph)
must agree; documented tracer limitations are tolerated, crashes and
mismatches are not.

AUTOGRAPH_TRACED_FUZZ_N sets how many programs (default 300).
AUTOGRAPH_TRACED_FUZZ_EXCLUDE lists generator features to leave out
(comma-separated; default none).
`python -m tools.traced_fuzz --count 2000` runs the larger campaign.
"""

import multiprocessing
import os

import pytest

from tools.traced_fuzz import check_seed, format_report

N = int(os.environ.get("AUTOGRAPH_TRACED_FUZZ_N", "300"))
EXCLUDE = tuple(x for x in os.environ.get("AUTOGRAPH_TRACED_FUZZ_EXCLUDE", "").split(",") if x)
JOBS = max(1, min(int(os.environ.get("AUTOGRAPH_FUZZ_JOBS", os.cpu_count() or 1)), 8))
FIRST_SEED = 100_000  # apart from the seeds of the default campaign
SHOWN = 3


def _check(seed):
    return check_seed(seed, exclude=EXCLUDE, use_jax=False)


def test_traced_random_programs():
    seeds = range(FIRST_SEED, FIRST_SEED + N)
    if JOBS > 1:
        with multiprocessing.get_context("fork").Pool(JOBS) as pool:
            results = pool.map(_check, seeds, chunksize=10)
    else:
        results = [_check(s) for s in seeds]
    reports = [r for r in results if r is not None]
    limitations = [r for r in reports if r["kind"] == "limitation"]
    failures = [r for r in reports if r["kind"] != "limitation"]
    if failures:
        shown = "\n\n".join(format_report(r) for r in failures[:SHOWN])
        pytest.fail(
            f"{len(failures)} of {N} traced programs failed "
            f"({sorted((r['kind'], r['seed']) for r in failures)}); replay one with "
            f"`python -m tools.traced_fuzz --replay SEED --minimize`.\n\n{shown}",
            pytrace=False)
    # The generator is calibrated so that documented limitations are rare.
    assert len(limitations) <= N // 20, [(r["seed"], r["error"]) for r in limitations]
