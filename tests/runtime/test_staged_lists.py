"""Lists appended to in staged loops (runtime/staging/lists.py), where the
backends differ: a length known only when the program runs (a `while`, an
`if` that appends in one branch, a `break`) is a traced length in the numpy
tracer (whose arrays can have one) and in JAX for `len()` and indexing;
JAX and PyTorch need the number of rows of a loop's buffer while tracing.
Also `jax.grad` through list-append loops, against `jax.grad` of the
unconverted function on concrete values. The patterns every backend runs
alike are rows of test_conformance.py.
"""

import inspect

import numpy as np
import pytest
from autograph.runtime.errors import BranchMismatchError, LoopStateError, TracingError

import autograph

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
torch = pytest.importorskip("torch")
jax.config.update("jax_enable_x64", True)

from tests.runtime.exported_graphs import Converted  # noqa: E402


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def where(fn, text):
    return f"{__file__}:{line_of(fn, text)})"


def jitted(f):
    return jax.jit(autograph.to_graph(f))


def exported(f, *args):
    return torch.export.export(Converted(f), args).module()


# A `while`: the number of elements is known only when the program runs --------

def keep_while(x):
    keep = []
    while x > 0:
        keep.append(x)
        x = x - 1
    return len(keep), keep[-1], keep[0]


def test_keep_in_while_numpy_has_the_eager_length():
    traced = autograph.function(keep_while)
    for x in (3.0, 1.0, 5.5):
        assert traced(np.float64(x)) == keep_while(np.float64(x))


def test_keep_in_while_jax_and_torch_name_the_list_and_the_fix():
    for run in (lambda: jitted(keep_while)(jnp.float64(3.0)),
                lambda: exported(keep_while, torch.tensor(3.0))):
        with pytest.raises(LoopStateError) as info:
            run()
        message = str(info.value)
        assert message.startswith("'keep' is a list appended to in a `while` loop"), message
        assert where(keep_while, "while x > 0") in message
        assert "set_loop_options(maximum_iterations=N)" in message


def keep_bounded_while(x):
    keep = []
    while x > 0:
        autograph.set_loop_options(maximum_iterations=10)
        keep.append(x * 2)
        x = x - 1
    return len(keep), keep[-1], keep[0]


def test_keep_in_bounded_while_has_the_eager_length_in_every_backend():
    to_jax = jitted(keep_bounded_while)
    to_torch = exported(keep_bounded_while, torch.tensor(3.0, dtype=torch.float64))
    for x in (3.0, 1.0, 5.5):
        expected = keep_bounded_while(np.float64(x))
        assert autograph.function(keep_bounded_while)(np.float64(x)) == expected
        assert tuple(float(v) for v in to_jax(jnp.float64(x))) == expected
        assert tuple(float(v) for v in to_torch(torch.tensor(x, dtype=torch.float64))) == expected


def test_bounded_while_list_cannot_be_stacked_in_jax():
    def f(x):
        keep = []
        while x > 0:
            autograph.set_loop_options(maximum_iterations=10)
            keep.append(x)
            x = x - 1
        return jnp.stack(keep)
    with pytest.raises(TracingError) as info:
        jitted(f)(jnp.float64(3.0))
    message = str(info.value)
    assert message.startswith("'keep' is a list appended to in a `while` loop"), message
    assert "whose length depends on how many iterations the loop runs: it cannot be stacked" in message


def test_jax_grad_through_appends_in_a_bounded_while():
    def f(x):
        ys = [x]
        s = x
        while s < 10.0:
            autograph.set_loop_options(maximum_iterations=8)
            s = s * 1.5 + 1.0
            ys.append(s * x)
        return ys[-1] + ys[1] + len(ys)
    converted = jax.jit(jax.grad(autograph.to_graph(f)))
    for x in (0.5, 2.0, 5.0):
        np.testing.assert_allclose(converted(jnp.float64(x)), jax.grad(f)(jnp.float64(x)), rtol=1e-12)


def stacked_after_while(x):
    ys = [x * 0]
    while x > 0:
        ys.append(x * 2)
        x = x - 1
    total = 0.0
    for y in ys:
        total = total + y
    return np.stack(ys), autograph.stack(ys), total, len(ys)


def test_list_of_traced_length_numpy_stack_iterate():
    traced = autograph.function(stacked_after_while)
    for x in (3.0, 0.5, -1.0):
        expected, actual = stacked_after_while(np.float64(x)), traced(np.float64(x))
        for e, a in zip(expected, actual, strict=True):
            np.testing.assert_array_equal(a, e)
    assert traced.trace_count == 1


# An `if` in the body appends in one branch only --------------------------------

def positives(x):
    out = []
    for v in x:
        if v > 0:
            out.append(v)
    return len(out), out[-1], out[0]


