"""converters/call_trees.py: calls go through the runtime's call hook,
`f(x, k=2)` -> `ag__.call(f)(x, k=2)`; user functions called from converted
code are converted on their first call; builtins no backend overrides stay
plain calls unless the user rebinds their name."""

import sys

import pytest
from harness import LOG, assert_same_behaviour, from_source, lines_of, log  # noqa: E402,F401
from harness import observe as _observe

import autograph
from autograph.conversion import is_generated as _is_generated


def running_converted():
    """True if the caller runs converted code."""
    return _is_generated(sys._getframe(1).f_code)


def helper(x, k=1):
    if x > 0:
        x = x * k
    return x, running_converted()


@autograph.do_not_convert
def left_alone(x):
    return running_converted()


def picker(tag):
    log(("pick", tag))
    return lambda *args, **kwargs: (tag, args, tuple(sorted(kwargs.items())))


class Box:
    def __init__(self, v):
        self.v = v

    def scaled(self, k):
        if k > 1:
            return self.v * k
        return self.v


# Snippets -----------------------------------------------------------------

def calls_user_function(x):
    y = helper(x, k=2)
    return y


def calls_builtins(xs):
    print("n =", len(xs))
    return sum(xs), str(len(xs)), sorted(xs), list(range(len(xs)))


def call_order(a):
    return picker(log("f"))(log(a), k=log("k"))


def star_args(xs, kw):
    return picker("s")(*xs, **kw)


def method_call(v, k):
    b = Box(v)
    return b.scaled(k)


def call_result_of_call(x):
    return picker(x)(x)


def rebinds_builtin(xs):
    len = lambda v: -1  # noqa: E731
    return len(xs)


def calls_do_not_convert(x):
    return left_alone(x)


def callee_raises(d):
    return helper(d["missing"])


def calls_in_branch(x):
    if x > 0:
        r = helper(x)
    else:
        r = abs(x)
    return r


class Tally(list):
    def add_(self, v):  # named as torch names the methods that change their receiver in place
        self.append(v)
        return self

    @property
    def T(self):  # named as torch's view of a tensor
        return self


def changes_in_place(rows, i):
    rows[log(i)].add_(log(2))
    rows[0].add_(1).add_(3)
    rows[-1].T.add_(5)
    return rows, rows[0].__iadd__([4])


BEHAVIOUR = [
    (changes_in_place, [([Tally(), Tally()], 1), ([Tally()], 5)]),
    (calls_user_function, [(1,), (-1,)]),
    (calls_builtins, [([3, 1, 2],), ([],)]),
    (call_order, [(1,), ("a",)]),
    (star_args, [((1, 2), {"z": 1}), ((), {})]),
    (method_call, [(3, 2), (3, 1)]),
    (call_result_of_call, [(1,), ("t",)]),
    (rebinds_builtin, [([1, 2],)]),
    (callee_raises, [({},), ({"missing": 2},)]),
]


def _without_frame_flag(fn):
    # helper() reports whether it ran converted, which legitimately differs.
    def wrapped(*args):
        result = fn(*args)
        return result[0] if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], bool) else result
    return wrapped


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    converted = autograph.to_graph(fn)
    assert _is_generated(converted.__code__)
    for args in inputs:
        assert _observe(_without_frame_flag(converted), args) == _observe(_without_frame_flag(fn), args), args


def test_call_evaluates_function_then_arguments_in_order():
    converted = autograph.to_graph(call_order)
    del LOG[:]
    expected = call_order(1)
    expected_log = list(LOG)
    del LOG[:]
    assert converted(1) == expected
    assert LOG == expected_log == ["f", ("pick", "f"), 1, "k"]


def test_user_callee_is_converted_recursively():
    assert autograph.to_graph(calls_user_function)(3) == (6, True)
    assert calls_user_function(3) == (6, False)


def test_nonrecursive_conversion_leaves_callee_unconverted():
    assert autograph.to_graph(calls_user_function, recursive=False)(3) == (6, False)


def test_do_not_convert_callee_runs_as_is():
    assert autograph.to_graph(calls_do_not_convert)(1) is False


def test_method_callee_is_converted():
    code = autograph.to_code(method_call)
    assert "return ag__.call(b.scaled)(k)" in lines_of(method_call)
    assert "b = ag__.call(Box)(v)" in lines_of(method_call), code
    assert autograph.to_graph(method_call)(3, 2) == 6


SHAPES = [
    (calls_user_function, "y = ag__.call(helper)(x, k=2)"),
    (calls_builtins, "ag__.call(print)('n =', ag__.call(len)(xs))"),
    (calls_builtins, "return (ag__.call(sum)(xs), str(ag__.call(len)(xs)), sorted(xs), "
                     "list(ag__.call(range)(ag__.call(len)(xs))))"),
    (call_order, "return ag__.call(ag__.call(picker)(ag__.call(log)('f')))(ag__.call(log)(a), k=ag__.call(log)('k'))"),
    (star_args, "return ag__.call(ag__.call(picker)('s'))(*xs, **kw)"),
    (call_result_of_call, "return ag__.call(ag__.call(picker)(x))(x)"),
    (rebinds_builtin, "return ag__.call(len)(xs)"),
    # The object a method changes in place (its items are views of it) goes through the backend's hook.
    (changes_in_place, "ag__.call(ag__.in_place(ag__.in_place(rows)[ag__.call(log)(i)]).add_)(ag__.call(log)(2))"),
    (changes_in_place, "ag__.call(ag__.in_place(ag__.call(ag__.in_place(ag__.in_place(rows)[0]).add_)(1)).add_)(3)"),
    (changes_in_place, "ag__.call(ag__.in_place(ag__.in_place(ag__.in_place(rows)[-1]).T).add_)(5)"),
    (changes_in_place, "return (rows, ag__.call(rows[0].__iadd__)([4]))"),
]


@pytest.mark.parametrize("fn,line", SHAPES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(SHAPES)])
def test_generated_line(fn, line):
    assert line in lines_of(fn)


def test_plain_builtins_are_not_routed_through_the_hook():
    code = autograph.to_code(calls_builtins)
    for name in ("str", "sorted", "list"):
        assert f"ag__.call({name})" not in code
        assert f"{name}(" in code


def test_runtime_calls_are_not_wrapped_again():
    code = autograph.to_code(calls_in_branch)
    assert "ag__.call(ag__." not in code
    assert "ag__.if_stmt(x > 0," in code
