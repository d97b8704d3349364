"""The call hook: what generated code calls in place of every user call.

`call(f)(*args, **kwargs)` calls `converted(f)` with the call's own arguments,
so evaluation order and argument passing are Python's. `converted(f)` is:

  * a runtime override for the builtins a backend may need to see (`print`,
    `len`, `range`, ...): exact Python for Python values;
  * the converted version of user code (converted on first call, cached),
    through the converter that the pipeline installs with `set_converter`;
  * `f` itself for builtins, C functions, classes and library code.

A tracer that runs the bytecode of converted code (torch.compile's dynamo)
cannot follow two things the hook does for speed: lookups keyed by `id()`
(dynamo guards on the identity of each bound method it sees, a new object
at each attribute access) and `type()` of a method of a tensor that the
traced code computed (dynamo has no type for it). Nor can it run the
converter. While `_bytecode_traced()` says such a tracer runs, `call` takes
`_Traced.call`, which compares with `is`, asks `__class__` and `isinstance`
only where dynamo answers them, and converts every function (and the
function of each method and partial) through `outside` (what the tracer
calls without tracing it), which also leaves generated code as it is:
a lambda or a def inside converted code may be made in the trace. The
torch backend installs both with `set_bytecode_tracer`.
"""

import builtins
import functools
import types
import weakref

from autograph.runtime.backends import Backend, backend_of, backend_of_any
from autograph.runtime.staging.lists import Appended as APPENDED
from autograph.runtime.staging.lists import TracedList

__all__ = ["bytecode_traced", "call", "call_builtins", "set_converter", "set_bytecode_tracer", "intercept", "refresh",
           "remember", "call_site", "call_method", "written_call", "written_call_site", "written_call_method",
           "new_site", "keep_sites", "is_site", "SITE", "AS_WRITTEN", "recall", "forget_all", "hook", "CACHE_KEY",
           "OVERRIDDEN_BUILTINS",
           "APPENDED", "BUILTIN_LEN", "BUILTIN_METHOD", "PLAIN_LIST", "SIZED_TYPES"]

def _unconverted(f):
    return f


_converter = _unconverted


def set_converter(converter):
    """Installs `converter(f) -> callable`: the converted version of any
    callable that is not an overridden builtin (or `f` itself)."""
    global _converter
    _converter = converter


# Per-function cache of the call hook. The converter stores
# (f.__code__, result, epoch) on f under CACHE_KEY: it lives and dies with f,
# and the code check ignores entries that functools.wraps copied from
# another function. `forget_all` bumps the epoch.
CACHE_KEY = "__autograph_converted__"
_epoch = 0


def remember(f, result, cache_key=CACHE_KEY):
    """Caches `result` as what calls of the plain function `f` run."""
    f.__dict__[cache_key] = (f.__code__, result, _epoch)


def recall(f, cache_key=CACHE_KEY):
    """The cached result for the plain function `f`, or None."""
    entry = f.__dict__.get(cache_key)
    if entry is not None and entry[0] is f.__code__ and entry[2] == _epoch:
        return entry[1]
    return None


def forget_all():
    global _epoch
    _epoch += 1
    for sites in list(_sites.values()):
        for site in sites:
            site[0] = _UNSET


def new_site():
    """The memory of one call site of inlined code: [callee, what to call,
    SITE] (see converters/fast_paths.py). A plain list: converted code reads
    it on every call, and Python reads a list subclass's items three times
    slower. `SITE` tells it from the user's lists (`is_site`)."""
    return [_UNSET, None, SITE]


def is_site(value):
    """True for a call site's memory (`new_site`), which is the runtime's,
    not the user's state."""
    return type(value) is list and len(value) == 3 and value[2] is SITE


def keep_sites(function, sites):
    """Records the call sites of `function`'s closure, which `forget_all`
    resets, for as long as `function` lives."""
    if sites:
        _sites[function] = tuple(sites)


class _Unset:
    pass


_UNSET = _Unset()
SITE = _Unset()
_sites = weakref.WeakKeyDictionary()  # function -> its call sites
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: classes made by `class` statements


