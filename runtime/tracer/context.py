"""The tracing state: which block new nodes go to, and how a node's result
types are inferred (by running numpy on stand-in values, so shapes and dtypes
follow numpy's own rules)."""

import contextlib
import sys
import threading
import warnings

import numpy as np
from autograph.runtime.errors import _PACKAGE, user_location
from autograph.runtime.tracer import trees
from autograph.runtime.tracer.errors import ScopeError, TracingError
from autograph.runtime.tracer.graph import Node
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = [
    "active",
    "block_scope",
    "constant",
    "current_block",
    "emit",
    "emit_call",
    "infer",
    "placeholder",
    "pop_graph",
    "push_graph",
    "python_dummy",
    "suspended",
    "tracing_threads",
    "weak_dtype",
]


class _ThreadState(threading.local):
    """One thread's tracing state: the stack of graphs and blocks being
    traced, innermost last. Each thread traces into its own graphs only."""

    def __init__(self):
        self.stack = []
        self.token = object()


_state = _ThreadState()

#: One entry per thread that is tracing right now (empty: no thread is).
#: Lets a caller skip the per-thread check when nothing traces anywhere.
tracing_threads = []


def active():
    """True while this thread traces some graph."""
    return bool(_state.stack)


def current_block():
    stack = _state.stack
    if not stack:
        raise TracingError(
            f"symbolic arrays can only be used while a graph is being traced ({user_location()}); "
            "use them inside an autograph.function or a `with autograph.Graph():` block")
    return stack[-1]


def _enter(block):
    state = _state
    if not state.stack:
        tracing_threads.append(state.token)
    state.stack.append(block)
    # `active` holds the tracing thread's token: a value is usable in this
    # thread's trace only if its block is active for this thread.
    block.active = state.token


def _exit(state):
    state.stack.pop()
    if not state.stack:
        tracing_threads.remove(state.token)


def push_graph(graph):
    if graph.active and graph.active is not _state.token:
        raise TracingError("this graph is being traced by another thread; each thread traces "
                           "into graphs of its own")
    _enter(graph)


def pop_graph(graph):
    state = _state
    if not state.stack or state.stack[-1] is not graph:
        raise TracingError("graphs must be exited in the reverse order they were entered")
    _exit(state)
    graph.active = False


@contextlib.contextmanager
def block_scope(block):
    """Traces into `block` (which must be nested in the current block)."""
    was_active = block.active
    _enter(block)
    try:
        yield block
    finally:
        _exit(_state)
        block.active = was_active


@contextlib.contextmanager
def suspended():
    """No graph is being traced in this thread inside (for eager evaluation)."""
    state = _state
    saved = state.stack
    state.stack = []
    if saved:
        tracing_threads.remove(state.token)
    try:
        yield
    finally:
        if state.stack:
            tracing_threads.remove(state.token)
        state.stack = saved
        if saved:
            tracing_threads.append(state.token)


_WEAK_DTYPES = {bool: np.dtype(bool), int: np.dtype(int), float: np.dtype(float),
                complex: np.dtype(complex)}
_PY_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def weak_dtype(pytype):
    """The dtype that stands for a Python scalar type (its numpy default)."""
    return _WEAK_DTYPES[pytype]


def python_dummy(dtype, fill):
    """A Python scalar of the kind of `dtype` with value `fill`."""
    return _PY_TYPES[dtype.kind](fill)


def _check_scope(value):
    block = value.node.block
    if block is None or block.active is _state.token:
        return
    if block.active:
        raise TracingError(
            f"a symbolic value of a graph that another thread is tracing is used here ({user_location()}); "
            "symbolic values belong to the trace that made them: do not share them between threads")
    raise ScopeError(
        f"a symbolic value computed inside the {block.label} of a symbolic `if` or loop is "
        f"used outside it ({user_location()}), for example after being stored in a Python "
        "list or attribute; make it an output of the branch or loop instead (assign it to a "
        "variable that is used after the statement)")


