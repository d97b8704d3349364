"""What a traced graph took from outside its arguments, and the check, on
every call of the graph, that it is unchanged.

A trace reads Python state that is not an argument: globals and closure
variables, the items and attributes of the objects they hold, numpy arrays
among them (an array read eagerly, `G.sum()`, is folded into the graph; one
used with a symbolic value, `x * G`, is a constant of the graph). Eager code
reads that state on every call, so a graph is only right while it is as the
trace saw it. `CapturedState` records it at the end of a trace, as
`autograph.runtime.staging.places` walks it (the globals the functions
name, their cells, user modules' attributes, dicts, lists, sets, instances
of user classes, numpy arrays), and `changed()` says what differs now:

- a global, closure variable or module attribute bound to another object;
- an item or attribute of a recorded dict or object, or an item of a list,
  bound to another object (set, deleted or added);
- a numpy array of at most `places._ARRAY_LIMIT` elements whose shape,
  dtype or contents differ (written in place).

`autograph.function` traces again when something changed (jax.jit and
tf.function keep using the old graph). A trace that itself writes into
such an array in place is refused: the graph would not write it again.
Arrays of more elements than that limit are not compared (it would cost
their size on every call: the check takes about 0.8 ms per call for one
array of 2**20 float64 elements; a bitwise comparison with a kept copy,
which doubles their memory, measured 0.2 ms at 2**20, 2 ms at 2**22 and
8 ms at 2**24 elements): the trace logs a warning naming each writeable
one (`large`). Pass those as
arguments, or make them read-only (`a.flags.writeable = False`).
"""

import random
import types

import numpy as np

from autograph.runtime.errors import TracingError
from autograph.runtime.staging import places
from autograph.runtime.tracer import trees
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["CapturedState", "array_inputs", "check_no_leaks", "roots"]

_VALUES = (bool, int, float, complex, str, bytes, type(None))

_MISSING = object()


class CapturedState:
    """The state a trace read (see the module docstring). `changed()` gives
    the name of the first recorded place that is not as it was (`'G'`,
    `'config.scale'`, `"table['w']"`), or None: one generated function of
    `is` tests and byte comparisons, as it runs on every call of a graph."""

    __slots__ = ("arrays", "attributes", "cells", "changed", "items", "large", "lists", "names", "random", "sets")

    def __init__(self, functions, roots, inputs=(), skip=(), check=True):
        """`functions`: the traced function (and what it calls, found through
        its globals); `roots`: (name, object) pairs, the arguments that are
        not graph inputs; `inputs`: the ids of the arrays that are inputs;
        `skip`: functions whose state is not followed; `check`: compile
        `changed` (not needed for a record that is only compared with)."""
        recorded = places.Recorded(functions, (), skip)
        # Of the arguments, only the arrays in their attributes (the cache keys the objects by a
        # weak reference and their attributes, and keeps these arrays alive with the graph anyway).
        through_arguments = places.Recorded((), roots, skip) if roots else None
        seen = set()
        self.names = []
        for namespace, name, value in recorded.names:
            if (id(namespace), name) not in seen:
                seen.add((id(namespace), name))
                self.names.append((namespace, name, value))
        self.cells = [(cell, name, contents) for cell, name, contents in recorded.cells]
        self.items, self.attributes, self.lists, self.sets, self.arrays = [], [], [], [], []
        for key in recorded.order:
            kind, obj, name, snapshot = recorded.containers[key]
            if kind == "item":
                self.items.append((obj, name, snapshot))
            elif kind == "attr":
                self.attributes.append((obj, name, snapshot))
            elif kind == "list":
                self.lists.append((obj, name, tuple(snapshot)))
            elif kind == "set":
                self.sets.append((obj, name, snapshot))
            elif kind == "array" and id(obj) not in inputs:
                self.arrays.append((obj, name, obj.shape, obj.dtype, _contents(obj)))
        for key in through_arguments.order if through_arguments is not None else ():
            kind, obj, name, _ = through_arguments.containers[key]
            if kind == "array" and id(obj) not in inputs and key not in recorded.containers:
                self.arrays.append((obj, name, obj.shape, obj.dtype, _contents(obj)))
        # Writeable arrays of more than places._ARRAY_LIMIT elements: not compared (see the docstring).
        self.large = [(name, a.size) for r in (recorded, through_arguments) if r is not None
                      for a, name in r.large if id(a) not in inputs]
        self.changed = _compile(self) if check else None
        values = [(name, v) for _, name, v in self.names] + [(name, v) for _, name, v in self.cells]
        self.random = _random_states(values)

    def __bool__(self):
        return bool(self.names or self.cells or self.items or self.attributes or self.lists or self.sets
                    or self.arrays)

    def written_since(self, other):
        """The name of an array recorded in `other` (taken before the trace)
        whose contents this one (taken after it) records differently: the
        trace wrote into it in place."""
        before = {id(obj): contents for obj, _, _, _, contents in other.arrays}
        for obj, name, _, _, contents in self.arrays:
            if id(obj) in before and before[id(obj)] != contents:
                return name
        return None

    def drawn_since(self, other):
        """The name of a random number generator whose state moved between
        `other` (taken before the trace) and this one: the trace drew
        numbers from it, which the graph would keep as constants."""
        before = {id(obj): state for _, obj, state in other.random}
        for name, obj, state in self.random:
            if id(obj) in before and not _same_state(before[id(obj)], state):
                return name
        return None


#: Dicts and attribute sets of more keys than this are compared in a loop, not key by key.
_UNROLLED_KEYS = 16


