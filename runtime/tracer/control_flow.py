"""Tracing `if` and loops into `cond` and `while_loop` nodes: what the
numpy tracer gives the staging core (`autograph.runtime.staging`), which
decides what a staged statement outputs and carries.

Branch outputs and loop state are nested containers whose leaves
are symbolic values, Python numbers or other Python objects. Python numbers
become constants where they meet a symbolic value; a Python number that is
loop state becomes a weak value (a Python scalar at run time) so numpy's
promotion of it stays as in eager code.
"""

import operator

import numpy as np
from autograph.runtime.staging import Counted, numpy_holds
from autograph.runtime.tracer import context, numpy_api
from autograph.runtime.tracer.errors import TracingError
from autograph.runtime.tracer.graph import Block, Node, format_type
from autograph.runtime.tracer.symbolic import SymbolicArray, SymbolicRange, SymbolicZip

__all__ = ["buffer", "buffer_row", "buffer_rows", "buffer_write", "counted", "stage_cond", "stage_loop"]

_NUMBERS = (bool, int, float, complex)
_PY_BY_KIND = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _is_sym(x):
    return type(x) is SymbolicArray


def _is_num(x):
    return type(x) in _NUMBERS


def _is_array(x):
    return isinstance(x, (np.ndarray, np.generic))


# Types: (shape, dtype, weak), with None for an unknown dimension -----------------

def is_value(x):
    return type(x) is SymbolicArray or type(x) in _NUMBERS or _is_array(x)


def typeof(x):
    if _is_sym(x):
        return (x.static_shape, x.dtype, x.weak)
    if _is_array(x):
        return (x.shape, x.dtype, False)
    return ((), context.weak_dtype(type(x)), True)


def describe(x):
    if isinstance(x, np.ndarray):
        return f"a numpy {describe_type(typeof(x))} array"
    if isinstance(x, np.generic):
        return f"a numpy {x.dtype.name} scalar ({x.item()!r})"
    if _is_sym(x):
        return f"a symbolic Python {format_type(x)}" if x.weak else format_type(x)
    return None


def describe_type(t):
    shape, dtype, weak = t
    if weak:
        return f"a Python {_PY_BY_KIND[dtype.kind].__name__}"
    return dtype.name + "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def merge(a, b):
    """The type both a and b can take (as the same statement's result), or None."""
    sa, da, wa = a
    sb, db, wb = b
    if wa and wb:
        return ((), np.result_type(da, db), True)
    if wa != wb:
        (ws, wd, _), (ss, sd, _) = (a, b) if wa else (b, a)
        if np.result_type(sd, context.python_dummy(wd, 0)) == sd:
            return (ss, sd, False)
        return None
    if da != db or len(sa) != len(sb):
        return None
    shape = []
    for x, y in zip(sa, sb, strict=True):
        if x == y:
            shape.append(x)
        elif x is None or y is None:
            shape.append(None)
        else:
            return None
    return (tuple(shape), da, False)


def cast(x, t):
    """`x` (symbolic or Python number) as a value of type `t` in the current block."""
    shape, dtype, weak = t
    if _is_num(x):
        if not numpy_holds(x, dtype):
            return None
        if weak:
            return context.constant(_PY_BY_KIND[dtype.kind](x))
        if None in shape:
            return None
        return context.constant(np.full(shape, x, dtype))
    if _is_array(x):
        if weak or x.dtype != dtype or len(x.shape) != len(shape):
            return None
        return context.constant(x)
    if typeof(x) == t:
        return x
    if weak:
        return numpy_api.to_python(_PY_BY_KIND[dtype.kind], x)
    if x.weak:
        if shape != ():
            return None
        return numpy_api.astype(x, dtype)
    if x.dtype == dtype and len(x.static_shape) == len(shape):
        return x  # only dimensions became unknown
    return None


def predicate(flag, what, loc):
    if _is_num(flag):
        return context.constant(bool(flag))
    if not _is_sym(flag):
        raise TracingError(f"the condition of {what} ({loc}) must be a value, got {flag!r}")
    if flag.static_shape != () and (None in flag.static_shape or flag.size != 1):
        raise TracingError(
            f"the condition of {what} ({loc}) must be a scalar, got {format_type(flag)}; "
            "use np.any() or np.all() to reduce it")
    return flag


# Staging --------------------------------------------------------------------

