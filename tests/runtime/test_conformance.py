"""One table of programs through every staging backend.

Each program is written once, as a function of `xp`, the array namespace
(numpy, jax.numpy, torch), and returns the function to convert. Every
backend row (`BACKENDS`) knows how to make its inputs from numpy values, run
a converted function traced (the numpy tracer through `autograph.function`,
JAX through `jax.jit(autograph.to_graph(f))`, PyTorch through a non-strict
`torch.export.export` of a module calling the converted function, whose
program must have no dead nodes) and compare the result with the
unconverted function run eagerly on the same concrete values. Each program runs on argument sets that take every way
through its conditions, all through one trace (one graph, one jitted
function, one exported program).

Each error program must raise the same error in every backend, and its
message must name the variable and the user's line.

A new backend passes by adding one row to `BACKENDS`.
"""

import inspect

import numpy as np
import pytest
from autograph.runtime.errors import BranchMismatchError, LoopStateError, TracingError, UndefinedOutputError

import autograph

# Backends ---------------------------------------------------------------------


class NumpyTracer:
    name = "numpy"
    xp = np

    def make(self, value):
        return value

    def run(self, f, argsets):
        traced = autograph.function(f)
        results = [traced(*args) for args in argsets]
        assert traced.trace_count == 1
        return results

    def to_numpy(self, value):
        return np.asarray(value)


class Jax:
    name = "jax"

    def __init__(self):
        jax = pytest.importorskip("jax")
        jax.config.update("jax_enable_x64", True)
        self.jax, self.xp = jax, pytest.importorskip("jax.numpy")

    def make(self, value):
        return self.xp.asarray(value)

    def run(self, f, argsets):
        jitted = self.jax.jit(autograph.to_graph(f))
        return [jitted(*args) for args in argsets]

    def to_numpy(self, value):
        return np.asarray(value)


class Torch:
    name = "torch"

    def __init__(self):
        self.xp = pytest.importorskip("torch")
        from tests.runtime.exported_graphs import Converted
        self.module = Converted

    def make(self, value):
        return self.xp.tensor(value)

    def run(self, f, argsets):
        self.exported = exported = self.xp.export.export(self.module(f), tuple(argsets[0]))
        program = exported.module()
        return [program(*args) for args in argsets]

    def to_numpy(self, value):
        if isinstance(value, self.xp.Tensor):
            return value.numpy()
        return np.asarray(value)


BACKENDS = [NumpyTracer, Jax, Torch]


@pytest.fixture(scope="module", params=BACKENDS, ids=lambda b: b.name)
def backend(request):
    return request.param()


