"""The public conversion API: to_graph, to_code, convert, do_not_convert."""

from __future__ import annotations

import functools
import os
import types
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypedDict, TypeVar

import autograph.runtime.calls as runtime_calls
import autograph.runtime.errors as runtime_errors
from autograph import conversion, logs
from autograph.converters import directives
from autograph.errors import ConversionError

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack is 3.11+; only the type checker reads it

__all__ = ["to_graph", "to_code", "convert", "do_not_convert", "register_transform", "set_loop_options"]

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

#: What include= and exclude= take: module names ('mylib', 'mylib.sub') or
#: modules, one or an iterable of them (None for none).
ModuleNames = str | types.ModuleType | Iterable[str | types.ModuleType] | None


class LoopOptions(TypedDict, total=False):
    """The keywords of `set_loop_options`."""
    maximum_iterations: int
    shape_invariants: Sequence[tuple[Any, Sequence[int | None]]]
    unroll: bool
    parallel_iterations: int
    swap_memory: bool


_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_warned: weakref.WeakSet[Any] = weakref.WeakSet()


def do_not_convert(f: F) -> F:
    """Marks `f` so that conversion leaves it as it is (it still runs, as
    Python, when called from converted code)."""
    try:
        setattr(f, _DO_NOT_CONVERT, True)
    except AttributeError:
        pass
    return f


def register_transform(transform: Callable[..., Any], *parameters: str | int) -> None:
    """Tells converted code that `transform` takes the user's functions as
    the arguments `parameters` (names or positions of its parameters), as
    `jax.grad` takes `fun`: converted code that calls `transform` converts
    those arguments first (recursive mode), as it converts the functions it
    calls. JAX's and torch.func's transforms and control-flow operators are
    known already; this adds your own, or another library's:

        autograph.register_transform(mylib.integrate, "rhs")
    """
    import inspect

    from autograph.runtime.backends import register_function_arguments

    if not callable(transform):
        raise TypeError(f"register_transform expects the transform, a callable, got {transform!r}")
    try:
        signature = list(inspect.signature(transform).parameters.values())
    except (TypeError, ValueError):
        signature = []
    arguments = []
    for parameter in parameters:
        if type(parameter) is int:
            named = signature[parameter] if parameter < len(signature) else None
            keyword = named.name if named is not None and named.kind is not named.POSITIONAL_ONLY else None
            arguments.append((parameter, keyword))
            continue
        position = next((i for i, p in enumerate(signature) if p.name == parameter), None)
        if type(parameter) is not str or position is None:
            names = ", ".join(repr(p.name) for p in signature) or "none that Python can read"
            raise TypeError(f"register_transform: {parameter!r} is not a parameter of {_describe(transform)} "
                            f"(its parameters: {names}); name a parameter, or give its position")
        kind = signature[position].kind
        arguments.append((position if kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD) else 1 << 30,
                          None if kind is kind.POSITIONAL_ONLY else parameter))
    if not arguments:
        raise TypeError("register_transform: name the parameters that take functions, "
                        "for example register_transform(integrate, 'rhs')")
    register_function_arguments(transform, arguments)
    runtime_calls.forget_all()  # call sites that met `transform` before


def set_loop_options(**options: Unpack[LoopOptions]) -> None:
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


def _function_of(entity: Any) -> tuple[Any, Any]:
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


def _describe(entity: object) -> str:
    return getattr(entity, "__qualname__", None) or getattr(entity, "__name__", None) or repr(entity)


def _options(recursive: bool, strict: bool | None, include: ModuleNames, exclude: ModuleNames) -> conversion.Options:
    """The conversion options (conversion.Options) of the public keywords;
    `strict=None` means the AUTOGRAPH_STRICT environment variable."""
    if strict is None:
        strict = os.environ.get("AUTOGRAPH_STRICT", "").strip().lower() not in ("", "0", "false", "no", "off")
    return conversion.Options(bool(recursive), bool(strict), _module_names(include, "include"),
                              _module_names(exclude, "exclude"))


