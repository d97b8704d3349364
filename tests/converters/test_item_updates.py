"""converters/item_updates.py: `x[i] = v` -> `x = ag__.setitem(x, i, v)`,
`x[i] += v` -> `x = ag__.setitem(x, i, ag__.iadd(x[i], v))`,
`obj.a += v` -> `obj.a = ag__.iadd(obj.a, v)`; for Python values the
meaning (in-place mutation, identity, evaluation order) is Python's."""

import ast
import copy
import inspect

import pytest
from autograph.converters.item_updates import HOOKS
from harness import LOG, assert_same_behaviour, from_source, hooked_lines_of, lines_of, log  # noqa: E402,F401

import autograph


class Obj:
    def __init__(self, a):
        self.a = a


class Logged:
    """An attribute `a` whose reads and writes are logged."""

    def __init__(self, a):
        self._a = a

    @property
    def a(self):
        log(("get", copy.copy(self._a)))
        return self._a

    @a.setter
    def a(self, value):
        log(("set", copy.copy(value)))
        self._a = value


# Snippets -----------------------------------------------------------------

def set_item(x, i, v):
    x[i] = v
    return x


def aug_item(x, i, v):
    x[i] += v
    return x


def aug_item_ops(x):
    x[0] -= 1
    x[1] *= 3
    x[2] //= 2
    x[3] |= 8
    x[4] **= 2
    x[5] %= 4
    return x


def aug_attr(o, v):
    o.a += v
    return o.a


def aug_attr_sub(o, v):
    o.a -= v
    return o.a


def extend_inner_in_place(x, i):
    inner = x[i]
    x[i] += [1]
    return x, x[i] is inner, inner


def tuple_of_lists(t):
    t[0] += [1]
    return t


def set_item_in_loop(n):
    x = [0] * n
    for i in range(n):
        if i % 2:
            x[i] = i * 10
        else:
            x[i] += i
    return x


def dict_updates(d, k):
    d[k] = 1
    d[k] += 2
    d["const"] = k
    return d


def negative_and_tuple_index(x, d):
    x[-1] = "last"
    d[1, 2] = "pair"
    return x, d


def slice_assign(x):
    x[1:3] = ["a", "b", "c"]
    x[::2] = [0] * len(x[::2])
    return x


def nested_target(x, i):
    x[i][0] = "nested"
    x[i + 1] = "computed"
    return x


