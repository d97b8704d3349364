"""What the converter tests share: a side-effect log, running a function and
recording what it returns, raises, prints and logs, and the function that
the text `to_code` shows defines."""

import contextlib
import copy
import io

import autograph
from autograph import conversion
from autograph.conversion import is_generated
from tools.program_generator import MODES, running

LOG = []


def log(value):
    LOG.append(value)
    return value


def observe(fn, args):
    del LOG[:]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            outcome = ("returned", fn(*copy.deepcopy(args)))
        except Exception as error:  # noqa: BLE001
            outcome = ("raised", type(error), str(error))
    return outcome, out.getvalue(), list(LOG)


_RUNTIME_ATTRIBUTES = set(autograph.runtime.__all__)


def from_source(fn):
    """The function defined by the text `autograph.to_code(fn)` shows, run
    as it reads (the compiled conversion may add Python fast paths)."""
    import ast
    import re

    code = autograph.to_code(fn)
    namespace = dict(fn.__globals__)
    for node in ast.walk(ast.parse(code)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.attr in _RUNTIME_ATTRIBUTES and re.fullmatch(r"ag_+\d*", node.value.id)):
            namespace[node.value.id] = autograph.runtime
    exec(compile(code, f"<to_code of {fn.__qualname__}>", "exec"), namespace)
    return namespace[fn.__name__]


def assert_same_behaviour(fn, inputs):
    """The converted function, and the code `to_code` shows, behave as `fn`."""
    converted = autograph.to_graph(fn)
    assert is_generated(converted.__code__), f"{fn.__name__} was not converted"
    shown = from_source(fn)
    for args in inputs:
        expected = observe(fn, args)
        for mode, as_written in MODES:
            with running(as_written):
                assert observe(converted, args) == expected, f"to_graph ({mode}): {fn.__name__}{args!r}"
        assert observe(shown, args) == expected, f"to_code text: {fn.__name__}{args!r}"


def lines_of(fn):
    return [line.strip() for line in autograph.to_code(fn).splitlines()]


def hooked_lines_of(fn):
    """The lines of `fn`'s converted tree with the runtime hooks of
    item_updates and item_reads (`ag__.setitem`, `ag__.iadd`, `ag__.getitem`),
    which `to_code` shows as the statements they stand for."""
    tree = conversion._trees(fn)[0]
    return [line.strip() for line in conversion._unparse(tree).splitlines()]
