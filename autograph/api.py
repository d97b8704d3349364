"""The public conversion API: to_graph, to_code, convert, do_not_convert."""

import functools
import os
import types
import weakref

import autograph.runtime.errors as runtime_errors
from autograph import conversion, logs
from autograph.converters import directives
from autograph.errors import ConversionError

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
    """A directive for the loop it is written in (docs/backends.md, "Loop
    options"): conversion moves it into the loop's operator, and a backend
    that stages the loop honours it.

      maximum_iterations=N   a staged loop runs at most N iterations
      shape_invariants=[(v, (None, ...)), ...]
                             loop variable `v` may change along the `None`
                             dimensions (the numpy tracer; JAX and PyTorch
                             refuse it: their shapes are static)
      unroll=False           a `for` over a static `range()` is staged as one
                             loop instead of being unrolled
      parallel_iterations, swap_memory
                             accepted, without effect (TensorFlow's options)

    Loops whose values are Python run as Python: the options do nothing
    there, and this call does nothing either, except refusing an option that
    does not exist."""
    for name in options:
        if name not in directives.OPTIONS:
            raise TypeError(f"{directives.unknown_option(name)} ({runtime_errors.user_location()})")


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
    call = getattr(type(entity), "__call__", None)  # noqa: B004 - the function, not whether it is callable
    if isinstance(call, types.FunctionType):
        return call, lambda g: types.MethodType(g, entity)
    return None, None


def _describe(entity):
    return getattr(entity, "__qualname__", None) or getattr(entity, "__name__", None) or repr(entity)


def _options(recursive, strict, include, exclude):
    """The conversion options (conversion.Options) of the public keywords;
    `strict=None` means the AUTOGRAPH_STRICT environment variable."""
    if strict is None:
        strict = os.environ.get("AUTOGRAPH_STRICT", "").strip().lower() not in ("", "0", "false", "no", "off")
    return conversion.Options(bool(recursive), bool(strict), _module_names(include, "include"),
                              _module_names(exclude, "exclude"))


def _module_names(names, keyword):
    if names is None:
        return ()
    if isinstance(names, (str, types.ModuleType)):
        names = [names]
    try:
        names = list(names)
    except TypeError:
        names = [names]
    result = set()
    for name in names:
        if isinstance(name, types.ModuleType):
            name = name.__name__
        if not isinstance(name, str) or not name or not all(part.isidentifier() for part in name.split(".")):
            raise TypeError(f"{keyword}= takes module names such as 'mylib' or 'mylib.sub' (or modules), "
                            f"got {name!r}")
        result.add(name)
    return tuple(sorted(result))


def to_graph(entity, recursive=True, strict=None, include=(), exclude=()):
    """Converts `entity` (a function, lambda, method, staticmethod or
    classmethod object, functools.partial or callable object) into a function
    whose control flow calls the functional operators of `autograph.runtime`.

    With Python values the result returns, raises and prints exactly what
    `entity` does. With `recursive=True`, the functions it calls are
    converted too, on their first call, with the same options. What cannot
    be converted (builtins, C functions, code without source, generators,
    ...) is returned as it is, with a warning; with `strict=True` (or the
    environment variable AUTOGRAPH_STRICT=1) that raises ConversionError
    instead, for `entity` and for every callee.

    Library code (site-packages, the standard library, numpy, ...) called
    from converted code runs unconverted: `include=['mylib']` converts the
    functions of module `mylib` and its submodules when converted code calls
    them; `exclude=['mymodule']` leaves those of user modules unconverted.
    """
    if not callable(entity) and not isinstance(entity, (staticmethod, classmethod)):
        raise TypeError(f"to_graph expects a function or other callable, got {entity!r}")
    options = _options(recursive, strict, include, exclude)
    function, rebuild = _function_of(entity)
    if function is None:
        message = (f"cannot convert {_describe(entity)}: it has no Python source (a builtin, C function "
                   "or class)")
        if options.strict:
            raise _strict_error(message, f"`{_describe(entity)}`")
        _warn_once(entity, f"{message}; it is returned unconverted")
        return entity
    if getattr(function, _DO_NOT_CONVERT, False) or conversion.is_generated(function.__code__):
        return entity
    try:
        return rebuild(conversion.converted(function, options))
    except ConversionError as error:
        _fell_back(function, error, options)
        _warn_once(function, f"{error}; it is returned unconverted")
        return entity


def _strict_error(message, name, caller=None):
    where = f" (called from converted code at {caller})" if caller else ""
    return ConversionError(f"{message}{where}; strict conversion makes this an error: without strict=True, "
                           f"{name} would run unconverted, as Python")


def _fell_back(function, error, options, caller=None):
    """What a failed conversion of `function` does: raise (strict), or note
    why it runs unconverted, for the errors it may meet later."""
    name = f"`{function.__qualname__}`"
    if options.strict:
        raise _strict_error(error, name, caller) from error
    runtime_errors.note_unconverted(function.__code__, (
        f"autograph {error} (so {name} runs as Python, unconverted). Pass strict=True to autograph.function "
        "or autograph.to_graph, or set AUTOGRAPH_STRICT=1, to make such fall-backs errors where they happen"))


def to_code(entity, recursive=True):
    """The generated source of `entity`'s conversion, as a string.
    Raises ConversionError when it cannot be converted, saying why."""
    if not callable(entity) and not isinstance(entity, (staticmethod, classmethod)):
        raise TypeError(f"to_code expects a function or other callable, got {entity!r}")
    function, _ = _function_of(entity)
    if function is None:
        raise ConversionError(f"cannot convert {_describe(entity)}: it has no Python source "
                              "(builtins, C functions and classes are called as they are)")
    return conversion.converted_source(function)


def inlined_code(entity):
    """The source of the code that runs for `entity`: `to_code`'s text after
    each operator call got its inlined Python meaning (what
    `python -m autograph to-code FILE:FN --inlined` prints)."""
    function, _ = _function_of(entity)
    if function is None:
        raise ConversionError(f"cannot convert {_describe(entity)}: it has no Python source "
                              "(builtins, C functions and classes are called as they are)")
    return conversion.inlined_source(function)


def convert(recursive=True, strict=None, include=(), exclude=()):
    """Decorator form of `to_graph`: `@autograph.convert()`."""
    def decorator(f):
        return to_graph(f, recursive=recursive, strict=strict, include=include, exclude=exclude)
    return decorator


def _warn_once(entity, message):
    try:
        if entity in _warned:
            return
        _warned.add(entity)
    except TypeError:
        pass
    logs.warning("autograph: %s", message)
