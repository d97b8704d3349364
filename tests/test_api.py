"""The public API: what to_graph accepts and returns, to_code, decorators,
verbosity, and what happens with what cannot be converted."""

import functools
import inspect
import linecache
import logging
import sys

import pytest

import autograph
from autograph.conversion import is_generated

COUNTER = 1


def _running_converted():
    """True if the caller's frame runs converted code."""
    return is_generated(sys._getframe(1).f_code)


def branchy(x, scale=2, *, offset=0):
    """Doubles positive numbers."""
    if x > 0:
        x = x * scale
    return x + offset + COUNTER


def test_to_graph_keeps_metadata_and_signature():
    converted = autograph.to_graph(branchy)
    assert converted is not branchy
    assert converted.__name__ == "branchy"
    assert converted.__qualname__ == "branchy"
    assert converted.__module__ == __name__
    assert converted.__doc__ == "Doubles positive numbers."
    assert inspect.signature(converted) == inspect.signature(branchy)
    assert converted(3) == branchy(3) == 7
    assert converted(-3, offset=5) == branchy(-3, offset=5)


def test_globals_are_read_live():
    global COUNTER
    converted = autograph.to_graph(branchy)
    before = converted(1)
    COUNTER = 100
    try:
        assert converted(1) == before + 99
    finally:
        COUNTER = 1


def test_closures_share_cells_with_the_original():
    def outer():
        scale = 2

        def inner(x):
            if x > 0:
                return x * scale
            return -x

        def set_scale(value):
            nonlocal scale
            scale = value

        return inner, set_scale

    inner, set_scale = outer()
    converted = autograph.to_graph(inner)
    assert converted(3) == 6
    set_scale(10)
    assert converted(3) == 30 == inner(3)


def _counters():
    count = 0
    offset = 10

    def bump(x):
        nonlocal count
        while x > 0:
            if x % 2:
                count += x
            x -= 1
        return count + offset

    return bump, lambda y: y * offset + count


def test_closures_with_nonlocal_convert():
    """The source check compiles the inner function inside a function that
    binds its free variables, where `nonlocal` is legal."""
    bump, read = _counters()
    plain_bump, plain_read = _counters()
    converted, converted_read = autograph.to_graph(bump), autograph.to_graph(read)
    assert converted is not bump and converted_read is not read
    assert "nonlocal count" in autograph.to_code(bump)
    for x in (3, 0, 4):
        assert converted(x) == plain_bump(x)
        assert converted_read(x) == plain_read(x)


class _Vault:
    def __init__(self):
        self.__secret = 4

    def opener(self):
        def open_(x):
            if x > self.__secret:
                return x - self.__secret
            return 0
        return open_


def test_closure_made_in_a_method_converts_with_its_private_names():
    """Python mangles `__secret` in functions nested in methods too: the
    source check and the conversion mangle for the innermost class."""
    opener = _Vault().opener()
    converted = autograph.to_graph(opener)
    assert converted is not opener
    assert [converted(x) for x in (9, 1)] == [opener(x) for x in (9, 1)]


def _counting(fn):
    @functools.wraps(fn)
    def counted(*args):
        counted.__calls = getattr(counted, "__calls", 0) + 1
        if args[-1] > 0:
            return fn(*args)
        return None
    return counted


class _Counted:
    @_counting
    def double(self, x):
        return 2 * x


def test_wrapper_renamed_by_functools_wraps_converts():
    """functools.wraps gives the wrapper the method's `__qualname__`; names
    are mangled for where the code was defined (`co_qualname`), not for it."""
    wrapper = _Counted.double
    assert wrapper.__qualname__ == "_Counted.double"
    converted = autograph.to_graph(wrapper)
    assert converted is not wrapper
    obj = _Counted()
    assert [converted(obj, x) for x in (3, -1)] == [wrapper(obj, x) for x in (3, -1)]


def test_lambda():
    absolute = lambda x: x if x >= 0 else -x  # noqa: E731
    converted = autograph.to_graph(absolute)
    assert converted.__name__ == "<lambda>"
    assert [converted(v) for v in (-2, 0, 5)] == [2, 0, 5]
    assert "ag__.if_exp(" in autograph.to_code(absolute)


class Account:
    rate = 3

    def __init__(self, balance):
        self.balance = balance

    def grow(self, years):
        for _ in range(years):
            if self.balance > 0:
                self.balance += self.balance * self.rate
        return self.balance

    @staticmethod
    def sign(x):
        return 1 if x > 0 else -1 if x < 0 else 0

    @classmethod
    def make(cls, balance):
        if balance < 0:
            balance = 0
        return cls(balance)

    def __call__(self, x):
        while x > self.balance:
            x -= self.balance
        return x


def test_bound_methods_static_and_class_methods():
    account = Account(1)
    grow = autograph.to_graph(account.grow)
    assert grow(2) == 16 and account.balance == 16
    assert autograph.to_graph(Account.sign)(-4) == -1
    static = autograph.to_graph(Account.__dict__["sign"])
    assert isinstance(static, staticmethod) and static.__func__(3) == 1
    made = autograph.to_graph(Account.make)(-5)
    assert isinstance(made, Account) and made.balance == 0
    classmethod_object = autograph.to_graph(Account.__dict__["make"])
    assert isinstance(classmethod_object, classmethod)