def site_functions(hook, converter):
    """`call_site` and `call_method` for the call hook `hook`, whose user
    code goes through `converter(f)` (None: the hook converts nothing).
    Under a bytecode tracer they call `_Traced.call` themselves: each
    closure that the traced code goes through is a guard."""

    def call_site(site, f):
        """`hook(f)`, remembered at `site` when `f` is a function, builtin or
        class, whose identity decides the answer."""
        if _bytecode_traced is not None and _bytecode_traced():
            return _traced.call(f, converter)
        target = hook(f)
        cls = type(f)
        if cls is _FunctionType or cls is _BuiltinFunctionType or cls is type:
            site[0], site[1] = f, target
        return target

    def call_method(site, receiver, bound):
        """`hook(bound)` for `receiver.method`; when the hook passes a method
        of a C type through unchanged, every instance of that type will do,
        so the site remembers the type."""
        if _bytecode_traced is not None and _bytecode_traced():
            return _traced.call(bound, converter)
        target = hook(bound)
        cls = type(receiver)
        if target is bound and not cls.__flags__ & _HEAPTYPE and type(bound) in _C_CALLABLES:
            site[0] = cls
        return target

    return call_site, call_method


#: The attribute under which a converted function keeps `written()`: its
#: statements as written, as a function (conversion.py builds it on first use).
AS_WRITTEN = "__autograph_as_written__"


def written_site_functions(call_site, call_method):
    """`call_site` and `call_method` for the calls of a function's
    statements as written (see `backends.tracing`), which run outside
    every trace: where the hook gives a converted function, they give its
    statements as written too, so that no call asks `tracing()` again."""

    def written_call_site(site, f):
        target = call_site(site, f)
        if target is not f:
            written = getattr(target, AS_WRITTEN, None)
            if written is not None and type(target) is _FunctionType:
                target = written()
            elif target is _OVERRIDES.get(id(f)):
                target = f  # a backend's override, for its values, which exist only in traces
            if site[0] is f:
                site[1] = target
        return target

    def written_call_method(site, receiver, bound):
        # A method of a user's class: the site remembers the function and
        # what to bind in its place (None: the method as it is).
        function = bound.__func__ if type(bound) is _MethodType else None
        if function is not None and function is site[0]:
            return bound if site[1] is None else _MethodType(site[1], bound.__self__)
        target = call_method(site, receiver, bound)
        written = None
        if type(target) is _MethodType:
            written = getattr(target.__func__, AS_WRITTEN, None)
            if written is not None:
                written = written()
                target = _MethodType(written, target.__self__)
        if function is not None and type(function) is _FunctionType and (written is not None or target is bound):
            site[0], site[1] = function, written
        return target

    def written_call(site, f):
        """`written_call_site` or, for a bound method, `written_call_method`:
        a callee that the call does not name (`a.b.method(x)`, `fs[i](x)`)."""
        if f is site[0] and site[1] is not None:
            return site[1]
        if type(f) is _MethodType:
            return written_call_method(site, f.__self__, f)
        return written_call_site(site, f)

    return written_call_site, written_call_method, written_call


_REDUCERS = frozenset({"sum", "min", "max", "any", "all"})
_SEQUENCES = (list, tuple)
# Types no backend claims: checked first, without a dictionary lookup.
_PLAIN = frozenset({bool, int, float, complex, str, bytes, type(None), list, tuple, dict, set,
                    frozenset, range, type})


class _Absent:
    """Marks an argument that the call did not pass."""


_ABSENT = _Absent()


def _override(func):
    """`func` for Python values; the first backend's version when an
    argument (or, for reducers, an element of a list or tuple argument) is
    one of its values."""
    name = getattr(func, "__name__", "")
    # numpy's constructors take sizes and values in lists and tuples too.
    scan = (name in _REDUCERS and getattr(func, "__module__", None) == "builtins") \
        or getattr(func, "__module__", None) == "numpy"
    # The common call, one or two plain arguments, costs two type checks.
    quick = (_PLAIN - set(_SEQUENCES) if scan else _PLAIN) | {_Absent}
    # A bytecode tracer's symbolic numbers have Python's number types (see
    # backends.set_symbolic_numbers): there range() of one is a staged loop.
    numbers = func is builtins.range

    def dispatch(args, kwargs):
        for arg in args:
            if type(arg) is TracedList:
                return arg.call(func, args, kwargs)
            backend = backend_of(arg)
            if backend is None and scan and type(arg) in _SEQUENCES:
                backend = backend_of_any(arg)
            if backend is not None:
                impl = backend.print_ if func is builtins.print else backend.builtin(func)
                if impl is not None:
                    return impl(*args, **kwargs)
                break
        return func(*args, **kwargs)

    def override(first=_ABSENT, second=_ABSENT, *rest, **kwargs):
        if type(first) in quick and type(second) in quick and not rest and not kwargs \
                and not (numbers and _bytecode_traced is not None and _bytecode_traced()):
            if second is not _ABSENT:
                return func(first, second)
            return func(first) if first is not _ABSENT else func()
        if rest and not kwargs and type(first) in quick and type(second) in quick \
                and (_bytecode_traced is None or not _bytecode_traced()):
            # min(a, b, c): what dispatch does for plain values, unless a
            # bytecode tracer's number may be symbolic.
            for arg in rest:
                if type(arg) not in quick:
                    break
            else:
                return func(first, second, *rest)
        args = [a for a in (first, second) if a is not _ABSENT]
        return dispatch(args + list(rest), kwargs)

    if func is builtins.len:
        override = _len_of_accumulated(override)
    override.__name__ = name
    override.__qualname__ = name
    override.__doc__ = f"`{name}` for Python values; a backend's version for its values."
    return override


