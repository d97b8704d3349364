"""Values that enter or leave a graph with a declared dtype (an
`input_signature`, a `py_function` result_spec, a `Graph.run` feed) are cast
by numpy's 'same_kind' rule: within a kind (float64 to float32) or to a
wider kind (int to float), never from float to int or from complex to
float, where the value would change silently. Python numbers go by the kind
of their value, as NEP 50 treats them: 3 fits any numeric dtype (a
non-negative 3 an unsigned one), 2.7 a float or complex one.

    cast(2.7, np.dtype("int64"), "argument 'n' of f")
    TypeError: argument 'n' of f is the Python float 2.7, which numpy's
    'same_kind' casting rule does not turn into int64 (the value would
    change); pass a value of dtype int64 ...
"""

import numpy as np

__all__ = ["cast", "castable"]

# The dtype kinds a Python number may become.
_PY_KINDS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}


def castable(value, dtype):
    """True if `value` may become an array of `dtype` under 'same_kind'."""
    t = type(value)
    if t in _PY_KINDS:
        kinds = "ifc" if t is int and value < 0 else _PY_KINDS[t]
        return dtype.kind in kinds
    if value is None:
        return False
    return bool(np.can_cast(np.asarray(value).dtype, dtype, "same_kind"))


def _describe(value):
    t = type(value)
    if t in _PY_KINDS:
        return f"the Python {t.__name__} {value!r}"
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype.name}"
    if isinstance(value, np.generic):
        return f"a numpy {value.dtype.name}"
    return f"a {t.__name__} of dtype {np.asarray(value).dtype.name}"


def cast(value, dtype, what):
    """`value` as an array of `dtype` (a numpy value of that dtype as it
    is); a TypeError naming `what` when 'same_kind' does not allow it."""
    dtype = np.dtype(dtype)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype == dtype:
        return value
    if value is None:
        raise TypeError(f"{what} is None; it must be a value of dtype {dtype.name}")
    if not castable(value, dtype):
        raise TypeError(
            f"{what} is {_describe(value)}, which numpy's 'same_kind' casting rule does not "
            f"turn into {dtype.name} (the value would change); pass a value of dtype {dtype.name} "
            f"(np.asarray(value).astype('{dtype.name}') converts on purpose) or declare another dtype")
    try:
        return np.asarray(value, dtype)
    except (OverflowError, ValueError) as e:
        raise TypeError(f"{what} cannot be {dtype.name}: {e}") from None
