"""converters/jumps.py: the shared mechanism of the jump converters.
`structure` moves the statements after an `if` with an always-jumping
branch into its other branch; `lower` turns the remaining jumps into flags
and guards the statements after a jump that may have happened. Tested on
source snippets directly, and end to end through jumps of all three kinds
in combination."""

import ast
import textwrap

import gast
import pytest
from autograph.converters import jumps
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401


def _body(source):
    """The statements of the single function in `source`."""
    return gast.parse(textwrap.dedent(source)).body[0].body


def _unparse(stmts):
    module = gast.Module(body=stmts, type_ignores=[])
    tree = gast.gast_to_ast(module)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def _is_break(stmt):
    return isinstance(stmt, gast.Break)


def _is_return(stmt):
    return isinstance(stmt, gast.Return)


def _norm(source):
    return ast.unparse(ast.parse(textwrap.dedent(source)))


# contains / always_jumps ---------------------------------------------------

CONTAINS = [
    ("def f():\n    x = 1\n", False, False),
    ("def f():\n    break\n", True, True),
    ("def f():\n    if a:\n        break\n", True, True),
    ("def f():\n    while a:\n        break\n", False, True),
    ("def f():\n    for x in y:\n        pass\n    else:\n        break\n", True, True),
    ("def f():\n    try:\n        pass\n    except E:\n        break\n", True, True),
    ("def f():\n    with c:\n        break\n", True, True),
    ("def f():\n    def g():\n        return 1\n", False, False),
]


@pytest.mark.parametrize("source,outside_loops,into_loops", CONTAINS)
def test_contains(source, outside_loops, into_loops):
    body = _body(source)
    assert jumps.contains(body, _is_break, into_loops=False) is outside_loops
    assert jumps.contains(body, _is_break, into_loops=True) is into_loops


def test_contains_does_not_enter_nested_functions():
    body = _body("def f():\n    def g():\n        return 1\n    class C:\n        x = 1\n")
    assert not jumps.contains(body, _is_return, into_loops=True)


ALWAYS = [
    ("def f():\n    x = 1\n    break\n", True),
    ("def f():\n    if a:\n        break\n    else:\n        break\n", True),
    ("def f():\n    if a:\n        break\n", False),
    ("def f():\n    if a:\n        break\n    x = 1\n", False),
    ("def f():\n    pass\n", False),
]


@pytest.mark.parametrize("source,expected", ALWAYS)
def test_always_jumps(source, expected):
    assert jumps.always_jumps(_body(source), _is_break) is expected


def test_always_jumps_of_empty_block_is_false():
    assert jumps.always_jumps([], _is_break) is False


# structure -----------------------------------------------------------------

STRUCTURE = [
    # the rest moves into the branch that does not jump
    ("""
     def f():
         if x < 0:
             break
         total += x
     """, """
     if x < 0:
         break
     else:
         total += x
     """),
    # and into the `if` branch when the `else` branch jumps
    ("""
     def f():
         if x < 0:
             y = 1
         else:
             break
         total += x
     """, """
     if x < 0:
         y = 1
         total += x
     else:
         break
     """),
    # statements after a jump, or after an `if` whose branches both jump, are dead
    ("""
     def f():
         a = 1
         break
         b = 2
     """, """
     a = 1
     break
     """),
    ("""
     def f():
         if c:
             break
         else:
             break
         dead = 1
     """, """
     if c:
         break
     else:
         break
     """),
    # nested: the inner rest moves first, then the outer
    ("""
     def f():
         if a:
             if b:
                 break
             x = 1
         y = 2
     """, """
     if a:
         if b:
             break
         else:
             x = 1
     y = 2
     """),
]


@pytest.mark.parametrize("source,expected", STRUCTURE)
def test_structure(source, expected):
    result = jumps.structure(_body(source), _is_break, into_loops=False)
    assert _unparse(result) == _norm(expected)


# lower ---------------------------------------------------------------------

def _lower(source, is_jump=_is_break, into_loops=False):
    def replace(stmt):
        return [gast.Assign(targets=[gast.Name(id="flag", ctx=gast.Store(), annotation=None, type_comment=None)],
                            value=gast.Constant(value=True, kind=None), type_comment=None)]
    body, status = jumps.lower(_body(source), is_jump, replace, "flag", into_loops)
    return _unparse(body), status


def test_lower_guards_statements_after_a_maybe_jump():
    code, status = _lower("""
        def f():
            if a:
                if b:
                    break
                x = 1
            y = 2
        """)
    assert status == jumps.MAYBE
    assert code == _norm("""
        if a:
            if b:
                flag = True
            if not flag:
                x = 1
        if not flag:
            y = 2
        """)


def test_lower_always():
    code, status = _lower("def f():\n    x = 1\n    break\n    y = 2\n")
    assert status == jumps.ALWAYS
    assert code == _norm("x = 1\nflag = True\n")


def test_lower_never_leaves_code_alone():
    code, status = _lower("def f():\n    x = 1\n    while c:\n        break\n")
    assert status == jumps.NEVER
    assert code == _norm("x = 1\nwhile c:\n    break\n")


def test_lower_into_loops_calls_on_loop_for_each_loop_left():
    left = []

    def replace(stmt):
        return [gast.Pass()]

    body = _body("""
        def f():
            for x in xs:
                while c:
                    return 1
            other = 2
        """)
    _, status = jumps.lower(body, _is_return, replace, "flag", True, left.append)
    assert status == jumps.MAYBE
    assert [type(loop).__name__ for loop in left] == ["While", "For"]


# End to end: all three jumps together ---------------------------------------

def all_jumps(rows):
    out = []
    for row in rows:
        for v in row:
            if v is None:
                continue
            if v < 0:
                break
            if v == 99:
                return "found 99", out
            out.append(v)
        else:
            out.append("row done")
    return "end", out


def jumps_in_while_true(n):
    i = 0
    while True:
        i += 1
        if i % 2:
            continue
        if i > n:
            break
        if i == 6:
            return "six"
    return i


def jump_guards_side_effects(xs):
    for x in xs:
        log(("a", x))
        if x == 1:
            continue
        log(("b", x))
        if x == 2:
            break
        log(("c", x))
    log("end")


def jumps_inside_try_except(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                continue
            if x < 0:
                raise ValueError(x)
            out.append(x)
        except ValueError:
            break
    return out


BEHAVIOUR = [
    (all_jumps, [([[1, None, 2], [3, -1, 4], [5]],), ([[1, 99, 2]],), ([],), ([[None]],)]),
    (jumps_in_while_true, [(3,), (10,), (0,)]),
    (jump_guards_side_effects, [([0, 1, 2, 3],), ([3, 1],), ([],)]),
    (jumps_inside_try_except, [([1, 0, 2, -1, 3],), ([],)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_all_jumps_are_lowered():
    for fn in (all_jumps, jumps_in_while_true, jump_guards_side_effects):
        lines = lines_of(fn)
        for keyword in ("break", "continue"):
            assert keyword not in lines, (fn.__name__, keyword)
        assert not any(line.startswith("while ") or line.startswith("for ") for line in lines)
