"""converters/fast_paths.py: the code that runs inlines each operator's Python
meaning; the operators run only for values a backend claims, from the state
of that moment. Call sites remember their last callee."""

import types

import autograph.runtime as runtime
import pytest
from autograph.runtime import calls

import autograph

# These tests read the converted code's Python paths, which a call outside
# every trace skips for the statements as written (tests/test_as_written.py).
pytestmark = pytest.mark.usefixtures("staged")


class Flag:
    """A stand-in symbolic boolean: the test backend claims it."""

    def __init__(self, value):
        self.value = value

    def __bool__(self):
        raise AssertionError("a Flag must reach the backend, not bool()")


class FlagBackend(runtime.Backend):
    name = "flags"

    def __init__(self):
        self.seen = []

    def owns_type(self, cls):
        return cls is Flag

    def cond(self, pred, true_fn, false_fn, operands, names):
        self.seen.append(("cond", names))
        fn = true_fn if pred.value else false_fn
        return runtime.backends.unchanged(operands, len(names)) if fn is None else fn(*operands)

    def while_loop(self, test, body, state, names, opts):
        self.seen.append(("while_loop", names))
        while test(*state).value:
            result = body(*state)
            state = (result,) if len(names) == 1 else result
        return state


@pytest.fixture
def backend():
    backend = runtime.register_backend(FlagBackend())
    yield backend
    runtime.unregister_backend(backend)


def branch(c, x):
    if c:
        x = x + 1
    else:
        x = x - 1
    return x


def countdown(n, limit):
    steps = 0
    while limit(n):
        n -= 1
        steps += 1
    return n, steps


