"""The public conversion API: to_graph, to_code, convert, do_not_convert."""

import functools
import sys
import sysconfig
import types
import weakref

from autograph import conversion, logs
from autograph.errors import ConversionError

import autograph.runtime as runtime
import autograph.runtime.calls as runtime_calls

__all__ = ["to_graph", "to_code", "convert", "do_not_convert", "set_loop_options"]

_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_warned = weakref.WeakSet()


def do_not_convert(f):
    """Marks `f` so that conversion leaves it as it is (it still runs, as
    Python, when called from converted code)."""
    try:
        setattr(f, _DO_NOT_CONVERT, True)
    except AttributeError:
        pass
    return f


def set_loop_options(**options):
    """A directive for the loop it is written in, such as
    `set_loop_options(maximum_iterations=100)`: backends may use it when they
    stage the loop. It does nothing when the code runs as Python."""


def _function_of(entity):
    """The plain function behind a callable, and how to rebuild the callable
    around a converted function; (None, None) for builtins and C code."""
    if isinstance(entity, types.FunctionType):
        return entity, lambda g: g
    if isinstance(entity, types.MethodType):
        inner, rebuild = _function_of(entity.__func__)
        return inner, lambda g: types.MethodType(rebuild(g), entity.__self__)
    if isinstance(entity, (staticmethod, classmethod)):
        inner, rebuild = _function_of(entity.__func__)
        return inner, lambda g: type(entity)(rebuild(g))
    if isinstance(entity, functools.partial):
        inner, rebuild = _function_of(entity.func)
        return inner, lambda g: functools.partial(rebuild(g), *entity.args, **entity.keywords)
    if isinstance(entity, type) or not callable(entity):
        return None, None
    call = getattr(type(entity), "__call__", None)
    if isinstance(call, types.FunctionType):
        return call, lambda g: types.MethodType(g, entity)
    return None, None


def _describe(entity):
    return getattr(entity, "__qualname__", None) or getattr(entity, "__name__", None) or repr(entity)


def to_graph(entity, recursive=True):
    """Converts `entity` (a function, lambda, method, staticmethod or
    classmethod object, functools.partial or callable object) into a function
    whose control flow calls the functional operators of `autograph.runtime`.

    With Python values the result returns, raises and prints exactly what
    `entity` does. With `recursive=True`, the functions it calls are
    converted too, on their first call. What cannot be converted (builtins,
    C functions, code without source) is returned as it is, with a warning.
    """
    if not callable(entity) and not isinstance(entity, (staticmethod, classmethod)):
        raise TypeError(f"to_graph expects a function or other callable, got {entity!r}")
    function, rebuild = _function_of(entity)
    if function is None:
        _warn_once(entity, f"{_describe(entity)} has no Python source (a builtin, C function or class); "
                           "it is returned unconverted")
        return entity
    if getattr(function, _DO_NOT_CONVERT, False) or conversion.is_generated(function.__code__):
        return entity
    try:
        return rebuild(conversion.converted(function, recursive))
    except ConversionError as error:
        _warn_once(function, f"{error}; it is returned unconverted")
        return entity


def to_code(entity, recursive=True):
    """The generated source of `entity`'s conversion, as a string.
    Raises ConversionError when it cannot be converted, saying why."""
    if not callable(entity) and not isinstance(entity, (staticmethod, classmethod)):
        raise TypeError(f"to_code expects a function or other callable, got {entity!r}")
    function, _ = _function_of(entity)
    if function is None:
        raise ConversionError(f"cannot convert {_describe(entity)}: it has no Python source "
                              "(builtins, C functions and classes are called as they are)")
    return conversion.converted_source(function, recursive)


def convert(recursive=True):
    """Decorator form of `to_graph`: `@autograph.convert()`."""
    def decorator(f):
        return to_graph(f, recursive=recursive)
    return decorator


def _warn_once(entity, message):
    try:
        if entity in _warned:
            return
        _warned.add(entity)
    except TypeError:
        pass
    logs.warning("autograph: %s", message)


# The call hook ------------------------------------------------------------

_LIBRARIES = frozenset({
    "autograph", "numpy", "scipy", "jax", "jaxlib", "torch", "tensorflow", "pandas", "gast",
    "pytest", "_pytest", "pluggy", "hypothesis", "typing_extensions", "six", "absl", "google",
})
_library_paths = tuple(p for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} if p)
_stdlib_names = frozenset(getattr(sys, "stdlib_module_names", ()))
_module_is_library = {}


def _is_library(f):
    module = f.__globals__.get("__name__") or ""
    known = _module_is_library.get(module)
    if known is None:
        top = module.partition(".")[0]
        filename = f.__code__.co_filename
        known = (top in _LIBRARIES or top in _stdlib_names
                 or "site-packages" in filename or "dist-packages" in filename
                 or (filename.startswith(_library_paths) and not filename.startswith(sys.prefix + "/src")))
        _module_is_library[module] = known
    return known


def _converted_callee(f):
    """What the runtime's call hook calls instead of `f` (recursive mode):
    the converted function, or `f` itself. For plain functions the answer is
    remembered on `f`, so the hook finds it at once next time."""
    if type(f) is types.FunctionType:
        result = conversion.cached(f, True)
        if result is not None:
            return result
        result = f
        if not (conversion.is_generated(f.__code__) or getattr(f, _DO_NOT_CONVERT, False) or _is_library(f)):
            try:
                return conversion.converted(f, True)
            except ConversionError as error:
                logs.log(1, "calling %s unconverted: %s", _describe(f), error)
        runtime_calls.remember(f, result)
        return result
    function, rebuild = _function_of(f)
    if function is None or isinstance(f, type):
        return f
    converted = _converted_callee(function)
    return f if converted is function else rebuild(converted)


runtime.set_converter(_converted_callee)