def test_append_in_one_branch_numpy_and_jax():
    for x in ([1.0, -2.0, 3.0], [-1.0, 2.0, 2.5, 4.0]):
        expected = positives(np.array(x))
        assert autograph.function(positives)(np.array(x)) == expected
        assert tuple(float(v) for v in jitted(positives)(jnp.array(x))) == expected


def test_append_in_one_branch_index_out_of_range_raises_when_run():
    def f(x):
        out = []
        for v in x:
            if v > 0:
                out.append(v)
        return out[2]
    with pytest.raises(IndexError):
        f(np.array([1.0, -2.0]))
    with pytest.raises(IndexError):
        autograph.function(f)(np.array([1.0, -2.0]))
    with pytest.raises(Exception, match=r"list index out of range \('out'\)"):  # noqa: B017 - JAX wraps it
        jax.block_until_ready(jitted(f)(jnp.array([1.0, -2.0])))


def test_append_in_one_branch_jax_stack_says_why():
    def f(x):
        out = []
        for v in x:
            if v > 0:
                out.append(v)
        return jnp.stack(out)
    with pytest.raises(TracingError) as info:
        jitted(f)(jnp.array([1.0, -2.0]))
    message = str(info.value)
    assert message.startswith("'out' is a list appended to in a `for` loop"), message
    assert "whose length depends on which way an `if` goes" in message
    assert where(f, "for v in x") in message


def test_append_in_one_branch_torch_is_an_error():
    # PyTorch runs a `for` over a tensor as Python: the `if` is staged alone.
    with pytest.raises(BranchMismatchError, match="'out' is a list that the branches of an `if`"):
        exported(positives, torch.tensor([1.0, -2.0, 3.0]))


def until_negative(x):
    out = [x[0] * 0]
    for v in x:
        if v < 0:
            break
        out.append(v * 2)
    return len(out), out[-1]


