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

from __future__ import annotations

import collections
import functools
import inspect
import logging
import types
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeVar, overload

import numpy as np

from autograph import captured_state, signature_cache
from autograph.runtime.errors import recording_errors, swallowed
from autograph.runtime.staging import places
from autograph.runtime.staging.lists import TracedList
from autograph.runtime.tracer import context, passes, trees
from autograph.runtime.tracer.casting import cast
from autograph.runtime.tracer.compiler import compile_graph
from autograph.runtime.tracer.errors import TracingError
from autograph.runtime.tracer.explicit import Graph
from autograph.runtime.tracer.graph import format_type
from autograph.runtime.tracer.results import copy_result, protect_results
from autograph.runtime.tracer.symbolic import SymbolicArray
from autograph.signature_cache import (
    LRUDict,
    SignatureCache,
    array_shapes,
    describe_key,
    generalize,
    most_changed,
    relax,
    signature_key,
)

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from autograph.api import ModuleNames
    from autograph.runtime.tracer.graph import Graph as TracedGraph

__all__ = ["ConcreteFunction", "Graph", "Spec", "TracedFunction", "function", "py_function",
           "run_functions_eagerly"]

P = ParamSpec("P")
R = TypeVar("R")

logger = logging.getLogger("autograph")

#: A function traced more often than this logs a warning.
RETRACE_WARNING_THRESHOLD = 5


class Spec:
    """The shape (None for an unknown dimension) and dtype of an array."""

    __slots__ = ("dtype", "shape")

    shape: tuple[int | None, ...]
    dtype: np.dtype[Any]

    def __init__(self, shape: Sequence[int | None], dtype: DTypeLike = "float64") -> None:
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
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"Spec: dtype {dtype!r} is not a numpy dtype; write one such as 'float64', "
                            "'float32', 'int64' or 'bool'") from None

    def __repr__(self) -> str:
        return f"Spec({self.shape}, {self.dtype.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def is_compatible_with(self, array: np.ndarray[Any, Any] | np.generic) -> bool:
        return (array.dtype == self.dtype and array.ndim == len(self.shape)
                and all(d is None or d == a for d, a in zip(self.shape, array.shape)))


signature_cache.SPEC_TYPES.add(Spec)   # a Spec argument is keyed as the array it describes


#: What input_signature= takes: per argument a Spec, or Spec's arguments as a tuple ((3,), 'int64').
InputSignature = Sequence[Spec | tuple[Sequence[int | None]] | tuple[Sequence[int | None], "DTypeLike"]]


def _specs(input_signature: InputSignature, function: Callable[..., Any]) -> list[Spec]:
    """`input_signature` as a list of Spec, one per argument of `function`: a
    Spec, or a (shape, dtype) or (shape,) tuple."""
    name = getattr(function, "__name__", "the function")
    if isinstance(input_signature, Spec):
        raise TypeError(f"input_signature of {name} is one Spec; it is a list with one Spec per argument: "
                        f"write input_signature=[{input_signature!r}]")
    if not isinstance(input_signature, (list, tuple)):
        raise TypeError(f"input_signature of {name} must be a list with one Spec per argument "
                        f"(input_signature=[Spec((3,)), Spec((), 'int64')]), got {input_signature!r}")
    specs = []
    for k, s in enumerate(input_signature):
        if isinstance(s, Spec):
            specs.append(s)
        elif isinstance(s, (list, tuple)) and 1 <= len(s) <= 2:
            specs.append(Spec(*s))
        else:
            raise TypeError(f"input_signature of {name}: argument {k} is described by {s!r}; write "
                            "Spec(shape, dtype), such as Spec((3,)) or Spec((None, 2), 'float32')")
    return specs


# py_function

