"""Which traced graph serves a call of an `autograph.function`: signature
keys, and the bounded, thread-safe cache of graphs keyed by them.

A signature key describes the arguments of a call without keeping them alive:

- numpy arrays and numpy scalars (the graph's inputs): shape and dtype;
- Python numbers, strings, bytes, None: type and value (floats and complex
  numbers by their bits, so `-0.0` and `0.0` are two keys and a nan hits
  the trace made for the same nan);
- tuples, lists, dicts, namedtuples and slices: walked, their type part of the key;
- any other object: the object itself, by a weak reference where the type
  allows one (its `==` and `hash`, which for most classes is its identity),
  or by `id()` for an unhashable one, which the cache then keeps alive),
  plus the keys of its attributes (`vars(obj)`, `MAX_ATTRIBUTE_DEPTH` levels
  deep, containers up to `MAX_ATTRIBUTE_ITEMS` items), so that assigning
  `obj.scale = 3.0` traces again. Arrays reached through attributes are
  constants of the graph: they are keyed by identity (`id()`, held alive
  with the graph, which holds them anyway), shape and dtype
  (assigning a new array traces again; writing into the same array in place
  does not, as for arrays held in globals or closures).

`SignatureCache` holds at most `CACHE_SIZE` graphs per function and evicts
the least recently used; the same signature traced by several threads at
once is traced by the first and awaited by the others.
"""

import collections
import logging
import struct
import threading
import types
import weakref

import numpy as np

__all__ = ["CACHE_SIZE", "SignatureCache", "array_shapes", "describe_key", "generalize", "key_by_identity", "matches",
           "most_changed", "relax", "signature_key"]

logger = logging.getLogger("autograph")

#: Traced graphs kept per `autograph.function`; the least recently used is
#: evicted beyond this.
CACHE_SIZE = 128

#: Attributes of attributes of an object argument taken into its key.
MAX_ATTRIBUTE_DEPTH = 3

#: A container reached through attributes with more items than this is keyed
#: by identity only.
MAX_ATTRIBUTE_ITEMS = 64

#: Types keyed as the array they describe (traced_function.Spec registers itself).
SPEC_TYPES = set()

_VALUES = (bool, int, str, bytes, type(None))
#: Objects keyed by identity alone: their attributes are not state a trace reads.
_NO_ATTRIBUTES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                  types.MethodType)


def key_by_identity(cls):
    """Objects of `cls` are keyed by identity alone (not their attributes)."""
    global _NO_ATTRIBUTES
    _NO_ATTRIBUTES += (cls,)


def signature_key(obj, held=None):
    """The key of one argument (see the module docstring). Objects keyed by
    their `id()` are appended to `held`: the cache keeps them alive with
    the entry, so that no other object can take their `id()` meanwhile."""
    return _key(obj, 0, True, held)


def _float_bits(x):
    return struct.pack("<d", x)


def _key(obj, depth, inputs, held):
    t = type(obj)
    if t is np.ndarray:
        return (obj.shape, obj.dtype) if inputs else (t, _identity(obj, held), obj.shape, obj.dtype)
    if t is float:
        return (float, _float_bits(obj))
    if t in _VALUES:
        return (t, obj)
    if isinstance(obj, np.generic):
        return ((), obj.dtype) if inputs else (t, obj.tobytes())
    if t is complex:
        return (complex, _float_bits(obj.real), _float_bits(obj.imag))
    if t is tuple or t is list or (isinstance(obj, tuple) and hasattr(obj, "_fields")):
        if not inputs and len(obj) > MAX_ATTRIBUTE_ITEMS:
            return (t, _identity(obj, held))
        return (t,) + tuple(_key(x, depth, inputs, held) for x in obj)
    if t is dict:
        if not inputs and len(obj) > MAX_ATTRIBUTE_ITEMS:
            return (t, _identity(obj, held))
        return (dict,) + tuple((k, _key(v, depth, inputs, held)) for k, v in obj.items())
    if t is slice:
        return (slice, _key(obj.start, depth, inputs, held), _key(obj.stop, depth, inputs, held),
                _key(obj.step, depth, inputs, held))
    if t in SPEC_TYPES:
        return (obj.shape, obj.dtype)
    if isinstance(obj, np.ndarray):
        return (t, obj.shape, obj.dtype) if inputs else (t, _identity(obj, held), obj.shape, obj.dtype)
    return _object_key(obj, depth, held)