def test_partial_and_callable_object():
    partial = functools.partial(branchy, scale=5)
    converted = autograph.to_graph(partial)
    assert isinstance(converted, functools.partial)
    assert converted(2) == partial(2) == 11
    account = Account(3)
    assert autograph.to_graph(account)(10) == account(10) == 1


def test_to_graph_of_converted_function_returns_it():
    converted = autograph.to_graph(branchy)
    assert autograph.to_graph(converted) is converted


def test_conversion_is_cached():
    assert autograph.to_graph(branchy) is autograph.to_graph(branchy)
    assert autograph.to_code(branchy) == autograph.to_code(branchy)


def test_not_callable_raises_type_error():
    with pytest.raises(TypeError, match="expects a function or other callable, got 42"):
        autograph.to_graph(42)


def test_builtin_is_returned_unconverted_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="autograph"):
        assert autograph.to_graph(len) is len
        assert autograph.to_graph(len) is len
    messages = [r.getMessage() for r in caplog.records if "len" in r.getMessage()]
    assert len(messages) == 1 and "returned unconverted" in messages[0]


def test_to_code_of_builtin_raises_conversion_error():
    with pytest.raises(autograph.ConversionError, match=r"cannot convert len: it has no Python source"):
        autograph.to_code(len)


def test_function_without_source():
    namespace = {}
    exec("def made(x):\n    if x:\n        return 1\n    return 2\n", namespace)
    made = namespace["made"]
    with pytest.raises(autograph.ConversionError, match="cannot convert made: its source is not available"):
        autograph.to_code(made)
    assert autograph.to_graph(made) is made


def test_exec_with_linecache_entry_converts():
    source = "def made(x):\n    if x:\n        return 1\n    return 2\n"
    filename = "<test-exec-with-linecache>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    converted = autograph.to_graph(namespace["made"])
    assert converted is not namespace["made"]
    assert (converted(1), converted(0)) == (1, 2)


def test_generators_and_coroutines_stay_unconverted():
    def generator(n):
        for i in range(n):
            if i % 2:
                yield i

    assert autograph.to_graph(generator) is generator
    with pytest.raises(autograph.ConversionError, match="generator or coroutine"):
        autograph.to_code(generator)


def callee_probe():
    return _running_converted()


def caller(x):
    if x:
        return callee_probe()
    return None


@autograph.do_not_convert
def left_alone():
    return _running_converted()


def calls_left_alone():
    return left_alone()


def test_recursive_conversion_of_callees():
    assert callee_probe() is False
    assert autograph.to_graph(caller)(1) is True
    assert autograph.to_graph(caller, recursive=False)(1) is False


def test_do_not_convert():
    assert autograph.to_graph(left_alone) is left_alone
    assert autograph.to_graph(calls_left_alone)() is False


def test_convert_decorator():
    @autograph.convert()
    def decorated(x):
        return _running_converted() if x else None

    assert decorated(1) is True

    @autograph.convert(recursive=False)
    def decorated_plain(x):
        return callee_probe() if x else None

    assert decorated_plain(1) is False


def looped(n):
    total = 0
    while n > 0:
        autograph.set_loop_options(maximum_iterations=10)
        total += n
        n -= 1
    return total


def test_set_loop_options_is_passed_to_the_loop_and_ignored_by_python():
    assert autograph.to_graph(looped)(4) == looped(4) == 10
    code = autograph.to_code(looped)
    assert "{'maximum_iterations': 10}" in code
    assert "set_loop_options" not in code


def test_verbosity_logs_generated_code(caplog):
    def logged(x):
        if x:
            x = 2
        return x

    autograph.set_verbosity(3)
    try:
        with caplog.at_level(logging.INFO, logger="autograph"):
            autograph.to_graph(logged)
    finally:
        autograph.set_verbosity(None)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "generated code of test_verbosity_logs_generated_code.<locals>.logged" in text
    assert "ag__.if_stmt(x, if_body, None" in text


def test_verbosity_from_environment(monkeypatch, caplog):
    def logged_env(x):
        while x:
            x -= 1
        return x

    monkeypatch.setenv("AUTOGRAPH_VERBOSITY", "3")
    with caplog.at_level(logging.INFO, logger="autograph"):
        autograph.to_graph(logged_env)
    assert any("ag__.while_stmt" in r.getMessage() for r in caplog.records)


def test_importing_autograph_imports_neither_jax_nor_torch():
    """The JAX and PyTorch backends claim types only once their library is
    imported; a program that uses neither never pays for them."""
    import subprocess
    import sys
    code = ("import sys, autograph\n"
            "autograph.to_graph(lambda x: x if x else -x)(1)\n"
            "print(sorted(m for m in ('jax', 'torch') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.strip() == "[]"
