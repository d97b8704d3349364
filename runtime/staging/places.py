"""What a staged branch or loop body changes in place, made explicit state.

Generated code passes a block's variables as state, but a block can also
change things that are not its variables: a variable captured by a nested
function (the block writes it through `nonlocal`), an item of a dict or a
list (`x["b"] = 1`), an attribute of an object (`v.assign_add(1)` setting
`v.value`). Python runs one branch, or each iteration, on the same objects;
a tracer that runs both branches, or the body once for all iterations, must
not. These are "places" (TensorFlow's activity analysis calls the items and
attributes "composite names"), and when a block is staged they travel as
state:

    cond:  each branch runs on the places as they were before the `if` (they
           are restored after it), returns what it left in every place the
           branches change, and the backend merges those values like any
           output; the merged values are then written into the places.
    loop:  the places the body changes are loop variables: the body (and the
           test) see the loop's value in them, and the final value is
           written into them after the loop.

Which places a block changes is learnt by running it: the objects reachable
from the block's state, from the cells of its function and from the globals
it names (dicts, lists, sets, tuples, numpy arrays, instances of user
classes) are recorded before it runs and compared after. When a run finds a
place the staging did not carry yet, the statement is staged again with it
(`More`): the block's Python side effects then run again while tracing.

A dict or list loop variable that the body changes in place travels as
itself, its items as places. A variable or place unbound before a loop that
the body binds is loop output, typed by its first value; where the loop ran
zero times it is unbound, which an assertion checks at run time.

Not seen: objects without a `__dict__` (`__slots__`, C types other than the
containers above), objects of library modules (numpy, jax, torch), numpy
arrays of more than 2**20 elements, and what functions the block calls
change in objects the block cannot reach.

Nothing of this runs for Python values: it is for staged statements only.
"""

import contextlib
import dis
import types
import weakref

import numpy as np
from autograph.runtime import calls
from autograph.runtime.backends import backend_of, unchanged
from autograph.runtime.errors import TracingError, raised_at, user_location
from autograph.runtime.staging import errors, lists
from autograph.runtime.staging.branches import computes_nothing
from autograph.runtime.staging.values import normalize, pack
from autograph.runtime.undefined import Undefined

__all__ = ["block", "cond", "leaks", "loop", "params"]

_MISSING = object()
_LIMIT = 5000  # containers recorded per statement; objects past it are not followed
_FUNCTION_LIMIT = 200  # functions whose cells and globals are followed
_ARRAY_LIMIT = 1 << 20  # numpy arrays are recorded by a copy: larger ones are not
# Values that hold no places: not followed.
_LEAVES = frozenset({bool, int, float, complex, str, bytes, type(None), range, slice,
                     np.float64, np.float32, np.int64, np.int32, np.bool_})
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.CodeType, types.FrameType, property, classmethod, staticmethod)
_LIBRARIES = ("autograph.", "numpy", "jax", "jaxlib", "torch", "builtins", "functools", "typing")


class More(Exception):
    """A staged block changed places the staging does not carry yet."""


class Ref:
    """A recorded container as a value of a place: the same object, not its
    contents (a tracer must not take it apart and rebuild a copy)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    @property
    def place_value(self):
        return self.obj

    def __eq__(self, other):
        return type(other) is Ref and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return repr(self.obj)


class _Entry(tuple):
    """A recorded cell or container: a tuple that `lists.rebind` knows is
    not the user's."""

    __slots__ = ()


class Place:
    """One cell, dict item, list, set or attribute. `key` identifies it."""

    __slots__ = ("kind", "holder", "index", "name")

    def __init__(self, kind, holder, index, name):
        self.kind, self.holder, self.index, self.name = kind, holder, index, name

    @property
    def key(self):
        return (id(self.holder), self.kind, self.index)