def _object_key(obj, depth, held):
    t = type(obj)
    try:
        hash(obj)
    except TypeError:
        ident = _identity(obj, held)
    else:
        try:
            ident = weakref.ref(obj)    # equal while alive; a dead one equals nothing
        except TypeError:
            ident = obj
    if isinstance(obj, _NO_ATTRIBUTES):
        return ("identity", ident)    # (not the type: a TracedFunction changes its class)
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        attributes = None
    if type(attributes) is not dict or depth >= MAX_ATTRIBUTE_DEPTH:
        return (t, ident)
    return (t, ident, tuple((k, _key(v, depth + 1, False, held)) for k, v in attributes.items()))


def _identity(obj, held):
    """`id(obj)`, with `obj` held alive by the cache entry of the key."""
    if held is not None:
        held.append(obj)
    return id(obj)


def _is_array_key(k):
    return type(k) is tuple and len(k) == 2 and type(k[0]) is tuple and isinstance(k[1], np.dtype)


def describe_key(key):
    """A key as the retrace warning shows it: `float64[3]`, `2.5`, ..."""
    if _is_array_key(key):
        return f"{key[1].name}{['?' if d is None else d for d in key[0]]}".replace("'?'", "None")
    if type(key) is tuple and len(key) == 2 and key[0] is float:
        return repr(struct.unpack("<d", key[1])[0])
    if type(key) is tuple and len(key) == 2 and key[0] in _VALUES:
        return repr(key[1])
    return repr(key)


def array_shapes(key):
    """The shapes of the array leaves of a key, in the order of `trees.leaves`."""
    if _is_array_key(key):
        return [key[0]]
    if type(key) is tuple:
        return [shape for k in key for shape in array_shapes(k)]
    return []


def most_changed(keys):
    """For the retrace warning, given the keys of successive calls: (the
    argument position that changed most often, its keys, whether only array
    shapes of one rank and dtype changed there)."""
    width = max(len(k) for k in keys)
    changes = []
    for pos in range(width):
        column = [k[pos] if pos < len(k) else None for k in keys]
        changes.append(sum(1 for a, b in zip(column, column[1:]) if a != b))
    pos = max(range(width), key=lambda p: changes[p])
    seen = [k[pos] for k in keys if pos < len(k)]
    shapes = len({relax(k) for k in seen}) == 1 and any(array_shapes(k) for k in seen)
    return pos, seen, shapes


# reduce_retracing: keys whose array shapes differ share a generalized trace.

def relax(key):
    """`key` with every array shape reduced to its rank."""
    if _is_array_key(key):
        return (len(key[0]), key[1])
    if type(key) is tuple:
        return tuple(relax(k) for k in key)
    return key


def generalize(a, b):
    """The key that covers both keys (dimensions that differ become None),
    or None when they differ in more than array dimensions."""
    joined = _join(a, b)
    return None if joined is _DIFFERENT else joined


_DIFFERENT = object()


def _join(a, b):
    if _is_array_key(a) and _is_array_key(b):
        (sa, da), (sb, db) = a, b
        if da != db or len(sa) != len(sb):
            return _DIFFERENT
        return (tuple(x if x == y else None for x, y in zip(sa, sb)), da)
    if type(a) is tuple and type(b) is tuple and len(a) == len(b) and not _is_array_key(a) \
            and not _is_array_key(b):
        joined = tuple(_join(x, y) for x, y in zip(a, b))
        return _DIFFERENT if any(j is _DIFFERENT for j in joined) else joined
    return a if a == b else _DIFFERENT


