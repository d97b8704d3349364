"""numpy on symbolic arrays, through numpy's own protocols.

`__array_ufunc__` stages every ufunc (all methods: `__call__`, `reduce`,
`accumulate`, `outer`, `at` excepted). `__array_function__` stages the
functions in `SUPPORTED_FUNCTIONS` (the documented set); any other numpy
function raises `UnsupportedFunctionError`, which names it and points to
`autograph.py_function`.

Result shapes and dtypes are numpy's own: they come from running the very
numpy function on stand-in values of the inputs' dtypes (zeros, ones, or
identity matrices where numpy refuses singular ones; see `context.infer`),
so promotion follows NEP 50 with Python scalars weak. Functions that return
a tuple, list or namedtuple (`np.linalg.eigh`) stage one output per item.
"""

import operator

import numpy as np
from autograph.runtime.errors import user_location
from autograph.runtime.tracer import context, inplace, trees
from autograph.runtime.tracer.errors import TracingError, UnsupportedFunctionError
from autograph.runtime.tracer.symbolic import SymbolicArray

__all__ = [
    "SUPPORTED_FUNCTIONS",
    "array_function",
    "array_ufunc",
    "astype",
    "binary",
    "broadcast_shapes",
    "dimension",
    "getitem",
    "is_symbolic",
    "item",
    "setitem",
    "unary",
]

_SUPPORTED_NAMES = [
    "sum", "mean", "max", "min", "amax", "amin", "prod", "any", "all", "argmax", "argmin", "nansum",
    "nanmean", "nanmax", "nanmin", "where", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "cross",
    "kron", "reshape", "transpose", "concatenate", "stack", "vstack", "hstack", "dstack", "column_stack",
    "split", "array_split", "zeros_like", "ones_like", "full_like", "empty_like", "clip", "cumsum", "cumprod",
    "diff", "asarray", "asanyarray", "array", "ascontiguousarray", "copy", "round", "around", "squeeze",
    "expand_dims", "broadcast_to", "broadcast_arrays", "swapaxes", "moveaxis", "rollaxis", "ravel", "flip",
    "fliplr", "flipud", "roll", "sort", "argsort", "std", "var", "median", "average", "percentile",
    "quantile", "trace", "diagonal", "diag", "tril", "triu", "tile", "repeat", "take", "take_along_axis",
    "nonzero", "argwhere", "count_nonzero", "isclose", "allclose", "array_equal", "nan_to_num", "atleast_1d",
    "atleast_2d", "atleast_3d", "searchsorted", "digitize", "interp", "convolve", "meshgrid", "real", "imag",
    "angle", "conj", "pad"
]

_LINALG_NAMES = ["norm", "inv", "det", "solve", "pinv", "cholesky", "eigh", "qr", "svd", "slogdet", "matrix_power"]

SUPPORTED_FUNCTIONS = frozenset(
    [getattr(np, n) for n in _SUPPORTED_NAMES if hasattr(np, n)]
    + [getattr(np.linalg, n) for n in _LINALG_NAMES])

_PY_SCALARS = (bool, int, float, complex)


def is_symbolic(x):
    return type(x) is SymbolicArray


def _weakish(x):
    t = type(x)
    return t in _PY_SCALARS or (t is SymbolicArray and x.weak)


def _operand(x):
    t = type(x)
    return (t is SymbolicArray or t in _PY_SCALARS or isinstance(x, (np.ndarray, np.generic))
            or t is list or t is tuple)


def _impl(func):
    return getattr(func, "_implementation", func)


# Elementwise ufuncs: dtype from numpy on 0-d stand-ins, shape by broadcasting.

def _dtype_dummy(x):
    t = type(x)
    if t is SymbolicArray:
        if x.weak:
            return context.python_dummy(x.dtype, 0)
        return np.zeros((), x.dtype)
    if t in _PY_SCALARS or isinstance(x, np.generic):
        return x
    if isinstance(x, np.ndarray):
        return np.zeros((), x.dtype)
    return np.zeros((), np.asarray(x).dtype)


def _shape(x):
    if type(x) is SymbolicArray:
        return x.static_shape
    return np.shape(x)


def broadcast_shapes(*shapes):
    """numpy's broadcasting, where None is an unknown dimension."""
    if not any(None in s for s in shapes):
        return np.broadcast_shapes(*shapes)
    ndim = max(len(s) for s in shapes)
    result = []
    for axis in range(-ndim, 0):
        dims = [s[axis] for s in shapes if len(s) >= -axis]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            text = " ".join("(" + ",".join("?" if d is None else str(d) for d in s) + ")" for s in shapes)
            raise ValueError(f"operands could not be broadcast together with shapes {text}")
        if known:
            result.append(known.pop())
        elif None in dims:
            result.append(None)
        else:
            result.append(1)
    return tuple(result)


