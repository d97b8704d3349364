"""The call hook: what generated code calls in place of every user call.

`call(f)(*args, **kwargs)` calls `converted(f)` with the call's own arguments,
so evaluation order and argument passing are Python's. `converted(f)` is:

  * a runtime override for the builtins a backend may need to see (`print`,
    `len`, `range`, ...): exact Python for Python values;
  * the converted version of user code (converted on first call, cached),
    through the converter that the pipeline installs with `set_converter`;
  * `f` itself for builtins, C functions, classes and library code.
"""

import builtins
import types

from autograph.runtime.backends import backend_of_any

__all__ = ["call", "call_builtins", "set_converter", "intercept", "OVERRIDDEN_BUILTINS"]

def _unconverted(f):
    return f


_converter = _unconverted


def set_converter(converter):
    """Installs `converter(f) -> callable`: the converted version of any
    callable that is not an overridden builtin (or `f` itself)."""
    global _converter
    _converter = converter


def _override(func):
    def override(*args, **kwargs):
        backend = backend_of_any(args)
        if backend is not None:
            impl = backend.print_ if func is builtins.print else backend.builtin(func)
            if impl is not None:
                return impl(*args, **kwargs)
        return func(*args, **kwargs)

    override.__name__ = func.__name__
    override.__qualname__ = func.__name__
    override.__doc__ = f"`{func.__name__}` for Python values; a backend's version for its values."
    return override


OVERRIDDEN_BUILTINS = (
    "print", "len", "range", "enumerate", "zip", "abs", "min", "max", "sum",
    "any", "all", "int", "float", "bool", "isinstance",
)

_OVERRIDES = {getattr(builtins, name): _override(getattr(builtins, name)) for name in OVERRIDDEN_BUILTINS}



def intercept(functions):
    """Routes calls of `functions` from converted code through the same
    dispatch as the overridden builtins."""
    for function in functions:
        if function not in _OVERRIDES:
            _OVERRIDES[function] = _override(function)


_FunctionType = types.FunctionType


def call_builtins(f):
    """The call hook of non-recursive conversion: overrides builtins only."""
    try:
        return _OVERRIDES.get(f, f)
    except TypeError:  # unhashable callable
        return f


def call(f):
    """The function to call in place of `f`; see the module docstring."""
    if type(f) is _FunctionType:
        return _converter(f)
    try:
        override = _OVERRIDES.get(f)
    except TypeError:  # unhashable callable
        override = None
    if override is not None:
        return override
    return _converter(f)
