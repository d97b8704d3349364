"""Traced differential fuzzer: random numeric functions, eager numpy vs
`autograph.function` (and `jax.jit(autograph.to_graph(f))` when jax is
installed).

    python -m tools.traced_fuzz --count 2000 --seed 0 --jobs 2
    python -m tools.traced_fuzz --replay 1234        # one seed in full
    python -m tools.traced_fuzz --replay 1234 --minimize
    python -m tools.traced_fuzz --exclude loop_in_python_loop  # leave a feature out

Each program `tools.numeric_generator.generate(seed)` is run on a few inputs
of one signature (float64 arrays of shape SHAPE, np.float64 scalars):

  * eagerly, as written (the expected results);
  * converted, `autograph.to_graph(f)`, on the same concrete arrays;
  * through `autograph.function(f)`: the first call traces, the later calls
    (different values, same signature) must run the cached graph
    (`trace_count` stays 1);
  * with `--jax` (default: when jax imports), `jax.jit(to_graph(f))` on jax
    arrays with x64 enabled;
  * with `--torch`, `torch.compile(to_graph(f), fullgraph=True)` and
    non-strict `torch.export` on float64 tensors, `np` bound to
    tools/torch_numpy.py, against the same program run eagerly on them.

Results must have equal structure, shapes and dtypes and be `np.allclose`
(NaN equal to NaN); the arguments must not be modified. Outcomes:

  mismatch     a result differs (or one side raised and the other did not)
  crash        an unexpected exception while converting, tracing or running
  limitation   the tracer raised one of its documented errors for a
               construct it does not stage (LIMITATION_ERRORS); counted
               apart, not a failure
  invalid      the eager run itself raised or timed out (a generator bug)
  jax          a jax failure or difference (only with --jax; counted apart)
  torch        torch.compile or torch.export raised (only with --torch;
               counted apart: loud)
  torch-mismatch  a result or the arguments differ under either (silent)

The last line is a SUMMARY.
"""

import argparse
import ast
import copy
import os
import re
import sys
import time
import traceback
import warnings

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from tools.fuzz import print_groups, run_tasks
from tools.numeric_generator import FEATURES, generate, inputs_for
from tools.program_generator import Timeout, _time_limit, compile_program

__all__ = ["LIMITATION_ERRORS", "check_seed", "check_source", "format_report", "main"]

#: Tracer errors documented as limitations (README "Traced execution /
#: Errors"): a program that raises one of these is counted as a limitation,
#: not as a crash.
LIMITATION_ERRORS = ("BranchMismatchError", "LoopStateError", "UndefinedOutputError",
                     "UnsupportedFunctionError")

RTOL, ATOL = 1e-7, 1e-9


def _limitation_types():
    from autograph.runtime import tracer

    return tuple(getattr(tracer, name) for name in LIMITATION_ERRORS)


def _compare(expected, actual, path="result"):
    """Differences between two results (nested tuples of arrays/scalars)."""
    if isinstance(expected, (tuple, list)) or isinstance(actual, (tuple, list)):
        if type(expected) is not type(actual) or len(expected) != len(actual):
            return [f"{path}: structure differs: expected {_short(expected)}, got {_short(actual)}"]
        diffs = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            diffs.extend(_compare(e, a, f"{path}[{i}]"))
        return diffs
    try:
        e, a = np.asarray(expected), np.asarray(actual)
    except Exception as exc:  # noqa: BLE001
        return [f"{path}: not an array: {type(actual).__name__} ({exc})"]
    if e.shape != a.shape or e.dtype != a.dtype:
        return [(f"{path}: expected {e.dtype}{list(e.shape)}, got {a.dtype}{list(a.shape)} "
                 f"(expected {_short(expected)}, got {_short(actual)})")]
    if e.dtype.kind in "fc":
        ok = np.allclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        ok = np.array_equal(a, e)
    if not ok:
        return [f"{path}: expected {_short(expected)}, got {_short(actual)}"]
    return []


def _short(value, limit=600):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _run(fn, args, timeout, cpu=False):
    """Calls fn on copies of args; returns (result, exception, args after).
    With `cpu`, `timeout` is of CPU time (program_generator._time_limit)."""
    args = copy.deepcopy(tuple(args))
    try:
        with _time_limit(timeout, cpu), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(*args)
    except Timeout as e:
        return None, e, args
    except Exception as e:  # noqa: BLE001
        return None, e, args
    return result, None, args


def _exc_text(e):
    return f"{type(e).__name__}: {e}"


