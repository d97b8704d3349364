"""Finding and parsing the source of a live function.

`parse_function(f)` returns the gast tree of `f`'s definition (a FunctionDef,
AsyncFunctionDef or Lambda) with line numbers of the user's file, and the
file name. It checks that the source found still describes `f` (the file may
have changed after import) and raises `ConversionError` saying why not.
"""

import __future__
import ast
import copy
import inspect
import linecache
import sys

import gast

from autograph.errors import ConversionError

__all__ = ["parse_function", "parse_source"]


def parse_source(source, filename="<source>"):
    return gast.parse(source, filename=filename)


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
    block = inspect.getblock(lines[start:])
    # An indented definition is parsed under `if 1:` rather than dedented:
    # lines of a multi-line string may start at column 0, and columns stay
    # the file's own.
    indented = block[0][:1].isspace()
    source = ("if 1:\n" if indented else "") + "".join(block)
    try:
        module = gast.parse(source)
    except SyntaxError as e:
        raise ConversionError(f"cannot convert {_describe(f)}: its source at {filename}:{start + 1} "
                              f"does not parse ({e.msg}); it may have changed since import") from None
    if not module.body:
        raise ConversionError(f"cannot convert {_describe(f)}: no definition found at {filename}:{start + 1}")
    node = module.body[0].body[0] if indented else module.body[0]
    _shift(node, start - indented, 0)
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and node.name == code.co_name \
            and not _compiles_to(source, f):
        raise ConversionError(
            f"cannot convert {_describe(f)}: the source at {filename}:{start + 1} no longer matches "
            "the function's code; the file changed since import (reload the module)")
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) or node.name != code.co_name:
        raise ConversionError(
            f"cannot convert {_describe(f)}: the source at {filename}:{start + 1} does not define "
            f"{code.co_name!r}; the file may have changed since import")
    return node


def _shift(tree, lines, columns):
    for node in gast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += lines
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += lines
            if columns and getattr(node, "col_offset", None) is not None:
                node.col_offset += columns
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += columns


_module_cache = {}


def _parse_module_lines(filename, lines):
    key = (filename, len(lines), lines[0] if lines else "", lines[-1] if lines else "")
    tree = _module_cache.get(key)
    if tree is None:
        tree = gast.parse("".join(lines))
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
        candidates = [n for n in candidates if _same_lambda_code(n, code, filename)]
    if len(candidates) != 1:
        where = f"{filename}:{code.co_firstlineno}"
        if not candidates:
            raise ConversionError(f"cannot convert lambda at {where}: its source was not found; "
                                  "the file may have changed since import")
        raise ConversionError(f"cannot convert lambda at {where}: several lambdas on that line "
                              "look the same; put it on a line of its own or use a def")
    return copy.deepcopy(candidates[0])


def _same_lambda_code(node, code, filename):
    """True if compiling `node` gives the same bytecode as `code`."""
    expr = gast.gast_to_ast(gast.Expression(body=node))
    ast.fix_missing_locations(expr)
    try:
        compiled = compile(expr, filename, "eval")
    except SyntaxError:
        return False
    for const in compiled.co_consts:
        if hasattr(const, "co_code"):
            return (const.co_code == code.co_code and const.co_names == code.co_names
                    and _plain_consts(const) == _plain_consts(code))
    return False


def _plain_consts(code):
    return tuple(c for c in code.co_consts if not hasattr(c, "co_code"))


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _compiles_to(source, f):
    """True if compiling `source` (the text found for `f`, as parsed) gives
    `f`'s variables, names and constants: the text still is its source.
    Compiled on its own, `f`'s free variables read as globals."""
    code = f.__code__
    try:
        module = compile(source, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    mangle = private_name_mangler(f.__qualname__)
    if _defines_same(module, code, mangle):
        return True
    # A function in a test module whose `assert`s pytest rewrote on import.
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    if rewrite is None or not _has_name(code, "@pytest_ar"):
        return False
    tree = ast.parse(source)
    rewrite.rewrite_asserts(tree, source.encode(), code.co_filename)
    module = compile(tree, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    return _defines_same(module, code, mangle)


def _defines_same(module, code, mangle):
    found = [c for c in module.co_consts if hasattr(c, "co_code") and c.co_name == code.co_name]
    return bool(found) and _same_code(found[0], code, mangle, frozenset(code.co_freevars))


def _has_name(code, name):
    return name in code.co_names or any(
        _has_name(c, name) for c in code.co_consts if hasattr(c, "co_code"))


def _same_code(compiled, original, mangle, free):
    # Not co_code: the same source compiles to different bytecode under
    # other compilers of the same version (pytest's assertion rewriting, for
    # one). Names, variables and constants change with nearly any edit.
    if compiled.co_varnames != original.co_varnames or compiled.co_argcount != original.co_argcount:
        return False
    # `free`: the function's free variables, globals when compiled alone
    # (a name may also be an attribute name, so both readings are tried).
    names = tuple(mangle(n) for n in compiled.co_names)
    if names != original.co_names and tuple(n for n in names if n not in free) != original.co_names:
        return False
    if len(compiled.co_consts) != len(original.co_consts):
        return False
    for mine, theirs in zip(compiled.co_consts, original.co_consts):
        if hasattr(mine, "co_code"):
            if not (hasattr(theirs, "co_code") and _same_code(mine, theirs, mangle, free)):
                return False
        elif type(mine) is not type(theirs) or (mine != theirs and not _same_qualname(mine, theirs)):
            return False
    return True


def _same_qualname(mine, theirs):
    """A class body's `__qualname__` constant: compiled here it starts with
    `outer.<locals>.` and lacks the enclosing classes of the original."""
    if not isinstance(mine, str) or ".<locals>." not in mine:
        return False
    mine = mine[len("outer.<locals>."):] if mine.startswith("outer.<locals>.") else mine
    return mine == theirs or theirs.endswith("." + mine)


def private_name_mangler(qualname):
    """The function that mangles `__name` as Python does inside the class
    that `qualname` names (identity outside classes)."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>" or not parts[-2].strip("_"):
        return lambda identifier: identifier
    prefix = "_" + parts[-2].lstrip("_")

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
