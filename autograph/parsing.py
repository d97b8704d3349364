"""Finding and parsing the source of a live function.

`parse_function(f)` returns the gast tree of `f`'s definition (a FunctionDef,
AsyncFunctionDef or Lambda) with line numbers of the user's file, and the
file name. It checks that the source found still describes `f` (the file may
have changed after import) and raises `ConversionError` saying why not.
"""

import __future__  # noqa: I001 - the module, not a future statement
import ast
import copy
import inspect
import linecache
import sys
import types
import weakref

import gast

from autograph.errors import ConversionError
from autograph.python_ast import from_ast, to_ast

__all__ = ["code_qualname", "parse_function", "parse_source", "private_name_mangler"]


def parse_source(source, filename="<source>"):
    return from_ast(ast.parse(source, filename=filename))


def _describe(f):
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


def parse_function(f):
    """(node, filename) for the definition of function `f`."""
    code = getattr(f, "__code__", None)
    if code is None:
        raise ConversionError(f"cannot convert {_describe(f)!s}: it has no Python source "
                              "(builtins and C functions are called as they are)")
    filename = code.co_filename
    lines = linecache.getlines(filename, f.__globals__)
    if not lines:
        raise ConversionError(
            f"cannot convert {_describe(f)}: its source is not available "
            f"(file {filename!r}; functions created by exec() need a linecache entry)")
    if f.__name__ == "<lambda>":
        node = _find_lambda(f, filename, lines)
    else:
        node = _find_def(f, filename, lines)
    _check_matches(f, node, filename)
    return node, filename


def _find_def(f, filename, lines):
    code = f.__code__
    start = code.co_firstlineno - 1
    if start >= len(lines):
        raise ConversionError(f"cannot convert {_describe(f)}: the source of {filename!r} "
                              "changed since the function was defined")
    found = _found.get(code)
    if found is not None and found[0] is lines:  # the file's lines as linecache still holds them
        return _def_in(f, filename, lines, start, found[1], checked=True)
    quick = _indented_block(lines, start)
    try:
        return _def_in(f, filename, lines, start, quick)
    except ConversionError:
        if quick is None:
            raise
    return _def_in(f, filename, lines, start, None)


# The lines of each function's definition, found and checked against its
# code, by code object, with the file's lines they were found in: a second
# conversion of the function (its statements as written) parses them
# without searching or checking again.
_found = weakref.WeakKeyDictionary()


def _indented_block(lines, start):
    """The lines from `start` (a `def` or its first decorator) up to the
    next line, not blank or a comment, indented no deeper than it; None if
    the definition's first line is not found. Most often that is the whole
    definition; where it is not (a line of a multi-line string or bracket
    at a lower indent) it does not parse, and inspect.getblock, which
    tokenizes (50 ms for 2,000 lines), finds the block instead."""
    first = lines[start]
    indent = len(first) - len(first.lstrip())
    index = start
    while index < len(lines) and lines[index].lstrip().startswith("@"):
        index += 1
    if index == len(lines) or not lines[index].lstrip().startswith(("def ", "async ")):
        return None
    for end in range(index + 1, len(lines)):
        line = lines[end]
        stripped = line.lstrip()
        if stripped and stripped[0] != "#" and len(line) - len(stripped) <= indent:
            return lines[start:end]
    return lines[start:]


def _def_in(f, filename, lines, start, block, checked=False):
    """The definition of `f` in `block`, the lines from `start` (found by
    inspect.getblock if None), checked against `f`'s code unless `checked`."""
    code = f.__code__
    if block is None:
        block = inspect.getblock(lines[start:])
    # An indented definition is parsed under `if 1:` rather than dedented:
    # lines of a multi-line string may start at column 0, and columns stay
    # the file's own.
    indented = block[0][:1].isspace()
    source = ("if 1:\n" if indented else "") + "".join(block)
    try:
        module = ast.parse(source)
    except SyntaxError as e:
        raise ConversionError(f"cannot convert {_describe(f)}: its source at {filename}:{start + 1} "
                              f"does not parse ({e.msg}); it may have changed since import") from None
    if not module.body:
        raise ConversionError(f"cannot convert {_describe(f)}: no definition found at {filename}:{start + 1}")
    node = from_ast(module.body[0].body[0] if indented else module.body[0], start - indented)
    if checked:
        return node
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and node.name == code.co_name \
            and not _compiles_to(source, f, _imported_names(filename, lines), module):
        raise ConversionError(
            f"cannot convert {_describe(f)}: the source at {filename}:{start + 1} no longer matches "
            "the function's code; the file changed since import (reload the module)")
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) or node.name != code.co_name:
        raise ConversionError(
            f"cannot convert {_describe(f)}: the source at {filename}:{start + 1} does not define "
            f"{code.co_name!r}; the file may have changed since import")
    _found[code] = (lines, block)
    return node


