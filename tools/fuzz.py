"""Differential fuzzer: random programs, original vs `autograph.to_graph`.

    python -m tools.fuzz --count 100000 --seed 0 --jobs 2
    python -m tools.fuzz --count 2000 --minimize     # also shrink mismatches
    python -m tools.fuzz --replay 1234               # show one seed in full

Each program `tools.program_generator.generate(seed)` is run on a few integer
inputs, as written and converted; return value, exception type and message,
printed output, the side-effect log and the arguments are compared. Every
mismatch is reported with its seed, source, difference (and, with
--minimize, a reduced program that still shows a difference); the last line
is a summary.
"""

import argparse
import ast
import multiprocessing
import os
import sys
import time
import traceback
import warnings

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools.program_generator import (  # noqa: E402
    FEATURES,
    MODES,
    _time_limit,
    compare,
    compile_program,
    generate,
    inputs_for,
    observe,
    running,
)

__all__ = ["check_source", "check_seed", "minimize", "main"]


def _convert(fn):
    import autograph

    return autograph.to_graph(fn)


def _to_code(fn):
    try:
        import autograph

        return autograph.to_code(fn)
    except Exception:  # noqa: BLE001
        return "<to_code failed>\n" + traceback.format_exc(limit=3)


def check_source(source, filename, inputs, timeout=5.0, with_code=True):
    """Runs `f` from `source` original vs converted on `inputs`.

    Returns None when they agree, else a dict with the kind of failure
    ('convert' or 'mismatch'), the differences per input and the generated
    code. Returns {'kind': 'invalid'} when the original itself times out.
    """
    namespace = compile_program(source, filename)
    fn = namespace["f"]
    log = namespace["LOG"]
    try:
        with warnings.catch_warnings(record=True) as caught, _time_limit(timeout * 4):
            warnings.simplefilter("always")
            converted = _convert(fn)
        if converted is fn:
            # to_graph declined (and warned); nothing to compare.
            return {"kind": "unconverted", "signature": ("unconverted",),
                    "reason": "; ".join(str(w.message) for w in caught)}
    except Exception as e:  # noqa: BLE001
        return {
            "kind": "convert",
            "error": f"{type(e).__name__}: {e}",
            "signature": ("convert", type(e).__name__),
            "diffs": [("to_graph", traceback.format_exc(limit=6))],
            "code": _to_code(fn) if with_code else None,
        }
    diffs = []
    signature = None
    for args in inputs:
        expected = observe(fn, args, log=log, timeout=timeout)
        if expected["exc"] and expected["exc"][0] == "<Timeout>":
            return {"kind": "invalid"}
        for mode, as_written in MODES:
            with running(as_written):
                actual = observe(converted, args, log=log, timeout=timeout)
            d = compare(expected, actual)
            if d:
                diffs.append((args, [f"({mode})"] + d))
                if signature is None:
                    signature = _signature(expected, actual)
                break
    if not diffs:
        return None
    return {
        "kind": "mismatch",
        "signature": signature,
        "diffs": diffs,
        "code": _to_code(fn) if with_code else None,
    }


def _signature(expected, actual):
    """A coarse description of a difference, kept while minimizing."""
    from tools.program_generator import _equal

    keys = [k for k in ("ret", "exc", "stdout", "log", "args") if not _equal(expected[k], actual[k])]
    exc_types = (expected["exc"][0] if expected["exc"] else None,
                 actual["exc"][0] if actual["exc"] else None)
    return ("mismatch", keys[0], exc_types)


def check_seed(seed, n_inputs=4, timeout=5.0, exclude=()):
    """Generates program `seed` and checks it; returns None or a report dict."""
    source = generate(seed, exclude=exclude)
    try:
        report = check_source(source, f"<generated-{seed}>", inputs_for(seed, n_inputs), timeout)
    except Exception:  # noqa: BLE001 - a harness crash is reported, not hidden
        report = {"kind": "harness", "signature": ("harness",),
                  "diffs": [("harness", traceback.format_exc())], "code": None}
    if report is None or report["kind"] == "invalid":
        return None
    if report["kind"] == "unconverted":
        return {"kind": "unconverted", "seed": seed, "reason": report["reason"]}
    report["seed"] = seed
    report["source"] = source
    report["inputs"] = inputs_for(seed, n_inputs)
    return report


# -- minimization ------------------------------------------------------------

