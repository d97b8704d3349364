"""Differential fuzzing in the test suite: random programs from
tools.program_generator, run as written and converted by autograph.to_graph,
must agree on return value, exception, printed output and side effects.

AUTOGRAPH_FUZZ_N sets how many programs (default 3000); they are checked in
chunks, each chunk its own test, spread over the machine's cores.
`python -m tools.fuzz --count 100000` runs the large campaign.
"""

import multiprocessing
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.fuzz import check_seed, check_source, format_report
from tools.program_generator import generate

N = int(os.environ.get("AUTOGRAPH_FUZZ_N", "3000"))
CHUNK = 250
JOBS = max(1, min(int(os.environ.get("AUTOGRAPH_FUZZ_JOBS", os.cpu_count() or 1)), 8))
CHUNKS = [(start, min(start + CHUNK, N)) for start in range(0, N, CHUNK)]
SHOWN = 3  # mismatches shown in full per chunk


def refuse_position_repairs():
    """Makes a conversion whose generated code lacks a position fail, where
    it would repair the tree and compile again: generated nodes get their
    statement's position when they are built (a repair costs a failed
    compile and a walk of the tree per conversion). Checked on every program
    these tests convert."""
    import ast

    from autograph import conversion

    def repair(tree):
        missing = next(node for node in ast.walk(tree) if "lineno" in node._attributes
                       and getattr(node, "lineno", None) is None)
        raise AssertionError(f"generated node without a position: {ast.dump(missing)[:200]}")
    conversion.ast = type(ast)("ast_without_repairs")
    conversion.ast.__dict__.update(ast.__dict__, fix_missing_locations=repair)


@pytest.fixture(scope="module")
def pool():
    if JOBS == 1:
        yield None
        return
    ctx = multiprocessing.get_context("forkserver")
    with ctx.Pool(JOBS, initializer=refuse_position_repairs) as p:
        yield p


def _check(seed):
    report = check_seed(seed)
    if report is not None and report["kind"] == "unconverted":
        return None
    return report


@pytest.mark.slow
@pytest.mark.parametrize("start,stop", CHUNKS, ids=[f"seeds{a}-{b - 1}" for a, b in CHUNKS])
def test_random_programs(pool, start, stop, monkeypatch):
    seeds = range(start, stop)
    if pool is None:
        from autograph import conversion
        monkeypatch.setattr(conversion, "ast", conversion.ast)
        refuse_position_repairs()
    results = pool.map(_check, seeds, chunksize=10) if pool else list(map(_check, seeds))
    failures = [r for r in results if r is not None]
    if failures:
        shown = "\n\n".join(format_report(r) for r in failures[:SHOWN])
        pytest.fail(
            f"{len(failures)} of {stop - start} programs differ after conversion "
            f"(seeds {[r['seed'] for r in failures]}); replay one with "
            f"`python -m tools.fuzz --replay SEED --minimize`.\n\n{shown}",
            pytrace=False,
        )


@settings(max_examples=int(os.environ.get("AUTOGRAPH_FUZZ_HYPOTHESIS", "40")), deadline=None,
          suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(min_value=10**6, max_value=10**9),
       args=st.lists(st.tuples(*[st.integers(-6, 12)] * 3), min_size=1, max_size=3))
def test_random_programs_hypothesis(seed, args):
    source = generate(seed)
    report = check_source(source, f"<generated-{seed}>", args)
    if report and report["kind"] in ("mismatch", "convert"):
        report.update(seed=seed, source=source)
        raise AssertionError(format_report(report))