_module_cache = {}


def _parse_module_lines(filename, lines):
    key = (filename, len(lines), lines[0] if lines else "", lines[-1] if lines else "")
    tree = _module_cache.get(key)
    if tree is None:
        tree = from_ast(ast.parse("".join(lines)))
        if len(_module_cache) > 64:
            _module_cache.clear()
        _module_cache[key] = tree
    return tree


def _find_lambda(f, filename, lines):
    code = f.__code__
    try:
        tree = _parse_module_lines(filename, lines)
    except SyntaxError:
        raise ConversionError(f"cannot convert lambda at {filename}:{code.co_firstlineno}: "
                              "the file does not parse") from None
    arg_names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    candidates = []
    for node in gast.walk(tree):
        if isinstance(node, gast.Lambda) and node.lineno == code.co_firstlineno:
            names = tuple(a.id for a in node.args.args + node.args.kwonlyargs)
            if names == arg_names:
                candidates.append(node)
    if len(candidates) > 1:
        candidates = [n for n in candidates if _same_lambda_code(n, f, filename, lines)]
    where = f"{filename}:{code.co_firstlineno}"
    if len(candidates) > 1:
        raise ConversionError(f"cannot convert lambda at {where}: several lambdas on that line "
                              "look the same; put it on a line of its own or use a def")
    if not candidates:
        raise ConversionError(f"cannot convert lambda at {where}: its source was not found; "
                              "the file may have changed since import")
    if not _same_lambda_code(candidates[0], f, filename, lines):
        raise ConversionError(f"cannot convert lambda at {where}: the source at that line no longer "
                              "matches the lambda's code; the file changed since import (reload the module)")
    return copy.deepcopy(candidates[0])


def _same_lambda_code(node, f, filename, lines):
    """True if compiling `node` gives the bytecode of the lambda `f`."""
    code = f.__code__
    expr = to_ast(gast.Expression(body=node))
    tree = ast.Module(body=[_located(ast.Expr(value=expr.body), expr.body)], type_ignores=[])
    tree = _with_imports(_enclosed(tree, code.co_freevars), _imported_names(filename, lines))
    try:
        compiled = compile(tree, filename, "exec", flags=code.co_flags & _FUTURE_FLAGS,
                           dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    found = _find_code(compiled, code.co_name)
    return found is not None and _same_code(found, code, private_name_mangler(code_qualname(f)))


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


_imports_cache = {}


def _imported_names(filename, lines):
    """The names that import statements of the file's module level bind:
    Python 3.11 compiles `name.method()` differently when `name` is one.
    Cached per file text (the names only, not the tree)."""
    key = (filename, len(lines), lines[0] if lines else "", lines[-1] if lines else "")
    names = _imports_cache.get(key)
    if names is not None:
        return names
    stack = []
    if any(line.lstrip().startswith(("import", "from")) for line in lines):
        try:
            stack = list(ast.parse("".join(lines)).body)
        except (SyntaxError, ValueError):
            pass
    found = set()
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).partition(".")[0] for a in node.names if a.name != "*")
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    if len(_imports_cache) > 256:
        _imports_cache.clear()
    names = _imports_cache[key] = tuple(sorted(found))
    return names


def _with_imports(tree, imported):
    """`tree` with `import name` statements (compiled, never run) binding
    `imported` at its module level, as the file does."""
    if imported:
        tree.body[:0] = [_located(ast.Import(names=[ast.alias(name=name) for name in imported]), tree.body[0])]
    return tree


def _located(node, like):
    """`node`, and the nodes in it without a position, at `like`'s position."""
    for child in ast.walk(node):
        if "lineno" in child._attributes and getattr(child, "lineno", None) is None:
            child.lineno, child.col_offset = like.lineno, like.col_offset
            child.end_lineno, child.end_col_offset = like.end_lineno, like.end_col_offset
    return node


def _compiles_to(source, f, imported=(), parsed=None):
    """True if compiling `source` (the text found for `f`, as parsed, in a
    module that imports `imported`) gives `f`'s bytecode, variables, names
    and constants: the text still is the source of the code that runs.
    `parsed`: `source` parsed, which may be used (and changed) once."""
    code = f.__code__
    mangle = private_name_mangler(code_qualname(f))
    unused = [parsed] if parsed is not None else []
    trees = [lambda: unused.pop() if unused else ast.parse(source)]
    # A function in a test module whose `assert`s pytest rewrote on import.
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    if rewrite is not None and _has_name(code, "@pytest_ar"):
        def rewritten():
            tree = ast.parse(source)
            rewrite.rewrite_asserts(tree, source.encode(), code.co_filename)
            return tree
        trees.append(rewritten)
    # Code that reached linecache piece by piece (notebook cells, the blocks
    # of a docs page) was compiled with the imports of its own piece only:
    # the file's imports, none, or those of the modules in its globals.
    # The scan of the globals runs only when the first readings do not match.
    def imports():
        yield tuple(imported)
        if imported:
            yield ()
        modules = tuple(sorted(n for n, v in f.__globals__.items() if isinstance(v, types.ModuleType)))
        if modules and modules != tuple(imported):
            yield modules

    for names in imports():
        for make in trees:
            if _compiles_with(make, names, code, mangle):
                return True
    return False


