"""The conversion pipeline: function -> tree -> converters -> code -> function.

    parse (parsing.py) -> converters, innermost function first -> emit
    (ast.unparse, for to_code) -> compile with the user's file name and
    line numbers -> a new function sharing the original's globals and
    closure cells.

Compiling with the user's file name and line numbers is the source map: a
traceback through converted code names the user's file and line, and the
runtime can name them in its errors. The generated source is also kept in
`linecache` under a unique name (`autograph-generated:qualname#N`), which is what
`to_code` and the log print; no file is written.

Conversions are cached per code object (weakly: the cache never keeps a
dead function alive) and per function.
"""

import ast
import contextlib
import copy
import gc
import itertools
import linecache
import sys
import threading
import types
import typing
import weakref

import gast

import autograph.runtime as runtime
import autograph.runtime.calls as runtime_calls
import autograph.runtime.errors as runtime_errors
from autograph import analysis, builders, logs, parsing
from autograph.converters import (
    as_written,
    asserts,
    break_statements,
    call_trees,
    conditional_expressions,
    continue_statements,
    control_flow,
    directives,
    except_handlers,
    fast_paths,
    item_reads,
    item_updates,
    logical_expressions,
    return_statements,
)
from autograph.errors import ConversionError
from autograph.naming import Namer
from autograph.python_ast import to_ast

__all__ = ["convert_function", "converted", "converted_source", "cached", "remember", "is_generated", "clear_cache",
           "Context", "Options", "DEFAULT", "namespace", "set_callee_policy"]

# Jump lowering runs before the scope analysis; expression converters before
# control flow, which then sees their lambdas as plain reads.
LOWERING = (directives, return_statements, break_statements, continue_statements)
EXPRESSIONS = (asserts, except_handlers, call_trees, item_updates, item_reads, conditional_expressions,
               logical_expressions)


class Context:
    """What converters know about the function being converted."""

    def __init__(self, namer, ag, globals_, filename="<unknown>", qualname="<unknown>"):
        self.filename = filename
        self.qualname = qualname
        self.namer = namer
        self.ag = ag
        self.globals = globals_
        self.scope = None
        self.premarked = frozenset()
        self.original_locals = set()
        self.overridden_builtins = frozenset(runtime.OVERRIDDEN_BUILTINS)
        # A loop has options (converters/directives.py), which bound it on
        # Python values too: the function runs its converted code always.
        self.loop_options = False


class Options(typing.NamedTuple):
    """How converted code treats the functions it calls. The generated code
    does not depend on them; the `ag__` namespace it runs with does, and the
    call hook of that namespace converts callees with the same options, so
    they travel from a function to everything it calls.

    recursive: convert callees (on their first call); False: call them as
        they are.
    strict: a callee that cannot be converted raises ConversionError
        instead of running unconverted.
    include: module names (a name covers its submodules) whose functions are
        converted when converted code calls them, even library modules.
    exclude: module names whose functions are never converted when called.
    """

    recursive: bool = True
    strict: bool = False
    include: tuple = ()
    exclude: tuple = ()


DEFAULT = Options()

# What the call hook asks about a callee: policy(f, options) -> what to call.
# The public API installs it (autograph/api.py), as it installs the runtime's.
_callee_policy = None


def set_callee_policy(policy):
    global _callee_policy
    _callee_policy = policy


_namespaces = {}
_cache_keys = {DEFAULT: runtime_calls.CACHE_KEY}


def cache_key(options):
    """The `__dict__` key under which a function keeps its conversion with
    `options` (the runtime's own key for the default options)."""
    key = _cache_keys.get(options)
    if key is None:
        with _lock:
            key = _cache_keys.setdefault(options, f"__autograph_converted_{len(_cache_keys)}__")
    return key


def namespace(options):
    """The `ag__` object generated code sees: the runtime itself for the
    default options; else a copy of it whose call hook follows `options`."""
    if options == DEFAULT:
        return runtime
    found = _namespaces.get(options)
    if found is not None:
        return found
    with _lock:
        found = _namespaces.get(options)
        if found is None:
            found = types.ModuleType(f"autograph.runtime[{options}]")
            found.__dict__.update({k: v for k, v in vars(runtime).items() if not k.startswith("__")})
            if options.recursive:
                def converter(f):
                    return _callee_policy(f, options)
                found.call = runtime_calls.hook(converter, cache_key(options))
            else:
                converter, found.call = None, runtime.call_builtins
            found.call_site, found.call_method = runtime_calls.site_functions(found.call, converter)
            found.written_call_site, found.written_call_method, found.written_call = \
                runtime_calls.written_site_functions(found.call_site, found.call_method)
            _namespaces[options] = found
        return found