def matches(general, key):
    """True when every array of `key` fits the shapes of `general`."""
    if _is_array_key(general) and _is_array_key(key):
        (sg, dg), (sk, dk) = general, key
        return dg == dk and len(sg) == len(sk) and all(g is None or g == k for g, k in zip(sg, sk))
    if type(general) is tuple and type(key) is tuple and len(general) == len(key) \
            and not _is_array_key(general) and not _is_array_key(key):
        return all(matches(g, k) for g, k in zip(general, key))
    return general == key


# The cache.

class _PendingTrace:
    __slots__ = ("done", "thread")

    def __init__(self):
        self.done = threading.Event()
        self.thread = threading.get_ident()


class SignatureCache:
    """At most `size` (default CACHE_SIZE) traced graphs, least recently used
    evicted first; `traces` counts the traces made. Safe to use from several
    threads: `lock` guards every field."""

    def __init__(self, name, size=None):
        self.name = name
        self.size = CACHE_SIZE if size is None else size
        self.lock = threading.Lock()
        self.traces = 0
        self.evictions = 0
        # The key of the function's fast entry (`__call__` checks its signature
        # first, without the lock): its calls set `pinned_used[0]`, which the
        # next eviction takes for a use.
        self.pinned = None
        self.pinned_used = [False]
        self._entries = collections.OrderedDict()
        self._pending = {}
        self._held = {}
        self._warned = False

    def __len__(self):
        return len(self._entries)

    def __contains__(self, key):
        return key in self._entries

    def get(self, key):
        """The graph cached for `key` (now the most recently used), or None."""
        with self.lock:
            concrete = self._entries.get(key)
            if concrete is not None:
                self._entries.move_to_end(key)
            return concrete

    def get_or_trace(self, key, trace, held=()):
        """The graph cached for `key`, else `trace()` (called outside the lock)
        cached under `key`, keeping the objects `held` alive with it. While one thread traces a key, other threads that
        need it wait for that trace; if it fails, each traces for itself."""
        while True:
            with self.lock:
                concrete = self._entries.get(key)
                if concrete is not None:
                    self._entries.move_to_end(key)
                    return concrete
                pending = self._pending.get(key)
                if pending is None or pending.thread == threading.get_ident():
                    # (The same thread asking again while it traces `key` traces it again.)
                    mine = _PendingTrace() if pending is None else None
                    if mine is not None:
                        self._pending[key] = mine
                    break
            pending.done.wait()
        try:
            concrete = trace()
        except BaseException:
            if mine is not None:
                with self.lock:
                    del self._pending[key]
                mine.done.set()
            raise
        with self.lock:
            self.traces += 1
            self._entries[key] = concrete
            if held:
                self._held[key] = held
            self._entries.move_to_end(key)
            self._evict()
            if mine is not None:
                del self._pending[key]
        if mine is not None:
            mine.done.set()
        return concrete

    def discard(self, key, concrete):
        """Forgets the graph cached for `key` if it is `concrete`."""
        with self.lock:
            if self._entries.get(key) is concrete:
                del self._entries[key]
                self._held.pop(key, None)

    def pin(self, key):
        """Makes `key` the fast entry's; returns the list its calls mark."""
        self.pinned, self.pinned_used = key, [False]
        return self.pinned_used

    def _evict(self):
        while len(self._entries) > self.size:
            key = next(iter(self._entries))
            if key == self.pinned and self.pinned_used[0]:
                self.pinned_used[0] = False
                self._entries.move_to_end(key)
                key = next(iter(self._entries))
            del self._entries[key]
            self._held.pop(key, None)
            self.evictions += 1
        if self.evictions >= self.size and not self._warned:
            self._warned = True
            logger.warning(
                "autograph.function %r has evicted %d traced graphs from its cache of %d "
                "(least recently used first); a call with an evicted signature traces again. "
                "Give an input_signature with None dimensions, use reduce_retracing=True, or pass "
                "numbers as numpy arrays.", self.name, self.evictions, self.size)


class LRUDict:
    """A dict of at most `size` items that forgets the least recently used."""

    def __init__(self, size=None):
        self.size = CACHE_SIZE if size is None else size
        self._items = collections.OrderedDict()

    def get(self, key):
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def __setitem__(self, key, value):
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
