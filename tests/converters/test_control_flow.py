"""converters/control_flow.py: `if`, `while` and `for` become
`ag__.if_stmt`, `ag__.while_stmt` and `ag__.for_stmt` with body functions
that take and return their state; `ag__.Undefined('y')` appears only where
a state variable may be unbound, and reads that may meet it are
`ag__.ld(y)`; variables captured by closures travel as `nonlocal`."""

import re

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

G = 0


# Snippets -----------------------------------------------------------------

def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0.0
    return x


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def sum_for(xs):
    s = 0
    for x in xs:
        s += x
    return s


def one_branch_defines(x):
    if x > 0:
        y = 1
    return y


def else_only_defines(x):
    if x > 0:
        pass
    else:
        y = 2
    return y


def all_paths_define(x):
    if x > 0:
        y = 1
    elif x < 0:
        y = -1
    else:
        y = 0
    return y


def defined_before_branch(x):
    y = 0
    if x > 0:
        y = 1
    return y


def no_outputs(x):
    if x:
        log("side")


def elif_chain(x):
    if x > 10:
        r = "big"
    elif x > 3:
        r = "medium"
    elif x == 0:
        r = "zero"
    else:
        r = "small"
    return r


def tuple_target(pairs):
    s = 0
    for a, b in pairs:
        s += a * b
    return s


def starred_target(rows):
    out = []
    for first, *rest in rows:
        out.append((first, len(rest)))
    return out


def loop_target_after_loop(xs):
    for x in xs:
        pass
    return x


def while_defines_then_read(n):
    while n > 0:
        last = n
        n -= 1
    return last


def walrus_loop_var_not_live_after(values):
    it = iter(values)
    out = []
    while (n := next(it, None)) is not None:
        out.append(n)
    return out


def lambdas_in_loop(n):
    fs = []
    i = 0
    while i < n:
        fs.append(lambda: i)
        i += 1
    return [f() for f in fs]


def closure_per_iteration(xs):
    fs = []
    for x in xs:
        def get(x=x):
            return x
        fs.append(get)
    return [f() for f in fs]


def writes_global(x):
    global G
    if x:
        G = x
    return G


def writes_nonlocal(x):
    total = 0

    def add(v):
        nonlocal total
        if v > 0:
            total += v
        return total

    for i in range(x):
        add(i)
    return total


def del_in_branch(x):
    y = 1
    if x:
        del y
    return y


def nested_loops(n):
    pairs = []
    for i in range(n):
        j = 0
        while j < i:
            pairs.append((i, j))
            j += 1
    return pairs


def loop_raises(xs):
    total = 0
    for x in xs:
        total += 10 // x
    return total


def prints_in_branches(x):
    if x > 0:
        print("positive", x)
    else:
        print("non-positive", x)
    while x > 0:
        print("tick", x)
        x -= 2


