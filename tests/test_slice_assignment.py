"""Slice and multi-index assignment (`r[1:4] = x`, `x[0:n:2] *= 2`,
`r[1, 1:3] = v`, `r[..., 0] = c`), and assignment through a mask or an
index array (`y[y < 0] = 0`, `out[idx.astype(int)] = v`, `out[perm[k]] =
v`, `b[self.pos] = v`), is a functional update in converted code, as
`x[i] = v` is: under `jax.jit` it is `.at[...].set(...)` (before: "JAX
arrays are immutable"), with the numpy tracer an update of a symbolic or
concrete array (before: "a symbolic array has no concrete value"), and on
Python values, numpy arrays and torch tensors Python's own assignment.
Differential: each function, converted and run every way, equals the
original run eagerly."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import autograph


def place(x):
    r = np.zeros(6)
    r[1:4] = x
    return r


def double_every_other(x, n):
    x[0:n:2] *= 2
    return x


def row_and_column(x):
    r = np.zeros((3, 4))
    r[1, 1:3] = x
    r[..., 0] = 7.0
    r[::-1, 3] += 1.0
    return r


def tail(x, k):
    r = np.zeros(5)
    r[k:] = x[k:] * 3
    return r


def relu(x):
    y = x * 1.0
    y[y < 0] = 0.0
    return y


def clip_rows(x):
    y = x * 1.0
    y[y.sum(axis=1) > 1] = -1.0
    return y


def scatter(x, idx):
    out = np.zeros(5)
    out[idx.astype(int)] = x * 2
    out[np.arange(2) + 3] = 7.0
    return out


def permute(x, perm):
    out = np.zeros(4)
    for k in range(4):
        out[perm[k]] = x[k]
    return out


class Cursor:
    def __init__(self):
        self.pos = 1

    def write(self, x):
        b = np.zeros(4)
        b[self.pos] = x[0] + 1
        b[self.pos + 1] += x[1]
        return b


def swap(x, i, j):
    y = x * 1.0
    y[i], y[j] = y[j], y[i]
    return y


def bubble_sort(x):
    y = x * 1.0
    n = y.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if y[j] > y[j + 1]:
                y[j], y[j + 1] = y[j + 1], y[j]
    return y


def spread(x):
    z = np.zeros(5) + x[1]
    z[np.arange(1, 3)] += x[0] * 2
    z[np.arange(3, 5)] = np.tanh(x[1])
    z[np.arange(0, 2)], z[4] = np.sin(x[:2]), np.cos(x[0])
    return z


CASES = [
    (place, lambda m: (m.ones(3),)),
    (double_every_other, lambda m: (m.arange(6.0), 5)),
    (row_and_column, lambda m: (m.ones(2),)),
    (tail, lambda m: (m.arange(5.0), 2)),
    (relu, lambda m: (m.asarray([1.0, -2.0, 3.0, -4.0]),)),
    (clip_rows, lambda m: (m.asarray([[1.0, 2.0], [0.0, 0.5], [3.0, -4.0]]),)),
    (scatter, lambda m: (m.asarray([1.0, 2.0]), m.asarray([0.0, 2.0]))),
    (permute, lambda m: (m.asarray([1.0, 2.0, 3.0, 4.0]), m.asarray([2, 0, 3, 1]))),
    (Cursor().write, lambda m: (m.asarray([5.0, 6.0]),)),
    (swap, lambda m: (m.asarray([3.0, 1.0, 2.0]), 0, 2)),
    (bubble_sort, lambda m: (m.asarray([3.0, 1.0, 2.0, 0.0]),)),
    (spread, lambda m: (m.asarray([0.5, -1.0]),)),
]


def _expected(f, make):
    return f(*[np.array(a) if isinstance(a, np.ndarray) else a for a in make(np)])


IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_python_values(f, make):
    np.testing.assert_array_equal(autograph.to_graph(f)(*make(np)), _expected(f, make))


IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_numpy_tracer(f, make):
    args = [np.int64(a) if type(a) is int else a for a in make(np)]
    np.testing.assert_array_equal(autograph.function(f)(*args), _expected(f, make))


def _jnp_version(f):
    # The same function over jnp.zeros: its globals' `np` is jax.numpy.
    import types
    if type(f) is types.MethodType:
        return types.MethodType(_jnp_version(f.__func__), f.__self__)
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_jax_jit(f, make):
    g = _jnp_version(f)
    static = [i for i, a in enumerate(make(np)) if type(a) is int]  # a slice bound: static in JAX
    staged = jax.jit(autograph.to_graph(g), static_argnums=static)
    np.testing.assert_allclose(np.asarray(staged(*make(jnp))), _expected(f, make))


def test_torch_compile_and_export():
    def update(x):
        r = torch.zeros(3, 4)
        r[1, 1:3] = x
        r[..., 0] = 7.0
        r[0:2, 3] += x.sum()
        r[r > 6.5] = -1.0
        return r
    expected = update(torch.ones(2))
    converted = autograph.to_graph(update)
    torch.testing.assert_close(torch.compile(converted, fullgraph=True, backend="eager")(torch.ones(2)), expected)

    class Module(torch.nn.Module):
        def forward(self, x):
            return converted(x)
    exported = torch.export.export(Module(), (torch.ones(2),), strict=False).module()
    torch.testing.assert_close(exported(torch.ones(2)), expected)


def test_a_traced_slice_bound_with_the_numpy_tracer():
    # Which elements `x[0:n:2]` selects is known only when the graph runs.
    staged = autograph.function(double_every_other)
    for n in (5, 2, 0):
        np.testing.assert_array_equal(staged(np.arange(6.0), np.int64(n)), double_every_other(np.arange(6.0), n))
    assert staged.trace_count == 1


def test_to_code_writes_the_slice_as_python():
    code = autograph.to_code(double_every_other)
    assert "    x[0:n:2] *= 2\n" in code
    compile(code, "<to_code>", "exec")


def test_a_local_named_slice_leaves_the_assignment_as_written():
    def shadows(x):
        slice = 2
        x[0:slice] = 0.0
        return x
    assert "x[0:slice] = 0.0" in autograph.to_code(shadows)
    np.testing.assert_array_equal(autograph.to_graph(shadows)(np.ones(3)), [0.0, 0.0, 1.0])


def swap_rows(a, i, j):
    b = a * 1.0
    b[[i, j]] = b[[j, i]]
    return b


def test_a_list_index_with_the_numpy_tracer():
    # (jax refuses a list as an index, `b[[j, i]]`, in eager code too: it asks for an array.)
    a = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(autograph.function(swap_rows)(a, np.int64(0), np.int64(2)), swap_rows(a, 0, 2))


def test_to_code_assigns_the_values_before_the_items():
    assert "    item, item_1 = (y[j], y[i])\n    y[i] = item\n    y[j] = item_1\n" in autograph.to_code(swap)
    code = autograph.to_code(spread)
    assert ("    index = ag__.call(np.arange)(1, 3)\n    z[index] += x[0] * 2\n"
            "    item = ag__.call(np.tanh)(x[1])\n    z[ag__.call(np.arange)(3, 5)] = item\n") in code


def test_items_of_a_name_that_may_be_unbound_raise_pythons_error():
    def maybe(c):
        if c:
            y = [1, 2]
        y[0], y[1] = 3, 4
        return y
    assert autograph.to_graph(maybe)(True) == [3, 4]
    with pytest.raises(UnboundLocalError):
        autograph.to_graph(maybe)(False)
