"""The symbolic array: a value in a graph being traced, with a static shape
(`static_shape`, None for an unknown dimension) and dtype.

`x.shape` is the shape as the program sees it: a tuple of Python ints for
the known dimensions and, for an unknown one, a symbolic Python int (the
dimension as the graph reads it when it runs), so `n = x.shape[0]` then
`range(n)`, `n * 2` or `n == 0` compute what eager code computes (never
with None). `x.size` is the same.

A *weak* symbolic value stands for a Python scalar (a `range` counter, a
Python number that became loop state, `int(x)`): at run time it is a Python
int/float/bool, so numpy's promotion rules (NEP 50) treat it exactly as they
treat the Python number in eager code.
"""

import operator

import numpy as np
from autograph.runtime.errors import generated_construct, unconverted_note, user_location
from autograph.runtime.staging.values import TracedRange
from autograph.runtime.tracer.errors import SymbolicBoolError, TracingError

__all__ = ["SymbolicArray", "SymbolicRange", "SymbolicZip"]


def _api():
    from autograph.runtime.tracer import numpy_api
    return numpy_api


def _binary(ufunc, pyop):
    def method(self, other):
        return _api().binary(ufunc, pyop, self, other)

    def rmethod(self, other):
        return _api().binary(ufunc, pyop, other, self)

    return method, rmethod


def _unary(ufunc, pyop):
    def method(self):
        return _api().unary(ufunc, pyop, self)
    return method


def _method(func_name):
    def method(self, *args, **kwargs):
        return getattr(np, func_name)(self, *args, **kwargs)
    method.__name__ = func_name
    return method