def _candidates(tree):
    """Yields smaller variants of the module `tree` (only inside `f`)."""
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    bodies = []

    def collect(node):
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            seq = getattr(node, field, None)
            if isinstance(seq, list) and seq and isinstance(seq[0], (ast.stmt, ast.excepthandler, ast.match_case)):
                bodies.append((node, field))
                for child in seq:
                    collect(child)

    collect(func)
    for node, field in bodies:
        seq = getattr(node, field)
        for i in range(len(seq)):
            item = seq[i]
            # Never drop a while-loop counter increment: the loop must end.
            if (isinstance(item, ast.AugAssign) and isinstance(item.target, ast.Name)
                    and item.target.id[:1] == "n" and item.target.id[1:].isdigit()):
                continue
            # Drop the statement (or handler / case / else clause).
            new = seq[:i] + seq[i + 1:]
            if not new and field in ("body", "cases"):
                new = [ast.Pass()] if field == "body" else new
            yield node, field, new
            # Hoist the body of a compound statement in its place.
            if isinstance(item, ast.stmt):
                for sub in ("body", "orelse", "finalbody"):
                    inner = getattr(item, sub, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        yield node, field, seq[:i] + inner + seq[i + 1:]
                if isinstance(item, ast.Match):
                    for c in item.cases:
                        yield node, field, seq[:i] + c.body + seq[i + 1:]
        if field == "orelse" and seq:
            yield node, field, []


def _simplify_exprs(tree):
    """Yields variants with one sub-expression replaced by a simpler one."""
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    for node in ast.walk(func):
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr) and not isinstance(value, (ast.Constant, ast.Name)):
                if isinstance(node, (ast.Assign, ast.AugAssign)) and field == "target":
                    continue
                if isinstance(value, (ast.Attribute, ast.Subscript, ast.Starred)) and isinstance(
                        getattr(value, "ctx", None), (ast.Store, ast.Del)):
                    continue
                children = [c for c in ast.iter_child_nodes(value) if isinstance(c, ast.expr)
                            and not isinstance(getattr(c, "ctx", None), (ast.Store, ast.Del))]
                for c in children:
                    yield node, field, c
                yield node, field, ast.Constant(1)
                yield node, field, ast.Constant(0)


def run_tasks(worker, tasks, handle, jobs, chunksize):
    """Calls `handle(*worker(task))` for every task, on `jobs` processes."""
    if jobs > 1:
        with multiprocessing.get_context("forkserver").Pool(jobs) as pool:
            for result in pool.imap_unordered(worker, tasks, chunksize=chunksize):
                handle(*result)
    else:
        for task in tasks:
            handle(*worker(task))


def print_groups(title, groups):
    """Prints {key: seeds} groups, largest first."""
    if groups:
        print(title)
        for key, seeds in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(f"  {key}: {len(seeds)}  e.g. {sorted(seeds)[:5]}")


def shrink(source, inputs, still_fails, max_rounds):
    """Greedy reduction shared by the fuzzers: keeps one failing input, then
    applies the first candidate edit (statement removal, expression
    simplification) for which `still_fails(source, inputs)` holds, until
    none does. Returns (source, inputs)."""
    for args in inputs:
        if still_fails(source, [args]):
            inputs = [args]
            break
    for _ in range(max_rounds):
        progress = False
        tree = ast.parse(source)
        for gen in (_candidates, _simplify_exprs):
            for node, field, new in list(gen(tree)):
                old = getattr(node, field)
                setattr(node, field, new)
                try:
                    candidate = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
                    compile(candidate, "<candidate>", "exec")
                    ok = len(candidate) < len(source) and still_fails(candidate, inputs)
                except Exception:  # noqa: BLE001
                    ok = False
                if ok:
                    source = candidate
                    progress = True
                    break
                setattr(node, field, old)
            if progress:
                break
        if not progress:
            break
    return source, inputs


def minimize(source, inputs, signature, timeout=0.5, max_rounds=80):
    """Greedy reduction of `source` that keeps a difference of the same
    signature on some input. Returns (source, inputs)."""
    counter = [0]

    def still_fails(src, ins):
        counter[0] += 1
        try:
            report = check_source(src, f"<minimize-{os.getpid()}-{counter[0]}>", ins, timeout, with_code=False)
        except Exception:  # noqa: BLE001
            return False
        return bool(report) and report.get("kind") != "invalid" and report.get("signature") == signature

    source, inputs = shrink(source, inputs, still_fails, max_rounds)
    # Strip unused prelude parts by name.
    for name in ("Box", "CM", "t"):
        tree = ast.parse(source)
        users = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
        if not users:
            tree.body = [n for n in tree.body if getattr(n, "name", None) != name]
            candidate = ast.unparse(tree) + "\n"
            if still_fails(candidate, inputs):
                source = candidate
    return source, inputs


