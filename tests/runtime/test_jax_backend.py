"""The JAX backend, through real `jax.jit`, `jax.grad` and `jax.vmap` of
functions converted by `autograph.to_graph`.

Each traced result is compared with the unconverted function run eagerly
on the same concrete values (plain Python control flow on jax arrays)."""

import inspect

import numpy
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from autograph.runtime.tracer.errors import (  # noqa: E402
    BranchMismatchError,
    LoopStateError,
    TracingError,
    UndefinedOutputError,
)

import autograph  # noqa: E402

jax.config.update("jax_enable_x64", True)


def jit(f):
    return jax.jit(autograph.to_graph(f))


def primitives(f, *args):
    """The names of the primitives in the jaxpr of to_graph(f) (nested too)."""
    names = set()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            names.add(eqn.primitive.name)
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    inner = getattr(sub, "jaxpr", None)
                    if inner is not None:
                        walk(getattr(inner, "jaxpr", inner))
    walk(jax.make_jaxpr(autograph.to_graph(f))(*args).jaxpr)
    return names


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def assert_same(expected, actual):
    expected = jax.tree_util.tree_map(numpy.asarray, expected)
    actual = jax.tree_util.tree_map(numpy.asarray, actual)
    assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual)
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)):
        assert e.shape == a.shape
        numpy.testing.assert_allclose(a, e, rtol=1e-12)


# if ------------------------------------------------------------------------

def relu_or_square(x):
    if x.sum() > 0:
        y = x * x
    else:
        y = -x
    return y


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_small_smooth_if_becomes_select(sign):
    x = jnp.arange(3.0) * sign
    assert_same(relu_or_square(x), jit(relu_or_square)(x))
    assert "select_n" in primitives(relu_or_square, x)
    assert "cond" not in primitives(relu_or_square, x)


def log_or_zero(x):
    if x > 0:
        y = jnp.log(x)
    else:
        y = 0.0
    return y


@pytest.mark.parametrize("x", [2.0, -1.0, 0.0])
def test_a_branch_that_can_give_nan_gradients_is_selected_through_a_stop_gradient(x):
    # With a plain select, jax.grad through the log not taken would give NaN
    # at x <= 0: the log reads x through a stop_gradient where x <= 0.
    assert "cond" not in primitives(log_or_zero, 1.0)
    assert "stop_gradient" in primitives(log_or_zero, 1.0)
    assert_same(log_or_zero(jnp.asarray(x)), jit(log_or_zero)(x))
    assert_same(jax.grad(log_or_zero)(jnp.asarray(x)), jax.jit(jax.grad(autograph.to_graph(log_or_zero)))(x))
    assert_same(jax.grad(log_or_zero)(jnp.asarray(x)), jax.grad(jax.jit(autograph.to_graph(log_or_zero)))(x))


def big_branches(x):
    if x.sum() > 0:
        x = x * 1.5 + 1.0
    else:
        x = x - 1.0
    return x


def test_large_branches_stay_lax_cond():
    # 3 operations on 40 elements: more than SELECT_MAX_ELEMENTS (64) to compute both ways.
    assert "cond" in primitives(big_branches, jnp.ones(40))
    assert "cond" not in primitives(big_branches, jnp.ones(20))
    for sign in (1.0, -1.0):
        x = jnp.arange(40.0) * sign
        assert_same(big_branches(x), jit(big_branches)(x))