class _Artifact:
    """The result of converting one code object: the new code object, and
    the converted (gast) tree, unparsed into source when first asked for."""

    __slots__ = ("code", "tree", "ag", "filename", "sites", "_source", "written", "__weakref__")

    def __init__(self, code, tree, ag, filename, sites):
        self.code, self.tree, self.ag, self.filename, self.sites, self._source = code, tree, ag, filename, sites, None
        self.written = None  # (code, sites) of the statements as written, once built (`_written_code`)

    @property
    def source(self):
        """The generated source as `to_code` shows it (converters/as_written.py)."""
        if self._source is None:
            self._source = deep(_unparse_as_written, self.tree, self.ag, what="show the generated code") + "\n"
            self.tree = None
        return self._source


def _unparse(tree):
    return ast.unparse(to_ast(tree))


def _unparse_as_written(tree, ag):
    # (In place: the code that runs was compiled from the tree before.)
    return _unparse(as_written.transform(tree, ag))


def _lazy_lines(reference):
    """A linecache loader that does not keep the artifact alive."""
    def load():
        artifact = reference()
        return artifact.source if artifact is not None else ""
    return load


_lock = threading.RLock()
class _CodeCache:
    """Artifacts by code object identity: code objects compare equal by
    value (not by file), so a WeakKeyDictionary would hand the conversion
    of one file's function to an identical function of another file."""

    def __init__(self):
        self._entries = {}

    def get(self, code):
        entry = self._entries.get(id(code))
        if entry is not None and entry[0]() is code:
            return entry[1]
        return None

    def __setitem__(self, code, artifact):
        key = id(code)
        self._entries[key] = (weakref.ref(code, lambda _, key=key: self._entries.pop(key, None)), artifact)

    def __len__(self):
        return len(self._entries)

    def clear(self):
        self._entries.clear()


_by_code = _CodeCache()
_counter = itertools.count(1)


def clear_cache() -> None:
    """Forgets all conversions (they are redone on next use)."""
    with _lock:
        _by_code.clear()
        runtime_calls.forget_all()


is_generated = runtime_errors.is_generated  # True if a code object was produced by this pipeline


def _is_generator(node):
    for child in analysis.walk_scope(node):
        if isinstance(child, (gast.Yield, gast.YieldFrom)):
            return True
    return False


def convertible(node):
    """Generators and coroutines are left unconverted (they stay correct)."""
    return isinstance(node, (gast.FunctionDef, gast.Lambda)) and not _is_generator(node)


def _nested_functions(node):
    """Nested function definitions to convert, innermost first. Generators
    and classes are not entered: methods are converted when called."""
    ordered = []
    for child in analysis.walk_scope(node):
        if isinstance(child, gast.FunctionDef) and convertible(child):
            ordered.extend(_nested_functions(child))
            ordered.append(child)
    return ordered


def _mangle_private_names(node, qualname):
    """Python mangles `__name` inside a class body to `_Class__name`; the
    converted function is compiled outside its class, so the tree is
    mangled here, with the class named by the function's qualname."""
    mangle = parsing.private_name_mangler(qualname)
    if mangle is parsing.unmangled:  # outside classes: nothing to mangle
        return
    stack = [node]
    while stack:
        child = stack.pop()
        if isinstance(child, gast.Name):
            child.id = mangle(child.id)
        elif isinstance(child, gast.Attribute):
            child.attr = mangle(child.attr)
        elif isinstance(child, gast.keyword) and child.arg:
            child.arg = mangle(child.arg)
        elif isinstance(child, (gast.Global, gast.Nonlocal)):
            child.names = [mangle(n) for n in child.names]
        elif isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)) and child is not node:
            child.name = mangle(child.name)
            if isinstance(child, gast.ClassDef):
                stack.extend(child.bases + child.keywords + child.decorator_list)
                continue  # its body is mangled with its own name by the compiler
        stack.extend(builders.children(child))