# -- reporting -----------------------------------------------------------------

def format_report(report, minimized=None):
    lines = [f"=== MISMATCH seed={report['seed']} kind={report['kind']}"]
    for args, d in report["diffs"][:3]:
        if isinstance(d, str):
            lines.append(f"--- {args}:\n{d}")
        else:
            lines.append(f"--- f{tuple(args)!r}:")
            lines.extend("    " + x for x in d)
    if minimized:
        src, ins = minimized
        lines.append(f"--- minimized (inputs {ins}):")
        lines.append(src.rstrip())
    lines.append("--- source:")
    lines.append(report["source"].rstrip())
    if report.get("code"):
        lines.append("--- to_code:")
        lines.append(report["code"].rstrip())
    return "\n".join(lines)


def _worker(args):
    seed, n_inputs, do_minimize, exclude = args
    report = check_seed(seed, n_inputs, exclude=exclude)
    if report is None or report["kind"] == "unconverted":
        return seed, report
    minimized = None
    if do_minimize and report["kind"] in ("mismatch", "convert"):
        try:
            minimized = minimize(report["source"], report["inputs"], report["signature"])
        except Exception:  # noqa: BLE001
            minimized = None
    report["minimized"] = minimized
    return seed, report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--inputs", type=int, default=4, help="inputs per program")
    parser.add_argument("--minimize", action="store_true", help="shrink each mismatch")
    parser.add_argument("--max-reports", type=int, default=50, help="print at most this many in full")
    parser.add_argument("--replay", type=int, help="print source, code and result for one seed")
    parser.add_argument("--out", help="also write full reports to this file")
    parser.add_argument("--exclude", default="",
                        help="comma-separated statement kinds to leave out of programs "
                             "(from tools.program_generator.FEATURES), e.g. try,with")
    opts = parser.parse_args(argv)

    exclude = tuple(x for x in opts.exclude.split(",") if x)
    unknown = set(exclude) - set(FEATURES)
    if unknown:
        parser.error(f"unknown --exclude kinds {sorted(unknown)}; choose from {FEATURES}")

    if opts.replay is not None:
        report = check_seed(opts.replay, opts.inputs, exclude=exclude)
        if report is not None and report["kind"] == "unconverted":
            print(generate(opts.replay, exclude=exclude))
            print(f"seed {opts.replay}: unconverted: {report['reason']}")
            return 0
        if report is None:
            print(generate(opts.replay, exclude=exclude))
            print(f"seed {opts.replay}: no difference")
            return 0
        minimized = minimize(report["source"], report["inputs"], report["signature"]) if opts.minimize else None
        print(format_report(report, minimized))
        return 1

    start = time.time()
    seeds = range(opts.seed, opts.seed + opts.count)
    tasks = ((s, opts.inputs, opts.minimize, exclude) for s in seeds)
    failures = []
    unconverted = []
    by_signature = {}
    out = open(opts.out, "w") if opts.out else None
    done = 0

    def handle(seed, report):
        nonlocal done
        done += 1
        if report is not None and report["kind"] == "unconverted":
            unconverted.append(seed)
            return
        if report is not None:
            failures.append(seed)
            by_signature.setdefault(str(report["signature"]), []).append(seed)
            text = format_report(report, report.get("minimized"))
            if len(failures) <= opts.max_reports:
                print(text, flush=True)
            if out:
                out.write(text + "\n\n")
                out.flush()
        if done % 5000 == 0:
            print(f"... {done}/{opts.count} programs, {len(failures)} mismatches, "
                  f"{time.time() - start:.0f}s", file=sys.stderr, flush=True)

    run_tasks(_worker, tasks, handle, opts.jobs, chunksize=20)
    if out:
        out.close()
    print_groups("mismatch groups (signature: count, first seeds):", by_signature)
    elapsed = time.time() - start
    print(f"SUMMARY: {opts.count} programs (seeds {opts.seed}..{opts.seed + opts.count - 1}), "
          f"{opts.count - len(failures)} passed ({len(unconverted)} of them returned unconverted by to_graph), "
          f"{len(failures)} mismatched, {elapsed:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