def _args_changed(before, after):
    return any(not np.array_equal(np.asarray(b), np.asarray(a), equal_nan=True)
               for b, a in zip(before, after))


def _jax_available():
    try:
        import jax  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


def _jax_check(source, filename, inputs, expected, timeout):
    """jax.jit(to_graph(f)) on jax arrays, with `np` in the source bound to
    jax.numpy; returns a list of differences."""
    import jax
    import jax.numpy as jnp

    import autograph

    jax.config.update("jax_enable_x64", True)
    try:
        fn = compile_program(source.replace("import numpy as np", "import jax.numpy as np", 1),
                             filename)["f"]
        jitted = jax.jit(autograph.to_graph(fn))
    except Exception as e:  # noqa: BLE001
        return [f"jax.jit(to_graph(f)): {_exc_text(e)}"]
    diffs = []
    for args, exp in zip(inputs, expected):
        jargs = tuple(jnp.asarray(a) for a in args)
        result, exc, _ = _run(jitted, jargs, timeout)
        if exc is not None:
            diffs.append(f"jax f{_short(args, 200)}: {_exc_text(exc)}")
            break
        result = jax.tree_util.tree_map(np.asarray, result)
        diffs.extend(f"jax {d}" for d in _compare(exp, result))
    return diffs


def _torch_check(source, filename, inputs, timeout, budget=120.0):
    """`torch.compile(to_graph(f), fullgraph=True)` (dynamo's graph run as it
    is) and the program that non-strict `torch.export` gives, on float64
    tensors, against `f` run eagerly on them, with `np` in the source bound to
    tools/torch_numpy.py; returns (torch's errors, silent differences: results,
    or the arguments changed otherwise). Compiling (the first call) and
    exporting may take `budget` seconds of CPU time each (which a loaded
    machine does not stretch): a program that takes longer counts as an
    error of torch's."""
    import torch

    import autograph

    source = source.replace("import numpy as np", "import tools.torch_numpy as np", 1).replace(".copy()", ".clone()")
    try:
        fn = compile_program(source, filename)["f"]
        converted = autograph.to_graph(fn)
    except Exception as e:  # noqa: BLE001
        return [f"to_graph(f): {_exc_text(e)}"], []

    class Module(torch.nn.Module):
        def forward(self, *args):
            return converted(*args)

    def compiled():
        torch._dynamo.reset()
        return torch.compile(converted, fullgraph=True, backend="eager")

    def exported():
        return torch.export.export(Module(), tuple(torch.tensor(a) for a in inputs[0]), strict=False).module()

    def numpy(value):
        return torch.utils._pytree.tree_map(lambda v: v.numpy() if isinstance(v, torch.Tensor) else v, value)
    errors, diffs = [], []
    for label, make in (("torch.compile", compiled), ("torch.export", exported)):
        try:
            with _time_limit(budget, cpu=True):
                run = make()
        except Exception as e:  # noqa: BLE001
            errors.append(f"{label}: {_exc_text(e)}")
            continue
        for k, args in enumerate(inputs):
            targs = tuple(torch.tensor(a) for a in args)
            expected, exc, changed = _run(fn, targs, timeout)
            if exc is not None:
                continue  # torch's semantics differ from numpy's here (the numpy run did not raise)
            # The first call compiles: dynamo's time, not the program's.
            result, exc, after = _run(run, targs, timeout) if k else _run(run, targs, max(timeout, budget), cpu=True)
            if exc is not None:
                errors.append(f"{label} f{_short(args, 200)}: {_exc_text(exc)}")
                break
            # The scalar `s` is a 0-d tensor here, which `s *= c` changes in
            # place (eager) or on a staged branch's copy (docs/pytorch.md): only
            # the arrays are compared, which the programs never change in place.
            arrays = [j for j, a in enumerate(args) if isinstance(a, np.ndarray)]
            if _args_changed([numpy(changed[j]) for j in arrays], [numpy(after[j]) for j in arrays]):
                diffs.append(f"{label} f{_short(args, 200)} changed its arguments otherwise than eager torch does")
            fake = [v for v in torch.utils._pytree.tree_leaves(result) if isinstance(v, torch.Tensor)
                    and type(v) is not torch.Tensor]
            if fake:
                errors.append(f"{label} f{_short(args, 200)} returned a {type(fake[0]).__name__}")
                break
            diffs.extend(f"{label} {d}" for d in _compare(numpy(expected), numpy(result)))
    return errors, diffs