def _rewrite_super(node):
    """`super()` in a function whose bodies become nested functions must name
    its arguments: `super(__class__, self)`."""
    params = node.args.posonlyargs + node.args.args
    if not params:
        return
    for child in analysis.walk_scope(node):
        if (isinstance(child, gast.Call) and isinstance(child.func, gast.Name) and child.func.id == "super"
                and not child.args and not child.keywords):
            child.args = builders.located([builders.name("__class__"), builders.name(params[0].id)], child)


def _loop_jumps_out_of(stmts, in_loop=False):
    """The first break/continue in `stmts` that leaves them."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Break, gast.Continue)) and not in_loop:
            return stmt
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                loop = in_loop or (field == "body" and isinstance(stmt, (gast.For, gast.While, gast.AsyncFor)))
                blocks = [h.body for h in inner] if field in ("handlers", "cases") else [inner]
                for block in blocks:
                    found = _loop_jumps_out_of(block, loop)
                    if found is not None:
                        return found
    return None


_SCOPE_READERS = {"locals": 0, "vars": 0, "eval": 1, "exec": 1, "dir": 0}


def _check_supported(node, ctx):
    """What conversion cannot express, so the function runs unconverted:
    a `break` or `continue` out of a `finally` clause (it can swallow an
    exception in flight; for `return` see converters/return_statements.py),
    and reading the local scope as a whole (`locals()`, `vars()`, `dir()`,
    `eval`/`exec` without a namespace), which sees the variables of the body
    function it runs in."""
    for child in analysis.walk_scope(node):
        if (isinstance(child, gast.Call) and isinstance(child.func, gast.Name)
                and child.func.id in _SCOPE_READERS and len(child.args) <= _SCOPE_READERS[child.func.id]
                and not child.keywords):
            raise ConversionError(
                f"cannot convert {ctx.qualname} ({ctx.filename}:{child.lineno}): `{child.func.id}()` reads the "
                "function's local variables, which conversion moves into nested functions. Pass the values "
                "explicitly to convert it")
        if isinstance(child, gast.Try) and child.finalbody:
            jump = _loop_jumps_out_of(child.finalbody)
            if jump is not None:
                keyword = type(jump).__name__.lower()
                raise ConversionError(
                    f"cannot convert {ctx.qualname} ({ctx.filename}:{jump.lineno}): `{keyword}` inside a `finally` "
                    f"clause is not supported (it can swallow an exception). Move the `{keyword}` after the try "
                    "statement to convert it")


def _convert_tree(node, ctx):
    """Runs the converters on one function (its nested functions are
    already converted)."""
    _check_supported(node, ctx)
    _rewrite_super(node)
    ctx.original_locals = analysis.local_names(node)
    for converter in LOWERING:
        node = converter.transform(node, ctx)
    ctx.scope = analysis.Scope(node)
    for converter in EXPRESSIONS:
        node = converter.transform(node, ctx)
    return control_flow.transform(node, ctx)


def _as_function_def(node, namer):
    """A lambda is converted as `def <fresh name>(args): return body`."""
    if isinstance(node, gast.Lambda):
        function = builders.function(namer.new("lambda_"), [], [builders.located(builders.ret(node.body), node)])
        function.args = node.args
        return builders.located(function, node)
    return node


def convert_tree(node, ctx):
    """Converts a function tree and every function nested in it."""
    for nested in _nested_functions(node):
        _convert_tree(nested, ctx)
    return _convert_tree(node, ctx)


def _fill_empty_blocks(tree):
    """Lowering can empty a block (an `except` clause that only held a
    `continue`); Python needs a statement there."""
    stack = [(tree, tree)]
    while stack:  # statements only: expressions hold no blocks
        node, where = stack.pop()  # `where`: the node or the nearest one above with a position (not a match_case)
        if getattr(node, "lineno", None) is not None:
            where = node
        body = getattr(node, "body", None)
        if isinstance(body, list) and not body and not isinstance(node, gast.Module):
            node.body = [builders.located(gast.Pass(), where)]
        finalbody = getattr(node, "finalbody", None)
        if isinstance(node, gast.Try) and not node.handlers and not finalbody:
            node.finalbody = [builders.located(gast.Pass(), where)]
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if type(block) is list:
                stack.extend((child, where) for child in block)


def _compile(node, f, filename, ag, sites=()):
    """Compiles the converted tree inside a factory whose parameters are the
    names the function reads from enclosing scopes. Returns the inner code
    object and the function's `ast` tree (for unparsing)."""
    freevars = list(f.__code__.co_freevars)
    body = [node]
    if node.name not in freevars:
        # The def must not bind its name in the factory: the function's own
        # name is a global for it, as it was for the original.
        body.insert(0, gast.Global(names=[node.name]))
    factory = builders.function(ag + "_factory", [ag] + freevars + list(sites), body)
    module = gast.Module(body=[builders.located(factory, node)], type_ignores=[])
    tree = to_ast(module)
    try:
        code = compile(tree, filename, "exec", dont_inherit=True)
    except (TypeError, ValueError):  # a generated node without a position
        ast.fix_missing_locations(tree)
        code = compile(tree, filename, "exec", dont_inherit=True)
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    runtime_errors.note_generated(inner)
    return inner