def _instance_dict(obj):
    if isinstance(obj, _OPAQUE) or backend_of(obj) is not None:
        return None
    module = getattr(type(obj), "__module__", "") or ""
    if module.startswith(_LIBRARIES):
        return None
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        attributes = None
    if attributes is not None and type(attributes) is not dict:
        return None
    slots = _slot_names(type(obj))
    if not slots:
        return attributes
    # The attributes of an object with `__slots__`: its slots (set ones only) and its `__dict__` if any.
    found = dict(attributes or {})
    for name in slots:
        value = _slot_get(obj, name)
        if value is not _MISSING:
            found[name] = value
    return found


def _slot_names(cls):
    """The names of the slots that `cls` and its bases declare (`__slots__`)."""
    names = []
    for klass in cls.__mro__:
        declared = klass.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"   # a private name, mangled
            if name not in names:
                names.append(name)
    return names


def _slot_get(obj, name):
    try:
        return object.__getattribute__(obj, name)
    except AttributeError:
        return _MISSING


def _attributes_now(obj):
    return _instance_dict(obj) if _slot_names(type(obj)) else object.__getattribute__(obj, "__dict__")


def _set_attribute(obj, name, value):
    """Sets (or, for _MISSING, deletes) an attribute as `Recorded` saw it: a slot or an item of `__dict__`."""
    if name in _slot_names(type(obj)):
        if value is _MISSING:
            if _slot_get(obj, name) is not _MISSING:
                object.__delattr__(obj, name)
        else:
            object.__setattr__(obj, name, value)
        return
    attributes = object.__getattribute__(obj, "__dict__")
    if value is _MISSING:
        attributes.pop(name, None)
    else:
        attributes[name] = value