def check_source(source, filename, inputs, timeout=5.0, use_jax=False, use_torch=False, torch_budget=120.0):
    """Runs `f` from `source` eagerly, converted and traced on `inputs`.

    Returns None when all agree, else a dict with `kind` ('mismatch',
    'crash', 'limitation', 'invalid' or 'jax'), `stage`, `error` (one line)
    and `diffs` (text)."""
    import autograph

    namespace = compile_program(source, filename)
    fn = namespace["f"]

    expected = []
    for args in inputs:
        result, exc, after = _run(fn, args, timeout)
        if exc is not None:
            return {"kind": "invalid", "stage": "eager", "error": _exc_text(exc),
                    "diffs": [traceback.format_exception(exc, limit=-3)[-1]]}
        if _args_changed(args, after):
            return {"kind": "invalid", "stage": "eager", "error": "the eager run modified its arguments",
                    "diffs": []}
        expected.append(result)

    def failure(kind, stage, exc=None, diffs=()):
        report = {"kind": kind, "stage": stage, "error": _exc_text(exc) if exc else None,
                  "diffs": list(diffs)}
        if exc is not None and kind == "crash":
            report["diffs"].append("".join(traceback.format_exception(exc, limit=-8)))
        return report

    # Converted, on concrete arrays (no tracing).
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = autograph.to_graph(fn)
    except Exception as e:  # noqa: BLE001
        return failure("crash", "to_graph", e)
    for args, exp in zip(inputs, expected):
        result, exc, after = _run(converted, args, timeout)
        if exc is not None:
            return failure("crash", "converted", exc, [f"converted f{_short(args, 300)}"])
        d = _compare(exp, result)
        if d:
            report = failure("mismatch", "converted", None, [f"converted f{_short(args, 300)}:"] + d)
            report["expected_type"] = _type_of(exp)
            return report

    # Traced: first call traces, later ones run the cached graph.
    traced = autograph.function(fn)
    limitation = _limitation_types()
    for n, (args, exp) in enumerate(zip(inputs, expected)):
        result, exc, after = _run(traced, args, timeout)
        stage = "trace" if n == 0 else "cached graph"
        if exc is not None:
            if n == 0 and isinstance(exc, limitation):
                return failure("limitation", stage, exc)
            return failure("crash", stage, exc, [f"{stage} f{_short(args, 300)}"])
        if _args_changed(args, after):
            return failure("mismatch", stage, None,
                           [f"{stage} f{_short(args, 300)} modified its arguments: {_short(after)}"])
        d = _compare(exp, result)
        if d:
            report = failure("mismatch", stage, None, [f"{stage} f{_short(args, 300)}:"] + d)
            report["expected_type"] = _type_of(exp)
            return report
    if traced.trace_count != 1:
        return failure("mismatch", "cache", None,
                       [f"{len(inputs)} calls of one signature traced {traced.trace_count} times"])

    if use_jax:
        d = _jax_check(source, filename, inputs, expected, timeout)
        if d:
            return failure("jax", "jax", None, d)
    if use_torch:
        errors, d = _torch_check(source, filename, inputs, timeout, torch_budget)
        if d:
            return failure("torch-mismatch", "torch", None, d)
        if errors:
            return failure("torch", "torch", None, errors)
    return None


def check_seed(seed, n_inputs=3, timeout=5.0, use_jax=False, exclude=(), use_torch=False, torch_budget=120.0):
    """Generates program `seed` and checks it; returns None or a report dict.
    With `use_torch`, compiling and exporting may take `torch_budget` seconds each."""
    source = generate(seed, exclude=exclude)
    inputs = inputs_for(seed, n_inputs)
    try:
        report = check_source(source, f"<numeric-{seed}>", inputs, timeout, use_jax, use_torch, torch_budget)
    except Exception:  # noqa: BLE001 - a harness crash is reported, not hidden
        report = {"kind": "crash", "stage": "harness", "error": "harness",
                  "diffs": [traceback.format_exc()]}
    if report is None:
        return None
    report.update(seed=seed, source=source, inputs=inputs)
    return report


def _type_of(value):
    if isinstance(value, (tuple, list)):
        return tuple(_type_of(v) for v in value)
    a = np.asarray(value)
    return (a.dtype.str, a.shape)


_TORCH_ERROR = re.compile(r"^(torch\.\w+) .*?\): (\w+)(?:: (\w+))?")


