"""Transpiler bugs found by tools/realworld.py (converting every function of
real PyPI libraries and running their test suites), each reduced to a small
function and checked differentially: `autograph.to_graph(f)` must convert `f`
and behave exactly like it."""

import functools
import inspect
import traceback

import pytest

import autograph


def _outcome(fn, *args, **kwargs):
    try:
        return ("returned", fn(*args, **kwargs))
    except Exception as error:  # noqa: BLE001
        return ("raised", type(error), str(error))


def _code(fn):
    try:
        return autograph.to_code(fn)
    except Exception:  # noqa: BLE001
        return traceback.format_exc()


def check(fn, calls, must_convert=True):
    """`fn` and its conversion agree on every call in `calls` (each an
    args tuple, or (args, kwargs)); with must_convert, to_graph must really
    convert (not return `fn` unconverted with a warning)."""
    converted = autograph.to_graph(fn)
    if must_convert:
        assert converted is not fn, f"to_graph returned {fn.__qualname__} unconverted:\n{_code(fn)}"
    for call in calls:
        args, kwargs = call if len(call) == 2 and isinstance(call[1], dict) else (call, {})
        expected = _outcome(fn, *args, **kwargs)
        actual = _outcome(converted, *args, **kwargs)
        assert actual == expected, f"call {args!r} {kwargs!r}\n\ngenerated code:\n{_code(fn)}"


# python-dateutil 2.9.0.post0: every test module that builds a tz.tzoffset
# fails to import converted ("type object 'tzoffset' has no attribute
# '__instances'"; all 2031 tests lost). _TzOffsetFactory.__call__ reads
# `cls.__instances`, which Python compiles as `cls._TzOffsetFactory__instances`
# inside a class body; the method's source compiled on its own loses the
# private-name mangling.


class _Counter:
    def __init__(self):
        self.__n = 0

    def bump(self, k):
        if k > 0:
            self.__n += k
        return self.__n