def _compile(state):
    """`state.changed` as one generated function (the check runs on every call of a graph)."""
    namespace = {"_MISSING": _MISSING, "_differing": _differing, "_attributes_now": places._attributes_now,
                 "_cell_get": places._cell_get, "_contents": _contents}
    lines = []

    def bind(value):
        name = f"o{len(namespace)}"
        namespace[name] = value
        return name

    def test(condition, label):
        lines.append(f"    if {condition}:\n        return {bind(label)}")

    for holder, name, value in state.names:
        test(f"{bind(holder)}.get({name!r}, _MISSING) is not {bind(value)}", name)
    for cell, name, contents in state.cells:
        test(f"_cell_get({bind(cell)}) is not {bind(contents)}", name)
    for kind, entries in (("item", state.items), ("attr", state.attributes)):
        for obj, name, snapshot in entries:
            now = bind(obj) if kind == "item" else f"_attributes_now({bind(obj)})"
            fmt = f"{name}[{{!r}}]" if kind == "item" else f"{name}.{{}}"
            if len(snapshot) > _UNROLLED_KEYS or kind == "attr" and places._slot_names(type(obj)):
                lines.append(f"    key = _differing({now}, {bind(snapshot)})\n"
                             f"    if key is not _MISSING:\n        return {bind(fmt)}.format(key)")
                continue
            d = bind(obj) if kind == "item" else bind(object.__getattribute__(obj, "__dict__"))
            conditions = [f"len({d}) != {len(snapshot)}"] + [
                f"{d}.get({bind(k)}, _MISSING) is not {bind(v)}" for k, v in snapshot.items()]
            lines.append(f"    if {' or '.join(conditions)}:\n"
                         f"        return {bind(fmt)}.format(_differing({d}, {bind(snapshot)}))")
    for obj, name, snapshot in state.lists:
        o = bind(obj)
        conditions = [f"len({o}) != {len(snapshot)}"] + [
            f"{o}[{i}] is not {bind(v)}" for i, v in enumerate(snapshot[:_UNROLLED_KEYS])]
        if len(snapshot) > _UNROLLED_KEYS:
            conditions.append(f"any(a is not b for a, b in zip({o}, {bind(snapshot)}))")
        test(" or ".join(conditions), name)
    for obj, name, snapshot in state.sets:
        test(f"{bind(obj)} != {bind(snapshot)}", name)
    for obj, name, shape, dtype, contents in state.arrays:
        a = bind(obj)
        test(f"{a}.shape != {bind(shape)} or {a}.dtype is not {bind(dtype)} and {a}.dtype != {bind(dtype)} "
             f"or _contents({a}) != {bind(contents)}", name)
    source = "def changed():\n" + "\n".join(lines) + "\n    return None\n"
    exec(compile(source, "<autograph captured state>", "exec"), namespace)  # noqa: S102 - our own code
    return namespace["changed"]


def _random_states(values):
    """[(name, generator, its state)] for numpy's and Python's global random
    generators and the generators among `values` ((name, value) pairs)."""
    found = [("numpy.random", np.random.mtrand._rand, None), ("random", random._inst, None)]
    found += [(name, v, None) for name, v in values
              if isinstance(v, (np.random.Generator, np.random.RandomState, random.Random))]
    return [(name, g, _state(g)) for name, g, _ in found]


def _state(generator):
    if isinstance(generator, np.random.Generator):
        return generator.bit_generator.state
    if isinstance(generator, np.random.RandomState):
        return generator.get_state(legacy=False)
    return generator.getstate()


def _same_state(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _contents(array):
    """The bytes of `array` (in C order): equal bytes, equal contents."""
    return array.tobytes() if array.dtype != object else tuple(array.ravel().tolist())


def _differing(now, snapshot):
    """A key whose value in `now` is not the one in `snapshot`, or _MISSING."""
    if len(now) != len(snapshot):
        return next((k for k in now if k not in snapshot), next((k for k in snapshot if k not in now), None))
    for k, v in snapshot.items():
        if now.get(k, _MISSING) is not v:
            return k
    return _MISSING


def array_inputs(leaves):
    """The ids of the graph's input arrays, which the state does not check."""
    return {id(leaf) for leaf in leaves if isinstance(leaf, np.ndarray)}


def roots(name, python_function, args, kwargs, arg_names):
    """(functions, roots) of a traced call for CapturedState: the function
    itself (a method's function, with its object a root; any other callable
    a root), and the objects among the arguments (not graph inputs)."""
    found = []
    for arg_name, value in list(zip(arg_names, args)) + list(kwargs.items()):
        found.extend((arg_name, leaf) for leaf in trees.leaves(value)
                     if not isinstance(leaf, (np.ndarray, np.generic)) and type(leaf) not in _VALUES)
    fn = python_function
    if type(fn) is types.MethodType:
        found.append(("self", fn.__self__))
        fn = fn.__func__
    if type(fn) is not types.FunctionType:
        found.append((name, fn))   # a callable object: its attributes
        fn = None
    return (fn,), found


def check_no_leaks(name, functions, roots):
    """Raises if the trace left a symbolic value in an object that outlives
    it (a global, a closure's variable, an argument's attribute): the
    graph cannot write into Python objects when it runs, so every later
    call would leave there what the trace stored, where eager code stores
    each call's value."""
    found = places.leaks(functions, roots, lambda v: type(v) is SymbolicArray)
    if not found:
        return
    label, value = found[0]
    where = f", computed at {value.node.loc[0]}:{value.node.loc[1]}" if value.node.loc else ""
    raise TracingError(
        f"{name} stored a value computed by the graph in '{label}'{where}, which outlives the call "
        "(a global, a closure's variable or an argument's attribute or item): the traced graph cannot "
        "write into Python objects when it runs, so later calls would not update it. Return the value "
        "instead and store it after the call")