def try_in_loop(xs):
    out = []
    for x in xs:
        try:
            out.append(1 // x)
        except ZeroDivisionError as e:
            out.append(str(e))
    return out


def match_in_loop(items):
    out = []
    for item in items:
        match item:
            case int(n) if n > 0:
                out.append("pos")
            case [a, b]:
                out.append(a + b)
            case _:
                out.append("other")
    return out


def user_named_if_body(x):
    if_body = 3
    if x:
        x = x + if_body
    return x


def user_named_loop_helpers(n):
    loop_body = "lb"
    loop_test = "lt"
    else_body = "eb"
    while n > 0:
        n -= 1
    return n, loop_body, loop_test, else_body


def user_named_ag(x):
    ag__ = 5
    if x > 0:
        x = x + ag__
    return x


def user_named_itr(pairs):
    itr = "mine"
    out = []
    for a, b in pairs:
        out.append(a + b)
    return out, itr


def generator_expression_inside(xs):
    if xs:
        total = sum(x * x for x in xs if x > 0)
    else:
        total = 0
    return total


def if_in_finally(c):
    try:
        pass
    finally:
        if c:
            v = 1
        else:
            v = 2
    return v


def loop_in_finally(n):
    total = 0
    try:
        total = 1
    finally:
        for i in range(n):
            total += i
    return total


def maybe_unbound_read_in_branch(c):
    match c:
        case 2:
            x = 5
    if c:
        y = x
    else:
        y = 0
    return y


BEHAVIOUR = [
    (if_in_finally, [(0,), (1,)]),
    (loop_in_finally, [(0,), (4,)]),
    (maybe_unbound_read_in_branch, [(0,), (2,), (1,)]),
    (square_if_positive, [(9.0,), (-1.0,), (0,)]),
    (collatz, [(1,), (6,), (27,)]),
    (sum_for, [([1, 2, 3],), ([],), (range(5),)]),
    (one_branch_defines, [(1,), (-1,)]),
    (else_only_defines, [(1,), (-1,)]),
    (all_paths_define, [(1,), (-1,), (0,)]),
    (defined_before_branch, [(1,), (-1,)]),
    (no_outputs, [(1,), (0,)]),
    (elif_chain, [(11,), (5,), (0,), (2,)]),
    (tuple_target, [([(1, 2), (3, 4)],), ([],)]),
    (starred_target, [([[1, 2, 3], [4]],)]),
    (loop_target_after_loop, [([1, 2],), ([],)]),
    (while_defines_then_read, [(3,), (0,)]),
    (walrus_loop_var_not_live_after, [([1, 2],), ([],)]),
    (lambdas_in_loop, [(3,), (0,)]),
    (closure_per_iteration, [([1, 2, 3],)]),
    (writes_nonlocal, [(4,), (0,)]),
    (del_in_branch, [(0,), (1,)]),
    (nested_loops, [(4,), (0,)]),
    (loop_raises, [([1, 2],), ([1, 0],)]),
    (prints_in_branches, [(5,), (-1,)]),
    (try_in_loop, [([1, 0, 2],)]),
    (match_in_loop, [([1, -1, [1, 2], "s"],)]),
    (user_named_if_body, [(1,), (0,)]),
    (user_named_loop_helpers, [(3,)]),
    (user_named_ag, [(1,), (-1,)]),
    (user_named_itr, [([(1, 2)],)]),
    (generator_expression_inside, [([1, -2, 3],), ([],)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_global_write_in_branch():
    global G
    converted = autograph.to_graph(writes_global)
    try:
        assert converted(7) == 7 and G == 7
        assert converted(0) == 7
    finally:
        G = 0
    lines = lines_of(writes_global)
    assert lines.count("global G") == 2  # the function's and the branch function's


def test_unbound_read_raises_pythons_error():
    with pytest.raises(UnboundLocalError) as expected:
        one_branch_defines(-1)
    with pytest.raises(UnboundLocalError) as actual:
        autograph.to_graph(one_branch_defines)(-1)
    assert str(actual.value) == str(expected.value)


# Shape of the generated code ---------------------------------------------

def test_if_shape():
    lines = lines_of(square_if_positive)
    assert "def if_body(x):" in lines
    assert "def else_body(x):" in lines
    assert "x = ag__.if_stmt(x > 0, if_body, else_body, (x,), ('x',))" in lines


def test_while_shape():
    lines = lines_of(collatz)
    assert "def loop_test(n, steps):" in lines
    assert "return n != 1" in lines
    assert "def loop_body(n, steps):" in lines
    assert "n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps), ('n', 'steps'))" in lines
    assert "n = ag__.if_stmt(n % 2 == 0, if_body, else_body, (n,), ('n',))" in lines


def test_for_shape():
    lines = lines_of(sum_for)
    assert "def loop_body(x, s):" in lines
    assert "s = ag__.for_stmt(xs, None, loop_body, (s,), ('s',))" in lines


def test_tuple_target_is_unpacked_from_itr():
    lines = lines_of(tuple_target)
    assert "def loop_body(itr, s):" in lines
    assert "a, b = itr" in lines


def test_user_variable_itr_makes_helper_itr_1():
    lines = lines_of(user_named_itr)
    assert "itr = 'mine'" in lines
    assert "def loop_body(itr_1):" in lines
    assert "a, b = itr_1" in lines


def test_if_without_else_or_outputs_passes_none():
    lines = lines_of(no_outputs)
    assert "ag__.if_stmt(x, if_body, None, (), ())" in lines
    assert not any(line.startswith("def else_body") for line in lines)


def test_variable_defined_in_one_branch_gets_one_marker_and_checked_read():
    for fn in (one_branch_defines, else_only_defines):
        code = autograph.to_code(fn)
        assert code.count("ag__.Undefined('y')") == 1, code
        assert "return ag__.ld(y)" in lines_of(fn)


def test_loop_target_read_after_loop_is_marked_once():
    code = autograph.to_code(loop_target_after_loop)
    assert code.count("ag__.Undefined('x')") == 1
    assert "return ag__.ld(x)" in lines_of(loop_target_after_loop)
    with pytest.raises(UnboundLocalError, match="'x'"):
        autograph.to_graph(loop_target_after_loop)([])


@pytest.mark.parametrize("fn", [all_paths_define, defined_before_branch, square_if_positive, collatz,
                                sum_for, elif_chain, tuple_target],
                         ids=lambda f: f.__name__)
def test_no_marker_when_every_path_defines(fn):
    code = autograph.to_code(fn)
    assert "Undefined" not in code
    assert "ag__.ld(" not in code


def test_no_marker_for_variable_written_before_every_read_and_dead_after_loop():
    # `n` is assigned by the loop test before every read, and nothing reads
    # it after the loop: it is not state and needs no marker.
    code = autograph.to_code(walrus_loop_var_not_live_after)
    assert "Undefined" not in code
    assert "'n'" not in code


def test_all_paths_define_has_no_inputs():
    lines = lines_of(all_paths_define)
    assert "def if_body():" in lines
    assert "y = ag__.if_stmt(x > 0, if_body, else_body, (), ('y',))" in lines


def test_captured_variable_is_nonlocal_not_state():
    lines = lines_of(lambdas_in_loop)
    assert "nonlocal i" in lines
    loop_call = next(line for line in lines if "ag__.while_stmt(" in line)
    assert "'i'" not in loop_call
    assert autograph.to_graph(lambdas_in_loop)(3) == [3, 3, 3]


def test_no_nonlocal_for_uncaptured_state():
    for fn in (collatz, sum_for, square_if_positive, nested_loops, one_branch_defines):
        assert "nonlocal" not in autograph.to_code(fn), fn.__name__


def test_nested_function_with_nonlocal_is_converted_too():
    code = autograph.to_code(writes_nonlocal)
    assert "nonlocal total" in code
    assert code.count("ag__.if_stmt(") >= 1
    assert autograph.to_graph(writes_nonlocal)(4) == writes_nonlocal(4) == 6


def test_user_variable_named_if_body_makes_helper_if_body_1():
    lines = lines_of(user_named_if_body)
    assert "if_body = 3" in lines
    assert "def if_body_1(x):" in lines
    assert "x = x + if_body" in lines
    assert "x = ag__.if_stmt(x, if_body_1, None, (x,), ('x',))" in lines
    assert autograph.to_graph(user_named_if_body)(1) == 4


def test_user_names_of_loop_helpers_make_suffixed_helpers():
    code = autograph.to_code(user_named_loop_helpers)
    assert "def loop_test_1(n):" in code
    assert "def loop_body_1(n):" in code
    assert "n = ag__.while_stmt(loop_test_1, loop_body_1, (n,), ('n',))" in code


def test_user_variable_named_ag_renames_the_runtime():
    code = autograph.to_code(user_named_ag)
    lines = lines_of(user_named_ag)
    assert "ag__ = 5" in lines
    assert "x = x + ag__" in lines
    assert "ag__.if_stmt" not in code
    runtime_names = set(re.findall(r"\b(\w+)\.if_stmt\(", code))
    assert len(runtime_names) == 1
    (runtime_name,) = runtime_names
    assert runtime_name != "ag__" and re.fullmatch(r"ag_+\d+", runtime_name), runtime_name
    assert autograph.to_graph(user_named_ag)(1) == 6
    assert autograph.to_graph(user_named_ag)(-1) == -1


def test_nested_helpers_reuse_names_without_clashing():
    code = autograph.to_code(nested_loops)
    assert "def loop_body(" in code
    for name in re.findall(r"def (\w+)\(", code):
        assert re.fullmatch(r"(nested_loops|if_body|else_body|loop_test|extra_test|loop_body)(_\d+)?", name), name
