"""`autograph.set_loop_options` in every staging backend: rows of the
conformance table (tests/runtime/test_conformance.py runs them through the
numpy tracer, jax.jit and torch.export the same way).

A loop bounded with `maximum_iterations=N` is compared with the same loop
written with an explicit counter and `break`, unconverted and run eagerly;
a loop whose values are Python is compared with the unconverted function
itself (the option means nothing to Python)."""

import numpy as np
import pytest
from autograph.runtime.errors import LoopStateError

import autograph
from tests.runtime.test_conformance import BACKENDS, S, V, assert_same, line_of


@pytest.fixture(scope="module", params=BACKENDS, ids=lambda b: b.name)
def backend(request):
    return request.param()


# maximum_iterations: each program with its reference -----------------------------

def bounded_while(xp):
    def f(x):
        n = 0
        while x > 0:
            autograph.set_loop_options(maximum_iterations=3)
            x = x - 1.0
            n += 1
        return x, n
    return f


def bounded_while_reference(xp):
    def f(x):
        n = 0
        k = 0
        while x > 0:
            if k == 3:
                break
            k += 1
            x = x - 1.0
            n += 1
        return x, n
    return f


def bounded_while_with_break(xp):
    def f(x):
        n = 0
        while x > 0:
            autograph.set_loop_options(maximum_iterations=4)
            if x < 1.5:
                break
            x = x - 1.0
            n += 1
        return x, n
    return f


def bounded_while_with_break_reference(xp):
    def f(x):
        n = 0
        k = 0
        while x > 0:
            if k == 4:
                break
            k += 1
            if x < 1.5:
                break
            x = x - 1.0
            n += 1
        return x, n
    return f


def bounded_while_staged_late(xp):
    # The first two iterations run as Python (`i < 2` decides the `or`);
    # they count towards the bound.
    def f(x):
        i = 0
        while i < 2 or x > 0:
            autograph.set_loop_options(maximum_iterations=4)
            x = x - 1.0
            i += 1
        return x, i
    return f


def bounded_while_staged_late_reference(xp):
    def f(x):
        i = 0
        k = 0
        while i < 2 or x > 0:
            if k == 4:
                break
            k += 1
            x = x - 1.0
            i += 1
        return x, i
    return f


def bounded_while_with_return(xp):
    def f(x):
        n = 0
        while n < 10:
            autograph.set_loop_options(maximum_iterations=3)
            if x * n > 5:
                return n
            n += 1
        return -n
    return f


def bounded_while_with_return_reference(xp):
    def f(x):
        n = 0
        k = 0
        while n < 10:
            if k == 3:
                break
            k += 1
            if x * n > 5:
                return n
            n += 1
        return -n
    return f


def bounded_for(xp):
    def f(x):
        s = 0.0
        for v in x:
            autograph.set_loop_options(maximum_iterations=2)
            s = s + v
        return s
    return f


def bounded_for_reference(xp):
    def f(x):
        s = 0.0
        k = 0
        for v in x:
            if k == 2:
                break
            k += 1
            s = s + v
        return s
    return f


def bounded_for_with_break(xp):
    def f(x):
        s = 0.0
        for v in x:
            autograph.set_loop_options(maximum_iterations=2)
            if v < 0:
                break
            s = s + v
        return s
    return f


def bounded_for_with_break_reference(xp):
    def f(x):
        s = 0.0
        k = 0
        for v in x:
            if k == 2:
                break
            k += 1
            if v < 0:
                break
            s = s + v
        return s
    return f


def bound_beyond_the_end(xp):
    def f(x):
        s = 0.0
        for i, v in enumerate(x):
            autograph.set_loop_options(maximum_iterations=10)
            s = s + i * v
        return s
    return f


def bound_beyond_the_end_reference(xp):
    def f(x):
        s = 0.0
        for i, v in enumerate(x):
            s = s + i * v
        return s
    return f


def bounded_for_over_range(xp):
    def f(n, x):
        s = x
        for i in range(n):
            autograph.set_loop_options(maximum_iterations=2)
            s = s * 2 + i
        return s
    return f


def bounded_for_over_range_reference(xp):
    def f(n, x):
        s = x
        k = 0
        for i in range(n):
            if k == 2:
                break
            k += 1
            s = s * 2 + i
        return s
    return f


def static_range_not_unrolled(xp):
    def f(x):
        s = x
        for i in range(5):
            autograph.set_loop_options(unroll=False)
            s = s * 2 + i
        return s
    return f


def bounded_static_range(xp):
    def f(x):
        s = x
        for i in range(5):
            autograph.set_loop_options(unroll=False, maximum_iterations=2)
            s = s * 2 + i
        return s
    return f