def computed_indices(x, n):
    x[n % 3] *= 2
    x[-n] += 1
    x[(n - 1, 0)[0] if False else n // 2] = 5  # a conditional expression: left as it is
    return x


def value_before_unbound_object(flag):
    if flag:
        x = [0]
    x[0] = log("value")
    return x


def item_on_captured(x):
    f = lambda: x  # noqa: E731
    x[0] = 9
    return f()


def set_item_raises(x):
    x[5] = 1
    return x


BEHAVIOUR = [
    (set_item, [([1, 2, 3], 1, 9), ({}, "k", 1), ([1], 4, 0)]),
    (aug_item, [([1, 2, 3], 1, 9), ([[1], [2]], 0, [5]), ({"a": "x"}, "a", "y"), ([1], 3, 1)]),
    (aug_item_ops, [([5, 5, 5, 5, 5, 5],)]),
    (aug_attr, [(Obj(1), 2), (Obj([1]), [2]), (Obj("a"), 3)]),
    (aug_attr_sub, [(Obj(5), 2)]),
    (extend_inner_in_place, [([[0], [1]], 1), ([[], []], 0)]),
    (tuple_of_lists, [(([0],),)]),
    (set_item_in_loop, [(0,), (5,)]),
    (dict_updates, [({}, "a"), ({"a": 1}, "a")]),
    (negative_and_tuple_index, [([1, 2], {})]),
    (slice_assign, [([1, 2, 3, 4, 5],)]),
    (nested_target, [([[1], 2], 0)]),
    (computed_indices, [([1, 2, 3, 4], 1), ([1, 2, 3, 4], 4), ([1], 2), ((1, 2, 3), 1)]),
    (item_on_captured, [([1, 2],)]),
    (set_item_raises, [([],), ((1,),)]),
]


@pytest.mark.parametrize("fn,inputs", BEHAVIOUR, ids=[f.__name__ for f, _ in BEHAVIOUR])
def test_same_behaviour(fn, inputs):
    assert_same_behaviour(fn, inputs)


def test_item_assignment_mutates_the_callers_object():
    x = [1, 2, 3]
    result = autograph.to_graph(set_item)(x, 0, "new")
    assert result is x
    assert x == ["new", 2, 3]


def test_augmented_item_assignment_on_list_of_lists_extends_in_place():
    inner = [0]
    x = [inner, [1]]
    result, same, seen = autograph.to_graph(extend_inner_in_place)(x, 0)
    assert result is x
    assert same is True
    assert x[0] is inner
    assert inner == [0, 1]


def test_augmented_item_on_tuple_extends_then_raises_like_python():
    inner = [0]
    t = (inner,)
    with pytest.raises(TypeError, match="'tuple' object does not support item assignment"):
        autograph.to_graph(tuple_of_lists)(t)
    assert t[0] is inner and inner == [0, 1]


def test_augmented_attribute_assignment_reads_and_writes_once_in_order():
    original, converted = Logged([1]), Logged([1])
    del LOG[:]
    aug_attr(original, [2])
    expected = list(LOG)
    del LOG[:]
    autograph.to_graph(aug_attr)(converted, [2])
    assert LOG == expected == [("get", [1]), ("set", [1, 2]), ("get", [1, 2])]


def test_augmented_attribute_on_list_keeps_identity():
    value = [1]
    o = Obj(value)
    autograph.to_graph(aug_attr)(o, [2])
    assert o.a is value and value == [1, 2]


def test_value_is_evaluated_before_an_unbound_object_is_read():
    # Python evaluates the right-hand side first: `value` is logged, then
    # reading the unbound `x` raises UnboundLocalError.
    del LOG[:]
    with pytest.raises(UnboundLocalError):
        value_before_unbound_object(False)
    assert LOG == ["value"]
    del LOG[:]
    with pytest.raises(UnboundLocalError):
        autograph.to_graph(value_before_unbound_object)(False)
    assert LOG == ["value"]


SHAPES = [
    (set_item, "x = ag__.setitem(x, i, v)"),
    (aug_item, "x = ag__.setitem(x, i, ag__.iadd(x[i], v))"),
    (aug_item_ops, "x = ag__.setitem(x, 0, ag__.isub(x[0], 1))"),
    (aug_item_ops, "x = ag__.setitem(x, 1, ag__.imul(x[1], 3))"),
    (aug_item_ops, "x = ag__.setitem(x, 2, ag__.ifloordiv(x[2], 2))"),
    (aug_item_ops, "x = ag__.setitem(x, 3, ag__.ior(x[3], 8))"),
    (aug_item_ops, "x = ag__.setitem(x, 4, ag__.ipow(x[4], 2))"),
    (aug_item_ops, "x = ag__.setitem(x, 5, ag__.imod(x[5], 4))"),
    (aug_attr, "o.a = ag__.iadd(o.a, v)"),
    (aug_attr_sub, "o.a = ag__.isub(o.a, v)"),
    (extend_inner_in_place, "x = ag__.setitem(x, i, ag__.iadd(x[i], [1]))"),
    (dict_updates, "d = ag__.setitem(d, 'const', k)"),
    (negative_and_tuple_index, "x = ag__.setitem(x, -1, 'last')"),
    (negative_and_tuple_index, "d = ag__.setitem(d, (1, 2), 'pair')"),
    (nested_target, "x[i][0] = 'nested'"),
    (nested_target, "x = ag__.setitem(x, i + 1, 'computed')"),
    (computed_indices, "x = ag__.setitem(x, n % 3, ag__.imul(x[n % 3], 2))"),
    (computed_indices, "x = ag__.setitem(x, -n, ag__.iadd(x[-n], 1))"),
    (item_on_captured, "x[0] = 9"),
]


@pytest.mark.parametrize("fn,line", SHAPES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(SHAPES)])
def test_generated_line(fn, line):
    assert line in hooked_lines_of(fn)


@pytest.mark.parametrize("fn", sorted({fn for fn, _ in SHAPES}, key=lambda f: f.__name__))
def test_to_code_shows_each_update_as_written(fn):
    # The hooks are in the code that runs; to_code shows the statements.
    written = lines_of(fn)
    updates = [ast.unparse(node) for node in ast.walk(ast.parse(inspect.getsource(fn)))
               if isinstance(node, ast.AugAssign) or isinstance(node, ast.Assign)
               and isinstance(node.targets[0], (ast.Subscript, ast.Tuple))]
    plain = [u for u in updates if not any(isinstance(n, (ast.Call, ast.IfExp)) for n in ast.walk(ast.parse(u)))]
    assert plain and all(u in written for u in plain), (plain, written)
    hooks = [f"ag__.{name}(" for name in ("setitem", "getitem", *HOOKS.values())]
    assert not any(hook in line for line in written for hook in hooks)


def test_loop_state_carries_the_updated_list():
    code = autograph.to_code(set_item_in_loop)
    assert "x = ag__.setitem(x, i, i * 10)" in hooked_lines_of(set_item_in_loop)
    assert "x[i] = i * 10" in lines_of(set_item_in_loop)
    assert "ag__.for_stmt(ag__.call(range)(n), None, loop_body, (x,), ('x',))" in code


@pytest.mark.parametrize("fn", [slice_assign, set_item, aug_item, nested_target])
def test_generated_code_is_valid_python(fn):
    ast.parse(autograph.to_code(fn))