class _Factory(type):
    def __init__(cls, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cls.__instances = {}

    def __call__(cls, key):
        instance = cls.__instances.get(key, None)
        if instance is None:
            instance = cls.__instances.setdefault(key, super().__call__())
        return instance


class _Zone(metaclass=_Factory):
    pass


def test_private_attribute_is_mangled():
    for k in (2, 0):
        expected, actual = _Counter(), _Counter()
        assert _outcome(autograph.to_graph(_Counter.bump), actual, k) == _outcome(_Counter.bump, expected, k)
    assert "self._Counter__n" in autograph.to_code(_Counter.bump)


def test_private_attribute_of_metaclass_is_mangled():
    converted = autograph.to_graph(_Factory.__call__)
    assert converted is not _Factory.__call__
    assert _outcome(converted, _Zone, "a") == _outcome(_Factory.__call__, _Zone, "a")


# python-dateutil 2.9.0.post0: dateutil.parser's deprecated private classes'
# __init__ are returned unconverted, silently. `conversion.is_generated` asks
# `code in _generated` of a WeakSet, which compares code objects by value, and
# a code object's equality ignores co_filename: converting
# `__deprecate_private_class` registers its nested (unchanged) class-body
# method, which equals the method of every class the original factory makes.


def _make_class():
    class Inner:
        def method(self, x):
            if x > 0:
                return x
            return -x

    return Inner


def test_function_equal_to_generated_code_is_still_converted():
    autograph.to_graph(_make_class)()          # registers the generated copy
    method = _make_class().__dict__["method"]  # made by the original factory
    check(method, [(None, 3), (None, -3)])


# parse 1.22.4 extract_format ends with `return locals()` (tests
# test_parse.py::test_numbers and test_pattern.py::test_format_variety fail
# converted). Names read only through locals()/vars()/eval are seen as dead
# after the `if`, so the branch's assignment is dropped: locals()["zero"] is
# False instead of True. Converted locals() also holds the generated names
# (ag__, cond, loop_test, loop_body, break_, ...).


def _extract_zero(spec):
    zero = False
    if spec and spec[0] == "0":
        zero = True
        spec = spec[1:]
    return locals()


def _locals_item(x):
    y = 0
    if x:
        y = 1
    return locals()["y"]


def _eval_name(s):
    zero = False
    if s:
        zero = True  # noqa: F841 - read by eval
    return eval("zero")


def _vars_after_loop(s):
    n = 0
    while s:
        if not s[0].isdigit():
            break
        n += 1
        s = s[1:]
    return vars()


# Conversion moves branch and loop bodies into nested functions, where
# locals()/vars()/eval() would see other variables: such functions are
# returned unconverted, with a warning naming the call, and behave exactly.


@pytest.mark.parametrize("fn, calls, construct", [
    (_locals_item, [(0,), (1,)], "locals"),
    (_eval_name, [("",), ("0",)], "eval"),
    (_extract_zero, [("05d",), ("5d",), ("",)], "locals"),
    (_vars_after_loop, [("12x",), ("",)], "vars"),
])
def test_functions_reading_their_locals_run_unconverted(fn, calls, construct, caplog):
    with caplog.at_level("WARNING", logger="autograph"):
        converted = autograph.to_graph(fn)
    assert converted is fn
    assert any(f"`{construct}()` reads the function's local variables" in r.getMessage() for r in caplog.records)
    with pytest.raises(autograph.ConversionError, match=rf"`{construct}\(\)` reads the function's local variables"):
        autograph.to_code(fn)
    check(fn, calls, must_convert=False)


# semver 3.1.2 Version.bump_build and Version.parse are returned unconverted
# ("does not parse (unexpected indent)"): their docstrings hold a backslash
# continuation whose next line starts at column 0, so dedenting the method's
# source removes nothing. Any string literal with a line less indented than
# the `def` has the same effect.


class _Version:
    def bump(self, token):
        """Docstring as in semver: a doctest output line continued \
at column 0."""
        if token is None:
            return "0"
        return token + ".1"

    def triple_quoted(self, flag):
        text = """first line
second line at column 0"""
        if flag:
            return text.upper()
        return text


def _outer():
    def inner(n):
        banner = """header
body"""
        while n > 0:
            n -= 1
            banner += "!"
        return banner

    return inner


def test_method_with_docstring_continuation_at_column_0():
    check(_Version.bump, [(_Version(), None), (_Version(), "rc")])


def test_method_with_string_line_at_column_0():
    check(_Version.triple_quoted, [(_Version(), True), (_Version(), False)])


def test_nested_function_with_string_line_at_column_0():
    check(_outer(), [(0,), (3,)])


def _with_a_string_line_at_column_0(n):
    text = """a line
at column 0"""
    while n > 0:
        n -= 1
        text += "!"
    return text


def _decorated_with_a_bracket_at_the_defs_indent():
    @functools.lru_cache(
        maxsize=None
    )
    def g(n):
        total = 0
        for i in range(n):
            total += [i,
2][0]  # a bracket continued at column 0
        return total
    return g.__wrapped__


def _plain_loop(n):
    total = 0
    for i in range(n):
        if i % 2:
            total += i
    return total


def test_a_definition_is_found_without_tokenizing_the_file(monkeypatch):
    # The lines up to the next one indented no deeper than the `def` hold
    # the definition; inspect.getblock (a tokenizer pass over the rest of
    # the file) is asked only where they do not parse, as above.
    calls = []
    monkeypatch.setattr(inspect, "getblock", lambda lines, real=inspect.getblock: calls.append(1) or real(lines))
    check(_plain_loop, [(3,), (6,)])
    assert calls == []
    check(_with_a_string_line_at_column_0, [(0,), (3,)])
    assert calls == [1]
    check(_decorated_with_a_bracket_at_the_defs_indent(), [(0,), (4,)])
    assert calls == [1, 1]


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