class Recorded:
    """The places reachable from a block, as they are now."""

    def __init__(self, functions, roots, skip=()):
        self.cells = []       # (cell, name, contents or _MISSING)
        self.containers = {}  # id -> (kind, obj, name, snapshot)
        self.order = []
        self.large = []       # (array, name): writeable arrays too large to copy, made read-only while blocks run
        self.names = []       # (namespace, name, value): the globals (and user modules' attributes) named
        self.stored = []      # (namespace, name, value or _MISSING): the globals that the functions bind
        pending = []
        seen_cells, seen_functions = set(), {id(fn) for fn in skip}   # `skip`: functions not followed
        # The block's functions, and the user functions they can call
        # (found in their cells and globals): what those change counts too.
        functions = [fn for fn in functions if fn is not None]
        functions += [f for fn in functions for f in getattr(fn, "__autograph_calls__", ())]
        limit = _FUNCTION_LIMIT + len(functions)
        while functions and len(seen_functions) < limit:
            fn = functions.pop()
            if id(fn) in seen_functions:
                continue
            seen_functions.add(id(fn))
            code = fn.__code__
            found = []
            for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
                if id(cell) in seen_cells:
                    continue
                seen_cells.add(id(cell))
                contents = _cell_get(cell)
                if calls.is_site(contents):
                    continue  # the runtime's memory of a call site, which the call may change
                self.cells.append(_Entry((cell, name, contents)))
                found.append((name, contents))
            names = _global_names(code)
            for name in names:
                if name in fn.__globals__:
                    found.append((name, fn.__globals__[name]))
                    self.names.append((fn.__globals__, name, fn.__globals__[name]))
            stored_globals, stored_attributes = _stored(code)
            for name in stored_globals:
                self.stored.append((fn.__globals__, name, fn.__globals__.get(name, _MISSING)))
            found.extend(_module_attributes(found, names, self.names, self.stored, stored_attributes))
            for name, value in found:
                if type(value) is types.MethodType:
                    pending.append((name, value.__self__))
                    value = value.__func__
                if type(value) is types.FunctionType:
                    if not (getattr(value, "__module__", None) or "").startswith(_LIBRARIES):
                        functions.append(value)
                else:
                    pending.append((name, value))
        pending.extend(roots)
        self._walk(pending)

    def __bool__(self):
        return bool(self.cells or self.containers or self.large or self.stored)

    def _walk(self, pending):
        pending.reverse()
        while pending and len(self.containers) < _LIMIT:
            name, obj = pending.pop()
            if obj is _MISSING or id(obj) in self.containers:
                continue
            if isinstance(obj, dict):
                kind, snapshot = "item", dict(obj)
                children = [(f"{name}[{k!r}]", v) for k, v in obj.items() if type(v) not in _LEAVES]
            elif isinstance(obj, list):
                if type(obj) is not list and type(obj).__module__.startswith(_LIBRARIES):
                    continue  # a call site's memory (calls.Site), say: not the user's
                kind, snapshot = "list", list(obj)
                children = [(f"{name}[{i}]", v) for i, v in enumerate(obj) if type(v) not in _LEAVES]
            elif type(obj) is np.ndarray:
                if obj.size > _ARRAY_LIMIT:
                    if obj.flags.writeable and all(a is not obj for a, _ in self.large):
                        self.large.append((obj, name))
                    continue
                self.containers[id(obj)] = _Entry(("array", obj, name, obj.copy()))
                self.order.append(id(obj))
                continue
            elif isinstance(obj, (set, frozenset)):
                if isinstance(obj, set):  # its elements are hashable: no containers to follow
                    self.containers[id(obj)] = _Entry(("set", obj, name, frozenset(obj)))
                    self.order.append(id(obj))
                continue
            elif isinstance(obj, tuple):
                self.containers[id(obj)] = _Entry(("tuple", obj, name, None))
                pending.extend(reversed([(f"{name}[{i}]", v) for i, v in enumerate(obj)
                                         if type(v) not in _LEAVES]))
                continue
            else:
                attributes = _instance_dict(obj)
                if attributes is None:
                    continue
                kind, snapshot = "attr", dict(attributes)
                children = [(f"{name}.{k}", v) for k, v in attributes.items() if type(v) not in _LEAVES]
            self.containers[id(obj)] = _Entry((kind, obj, name, snapshot))
            self.order.append(id(obj))
            pending.extend(reversed(children))

    @contextlib.contextmanager
    def frozen(self):
        """Runs a block with the arrays too large to record read-only: a
        block that writes into one raises an error naming it, where the
        staging would otherwise miss the change."""
        for array, _ in self.large:
            array.flags.writeable = False
        try:
            yield
        except ValueError as e:
            if self.large and "read-only" in str(e):
                names = ", ".join(f"'{name}'" for _, name in self.large)
                where = raised_at(e) or user_location()
                raise TracingError(
                    f"staged code writes into a numpy array ({names}) in place ({where}), an array "
                    f"of over {_ARRAY_LIMIT} elements, which staging does not record: compute the new value "
                    "into a variable of the branch or loop instead (for example with np.where), or pass the "
                    "array as an argument and return the new one") from e
            raise
        finally:
            for array, _ in self.large:
                array.flags.writeable = True

    def is_recorded(self, obj):
        entry = self.containers.get(id(obj))
        return entry is not None and entry[1] is obj and entry[0] != "tuple"

    def changed(self):
        """The places whose value is not the recorded one, in a stable order."""
        found = []
        for cell, name, before in self.cells:
            if _cell_get(cell) is not before:
                found.append(Place("cell", cell, None, name))
        for key in self.order:
            kind, obj, name, snapshot = self.containers[key]
            if kind == "list":
                if len(obj) != len(snapshot) or any(a is not b for a, b in zip(obj, snapshot, strict=False)):
                    found.append(Place("list", obj, None, name))
                continue
            if kind == "set":
                if obj != snapshot:
                    found.append(Place("set", obj, None, name))
                continue
            if kind == "array":
                if _array_changed(obj, snapshot):
                    found.append(Place("array", obj, None, name))
                continue
            now = obj if kind == "item" else _attributes_now(obj)
            for k in list(snapshot) + [k for k in now if k not in snapshot]:
                if now.get(k, _MISSING) is not snapshot.get(k, _MISSING):
                    label = f"{name}[{k!r}]" if kind == "item" else f"{name}.{k}"
                    found.append(Place(kind, obj, k, label))
        return found

    def refuse_rebound_globals(self, what, where):
        """Refuses a block that rebinds a global variable (`global g; g =
        1`, or `config.g = 1` for a user module `config`): the change would
        happen once, while tracing, whichever way the program then goes.
        (The caller restores the places, the global too.)"""
        for namespace, name, before in self.stored:
            if namespace.get(name, _MISSING) is not before:
                raise errors.global_rebound(name, namespace.get("__name__", "?"), what, where)

    def restore(self):
        for cell, _, before in self.cells:
            if _cell_get(cell) is not before:
                _cell_set(cell, before)
        for namespace, name, before in self.stored:
            if namespace.get(name, _MISSING) is not before:
                if before is _MISSING:
                    namespace.pop(name, None)
                else:
                    namespace[name] = before
        for key in self.order:
            kind, obj, _, snapshot = self.containers[key]
            if kind == "list":
                if len(obj) != len(snapshot) or any(a is not b for a, b in zip(obj, snapshot, strict=False)):
                    obj[:] = snapshot
                continue
            if kind == "set":
                if obj != snapshot:
                    obj.clear()
                    obj.update(snapshot)
                continue
            if kind == "array":
                if _array_changed(obj, snapshot):
                    obj[...] = snapshot
                continue
            if kind == "attr" and _slot_names(type(obj)):
                now = _attributes_now(obj)
                for k in list(now) + [k for k in snapshot if k not in now]:
                    if now.get(k, _MISSING) is not snapshot.get(k, _MISSING):
                        _set_attribute(obj, k, snapshot.get(k, _MISSING))
                continue
            now = obj if kind == "item" else object.__getattribute__(obj, "__dict__")
            if now.keys() != snapshot.keys() or any(now[k] is not v for k, v in snapshot.items()):
                now.clear()
                now.update(snapshot)

    def as_state(self, value):
        """`value` (a branch output) with the recorded containers in it as
        themselves, so that the object a variable names stays the same."""
        if self.is_recorded(value):
            entry = self.containers[id(value)]
            if entry[0] == "array":  # a value for the backend: its contents merge
                return value.copy() if _array_changed(value, entry[3]) else value
            return Ref(value)
        t = type(value)
        if t is tuple or t is list:
            return t(self.as_state(v) for v in value)
        if t is dict:
            return {k: self.as_state(v) for k, v in value.items()}
        return value

    def get(self, place):
        """The value in `place` as state: recorded containers stay themselves."""
        if place.kind == "cell":
            value = _cell_get(place.holder)
        elif place.kind == "list":
            return [Ref(v) if self.is_recorded(v) else v for v in place.holder]
        elif place.kind == "set":
            return frozenset(place.holder)
        elif place.kind == "array":
            return place.holder.copy()
        else:
            now = place.holder if place.kind == "item" else _attributes_now(place.holder)
            value = now.get(place.index, _MISSING)
        if value is _MISSING:
            return Undefined(place.name)
        return Ref(value) if self.is_recorded(value) else value