def _traced_at():
    """(file, line) of the innermost frame outside this package: the
    user's code that emits a node (errors at run time name it)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def emit(kind, name, fn, args, kwargs, avals, effect=False, blocks=(), attrs=None, hints=None):
    """Appends a node to the current block; returns its output values."""
    block = current_block()
    node = Node(kind, name, fn, args, kwargs, blocks, effect, attrs)
    for v in node.inputs():
        _check_scope(v)
    node.block = block
    node.loc = _traced_at()
    for i, (shape, dtype, weak) in enumerate(avals):
        hint = hints[i] if hints else None
        node.outputs.append(SymbolicArray(node, i, shape, dtype, weak, hint))
    block.nodes.append(node)
    return node.outputs


def emit_call(name, fn, args=(), kwargs=None, effect=False):
    """Emits `fn(*args, **kwargs)` with result types inferred by `infer`.
    Returns a value, or a tuple/list of values when `fn` returns one."""
    kwargs = kwargs or {}
    avals, multi = infer(fn, args, kwargs)
    outs = emit("op", name, fn, args, kwargs, avals, effect=effect,
                attrs={"multi": multi} if multi else None)
    if multi:
        return multi._make(outs) if hasattr(multi, "_make") else multi(outs)
    return outs[0]


def _aval_of(result):
    if isinstance(result, (np.ndarray, np.generic)):
        return (result.shape, result.dtype, False)
    t = type(result)
    if t in _WEAK_DTYPES:
        return ((), _WEAK_DTYPES[t], True)
    raise TracingError(f"cannot stage a computation that returns {t.__name__}")


def _dimension_dummy(leaf, stand_in):
    """The stand-in of `x.shape[k]`, `len(x)` or `x.size` of an unknown
    dimension (numpy_api.dimension) that matches the stand-in of `x`."""
    axis, shape = leaf.node.attrs["dimension"], leaf.node.args[0].static_shape
    dims = [stand_in if d is None else d for d in shape]
    return int(np.prod(dims)) if axis is None else dims[axis]


def _dummy_maker(stand_in, fill):
    """Stand-ins of the symbolic leaves: arrays filled with `fill` (0 or 1),
    or with fill "eye" identity matrices in the last two axes (invertible,
    positive definite: what `inv`, `solve` and `cholesky` accept). Fill
    "dims" is 1, with the dimensions read from arrays (`x.shape[0]`) those
    of the arrays' stand-ins (what `x.reshape(x.shape[0], 1)` accepts)."""
    def dummy(leaf):
        if type(leaf) is not SymbolicArray:
            return leaf
        if leaf.weak:
            if fill == "dims" and "dimension" in leaf.node.attrs:
                return _dimension_dummy(leaf, stand_in)
            return python_dummy(leaf.dtype, 0 if fill == 0 else 1)
        shape = tuple(stand_in if d is None else d for d in leaf.static_shape)
        if fill == "eye" and len(shape) >= 2:
            return np.array(np.broadcast_to(np.eye(shape[-2], shape[-1], dtype=leaf.dtype), shape))
        base = np.full((), 0 if fill == 0 else 1, leaf.dtype)
        size = int(np.prod(shape)) if shape else 1
        if size <= 4096:
            return np.full(shape, base)
        return np.broadcast_to(base, shape)
    return dummy


def _run(fn, args, kwargs, stand_in, fills):
    """`fn` on stand-ins, with the first of `fills` that numpy accepts (all
    zeros are singular: `inv` refuses them, `average` divides by their sum):
    (result, fill)."""
    first_error = None
    for fill in fills:
        dummy = _dummy_maker(stand_in, fill)
        a = trees.map_leaves(dummy, args)
        k = trees.map_leaves(dummy, kwargs)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn(*a, **k), fill
        except Exception as e:
            if first_error is None:
                first_error = e
    raise first_error


def _avals(result):
    if isinstance(result, (tuple, list)):
        # A tuple, a list, or a namedtuple (`np.linalg.eigh` gives EighResult).
        return [_aval_of(r) for r in result], type(result)
    return [_aval_of(result)], None


def infer(fn, args, kwargs):
    """Result types of `fn(*args, **kwargs)`: ([(shape, dtype, weak)], multi)
    where multi is the tuple, list or namedtuple type when fn returns several
    arrays.

    Runs `fn` on stand-ins twice (unknown dimensions as 2 then 3, array
    contents 0 then 1, or identity matrices where numpy refuses those);
    dimensions that differ between the runs are unknown (None): they depend
    on unknown input dimensions or on the data."""
    first, fill = _run(fn, args, kwargs, 2, (0, 1, "eye", "dims"))
    avals, multi = _avals(first)
    try:
        # Other contents first: a result shape that depends on them differs.
        second, _ = _run(fn, args, kwargs, 3, [f for f in (1, "eye", 0, "dims") if f != fill] + [fill])
    except Exception:
        return avals, multi
    avals2, _ = _avals(second)
    if len(avals2) != len(avals):
        raise TracingError(f"the number of results of {getattr(fn, '__name__', fn)} depends on the data")
    merged = []
    for (s1, d1, w1), (s2, _, _) in zip(avals, avals2, strict=True):
        if len(s1) != len(s2):
            raise TracingError(f"the rank of the result of {getattr(fn, '__name__', fn)} depends on the data")
        merged.append((tuple(a if a == b else None for a, b in zip(s1, s2, strict=True)), d1, w1))
    return merged, multi


def placeholder(graph, shape, dtype, name=None):
    """A new input of `graph`."""
    shape = tuple(None if d is None else int(d) for d in shape)
    node = Node("placeholder", "placeholder")
    node.block = graph
    value = SymbolicArray(node, 0, shape, np.dtype(dtype), False, name)
    node.outputs.append(value)
    graph.params.append(value)
    return value


def constant(value, dtype=None):
    """A constant node in the current block: a numpy array (strong) or a
    Python scalar (weak)."""
    if type(value) in _WEAK_DTYPES and dtype is None:
        aval = ((), _WEAK_DTYPES[type(value)], True)
    else:
        value = np.asarray(value, dtype)
        aval = (value.shape, value.dtype, False)
    return emit("const", "constant", None, (), {}, [aval], attrs={"value": value})[0]