def assert_same(backend, expected, actual, path="result"):
    """Same structure, and leaves of the same dtype kind, shape and value. A
    Python number in the eager result may come out of a staged statement
    with the dtype of the array it meets (the documented widening)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (path, actual)
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(backend, e, a, f"{path}[{i}]")
        return
    e, a = backend.to_numpy(expected), backend.to_numpy(actual)
    if type(expected) in (bool, int, float):
        assert a.shape == (), (path, expected, actual)
    else:
        assert (a.shape, a.dtype.kind) == (e.shape, e.dtype.kind), (path, expected, actual)
    np.testing.assert_allclose(a, e, rtol=1e-12, err_msg=path)


# Programs ---------------------------------------------------------------------

def if_elif_else(xp):
    def f(x):
        if x > 1:
            y = x * 2
        elif x > 0:
            y = x + 10
        else:
            y = -x
        return y
    return f


def conditional_expression(xp):
    def f(x):
        return x * 2 if x > 0 else x - 1
    return f


def and_or_not(xp):
    def f(x, y):
        if x > 0 and y > 0 or not x > -1:
            z = x + y
        else:
            z = x - y
        return z
    return f


def and_or_of_comparisons(xp):
    # The right-hand sides compare names and constants: on traced booleans
    # the backend's logical and/or, not a cond (logical_expressions.py).
    def f(x, y):
        n = 0
        while x > n and n < y:
            n = n + 1
        m = n
        while m < 2 or m < y:
            m = m + 1
        return n, m, x > 0 and y > 0, x < 0 or y == 1
    return f


def while_loop(xp):
    def f(x):
        n = 0
        while x > 1:
            x = x / 2
            n += 1
        return x, n
    return f


def for_over_range(xp):
    def f(n, x):
        s = x
        for i in range(n):
            s = s * 2 + i
        return s
    return f


def for_over_array(xp):
    def f(x):
        s = 0
        for v in x:
            s = s + v * v
        return s
    return f


def for_over_enumerate(xp):
    def f(x):
        s = 0.0
        for i, v in enumerate(x):
            s = s + i * v
        return s
    return f


def for_over_zip(xp):
    def f(x, y):
        s = 0.0
        for a, b in zip(x, y):  # noqa: B905 - a program as users write it
            s = s + a * b
        return s
    return f


def break_in_loop(xp):
    def f(x):
        s = 0.0
        for v in x:
            if v < 0:
                break
            s = s + v
        return s
    return f


def continue_in_loop(xp):
    def f(x):
        s = 0.0
        for v in x:
            if v < 0:
                continue
            s = s + v
        return s
    return f


def break_in_while(xp):
    def f(x):
        n = 0
        while n < 10:
            if x * n > 20:
                break
            n += 1
        return n
    return f


def return_in_loop(xp):
    def f(x):
        for v in x:
            if v < 0:
                return v
        return x[0] * 0
    return f


def return_in_while(xp):
    def f(x):
        n = 0
        while n < 10:
            if x * n > 20:
                return n
            n += 1
        return -1
    return f


def return_in_if(xp):
    def f(x):
        if x > 0:
            return x * 3
        return -x
    return f


def nested_loops(xp):
    def f(n, x):
        s = x * 0
        for i in range(n):
            j = 0
            while j < i:
                s = s + x
                j += 1
        return s
    return f


def python_number_widening(xp):
    def f(x):
        if x > 0:
            y = 0
        else:
            y = x
        k = 0
        while k < x:
            k = k + 0.5
        return y, k
    return f


def item_updates(xp):
    def f(x):
        y = x * 1
        for i in range(3):
            if y[i] < 0:
                y[i] = -y[i]
        return y
    return f


# What staged blocks change in place, names first bound in loops, chained
# comparisons (issue 10): closures see the staged value, items and
# attributes written in branches merge, objects' state is carried.

def closure_reads_while_counter(xp):
    def f(n):
        i = 0

        def g():
            return i + 2
        s = 0
        while i < n:
            s = s * 10 + g()
            i += 1
        return s
    return f


def closure_reads_for_counter(xp):
    def f(x):
        i = 0

        def g():
            return i * 2.0
        s = x[0] * 0
        for v in x:
            s = s + v * g()
            i += 1
        return s
    return f


def closure_reads_branch_value(xp):
    def f(x):
        k = 0.0

        def g():
            return k * 10
        if x > 0:
            k = x + 1
        else:
            k = x - 1
        return g()
    return f


def nonlocal_written_by_a_helper(xp):
    def f(n, x):
        total = x * 0

        def add(v):
            nonlocal total
            total = total + v
        i = 0
        while i < n:
            add(x)
            i += 1
        if total > 2:
            add(1.0)
        else:
            add(-1.0)
        return total
    return f


def items_written_in_branches(xp):
    def f(x):
        d = {"a": x}
        items = [x, x * 0]
        nested = {"inner": {"b": x * 0}}
        alias = items
        if d["a"] > 1:
            d["b"] = x * 2
            items[1] = x + 1
            nested["inner"]["b"] = x
        else:
            d["b"] = -x
            items[1] = x - 1
            nested["inner"]["b"] = -x
        return d["a"], d["b"], alias[1], nested["inner"]["b"], alias is items
    return f


class Counter:
    """Stands for a `tf.Variable`: its method changes its state."""

    def __init__(self, value):
        self.value = value

    def assign_add(self, delta):
        self.value = self.value + delta


def object_updated_in_branches(xp):
    def f(x):
        v = Counter(x * 0)
        if x > 1:
            v.assign_add(x)
        else:
            v.assign_add(-x)
        return v.value
    return f


def set_by_sign(v, d, x):
    if x > 0:
        v.value = x
    else:
        v.value = -x
    if x > 1:
        d["b"] = x  # an existing key, set in one branch only
    return x


def changed_in_a_called_function(xp):
    def f(x):
        v = Counter(x * 0)
        d = {"b": x * 0}
        set_by_sign(v, d, x)
        return v.value, d["b"]
    return f


def object_updated_in_loops(xp):
    def f(n, x):
        v = Counter(x * 0)
        i = 0
        while i < n:
            v.assign_add(x)
            i += 1
        w = Counter(x * 0)
        while w.value < n:
            w.assign_add(1.5)
        return v.value, w.value
    return f


class SlottedCounter:
    __slots__ = ("value",)   # staging sees slots as it sees a __dict__


def slotted_object_updated(xp):
    def f(n, x):
        v = SlottedCounter()
        v.value = x * 0
        if x > 1:
            v.value = v.value + x
        else:
            v.value = v.value - x
        i = 0
        while i < n:
            v.value = v.value + 1.5
            i += 1
        return v.value
    return f


def names_first_bound_in_loops(xp):
    def f(n, x):
        i = 0
        while i < n:
            i = n + 1
            j = x * i
        for v in xp.stack([x, x + 1]):
            last = v * 2
        o = Counter(x)
        k = 0
        while k < n:
            o.total = o.value * k
            k += 1
        return j, last, o.total
    return f


def item_first_set_in_loop(xp):
    def f(n, x):
        d = {"a": x}
        i = 0
        while i < n:
            d["b"] = d["a"] * i
            i += 1
        return d["a"], d["b"]
    return f


def dicts_in_another_order(xp):
    def f(x):
        if x > 0:
            d = {"a": x, "b": 2 * x}
        else:
            d = {"b": 3 * x, "a": -x}
        return d["a"], d["b"]
    return f


def containers_rebound_in_loop(xp):
    def f(n, x):
        pair = [x, x * 0]
        d = {"total": x * 0}
        i = 0
        while i < n:
            pair = [pair[0] + 1, pair[1] + pair[0]]
            d = {"total": d["total"] + i}
            i += 1
        return pair, d["total"]
    return f


def chained_comparisons(xp):
    def f(x, y):
        return 0 <= x < y, x == y == x, -1 < x < y < 2 < x
    return f



def defined_in_loop_only(xp):
    def f(x):
        while x > 0:
            x = x - 1
            j = x + 1
        return x, j
    return f


# Lists appended to in staged loops (issue 11): the loop carries their
# elements as rows of one array, the list gets them back after it.

def prefix_sums(xp):
    def f(x):
        out = []
        s = 0.0
        for v in x:
            s = s + v
            out.append(s)
        return xp.stack(out)
    return f


def append_in_both_branches(xp):
    def f(x):
        out = []
        for v in x:
            if v > 1:
                out.append(v * 2)
            else:
                out.append(-v)
        return xp.stack(out)
    return f


def list_read_after_loop(xp):
    def f(x):
        ys = [x[0] * 0]
        for v in x:
            ys.append(v * v)
            ys.append(v + 1)
        t = x[0] * 0
        for y in ys:
            t = t + y
        return len(ys), ys[-1], ys[1], ys[0], t
    return f


def list_length_read_in_loop(xp):
    def f(x):
        ys = []
        n = 0
        for v in x:
            ys.append(v)
            n = n + len(ys)
            if ys:
                n = n + 1
        return n, len(ys)
    return f


def list_read_at_traced_index(xp):
    # `ys[k]` of a list of one type, `k` traced: the rows stacked, read at `k`.
    def f(x, k):
        ys = []
        for v in x:
            ys.append(v * 2)
        return ys[k], ys[-k - 1]
    return f


def python_numbers_appended(xp):
    def f(x):
        ys = []
        for _row in x:
            ys.append(0)
        return len(ys), xp.asarray(ys)
    return f


def stacked_by_autograph(xp):
    def f(x):
        ys = []
        for v in x:
            ys.append(v * 3)
        return autograph.stack(ys)
    return f


def nested_loops_append(xp):
    def f(x):
        ys = []
        n = 0
        for v in x:
            ys.append(v)
            for w in xp.stack([v, v * 2]):
                ys.append(w + 1)
                n = n + len(ys)
        return xp.stack(ys), n
    return f


def append_in_a_helper(xp):
    def f(x):
        ys = []

        def add(v):
            ys.append(v * 3)
        for v in x:
            add(v)
        return xp.stack(ys)
    return f


def numbers_updated_after_staged_statements(xp):
    """A variable that held a Python number, after a staged loop and `if`
    (and in the loop's body): `steps += 1` leaves `before` and `old` as they
    were, as with Python's ints."""
    def f(x):
        steps, before = 0, 0
        while x > 0:
            before = steps
            steps += 1
            x = x - 1.0
        if x < -0.25:
            steps *= 2
        old = steps
        steps += 1
        steps -= 3
        return before, old, steps
    return f


S, V = np.float64, np.array
SCALARS = [(S(2.0),), (S(0.5),), (S(-1.0),)]
VECTORS = [(V([1.0, 2.0, 3.0]),), (V([1.0, -2.0, 3.0]),), (V([-1.0, 2.0, -3.0]),)]
PAIRS = [(S(1.0), S(2.0)), (S(1.0), S(-2.0)), (S(-2.0), S(1.0)), (S(-0.5), S(-3.0))]
VECTOR_PAIRS = [(V([1.0, 2.0, 3.0]), V([4.0, -5.0, 6.0])), (V([0.5, 0.0, -1.0]), V([2.0, 2.0, 2.0]))]
COUNTS = [(np.int64(0), S(1.5)), (np.int64(3), S(1.5)), (np.int64(5), S(-2.0))]
POSITIVE_COUNTS = [(np.int64(1), S(1.5)), (np.int64(3), S(-2.0))]

PROGRAMS = [
    (if_elif_else, SCALARS),
    (conditional_expression, SCALARS),
    (and_or_not, PAIRS),
    (and_or_of_comparisons, PAIRS),
    (while_loop, [(S(37.0),), (S(0.5),)]),
    (for_over_range, COUNTS),
    (for_over_array, VECTORS),
    (for_over_enumerate, VECTORS),
    (for_over_zip, VECTOR_PAIRS),
    (break_in_loop, VECTORS),
    (continue_in_loop, VECTORS),
    (break_in_while, [(S(3.0),), (S(0.5),)]),
    (return_in_loop, VECTORS),
    (return_in_while, [(S(3.0),), (S(0.5),)]),
    (return_in_if, SCALARS),
    (nested_loops, COUNTS),
    (python_number_widening, SCALARS),
    (item_updates, VECTORS),
    (closure_reads_while_counter, [(np.int64(0),), (np.int64(1),), (np.int64(3),)]),
    (closure_reads_for_counter, VECTORS),
    (closure_reads_branch_value, SCALARS),
    (items_written_in_branches, SCALARS),
    (nonlocal_written_by_a_helper, COUNTS),
    (object_updated_in_branches, SCALARS),
    (changed_in_a_called_function, SCALARS),
    (object_updated_in_loops, COUNTS),
    (slotted_object_updated, COUNTS),
    (names_first_bound_in_loops, POSITIVE_COUNTS),
    (item_first_set_in_loop, POSITIVE_COUNTS),
    (containers_rebound_in_loop, COUNTS),
    (chained_comparisons, PAIRS),
    (dicts_in_another_order, SCALARS),
    (defined_in_loop_only, [(S(2.0),), (S(3.5),)]),
    (prefix_sums, VECTORS),
    (append_in_both_branches, VECTORS),
    (list_read_after_loop, VECTORS),
    (list_length_read_in_loop, VECTORS),
    (list_read_at_traced_index, [(V([1.0, 2.0, 3.0]), np.int64(0)), (V([1.0, 2.0, 3.0]), np.int64(2)),
                                 (V([1.0, 2.0, 3.0]), np.int64(-2))]),
    (python_numbers_appended, [(np.zeros((2, 0)),)]),
    (stacked_by_autograph, VECTORS),
    (nested_loops_append, VECTORS),
    (append_in_a_helper, VECTORS),
    (numbers_updated_after_staged_statements, SCALARS),
]

#: Programs whose unconverted form cannot run eagerly on JAX arrays (they
#: write items): their reference is the same program on numpy arrays.
WRITES_ITEMS = {item_updates}

#: Programs that compute values they never use (`items = [x, x * 0]`, whose
#: second item both branches replace; the `last` of all iterations but the
#: last of a loop over a tensor, which runs in Python): as the unconverted
#: function traced by torch would, their exported programs keep them.
COMPUTES_UNUSED_VALUES = {items_written_in_branches, changed_in_a_called_function, names_first_bound_in_loops}


@pytest.mark.parametrize("program, argsets", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_program(backend, program, argsets):
    argsets = [tuple(backend.make(a) for a in args) for args in argsets]
    f = program(backend.xp)
    if backend.name == "jax" and program in WRITES_ITEMS:
        expected = [program(np)(*(np.asarray(a) for a in args)) for args in argsets]
    else:
        expected = [f(*args) for args in argsets]
    for e, a in zip(expected, backend.run(f, argsets), strict=True):
        assert_same(backend, e, a)
    if backend.name == "torch" and program not in COMPUTES_UNUSED_VALUES:
        from tests.runtime.exported_graphs import dead_nodes
        assert dead_nodes(backend.exported) == []


# Errors -------------------------------------------------------------------------

def branch_dtype_mismatch(xp):
    def f(x):
        if x > 0:
            y = x > 1
        else:
            y = x
        return y
    return f


def branch_shape_mismatch(xp):
    def f(x):
        if x.sum() > 0:
            z = x[:2]
        else:
            z = x
        return z
    return f


def branch_structure_mismatch(xp):
    def f(x):
        if x > 0:
            y = (x, x)
        else:
            y = x
        return y
    return f


def defined_in_one_branch(xp):
    def f(x):
        if x > 0:
            z = x
        return z
    return f


def loop_dtype_change(xp):
    def f(n):
        y = n
        while y > 1:
            y = y / 2
        return y
    return f


def loop_shape_change(xp):
    def f(x, n):
        y = x
        while n > 0:
            y = y[1:]
            n = n - 1
        return y
    return f


def loop_python_value_change(xp):
    def f(x):
        mode = "start"
        while x > 0:
            mode = "running"
            x = x - 1
        return x, mode
    return f


def item_set_in_one_branch(xp):
    def f(x):
        d = {"a": x}
        if x > 0:
            d["b"] = x
        return d
    return f


def python_item_values_differ(xp):
    def f(x):
        d = {"k": 0}
        if x > 0:
            d["k"] = "positive"
        else:
            d["k"] = "negative"
        return x, d["k"]
    return f


def set_changed_differently(xp):
    def f(x):
        seen = {0}
        if x > 0:
            seen.add(1)
        else:
            seen.add(2)
        return x, sorted(seen)
    return f


def list_grown_in_loop(xp):
    def f(x):
        fns = []
        while x > 0:
            fns.append(lambda x=x: x)
            x = x - 1
        return fns[0]()
    return f


def python_object_first_bound_in_loop(xp):
    def f(x):
        while x > 0:
            label = "positive"
            x = x - 1
        return x, label
    return f


def return_string_in_branch(xp):
    def f(x):
        if x > 0:
            return "positive"
        return "other"
    return f


def list_popped_in_loop(xp):
    def f(x):
        ys = [x, x, x]
        while x > 0:
            ys.pop()
            x = x - 1
        return x, len(ys)
    return f


def list_elements_of_two_dtypes(xp):
    def f(x):
        ys = []
        while x > 0:
            ys.append(x)
            ys.append(x > 1)
            x = x - 1
        return x
    return f


def list_rebuilt_in_loop(xp):
    def f(x):
        ys = []
        while x > 0:
            ys = ys + [x]
            x = x - 1
        return x, len(ys)
    return f


def list_appended_in_one_branch(xp):
    def f(x):
        ys = [x]
        if x > 0:
            ys.append(x)
        return ys
    return f


def return_value_or_fall_off(xp):
    # The false branch falls off the function's end: it returns None, never
    # the value of `y` that the true branch reads.
    def f(x):
        y = x + 1
        if x > 0:
            y = y * 2
            return y
    return f


def number_out_of_range_of_the_other_branch(xp):
    def f(x):
        y = 300
        if x > 0:
            y = x
        return y
    return f


def number_out_of_range_entering_loop(xp):
    def f(x):
        y = 1e300
        while x > 0:
            y = x
            x = x - 1
        return y
    return f


def list_of_two_shapes_at_traced_index(xp):
    def f(x, k):
        ys = [x, x[:1]]
        return ys[k]
    return f


ERRORS = [
    (branch_dtype_mismatch, [S(1.0)], BranchMismatchError, "y", "if x > 0",
     "in the true branch but"),
    (branch_shape_mismatch, [V([1.0, 2.0, 3.0])], BranchMismatchError, "z", "if x.sum() > 0",
     "in the false branch"),
    (branch_structure_mismatch, [S(1.0)], BranchMismatchError, "y", "if x > 0",
     "has a different structure"),
    (defined_in_one_branch, [S(1.0)], UndefinedOutputError, "z", "if x > 0",
     "is defined in the true branch but not in the false branch"),
    (loop_dtype_change, [np.int64(9)], LoopStateError, "y", "while y > 1",
     "loop variables must keep their dtype and shape"),
    (loop_shape_change, [V([1.0, 2.0, 3.0]), np.int64(2)], LoopStateError, "y", "while n > 0",
     "loop variables must keep their dtype and shape"),
    (loop_python_value_change, [S(2.0)], LoopStateError, "mode", "while x > 0",
     "only numbers and"),
    (item_set_in_one_branch, [S(1.0)], UndefinedOutputError, "d['b']", "if x > 0",
     "is defined in the true branch but not in the false branch"),
    (python_item_values_differ, [S(1.0)], BranchMismatchError, "d['k']", "if x > 0",
     "Python values other than numbers must be the same in both branches"),
    (set_changed_differently, [S(1.0)], BranchMismatchError, "seen", "if x > 0",
     "Python values other than numbers must be the same in both branches"),
    (list_grown_in_loop, [S(2.0)], LoopStateError, "fns", "while x > 0",
     "can hold only numbers and"),
    (python_object_first_bound_in_loop, [S(2.0)], UndefinedOutputError, "label", "while x > 0",
     "only a number or an array can be first defined in a traced loop"),
    (return_string_in_branch, [S(1.0)], BranchMismatchError, "return", "if x > 0",
     "Python values other than numbers must be the same in both branches"),
    (list_popped_in_loop, [S(2.0)], LoopStateError, "ys", "while x > 0",
     "changes otherwise than by appending to it"),
    (list_elements_of_two_dtypes, [S(2.0)], LoopStateError, "ys", "while x > 0",
     "the elements of a list appended to in a traced loop must have one dtype and shape"),
    (list_appended_in_one_branch, [S(2.0)], BranchMismatchError, "ys", "if x > 0",
     "change to different lengths"),
    (list_rebuilt_in_loop, [S(2.0)], LoopStateError, "ys", "while x > 0",
     "to grow a list in a traced loop, append to it (`ys.append(...)`)"),
    (return_value_or_fall_off, [S(-1.0)], BranchMismatchError, "return", "if x > 0",
     "false branch"),
    (list_of_two_shapes_at_traced_index, [V([1.0, 2.0]), np.int64(1)], TracingError, "ys", "return ys[k]",
     "its elements are not all"),
    (number_out_of_range_of_the_other_branch, [np.int8(1)], BranchMismatchError, "y", "if x > 0",
     "(300), which int8[]"),
    (number_out_of_range_entering_loop, [np.float32(2.0)], LoopStateError, "y", "while x > 0",
     "(1e+300), which float32[]"),
]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("program, args, error, name, construct, words", ERRORS,
                         ids=[e[0].__name__ for e in ERRORS])
def test_error(backend, program, args, error, name, construct, words):
    f = program(backend.xp)
    with pytest.raises(error) as info:
        backend.run(f, [tuple(backend.make(a) for a in args)])
    message = str(info.value)
    assert message.startswith(f"'{name}' "), message
    assert words in message, message
    assert f"{__file__}:{line_of(program, construct)})" in message, message


def comprehension_over_traced_range(xp):
    def f(n):
        return sum([i * 2 for i in range(n)])
    return f


def test_iterating_a_traced_range_outside_a_for_statement(backend):
    # The function is converted, so the message must not advise converting
    # it: it says that only a `for` statement loops over such a range.
    f = comprehension_over_traced_range(backend.xp)
    with pytest.raises(TracingError) as info:
        backend.run(f, [(backend.make(np.int64(3)),)])
    message = str(info.value)
    assert "cannot iterate in Python over a range whose bound is traced" in message, message
    assert f"{__file__}:{line_of(comprehension_over_traced_range, 'range(n)')})" in message, message
    assert "Only a `for` statement of converted code loops over it" in message, message
    assert "convert the function" not in message, message