def _artifact(f):
    cache = _by_code
    code = f.__code__
    artifact = cache.get(code)
    if artifact is not None:
        return artifact
    with _lock:
        artifact = cache.get(code)
        if artifact is not None:
            return artifact
        with _no_collection():
            node, new_code, ag, sites = deep(_convert, f, what=f"convert {f.__qualname__}", at_once=_long(f))
        key = f"autograph-generated:{f.__qualname__}#{next(_counter)}"
        artifact = _Artifact(new_code, node, ag, key, sites)  # fast_paths shares but never changes `node`
        linecache.cache[key] = (_lazy_lines(weakref.ref(artifact)),)
        weakref.finalize(artifact, linecache.cache.pop, key, None)
        cache[code] = artifact
        logs.log(1, "converted %s", f.__qualname__)
        if logs.get_verbosity() >= 3:
            logs.log(3, "generated code of %s:\n%s", f.__qualname__, artifact.source)
        return artifact


@contextlib.contextmanager
def _no_collection():
    """Conversion makes many tree nodes and keeps most until it ends; the
    collector, run every few hundred of them, would walk every object the
    process holds (half a million with torch loaded) again and again: a
    conversion of 1,000 `elif`s took 1.2-1.5 s with it, 1.0 s without. The
    garbage of a conversion waits for the next collection."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _convert(f):
    """(converted tree, code object, the name of the runtime module, call sites) for `f`."""
    node, fast, ctx, sites = _trees(f)
    fast = _entry(fast, ctx, sites)
    return node, _compile(fast, f, ctx.filename, ctx.ag, sites), ctx.ag, sites


# What a converted function runs outside every trace (runtime
# backends.tracing): its statements as written, in a function of their own,
# built on the first such call. The name of its cell in `sites`:
AS_WRITTEN = "<as written>"


def _entry(node, ctx, sites):
    """`node` with, first in its body (unless a loop has options):

        if not tracing():
            return as_written(a, b, *args, k=k, **kwargs)

    which hands a call made outside every trace to the function's
    statements as written, with its own arguments."""
    if ctx.loop_options:
        return node
    tracing, written = ctx.namer.new("tracing"), ctx.namer.new("as_written")
    sites[tracing], sites[written] = "tracing", AS_WRITTEN
    args = node.args
    positional = [builders.name(a.id) for a in args.posonlyargs + args.args]
    if args.vararg is not None:
        positional.append(gast.Starred(value=builders.name(args.vararg.id), ctx=gast.Load()))
    keywords = [gast.keyword(arg=a.id, value=builders.name(a.id)) for a in args.kwonlyargs]
    if args.kwarg is not None:
        keywords.append(gast.keyword(arg=None, value=builders.name(args.kwarg.id)))
    forward = gast.Call(func=builders.name(written), args=positional, keywords=keywords)
    entry = gast.If(test=builders.not_(builders.call(builders.name(tracing))), body=[builders.ret(forward)],
                    orelse=[])
    new = copy.copy(node)
    new.body = [builders.located(entry, node.body[0])] + node.body
    return new


def _as_written(node, ctx):
    """The function's own statements as written, each call through the
    call hook (which converts what a transform such as `jax.vmap` traces),
    and its nested functions converted (one may be traced later)."""
    for nested in _nested_functions(node):
        _convert_tree(nested, ctx)
    _rewrite_super(node)
    ctx.scope = analysis.Scope(node)
    ctx.overridden_builtins = frozenset()  # outside every trace no value is a backend's
    return call_trees.transform(node, ctx)


def _written_code(f, artifact):
    """(code, sites) of `f`'s statements as written (`_as_written`)."""
    if artifact.written is None:
        with _lock, _no_collection():
            if artifact.written is None:
                _, fast, ctx, sites = deep(_trees, f, True, what=f"convert {f.__qualname__}", at_once=_long(f))
                artifact.written = (_compile(fast, f, ctx.filename, ctx.ag, sites), sites)
    return artifact.written