class SymbolicArray:
    """A traced value. Behaves like a numpy array of `shape` and `dtype`."""

    __slots__ = ("__weakref__", "dtype", "index", "name", "node", "static_shape", "weak")

    def __init__(self, node, index, shape, dtype, weak=False, name=None):
        self.node = node
        self.index = index
        self.static_shape = shape
        self.dtype = dtype
        self.weak = weak
        self.name = name

    __hash__ = object.__hash__

    @property
    def shape(self):
        shape = self.static_shape
        if None not in shape:
            return shape
        return tuple(_api().dimension(self, k) if d is None else d for k, d in enumerate(shape))

    @property
    def ndim(self):
        return len(self.static_shape)

    @property
    def size(self):
        if None in self.static_shape:
            return _api().dimension(self, None)
        n = 1
        for d in self.static_shape:
            n *= d
        return n

    @property
    def T(self):
        return np.transpose(self)

    def __repr__(self):
        from autograph.runtime.tracer.graph import format_type
        return f"<symbolic {format_type(self)} from {self.node.name}>"

    # numpy's protocols.

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _api().array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _api().array_function(func, types, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        raise TracingError(
            f"a symbolic array has no concrete value while tracing ({user_location()}); "
            "numpy tried to convert it to a concrete array. Use numpy functions on it directly "
            "(lists of symbolic arrays: np.stack), or wrap the computation in "
            "autograph.py_function(fn, args, result_spec) to run it on concrete values")

    # Python's operators.

    __add__, __radd__ = _binary(np.add, operator.add)
    __sub__, __rsub__ = _binary(np.subtract, operator.sub)
    __mul__, __rmul__ = _binary(np.multiply, operator.mul)
    __truediv__, __rtruediv__ = _binary(np.true_divide, operator.truediv)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide, operator.floordiv)
    __mod__, __rmod__ = _binary(np.remainder, operator.mod)
    __pow__, __rpow__ = _binary(np.power, operator.pow)
    __matmul__, __rmatmul__ = _binary(np.matmul, operator.matmul)
    __and__, __rand__ = _binary(np.bitwise_and, operator.and_)
    __or__, __ror__ = _binary(np.bitwise_or, operator.or_)
    __xor__, __rxor__ = _binary(np.bitwise_xor, operator.xor)
    __lshift__, __rlshift__ = _binary(np.left_shift, operator.lshift)
    __rshift__, __rrshift__ = _binary(np.right_shift, operator.rshift)
    __divmod__, __rdivmod__ = _binary(np.divmod, divmod)
    __lt__, _ = _binary(np.less, operator.lt)
    __le__, _ = _binary(np.less_equal, operator.le)
    __gt__, _ = _binary(np.greater, operator.gt)
    __ge__, _ = _binary(np.greater_equal, operator.ge)
    __eq__, _ = _binary(np.equal, operator.eq)
    __ne__, _ = _binary(np.not_equal, operator.ne)
    __neg__ = _unary(np.negative, operator.neg)
    __pos__ = _unary(np.positive, operator.pos)
    __invert__ = _unary(np.invert, operator.invert)
    __abs__ = _unary(np.absolute, operator.abs)

    # Values that Python needs concretely.

    def _no_concrete(self, what):
        start = f"{what} of a symbolic array ({self!r}) is not known while tracing ({user_location(3)})"
        construct = generated_construct(3)
        if construct == "comprehension":
            raise SymbolicBoolError(
                f"{start}: conversion leaves comprehensions and generator expressions as Python runs "
                "them, so their conditions cannot be symbolic. Write it as a `for` statement (with "
                "`append`), or with array operations (np.where, np.any)")
        if construct == "converted":
            raise SymbolicBoolError(
                f"{start}: Python needs a concrete value here (as in `any()` or `all()` of a "
                "generator), and conversion stages only `if`, `while`, `for`, `and`, `or`, `not`, "
                "conditional expressions and `assert` on symbolic values. Compute it with array "
                "operations instead (np.any, np.all, np.where), or run it on concrete values with "
                "autograph.py_function")
        start += (": Python control flow (`if`, `while`, `for`, `and`, `or`, `not`, `assert`) on a "
                  "symbolic value needs the function to be converted")
        note = unconverted_note(3)
        if note is not None:
            raise SymbolicBoolError(f"{start}, and {note}")
        raise SymbolicBoolError(
            f"{start}. Convert it with autograph (use autograph.function, or autograph.to_graph) so "
            "that the statement becomes a graph operation")

    def __bool__(self):
        self._no_concrete("the truth value")

    def __index__(self):
        note = unconverted_note(2)
        if note is not None:
            self._no_concrete("the integer value")
        raise SymbolicBoolError(
            f"the integer value of a symbolic array ({self!r}) is not known while tracing "
            f"({user_location(2)}), and Python needs it: a symbolic value cannot index a Python list "
            "or tuple, nor be a count for Python (`range()`, `*` of a list). Index an array instead "
            "(np.stack the list first; inside a staged loop, keep the value you need in a variable "
            "of its own)")

    def __int__(self):
        self._no_concrete("int()")

    def __float__(self):
        self._no_concrete("float()")

    def __complex__(self):
        self._no_concrete("complex()")

    def __contains__(self, value):
        raise TracingError(
            f"`value in array` on a symbolic array ({self!r}) is a Python bool, which is not known "
            f"while tracing ({user_location()}); write `np.any(array == value)` for its value as a "
            "symbolic bool")

    def __len__(self):
        if not self.static_shape:
            raise TypeError("len() of unsized object")
        if self.static_shape[0] is None:
            raise TracingError(
                f"len() of a symbolic array whose leading dimension is unknown ({user_location()})")
        return self.static_shape[0]

    def __iter__(self):
        if self.weak or not self.static_shape:
            raise TypeError("iteration over a 0-d array")
        if self.static_shape[0] is None:
            _no_python_iteration("a symbolic array whose leading dimension is unknown")
        for i in range(self.static_shape[0]):
            yield self[i]

    def __getitem__(self, index):
        return _api().getitem(self, index)

    def __setitem__(self, index, value):
        if generated_construct() is not None:
            advice = ("converted code makes `x[i] = v` and `x[i] += v` a functional update only where `x` "
                      "is a local variable of the function (not an attribute, an item, or a variable of an "
                      "enclosing function): write `y = <target>`, then `y[i] = v`, and store `y` back")
        else:
            advice = ("in converted code `x[i] = v` becomes a functional update; convert the function "
                      "with autograph (autograph.function or autograph.to_graph)")
        raise TracingError(f"symbolic arrays are immutable ({user_location()}): {advice}")

    # Array methods.

    def astype(self, dtype, copy=True):
        return _api().astype(self, dtype)

    def item(self):
        return _api().item(self)

    def copy(self):
        return np.copy(self)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return np.reshape(self, shape, **kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return np.transpose(self, axes or None)

    def flatten(self):
        return np.reshape(self, -1)

    sum = _method("sum")
    mean = _method("mean")
    max = _method("max")
    min = _method("min")
    prod = _method("prod")
    any = _method("any")
    all = _method("all")
    argmax = _method("argmax")
    argmin = _method("argmin")
    cumsum = _method("cumsum")
    cumprod = _method("cumprod")
    clip = _method("clip")
    dot = _method("dot")
    ravel = _method("ravel")
    squeeze = _method("squeeze")
    std = _method("std")
    var = _method("var")
    round = _method("round")
    swapaxes = _method("swapaxes")
    sort = None  # in-place in numpy; use np.sort(x)
    nonzero = _method("nonzero")
    diagonal = _method("diagonal")
    trace = _method("trace")
    repeat = _method("repeat")
    take = _method("take")


del SymbolicArray.sort


def _no_python_iteration(what):
    if generated_construct() is not None:
        advice = ("only a `for` statement of converted code loops over it (as a graph loop): write the "
                  "comprehension, `list()` or other call that iterates over it as a `for` loop")
    else:
        advice = "convert the function with autograph so that the `for` loop becomes a graph loop"
    raise TracingError(f"cannot iterate in Python over {what} ({user_location()}); {advice}")


class SymbolicRange(TracedRange):
    __slots__ = ()
    traced_by, staged_as = "the numpy tracer", "a graph loop"


class SymbolicZip:
    """`enumerate(x, start)` or `zip(x, y, ...)` over arrays of which some
    is symbolic: the iterable a converted `for` loop turns into one graph
    loop (over the shortest leading dimension)."""

    __slots__ = ("arrays", "kind", "start")

    def __init__(self, kind, arrays, start=0):
        self.kind = kind
        self.arrays = tuple(arrays)
        self.start = start

    def __repr__(self):
        inner = ", ".join(repr(a) for a in self.arrays)
        if self.kind == "enumerate":
            return f"enumerate({inner}, start={self.start!r})"
        return f"zip({inner})"

    def __iter__(self):
        import builtins
        if any(type(a) is SymbolicArray and a.static_shape[0] is None for a in self.arrays):
            _no_python_iteration(f"{self.kind}() of a symbolic array whose leading dimension is unknown")
        if self.kind == "enumerate":
            return iter(builtins.enumerate(self.arrays[0], self.start))
        return iter(builtins.zip(*self.arrays, strict=False))