def bounded_static_range_reference(xp):
    def f(x):
        s = x
        for i in range(2):
            s = s * 2 + i
        return s
    return f


def zero_iterations(xp):
    def f(x):
        n = 0
        while x > 0:
            autograph.set_loop_options(maximum_iterations=0)
            x = x - 1.0
            n += 1
        return x, n
    return f


def zero_iterations_reference(xp):
    def f(x):
        return x, 0
    return f


def closure_reads_bounded_counter(xp):
    # A closure reads a loop variable: places.py carries its cell, the
    # bound adds a counter beside it.
    def f(n):
        i = 0

        def g():
            return i + 2
        s = 0
        while i < n:
            autograph.set_loop_options(maximum_iterations=2)
            s = s * 10 + g()
            i += 1
        return s
    return f


def closure_reads_bounded_counter_reference(xp):
    def f(n):
        i = 0

        def g():
            return i + 2
        s = 0
        k = 0
        while i < n:
            if k == 2:
                break
            k += 1
            s = s * 10 + g()
            i += 1
        return s
    return f


def python_loops_ignore_the_bound(xp):
    # Loops whose values are Python run as Python: the option does nothing.
    def f(x):
        for i in range(5):
            autograph.set_loop_options(maximum_iterations=2)
            x = x + i
        n = 0
        while n < 4:
            autograph.set_loop_options(maximum_iterations=1)
            n += 1
        return x, n
    return f


BOUNDED = [
    (bounded_while, bounded_while_reference, [(S(10.0),), (S(2.0),), (S(-1.0),)]),
    (bounded_while_with_break, bounded_while_with_break_reference, [(S(10.0),), (S(2.0),)]),
    (bounded_while_staged_late, bounded_while_staged_late_reference, [(S(10.0),), (S(2.5),), (S(-1.0),)]),
    (bounded_while_with_return, bounded_while_with_return_reference, [(S(3.0),), (S(0.5),)]),
    (bounded_for, bounded_for_reference, [(V([1.0, 2.0, 3.0]),), (V([4.0, -1.0, 5.0]),)]),
    (bounded_for_with_break, bounded_for_with_break_reference,
     [(V([1.0, 2.0, 3.0]),), (V([-1.0, 2.0, 3.0]),)]),
    (bound_beyond_the_end, bound_beyond_the_end_reference, [(V([1.0, 2.0, 3.0]),)]),
    (bounded_for_over_range, bounded_for_over_range_reference,
     [(np.int64(5), S(1.0)), (np.int64(1), S(1.0)), (np.int64(0), S(1.0))]),
    (static_range_not_unrolled, static_range_not_unrolled, [(S(1.0),), (S(-2.0),)]),
    (bounded_static_range, bounded_static_range_reference, [(S(1.0),), (S(-2.0),)]),
    (zero_iterations, zero_iterations_reference, [(S(3.0),)]),
    (closure_reads_bounded_counter, closure_reads_bounded_counter_reference,
     [(np.int64(0),), (np.int64(1),), (np.int64(3),)]),
    (python_loops_ignore_the_bound, python_loops_ignore_the_bound, [(S(1.0),)]),
]


@pytest.mark.parametrize("program, reference, argsets", BOUNDED, ids=[p.__name__ for p, _, _ in BOUNDED])
def test_maximum_iterations(backend, program, reference, argsets):
    argsets = [tuple(backend.make(a) for a in args) for args in argsets]
    expected = [reference(backend.xp)(*args) for args in argsets]
    for e, a in zip(expected, backend.run(program(backend.xp), argsets), strict=True):
        assert_same(backend, e, a)


# Options without effect, and shape_invariants ---------------------------------------

def options_without_effect(xp):
    def f(x):
        s = x[0] * 0
        for v in x:
            autograph.set_loop_options(parallel_iterations=4, swap_memory=True)
            s = s + v
        while s > 1:
            autograph.set_loop_options(parallel_iterations=1)
            s = s / 2
        return s
    return f


@pytest.mark.parametrize("argsets", [[(V([1.0, 2.0, 3.0]),), (V([0.5, -1.0, 0.25]),)]])
def test_options_without_effect(backend, argsets):
    argsets = [tuple(backend.make(a) for a in args) for args in argsets]
    f = options_without_effect(backend.xp)
    for e, a in zip([f(*args) for args in argsets], backend.run(f, argsets), strict=True):
        assert_same(backend, e, a)