def equations(f, *args):
    """Equations of jax.make_jaxpr(f), nested jaxprs included."""
    def count(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            total += 1
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    inner = sub if hasattr(sub, "eqns") else getattr(sub, "jaxpr", None)
                    if inner is not None and hasattr(inner, "eqns"):
                        total += count(inner)
        return total
    return count(jax.make_jaxpr(f)(*args).jaxpr)


def early_return(x):
    if x > 0:
        return x * 2
    return -x


@pytest.mark.parametrize("x", [3.0, -3.0])
def test_return_in_traced_if(x):
    assert_same(early_return(jnp.asarray(x)), jit(early_return)(x))


def same_python_number_in_both_branches(x):
    if x > 0:
        n = 3
        y = x
    else:
        n = 3
        y = -x
    for _ in range(n):  # n is still the Python int 3 after the traced if
        y = y + 1
    return y, n


def test_python_numbers_equal_in_both_branches_stay_python():
    y, n = jit(same_python_number_in_both_branches)(-2.0)
    assert float(y) == 5.0 and int(n) == 3
    assert "while" not in primitives(same_python_number_in_both_branches, 1.0)


def number_meets_array(x):
    if x.sum() > 0:
        y = 0
    else:
        y = x
    return y


def test_python_number_takes_the_other_branch_dtype_and_shape():
    x = jnp.array([-1.0, -2.0], jnp.float32)
    result = jit(number_meets_array)(x)
    assert result.dtype == jnp.float32 and result.shape == (2,)
    assert_same(number_meets_array(x), result)
    assert_same(jnp.zeros(2, jnp.float32), jit(number_meets_array)(-x))


def conditional_expression_and_logic(x):
    y = x * 2 if x > 1 else x - 1
    ok = x > 0 and x < 10
    either = x < -5 or x > 5
    return y, ok, either, not x > 2


@pytest.mark.parametrize("x", [-7.0, 0.5, 3.0, 11.0])
def test_conditional_expressions_and_boolean_operators(x):
    assert_same(conditional_expression_and_logic(jnp.asarray(x)),
                jit(conditional_expression_and_logic)(x))


# while ---------------------------------------------------------------------

def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@pytest.mark.parametrize("n", [1, 6, 27])
def test_while_becomes_lax_while_loop(n):
    assert int(jit(collatz_steps)(n)) == collatz_steps(n)
    assert "while" in primitives(collatz_steps, 6)


def widening_counter(x):
    t = 0
    while t < x:
        t = t + 0.75
    return t


def test_loop_state_from_a_python_int_widens_to_float():
    assert float(jit(widening_counter)(2.0)) == widening_counter(2.0)


def return_inside_while(x):
    i = 0
    while i < 10:
        if x * i > 20:
            return i
        i += 1
    return -1


@pytest.mark.parametrize("x", [3.0, 0.5])
def test_return_inside_traced_loop(x):
    assert int(jit(return_inside_while)(x)) == return_inside_while(x)


# for -----------------------------------------------------------------------

def cumulative_positive(x):
    total = 0.0
    for v in x:
        if v > 0:
            total = total + v * v
    return total


def test_for_over_traced_array_is_one_loop_and_differentiable():
    x = jnp.array([1.0, -2.0, 3.0])
    assert_same(cumulative_positive(x), jit(cumulative_positive)(x))
    assert "scan" in primitives(cumulative_positive, x)
    # The eager gradient of the original (Python control flow on concrete
    # values) against reverse mode through the converted loop, jitted.
    assert_same(jax.grad(cumulative_positive)(x),
                jax.jit(jax.grad(autograph.to_graph(cumulative_positive)))(x))


def sum_until_negative(x):
    total = 0.0
    for v in x:
        if v < 0:
            break
        total = total + v
    else:
        total = -total
    return total


@pytest.mark.parametrize("values", [[1.0, 2.0, -1.0, 5.0], [1.0, 2.0]])
def test_for_with_break_and_else_differentiable(values):
    x = jnp.array(values)
    assert_same(sum_until_negative(x), jit(sum_until_negative)(x))
    assert_same(jax.grad(sum_until_negative)(x),
                jax.jit(jax.grad(autograph.to_graph(sum_until_negative)))(x))


def newton_sqrt(a):
    x = a
    while jnp.abs(x * x - a) > 1e-9:
        x = 0.5 * (x + a / x)
    return x


def newton_sqrt_lax(a):
    return jax.lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-9, lambda x: 0.5 * (x + a / x), a)


def test_while_jaxpr_has_no_dead_equations():
    # The loop test evaluated to find that it is traced leaves nothing behind.
    assert equations(autograph.to_graph(newton_sqrt), 2.0) == equations(newton_sqrt_lax, 2.0) == 8
    assert float(jit(newton_sqrt)(2.0)) == float(newton_sqrt(jnp.asarray(2.0)))


TESTS_RUN = []


def counted_test(x):
    TESTS_RUN.append(1)
    return x > 1.0


def halve_while_large(x):
    while counted_test(x):
        x = x / 2
    return x


