"""autograph.function from several threads: each thread traces into its own
graph, a trace never sees another thread's values, and a signature traced
by two threads at once is traced once."""

import random
import sys
import threading

import numpy as np
import pytest
from autograph.runtime.tracer import context
from autograph.runtime.tracer.errors import TracingError

import autograph


@pytest.fixture
def frequent_thread_switches():
    # Switch threads every microsecond, so traces interleave as much as possible.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def run_threads(target, count):
    errors = []

    def work(i):
        try:
            target(i)
        except BaseException as e:  # noqa: B036 - reported below, with the thread's traceback
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def weighted_sum(x):
    s = np.zeros_like(x)
    for i in range(3):
        if np.sum(x) > i:
            s = s + x * i
    return s


def test_16_threads_128_signatures(frequent_thread_switches):
    f = autograph.function(weighted_sum)
    sizes = list(range(1, 129))

    def work(i):
        order = sizes[:]
        random.Random(i).shuffle(order)
        for n in order:
            x = np.arange(n, dtype=np.float64) - n / 3
            np.testing.assert_array_equal(f(x), weighted_sum(x))

    run_threads(work, 16)
    assert f.trace_count == 128
    assert not context.tracing_threads


def test_a_cached_call_in_one_thread_while_another_traces():
    # Thread A pauses in the middle of tracing `g` (a Python side effect runs
    # at trace time); meanwhile thread B calls `f`, whose graph is cached.
    f = autograph.function(lambda x: autograph.py_function(lambda v: v * 10, [x], autograph.Spec(())),
                           autograph=False)
    assert f(np.float64(1.0)) == 10.0
    a_tracing, b_done = threading.Event(), threading.Event()

    @autograph.function(autograph=False)
    def g(x):
        y = x + 1
        a_tracing.set()
        b_done.wait()
        return y * 2

    results = {}

    def thread_a(_):
        results["a"] = g(np.float64(1.0))

    def thread_b(_):
        a_tracing.wait()
        try:
            results["b"] = f(np.float64(1.0))
        finally:
            b_done.set()

    run_threads(lambda i: (thread_a, thread_b)[i](i), 2)
    assert results == {"a": 4.0, "b": 10.0}
    assert isinstance(results["b"], (np.ndarray, np.generic))   # a value, not a symbolic one of A's graph
    assert [n.name for n in g.get_concrete_function(np.float64(1.0)).traced_graph.walk()] == [
        "add", "multiply"]
    assert f.trace_count == 1 and g.trace_count == 1


def test_one_signature_traced_by_two_threads_at_once_is_traced_once():
    traces = []
    b_started = threading.Event()

    @autograph.function(autograph=False)
    def f(x):
        traces.append(threading.get_ident())
        b_started.wait()
        return x * 3

    results = {}

    def work(i):
        if i == 1:
            b_started.set()
        results[i] = f(np.ones(2))

    run_threads(work, 2)
    assert len(traces) == 1 and f.trace_count == 1
    np.testing.assert_array_equal(results[0], [3.0, 3.0])
    np.testing.assert_array_equal(results[1], [3.0, 3.0])


def test_a_failed_trace_is_not_awaited_forever():
    # The first thread's trace fails; the waiting thread traces for itself.
    calls = []
    release = threading.Event()

    @autograph.function(autograph=False)
    def f(x):
        calls.append(1)
        if len(calls) == 1:
            release.wait()
            raise ValueError("first trace fails")
        return x + 1

    outcomes = {}

    def work(i):
        if i == 1:
            release.set()
        try:
            outcomes[i] = f(np.float64(1.0))
        except ValueError as e:
            outcomes[i] = str(e)

    run_threads(work, 2)
    assert sorted(map(str, outcomes.values())) == ["2.0", "first trace fails"]
    assert f.trace_count == 1


def test_a_symbolic_value_of_another_threads_trace_is_refused():
    leaked = []
    a_traced, b_done = threading.Event(), threading.Event()

    @autograph.function(autograph=False)
    def a(x):
        leaked.append(x * 2)
        a_traced.set()
        b_done.wait()
        return x

    @autograph.function(autograph=False)
    def b(x):
        return x + leaked[0]

    errors = []

    def thread_b(_):
        a_traced.wait()
        try:
            b(np.float64(1.0))
        except TracingError as e:
            errors.append(str(e))
        finally:
            b_done.set()

    def thread_a(_):
        try:
            a(np.float64(1.0))
        except TracingError as e:   # and `a` itself leaves a symbolic value in `leaked`
            errors.append(str(e))

    run_threads(lambda i: (thread_a, thread_b)[i](i), 2)
    assert len(errors) == 2, errors
    message = next(m for m in errors if not m.startswith("a stored"))
    assert message.startswith("a symbolic value of a graph that another thread is tracing is used here")
    assert "test_tracing_threads.py" in message
    assert any(m.startswith("a stored a value computed by the graph in 'leaked[0]'") for m in errors), errors


def test_explicit_graphs_in_threads(frequent_thread_switches):
    converted = autograph.to_graph(weighted_sum)

    def work(i):
        with autograph.Graph() as g:
            x = g.placeholder((None,), "float64")
            y = converted(x) * i
        for n in range(1, 20):
            v = np.arange(n, dtype=np.float64)
            np.testing.assert_array_equal(g.run(y, {x: v}), weighted_sum(v) * i)

    run_threads(work, 8)


def test_a_graph_is_entered_by_one_thread_only():
    g = autograph.Graph()
    entered, done = threading.Event(), threading.Event()
    errors = []

    def work(i):
        if i == 0:
            with g:
                entered.set()
                done.wait()
        else:
            entered.wait()
            try:
                with g:
                    pass
            except TracingError as e:
                errors.append(str(e))
            finally:
                done.set()

    run_threads(work, 2)
    assert errors == ["this graph is being traced by another thread; each thread traces into graphs of its own"]