def _len_of_accumulated(override):
    """`len()` that gives the traced length of a list accumulated in a staged
    loop, inside the loop (staging/lists.py)."""
    from autograph.runtime.staging.lists import Appended, length

    # A list is accumulated where its first element is `Appended`
    # (staging/lists.is_accumulating); a plain value of one argument is
    # what `override` would pass to len as it is, asked here without its
    # two calls (len is the builtin converted loops call most).
    plain = _PLAIN - {list}
    len_of = builtins.len

    def len_(first=_ABSENT, *rest, **kwargs):
        cls = type(first)
        if cls is list:
            if first and type(first[0]) is Appended:
                return length(first)
            if not rest and not kwargs:
                return len_of(first)
        elif cls in plain:
            if not rest and not kwargs:
                return len_of(first)
        elif cls is TracedList:
            return first.length
        return override(first, *rest, **kwargs)
    return len_


#: The types whose `len()` no backend gives otherwise: converted code calls
#: the builtin `BUILTIN_LEN` on them itself (converters/fast_paths.py), where a
#: backend's override of `len` would cost a Python call; on a `list` too,
#: unless its first element is `APPENDED` (a list accumulated in a staged
#: loop, staging/lists.py).
SIZED_TYPES = (str, tuple, dict, set, frozenset, bytes, range)
BUILTIN_LEN = builtins.len
#: The type of a C function and of a method of a C type (`"a".upper`), which
#: the call hook gives as it is outside every trace (converters/fast_paths.py).
BUILTIN_METHOD = types.BuiltinMethodType
PLAIN_LIST = list  # (converted code may bind the name `list`)

OVERRIDDEN_BUILTINS = (
    "print", "len", "range", "enumerate", "zip", "abs", "min", "max", "sum",
    "any", "all", "int", "float", "bool", "isinstance",
)

# Keyed by id: looking up a bound method by value would hash its receiver.
# The overridden functions live forever, so their ids stay theirs. Only the
# builtins that a registered backend overrides are wrapped: the others are
# called as they are, at no cost.
_OVERRIDES = {}
_OVERRIDE_BY_NAME = {}  # name -> (function, override): what a bytecode tracer compares with `is`
_keep_alive = []


def intercept(functions):
    """Routes calls of `functions` from converted code through the same
    dispatch as the overridden builtins."""
    for function in functions:
        if id(function) not in _OVERRIDES:
            _OVERRIDES[id(function)] = _override(function)
            _OVERRIDE_BY_NAME.setdefault(getattr(function, "__name__", None), (function, _OVERRIDES[id(function)]))
            _keep_alive.append(function)


def refresh(backends):
    """Rebuilds the overrides for the registered `backends`."""
    _OVERRIDES.clear()
    _OVERRIDE_BY_NAME.clear()
    for backend in backends:
        for name in OVERRIDDEN_BUILTINS:
            func = getattr(builtins, name)
            if func is builtins.print:
                wanted = type(backend).print_ is not Backend.print_
            else:
                wanted = backend.builtin(func) is not None
            if wanted:
                intercept([func])
        intercept(backend.intercepts())
_FunctionType = types.FunctionType
_MethodType = types.MethodType
_BuiltinFunctionType = types.BuiltinFunctionType
_C_CALLABLES = frozenset({
    types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType,
    types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
})


_bytecode_traced = _outside = _prepare = None  # see set_bytecode_tracer


def bytecode_traced():
    """True while a bytecode tracer (dynamo) runs converted code."""
    return _bytecode_traced is not None and _bytecode_traced()