def leaks(functions, roots, is_traced):
    """The places reachable from `functions` (their cells and globals, and
    the user functions these name) and from `roots` ((name, value) pairs)
    that hold a value for which `is_traced` is true: [(label, value)]."""
    recorded = Recorded(functions, roots)
    found = []
    for _, name, contents in recorded.cells:
        if is_traced(contents):
            found.append((name, contents))
    for key in recorded.order:
        kind, obj, name, snapshot = recorded.containers[key]
        if kind in ("list", "tuple"):
            found.extend((f"{name}[{i}]", v) for i, v in enumerate(obj) if is_traced(v))
        elif kind in ("item", "attr"):
            label = "{}[{!r}]" if kind == "item" else "{}.{}"
            found.extend((label.format(name, k), v) for k, v in snapshot.items() if is_traced(v))
    return found


def put(place, value, where=None):
    """Writes `value` (as `Recorded.get` gives it) into `place`; `where` is
    the statement's location, for messages."""
    if place.kind == "list":
        place.holder[:] = [v.obj if type(v) is Ref else v for v in value]
        return
    if place.kind == "set":
        place.holder.clear()
        place.holder.update(value)
        return
    if place.kind == "array":
        if type(value) is not np.ndarray:
            raise TracingError(
                f"'{place.name}' is a numpy array changed in place by staged code ({where or user_location()}), "
                "and a numpy array cannot hold a traced value; give the new value to a local "
                f"variable instead (for example `{place.name.split('.')[-1]} = ...` in the branch "
                "or loop)")
        place.holder[...] = value
        return
    value = value.obj if type(value) is Ref else value
    if place.kind == "cell":
        _cell_set(place.holder, _MISSING if type(value) is Undefined else value)
        return
    if place.kind == "attr":
        _set_attribute(place.holder, place.index, _MISSING if type(value) is Undefined else value)
        return
    if type(value) is Undefined:
        place.holder.pop(place.index, None)
    else:
        place.holder[place.index] = value


