"""The numpy tracer as a backend of the runtime operators."""

import builtins
import operator

import numpy as np
from autograph.runtime import staging
from autograph.runtime.errors import fresh
from autograph.runtime.staging import StagingBackend
from autograph.runtime.tracer import context, control_flow, numpy_api
from autograph.runtime.tracer.symbolic import SymbolicArray, SymbolicRange, SymbolicZip

__all__ = ["TracerBackend"]

_NUMBERS = (bool, int, float, complex)


def _check(ok, error):
    if not ok:
        raise fresh(error)


def _range_len(start, stop, step):
    return len(range(int(start), int(stop), int(step)))


def _is_sym(x):
    return type(x) is SymbolicArray


def _weakish(x):
    return type(x) in _NUMBERS or (_is_sym(x) and x.weak)


class TracerBackend(StagingBackend):
    """Stages control flow on `SymbolicArray` values into graph nodes."""

    name = "autograph tracer"
    traced = "symbolic"

    def owns_type(self, cls):
        return issubclass(cls, (SymbolicArray, SymbolicRange, SymbolicZip))

    def tracing(self):
        # Symbolic arrays exist only while some thread traces (context.py).
        return bool(context.tracing_threads)

    def concrete(self, value):
        return None if type(value) is SymbolicArray else bool(value)

    is_value = staticmethod(control_flow.is_value)
    typeof = staticmethod(control_flow.typeof)
    merge = staticmethod(control_flow.merge)
    cast = staticmethod(control_flow.cast)
    describe_type = staticmethod(control_flow.describe_type)
    predicate = staticmethod(control_flow.predicate)
    stage_cond = staticmethod(control_flow.stage_cond)
    stage_loop = staticmethod(control_flow.stage_loop)

    def describe(self, x):
        return control_flow.describe(x) or StagingBackend.describe(self, x)

    buffer = staticmethod(control_flow.buffer)
    buffer_write = staticmethod(control_flow.buffer_write)
    buffer_row = staticmethod(control_flow.buffer_row)
    buffer_rows = staticmethod(control_flow.buffer_rows)

    def exact_rows(self, rows, length):
        return rows

    def row_at(self, rows, length, index, name):
        return control_flow.buffer_row(rows, index)

    def counted(self, iterable):
        return control_flow.counted(iterable, self.over_range, self.over_arrays)

    def logical_not(self, value):
        if value.weak:
            return numpy_api._weak_op(operator.not_, (value,))
        return np.logical_not(value)

    def logical_and(self, a, b):
        if a.dtype.kind == "b" and b.dtype.kind == "b":
            return a & b  # Python's `&` on bools: no ufunc call at run time
        return np.logical_and(a, b)

    def logical_or(self, a, b):
        if a.dtype.kind == "b" and b.dtype.kind == "b":
            return a | b
        return np.logical_or(a, b)

    def print_(self, *args, **kwargs):
        context.emit("op", "print", builtins.print, args, kwargs, [], effect=True)

    def assert_(self, test, msg_fn):
        self.check(test, AssertionError(msg_fn()) if msg_fn is not None else AssertionError())

    def check(self, ok, error):
        context.emit("op", "assert" if type(error) is AssertionError else "raise", _check, (ok, error), {}, [],
                     effect=True)

    def setitem(self, target, index, value):
        return numpy_api.setitem(target, index, value)

    def builtin(self, func):
        return _BUILTINS.get(func)

    def intercepts(self):
        # np.stack: of a list appended to in a loop, whose length is traced (staging/lists.py)
        return (np.asarray, np.array, np.asanyarray, np.ascontiguousarray, np.stack) + tuple(_SIZED)


def _len(obj):
    if type(obj) is SymbolicRange:
        return context.emit_call("len", _range_len, (obj.start, obj.stop, obj.step))
    if _is_sym(obj) and obj.static_shape and obj.static_shape[0] is None:
        return numpy_api.dimension(obj, 0)
    return builtins.len(obj)


def _range(*args):
    if not any(_is_sym(a) for a in args):
        return builtins.range(*args)
    return SymbolicRange(*staging.range_bounds(
        args, _is_sym, lambda a: a.static_shape == () and a.dtype.kind in "iub"))


def _loopable(x):
    """An array a graph loop can index along its leading axis."""
    if _is_sym(x):
        return not x.weak and x.ndim >= 1
    return type(x) is np.ndarray and x.ndim >= 1


def _enumerate(iterable, start=0):
    if _loopable(iterable) and _is_sym(iterable) and (
            type(start) is int or (_is_sym(start) and start.static_shape == () and start.dtype.kind in "iu")):
        return SymbolicZip("enumerate", (iterable,), start)
    return builtins.enumerate(iterable, start)


def _zip(*iterables, **kwargs):
    if not kwargs and iterables and all(_loopable(a) for a in iterables) \
            and any(_is_sym(a) for a in iterables):
        return SymbolicZip("zip", iterables)
    return builtins.zip(*iterables, **kwargs)  # noqa: B905 - the caller's own arguments