def _trees(f, written=False):
    """(the converted tree `to_code` shows, the tree that runs after
    fast_paths, the conversion context, call sites) for `f`; with
    `written`, of its statements as written (`_as_written`)."""
    premarked = frozenset()
    while True:
        node, filename = parsing.parse_function(f)
        if not convertible(node):
            raise ConversionError(f"cannot convert {f.__qualname__}: it is a generator or coroutine function, "
                                  "which conversion leaves as it is (it runs as Python)")
        namer = Namer(analysis.all_identifiers(node))
        ag = namer.fixed("ag__")
        node = _as_function_def(node, namer)
        node.decorator_list = []
        _mangle_private_names(node, parsing.code_qualname(f))
        ctx = Context(namer, ag, f.__globals__, filename, f.__qualname__)
        ctx.premarked = premarked
        try:
            node = _as_written(node, ctx) if written else convert_tree(node, ctx)
            break
        except control_flow.Rerun as rerun:
            premarked = premarked | rerun.names
    _fill_empty_blocks(node)
    fast, sites = fast_paths.transform(node, ctx, written=written and not _has_with(node))
    return node, fast, ctx, sites


def _has_with(node):
    """True if `node`'s own statements hold a `with`, whose context may
    start a trace (`autograph.Graph()`): calls inside it must ask
    `tracing()` again."""
    return any(isinstance(child, (gast.With, gast.AsyncWith)) for child in analysis.walk_scope(node))


def _long(f):
    """True if `f` spans more lines than a function whose conversion fits
    the default recursion limit may (`deep` then converts it only once)."""
    code = f.__code__
    last = max((line for _, _, line in code.co_lines() if line is not None), default=0)
    return last - code.co_firstlineno > LONG_FUNCTION_LINES


# The converters, gast and ast.unparse walk trees recursively, a few Python
# frames per level: an `elif` chain of 200 branches, a sum of 250 terms or
# an `and` of 200 operands (whose conversion nests) exceeds the default
# recursion limit, where Python's own compiler, written in C, does not. Such
# a conversion runs again in a thread of its own, with a large stack and a
# recursion limit to match; past that limit the function is not converted.
DEEP_RECURSION_LIMIT = 50_000
# A function longer than this may nest that deep (an `elif` chain of 200
# branches takes 400 lines), and converts in a thread of its own at once.
LONG_FUNCTION_LINES = 300
_DEEP_STACK_SIZE = 512 * 1024 * 1024


def deep(fn, *args, what, at_once=False):
    """`fn(*args)`; if it exceeds the recursion limit, again with room for
    deep recursion (`at_once`: only with that room). `what` ('convert f')
    is for the error past that room."""
    if not at_once:
        try:
            return fn(*args)
        except RecursionError:
            pass
    outcome = []

    def run():
        try:
            outcome.append((True, fn(*args)))
        except BaseException as error:  # handed to the calling thread
            outcome.append((False, error))

    limit = sys.getrecursionlimit()
    size = threading.stack_size()
    try:
        threading.stack_size(_DEEP_STACK_SIZE)
    except (ValueError, RuntimeError):  # the platform refuses a stack of that size
        outcome.append((False, RecursionError()))
    else:
        try:
            sys.setrecursionlimit(max(limit, DEEP_RECURSION_LIMIT))
            worker = threading.Thread(target=run, name="autograph-deep-conversion")
            worker.start()
            worker.join()
        finally:
            sys.setrecursionlimit(limit)
            threading.stack_size(size)
    succeeded, value = outcome[0]
    if succeeded:
        return value
    if isinstance(value, RecursionError):
        raise ConversionError(f"cannot {what}: its code nests too deeply (more than {DEEP_RECURSION_LIMIT} "
                              "levels of recursion in the converter); split it into smaller functions") from None
    raise value