def test_append_before_break_numpy_and_jax():
    for x in ([1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [-1.0, 2.0, 3.0]):
        expected = until_negative(np.array(x))
        assert autograph.function(until_negative)(np.array(x)) == expected
        assert tuple(float(v) for v in jitted(until_negative)(jnp.array(x))) == expected


def pop_under_if(x):
    ys = []
    for v in x:
        ys.append(v)
        if v > 1:
            ys.pop()
    return len(ys)


def test_pop_of_this_iterations_element_numpy_and_jax():
    x = np.array([1.0, 2.0, -3.0, 0.5])
    assert autograph.function(pop_under_if)(x) == pop_under_if(x) == 3
    assert int(jitted(pop_under_if)(jnp.asarray(x))) == 3


# Errors -------------------------------------------------------------------------

def inserted(x):
    ys = []
    for v in x:
        ys.append(v)
        ys.insert(0, v)
    return len(ys)


def read_last(x):
    ys = [x[0]]
    for v in x:
        ys.append(ys[-1] + v)
    return np.stack(ys)


def read_at_traced_index(n):
    ys = [0]
    for i in range(1, n):
        ys.append(ys[i - 1] + i)
    return ys[-1]


@pytest.mark.parametrize("run", ["numpy", "jax"])
def test_changing_an_accumulated_list_in_the_loop_is_an_error(run):
    x = np.array([1.0, 2.0])
    call = autograph.function(inserted) if run == "numpy" else jitted(inserted)
    with pytest.raises(LoopStateError) as info:
        call(x)
    message = str(info.value)
    assert message.startswith("'ys' is a list that an iteration of a `for` loop"), message
    assert "otherwise than by appending to it (pop, insert, remove, del or an item set)" in message
    assert where(inserted, "for v in x") in message


@pytest.mark.parametrize("run", ["numpy", "jax"])
def test_reading_an_accumulated_list_in_the_loop_is_an_error(run):
    x = np.array([1.0, 2.0])
    call = autograph.function(read_last) if run == "numpy" else jitted(read_last)
    with pytest.raises(TracingError) as info:
        call(x)
    message = str(info.value)
    assert message.startswith("'ys' is a list accumulated in a `for` loop"), message
    assert "inside the loop only `ys.append(...)` and `len(ys)` work on it" in message
    assert where(read_last, "for v in x") in message


def test_reading_a_list_at_a_traced_index_is_an_error():
    with pytest.raises(TracingError, match="'ys' is a Python list, its index is symbolic") as info:
        autograph.function(read_at_traced_index)(np.int64(4))
    assert f"{__file__}:{line_of(read_at_traced_index, 'ys[i - 1]')})" in str(info.value)


def weak_and_bool(x):
    ys = []
    while x > 0:
        autograph.set_loop_options(maximum_iterations=4)
        ys.append(x)
        ys.append(x > 1)
        x = x - 1
    return len(ys)


def dtype_by_branch(x):
    ys = []
    for v in x:
        if v > 0:
            ys.append(v)
        else:
            ys.append(v > -1)
    return len(ys)


@pytest.mark.parametrize("f, arg, error, words, construct", [
    # a weakly typed float and bool: JAX's types would merge them
    (weak_and_bool, 2.0, LoopStateError, "is a list appended to in a `while` loop", "while x > 0"),
    (dtype_by_branch, [1.0, -2.0], BranchMismatchError, "is float64[] in the true branch but bool[]", "if v > 0"),
], ids=["weak_and_bool", "dtype_by_branch"])
@pytest.mark.parametrize("run", ["numpy", "jax"])
def test_elements_of_two_dtypes_are_an_error(f, arg, error, words, construct, run):
    call = autograph.function(f) if run == "numpy" else jitted(f)
    with pytest.raises(error) as info:
        call(np.asarray(arg) if run == "numpy" else jnp.asarray(arg))
    message = str(info.value)
    assert message.startswith(f"'ys' {words}"), message
    assert "bool[]" in message
    assert where(f, construct) in message


class Holder:
    pass


def kept_in_attribute(x):
    h = Holder()
    h.ys = []
    ys = h.ys
    while x > 0:
        ys.append(x)
        x = x - 1
    return len(ys)


def test_list_of_traced_length_held_by_an_attribute_is_an_error():
    with pytest.raises(TracingError) as info:
        autograph.function(kept_in_attribute)(np.float64(2.0))
    message = str(info.value)
    assert message.startswith("'ys' is a list appended to in a `while` loop"), message
    assert "it is also held elsewhere (by an attribute, a container, an argument" in message
    assert where(kept_in_attribute, "while x > 0") in message


def appended_to_callers_list(x, ys):
    while x > 0:
        ys.append(x)
        x = x - 1
    return x


def test_list_of_traced_length_of_the_caller_is_an_error():
    ys = []
    with pytest.raises(TracingError, match=r"'ys' is a list appended to .* it is also held elsewhere"):
        autograph.function(appended_to_callers_list)(np.float64(2.0), ys)


def bounded_append_to_callers_list(x, ys):
    while x > 0:
        autograph.set_loop_options(maximum_iterations=10)
        ys.append(x)
        x = x - 1
    return x


def test_list_of_traced_length_held_by_an_unconverted_callers_variable_is_an_error():
    # jax.jit traces a caller that is not converted: its variable would still
    # hold the list from before the loop, and its len() would be 0, not 3.
    converted = autograph.to_graph(bounded_append_to_callers_list)

    def caller(x):
        ys = []
        converted(x, ys)
        return len(ys)

    with pytest.raises(TracingError) as info:
        jax.jit(caller)(3.0)
    message = str(info.value)
    assert message.startswith("'ys' is a list appended to in a `while` loop"), message
    assert "it is also held elsewhere" in message
    assert where(bounded_append_to_callers_list, "while x > 0") in message


def test_list_of_known_length_held_by_an_attribute_sees_the_elements():
    def f(x):
        h = Holder()
        h.ys = []
        for v in x:
            h.ys.append(v * 2)
        return np.stack(h.ys)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(autograph.function(f)(x), f(x))


# autograph.stack ------------------------------------------------------------------

def test_stack_uses_the_framework_of_the_elements():
    assert isinstance(autograph.stack([np.float64(1.0), np.float64(2.0)]), np.ndarray)
    assert isinstance(autograph.stack([jnp.float64(1.0), jnp.float64(2.0)]), jax.Array)
    assert isinstance(autograph.stack([torch.tensor(1.0), torch.tensor(2.0)]), torch.Tensor)
    with pytest.raises(ValueError, match="need at least one array to stack"):
        autograph.stack([])


# jax.grad through list-append loops ------------------------------------------------

def prefix_sums(x):
    out = []
    s = 0.0
    for v in x:
        s = s + v
        out.append(s)
    return jnp.stack(out)


def weighted(x):
    ys = [x[0]]
    s = x[0] * 0
    for v in x:
        s = s * 0.5 + jnp.sin(v)
        if v > 0:
            ys.append(s * v)
        else:
            ys.append(-s)
    return jnp.stack(ys)


@pytest.mark.parametrize("f", [prefix_sums, weighted], ids=lambda f: f.__name__)
def test_jax_grad_through_appends(f):
    def loss(g):
        return lambda x: jnp.sum(g(x) ** 2)
    converted = jax.jit(jax.grad(loss(autograph.to_graph(f))))
    for x in ([1.0, 2.0, 3.0], [0.5, -1.5, 2.0, -0.25]):
        x = jnp.asarray(x)
        np.testing.assert_allclose(converted(x), jax.grad(loss(f))(x), rtol=1e-12)