def _module_names(given: ModuleNames, keyword: str) -> tuple[str, ...]:
    if given is None:
        return ()
    names: list[Any]
    if isinstance(given, (str, types.ModuleType)):
        names = [given]
    else:
        try:
            names = list(given)
        except TypeError:
            names = [given]
    result = set()
    for name in names:
        if isinstance(name, types.ModuleType):
            name = name.__name__
        if not isinstance(name, str) or not name or not all(part.isidentifier() for part in name.split(".")):
            raise TypeError(f"{keyword}= takes module names such as 'mylib' or 'mylib.sub' (or modules), "
                            f"got {name!r}")
        result.add(name)
    return tuple(sorted(result))


def to_graph(entity: Callable[P, R], recursive: bool = True, strict: bool | None = None,
             include: ModuleNames = (), exclude: ModuleNames = ()) -> Callable[P, R]:
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
        converted: Callable[P, R] = rebuild(conversion.converted(function, options))
        return converted
    except ConversionError as error:
        _fell_back(function, error, options)
        _warn_once(function, f"{error}; it is returned unconverted")
        return entity


def _strict_error(message: object, name: str, caller: str | None = None) -> ConversionError:
    where = f" (called from converted code at {caller})" if caller else ""
    return ConversionError(f"{message}{where}; strict conversion makes this an error: without strict=True, "
                           f"{name} would run unconverted, as Python")


def _fell_back(function: Any, error: ConversionError, options: conversion.Options,
               caller: str | None = None) -> None:
    """What a failed conversion of `function` does: raise (strict), or note
    why it runs unconverted, for the errors it may meet later."""
    name = f"`{function.__qualname__}`"
    if options.strict:
        raise _strict_error(error, name, caller) from error
    runtime_errors.note_unconverted(function.__code__, (
        f"autograph {error} (so {name} runs as Python, unconverted). Pass strict=True to autograph.function "
        "or autograph.to_graph, or set AUTOGRAPH_STRICT=1, to make such fall-backs errors where they happen"))


def to_code(entity: Callable[..., Any], recursive: bool = True) -> str:
    """The generated source of `entity`'s conversion, as a string: control
    flow as operator calls (`ag__.if_stmt`, `ag__.for_stmt`, ...), every
    other statement as written. The code that runs also routes `x += v`,
    `x[i] = v` and some `x[i]` through runtime hooks and inlines each
    operator's Python meaning (`python -m autograph to-code FILE:FN
    --inlined` prints it). Raises
    ConversionError when `entity` cannot be converted, saying why."""
    if not callable(entity) and not isinstance(entity, (staticmethod, classmethod)):
        raise TypeError(f"to_code expects a function or other callable, got {entity!r}")
    function, _ = _function_of(entity)
    if function is None:
        raise ConversionError(f"cannot convert {_describe(entity)}: it has no Python source "
                              "(builtins, C functions and classes are called as they are)")
    source: str = conversion.converted_source(function)
    return source


def inlined_code(entity: Callable[..., Any]) -> str:
    """The source of the code that runs for `entity`: `to_code`'s text after
    each operator call got its inlined Python meaning (what
    `python -m autograph to-code FILE:FN --inlined` prints)."""
    function, _ = _function_of(entity)
    if function is None:
        raise ConversionError(f"cannot convert {_describe(entity)}: it has no Python source "
                              "(builtins, C functions and classes are called as they are)")
    source: str = conversion.inlined_source(function)
    return source


def convert(recursive: bool = True, strict: bool | None = None, include: ModuleNames = (),
            exclude: ModuleNames = ()) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of `to_graph`: `@autograph.convert()`."""
    def decorator(f: Callable[P, R]) -> Callable[P, R]:
        return to_graph(f, recursive=recursive, strict=strict, include=include, exclude=exclude)
    return decorator


def _warn_once(entity: object, message: str) -> None:
    try:
        if entity in _warned:
            return
        _warned.add(entity)
    except TypeError:
        pass
    logs.warning("autograph: %s", message)