def _compiles_with(make, names, code, mangle):
    """True if the tree `make()` gives, with imports of `names`, compiles to `code`."""
    try:
        tree = _with_imports(_enclosed(make(), code.co_freevars), names)
        module = compile(tree, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    found = _find_code(module, code.co_name)
    return found is not None and _same_code(found, code, mangle)


def _enclosed(tree, freevars):
    """`tree` (a module whose last statement holds the definition) with that
    statement inside a function that binds `freevars`: compiled alone, a
    free variable would read as a global and `nonlocal` would not compile."""
    if not freevars:
        return tree
    definition = tree.body[-1]
    binds = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(value=None))
             for name in freevars]
    enclosing = ast.FunctionDef(name="__autograph_enclosing__", args=ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[_located(b, definition) for b in binds] + [definition], decorator_list=[], returns=None,
        type_comment=None)
    tree.body[-1] = _located(enclosing, definition)
    return tree


def _find_code(code, name):
    """The outermost code object named `name` among the constants of `code`
    and of the code objects nested in it."""
    level = [code]
    while level:
        nested = [c for parent in level for c in parent.co_consts if isinstance(c, types.CodeType)]
        for candidate in nested:
            if candidate.co_name == name:
                return candidate
        level = nested
    return None


def _has_name(code, name):
    return name in code.co_names or any(
        _has_name(c, name) for c in code.co_consts if hasattr(c, "co_code"))


def _same_code(compiled, original, mangle):
    # The bytecode decides (an edit that keeps every name, such as `>` for
    # `<`, changes only the bytecode); names, variables and constants are
    # compared too, since the bytecode refers to them by index.
    if compiled.co_code != original.co_code or compiled.co_argcount != original.co_argcount:
        return False
    for field in ("co_varnames", "co_names", "co_freevars", "co_cellvars"):
        if tuple(mangle(n) for n in getattr(compiled, field)) != getattr(original, field):
            return False
    if len(compiled.co_consts) != len(original.co_consts):
        return False
    for mine, theirs in zip(compiled.co_consts, original.co_consts, strict=True):
        if hasattr(mine, "co_code"):
            if not (hasattr(theirs, "co_code") and _same_code(mine, theirs, mangle)):
                return False
        elif type(mine) is not type(theirs) or (mine != theirs and not _same_qualname(mine, theirs)):
            return False
    return True


def _same_qualname(mine, theirs):
    """A class body's `__qualname__` constant: compiled here it may start
    with `__autograph_enclosing__.<locals>.` and lacks the enclosing classes
    of the original."""
    if not isinstance(mine, str) or ".<locals>." not in mine:
        return False
    mine = mine.removeprefix("__autograph_enclosing__.<locals>.")
    return mine == theirs or theirs.endswith("." + mine)


def code_qualname(f):
    """Where `f` was defined: its code's qualname (functools.wraps copies
    the wrapped function's `__qualname__` onto a wrapper, which would mangle
    `__names` for a class the wrapper is not in); `__qualname__` before 3.11."""
    return getattr(f.__code__, "co_qualname", f.__qualname__)


def unmangled(identifier):
    """The mangler outside classes (`private_name_mangler`): the identity."""
    return identifier


def private_name_mangler(qualname):
    """The function that mangles `__name` as Python does inside the
    innermost class around the function `qualname` names, its functions
    nested in methods included (identity outside classes). In a qualname a
    class is a part followed by a name; a function, one followed by
    `<locals>`."""
    parts = qualname.split(".")
    owner = next((parts[i] for i in range(len(parts) - 2, -1, -1)
                  if parts[i] != "<locals>" and parts[i + 1] != "<locals>"), None)
    if owner is None or not owner.strip("_"):
        return unmangled
    prefix = "_" + owner.lstrip("_")

    def mangle(identifier):
        if identifier and identifier.startswith("__") and not identifier.endswith("__") and "." not in identifier:
            return prefix + identifier
        return identifier

    return mangle


def _check_matches(f, node, filename):
    """Raises if the parsed definition does not describe `f`'s code."""
    code = f.__code__
    args = node.args
    names = [a.id for a in args.posonlyargs + args.args]
    names += [a.id for a in args.kwonlyargs]
    expected = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    if names != expected:
        raise ConversionError(
            f"cannot convert {_describe(f)}: the source at {filename}:{code.co_firstlineno} "
            f"takes ({', '.join(names)}) but the function takes ({', '.join(expected)}); "
            "the file may have changed since import")