def grown_by_concatenate(xp):
    def f(x):
        y = xp.reshape(x, (1,))
        while x > 0:
            autograph.set_loop_options(shape_invariants=[(y, (None,))])
            y = xp.concatenate([y, xp.reshape(x * 2, (1,))])
            x = x - 1.0
        return y, x
    return f


def grown_by_pad(x):
    y = x[:1]
    for v in x:
        autograph.set_loop_options(shape_invariants=[(y, (None,))])
        y = np.pad(y, (1, 0), constant_values=v)
    return y


def test_shape_invariants_let_a_vector_grow_in_the_numpy_tracer():
    grow = autograph.function(grown_by_concatenate(np))
    for x in (S(3.0), S(0.5), S(-1.0)):
        assert_same(BACKENDS[0](), grown_by_concatenate(np)(x), grow(x))
    assert grow.trace_count == 1
    pad = autograph.function(grown_by_pad)
    for x in (V([1.0, 2.0, 3.0]), V([4.0, 5.0, 6.0])):
        assert_same(BACKENDS[0](), grown_by_pad(x), pad(x))
    assert pad.trace_count == 1


@pytest.mark.parametrize("row", [b for b in BACKENDS if b.name != "numpy"], ids=lambda b: b.name)
def test_shape_invariants_are_refused_where_shapes_are_static(row):
    backend = row()
    with pytest.raises(LoopStateError) as info:
        backend.run(grown_by_concatenate(backend.xp), [(backend.make(S(3.0)),)])
    message = str(info.value)
    where = f"({__file__}:{line_of(grown_by_concatenate, 'while x > 0')}): "
    assert message.startswith(f"set_loop_options(shape_invariants=...) of a `while` loop whose condition is "
                              f"traced by {backend.name.replace('jax', 'JAX')} {where}"), message
    words = {"jax": "JAX arrays have static shapes, so lax.while_loop and lax.scan carry 'y' with one shape; "
                    "make 'y' its largest size before the loop and write into it (y = y.at[i].set(...))",
             "torch": "torch's while_loop carries 'y' with one shape in every iteration; make 'y' its largest "
                      "size before the loop and write into it (y[i] = ...)"}
    assert words[backend.name] in message, message


def not_a_loop_variable(x):
    y = x[:1]
    for v in x:
        autograph.set_loop_options(shape_invariants=[(y, (None,))])
        x = x + v
    return x, y


def not_an_array(x):
    n = 0
    for v in x:
        autograph.set_loop_options(shape_invariants=[(n, (None,))])
        n = n + v
    return n


def wrong_shape(x):
    y = x[:2]
    for v in x:
        autograph.set_loop_options(shape_invariants=[(y, (None, 2))])
        y = np.concatenate([y, [v]])
    return y


@pytest.mark.parametrize("program, words", [
    (not_a_loop_variable, "'y' is not a variable that the loop changes"),
    (not_an_array, "'n' is a Python int (0), not an array"),
    (wrong_shape, "'y' enters the loop as float64[2], which does not have the declared shape (None, 2) "
                  "(a tuple of its dimensions, None for those that may change)"),
], ids=lambda p: getattr(p, "__name__", ""))
def test_shape_invariants_errors(program, words):
    with pytest.raises(LoopStateError) as info:
        autograph.function(program)(V([1.0, 2.0, 3.0]))
    message = str(info.value)
    assert message.startswith("set_loop_options(shape_invariants=...) of a `for` loop over an array that is "
                              f"symbolic ({__file__}:{line_of(program, 'for v in x')}): "), message
    assert message.endswith(words), message


def shrunk(x, n):
    y = x
    while n > 0:
        y = y[1:]
        n = n - 1
    return y


def shrunk_with_invariant(x, n):
    y = x
    while n > 0:
        autograph.set_loop_options(shape_invariants=[(y, (None,))])
        y = y[1:]
        n = n - 1
    return y


def test_a_shape_change_says_which_invariant_lets_it():
    with pytest.raises(LoopStateError) as info:
        autograph.function(shrunk)(V([1.0, 2.0, 3.0]), np.int64(2))
    assert str(info.value).endswith(
        "loop variables must keep their dtype and shape across iterations: give it its final dtype and shape "
        "before the loop (for example with .astype()), or let its shape change with "
        "autograph.set_loop_options(shape_invariants=[(y, (None,))]) in the loop"), str(info.value)
    traced = autograph.function(shrunk_with_invariant)
    for n in (0, 2, 3):
        assert_same(BACKENDS[0](), shrunk(V([1.0, 2.0, 3.0]), n), traced(V([1.0, 2.0, 3.0]), np.int64(n)))