def inlined_source(f, written=False):
    """The source of the code that runs for `f`: the generated code after
    fast_paths inlined each operator's Python meaning, with its entry
    (`_entry`); with `written`, of its statements as written (not cached)."""
    _, fast, ctx, sites = deep(_trees, f, written, what=f"convert {f.__qualname__}")
    if not written:
        fast = _entry(fast, ctx, sites)
    return deep(_unparse, fast, what="show the inlined code") + "\n"


def converted_source(f):
    """The generated source of function `f`."""
    return _artifact(f).source


def convert_function(f, options=DEFAULT):
    """The converted version of the plain function `f` (not cached per
    function; see `converted`)."""
    artifact = _artifact(f)
    ag_value = namespace(options)
    written = types.CellType()
    converted = _function(f, artifact.code, artifact.sites, ag_value, written)

    def build():
        """`f`'s statements as written, as a function; built once, on the
        first call of `converted` outside every trace."""
        function = written.cell_contents
        if function is build_and_call:
            code, sites = _written_code(f, artifact)
            function = _function(f, code, sites, ag_value)
            function.__qualname__ = f.__qualname__
            written.cell_contents = function
        return function

    def build_and_call(*args, **kwargs):
        return build()(*args, **kwargs)

    written.cell_contents = build_and_call
    converted.__qualname__ = f.__qualname__
    converted.__module__ = f.__module__
    converted.__doc__ = f.__doc__
    converted.__annotations__ = dict(getattr(f, "__annotations__", {}))
    attributes = {k: v for k, v in f.__dict__.items() if not k.startswith("__autograph_converted")}
    wrapped = attributes.get("__wrapped__")
    if type(wrapped) is types.FunctionType:
        # A wrapper that also keeps the function it wraps under another name
        # (torch.jit.script_if_tracing's `__original_fn`, which torch.compile
        # calls instead of the wrapper) keeps its conversion there.
        for key, value in attributes.items():
            if value is wrapped and key != "__wrapped__":
                attributes[key] = ag_value.call(value)
    converted.__dict__.update(attributes)
    converted.__autograph_source__ = artifact.filename
    setattr(converted, runtime_calls.AS_WRITTEN, build)
    return converted


def _function(f, code, sites, ag_value, written=None):
    """A function of `code` (compiled by `_compile` for `f`) with `f`'s
    globals, defaults and closure cells, and cells for the names of
    `sites` (fast_paths.transform; `written` for AS_WRITTEN)."""
    cells, call_sites = [], []
    original = dict(zip(f.__code__.co_freevars, f.__closure__ or (), strict=True))
    for name in code.co_freevars:
        if name in original:
            cells.append(original[name])
        elif name in sites:  # a call site's, or a runtime value's (fast_paths.transform)
            bound = sites[name]
            if bound is None:
                call_sites.append(runtime_calls.new_site())
                cells.append(types.CellType(call_sites[-1]))
            else:
                cells.append(written if bound is AS_WRITTEN else types.CellType(getattr(ag_value, bound)))
        else:
            cells.append(types.CellType(ag_value))
    function = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, tuple(cells) or None)
    function.__kwdefaults__ = f.__kwdefaults__
    runtime_calls.keep_sites(function, call_sites)
    return function


def cached(f, options=DEFAULT):
    """The cached conversion of `f` with `options`, or None. The cache lives
    on the function itself (see runtime.calls), so it dies with it: a global
    cache would keep the function alive through the converted function's
    globals."""
    return runtime_calls.recall(f, cache_key(options))


def remember(f, result, options=DEFAULT):
    """Caches `result` as what calls of `f` run with `options`."""
    runtime_calls.remember(f, result, cache_key(options))


def converted(f, options=DEFAULT):
    """`convert_function` with the per-function cache."""
    runtime.prepare_backends()  # torch may have been imported since the last conversion
    result = cached(f, options)
    if result is None:
        result = convert_function(f, options)
        remember(f, result, options)
    return result