def _elementwise(ufunc, inputs, kwargs, pyop=None):
    with np.errstate(all="ignore"):
        result = ufunc(*[_dtype_dummy(x) for x in inputs], **kwargs)
    shape = broadcast_shapes(*[_shape(x) for x in inputs])
    results = result if ufunc.nout > 1 else (result,)
    avals = [(shape, np.asarray(r).dtype, False) for r in results]
    # `pyop`: the Python operator the user wrote (`a > b`); the executor may
    # emit it instead of the ufunc call where both mean the same.
    attrs = {"pyop": pyop} if pyop is not None and not kwargs else None
    outs = context.emit("op", ufunc.__name__, ufunc, tuple(inputs), kwargs, avals, attrs=attrs)
    return tuple(outs) if ufunc.nout > 1 else outs[0]


def array_ufunc(ufunc, method, inputs, kwargs, pyop=None):
    if kwargs.get("out") is not None:
        raise TracingError(
            f"numpy.{ufunc.__name__} with out= cannot write into a symbolic array "
            f"({user_location()}); use the returned value instead")
    kwargs.pop("out", None)
    if method == "__call__":
        if ufunc.signature is None and not any(is_symbolic(v) for v in trees.leaves(kwargs)):
            return _elementwise(ufunc, inputs, kwargs, pyop)
        return context.emit_call(ufunc.__name__, ufunc, tuple(inputs), kwargs)
    if method == "at":
        raise TracingError(
            f"numpy.{ufunc.__name__}.at updates in place and cannot be traced ({user_location()})")
    return context.emit_call(f"{ufunc.__name__}.{method}", getattr(ufunc, method),
                             tuple(inputs), kwargs)


def _weak_op(pyop, inputs):
    """A Python operator on Python-scalar values: runs as Python at run time."""
    dummies = [context.python_dummy(x.dtype, 1) if is_symbolic(x) else x for x in inputs]
    result = pyop(*dummies)
    name = getattr(pyop, "__name__", "op").strip("_")
    if type(result) is tuple:
        avals = [((), context.weak_dtype(type(r)), True) for r in result]
        return tuple(context.emit("op", name, pyop, tuple(inputs), {}, avals))
    aval = ((), context.weak_dtype(type(result)), True)
    return context.emit("op", name, pyop, tuple(inputs), {}, [aval])[0]


def binary(ufunc, pyop, a, b):
    """`a <op> b` where one side is symbolic."""
    if not (_operand(a) and _operand(b)):
        return NotImplemented
    if _weakish(a) and _weakish(b):
        return _weak_op(pyop, (a, b))
    return array_ufunc(ufunc, "__call__", (a, b), {}, pyop)


def unary(ufunc, pyop, a):
    if a.weak:
        return _weak_op(pyop, (a,))
    return array_ufunc(ufunc, "__call__", (a,), {}, pyop)


# Functions with special meanings.

def _asarray(a, dtype=None, order=None, *, copy=None, ndmin=0, **ignored):
    """`np.asarray(a, dtype, copy=copy)` of a symbolic `a`: `a` itself where
    numpy would return it, else a new value (a copy or a cast)."""
    if not is_symbolic(a):
        with context.suspended():
            return np.asarray(a, dtype)
    if dtype is not None and (np.dtype(dtype) != a.dtype or a.weak):
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        result = astype(a, dtype)
    elif a.weak:
        result = context.emit_call("asarray", np.asarray, (a,))
    elif copy:
        result = context.emit_call("copy", np.copy, (a,))
    else:
        result = a
    if ndmin > result.ndim:
        result = getitem(result, (None,) * (ndmin - result.ndim) + (Ellipsis,))
    return result


