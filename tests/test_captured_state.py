"""What a trace reads outside its arguments (globals, closure variables,
attributes and items of the objects they hold, arrays among them) is checked
on every call of the graph: when it changed, autograph.function traces
again, so a call equals the unconverted function run eagerly on the state
of that moment. (jax.jit and tf.function keep the values of the trace.)"""

import numpy as np
import pytest
from autograph.runtime.errors import TracingError

import autograph

TABLE = np.array([1.0, 2.0, 3.0])
SCALE = 2.0
CONFIG = {"offset": 1.0, "weights": np.array([1.0, 1.0])}


class Model:
    def __init__(self):
        self.w = np.array([1.0, 2.0])
        self.bias = 0.5


MODEL = Model()


def reads_table(x):
    # `TABLE.sum()` runs eagerly while tracing (folded); `x * TABLE` makes TABLE a constant of the graph
    return x * TABLE + TABLE.sum() + TABLE[0]


def reads_scale(x):
    if x > 0:
        x = x * SCALE
    return x


def reads_config(x):
    return x * CONFIG["weights"] + CONFIG["offset"]


def reads_model(x):
    return x * MODEL.w + MODEL.bias


def test_a_global_array_written_in_place_after_a_trace():
    traced = autograph.function(reads_table)
    x = np.float64(2.0)
    np.testing.assert_array_equal(traced(x), reads_table(x))
    TABLE[:] = [5.0, 5.0, 5.0]
    try:
        np.testing.assert_array_equal(traced(x), reads_table(x))
        np.testing.assert_array_equal(traced(x), reads_table(x))
        assert traced.trace_count == 2
    finally:
        TABLE[:] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(traced(x), reads_table(x))


def test_a_global_rebound_after_a_trace():
    global SCALE
    traced = autograph.function(reads_scale)
    for value in (2.0, 3.0, 2.0):
        SCALE = value
        for x in (1.0, -1.0):
            assert traced(np.float64(x)) == reads_scale(np.float64(x))
    SCALE = 2.0


def test_items_and_attributes_of_global_objects():
    for fn, change, undo in [
        (reads_config, lambda: CONFIG.__setitem__("offset", 4.0), lambda: CONFIG.__setitem__("offset", 1.0)),
        (reads_config, lambda: CONFIG["weights"].__setitem__(0, 7.0),
         lambda: CONFIG["weights"].__setitem__(0, 1.0)),
        (reads_model, lambda: setattr(MODEL, "bias", 9.0), lambda: setattr(MODEL, "bias", 0.5)),
        (reads_model, lambda: MODEL.w.__setitem__(1, -3.0), lambda: MODEL.w.__setitem__(1, 2.0)),
        (reads_model, lambda: setattr(MODEL, "w", np.array([4.0, 4.0])), lambda: setattr(MODEL, "w", np.ones(2))),
    ]:
        traced = autograph.function(fn)
        x = np.ones(2)
        np.testing.assert_array_equal(traced(x), fn(x))
        change()
        try:
            np.testing.assert_array_equal(traced(x), fn(x))
        finally:
            undo()
        np.testing.assert_array_equal(traced(x), fn(x))


def test_an_argument_attribute_array_written_in_place():
    def f(model, x):
        return x * model.w + model.w.max()

    traced = autograph.function(f)
    model, x = Model(), np.ones(2)
    np.testing.assert_array_equal(traced(model, x), f(model, x))
    model.w[0] = 10.0
    np.testing.assert_array_equal(traced(model, x), f(model, x))


def test_a_closure_variable_rebound_and_an_input_signature():
    offset = np.array([1.0])

    def f(x):
        return x + offset + offset.max()

    traced = autograph.function(f, input_signature=[autograph.Spec((None,), "float64")])
    x = np.arange(3.0)
    np.testing.assert_array_equal(traced(x), f(x))
    offset = np.array([5.0])
    np.testing.assert_array_equal(traced(x), f(x))
    offset[0] = -2.0
    np.testing.assert_array_equal(traced(x), f(x))
    assert traced.trace_count == 3


def test_a_concrete_function_called_after_a_change_raises():
    traced = autograph.function(reads_table)
    concrete = traced.get_concrete_function(np.float64(1.0))
    TABLE[0] = 4.0
    try:
        with pytest.raises(TracingError, match="traced when 'TABLE' held another value"):
            concrete(np.float64(1.0))
    finally:
        TABLE[0] = 1.0
    np.testing.assert_array_equal(concrete(np.float64(1.0)), reads_table(np.float64(1.0)))


COUNTS = np.zeros(1)


def counts_calls(x):
    COUNTS[0] += 1   # eagerly: once per call; a graph would not do it again
    return x + COUNTS[0]


def test_a_trace_that_writes_into_a_global_array_in_place_is_refused():
    with pytest.raises(TracingError, match=r"counts_calls wrote into the numpy array 'COUNTS' in place while "
                                           "it was traced"):
        autograph.function(counts_calls)(np.float64(1.0))


_RNG = np.random.default_rng(0)


def draws_from_numpy(x):
    return x + np.random.rand()


def draws_from_python(x):
    import random
    return x + random.random()


def draws_from_a_generator(x):
    return x + _RNG.normal()


@pytest.mark.parametrize(("fn", "source"), [(draws_from_numpy, "numpy.random"), (draws_from_python, "random"),
                                            (draws_from_a_generator, "_RNG")], ids=lambda v: getattr(v, "__name__", v))
def test_random_numbers_drawn_while_tracing_are_refused(fn, source):
    # Eagerly each call draws new numbers; a graph would return the trace's on every call.
    assert fn(np.float64(0.0)) != fn(np.float64(0.0))
    with pytest.raises(TracingError, match=f"{fn.__name__} drew random numbers from {source} while it was traced"):
        autograph.function(fn)(np.float64(0.0))


BIG = np.zeros((1 << 20) + 1)
BIG_FIXED = np.zeros((1 << 20) + 1)
BIG_FIXED.flags.writeable = False


def _reads_big(x):
    return x + BIG[0]


def _reads_big_fixed(x):
    return x + BIG_FIXED[0]


def test_a_large_array_read_outside_the_arguments_is_named_in_a_warning(caplog):
    # An array of over 2**20 elements is not compared on each call: a later
    # in-place write is not seen (eager gives 6.0, the graph 1.0). Before, silently.
    traced = autograph.function(_reads_big)
    with caplog.at_level("WARNING", logger="autograph"):
        assert traced(np.float64(1.0)) == _reads_big(np.float64(1.0))
    messages = [r.getMessage() for r in caplog.records]
    assert any("'BIG' (1048577 elements)" in m and "_reads_big" in m and "Pass it as an argument" in m
               for m in messages), messages
    caplog.clear()
    with caplog.at_level("WARNING", logger="autograph"):
        assert autograph.function(_reads_big_fixed)(np.float64(1.0)) == 1.0
    assert not caplog.records  # read-only: nothing to miss
