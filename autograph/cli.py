"""Command line: `python -m autograph to-code path/to/file.py:function`.

Prints the generated code of a function defined in a file (`--diff` prints a
unified diff against the original source instead; `--inlined` prints the
code that actually runs, after each operator's Python meaning is inlined). The function is found by
its (possibly dotted) name after the file is imported as a module named
after it. Errors print one line and exit with status 2.
"""

import argparse
import difflib
import importlib.util
import inspect
import os
import sys

__all__ = ["main"]


class _Failure(Exception):
    pass


def _load(spec):
    path, _, qualname = spec.rpartition(":")
    if not path or not qualname:
        raise _Failure(f"expected FILE.py:FUNCTION, got {spec!r}")
    if not os.path.isfile(path):
        raise _Failure(f"no such file: {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules.setdefault(name, module)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as error:
        raise _Failure(f"{path}:{error.lineno}: syntax error: {error.msg}") from None
    except Exception as error:  # the user's module failed while importing
        raise _Failure(f"importing {path} raised {type(error).__name__}: {error}") from None
    finally:
        sys.path.pop(0)
    target = module
    for part in qualname.split("."):
        if not hasattr(target, part):
            raise _Failure(f"{path} defines no function {qualname!r}")
        target = getattr(target, part)
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograph",
                                     description="Show the code autograph generates for a function.")
    commands = parser.add_subparsers(dest="command", required=True)
    to_code = commands.add_parser("to-code", help="print the generated code of FILE.py:FUNCTION")
    to_code.add_argument("target", metavar="FILE.py:FUNCTION")
    to_code.add_argument("--diff", action="store_true", help="print a unified diff against the original")
    to_code.add_argument("--inlined", action="store_true",
                         help="print the code that runs: each operator inlined for Python values")
    to_code.add_argument("--no-recursive", action="store_true", help="do not route calls through the call hook")
    args = parser.parse_args(argv)

    import autograph

    try:
        function = _load(args.target)
        if args.inlined:
            from autograph import api
            generated = api.inlined_code(function)
        else:
            generated = autograph.to_code(function, recursive=not args.no_recursive)
        if args.diff:
            import textwrap
            original = textwrap.dedent(inspect.getsource(function))
            sys.stdout.writelines(difflib.unified_diff(
                original.splitlines(True), generated.splitlines(True),
                fromfile=f"{args.target} (original)", tofile=f"{args.target} (generated)"))
        else:
            sys.stdout.write(generated)
    except (_Failure, autograph.ConversionError, TypeError) as error:
        print(f"autograph: error: {error}", file=sys.stderr)
        return 2
    return 0
