"""Which functions converted code converts when it calls them: the callee
policy behind the runtime's call hook (`ag__.call(f)`).

User functions are converted on their first call, with the caller's
conversion options, and the result is remembered on the function. Library
code (the standard library, numpy, jax, torch, anything installed in
site-packages), functions marked `do_not_convert`, generated code and
modules in `exclude` run as they are; `include` opts library modules in.
Importing this module installs the policy in the runtime and the pipeline.
"""

import functools
import sys
import sysconfig
import types
import weakref

import autograph.runtime as runtime
import autograph.runtime.errors as runtime_errors
from autograph import conversion, logs
from autograph.api import _DO_NOT_CONVERT, _describe, _fell_back, _function_of
from autograph.errors import ConversionError

__all__ = []

_LIBRARIES = frozenset({
    "autograph", "numpy", "scipy", "jax", "jaxlib", "torch", "tensorflow", "pandas", "gast",
    "pytest", "_pytest", "pluggy", "hypothesis", "typing_extensions", "six", "absl", "google",
})
_library_paths = tuple(p for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
                       if p)
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


def _matches(module, names):
    return any(module == name or module.startswith(name + ".") for name in names)


# Library modules whose wrappers compile or trace the function they wrap
# (torch.compile, jax.jit): they are the tracers, not decorators to convert.
_TRACERS = ("torch._dynamo", "torch._functorch", "torch.fx", "torch.export", "torch._export", "jax", "jaxlib")


def _decorates_converted_code(f, module, options):
    """True if library function `f` is a decorator's wrapper of code that is
    converted (`functools.wraps` set its `__wrapped__`: `@torch.no_grad()`,
    `@contextlib.contextmanager` decorators, `torch.jit.script_if_tracing`)
    around the user's code or code of a module in `options.include`:
    converted, it calls that function through the call hook, which converts
    it too."""
    inner, seen = getattr(f, "__wrapped__", None), 0
    while type(getattr(inner, "__wrapped__", None)) is types.FunctionType and seen < 8:
        inner, seen = inner.__wrapped__, seen + 1
    if type(inner) is not types.FunctionType or _matches(module, _TRACERS) or conversion.is_generated(inner.__code__):
        return False
    return not _is_library(inner) or _matches(inner.__globals__.get("__name__") or "", options.include)


def _not_converted_because(f, options):
    """Why converted code calls `f` (a plain function) unconverted with
    `options`, as a note for later errors; None if it is to be converted."""
    if conversion.is_generated(f.__code__):
        return ""
    name = f.__qualname__
    if getattr(f, _DO_NOT_CONVERT, False):
        return f"`{name}` is marked with autograph.do_not_convert, so it runs as Python"
    module = f.__globals__.get("__name__") or ""
    if module.partition(".")[0] == "autograph":
        return ""
    if _matches(module, options.exclude):
        return (f"`{name}` is not converted: its module {module!r} is excluded (exclude=...), so it runs "
                "as Python")
    if _is_library(f) and not _matches(module, options.include) and not _decorates_converted_code(f, module, options):
        top = module.partition(".")[0] or module
        return (f"`{name}` is library code (module {module!r}), which converted code calls unconverted: "
                f"pass include=[{top!r}] to autograph.function or autograph.to_graph to convert it")
    return None


def _converted_callee(f, options=conversion.DEFAULT):
    """What the runtime's call hook calls instead of `f` (recursive mode):
    the converted function, or `f` itself. For plain functions the answer is
    remembered on `f`, so the hook finds it at once next time."""
    if type(f) is types.FunctionType:
        result = conversion.cached(f, options)
        if result is not None:
            return result
        reason = _not_converted_because(f, options)
        if reason is None:
            try:
                return conversion.converted(f, options)
            except ConversionError as error:
                _fell_back(f, error, options, runtime_errors.user_location(2))
                logs.log(1, "calling %s unconverted: %s", _describe(f), error)
        elif reason:
            arguments = runtime.backends.function_arguments(f)
            if arguments is not None:  # jax.grad(f): f is converted, jax.grad is not
                result = _converting_arguments(f, arguments, options)
                conversion.remember(f, result, options)
                return result
            runtime_errors.note_unconverted(f.__code__, reason)
        conversion.remember(f, f, options)
        return f
    function, rebuild = _function_of(f)
    if function is None or isinstance(f, type):
        return f
    converted = _converted_callee(function, options)
    return f if converted is function else rebuild(converted)


def _converting_arguments(f, arguments, options):
    """`f`, a library function that takes the user's functions (a backend's
    `function_arguments`: jax.grad, lax.cond, ...), calling it with those
    converted (and each of a list of them, as lax.switch takes). A user's
    function left unconverted on purpose (`do_not_convert`, `exclude`) is
    handed over `_noting` why."""
    hook = conversion.namespace(options).call  # the call hook: under dynamo it converts outside the trace

    def convert(value):
        if type(value) in (list, tuple):
            return type(value)(convert(v) for v in value)
        if not callable(value):
            return value
        converted = hook(value)
        if converted is value and type(value) is types.FunctionType and not runtime.calls.bytecode_traced():
            reason = _not_converted_because(value, options)
            if reason and not _is_library(value):
                return _noting(value, reason, _describe(f))
        return converted

    @functools.wraps(f)
    def call(*args, **kwargs):
        args = list(args)
        for position, keyword in arguments:
            if position < len(args):
                args[position] = convert(args[position])
            elif keyword in kwargs:
                kwargs[keyword] = convert(kwargs[keyword])
        return f(*args, **kwargs)
    return call


_noted = weakref.WeakKeyDictionary()  # function -> its `_noting` wrapper (one, so that jax.jit caches it)


def _noting(f, reason, transform):
    """`f`, which `transform` is handed unconverted, wrapped so that a
    tracer's error inside it (`bool()` of a traced value: its control flow
    is not converted) says which function that is and why."""
    wrapper = _noted.get(f)
    if wrapper is None:
        code = f.__code__
        note = (f"{reason} (defined at {code.co_filename}:{code.co_firstlineno}); `{transform}` was handed it "
                "unconverted, so its control flow on traced values is not converted either. To convert it, drop "
                f"the mark (or the exclusion), or hand `{transform}` autograph.to_graph({f.__name__})")

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except Exception as error:
                if type(error).__module__.partition(".")[0] in ("jax", "jaxlib", "torch"):
                    error.add_note(note)
                raise
        _noted[f] = wrapper
    return wrapper


runtime.set_converter(_converted_callee)
conversion.set_callee_policy(_converted_callee)
