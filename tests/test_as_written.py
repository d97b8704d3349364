"""A converted function called outside every trace runs its statements as
written (runtime.backends.tracing): one check at its entry, its callees as
written too, calls still through the hook that converts what a transform
traces. Inside a trace, or with `run_as_written(False)`, it runs its
converted code."""

import autograph.runtime as runtime
import numpy as np
import pytest
from autograph.runtime import backends

import autograph


def collatz(n):
    steps = 0
    while n != 1:
        n = halve(n) if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def halve(n):
    if n % 2:
        raise ValueError("odd")
    return n // 2


class Watching(runtime.Backend):
    """A backend that claims no values and counts how often converted code
    asks whether it traces."""

    name = "watching"

    def __init__(self, answer):
        self.answer, self.asked = answer, 0

    def tracing(self):
        self.asked += 1
        return self.answer


@pytest.fixture
def watching():
    backend = Watching(False)
    runtime.register_backend(backend)
    yield backend
    runtime.unregister_backend(backend)


def _refuse(*args):
    raise AssertionError("the converted code's operators ran outside every trace")


def test_one_check_per_call_and_no_operator(watching, monkeypatch):
    converted = autograph.to_graph(collatz)
    assert converted(6) == collatz(6) == 8  # the first call builds the as-written functions
    for name in ("is_python", "if_stmt", "while_stmt", "if_exp"):
        monkeypatch.setattr(runtime, name, _refuse)
    watching.asked = 0
    assert converted(27) == collatz(27) == 111
    # One question at the entry; `halve`, called 70 times, runs as written without asking.
    assert watching.asked == 1


def test_a_backend_that_traces_gets_the_converted_code(watching):
    converted = autograph.to_graph(collatz)
    watching.answer = True
    assert converted(6) == 8
    assert watching.asked == 1 + 6  # collatz, and halve on each of its six calls (6, 10, 16, 8, 4, 2)


def test_a_backend_that_cannot_tell_keeps_the_converted_code(monkeypatch):
    class Silent(runtime.Backend):  # no `tracing`: the default says it may trace
        name = "silent"

    backend = Silent()
    runtime.register_backend(backend)
    try:
        assert runtime.tracing() is True
        converted = autograph.to_graph(collatz)
        assert converted(6) == 8
    finally:
        runtime.unregister_backend(backend)
    assert runtime.tracing() is False


def test_run_as_written_false_runs_the_converted_code(staged, watching):
    assert runtime.tracing() is True
    converted = autograph.to_graph(collatz)
    assert converted(6) == 8
    assert watching.asked == 0  # the setting answers without asking the backends


def test_run_as_written_returns_the_previous_setting():
    assert runtime.run_as_written(False) is True
    try:
        assert runtime.tracing() is True
    finally:
        assert runtime.run_as_written(True) is False
    assert runtime.tracing() is False


def test_errors_keep_the_users_line():
    with pytest.raises(ValueError, match="odd") as info:
        autograph.to_graph(halve)(3)
    raised = info.traceback[-1]
    assert raised.path.name == "test_as_written.py"
    assert raised.lineno + 1 == halve.__code__.co_firstlineno + 2  # `raise ValueError("odd")`


def test_the_numpy_tracer_stages_a_callee_reached_as_written():
    # `with autograph.Graph()` starts a trace inside a function running as
    # written: the calls inside the block ask again and stage.
    def sign(x):
        if x > 0:
            return x
        return -x

    def staged_in_a_block(value):
        with autograph.Graph() as g:
            x = g.placeholder((), "float64")
            y = sign(x)
        return g.run(y, {x: value})

    converted = autograph.to_graph(staged_in_a_block)
    assert converted(-3.0) == 3.0 and converted(2.0) == 2.0


def test_a_nested_function_returned_as_written_is_converted():
    jax = pytest.importorskip("jax")

    def make(scale):
        def f(x):
            if x.sum() > 0:
                return x * scale
            return -x
        return f

    f = autograph.to_graph(make)(2.0)
    jitted = jax.jit(f)
    np.testing.assert_allclose(jitted(np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(jitted(-np.ones(2)), [1.0, 1.0])


def test_a_transform_called_as_written_traces_the_converted_function():
    jax = pytest.importorskip("jax")

    def clip(x):
        if x > 1.0:
            return 1.0 + 0.0 * x
        return x

    def batched(xs):
        return jax.vmap(clip)(xs)

    converted = autograph.to_graph(batched)
    np.testing.assert_allclose(converted(np.array([0.5, 2.0, 1.0])), [0.5, 1.0, 1.0])
    np.testing.assert_allclose(jax.jit(converted)(np.array([3.0, -1.0])), [1.0, -1.0])


def test_jax_reports_tracing_only_inside_a_transform():
    jax = pytest.importorskip("jax")
    seen = []

    def probe(x):
        seen.append(backends.tracing())
        return x

    runtime.prepare_backends()
    probe(1.0)
    jax.jit(probe)(1.0)
    jax.vmap(probe)(np.ones(2))
    assert seen == [False, True, True]


def test_torch_reports_tracing_only_under_compile_or_export():
    torch = pytest.importorskip("torch")
    seen = []

    def probe(x):
        seen.append(backends.tracing())
        return x + 1

    class Probe(torch.nn.Module):
        def forward(self, x):
            return probe(x)

    runtime.prepare_backends()
    probe(torch.ones(2))
    torch.export.export(Probe(), (torch.ones(2),), strict=False)
    assert seen == [False, True]


class Counter:
    def step(self, x):
        return x + 1


class Doubler(Counter):
    def step(self, x):
        return 2 * x


def steps(items, xs):
    return [item.step(x) for item, x in zip(items, xs)] + [items[0].step(xs[0])]


def test_a_method_call_site_remembers_the_methods_written_function():
    from autograph.runtime import calls
    converted = autograph.to_graph(steps)
    mixed = [Counter(), Doubler(), Counter()]
    assert converted(mixed, [1, 2, 3]) == steps(mixed, [1, 2, 3]) == [2, 4, 4, 2]
    written = converted.__autograph_as_written__()
    remembered = {site[0]: site[1] for site in calls._sites[written]}
    assert remembered[Counter.step] is autograph.to_graph(Counter.step).__autograph_as_written__()
    one = Counter()
    one.step = lambda x: -x  # an instance's own attribute: called as it is
    assert converted([one], [5]) == [-5, -5]


class Holder:
    def __init__(self, item):
        self.item = item


def chained(holders, xs):
    return [h.item.step(x) for h, x in zip(holders, xs)]


def test_a_callee_the_call_does_not_name_is_remembered_too():
    # `h.item.step(x)`: the site of a callee that is not a name's attribute
    # remembers a method's statements as written as well.
    from autograph.runtime import calls
    converted = autograph.to_graph(chained)
    holders = [Holder(Counter()), Holder(Doubler()), Holder(Counter())]
    assert converted(holders, [1, 2, 3]) == chained(holders, [1, 2, 3]) == [2, 4, 4]
    remembered = {site[0]: site[1] for site in calls._sites[converted.__autograph_as_written__()]}
    assert remembered[Counter.step] is autograph.to_graph(Counter.step).__autograph_as_written__()
