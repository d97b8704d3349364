"""converters/asserts.py: `assert test, msg` becomes
`ag__.assert_stmt(test, lambda: msg)`; the message is evaluated only when
the assertion fails; under `python -O` assertions disappear.

PYTEST_DONT_REWRITE: the snippets below must keep Python's own `assert`
semantics (pytest would otherwise rewrite them and change their messages).
"""

import subprocess
import sys
import textwrap

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401

import autograph

# Snippets -----------------------------------------------------------------

def with_message(x):
    assert x > 0, f"bad {x}"
    return x


def without_message(x):
    assert x < 10
    return x


def message_logged(x):
    assert log(x), log("message")
    return "ok"


def message_is_object(x):
    assert x, ("tuple", x)
    return x


def assert_in_branch(x):
    if x > 0:
        assert x % 2 == 0, "odd positive"
        x = x // 2
    return x


def assert_in_loop(xs):
    total = 0
    for x in xs:
        assert x >= 0, f"negative: {x}"
        total += x
    return total


def assert_with_logical_test(a, b):
    assert a and not b, "need a and not b"
    return 1


def walrus_message(x):
    assert x, (m := "walrus message")  # noqa: F841
    return x


def message_raises(x):
    assert x, 1 / 0
    return x


BEHAVIOUR = [
    (with_message, [(1,), (0,), (-3,)]),
    (without_message, [(1,), (10,), (11,)]),
    (message_logged, [(1,), (0,)]),
    (message_is_object, [(1,), (0,), ([],)]),
    (assert_in_branch, [(4,), (3,), (-1,)]),
    (assert_in_loop, [([1, 2, 3],), ([1, -2, 3],), ([],)]),
    (assert_with_logical_test, [(1, 0), (1, 1), (0, 0)]),
    (walrus_message, [(1,), (0,)]),
    (message_raises, [(1,), (0,)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_message_runs_only_on_failure():
    converted = autograph.to_graph(message_logged)
    del LOG[:]
    assert converted(1) == "ok"
    assert LOG == [1]
    del LOG[:]
    with pytest.raises(AssertionError) as info:
        converted(0)
    assert LOG == [0, "message"]
    assert info.value.args == ("message",)


def test_assertion_without_message_has_no_args():
    with pytest.raises(AssertionError) as info:
        autograph.to_graph(without_message)(11)
    assert info.value.args == ()


def test_message_object_is_kept_as_is():
    with pytest.raises(AssertionError) as info:
        autograph.to_graph(message_is_object)(0)
    assert info.value.args == (("tuple", 0),)


SHAPES = [
    (with_message, "ag__.assert_stmt(x > 0, lambda: f'bad {x}')"),
    (without_message, "ag__.assert_stmt(x < 10)"),
    (assert_with_logical_test,
     "ag__.assert_stmt(ag__.and_(a, lambda: ag__.not_(b), pure=True), lambda: 'need a and not b')"),
    (assert_in_loop, "ag__.assert_stmt(x >= 0, lambda: f'negative: {x}')"),
]


@pytest.mark.parametrize("fn,line", SHAPES, ids=[f.__name__ for f, _ in SHAPES])
def test_generated_line(fn, line):
    assert line in lines_of(fn)


def test_no_assert_statement_left():
    for fn in (with_message, without_message, assert_in_branch, assert_in_loop):
        assert not any(line.startswith("assert ") for line in lines_of(fn)), fn.__name__


def test_walrus_message_stays_python():
    lines = lines_of(walrus_message)
    assert "assert x, (m := 'walrus message')" in lines
    assert not any("assert_stmt" in line for line in lines)


def test_optimized_mode_removes_assertions(tmp_path):
    module = tmp_path / "optimized_snippet.py"
    module.write_text(textwrap.dedent('''
        def f(x):
            assert x > 0, "never checked under -O"
            return x
    '''))
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import autograph
        from optimized_snippet import f
        code = autograph.to_code(f)
        assert "assert" not in code, code
        print(autograph.to_graph(f)(-1))
    ''')
    result = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "-1"