def set_bytecode_tracer(traced, outside, prepare):
    """Installs `traced()` (True while a bytecode tracer runs converted code),
    `outside(convert, f)` (`convert(f)`, run by that tracer without tracing
    it) and `prepare()`, called first under that tracer."""
    global _bytecode_traced, _outside, _prepare
    _bytecode_traced, _outside, _prepare = traced, outside, prepare


def _override_of(f):
    """The override of `f` by identity, as a bytecode tracer can follow it
    (looked up by name: a tracer guards on what it reads)."""
    entry = _OVERRIDE_BY_NAME.get(getattr(f, "__name__", None))
    if entry is not None and entry[0] is f:
        return entry[1]
    return None


# What dynamo (torch 2.13) gives as `__class__` of a function or method
# that it traces: the descriptor `object.__class__` itself. A function or
# partial made in the trace has no `__class__` there (AttributeError); a
# method of a tensor that the trace computed has a lazy one, and dynamo
# fails on `isinstance` and `type()` of such a method: it must not reach them.
_CLASS_SLOT = object.__dict__["__class__"]
_PartialType = functools.partial


class _Traced:
    """`call(f)` (or `call_builtins(f)`, with `converter` None) under a
    bytecode tracer, which traces what `call` returns as it is. A bound
    method whose function converts becomes a partial: dynamo cannot make a
    MethodType (and each result of the hook is only called). Callable
    objects run unconverted. Methods, not module functions: dynamo guards
    each function and constant that the code it traces reads from a
    module (on every call of the compiled function), but no method of an
    object whose type it checks."""

    __slots__ = ()

    def call(self, f, converter):
        try:
            cls = f.__class__
        except AttributeError:
            cls = None
        if cls is _BuiltinFunctionType or cls is type:
            override = _override_of(f)
            return f if override is None else override
        if not (cls is None or cls is _CLASS_SLOT or cls is _FunctionType or cls is _MethodType
                or cls is _PartialType):
            return f
        # `converter` read only here: a tensor's method costs no guard on it.
        if isinstance(f, _FunctionType):
            return f if converter is None else _outside(converter, f)
        if isinstance(f, _MethodType):
            converted = self.call(f.__func__, converter)
            return f if converted is f.__func__ else functools.partial(converted, f.__self__)
        if isinstance(f, _PartialType):
            converted = self.call(f.func, converter)
            return f if converted is f.func else functools.partial(converted, *f.args, **f.keywords)
        return f


_traced = _Traced()


def call_builtins(f):
    """The call hook of non-recursive conversion: overrides builtins only."""
    if _bytecode_traced is not None and _bytecode_traced():
        return _traced.call(f, None)
    return _OVERRIDES.get(id(f), f)


def hook(converter, cache_key=CACHE_KEY):
    """The call hook (`call`, see the module docstring) whose user code goes
    through `converter(f)`, and which finds plain functions' answers under
    `cache_key` in their `__dict__` (as `remember` stores them). Each set of
    conversion options has its hook, so the options travel to callees."""

    def call(f):
        """The function to call in place of `f`; see the module docstring."""
        if _bytecode_traced is not None and _bytecode_traced():
            return _traced.call(f, converter)
        cls = type(f)
        if cls is _FunctionType:
            entry = f.__dict__.get(cache_key)
            if entry is not None and entry[0] is f.__code__ and entry[2] == _epoch:
                return entry[1]
            override = _OVERRIDES.get(id(f))  # a library function a backend overrides (np.full)
            if override is not None:
                f.__dict__[cache_key] = (f.__code__, override, _epoch)
                return override
            return converter(f)
        if cls is _BuiltinFunctionType or cls is type:
            # Builtins, C functions and bound methods of C types; classes.
            return _OVERRIDES.get(id(f), f)
        if cls is _MethodType:
            func = f.__func__
            if type(func) is _FunctionType:
                entry = func.__dict__.get(cache_key)
                if entry is not None and entry[0] is func.__code__ and entry[2] == _epoch:
                    converted = entry[1]
                    return f if converted is func else _MethodType(converted, f.__self__)
        if cls in _C_CALLABLES:
            return f
        override = _OVERRIDES.get(id(f))
        if override is not None:
            return override
        return converter(f)

    return call


def _convert(f):
    return _converter(f)


call = hook(_convert)
call_site, call_method = site_functions(call, _convert)
written_call_site, written_call_method, written_call = written_site_functions(call_site, call_method)