@pytest.fixture
def operators_disabled(monkeypatch):
    """Makes every functional operator fail: the Python path must not use them."""
    def refuse(*args, **kwargs):
        raise AssertionError("the operator ran for Python values")

    for name in ("if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "compare"):
        monkeypatch.setattr(runtime, name, refuse)


def test_python_values_run_the_inlined_path(operators_disabled):
    assert autograph.to_graph(branch)(True, 1) == 2
    assert autograph.to_graph(branch)(0, 1) == 0
    assert autograph.to_graph(countdown)(3, lambda n: n > 0) == (0, 3)


def chained(a, b, c, d):
    return a < b() <= c() < d


def test_chained_comparisons_run_inlined_each_operand_once(operators_disabled):
    calls = []

    def once(value):
        def operand():
            calls.append(value)
            return value
        return operand
    converted = autograph.to_graph(chained)
    for args in [(1, 2, 3, 4), (1, 2, 2, 4), (2, 1, 3, 4), (1, 3, 2, 4), (1, 2, 3, 3)]:
        calls.clear()
        expected = chained(args[0], once(args[1]), once(args[2]), args[3])
        expected_calls = list(calls)
        calls.clear()
        assert converted(args[0], once(args[1]), once(args[2]), args[3]) == expected, args
        assert calls == expected_calls, args


def test_if_not_runs_inlined(operators_disabled):
    def guarded(x, flag):
        if not flag:
            x = x + 1
        return x
    assert autograph.to_graph(guarded)(1, []) == 2
    assert autograph.to_graph(guarded)(1, [0]) == 1


def test_symbolic_condition_goes_to_the_backend(backend):
    assert autograph.to_graph(branch)(Flag(True), 1) == 2
    assert autograph.to_graph(branch)(Flag(False), 1) == 0
    assert backend.seen == [("cond", ("x",)), ("cond", ("x",))]


def test_loop_hands_over_when_the_test_turns_symbolic(backend):
    # Two Python iterations, then the test returns Flags: while_loop goes on
    # from the state of that moment.
    def limit(n):
        return n > 3 if n > 3 else Flag(n > 0)

    assert autograph.to_graph(countdown)(5, limit) == (0, 5)
    assert backend.seen == [("while_loop", ("n", "steps"))]


def test_for_loop_hands_over_when_the_break_flag_turns_symbolic(backend):
    def first_over(xs, threshold):
        found = -1
        for x in xs:
            if x > threshold:
                found = x
                break
        return found

    class Threshold:
        """Compares into Flags from the third item on."""

        def __init__(self):
            self.calls = 0

        def __lt__(self, other):
            self.calls += 1
            return other > 2 if self.calls < 3 else Flag(other > 2)

    assert autograph.to_graph(first_over)([1, 2, 3, 4], Threshold()) == 3
    assert ("cond", ("found", "break_")) in backend.seen


def calls_helpers(items):
    out = []
    for item in items:
        out.append(len(str(item)))
    return out


def test_call_sites_remember_their_callee():
    converted = autograph.to_graph(calls_helpers)
    assert converted([1, 22, 333]) == [1, 2, 3]
    sites = calls._sites[converted]
    assert sites, "the converted function has call sites"
    remembered = {site[0] for site in sites}
    assert list in remembered  # out.append: any list will do
    assert "call(str)" not in autograph.to_code(calls_helpers)  # plain builtins are called as they are


def sizes(items, text):
    return len(text), len(tuple(items)), len(items), text.upper()


def test_len_of_a_plain_value_and_small_method_calls_skip_the_hook(monkeypatch):
    from autograph import conversion
    converted = autograph.to_graph(sizes)
    # A list of a subclass goes through the call site (as one accumulated in
    # a staged loop would), which remembers the callee.
    assert converted(_Sized([1]), "a") == sizes(_Sized([1]), "a")
    asked = []
    for name in ("call_site", "call_method"):
        monkeypatch.setattr(runtime, name, lambda *args, name=name: asked.append(name))
    # A str, a tuple and a list call the builtin as written.
    assert converted([1, 2, 3], "abc") == sizes([1, 2, 3], "abc")
    assert asked == []
    code = conversion.inlined_source(sizes)
    assert "len(value) if ((value := text).__class__ in sized_types or (value.__class__ is plain_list" in code
    assert "text.upper() if text.__class__ is call_site" in code  # no bound method is made


def binds_list_later(xs):
    n = len(xs)
    list = [n]  # a local named `list`, unbound where len(xs) runs
    return list


def test_len_of_a_list_does_not_read_the_name_list():
    assert autograph.to_graph(binds_list_later)([1, 2, 3]) == [3]


class _Sized(list):
    def __len__(self):
        return 7


def test_call_site_follows_a_new_callee():
    def apply(f, x):
        return f(x)

    converted = autograph.to_graph(apply)
    assert converted(abs, -2) == 2
    assert converted(str, 5) == "5"
    assert converted(lambda v: v * 10, 3) == 30


def test_clear_cache_forgets_call_sites():
    converted = autograph.to_graph(calls_helpers)
    converted([1])
    sites = calls._sites[converted]
    autograph.clear_cache()
    assert all(site[0] is calls._UNSET for site in sites)
    assert converted([4, 55]) == [1, 2]


def test_to_code_shows_no_inlined_path():
    code = autograph.to_code(branch)
    assert "is_python" not in code and "call_site" not in code
    assert "x = ag__.if_stmt(c, if_body, else_body, (x,), ('x',))" in code
    assert isinstance(autograph.to_graph(branch), types.FunctionType)


def test_nested_loop_helpers_do_not_replace_the_outer_ones(backend):
    # The inner loop's helpers are defined in the same scope as the outer
    # loop's on the inlined path; a hand-over of the outer loop (its break
    # flag turns symbolic) must still run the outer loop's body.
    def nested(xs, threshold):
        total = 0
        for x in xs:
            for _ in range(2):
                total += 1
            if x > threshold:
                break
        return total

    class Threshold:
        def __init__(self):
            self.calls = 0

        def __lt__(self, other):
            self.calls += 1
            return other > 5 if self.calls < 2 else Flag(other > 5)

    assert autograph.to_graph(nested)([1, 2, 3], Threshold()) == nested([1, 2, 3], 5) == 6


# Item reads (converters/item_reads.py) -------------------------------------

class Index:
    """A stand-in index that the test backend claims: only `getitem` reads with it."""

    def __init__(self, value):
        self.value = value


class IndexBackend(runtime.Backend):
    name = "indices"

    def owns_type(self, cls):
        return cls is Index

    def getitem(self, target, index):
        return ("read", target[index.value])


def reads(xs, k, n):
    total = 0
    for i in range(n):
        total += xs[i] + xs[i - 1]
        if i > 10:
            k = i
    return total, xs[k]


def test_item_reads_with_python_indices_run_inlined(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("getitem ran for a Python index")
    monkeypatch.setattr(runtime, "getitem", refuse)
    assert autograph.to_graph(reads)([1, 2, 3], 1, 3) == reads([1, 2, 3], 1, 3)


def test_item_reads_skip_the_check_for_python_loop_variables():
    from autograph import conversion
    code = conversion.inlined_source(reads)
    assert "total += xs[i] + xs[i - 1]" in code  # i: Python's iteration binds it, nothing else does
    assert "xs[value] if (value := k).__class__ is int else ag__.getitem(xs, value, 'xs')" in code


def rebinds_the_loop_variable(xs, k, n):
    s = []
    for i in range(n):
        i = k
        s.append(xs[i])
    return s


def test_an_index_that_a_backend_claims_reads_through_it():
    from autograph import conversion
    assert "xs[i])" not in conversion.inlined_source(rebinds_the_loop_variable)
    backend = runtime.register_backend(IndexBackend())
    try:
        assert autograph.to_graph(reads)([1, 2, 3], Index(2), 2) == (reads([1, 2, 3], 2, 2)[0], ("read", 3))
        assert autograph.to_graph(rebinds_the_loop_variable)([5, 6, 7], Index(1), 2) == [("read", 6)] * 2
    finally:
        runtime.unregister_backend(backend)


def updates(counts, table, rows, k, word):
    counts[k] += 1
    counts[k - 1] = counts[k] * 2
    table[word] = table.get(word, 0) + 1
    table[k] = word
    rows[k] += [word]
    return counts, table, rows


def test_item_updates_of_lists_and_dicts_run_inlined(monkeypatch):
    from autograph import conversion
    code = conversion.inlined_source(updates)
    assert "if (key := k).__class__ in item_keys and counts.__class__ in item_types" in code
    assert "item += 1\n        counts[key] = item" in code

    def refuse(*args, **kwargs):
        raise AssertionError("the operator ran for a list or dict")
    for name in ("setitem", "iadd", "getitem"):
        monkeypatch.setattr(runtime, name, refuse)
    row = ["a"]
    counts, table, rows = autograph.to_graph(updates)([1, 2, 3], {}, [[], row], 1, "w")
    assert (counts, table, rows) == updates([1, 2, 3], {}, [[], ["a"]], 1, "w") \
        == ([6, 3, 3], {"w": 1, 1: "w"}, [[], ["a", "w"]])
    assert rows[1] is row  # `+=` extends the list in place, as in Python


def test_item_updates_of_other_values_go_through_the_operators():
    # A tuple has no item assignment (Python's TypeError, through the
    # operator); a missing dict key is Python's KeyError; an item that a
    # backend claims gets the backend's `+=`.
    with pytest.raises(TypeError, match="does not support item assignment"):
        autograph.to_graph(updates)((1, 2), {}, [[]], 0, "w")
    with pytest.raises(KeyError):
        autograph.to_graph(updates)({}, {}, [[]], 0, "w")
    class Augmenting(FlagBackend):
        def augmented(self, op, plain, target, value):
            return ("augmented", target.value + value)

    backend = runtime.register_backend(Augmenting())
    try:
        def bump(xs):
            xs[0] += 1
            return xs
        assert autograph.to_graph(bump)([Flag(1)]) == [("augmented", 2)]
    finally:
        runtime.unregister_backend(backend)


def comprehensions(xs, n):
    return [v * 2 for v in zip(range(len(xs)), xs) if len(v) > n], {k: 1 for k in sorted(xs)}


def test_calls_in_a_comprehensions_iterable_use_call_sites():
    # (Python forbids `:=` there: the call sites' forms need none; `len`'s does.)
    from autograph import conversion
    code = conversion.inlined_source(comprehensions)
    assert "ag__.call(zip)" not in code and "ag__.call(sorted)" not in code
    assert autograph.to_graph(comprehensions)([3, 1], 1) == comprehensions([3, 1], 1)


def euclid(a, b):
    steps = 0
    while b:
        a, b = b, a % b
        steps += 1
    return a, steps


@pytest.fixture
def loop_test_types():
    """backends.LOOP_TEST_TYPES, restored after the test."""
    from autograph.runtime import backends
    saved = backends.LOOP_TEST_TYPES[0]
    yield backends.LOOP_TEST_TYPES
    backends.LOOP_TEST_TYPES[0] = saved


def test_a_loop_test_of_a_plain_number_does_not_ask_dispatch(monkeypatch, loop_test_types):
    # `while b:` on an int: the test is Python's on each iteration, with no
    # call of ag__.is_python (while no tracer gives symbolic numbers the type int).
    converted = autograph.to_graph(euclid)
    asked = []
    monkeypatch.setattr(runtime, "is_python", lambda v: asked.append(v) or True)
    loop_test_types[0] = (int, float, str, type(None), tuple)
    assert converted(1071, 462) == euclid(1071, 462) == (21, 3)
    assert asked == []
    # Where a tracer may give symbolic numbers the type int (torch's dynamo), dispatch is asked.
    loop_test_types[0] = ()
    assert converted(1071, 462) == (21, 3)
    assert asked == [462, 147, 21, 0]


def test_a_tracer_of_symbolic_python_numbers_takes_numbers_out_of_the_loop_test_types(monkeypatch, loop_test_types):
    from autograph.runtime import backends
    for name in ("_symbolic_backend", "_is_symbolic", "_tracing"):
        monkeypatch.setattr(backends, name, getattr(backends, name))
    loop_test_types[0] = (int, float, str, type(None), tuple)
    backends.set_symbolic_numbers(backends.registered()[0], lambda x: False, lambda: False)
    assert loop_test_types[0] == ()  # each type read under dynamo would be a guard