def _minmax(pyfunc, better):
    def impl(*args, **kwargs):
        if kwargs or not args:
            return pyfunc(*args, **kwargs)
        if len(args) == 1:
            x = args[0]
            if not _is_sym(x):
                return pyfunc(x)
            if x.ndim != 1:
                raise ValueError("The truth value of an array with more than one element is "
                                 "ambiguous. Use a.any() or a.all()")
            return (np.min if pyfunc is builtins.min else np.max)(x)
        avals = {(a.static_shape, a.dtype, a.weak) if _is_sym(a) else type(a) for a in args}
        if len(avals) == 1:
            # Python's own min/max on the run-time values: exact semantics.
            return context.emit_call(pyfunc.__name__, pyfunc, args)
        result = args[0]
        for a in args[1:]:
            result = np.where(better(a, result), a, result)
        return result
    return impl


def _sum(iterable, start=0):
    if not _is_sym(iterable):
        return builtins.sum(iterable, start)
    if iterable.weak or not iterable.static_shape:
        raise TypeError(f"'{type(iterable).__name__}' object is not iterable")
    dtype = np.dtype(int) if iterable.dtype.kind == "b" else iterable.dtype
    total = np.add.reduce(iterable, axis=0, dtype=dtype)
    if type(start) is int and start == 0:
        return total
    return start + total


def _to(pytype):
    def impl(*args, **kwargs):
        if len(args) == 1 and not kwargs and _is_sym(args[0]):
            return numpy_api.to_python(pytype, args[0])
        return pytype(*args, **kwargs)
    return impl


def _anyall(pyfunc, npfunc):
    def impl(iterable):
        if not _is_sym(iterable):
            return pyfunc(iterable)
        return numpy_api.to_python(bool, npfunc(iterable))
    return impl


def _integer_scalar(x, what):
    if x.static_shape != () or x.dtype.kind not in "iub":
        raise TypeError(f"{what} must be integer scalars, got a symbolic {x.dtype.name} array "
                        f"of shape {x.static_shape}")
    return x


def _sized(func):
    """`np.zeros(shape)` and friends where a size is symbolic: the result's
    dimension is unknown (None) while tracing, numpy's own at run time."""
    def impl(shape, *args, **kwargs):
        dims = shape if type(shape) in (tuple, list) else (shape,)
        if not any(_is_sym(d) for d in dims):
            return func(shape, *args, **kwargs)
        for d in dims:
            if _is_sym(d):
                _integer_scalar(d, "array dimensions")
        known = tuple(None if _is_sym(d) else operator.index(d) for d in dims)
        dtype = func(tuple(1 if d is None else d for d in known), *args, **kwargs).dtype
        return context.emit("op", func.__name__, func, (tuple(dims),) + args, kwargs,
                            [(known, dtype, False)])[0]
    impl.__name__ = func.__name__
    return impl


def _arange(*args, **kwargs):
    """`np.arange` with a symbolic bound: its length is unknown while tracing."""
    if not any(_is_sym(a) for a in args + tuple(kwargs.values())):
        return np.arange(*args, **kwargs)
    stand_ins = []
    for a in args:
        if _is_sym(a):
            _integer_scalar(a, "np.arange() bounds") if a.dtype.kind != "f" else None
            a = context.python_dummy(a.dtype, 1) if a.weak else np.ones((), a.dtype)[()]
        stand_ins.append(a)
    dtype = np.arange(*stand_ins, **{k: v for k, v in kwargs.items() if not _is_sym(v)}).dtype
    return context.emit("op", "arange", np.arange, args, kwargs, [((None,), dtype, False)])[0]


_SIZED = {np.zeros: _sized(np.zeros), np.ones: _sized(np.ones), np.empty: _sized(np.empty),
          np.full: _sized(np.full), np.arange: _arange}


_BUILTINS = {
    builtins.len: _len,
    builtins.range: _range,
    builtins.enumerate: _enumerate,
    builtins.zip: _zip,
    builtins.abs: operator.abs,
    builtins.min: _minmax(builtins.min, operator.lt),
    builtins.max: _minmax(builtins.max, operator.gt),
    builtins.sum: _sum,
    builtins.int: _to(int),
    builtins.float: _to(float),
    builtins.bool: _to(bool),
    builtins.complex: _to(complex),
    builtins.any: _anyall(builtins.any, np.any),
    # numpy converts these without __array_function__: the call hook must ask.
    np.asarray: numpy_api.asarray_override(np.asarray),
    np.array: numpy_api.asarray_override(np.array),
    np.asanyarray: numpy_api.asarray_override(np.asanyarray),
    np.ascontiguousarray: numpy_api.asarray_override(np.ascontiguousarray),
    builtins.all: _anyall(builtins.all, np.all),
    **_SIZED,
}