def test_while_test_runs_once_before_staging():
    # Once in Python, in the inlined loop, to find that it is traced: the
    # loop hands that value over to while_stmt, which does not run it again.
    TESTS_RUN.clear()
    jax.make_jaxpr(autograph.to_graph(halve_while_large))(5.0)
    assert len(TESTS_RUN) == 1
    assert float(jit(halve_while_large)(5.0)) == float(halve_while_large(jnp.asarray(5.0)))


def retried_branch(x):
    if x > 0:
        y = 1        # a Python int: the branches are traced again with y as float64
    else:
        y = x * 2.0
    return y


def test_retried_cond_leaves_nothing_behind():
    assert equations(autograph.to_graph(retried_branch), 1.0) <= 3
    for x in (1.0, -1.0):
        assert_same(retried_branch(jnp.asarray(x)), jit(retried_branch)(x))


def clipped_sum(x, limit):
    total = 0.0
    for v in x:
        if v > 0:
            total += v * v
        else:
            total -= v
        if total > limit:
            break
    return total


def first_below(x, t):
    for i, v in enumerate(x):
        if v < t:
            return i
    return -1


@pytest.mark.parametrize("limit", [5.0, 100.0])
def test_for_with_break_stops_early_and_every_grad_agrees(limit):
    x = jnp.array([1.0, -2.0, 3.0, 4.0, 0.5])
    converted = autograph.to_graph(clipped_sum)
    assert "scan" not in primitives(clipped_sum, x, limit)   # a while over the index
    assert_same(clipped_sum(x, limit), jax.jit(converted)(x, limit))
    expected = jax.grad(clipped_sum, argnums=(0, 1))(x, limit)
    assert_same(expected, jax.jit(jax.grad(converted, argnums=(0, 1)))(x, limit))
    assert_same(expected, jax.grad(jax.jit(converted), argnums=(0, 1))(x, limit))
    assert_same(jax.jacfwd(clipped_sum)(x, limit), jax.jacfwd(jax.jit(converted))(x, limit))
    xs = jnp.stack([x, -x])
    assert_same(jnp.stack([jax.grad(clipped_sum)(r, limit) for r in xs]),
                jax.vmap(jax.grad(jax.jit(converted)), (0, None))(xs, limit))


@pytest.mark.parametrize("t", [-5.0, 0.0, 2.5])
def test_for_with_return_is_one_while_with_one_counter(t):
    x = jnp.array([1.0, -2.0, 3.0, 4.0])
    assert int(jit(first_below)(x, t)) == first_below(x, t)
    names = primitives(first_below, x, t)
    assert "while" in names and "scan" not in names and "cond" not in names
    jaxpr = jax.make_jaxpr(autograph.to_graph(first_below))(x, t).jaxpr
    (loop,) = [e for e in jaxpr.eqns if e.primitive.name == "while"]
    # the index, the return flag and the returned value
    assert len(loop.outvars) == 3


def decay_sum(x):
    acc = 0.0
    for i in range(len(x)):
        autograph.set_loop_options(unroll=False)
        acc = 0.5 * acc + x[i]
    return acc


def decay_sum_unrolled(x):
    acc = 0.0
    for i in range(len(x)):
        autograph.set_loop_options(unroll=True)
        acc = 0.5 * acc + x[i]
    return acc


def test_static_range_with_unroll_false_is_one_loop():
    x = jnp.arange(64.0)
    assert "scan" in primitives(decay_sum, x)
    assert equations(autograph.to_graph(decay_sum), x) < 20
    assert_same(decay_sum_unrolled(x), jit(decay_sum)(x))
    assert_same(jax.grad(decay_sum_unrolled)(x), jax.jit(jax.grad(autograph.to_graph(decay_sum)))(x))
    assert "scan" not in primitives(decay_sum_unrolled, x)   # unroll=True unrolls, as Python runs it


def test_static_range_with_unroll_false_stages_its_first_iteration_too():
    # acc starts as a Python number: the first iteration, which makes it a
    # JAX value, is staged with the rest, as the hand-written fori_loop.
    x = jnp.arange(64.0)
    hand_written = jax.lax.fori_loop(0, 64, lambda i, acc: 0.5 * acc + x[i], 0.0)
    assert equations(autograph.to_graph(decay_sum), x) == equations(
        lambda x: jax.lax.fori_loop(0, 64, lambda i, acc: 0.5 * acc + x[i], 0.0), x)
    assert_same(hand_written, jit(decay_sum)(x))


