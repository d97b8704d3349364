"""A `for` over a long Python `range` whose body only computes, staged as
one loop while a backend traces, instead of unrolled.

Converted code asks `unrolled(iterable)` before it runs such a loop as
Python (converters/static_ranges.py says which loops: the body reads its
loop variable only as an index, stores only into names, and calls only
module-level functions and array methods). A backend that traces stages
ranges from a trip count on (`Backend.stages_range`: JAX from
`RANGE_LOOP_MIN` iterations), and `run` then:

  1. resolves the callees the converter listed and accepts only functions
     of JAX (not `jax.debug`), `math` and Python's
     builtins that have no side effects: one traced iteration then does
     what each Python iteration does;
  2. runs the first iteration as Python, as the unconverted loop does;
  3. checks that the loop state is now all the backend's arrays (a Python
     number that stays one, a list that grows, keeps the loop in Python)
     and that every item of the range is in bounds for each axis that the
     loop variable indexes (a traced index would read a clamped row where
     Python raises `IndexError`);
  4. stages the remaining iterations as one loop (`Backend.for_loop` over
     the rest of the range, as `set_loop_options(unroll=False)` does).

Where a step fails (staging raised too), the rest of the loop runs as
Python from the state after the first iteration: what the attempt traced
is unused.
"""

import builtins

from autograph.runtime.backends import backend_of, registered
from autograph.runtime.calls import bytecode_traced

__all__ = ["run", "unrolled"]

# Builtins that compute and change nothing (not print, open, setattr, ...).
_PURE_BUILTINS = frozenset({
    abs, all, any, bool, complex, divmod, enumerate, float, int, isinstance, len, max, min, pow, range,
    reversed, round, sum, tuple, zip,
})
# Not numpy nor operator: `np.add(a, b, out=buf)`, `np.copyto`, `operator.setitem`
# change an array in place, which one traced iteration would do once.
_MODULES = ("jax", "jaxlib", "math")


def _stager(n):
    for backend in registered():
        if backend.stages_range(n):
            return backend
    return None


def unrolled(iterable):
    """True unless `iterable` is a range that a tracing backend stages. (A
    bytecode tracer, dynamo, unrolls Python loops itself: no backend is
    asked while it runs, as it would trace into the backend's library.)"""
    return type(iterable) is not range or bytecode_traced() or _stager(len(iterable)) is None


def _pure(f):
    try:
        if f in _PURE_BUILTINS:
            return True
    except TypeError:  # unhashable
        return False
    module = getattr(f, "__module__", None) or ""
    return module.split(".")[0] in _MODULES and not module.startswith("jax.debug")


def _resolve(dotted, namespace):
    root, *rest = dotted.split(".")
    value = namespace[root] if root in namespace else getattr(builtins, root, None)
    for part in rest:
        value = getattr(value, part, None)
    return value


def _values(body, state, names):
    """The values the loop body sees by name: its state and what it reads
    from the enclosing function."""
    found = dict(zip(body.__code__.co_freevars, body.__closure__ or ()))
    values = {}
    for name, cell in found.items():
        try:
            values[name] = cell.cell_contents
        except ValueError:
            pass
    values.update(zip(names, state))
    return values


def _in_bounds(iterable, values, indexed):
    lo, hi = min(iterable[0], iterable[-1]), max(iterable[0], iterable[-1])
    for name, axis in indexed:
        value = values.get(name)
        shape = getattr(value, "shape", None)
        if shape is None:
            if type(value) not in (list, tuple) or axis != 0:
                return False
            shape = (len(value),)
        if axis >= len(shape) or type(shape[axis]) is not int or not -shape[axis] <= lo <= hi < shape[axis]:
            return False
    return True


def run(iterable, body, state, names, stageable, unpack):
    """The loop `for item in iterable: state = body(item, *state)`, which the
    converter found stageable (`stageable`: (callees, indexed)), while a
    backend may stage it: (state, rest), where `rest` (a range) is what is
    left to run as Python; `unpack(result)` is a body's result as a tuple."""
    backend = _stager(len(iterable))
    callees, indexed = stageable
    namespace = body.__globals__
    if backend is None or not builtins.all(_pure(_resolve(c, namespace)) for c in callees):
        return state, iterable
    state, rest = unpack(body(iterable[0], *state)), iterable[1:]
    leaves = [leaf for value in state for leaf in backend.flatten(value)[0]]
    if not rest or not leaves or builtins.any(backend_of(leaf) is not backend for leaf in leaves) \
            or not _in_bounds(iterable, _values(body, state, names), indexed):
        return state, rest
    try:
        staged = backend.for_loop(rest, None, body, state, names, {"unroll": False})
    except Exception:
        return state, rest
    if staged is NotImplemented:
        return state, rest
    return tuple(staged), range(0)