def stage_cond(pred, branches):
    """Traces both branches into one `cond` node; returns its outputs."""
    pred = predicate(pred, branches.what, branches.loc)
    outer = context.current_block()
    blocks = (Block(outer, "true branch"), Block(outer, "false branch"))
    for k, block in enumerate(blocks):
        with context.block_scope(block):
            branches.trace(k)
    branches.settle()
    for k, block in enumerate(blocks):
        with context.block_scope(block):
            block.outputs = branches.outputs(k)
    carried = branches.carried()
    return context.emit("cond", "cond", None, (pred,), {}, [t for t, _ in carried],
                        blocks=blocks, hints=[name for _, name in carried])


def stage_loop(loop):
    """Traces `loop` into a `while_loop` node; returns its outputs."""
    outer = context.current_block()
    scope = Block(outer, "while_loop")
    carried = loop.carried()
    params = []
    for (shape, dtype, weak), name in carried:
        node = Node("param", "param")
        node.block = scope
        params.append(SymbolicArray(node, 0, shape, dtype, weak, name))
        node.outputs.append(params[-1])
    test_block, body_block = Block(scope, "test"), Block(scope, "body")
    with context.block_scope(scope):
        with context.block_scope(test_block):
            test_block.outputs = [loop.cond_fun(params)]
        with context.block_scope(body_block):
            body_block.outputs = loop.body_fun(params)
    return context.emit(
        "while", "while_loop", None, tuple(loop.init()), {}, [t for t, _ in carried],
        blocks=(test_block, body_block), attrs={"params": params, "scope": scope},
        hints=[name for _, name in carried])


def counted(iterable, over_range, over_arrays):
    """A `for` loop over a symbolic range, a symbolic array's leading axis or
    `enumerate`/`zip` of symbolic arrays, as a `Counted` loop."""
    if type(iterable) is SymbolicRange:
        return Counted(iterable.start, iterable.stop, iterable.step, lambda i: i, over_range())
    if type(iterable) is range:  # set_loop_options(unroll=False): see operators.for_stmt
        return Counted(iterable.start, iterable.stop, iterable.step, lambda i: i,
                       "a `for` loop over a range not unrolled (set_loop_options(unroll=False))", len(iterable))
    if type(iterable) is SymbolicZip:
        arrays = [a if _is_sym(a) else context.constant(a) for a in iterable.arrays]
        first = iterable.start
    else:
        if iterable.weak or not iterable.static_shape:
            raise TypeError("iteration over a 0-d array")
        arrays, first = [iterable], 0
    kind = iterable.kind if type(iterable) is SymbolicZip else None
    static = [a.static_shape[0] for a in arrays if a.static_shape[0] is not None]
    if static and min(static) == 0:
        return Counted.over_arrays(kind, arrays, first, 0, over_arrays(kind), 0)
    dynamic = [numpy_api.dimension(a, 0) for a in arrays if a.static_shape[0] is None]
    lengths = ([min(static)] if static else []) + dynamic
    stop = lengths[0] if len(lengths) == 1 else context.emit_call("min", min, tuple(lengths))
    return Counted.over_arrays(kind, arrays, first, stop, over_arrays(kind),
                               stop if type(stop) is int else None)


# Lists accumulated in loops (staging/lists.py) --------------------------------

def _empty(shape, dtype):
    return np.empty((0,) + shape, dtype)


def _write(buffer, index, value):
    """`buffer` with row `index` set, grown (to twice its rows) where it has
    no such row. The loop's buffer is its own: written in place."""
    if index == len(buffer):
        grown = np.empty((max(4, 2 * index),) + buffer.shape[1:], buffer.dtype)
        grown[:index] = buffer
        buffer = grown
    buffer[index] = value
    return buffer


def buffer(t, capacity, name, what, loc):
    """A buffer that grows: of no rows, its leading dimension unknown."""
    shape, dtype, _ = t
    return context.emit("op", "empty", _empty, (tuple(shape), dtype), {},
                        [((None,) + tuple(shape), dtype, False)], effect=True)[0]


def buffer_write(buffer, index, value):
    return context.emit("op", "write", _write, (buffer, index, value), {},
                        [(buffer.static_shape, buffer.dtype, False)], effect=True)[0]


def buffer_row(buffer, index):
    return context.emit("op", "getitem", operator.getitem, (buffer, index), {},
                        [(buffer.static_shape[1:], buffer.dtype, False)])[0]


def _rows(buffer, count):
    return buffer[:count]


def buffer_rows(buffer, count):
    """The first `count` rows: a list's elements."""
    return context.emit("op", "rows", _rows, (buffer, count), {}, [(buffer.static_shape, buffer.dtype, False)])[0]
