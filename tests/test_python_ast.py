"""`python_ast.from_ast` turns Python's `ast` into the converters' gast
trees, and `to_ast` turns them back: each must give exactly the tree gast's
own `ast_to_gast` / `gast_to_ast` gives (fields and positions), on every
construct of the language and on real modules."""

import ast
import inspect
import os
import textwrap

import gast
import pytest

from autograph.python_ast import from_ast, to_ast
from tools.program_generator import generate

CONSTRUCTS = '''
import os, sys as system
from . import sibling
from os.path import join as joined, exists
async def coroutine(a, /, b: int = 1, *args: str, c, d=2, **kwargs) -> None:
    global g
    async with open(a) as f, open(b):
        async for x in f:
            await x
    try:
        pass
    except (ValueError, TypeError) as error:
        raise RuntimeError("no") from error
    except Exception:
        pass
    else:
        pass
    finally:
        del a, b
    try:
        pass
    except* OSError as group:
        pass
def generator():
    x = yield
    yield from range(3)
    nonlocal_ = lambda a, b=1, *c, d, **e: (a, b, c, d, e)
    return [i for i in range(3) if i for j in range(i)], {k: v for k, v in {}.items()}, {s for s in ()}
@decorator(1)
class Thing(Base, metaclass=Meta):
    attribute: int = 0
    other: str
    def method(self):
        def inner():
            nonlocal self
            self = None
        match self:
            case [1, 2, *rest]:
                pass
            case {"key": value, **others}:
                pass
            case Point(x=0, y=yy) as point:
                pass
            case str() | None:
                pass
            case _:
                pass
        x = y = -1 if not self else +2
        x += 1; x[1:2, ::3] = 4; x.a @= b
        assert x, f"{x!r:>10} {y}"
        while x: break
        else: pass
        for a, *b in c: pass
        else: pass
        print(*a, **b); (z := 3); ...
        return b"bytes", 1j, 1.5, None, True, x if y else z, a < b <= c, not a and b or c, ~a >> 1 << 2 ^ 3 | 4 & 5
'''


def _sources():
    yield "constructs", CONSTRUCTS
    for seed in range(40):
        yield f"random program {seed}", generate(seed)
    for module in (ast, inspect, textwrap, os):
        yield module.__name__, inspect.getsource(module)
    from benchmarks import corpus
    for f, _ in corpus.CASES[:20]:
        yield f.__name__, textwrap.dedent(inspect.getsource(f))


@pytest.mark.parametrize("name, source", list(_sources()), ids=lambda v: v if len(v) < 40 else "")
def test_to_ast_equals_gasts_own_conversion(name, source):
    tree = gast.ast_to_gast(ast.parse(source))
    ours, gasts = to_ast(tree), gast.gast_to_ast(tree)
    assert ast.dump(ours, include_attributes=True) == ast.dump(gasts, include_attributes=True)
    compile(ours, name, "exec")


@pytest.mark.parametrize("name, source", list(_sources()), ids=lambda v: v if len(v) < 40 else "")
def test_from_ast_equals_gasts_own_conversion(name, source):
    tree = ast.parse(source)
    assert gast.dump(from_ast(tree), include_attributes=True) == gast.dump(gast.ast_to_gast(tree),
                                                                            include_attributes=True)


def test_from_ast_moves_line_numbers_and_keeps_columns():
    tree = ast.parse("def f(a):\n    try:\n        return (a +\n                1)\n    except E as e:\n        pass\n")
    moved = from_ast(tree, 40)
    for ours, theirs in zip(gast.walk(moved), gast.walk(gast.ast_to_gast(tree)), strict=True):
        assert type(ours) is type(theirs)
        if getattr(theirs, "lineno", None) is not None:
            assert (ours.lineno, ours.end_lineno) == (theirs.lineno + 40, theirs.end_lineno + 40)
            assert (ours.col_offset, ours.end_col_offset) == (theirs.col_offset, theirs.end_col_offset)
    assert [n.lineno for n in gast.walk(moved) if isinstance(n, gast.Return)] == [43]


def test_contexts_and_operators_are_shared_as_ast_parse_shares_them():
    tree = to_ast(gast.ast_to_gast(ast.parse("a = b + c - d")))
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    assert names[1].ctx is names[2].ctx and type(names[1].ctx) is ast.Load