# A bounded `while` under jax.grad -----------------------------------------------

def power(x):
    y = x
    while y < 100.0:
        autograph.set_loop_options(maximum_iterations=4)
        y = y * x
    return y


def power_reference(x):
    y = x
    k = 0
    while y < 100.0:
        if k == 4:
            break
        k += 1
        y = y * x
    return y


def _primitives(jaxpr, names=None):
    names = set() if names is None else names
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    _primitives(inner, names)
    return names


@pytest.mark.parametrize("x", [2.0, 1.5, 20.0, 200.0])
def test_bounded_while_differentiates_in_reverse_mode_under_jax(x):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    converted = autograph.to_graph(power)
    expected = jax.grad(power_reference)(x)
    np.testing.assert_allclose(jax.jit(jax.grad(converted))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(jax.grad(jax.jit(converted))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(jax.jit(converted)(x), power_reference(x), rtol=1e-12)


def test_eager_grad_runs_the_loop_as_python_and_ignores_the_bound():
    # Eager jax.grad compares concrete arrays: the loop is Python, as in the
    # unconverted function (docs/backends.md, "Loop options").
    jax = pytest.importorskip("jax")
    assert float(jax.grad(autograph.to_graph(power))(2.0)) == float(jax.grad(power)(2.0)) == 448.0


def test_bounded_while_stops_early_when_not_differentiated():
    # Run forward, it is one `while` that stops when its test fails (no scan
    # of all 4 iterations under a cond).
    jax = pytest.importorskip("jax")
    names = _primitives(jax.make_jaxpr(autograph.to_graph(power))(2.0).jaxpr)
    assert "while" in names and "scan" not in names and "cond" not in names, names


# Errors ---------------------------------------------------------------------------

def fractional_bound(xp):
    def f(x):
        while x > 0:
            autograph.set_loop_options(maximum_iterations=2.5)
            x = x - 1.0
        return x
    return f


def negative_bound(xp):
    def f(x):
        while x > 0:
            autograph.set_loop_options(maximum_iterations=-1)
            x = x - 1.0
        return x
    return f


def traced_bound(xp):
    def f(x, n):
        for v in x:
            autograph.set_loop_options(maximum_iterations=n)
            x = x - v
        return x
    return f


OPTION_ERRORS = [
    (fractional_bound, [S(3.0)], TypeError, "while x > 0", "must be a Python int, got 2.5"),
    (negative_bound, [S(3.0)], ValueError, "while x > 0", "must not be negative, got -1"),
    (traced_bound, [V([1.0, 2.0]), np.int64(1)], TypeError, "for v in x",
     "must be a Python int, got int"),
]


@pytest.mark.parametrize("program, args, error, construct, words", OPTION_ERRORS,
                         ids=[e[0].__name__ for e in OPTION_ERRORS])
def test_option_error(backend, program, args, error, construct, words):
    with pytest.raises(error) as info:
        backend.run(program(backend.xp), [tuple(backend.make(a) for a in args)])
    message = str(info.value)
    assert message.startswith("set_loop_options(maximum_iterations=...) of the loop at "
                              f"{__file__}:{line_of(program, construct)} "), message
    assert words in message, message


# torch.compile ------------------------------------------------------------------

@pytest.mark.parametrize("program, reference, argsets", [
    (bounded_while, bounded_while_reference, [(S(10.0),), (S(2.0),)]),
    (bounded_while_with_break, bounded_while_with_break_reference, [(S(10.0),), (S(2.0),)]),
], ids=["bounded_while", "bounded_while_with_break"])
def test_maximum_iterations_under_torch_compile(program, reference, argsets):
    torch = pytest.importorskip("torch")
    converted = autograph.to_graph(program(torch))
    converted(torch.tensor(argsets[0][0]))  # eagerly once first, as docs/pytorch.md says
    torch._dynamo.reset()
    compiled = torch.compile(converted, fullgraph=True, backend="eager")
    for args in argsets:
        args = tuple(torch.tensor(a) for a in args)
        expected, actual = reference(torch)(*args), compiled(*args)
        for e, a in zip(expected, actual, strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-12)


def test_maximum_iterations_on_eager_torch_tensors():
    # Eager tensors are the torch backend's values: the bound holds as under export.
    torch = pytest.importorskip("torch")
    for program, reference, args in [(bounded_while, bounded_while_reference, (torch.tensor(10.0),)),
                                     (bounded_for, bounded_for_reference, (torch.tensor([1.0, 2.0, 3.0]),))]:
        expected, actual = reference(torch)(*args), autograph.to_graph(program(torch))(*args)
        np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float))