def _array(a, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """`np.array`: a copy unless `copy` is False or None."""
    return _asarray(a, dtype, copy=copy, ndmin=ndmin)


def _copy(a, order="K", subok=False):
    """`np.copy`, `x.copy()`: always a new array, which the caller may write into."""
    return _asarray(a, copy=True)


def asarray_override(func):
    """`np.asarray` and friends for the call hook: numpy converts their
    argument with `__array__`, which cannot return a symbolic array."""
    convert = _array if func is np.array else _asarray

    def impl(a, dtype=None, *args, **kwargs):
        if is_symbolic(a):
            return convert(a, dtype, *args, **kwargs)
        if type(a) in (list, tuple) and any(is_symbolic(v) for v in trees.leaves(a)):
            result = np.stack([impl(v) if type(v) in (list, tuple) else v for v in a])
            return result if dtype is None else astype(result, dtype)
        return func(a, dtype, *args, **kwargs)
    impl.__name__ = func.__name__
    return impl


def _dim(x, axis):
    return x.shape[axis]


def dimension(x, axis):
    """`x.shape[axis]` of an unknown dimension (`x.size` for axis None): a
    symbolic Python int, read when the graph runs. Axis 0 is the node that
    `len(x)` gives."""
    aval, attrs = [((), context.weak_dtype(int), True)], {"dimension": axis}
    if axis == 0:
        return context.emit("op", "len", len, (x,), {}, aval, attrs=attrs)[0]
    if axis is None:
        return context.emit("op", "size", np.size, (x,), {}, aval, attrs=attrs)[0]
    return context.emit("op", "dim", _dim, (x, axis), {}, aval, attrs=attrs)[0]


def _np_shape(a):
    return a.shape


def _np_ndim(a):
    return a.ndim


def _np_size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


_SPECIAL = {
    np.asarray: _asarray, np.asanyarray: _asarray, np.array: _array,
    np.ascontiguousarray: _asarray, np.copy: _copy,
    np.shape: _np_shape, np.ndim: _np_ndim, np.size: _np_size,
}


def array_function(func, types, args, kwargs):
    special = _SPECIAL.get(func)
    if special is not None:
        return special(*args, **kwargs)
    if func in SUPPORTED_FUNCTIONS:
        return context.emit_call(func.__name__, _impl(func), args, kwargs)
    module = getattr(func, "__module__", "numpy") or "numpy"
    raise UnsupportedFunctionError(
        f"{module}.{func.__name__} is not supported on symbolic arrays ({user_location()}); "
        f"wrap the call in autograph.py_function(fn, args, result_spec) to run it on concrete "
        "values when the graph runs")


# Indexing, item update, casts.

def getitem(x, index):
    if x.weak:
        raise TypeError(f"'{context.python_dummy(x.dtype, 0).__class__.__name__}' object is not subscriptable")
    return context.emit_call("getitem", operator.getitem, (x, index))


def setitem(target, index, value):
    """Functional `target[index] = value`: a new value; the target keeps its
    dtype and shape (numpy casts `value` as the assignment would). A
    concrete array target (`out = np.zeros(3)` in the traced function) is
    updated functionally too when the index or value is symbolic."""
    if not is_symbolic(target):
        if type(target) is not np.ndarray:
            target[index] = value   # Python's own error, as eager code gives it
            return target
        if not target.flags.writeable:
            raise ValueError("assignment destination is read-only")
        return _setitem(target, index, value)
    if target.weak:
        raise TypeError("a Python scalar does not support item assignment")
    return _setitem(target, index, value)


def _setitem(target, index, value):
    # Where the index holds a symbolic bound (`x[0:n] = v`), which part of
    # the target it selects, and so the value's shape that fits it, is known
    # only when the graph runs: the update keeps the target's type, and numpy
    # checks the value then.
    parts = index if type(index) is tuple else (index,)
    if any(type(p) is slice and any(is_symbolic(b) for b in (p.start, p.stop, p.step)) for p in parts):
        shape = target.static_shape if is_symbolic(target) else target.shape
        return context.emit("op", "setitem", inplace.setitem_impl, (target, index, value), {},
                            [(shape, target.dtype, False)])[0]
    return context.emit_call("setitem", inplace.setitem_impl, (target, index, value))


def _astype(x, dtype):
    return x.astype(dtype)


def astype(x, dtype):
    dtype = np.dtype(dtype)
    if x.weak:
        return context.emit("op", "astype", dtype.type, (x,), {}, [((), dtype, False)])[0]
    return context.emit("op", "astype", _astype, (x, dtype), {}, [(x.static_shape, dtype, False)])[0]


def _item(x):
    return x.item()


def item(x):
    if x.weak:
        return x
    return context.emit_call("item", _item, (x,))


def to_python(pytype, x):
    """`int(x)`, `float(x)`, `bool(x)`, `complex(x)` of a symbolic value: a
    Python scalar (weak) at run time."""
    if x.weak and x.dtype == context.weak_dtype(pytype):
        return x
    return context.emit_call(pytype.__name__, pytype, (x,))