def py_function(fn: Callable[..., Any], args: Iterable[Any], result_spec: Spec | Sequence[Spec]) -> Any:
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
    specs: list[Any] = list(result_spec) if isinstance(result_spec, (list, tuple)) else [result_spec]
    if not all(isinstance(s, Spec) for s in specs):
        hint = f"Spec({tuple(specs)!r})" if multi and all(
            d is None or isinstance(d, int) for d in specs) else "Spec(shape, dtype)"
        raise TypeError(f"py_function {name}: result_spec must be a Spec or a list/tuple of Specs, "
                        f"got {result_spec!r}; for one result write {hint}")

    def call(*values: Any) -> Any:
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
                        effect=True, attrs={"multi": tuple, "host": fn} if multi else {"host": fn})
    return tuple(outs) if multi else outs[0]


def _returned(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return "None" if value is None else f"a {type(value).__name__}"


# Arguments: which become placeholders (the key of a call is in signature_cache).

def _is_input(leaf: object) -> bool:
    return isinstance(leaf, (np.ndarray, np.generic, Spec))


def _array_leaves(args: Any) -> list[Any]:
    return [leaf for leaf in trees.leaves(args) if _is_input(leaf)]


class ConcreteFunction:
    """One traced graph of an `autograph.function`, compiled for numpy.
    Call it with arguments of the signature it was traced for."""

    def __init__(self, name: str, graph: TracedGraph, output_tree: Any, arg_names: Sequence[str],
                 static: Any = None, held: Sequence[Any] = (), captured: Any = None) -> None:
        self.name = name
        # What the trace read outside its arguments (captured_state.CapturedState), or None.
        self.captured = captured
        # The arguments' Python values (numbers, strings, ...), which the
        # trace took as constants; arrays as _ARRAY. (`held`: the objects
        # `static` names by id(), kept alive so that no other takes their id.)
        self._static = static
        self._held = held
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the graph; the arguments must be of the signature it was
        traced for: arrays of the placeholders' dtypes and shapes, the same
        Python values."""
        stale = self.stale()
        if stale is not None:
            raise TracingError(f"{self.name} was traced when '{stale}' held another value (it is read as a "
                               "constant by the graph); call the autograph.function itself, which traces again")
        if self._static is not None and _static_key((args, kwargs)) != self._static:
            raise TypeError(f"{self.name} was traced for other Python values or argument structure than "
                            "these; call the autograph.function itself, which traces again for new ones")
        leaves = _array_leaves((args, kwargs))
        params = self.traced_graph.params
        if len(leaves) != len(params):
            raise TypeError(f"{self.name} was traced for {len(params)} array arguments, got {len(leaves)}")
        for leaf, p in zip(leaves, params, strict=True):
            if isinstance(leaf, Spec) or leaf.dtype != p.dtype or leaf.ndim != len(p.static_shape) or any(
                    d is not None and d != n for d, n in zip(p.static_shape, leaf.shape, strict=True)):
                got = repr(leaf) if isinstance(leaf, Spec) else f"{leaf.dtype.name}{list(leaf.shape)}"
                raise TypeError(f"argument '{p.name}' of {self.name} is {got}, the graph was traced for "
                                f"{format_type(p)}")
        return self._call_leaves(*leaves)

    def stale(self) -> str | None:
        """The name of what the trace read outside the arguments and is
        now changed (a global, an attribute, an array written in place), or
        None while the graph is the program eager code would run."""
        return None if self.captured is None else self.captured.changed()

    def _call_tree(self, *leaves: Any) -> Any:
        results = self._fn(*leaves)
        it = iter(results)

        def result(v: Any) -> Any:
            if v is _OUT:
                return next(it)
            if v is _LIST_OUT:  # a list appended to in a staged loop: its rows, as Python's list holds them
                return list(next(it))
            # Arrays the trace computed in Python (`np.zeros(3)`) are new in every call, as in eager code.
            return copy_result(v)
        return trees.map_leaves(result, self.output_tree)

    def __str__(self) -> str:
        return str(self.graph)

    def to_dot(self) -> str:
        dot: str = self.graph.to_dot()
        return dot

    @property
    def source(self) -> str:
        """The Python source the graph compiles to."""
        source: str = self.compiled.source
        return source


_OUT = object()
_LIST_OUT = object()
_LAZY_RESULTS = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))


def _trace(name: str, python_function: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
           arg_names: Sequence[str]) -> ConcreteFunction:
    graph = Graph(name)
    placeholders = iter(range(10 ** 9))

    def make(leaf: Any, path: str) -> Any:
        if isinstance(leaf, Spec):
            return context.placeholder(graph, leaf.shape, leaf.dtype, path)
        leaf = np.asarray(leaf)
        return context.placeholder(graph, leaf.shape, leaf.dtype, path)

    symbolic_args = []
    for value, arg_name in zip(args, arg_names):
        symbolic_args.append(_with_placeholders(value, arg_name, make))
    symbolic_kwargs = {k: _with_placeholders(v, k, make) for k, v in kwargs.items()}
    del placeholders
    functions, roots = captured_state.roots(name, python_function, args, kwargs, arg_names)
    inputs = captured_state.array_inputs(_array_leaves((args, kwargs)))
    before = captured_state.CapturedState(functions, roots, inputs, check=False)
    context.push_graph(graph)
    try:
        with recording_errors() as raised:
            result = python_function(*symbolic_args, **symbolic_kwargs)
        error = swallowed(raised)
        if error is not None:
            raise error
        if isinstance(result, _LAZY_RESULTS):
            raise TracingError(
                f"{name} returned a {type(result).__name__} while it was traced: a generator (or coroutine) "
                "runs its body only when it is iterated, after the trace has ended, so autograph.function "
                "cannot trace it. Return the values instead (a list, a tuple, or np.stack of them), or "
                "trace a function that iterates the generator and returns what it needs")
    finally:
        context.pop_graph(graph)
    captured_state.check_no_leaks(name, functions, roots)
    # (What py_function calls when the graph runs reads its state then: not captured.)
    hosts = [node.attrs["host"] for node in graph.walk() if "host" in node.attrs]
    captured = captured_state.CapturedState(functions, roots, inputs, hosts)
    drawn = captured.drawn_since(before)
    if drawn is not None:
        raise TracingError(
            f"{name} drew random numbers from {drawn} while it was traced: the graph would return the "
            "numbers of the trace on every call, where eager code draws new ones. Draw them outside the "
            "function and pass them as arguments, or draw them in autograph.py_function")
    written = captured.written_since(before)
    if written is not None:
        raise TracingError(
            f"{name} wrote into the numpy array '{written}' in place while it was traced, an array that "
            "outlives the call (a global, a closure's variable or an argument's attribute): the traced "
            "graph would not write into it again when it runs. Pass the array as an argument and return "
            "the new value (or write into a copy made inside the function)")
    for array_name, size in captured.large:
        logger.warning(
            "autograph.function %s reads the numpy array '%s' (%d elements) outside its arguments: the graph "
            "keeps it as it was when traced, and a change written into it in place later is not seen (an "
            "array of over %d elements is not compared on every call, which would cost its size). Pass it "
            "as an argument, or make it read-only (%s.flags.writeable = False) if it does not change",
            name, array_name, size, places._ARRAY_LIMIT, array_name)
    outputs = []

    def collect(leaf: Any) -> Any:
        if type(leaf) is SymbolicArray:
            outputs.append(leaf)
            return _OUT
        if type(leaf) is TracedList:  # its length is known when the graph runs: its rows stacked
            stacked = leaf.stacked()
            if type(stacked) is SymbolicArray:
                outputs.append(stacked)
                return _LIST_OUT
        return leaf

    tree = trees.map_leaves(collect, result)
    graph.outputs = outputs
    if tree is _OUT:
        tree = None
    held: list[Any] = []
    return ConcreteFunction(name, graph, tree, arg_names, _static_key((args, kwargs), held), held,
                            captured or None)


_ARRAY = object()


def _static_key(args: Any, held: list[Any] | None = None) -> Any:
    return trees.map_leaves(lambda leaf: _ARRAY if _is_input(leaf) else signature_key(leaf, held), args)


def _with_placeholders(value: Any, path: str, make: Callable[[Any, str], Any]) -> Any:
    # Walks what `trees.leaves` walks, so placeholders and fed leaves agree.
    t = type(value)
    if t is tuple or t is list:
        return t(_with_placeholders(v, f"{path}_{i}", make) for i, v in enumerate(value))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return t(*(_with_placeholders(v, f"{path}_{n}", make) for n, v in zip(value._fields, value)))
    if t is slice:
        return slice(*(_with_placeholders(v, f"{path}_{n}", make)
                       for n, v in zip(("start", "stop", "step"), (value.start, value.stop, value.step))))
    if t is dict:
        return {k: _with_placeholders(v, f"{path}_{k}", make) for k, v in value.items()}
    if _is_input(value):
        return make(value, path)
    return value


_MISSING = object()

#: Non-empty while `run_functions_eagerly(True)` is in effect.
_run_eagerly: list[bool] = []


class run_functions_eagerly:
    """`run_functions_eagerly(True)` makes every `autograph.function` call run
    the Python function as written (not converted, nothing traced,
    `trace_count` unchanged), so breakpoints and `print` work as in plain
    Python; `run_functions_eagerly(False)` traces again. The setting is
    global (all threads). As a context manager it restores the previous
    setting on exit:

        with autograph.run_functions_eagerly(True):
            f(x)          # runs f's Python code
    """

    def __init__(self, enabled: bool = True) -> None:
        self._previous = bool(_run_eagerly)
        _set_run_eagerly(enabled)

    def __enter__(self) -> run_functions_eagerly:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        _set_run_eagerly(self._previous)
        return False


def _set_run_eagerly(enabled: bool) -> None:
    if enabled and not _run_eagerly:
        _run_eagerly.append(True)
    elif not enabled:
        _run_eagerly.clear()


def _make_entry(args: Sequence[Any], call: Callable[..., Any], used: list[bool],
                stale: Callable[[], str | None] | None = None) -> Callable[..., Any]:
    """`__call__` for a TracedFunction: runs `call` directly when the
    arguments have the types (and for arrays the shapes and dtypes) of
    `args`, no keywords, no thread is tracing and functions do not run
    eagerly (and marks `used[0]` for the cache's recency); else the generic
    path (`_fallback`)."""
    names = [f"a{i}" for i in range(len(args))]
    namespace: dict[str, Any] = {"_call": call, "_fallback": _fallback, "_MISSING": _MISSING,
                 "_tracing": context.tracing_threads, "_eagerly": _run_eagerly, "_used": used,
                 "__name__": __name__}
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
    checks = tests + ["not rest", "not kwargs", "not _tracing", "not _eagerly"]
    if stale is not None:   # the graph read state outside its arguments: unchanged?
        namespace["_stale"] = stale
        checks.append("_stale() is None")
    source = (f"def __call__(self, {params}/, *rest, **kwargs):\n"
              f"    if {' and '.join(checks)}:\n"
              f"        _used[0] = True\n"
              f"        return _call({passed})\n"
              f"    return _fallback(self, ({passed}{',' if len(names) == 1 else ''}), rest, kwargs)\n")
    exec(compile(source, "<autograph entry>", "exec"), namespace)  # noqa: S102 - our own code
    entry: Callable[..., Any] = namespace["__call__"]
    return entry


def _fallback(self: TracedFunction[..., Any], given: tuple[Any, ...], rest: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
    args = tuple(a for a in given if a is not _MISSING) + rest
    if kwargs:
        return self._slow_call(args, kwargs, None)
    return self._generic_call(*args)


#: The cache key of the one graph of a function with an input_signature.
_SIGNATURE_KEY = ("input_signature",)


class TracedFunction(Generic[P, R]):
    """The result of `autograph.function(f)`: converts `f`, traces it on its
    first call per argument signature, then runs the cached graph.

    The graphs live in a `SignatureCache` of `signature_cache.CACHE_SIZE`
    entries (least recently used evicted first). Calls from several threads
    are safe: each thread traces into its own graph, and a signature traced
    by two threads at once is traced once."""

    def __init__(self, python_function: Callable[P, R], input_signature: InputSignature | None = None,
                 autograph: bool = True, reduce_retracing: bool = False, **conversion: Any) -> None:
        self.python_function = python_function
        self._conversion = conversion  # to_graph's strict, include, exclude
        self.input_signature = None if input_signature is None else _specs(input_signature, python_function)
        self.autograph = autograph
        self.reduce_retracing = reduce_retracing
        self._converted: Callable[P, R] | None = None
        self.__name__ = getattr(python_function, "__name__", "function")
        self._cache = SignatureCache(self.__name__)
        self._fast_keys: dict[Any, Any] = {}     # (shape, dtype) or numpy scalar type per argument -> cache key
        self._general = LRUDict()  # reduce_retracing: relaxed key -> the key last traced for it
        self._recent_keys: collections.deque[Any] = collections.deque(maxlen=RETRACE_WARNING_THRESHOLD + 2)
        self._warned = False
        functools.update_wrapper(self, python_function)
        try:
            self._signature: inspect.Signature | None = inspect.signature(python_function)
            params = list(self._signature.parameters.values())
        except (TypeError, ValueError):
            self._signature, params = None, []
        self._param_names = [p.name for p in params
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._positional_only = sum(1 for p in params if p.kind == p.POSITIONAL_ONLY)
        self._varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)

    @property
    def trace_count(self) -> int:
        """How many times the function has been traced."""
        return self._cache.traces

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> TracedFunction[P, R]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> Callable[..., R]: ...

    def __get__(self, instance: object, owner: type | None = None) -> TracedFunction[P, R] | Callable[..., R]:
        if instance is None:
            return self
        method: Callable[..., R] = self
        return functools.partial(method, instance)

    def _arg_names(self, count: int) -> list[str]:
        names = self._param_names[:count]
        for i in range(len(names), count):
            names.append(f"{self._varargs or 'args'}[{i - len(self._param_names)}]")
        return names

    def _function_to_trace(self) -> Callable[P, R]:
        if self._converted is None:
            if self.autograph:
                from autograph import to_graph
                self._converted = to_graph(self.python_function, **self._conversion)
            else:
                self._converted = self.python_function
        return self._converted

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        # Replaced per instance by `_make_entry` once a signature is cached.
        result: R = self._generic_call(*args) if not kwargs else self._slow_call(args, kwargs, None)
        return result

    def _generic_call(self, *args: Any) -> Any:
        if not _run_eagerly and not (context.tracing_threads and context.active()):
            # Every argument a numpy array or scalar (the common call), keyed
            # by scalar type or (shape, dtype).
            key: Any = []
            for a in args:
                t = type(a)
                if t is np.ndarray:
                    key.append((a.shape, a.dtype))
                elif t in _NUMPY_SCALARS:
                    key.append(t)
                else:
                    break
            else:
                key = tuple(key)
                cache_key = self._fast_keys.get(key)
                if cache_key is not None:
                    concrete = self._cache.get(cache_key)
                    if concrete is not None and (concrete.captured is None or concrete.stale() is None):
                        return concrete._call_leaves(*args)
                return self._slow_call(args, {}, key)
        return self._slow_call(args, {}, None)

    def _remember(self, fast_key: Any, args: Sequence[Any], cache_key: Any, concrete: ConcreteFunction) -> None:
        """Caches `cache_key` for calls whose arguments have the types, shapes
        and dtypes of `args`, and makes `call` the fast entry: the latest
        signature is checked first, with a few `is` tests, in `__call__`."""
        with self._cache.lock:
            if len(self._fast_keys) >= 4 * self._cache.size:
                self._fast_keys.clear()
            self._fast_keys[fast_key] = cache_key
            used = self._cache.pin(cache_key)
            cls = type(self)
            if cls is TracedFunction:
                # A class of its own, whose `__call__` checks the latest signature.
                cls = self.__class__ = type("TracedFunction", (TracedFunction,),
                                            {"__module__": __name__, "__qualname__": "TracedFunction"})
            stale = None if concrete.captured is None else concrete.stale
            entry = _make_entry(args, concrete._call_leaves, used, stale)
            cls.__call__ = entry  # type: ignore[method-assign]  # the class is this instance's own

    def _slow_call(self, args: tuple[Any, ...], kwargs: dict[str, Any], fast_key: Any) -> Any:
        if context.active():
            # Called while another function is traced: inline.
            return self._function_to_trace()(*args, **kwargs)
        if _run_eagerly:
            return self.python_function(*args, **kwargs)
        if kwargs:
            args, kwargs = self._bind(args, kwargs)
        if self.input_signature is not None:
            concrete = self._signature_concrete()
            inputs = self._signature_inputs(args)
            if fast_key is not None and all(x is y for x, y in zip(inputs, args)):
                self._remember(fast_key, args, _SIGNATURE_KEY, concrete)
            return concrete._call_leaves(*inputs)
        cache_key, concrete = self._lookup(args, kwargs)
        if fast_key is not None:
            self._remember(fast_key, args, cache_key, concrete)
        return concrete._call_leaves(*_array_leaves((args, kwargs)))

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Keyword arguments bound to the parameters they name, so that
        `f(x, k=2)` is the call `f(x, 2)`; what remains are keyword-only and
        `**kwargs` arguments."""
        if self._signature is None:
            return args, kwargs
        # The common case: the keywords name the parameters after the positional arguments.
        given, end = len(args), len(args) + len(kwargs)
        if self._positional_only <= given and end <= len(self._param_names):
            try:
                return args + tuple(kwargs[name] for name in self._param_names[given:end]), {}
            except KeyError:
                pass
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}(): {e}") from None
        # Sorted, as in the cache key: the graph's inputs come in this order.
        return bound.args, dict(sorted(bound.kwargs.items()))

    def _lookup(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ConcreteFunction]:
        """(cache key, ConcreteFunction) for a call, tracing if needed."""
        held: list[Any] = []
        key = tuple(signature_key(a, held) for a in args)
        if kwargs:
            key += (tuple((k, signature_key(v, held)) for k, v in sorted(kwargs.items())),)
        concrete = self._fresh(key)
        if concrete is not None:
            return key, concrete
        if self.reduce_retracing:
            relaxed = relax(key)
            with self._cache.lock:
                seen = self._general.get(relaxed)
                general = None if seen is None else generalize(seen, key)
                if general is None:
                    general = key
                self._general[relaxed] = general
            if general != key:
                self._fresh(general)
                return general, self._cache.get_or_trace(
                    general, lambda: self._trace_generalized(general, args, kwargs), held)
        return key, self._cache.get_or_trace(key, lambda: self._trace(key, args, kwargs), held)

    def _trace_generalized(self, general: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ConcreteFunction:
        """Traces with Specs of the generalized shapes in place of the arrays."""
        shapes = iter(array_shapes(general))

        def spec(leaf: Any) -> Any:
            return Spec(next(shapes), leaf.dtype) if _is_input(leaf) else leaf

        args, kwargs = trees.map_leaves(spec, (args, kwargs))
        return self._trace(general, args, kwargs)

    def _fresh(self, key: Any) -> ConcreteFunction | None:
        """The graph cached for `key` if the state it read outside its
        arguments is unchanged; a graph for which it changed is dropped
        (the call traces again, as eager code reads the new state)."""
        concrete: ConcreteFunction | None = self._cache.get(key)
        if concrete is None or concrete.captured is None:
            return concrete
        changed = concrete.stale()
        if changed is None:
            return concrete
        self._cache.discard(key, concrete)
        logger.debug("autograph.function %r traces again: %r changed since it was traced", self.__name__, changed)
        return None

    def _signature_concrete(self) -> ConcreteFunction:
        self._fresh(_SIGNATURE_KEY)
        concrete: ConcreteFunction = self._cache.get_or_trace(
            _SIGNATURE_KEY, lambda: self._trace(None, tuple(self.input_signature or ()), {}))
        return concrete

    def _signature_inputs(self, args: Sequence[Any]) -> list[Any]:
        specs = self.input_signature or []
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

    def _trace(self, key: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> ConcreteFunction:
        fn = self._function_to_trace()
        concrete = _trace(self.__name__, fn, args, kwargs, self._arg_names(len(args)))
        if key is not None:
            with self._cache.lock:
                self._recent_keys.append(key)
                self._maybe_warn()
        return concrete

    def _maybe_warn(self) -> None:
        # One trace is in progress, not yet counted.
        if self._warned or self._cache.traces <= RETRACE_WARNING_THRESHOLD:
            return
        self._warned = True
        keys = list(self._recent_keys)
        pos, seen, shapes = most_changed(keys)
        names = self._arg_names(max(len(k) for k in keys))
        name = names[pos] if pos < len(names) else "keyword arguments"
        logger.warning(
            "autograph.function %r has been retraced %d times; argument %r changed between "
            "calls (%s). Each new Python value or array shape/dtype triggers a new trace: pass "
            "numbers as numpy arrays, or give an input_signature with None dimensions%s.",
            self.__name__, self._cache.traces, name, ", ".join(describe_key(k) for k in seen),
            "" if self.reduce_retracing or not shapes else ", or use reduce_retracing=True")

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The traced graph for these arguments (traces if needed). Arguments
        may be Specs."""
        if self.input_signature is not None:
            return self._signature_concrete()
        if kwargs:
            args, kwargs = self._bind(args, kwargs)
        return self._lookup(args, kwargs)[1]


signature_cache.key_by_identity(TracedFunction)   # an attribute of a traced object
signature_cache.key_by_identity(ConcreteFunction)


@overload
def function(func: Callable[P, R], *, input_signature: InputSignature | None = None, autograph: bool = True,
             reduce_retracing: bool = False, strict: bool | None = None, include: ModuleNames = (),
             exclude: ModuleNames = ()) -> TracedFunction[P, R]: ...
@overload
def function(func: None = None, *, input_signature: InputSignature | None = None, autograph: bool = True,
             reduce_retracing: bool = False, strict: bool | None = None, include: ModuleNames = (),
             exclude: ModuleNames = ()) -> Callable[[Callable[P, R]], TracedFunction[P, R]]: ...


def function(func: Callable[P, R] | None = None, *, input_signature: InputSignature | None = None,
             autograph: bool = True, reduce_retracing: bool = False, strict: bool | None = None,
             include: ModuleNames = (), exclude: ModuleNames = ()
             ) -> TracedFunction[P, R] | Callable[[Callable[P, R]], TracedFunction[P, R]]:
    """Decorator: compiles `func` into traced graphs (see TracedFunction).

    `input_signature`: a list of Spec; one trace serves every matching input.
    `autograph=False`: trace `func` without converting it first.
    `reduce_retracing=True`: when a call retraces only because array shapes
    changed, trace once more with those dimensions unknown (None), so that
    later shapes of the same ranks reuse that graph.
    `strict`, `include`, `exclude`: how `func` and its callees are converted
    (see `autograph.to_graph`)."""
    conversion: dict[str, Any] = {"strict": strict, "include": include, "exclude": exclude}
    if func is None:
        return lambda f: function(f, input_signature=input_signature, autograph=autograph,
                                  reduce_retracing=reduce_retracing, **conversion)
    if not callable(func):
        raise TypeError(f"autograph.function takes the function to trace, got {func!r}: write "
                        "autograph.function(f), or decorate f with @autograph.function or "
                        "@autograph.function(input_signature=[...])")
    return TracedFunction(func, input_signature, autograph, reduce_retracing, **conversion)
