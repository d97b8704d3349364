"""Programs whose staged `if` or loop changes objects that staging used not
to see (objects with `__slots__`, other modules' globals, numpy arrays over
2**20 elements) or that leave a traced value in an object outliving the
trace: each must equal the unconverted function run eagerly, or raise a
clear error. Never a silent difference."""

import sys
import types

import numpy as np
import pytest
from autograph.runtime.errors import TracingError

import autograph


class Slotted:
    __slots__ = ("v",)


class SlottedChild(Slotted):
    __slots__ = ("__w", "u")   # a private slot is mangled to _SlottedChild__w


_config = types.ModuleType("ag_test_unseen_config")
_config.scales = {"k": 0.0}
_config.inner = types.ModuleType("ag_test_unseen_config.inner")
_config.inner.box = [0.0]
sys.modules[_config.__name__] = _config


def slots_if(x):
    s = Slotted()
    s.v = 0.0
    if x > 0:
        s.v = x * 2
    else:
        s.v = -x
    return x + s.v


def inherited_slots_loop(x):
    s = SlottedChild()
    s.v, s.u = 0.0, 1.0
    i = 0
    while i < x:
        s.v = s.v + i
        s.u = s.u * 2
        i += 1
    return s.v + s.u


def module_global_if(x):
    _config.scales["k"] = 1.0
    if x > 0:
        _config.scales["k"] = 3.0
    else:
        _config.scales["k"] = 5.0
    y = x * _config.scales["k"]
    _config.scales["k"] = 1.0
    return y


def nested_module_global_loop(x):
    _config.inner.box[0] = 0.0
    i = 0
    while i < x:
        _config.inner.box[0] = _config.inner.box[0] + 2.0
        i += 1
    y = _config.inner.box[0]
    _config.inner.box[0] = 0.0
    return y


_TABLE = [1.0, [2.0, 3.0]]


def global_nested_list_while(x):
    # The loop carries all of _TABLE[1]; _TABLE[1][1], which it leaves alone, keeps its number
    # (it used to come out of the loop as a traced value, left in the global after the trace).
    _TABLE[1][0] = 2.0
    i = 0
    while i < x:
        _TABLE[1][0] = _TABLE[1][0] + 1.0
        i += 1
    y = _TABLE[1][0] + _TABLE[1][1]
    _TABLE[1][0] = 2.0
    return y


_BIG = np.zeros(2 ** 20 + 1)


def large_array_if(x):
    if x > 0:
        _BIG[0] = 1.0
    else:
        _BIG[0] = 2.0
    return x + _BIG[0]


_state = Slotted()
_state.v = 0.0


def stores_traced_value_in_global(x):
    if x > 0:
        _state.v = 1.0
    else:
        _state.v = 2.0
    return x


def stores_traced_value_without_if(x):
    _config.scales["k"] = x * 2
    return x


EQUAL = [slots_if, inherited_slots_loop, module_global_if, nested_module_global_loop, global_nested_list_while]

REFUSED = [
    (large_array_if, r"writes into a numpy array \('_BIG'\) in place .*test_unseen_places.py:\d+.*over 1048576 "
                     "elements"),
    (stores_traced_value_in_global, r"stored a value computed by the graph in '_state.v', computed at "
                                    r".*test_unseen_places.py:\d+, which outlives the call"),
    (stores_traced_value_without_if, r"stored a value computed by the graph in '_config.scales\['k'\]'"),
]


@pytest.mark.parametrize("fn", EQUAL, ids=lambda f: f.__name__)
def test_staged_changes_to_these_objects_equal_eager(fn):
    traced = autograph.function(fn)
    for x in (3, -2, 0, 5):
        assert traced(np.int64(x)) == fn(np.int64(x)), x


@pytest.mark.parametrize(("fn", "message"), REFUSED, ids=lambda f: getattr(f, "__name__", ""))
def test_what_staging_cannot_carry_is_refused(fn, message):
    with pytest.raises(TracingError, match=message):
        autograph.function(fn)(np.int64(3))
    assert _BIG.flags.writeable


def test_slotted_argument_changed_in_both_branches():
    def f(x, s):
        if x > 0:
            s.v = 4.0
        else:
            s.v = 6.0
        y = x + s.v
        s.v = 0.0
        return y

    traced = autograph.function(f)
    s = Slotted()
    s.v = 0.0
    for x in (1.0, -1.0):
        assert traced(np.float64(x), s) == f(np.float64(x), s)
