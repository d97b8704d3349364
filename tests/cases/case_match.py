"""match statements."""

from dataclasses import dataclass

from tests.cases import case, log


@dataclass
class Point:
    x: int
    y: int


@case((0,), (1,), (2,), (7,))
def match_literal(v):
    match v:
        case 0:
            r = "zero"
        case 1 | 2:
            r = "one or two"
        case _:
            r = "other"
    return r


@case(([],), ([1],), ([1, 2],), ([1, 2, 3, 4],), ("ab",), ((5, 6),))
def match_sequence(v):
    match v:
        case []:
            return "empty"
        case [x]:
            return ("one", x)
        case [x, y]:
            return ("two", x, y)
        case [x, *rest]:
            return ("many", x, rest)
        case _:
            return "not a sequence"


@case(({"type": "a", "v": 1},), ({"type": "b"},), ({"v": 2, "extra": 3},), ({},))
def match_mapping(d):
    match d:
        case {"type": "a", "v": v}:
            return ("a", v)
        case {"type": t}:
            return ("typed", t)
        case {"v": v, **rest}:
            return ("v", v, rest)
    return "none"


@case((0, 0), (1, 0), (0, 1), (3, 3))
def match_class(x, y):
    p = Point(x, y)
    match p:
        case Point(x=0, y=0):
            return "origin"
        case Point(x=0, y=yy):
            return ("y-axis", yy)
        case Point(x=xx, y=0):
            return ("x-axis", xx)
        case Point(x=a, y=b) if a == b:
            return ("diagonal", a)
        case _:
            return "somewhere"


@case((5,), (-5,), (0,))
def match_guard(v):
    match v:
        case n if n > 0:
            kind = "pos"
        case n if n < 0:
            kind = "neg"
        case n:
            kind = "zero"
    return kind, n


@case((1,), ("s",), (2.5,), ([1],), (None,))
def match_builtin_classes(v):
    match v:
        case int(n):
            return ("int", n)
        case str() as s:
            return ("str", s)
        case float(f) | complex(f):
            return ("num", f)
        case None:
            return "none"
    return "unmatched"


@case((3,), (8,))
def match_in_loop_with_break(n):
    out = []
    for i in range(10):
        match i % 4:
            case 0:
                out.append("zero")
            case 3:
                if i > n:
                    break
                continue
            case x:
                out.append(x)
    return out


@case((1,), (9,))
def match_no_case_taken_undefined(v):
    match v:
        case 1:
            r = "one"
    return r


@case(((1, (2, 3)),), ((1, 2),), ((1, (2, 3, 4)),))
def match_nested_pattern(v):
    match v:
        case (a, (b, c)):
            return a + b + c
        case (a, b):
            return a * b
    return None


@case(("go north",), ("go",), ("look",), ("quit now",))
def match_split_command(cmd):
    match cmd.split():
        case ["go", direction]:
            return "going " + direction
        case ["go"]:
            return "where?"
        case ["look" | "inspect"]:
            return "looking"
        case [verb, *_]:
            return "unknown " + verb


@case((1,), (2,))
def match_side_effect_subject(v):
    def subject():
        log("subject evaluated")
        return v

    match subject():
        case 1:
            log("one")
        case 2:
            log("two")
    return v


@case((1,), (2,), (3,))
def match_return_in_case(v):
    for i in range(3):
        match v:
            case 1:
                return "returned"
            case 2:
                break
    return "after"


@case(((1, 2),), ([3, 4],))
def match_as_pattern(v):
    match v:
        case (1, _) as whole:
            return ("starts with 1", whole)
        case [a, b] as whole:
            return ("pair", a, b, whole)


@case((0,), (1,), (2,))
def match_no_case_matches_after_early_return(c):
    match c:
        case 1:
            if c:
                return "one"
        case 2:
            x = 5
    return x


@case((0,), (1,), (2,))
def match_case_reads_var_marked_undefined_by_other_case(a):
    match a:
        case 0:
            b, y = y  # noqa: F821
        case _:
            if a > 1:
                w = y  # noqa: F841
    return 0