def shape_sum(x):
    n = 0
    for _ in range(3):
        autograph.set_loop_options(unroll=False)
        n += x.shape[0]   # reads a traced array, gives a Python int
    return jnp.zeros(n) + x[0]


def late_reads(x):
    acc = 0.0
    for i in range(4):
        autograph.set_loop_options(unroll=False)
        if i >= 2:      # Python at the first iteration: acc stays a Python float
            acc = acc + x[i]
    return acc


def counts_calls(x, stats):
    acc = 0.0
    for i in range(4):
        autograph.set_loop_options(unroll=False)
        stats["calls"] = stats["calls"] + 1
        acc = 0.5 * acc + x[i]
    return acc, stats["calls"]


def prints_each(x):
    acc = 0.0
    for i in range(3):
        autograph.set_loop_options(unroll=False)
        print("item", x[i])
        acc = acc + x[i]
    return acc


def test_unroll_false_first_iteration_keeps_python_semantics(capfd):
    x = jnp.arange(1.0, 5.0)
    assert_same(shape_sum(x), jit(shape_sum)(x))     # n stays a Python int: a static shape
    assert_same(late_reads(x), jit(late_reads)(x))
    assert_same(counts_calls(x, {"calls": 0}), jit(lambda x: counts_calls(x, {"calls": 0}))(x))
    assert_same(prints_each(x), jax.block_until_ready(jit(prints_each)(x)))
    out = capfd.readouterr().out
    assert out.count("item") == 6 and "item 3.0" in out   # 3 eagerly, 3 when the staged loop runs


def strided_with_break(x, n):
    total = jnp.zeros(())
    for i in range(10, 2, -3):
        autograph.set_loop_options(unroll=False)
        if i < n:
            break
        total = total + x[i]
    return total, i


@pytest.mark.parametrize("n", [0, 5, 8, 20])
def test_static_range_with_unroll_false_keeps_the_range_and_break(n):
    x = jnp.arange(11.0)
    assert_same(strided_with_break(x, n), jit(strided_with_break)(x, n))


def python_only_loop(n):
    total = 0
    for i in range(n):
        autograph.set_loop_options(unroll=False)
        total += i
    return total


def test_unroll_false_on_python_values_runs_python():
    assert autograph.to_graph(python_only_loop)(5) == 10
    assert type(autograph.to_graph(python_only_loop)(5)) is int


def triangular(n):
    total = 0
    for k in range(n):
        total += k
    return total, len(range(1, n, 2))


@pytest.mark.parametrize("n", [0, 1, 7])
def test_range_of_a_traced_bound(n):
    assert_same(triangular(n), jit(triangular)(n))


def enumerate_and_zip(x, y):
    best = -1
    for i, v in enumerate(x):
        if v > 2:
            best = i
    acc = 0.0
    for a, b in zip(x, y):
        acc = acc + a * b
    return best, acc


def test_enumerate_and_zip_of_traced_arrays():
    x, y = jnp.array([1.0, 3.0, 0.0, 5.0]), jnp.array([2.0, 2.0, 2.0])
    assert_same(enumerate_and_zip(x, y), jit(enumerate_and_zip)(x, y))


# other statements and builtins ---------------------------------------------

def item_updates(x):
    y = jnp.zeros(3)
    for i in range(3):
        y[i] = x[i] * 2
    y[0] += 1
    return y


def test_item_assignment_on_tracers_is_functional():
    x = jnp.array([1.0, 2.0, 3.0])
    assert_same(jnp.array([3.0, 4.0, 6.0]), jit(item_updates)(x))


def uses_builtins(x, v):
    return (int(v), float(v > 0), bool(v), min(v, 1.5), max(v, 1.5, -v), sum(x), any(x > 2),
            all(x > 0), abs(v))


@pytest.mark.parametrize("v", [-2.5, 0.0, 2.25])
def test_builtins_on_tracers(v):
    x = jnp.array([1.0, 3.0])
    expected = uses_builtins(x, jnp.asarray(v))
    assert_same(expected, jit(uses_builtins)(x, v))


def prints_and_asserts(x):
    print("x =", x, sep=" ", end="!\n")
    assert x > 0, "x must be positive"
    return x + 1