def _signature(report):
    error = report.get("error") or ""
    if report["kind"] == "torch" and report["diffs"]:
        # Which of torch.compile/export raised, and the error's type (and the
        # one it wraps: "InternalTorchDynamoError: RecursionError").
        found = _TORCH_ERROR.match(str(report["diffs"][0]))
        error = " ".join(g for g in found.groups() if g) if found else str(report["diffs"][0])[:60]
    return (report["kind"], report["stage"], error.split(":", 1)[0], report.get("expected_type"))


_COUNTER = re.compile(r"^\s*(w\d+) = 0$", re.MULTILINE)


def _counters_kept(source):
    """Every `while` counter `wN = 0` still has its `wN += 1` (loops end)."""
    return all(f"{w} += 1" in source for w in _COUNTER.findall(source))


def minimize(source, inputs, signature, timeout=1.0, max_rounds=200, use_jax=False, use_torch=False):
    """Greedy reduction of `source` that keeps a report of the same
    signature (kind, stage, error type) on some input, with the same
    backends as the run that found it. Returns (source, inputs)."""
    from tools.fuzz import shrink

    counter = [0]

    def still_fails(src, ins):
        counter[0] += 1
        if not _counters_kept(src):
            return False
        func = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))
        if not isinstance(func.body[-1], ast.Return) or func.body[-1].value is None:
            return False  # falling off the end (None) is another program
        try:
            report = check_source(src, f"<minimize-{os.getpid()}-{counter[0]}>", ins, timeout, use_jax, use_torch)
        except Exception:  # noqa: BLE001
            return False
        return report is not None and _signature(report) == signature

    return shrink(source, inputs, still_fails, max_rounds)


def format_report(report):
    lines = [f"=== {report['kind'].upper()} seed={report['seed']} stage={report['stage']}"
             + (f": {report['error']}" if report.get("error") else "")]
    lines.extend(str(d).rstrip() for d in report["diffs"])
    lines.append("--- source:")
    lines.append(report["source"].rstrip())
    return "\n".join(lines)


def _group_key(report):
    error = report.get("error") or ""
    head = error.split(":", 1)[0]
    if report["kind"] == "limitation":
        # The error type and the construct it names ("an `if`", "a `while`").
        for what in ("`if`", "`while`", "`for`", "structure"):
            if what in error:
                return f"{head} ({what})"
    if report["kind"] == "torch":
        found = _TORCH_ERROR.match(str(report["diffs"][0])) if report["diffs"] else None
        return f"torch/{' '.join(found.groups()[:2]) if found else 'error'}"  # the mode that raised, the error type
    return f"{report['kind']}/{report['stage']}/{head or 'difference'}"


TORCH_MODES = ("torch.compile", "torch.export")


def torch_modes_passed(report):
    """The torch modes (TORCH_MODES) in which a program checked with
    `use_torch` ran and agreed with eager torch: all for a program that
    passed; for a report of kind "torch", those its errors do not name (a
    silent difference, or a failure before torch ran, counts against both)."""
    if report is None:
        return set(TORCH_MODES)
    if report["kind"] != "torch":
        return set()
    return {mode for mode in TORCH_MODES if not any(str(d).startswith(mode) for d in report["diffs"])}


def _publish_torch_rates(opts, modes, groups):
    """The rate of each torch mode and the groups of refusals, as a table in
    docs/pytorch.md (benchmarks/tables.py writes it between its markers)."""
    import torch

    from benchmarks.tables import PAGE, markdown, publish

    rows = [[mode, f"{n} of {opts.count}", f"{100 * n / opts.count:.0f}%"] for mode, n in modes.items()]
    lines = [f"`python -m tools.traced_fuzz --torch --seed {opts.seed} --count {opts.count} --write-docs` "
             f"(torch {torch.__version__.split('+')[0]}): programs that run and agree with eager torch.", "",
             markdown(["mode", "ran and agreed", "rate"], rows, "lrr"), ""]
    if groups:
        lines.append("Programs that did not, by kind/stage/error (seeds):")
        lines.append("")
        lines += [f"- {key}: {len(seeds)} ({', '.join(map(str, sorted(seeds)[:6]))})"
                  for key, seeds in sorted(groups.items(), key=lambda kv: -len(kv[1]))]
    publish("torch-random-programs", "\n".join(lines), page=os.path.join(os.path.dirname(PAGE), "pytorch.md"),
            also=())


