"""Traced execution with autograph's numpy tracer: `function` (the
counterpart of `tf.function`), `Spec`, `Graph` (explicit-graph flow) and
`py_function`.

    @autograph.function
    def f(x, n):
        ...                       # plain numpy code with Python control flow

    f(np.ones(3), np.int64(4))    # converts f, traces it into a graph, runs it
    f(np.zeros(3), np.int64(2))   # same signature: runs the cached graph
    print(f.get_concrete_function(np.ones(3), np.int64(4)))   # the graph
"""

import functools
import inspect
import logging

import numpy as np

from autograph.runtime.tracer import context, passes, trees
from autograph.runtime.tracer.casting import cast
from autograph.runtime.tracer.executor import compile_graph
from autograph.runtime.tracer.graph import Graph, format_type
from autograph.runtime.tracer.results import copy_result, protect_results
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = ["ConcreteFunction", "Graph", "Spec", "TracedFunction", "function", "py_function"]

logger = logging.getLogger("autograph")

#: A function traced more often than this logs a warning.
RETRACE_WARNING_THRESHOLD = 5


class Spec:
    """The shape (None for an unknown dimension) and dtype of an array."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype="float64"):
        if not isinstance(shape, (tuple, list)):
            hint = f"; for a 1-d array of length {shape} write Spec(({shape},))" if isinstance(shape, int) else ""
            raise TypeError(f"Spec: shape must be a tuple of dimensions (ints, None for unknown), got "
                            f"{shape!r}{hint}")
        dims = []
        for d in shape:
            if d is not None:
                if isinstance(d, bool) or not hasattr(d, "__index__"):
                    raise TypeError(f"Spec: dimension {d!r} of shape {tuple(shape)!r} is not an int "
                                    "(None for an unknown dimension)")
                d = d.__index__()
                if d < 0:
                    raise ValueError(f"Spec: dimension {d} of shape {tuple(shape)!r} is negative; "
                                     "write None for an unknown dimension")
            dims.append(d)
        self.shape = tuple(dims)
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return f"Spec({self.shape}, {self.dtype.name!r})"

    def __eq__(self, other):
        return isinstance(other, Spec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def is_compatible_with(self, array):
        return (array.dtype == self.dtype and array.ndim == len(self.shape)
                and all(d is None or d == a for d, a in zip(self.shape, array.shape)))


# py_function

def py_function(fn, args, result_spec):
    """Calls `fn(*args)` with concrete numpy values when the graph runs.

    `result_spec` is a Spec (one result) or a list/tuple of Specs (a tuple
    of results). Results are cast to their Spec's dtype by numpy's
    'same_kind' rule (float64 to float32, never float to int). Outside a
    trace it just calls `fn(*args)`."""
    args = tuple(args)
    if not context.active():
        return fn(*args)
    name = getattr(fn, "__name__", "py_function")
    multi = isinstance(result_spec, (list, tuple))
    specs = list(result_spec) if multi else [result_spec]
    if not all(isinstance(s, Spec) for s in specs):
        hint = f"Spec({tuple(result_spec)!r})" if multi and all(
            d is None or isinstance(d, int) for d in result_spec) else "Spec(shape, dtype)"
        raise TypeError(f"py_function {name}: result_spec must be a Spec or a list/tuple of Specs, "
                        f"got {result_spec!r}; for one result write {hint}")

    def call(*values):
        result = fn(*values)
        if multi and type(result) not in (tuple, list):
            raise ValueError(f"py_function {name} returned {_returned(result)}, its result_spec lists "
                             f"{len(specs)} results: return a tuple of them")
        results = result if multi else (result,)
        if len(results) != len(specs):
            raise ValueError(f"py_function {name} returned {len(results)} values, its result_spec has "
                             f"{len(specs)}")
        out = []
        for i, (r, s) in enumerate(zip(results, specs, strict=True)):
            where = f" as result {i}" if multi else ""
            if r is None:
                raise ValueError(f"py_function {name} returned None{where}, its result_spec is {s}")
            r = cast(r, s.dtype, f"the value py_function {name} returned{where} (result_spec {s})")
            if not s.is_compatible_with(r):
                raise ValueError(f"py_function {name} returned an array of shape {r.shape}{where}, "
                                 f"its result_spec is {s}")
            out.append(r)
        return tuple(out) if multi else out[0]

    call.__name__ = name
    avals = [(s.shape, s.dtype, False) for s in specs]
    outs = context.emit("op", f"py_function[{call.__name__}]", call, args, {}, avals,
                        effect=True, attrs={"multi": tuple} if multi else None)
    return tuple(outs) if multi else outs[0]


def _returned(value):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return "None" if value is None else f"a {type(value).__name__}"


# Arguments: which become placeholders, which are part of the cache key.

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def _key(obj):
    t = type(obj)
    if t is np.ndarray:
        return (obj.shape, obj.dtype)
    if t in _SCALARS:
        return (t, obj)
    if isinstance(obj, np.generic):
        return ((), obj.dtype)
    if t is tuple or t is list:
        return (t,) + tuple(_key(x) for x in obj)
    if t is dict:
        return (dict,) + tuple((k, _key(v)) for k, v in obj.items())
    if t is Spec:
        return (obj.shape, obj.dtype)
    if isinstance(obj, np.ndarray):
        return (t, obj.shape, obj.dtype)
    try:
        hash(obj)
        return (t, obj)
    except TypeError:
        return (t, id(obj))


def _is_input(leaf):
    return isinstance(leaf, (np.ndarray, np.generic, Spec))


def _array_leaves(args):
    return [leaf for leaf in trees.leaves(args) if _is_input(leaf)]


def _describe_key(key):
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], np.dtype):
        return f"{key[1].name}{list(key[0])}"
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], type):
        return repr(key[1])
    return repr(key)


class ConcreteFunction:
    """One traced graph of an `autograph.function`, compiled for numpy.
    Call it with arguments of the signature it was traced for."""

    def __init__(self, name, graph, output_tree, arg_names, static=None):
        self.name = name
        # The arguments' Python values (numbers, strings, ...), which the
        # trace took as constants; arrays as _ARRAY.
        self._static = static
        self.traced_graph = graph
        optimized, _ = graph.clone()
        passes.optimize(optimized)
        protect_results(graph, graph.outputs, optimized)
        self.graph = optimized
        self.output_tree = output_tree
        self.arg_names = arg_names
        self._simple = output_tree is None and len(optimized.outputs) == 1
        self.compiled = compile_graph(optimized, bare=self._simple)
        self._fn = self.compiled.fn
        # What a call with the array leaves runs.
        self._call_leaves = self._fn if self._simple else self._call_tree

    def __call__(self, *args, **kwargs):
        """Runs the graph; the arguments must be of the signature it was
        traced for: arrays of the placeholders' dtypes and shapes, the same
        Python values."""
        if self._static is not None and _static_key((args, kwargs)) != self._static:
            raise TypeError(f"{self.name} was traced for other Python values or argument structure than "
                            "these; call the autograph.function itself, which traces again for new ones")
        leaves = _array_leaves((args, kwargs))
        params = self.traced_graph.params
        if len(leaves) != len(params):
            raise TypeError(f"{self.name} was traced for {len(params)} array arguments, got {len(leaves)}")
        for leaf, p in zip(leaves, params, strict=True):
            if isinstance(leaf, Spec) or leaf.dtype != p.dtype or leaf.ndim != len(p.shape) or any(
                    d is not None and d != n for d, n in zip(p.shape, leaf.shape, strict=True)):
                got = repr(leaf) if isinstance(leaf, Spec) else f"{leaf.dtype.name}{list(leaf.shape)}"
                raise TypeError(f"argument '{p.name}' of {self.name} is {got}, the graph was traced for "
                                f"{format_type(p)}")
        return self._call_leaves(*leaves)

    def _call_tree(self, *leaves):
        results = self._fn(*leaves)
        it = iter(results)
        # Arrays the trace computed in Python (`np.zeros(3)`) are new in every call, as in eager code.
        return trees.map_leaves(lambda v: next(it) if v is _OUT else copy_result(v), self.output_tree)

    def __str__(self):
        return str(self.graph)

    def to_dot(self):
        return self.graph.to_dot()

    @property
    def source(self):
        """The Python source the graph compiles to."""
        return self.compiled.source


_OUT = object()
_trace_stack = context._stack
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))


def _trace(name, python_function, args, kwargs, arg_names):
    graph = Graph(name)
    placeholders = iter(range(10 ** 9))

    def make(leaf, path):
        if isinstance(leaf, Spec):
            return context.placeholder(graph, leaf.shape, leaf.dtype, path)
        leaf = np.asarray(leaf)
        return context.placeholder(graph, leaf.shape, leaf.dtype, path)

    symbolic_args = []
    for value, arg_name in zip(args, arg_names):
        symbolic_args.append(_with_placeholders(value, arg_name, make))
    symbolic_kwargs = {k: _with_placeholders(v, k, make) for k, v in kwargs.items()}
    del placeholders
    context.push_graph(graph)
    try:
        result = python_function(*symbolic_args, **symbolic_kwargs)
    finally:
        context.pop_graph(graph)
    outputs = []

    def collect(leaf):
        if type(leaf) is SymbolicArray:
            outputs.append(leaf)
            return _OUT
        return leaf

    tree = trees.map_leaves(collect, result)
    graph.outputs = outputs
    if tree is _OUT:
        tree = None
    return ConcreteFunction(name, graph, tree, arg_names, _static_key((args, kwargs)))


_ARRAY = object()


def _static_key(args):
    return trees.map_leaves(lambda leaf: _ARRAY if _is_input(leaf) else _key(leaf), args)


def _with_placeholders(value, path, make):
    t = type(value)
    if t is tuple or t is list:
        return t(_with_placeholders(v, f"{path}_{i}", make) for i, v in enumerate(value))
    if t is dict:
        return {k: _with_placeholders(v, f"{path}_{k}", make) for k, v in value.items()}
    if _is_input(value):
        return make(value, path)
    return value


_MISSING = object()


def _make_entry(args, call):
    """`__call__` for a TracedFunction: runs `call` directly when the
    arguments have the types (and for arrays the shapes and dtypes) of
    `args` and no keywords, else the generic path (`_fallback`)."""
    names = [f"a{i}" for i in range(len(args))]
    namespace = {"_call": call, "_fallback": _fallback, "_MISSING": _MISSING,
                 "_trace_stack": _trace_stack}
    tests = []
    for i, (name, a) in enumerate(zip(names, args)):
        namespace[f"t{i}"] = type(a)
        tests.append(f"type({name}) is t{i}")
        if type(a) is np.ndarray:
            namespace[f"d{i}"] = a.dtype
            namespace[f"s{i}"] = a.shape
            tests.append(f"{name}.dtype is d{i} and {name}.shape == s{i}")
    params = "".join(f"{n}=_MISSING, " for n in names)
    passed = ", ".join(names)
    source = (f"def __call__(self, {params}/, *rest, **kwargs):\n"
              f"    if {' and '.join(tests + ['not rest', 'not kwargs', 'not _trace_stack'])}:\n"
              f"        return _call({passed})\n"
              f"    return _fallback(self, ({passed}{',' if len(names) == 1 else ''}), rest, kwargs)\n")
    exec(compile(source, "<autograph entry>", "exec"), namespace)  # noqa: S102 - our own code
    return namespace["__call__"]


def _fallback(self, given, rest, kwargs):
    args = tuple(a for a in given if a is not _MISSING) + rest
    if kwargs:
        return self._slow_call(args, kwargs, None)
    return self._generic_call(*args)


class TracedFunction:
    """The result of `autograph.function(f)`: converts `f`, traces it on its
    first call per argument signature, then runs the cached graph."""

    def __init__(self, python_function, input_signature=None, autograph=True):
        self.python_function = python_function
        self.input_signature = None if input_signature is None else [
            s if isinstance(s, Spec) else Spec(*s) for s in input_signature]
        self.autograph = autograph
        self.trace_count = 0
        self._converted = None
        self._cache = {}
        self._fast_cache = {}
        self._keys = []
        self._warned = False
        self._signature_function = None
        self.__name__ = getattr(python_function, "__name__", "function")
        functools.update_wrapper(self, python_function)
        try:
            params = list(inspect.signature(python_function).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._param_names = [p.name for p in params
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def _arg_names(self, count):
        names = self._param_names[:count]
        for i in range(len(names), count):
            names.append(f"{self._varargs or 'args'}[{i - len(self._param_names)}]")
        return names

    def _function_to_trace(self):
        if self._converted is None:
            if self.autograph:
                from autograph import to_graph
                self._converted = to_graph(self.python_function)
            else:
                self._converted = self.python_function
        return self._converted

    def __call__(self, *args, **kwargs):
        # Replaced per instance by `_make_entry` once a signature is cached.
        if not kwargs:
            return self._generic_call(*args)
        return self._slow_call(args, kwargs, None)

    def _generic_call(self, *args):
        if not _trace_stack:
            # Every argument a numpy array or scalar (the common call), keyed
            # by scalar type or (shape, dtype).
            key = []
            for a in args:
                t = type(a)
                if t is np.ndarray:
                    key.append((a.shape, a.dtype))
                elif t in _NUMPY_SCALARS:
                    key.append(t)
                else:
                    break
            else:
                concrete = self._fast_cache.get(tuple(key))
                if concrete is not None:
                    return concrete(*args)
                return self._slow_call(args, {}, tuple(key))
        return self._slow_call(args, {}, None)

    def _remember(self, fast_key, args, call):
        """Caches `call` for calls whose arguments have the types, shapes and
        dtypes of `args`, and makes it the fast entry: the latest signature
        is checked first, with a few `is` tests, in `__call__` itself."""
        self._fast_cache[fast_key] = call
        cls = type(self)
        if cls is TracedFunction:
            # A class of its own, whose `__call__` checks the latest signature.
            cls = self.__class__ = type("TracedFunction", (TracedFunction,),
                                        {"__module__": __name__, "__qualname__": "TracedFunction"})
        cls.__call__ = _make_entry(args, call)

    def _slow_call(self, args, kwargs, fast_key):
        if context.active():
            # Called while another function is traced: inline.
            return self._function_to_trace()(*args, **kwargs)
        if self.input_signature is not None:
            concrete = self._signature_concrete()
            inputs = self._signature_inputs(args)
            if fast_key is not None and all(x is y for x, y in zip(inputs, args)):
                self._remember(fast_key, args, concrete._call_leaves)
            return concrete._call_leaves(*inputs)
        key = tuple(_key(a) for a in args)
        if kwargs:
            key += (tuple((k, _key(v)) for k, v in sorted(kwargs.items())),)
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._trace_new(key, args, kwargs)
        if fast_key is not None:
            self._remember(fast_key, args, concrete._call_leaves)
        return concrete._call_leaves(*_array_leaves((args, kwargs)))

    def _signature_concrete(self):
        if self._signature_function is None:
            self._signature_function = self._trace_new(None, tuple(self.input_signature), {})
        return self._signature_function

    def _signature_inputs(self, args):
        specs = self.input_signature
        if len(args) != len(specs):
            raise TypeError(f"{self.__name__} takes {len(specs)} arguments (its input_signature), "
                            f"got {len(args)}")
        leaves = []
        for arg, spec, name in zip(args, specs, self._arg_names(len(args))):
            # numpy values keep their type and must have the dtype; Python
            # values (numbers, lists) are cast by numpy's 'same_kind' rule.
            if type(arg) is np.ndarray or type(arg) in _NUMPY_SCALARS:
                array = arg
                if array.dtype != spec.dtype:
                    raise TypeError(f"argument '{name}' of {self.__name__} has dtype "
                                    f"{array.dtype.name}, its input_signature says {spec}")
            else:
                array = cast(arg, spec.dtype, f"argument '{name}' of {self.__name__} (input_signature {spec})")
            if not spec.is_compatible_with(array):
                raise TypeError(f"argument '{name}' of {self.__name__} has shape "
                                f"{array.shape}, its input_signature says {spec}")
            leaves.append(array)
        return leaves

    def _trace_new(self, key, args, kwargs):
        fn = self._function_to_trace()
        concrete = _trace(self.__name__, fn, args, kwargs, self._arg_names(len(args)))
        self.trace_count += 1
        if key is not None:
            self._cache[key] = concrete
            self._keys.append((args, key))
            self._maybe_warn()
        return concrete

    def _maybe_warn(self):
        if self._warned or self.trace_count - 1 <= RETRACE_WARNING_THRESHOLD:
            return
        self._warned = True
        keys = [k for _, k in self._keys]
        width = max(len(k) for k in keys)
        changes = []
        for pos in range(width):
            column = [k[pos] if pos < len(k) else None for k in keys]
            changes.append(sum(1 for a, b in zip(column, column[1:]) if a != b))
        pos = max(range(width), key=lambda p: changes[p])
        names = self._arg_names(width)
        name = names[pos] if pos < len(names) else "keyword arguments"
        seen = ", ".join(_describe_key(k[pos]) for k in keys if pos < len(k))
        logger.warning(
            "autograph.function %r has been retraced %d times; argument %r changed between "
            "calls (%s). Each new Python value or array shape/dtype triggers a new trace: pass "
            "numbers as numpy arrays, or give an input_signature with None dimensions.",
            self.__name__, self.trace_count - 1, name, seen)

    def get_concrete_function(self, *args, **kwargs):
        """The traced graph for these arguments (traces if needed). Arguments
        may be Specs."""
        if self.input_signature is not None:
            return self._signature_concrete()
        key = tuple(_key(a) for a in args)
        if kwargs:
            key += (tuple((k, _key(v)) for k, v in sorted(kwargs.items())),)
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._trace_new(key, args, kwargs)
        return concrete


def function(func=None, *, input_signature=None, autograph=True):
    """Decorator: compiles `func` into traced graphs (see TracedFunction).

    `input_signature`: a list of Spec; one trace serves every matching input.
    `autograph=False`: trace `func` without converting it first."""
    if func is None:
        return lambda f: TracedFunction(f, input_signature, autograph)
    return TracedFunction(func, input_signature, autograph)