def test_print_and_assert_run_when_the_graph_runs(capfd):
    f = jit(prints_and_asserts)
    assert float(f(2.0)) == 3.0
    jax.effects_barrier()
    assert capfd.readouterr().out == "x = 2.0!\n"
    f(5.0)
    jax.effects_barrier()
    assert capfd.readouterr().out == "x = 5.0!\n"
    with pytest.raises(Exception, match="x must be positive"):
        f(-1.0).block_until_ready()
        jax.effects_barrier()


def data_dependent_while(x):
    while x < 100:
        x = x * 3
    return x


def test_concrete_values_run_python_so_eager_grad_works():
    # Under an eager jax.grad the condition's value is known: the loop runs in
    # Python, as the unconverted function does, and reverse mode works.
    g = jax.grad(autograph.to_graph(data_dependent_while))
    assert float(g(2.0)) == float(jax.grad(data_dependent_while)(2.0)) == 81.0


def test_vmap_of_converted_if():
    xs = jnp.array([[1.0, 2.0], [-1.0, -3.0]])
    assert_same(jnp.stack([relu_or_square(x) for x in xs]),
                jax.vmap(autograph.to_graph(relu_or_square))(xs))


# errors name the variable, the construct and the user's line ---------------

def dtype_mismatch(x):
    if x > 0:
        y = jnp.int32(1)
    else:
        y = x
    return y


def test_branch_dtype_mismatch_error():
    with pytest.raises(BranchMismatchError) as info:
        jit(dtype_mismatch)(jnp.float64(1.0))
    message = str(info.value)
    line = line_of(dtype_mismatch, "if x > 0")
    assert "'y' is int32[] in the true branch but float64[] in the false branch" in message
    assert f"{__file__}:{line}" in message


def one_branch_only(x):
    if x > 0:
        z = x
    return z


def test_variable_defined_in_one_branch_error():
    with pytest.raises(UndefinedOutputError, match="'z' is defined in the true branch but not in "
                       "the false branch"):
        jit(one_branch_only)(1.0)


def shape_changes(x):
    y = jnp.zeros(2)
    while x > 0:
        y = jnp.concatenate([y, y])
        x = x - 1
    return y


def test_loop_shape_change_error():
    with pytest.raises(LoopStateError) as info:
        jit(shape_changes)(3)
    line = line_of(shape_changes, "while x > 0")
    assert "'y' is float64[2] before an iteration" in str(info.value)
    assert f"{__file__}:{line}" in str(info.value)


def range_in_python(n):
    return list(range(n))


def test_iterating_a_traced_range_in_python_is_an_error():
    with pytest.raises(TracingError, match="cannot iterate in Python over a range whose bound "
                       "is traced by JAX"):
        jit(range_in_python)(3)


def non_scalar_condition(x):
    if x > 0:
        x = -x
    return x


def test_non_scalar_condition_raises_as_unconverted_code_does():
    with pytest.raises(ValueError, match="truth value of an array with more than one element is "
                       "ambiguous"):
        jit(non_scalar_condition)(jnp.ones(2))


# A Python float that stays one through a staged loop ---------------------------

def _compound(n):
    s = 1.0
    i = 0
    while i < n:
        s = s * 1.0000001
        i += 1
    return s


def _accumulate(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def test_python_float_carried_without_x64_is_refused_not_computed_in_float32():
    # Before, jax.jit gave 1.0001192 (float32) where Python gives 1.0001000049952244.
    expected = _compound(jnp.int32(1000))
    with jax.enable_x64(False):
        assert _compound(jnp.int32(1000)) == expected
        with pytest.raises(LoopStateError) as info:
            jit(_compound)(jnp.int32(1000))
    message = str(info.value)
    line = inspect.getsourcelines(_compound)[1] + 3
    assert "'s' is a Python float (1.0)" in message and f"{__file__}:{line}" in message
    assert "jax_enable_x64" in message and "s = np.float32(1.0)" in message
    # With float64, or started as the array the message says, the loop is exact.
    assert jit(_compound)(jnp.int32(1000)) == expected


def test_python_float_that_meets_a_float32_array_in_the_loop_is_carried():
    x = jnp.arange(4, dtype=jnp.float32)
    with jax.enable_x64(False):
        expected, actual = _accumulate(x, 3), jit(_accumulate)(x, 3)
        assert actual.dtype == expected.dtype == jnp.float32 and actual == expected