def _worker(args):
    seed, n_inputs, use_jax, exclude, use_torch = args
    return seed, check_seed(seed, n_inputs, use_jax=use_jax, exclude=exclude, use_torch=use_torch)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--inputs", type=int, default=3, help="inputs per program (same signature)")
    parser.add_argument("--max-reports", type=int, default=30, help="print at most this many in full")
    parser.add_argument("--show-limitations", action="store_true",
                        help="also print programs that hit documented limitations")
    parser.add_argument("--replay", type=int, help="print source and result for one seed")
    parser.add_argument("--jax", dest="jax", action="store_true", default=None,
                        help="also run jax.jit(to_graph(f)) (default: when jax is installed)")
    parser.add_argument("--no-jax", dest="jax", action="store_false")
    parser.add_argument("--torch", action="store_true",
                        help="also run torch.compile(to_graph(f), fullgraph=True) on torch tensors")
    parser.add_argument("--exclude", default="",
                        help="comma-separated program features to leave out "
                             "(from tools.numeric_generator.FEATURES), e.g. loop_in_python_loop")
    parser.add_argument("--minimize", action="store_true", help="with --replay: shrink the program")
    parser.add_argument("--out", help="also write full reports to this file")
    parser.add_argument("--write-docs", action="store_true",
                        help="with --torch: write the rates and refusal groups into docs/pytorch.md")
    opts = parser.parse_args(argv)
    use_jax = _jax_available() if opts.jax is None else opts.jax
    exclude = tuple(x for x in opts.exclude.split(",") if x)
    unknown = set(exclude) - set(FEATURES)
    if unknown:
        parser.error(f"unknown --exclude features {sorted(unknown)}; choose from {FEATURES}")

    if opts.replay is not None:
        report = check_seed(opts.replay, opts.inputs, use_jax=use_jax, exclude=exclude, use_torch=opts.torch)
        if report is None:
            print(generate(opts.replay, exclude=exclude))
            print(f"inputs: {inputs_for(opts.replay, opts.inputs)}")
            print(f"seed {opts.replay}: no difference")
            return 0
        print(format_report(report))
        if opts.minimize:
            src, ins = minimize(report["source"], report["inputs"], _signature(report),
                                timeout=10.0 if opts.torch else 1.0, use_jax=use_jax, use_torch=opts.torch)
            print(f"--- minimized (inputs {ins}):")
            print(src.rstrip())
        return 1 if report["kind"] in ("mismatch", "crash", "torch-mismatch") else 0

    start = time.time()
    tasks = ((s, opts.inputs, use_jax, exclude, opts.torch) for s in range(opts.seed, opts.seed + opts.count))
    counts = {k: 0 for k in ("passed", "mismatch", "crash", "limitation", "invalid", "jax", "torch",
                             "torch-mismatch")}
    groups = {}
    shown = 0
    out = open(opts.out, "w") if opts.out else None  # noqa: SIM115 - closed below

    modes = dict.fromkeys(TORCH_MODES, 0)

    def handle(seed, report):
        nonlocal shown
        kind = "passed" if report is None else report["kind"]
        counts[kind] += 1
        for mode in torch_modes_passed(report) if opts.torch else ():
            modes[mode] += 1
        if report is None:
            return
        groups.setdefault(_group_key(report), []).append(seed)
        text = format_report(report)
        if (kind != "limitation" or opts.show_limitations) and shown < opts.max_reports:
            shown += 1
            print(text + "\n", flush=True)
        if out:
            out.write(text + "\n\n")
            out.flush()

    run_tasks(_worker, tasks, handle, opts.jobs, chunksize=10)
    if out:
        out.close()
    print_groups("groups (kind/stage/error: count, first seeds):", groups)
    elapsed = time.time() - start
    print(f"SUMMARY: {opts.count} programs (seeds {opts.seed}..{opts.seed + opts.count - 1}), "
          f"{counts['passed']} passed, {counts['mismatch']} mismatched, {counts['crash']} crashed, "
          f"{counts['limitation']} hit documented limitations, {counts['invalid']} invalid, "
          + (f"{counts['jax']} jax failures, " if use_jax else "jax not run, ")
          + (f"{counts['torch']} raised under torch, {counts['torch-mismatch']} differed under it, "
             if opts.torch else "torch not run, ")
          + f"{elapsed:.1f}s")
    if opts.torch and opts.write_docs:
        _publish_torch_rates(opts, modes, groups)
    if opts.torch:
        print("TORCH: " + ", ".join(f"{mode} ran and agreed on {n} of {opts.count} ({100 * n / opts.count:.0f}%)"
                                    for mode, n in modes.items()))
    return 1 if counts["mismatch"] or counts["crash"] or counts["torch-mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