def _array_changed(array, snapshot):
    return array.shape != snapshot.shape or array.dtype != snapshot.dtype \
        or not np.array_equal(array, snapshot, equal_nan=array.dtype.kind in "fc")


def _unref_each(values):
    return tuple(v.obj if type(v) is Ref else v for v in values)


def _unref(value):
    if type(value) is Ref:
        return value.obj
    t = type(value)
    if t is tuple or t is list:
        return t(_unref(v) for v in value)
    if t is dict:
        return {k: _unref(v) for k, v in value.items()}
    return value


def _cell_get(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def _cell_set(cell, value):
    if value is _MISSING:
        try:
            del cell.cell_contents
        except ValueError:
            pass
    else:
        cell.cell_contents = value


_NAMES_OF = weakref.WeakKeyDictionary()  # code -> the names it and the code nested in it look up


def _unseen_codes(code, memo):
    """`code` and the code nested in it that `memo` does not hold yet, each
    after the code nested in it (no recursion: generated code nests an
    `elif` chain as deep as it is long)."""
    order, stack = [], [code]
    while stack:
        c = stack.pop()
        if c not in memo:
            order.append(c)
            stack.extend(_nested(c))
    return reversed(order)


def _nested(code):
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _global_names(code):
    if code not in _NAMES_OF:
        for c in _unseen_codes(code, _NAMES_OF):
            names = dict.fromkeys(c.co_names)
            for n in _nested(c):
                names.update(dict.fromkeys(_NAMES_OF[n]))
            _NAMES_OF[c] = tuple(names)
    return _NAMES_OF[code]


_STORED_OF = weakref.WeakKeyDictionary()  # code -> (global names, attribute names) it and its nested code bind
_STORES = {"STORE_GLOBAL": 0, "DELETE_GLOBAL": 0, "STORE_ATTR": 1, "DELETE_ATTR": 1}


def _stored(code):
    """(the global names, the attribute names) that `code` and the code
    nested in it bind or delete (`global g; g = 1`, `config.flag = 1`)."""
    if code not in _STORED_OF:
        for c in _unseen_codes(code, _STORED_OF):
            stored = (set(), set())
            for i in dis.get_instructions(c):
                if i.opname in _STORES:
                    stored[_STORES[i.opname]].add(i.argval)
            for n in _nested(c):
                for mine, nested in zip(stored, _STORED_OF[n], strict=True):
                    mine.update(nested)
            _STORED_OF[c] = (frozenset(stored[0]), frozenset(stored[1]))
    return _STORED_OF[code]


def _module_attributes(found, names, bound, stored, stored_names):
    """(`module.name`, value) for the user modules in `found` and the names
    the code uses as attributes (`config.weights`): what another module's
    globals hold that the code can reach, following modules in modules.
    The module globals among `stored_names` (attributes the code binds:
    `config.flag = 1`) go into `stored`, as the code's own globals do."""
    attributes, seen = [], set()
    pending = [(n, v) for n, v in found if type(v) is types.ModuleType]
    while pending:
        prefix, module = pending.pop()
        if id(module) in seen or (module.__name__ or "").startswith(_LIBRARIES):
            continue
        seen.add(id(module))
        stored.extend((module.__dict__, name, module.__dict__.get(name, _MISSING)) for name in stored_names)
        for name in names:
            value = module.__dict__.get(name, _MISSING)
            if value is _MISSING:
                continue
            label = f"{prefix}.{name}"
            bound.append((module.__dict__, name, value))
            (pending if type(value) is types.ModuleType else attributes).append((label, value))
    return attributes


def params(fn):
    """The names of a body's parameters: its state's names."""
    if fn is None:
        return ()
    code = fn.__code__
    return code.co_varnames[:code.co_argcount]


def block(run, side, calls, roots):
    """A branch that the runtime builds (`StagingBackend.cond_chain`): it
    takes no state and returns `run()`, which runs the user's `calls` (their
    bodies) from the state `roots` ((name, value) pairs), which the places
    of its `cond` follow as they follow a body's cells and parameters. The
    two `side`s have their own code, so that a traceback says which one
    raised (`_raising_branch`)."""
    if side == 0:
        def branch(*_):
            return run()
    else:
        def branch(*_):  # noqa: F811 -- another code object
            return run()
    branch.__autograph_calls__, branch.__autograph_roots__ = tuple(calls), tuple(roots)
    return branch


def _merge_found(found, places):
    keys = {p.key for p in found}
    new = [p for p in places if p.key not in keys]
    found.extend(new)
    return bool(new)


# The statements ----------------------------------------------------------------

def cond(stage, pred, true_fn, false_fn, operands, names):
    """`stage(pred, true_fn, false_fn, operands, names)` (a backend's staged
    cond) with the places the branches change as more outputs."""
    roots = list(zip(params(true_fn) or params(false_fn), operands, strict=False))
    roots += [root for fn in (true_fn, false_fn) for root in getattr(fn, "__autograph_roots__", ())]
    recorded = Recorded((true_fn, false_fn), roots)
    if not recorded:
        return stage(pred, true_fn, false_fn, operands, names)
    count = len(names)
    found = []
    where = user_location()
    # Lists a staged loop accumulates (lists.py) that the branches append
    # to: where they append different numbers of elements, each branch
    # writes its elements into the list's buffer, which is more outputs.
    lists_of = _Entry(obj for kind, obj, _, _ in recorded.containers.values() if kind == "list")
    lengths, flushed = {}, []
    for _attempt in range(8):
        carried, accs = list(found), list(flushed)
        width = count + len(carried)

        def wrap(fn, carried=carried, accs=accs, width=width):
            def run(*ops):
                entry = [(acc.buffer, acc.count) for acc in accs]
                try:
                    if fn is not None:
                        with recorded.frozen():
                            result = fn(*ops)
                    else:
                        result = unchanged(ops, count)
                    result = tuple(recorded.as_state(v) for v in normalize(result, count, "branch"))
                    written = ()
                    for acc in accs:
                        acc.flush()
                        written += (acc.buffer, acc.count)
                    for holder in lists_of:
                        if id(holder) not in lengths:
                            grown = lists.appended(recorded.containers[id(holder)][3], holder)
                            lengths[id(holder)] = (len(holder), grown and _Entry(grown))
                        if lengths[id(holder)][0] == len(holder):
                            continue
                        if lists.is_accumulating(holder) and holder[0].acc not in flushed:
                            flushed.append(holder[0].acc)
                            raise More
                        if not lists.is_accumulating(holder):
                            lists.grown_in_one_branch(recorded.containers[id(holder)], holder, lengths[id(holder)],
                                                      where)
                    recorded.refuse_rebound_globals("a staged `if`", where)
                    if _merge_found(found, recorded.changed()):
                        raise More
                    values = tuple(recorded.get(p) for p in carried)
                finally:
                    for acc, (buffer, n) in zip(accs, entry, strict=True):
                        acc.buffer, acc.count = buffer, n
                    recorded.restore()
                return pack(result + values + written, width + len(written))
            run.trivial = computes_nothing(fn)
            return run

        try:
            out = stage(pred, wrap(true_fn), wrap(false_fn), operands,
                        tuple(names) + tuple(p.name for p in carried)
                        + tuple(n for a in accs for n in (a.name, f"len({a.name})")))
        except More:
            recorded.restore()
            continue
        out = normalize(out, width + 2 * len(accs), "branch")
        for place, value in zip(carried, out[count:width], strict=True):
            if place.kind == "array" and place.name in names:
                continue  # the variable takes the merged value (the array keeps its own)
            put(place, value, where)
        for k, acc in enumerate(accs):
            acc.buffer, acc.count = out[width + 2 * k:width + 2 * k + 2]
            acc.step = None  # the number of elements depends on the way the `if` goes
        return pack(tuple(_unref(v) for v in out[:count]), count)
    raise errors.branches_do_not_settle("an `if`", where)


def loop(stage, test, body, state, names, for_item=False, backend=None, what=None, trips=None, exact=False):
    """`stage(test, body, state, names)` (a backend's staged loop; `body`
    takes the item first when `for_item`) with the places the body changes
    as more loop variables. Returns the final state tuple, or what `stage`
    returns when it is not a tuple (NotImplemented).

    A variable or place unbound before the loop that the body binds is a
    loop variable of the type of its first value (the backend gives it
    zeros until then); after a loop that ran zero times it is unbound,
    which an assertion checks at run time."""
    roots = list(zip(names, state, strict=True))
    recorded = Recorded((test, body), roots)
    unbound = any(type(v) is Undefined for v in state)
    if not recorded and not unbound:
        return stage(test, body, state, names)
    count = len(names)
    found = []
    where = user_location()
    # A dict or list that the body changes in place (rather than rebinding
    # the variable) travels as itself, its items as places: so an item first
    # set in the loop is one more variable first bound in it.
    rebound = set()
    accumulated = {}  # id of a list the body appends to -> its lists.Accumulator
    for _attempt in range(8):
        carried = list(found)
        accs = list(accumulated.values())
        entry = tuple(recorded.get(p) for p in carried)
        by_ref = {k for k, v in enumerate(state)
                  if type(v) in (dict, list) and recorded.is_recorded(v) and k not in rebound}
        inputs = tuple(Ref(v) if k in by_ref else v for k, v in enumerate(state))
        flagged = unbound or any(type(v) is Undefined for v in entry)
        flag = (False,) if flagged else ()
        width = count + len(carried)
        buffers = tuple(v for a in accs for v in a.entry(trips))
        end = width + len(buffers)

        def enter(values, buffers, carried=carried, accs=accs):
            for place, value in zip(carried, values, strict=True):
                put(place, value, where)
            for k, acc in enumerate(accs):
                acc.enter(*buffers[2 * k:2 * k + 2])

        def wrapped_test(*s, width=width, end=end):
            try:
                enter(s[count:width], s[width:end])
                with recorded.frozen():
                    return test(*_unref_each(s[:count]))
            finally:
                recorded.restore()

        body_places = []   # (the places' values as the body got them, as it left them)

        def wrapped_body(*args, carried=carried, width=width, end=end, flag=flag, by_ref=by_ref, accs=accs,
                         body_places=body_places):
            item, s = (args[:1], args[1:]) if for_item else ((), args)
            try:
                enter(s[count:width], s[width:end])
                before = _unref_each(s[:count])
                with recorded.frozen():
                    result = body(*item, *before)
                result = normalize(result, count, "loop body")
                moved = {k for k in by_ref if result[k] is not before[k]}
                if moved:  # the body rebinds the variable: it travels as its contents
                    rebound.update(moved)
                    raise More
                result = tuple(Ref(v) if k in by_ref else v for k, v in enumerate(result))
                written = tuple(v for acc in accs for v in acc.leave())
                recorded.refuse_rebound_globals(what, where)
                changed = [p for p in recorded.changed()
                           if p.key not in {c.key for c in carried} and id(p.holder) not in accumulated]
                if lists.accumulate(recorded.containers, changed, accumulated, backend, what, where):
                    raise More
                if _merge_found(found, changed):
                    raise More
                values = tuple(recorded.get(p) for p in carried)
                body_places[:] = [s[count:width], values]
            except lists.Grown as grown:  # the elements the body appended so far, before they go
                if grown.elements is None and recorded.is_recorded(grown.holder):
                    grown.elements = lists.appended(recorded.containers[id(grown.holder)][3], grown.holder)
                raise
            finally:
                recorded.restore()
            return pack(result + values + written + (True,) * len(flag), end + len(flag))

        lists.tracing_loops[0] += 1
        try:
            out = stage(wrapped_test if test is not None else None, wrapped_body,
                        inputs + entry + buffers + flag,
                        tuple(names) + tuple(p.name for p in carried)
                        + tuple(n for a in accs for n in (a.name, f"len({a.name})"))
                        + ("<loop ran>",) * len(flag))
        except (More, lists.Widen):
            recorded.restore()
            continue
        except lists.Grown as grown:  # appended to in one branch of an `if` in the body
            holder, elements, error = grown.holder, grown.elements, grown.error
            grown.holder = grown.elements = None
            if not recorded.is_recorded(holder) or backend is None:
                recorded.restore()
                if lists.tracing_loops[0] > 1:
                    raise  # an enclosing loop's list
                raise error from None
            name = recorded.containers[id(holder)][2]
            recorded.restore()
            if elements is None:
                raise error from None
            lists.accumulate(recorded.containers, [Place("list", holder, None, name)], accumulated, backend,
                             what, where, elements)
            del holder, elements
            continue
        finally:
            lists.tracing_loops[0] -= 1
        if out is NotImplemented:
            return out
        out = _unref_each(out)
        # A place the body leaves as it found it keeps its value from before the loop (not the
        # loop's output: a traced value that would stay in a Python object after the trace).
        ins, outs = body_places if body_places else ((), ())
        for i, (place, value) in enumerate(zip(carried, out[count:width], strict=True)):
            if i < len(outs):
                value = _unchanged_kept(entry[i], ins[i], outs[i], value)
            put(place, value, where)
        for k, acc in enumerate(accs):
            traced = acc.finish(*out[width + 2 * k:width + 2 * k + 2], trips if exact else None)
            if traced is not None:  # a length known only when the program runs
                lists.rebind(acc, traced, recorded.cells)
        if flagged:
            before = tuple(state) + entry
            bound = [name for name, a, b in zip(tuple(names) + tuple(p.name for p in carried), before,
                                                out[:width], strict=True)
                     if type(a) is Undefined and type(b) is not Undefined]
            if bound:
                _check_ran(out[end], bound, where)
        return out[:count]
    raise errors.loop_does_not_settle("a loop", where)


def _unchanged_kept(entry, given, left, out):
    """`out` (a place's value after the loop), with the parts that the body
    left as it was given (`left is given`) replaced by their `entry` value."""
    if left is given:
        return entry
    if type(left) is list and type(given) is list and type(entry) is list and type(out) is list \
            and len(left) == len(given) == len(entry) == len(out):
        return [_unchanged_kept(e, g, v, o) for e, g, v, o in zip(entry, given, left, out, strict=True)]
    return out


def _check_ran(ran, bound, where):
    names = ", ".join(repr(n) for n in bound)
    message = (f"{names} first defined inside the loop at {where} is unbound after it: the loop "
               "ran zero times")
    backend = backend_of(ran)
    if backend is None:
        if not ran:
            raise UnboundLocalError(message)
        return
    backend.assert_(ran, lambda: message)
