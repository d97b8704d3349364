"""The state of a staged loop: which leaves the loop carries, with which
type, and the check of each traced iteration, for every backend. Also the
lowering of a `for` loop to a counted loop (`Counted`).

Per leaf of the loop state (see `values.Flat`), numbers and arrays are
carried with the type they enter with; every other Python value must come
out of an iteration as it went in. An iteration may change a carried type
only by widening a Python number (an `int` that becomes a float array) or
by making dimensions unknown; then the loop is traced again with the wider
type (`values.Retry`). A lowered `return` inside the loop makes the
function's return value carried, starting from zeros of the returned type.

`set_loop_options(maximum_iterations=N)` bounds a loop: a `while` becomes a
loop over a counter as well (`bounded_while`), a `Counted` loop stops after
N items (`Counted.bounded`); either has a trip count of at most N, which a
backend may run in full, doing nothing once the loop's own test fails.
"""

import copy

from autograph.runtime.staging import errors
from autograph.runtime.staging.values import NUMBERS, Retry, in_range, normalize, pack, same_python
from autograph.runtime.undefined import Undefined, UndefinedReturnValue

__all__ = ["Counted", "Loop", "bounded_while"]


class Loop:
    """`while test(*state): state = body(*state)` as a backend stages it: the
    backend's tracer calls `cond_fun` and `body_fun` (or, for a loop that
    runs exactly `trip_count` iterations, `counted_body_fun`) on the values
    of the carried leaves, which enter as `init()`. `body` returns the state
    as a tuple. `stops_early`: a counted loop whose test can stop it before
    `trip_count` iterations (a `break` or `return`)."""

    #: Whether the backend takes an iteration traced before a `return` in
    #: the loop first ran as the loop's body (see `check`).
    reuses_returns = False

    def __init__(self, backend, test, body, state, names, what, loc,
                 trip_count=None, counted_body=None, stops_early=False):
        self.backend, self.test, self.body = backend, test, body
        self.state, self.names, self.what, self.loc = tuple(state), names, what, loc
        self.trip_count, self.counted_body = trip_count, counted_body
        self.stops_early = stops_early
        self.flat = backend.flat(self.state)
        self.leaves = list(self.flat.leaves)
        self.types = {j: backend.typeof(leaf) for j, leaf in enumerate(self.leaves)
                      if backend.is_value(leaf)}   # carried leaf -> type
        self.stand_ins = set()  # carried leaves that stand for a `return` not run yet
        self.mixed = set()      # carried leaves that enter as Python numbers and become arrays
        self.memo = {}          # what the backend keeps across attempts
        self.entered = {}       # carried leaf -> (type, leaf, value) of `init`

    def run(self, stage, attempts=8):
        """`stage()` stages the loop and returns the carried values after it;
        traced again while it raises `Retry`, up to `attempts` times.
        Returns the final state."""
        for _attempt in range(attempts):
            try:
                carry = stage()
            except Retry:
                continue
            return self.unflatten(carry, after=True)
        raise errors.loop_does_not_settle(self.what, self.loc)

    def declare_shapes(self, invariants, static_shapes):
        """`set_loop_options(shape_invariants=[(name, shape), ...])`: each named
        array variable is carried with `shape`, whose `None` dimensions may
        change across iterations. `static_shapes` is the backend's reason it
        cannot carry such a variable (a sentence with `{name}` in it), or None."""
        what, loc = self.what, self.loc
        for pair in invariants:
            name, shape = pair
            if static_shapes is not None:
                raise errors.shape_invariants(what, loc, static_shapes.format(name=name))
            if name not in self.names:
                raise errors.shape_invariants(what, loc, f"'{name}' is not a variable that the loop changes")
            owner = self.names.index(name)
            leaves = [j for j, k in enumerate(self.flat.owner) if k == owner]
            if len(leaves) != 1 or leaves[0] not in self.types or self.types[leaves[0]][2]:
                raise errors.shape_invariants(
                    what, loc, f"'{name}' is {self.backend.describe(self.state[owner])}, not an array")
            j = leaves[0]
            before, dtype, _ = self.types[j]
            if type(shape) not in (tuple, list) or len(shape) != len(before) or not all(
                    d is None or type(d) is int and d == b for d, b in zip(shape, before, strict=True)):
                raise errors.shape_invariants(
                    what, loc, f"'{name}' enters the loop as {self.backend.describe_type(self.types[j])}, "
                    f"which does not have the declared shape {shape!r} (a tuple of its dimensions, None "
                    "for those that may change)")
            self.types[j] = (tuple(shape), dtype, False)

    # What the tracer sees ---------------------------------------------------------

    def carried(self):
        """(type, variable name) of each carried leaf, in carry order."""
        return [(self.types[j], self.names[self.flat.owner[j]]) for j in sorted(self.types)]

    def unflatten(self, carry, numbers=True, after=False):
        """The state tuple with the carried leaves taken from `carry`; those
        that entered as Python numbers stand for numbers (`backend.number`)
        unless `numbers` is False (a loop test, which assigns nothing), or
        for numbers or arrays (`backend.number_or_array`) where the body
        makes arrays of them. `after`: the state after the loop, else the
        state with which an iteration starts."""
        values, backend = list(self.leaves), self.backend
        for j, v in zip(sorted(self.types), carry, strict=True):
            if numbers and j in self.mixed:
                what = self.what if after else f"an iteration of {self.what}"
                values[j] = backend.number_or_array(v, self.leaf_name(j), what, self.loc)
            else:
                values[j] = backend.number(v) if numbers and self.types[j][2] else v
        return self.flat.rebuild(values)

    def leaf_name(self, j):
        """Carried leaf `j` as messages name it."""
        return f"`{self.names[self.flat.owner[j]]}`"

    def init(self):
        """The carried leaves as they enter the loop, as values of their types:
        each made once per type (a trace done again reuses it; a tracer that
        keeps every operation would keep an unused copy)."""
        out = []
        for j in sorted(self.types):
            entered = self.entered.get(j)
            if entered is not None and entered[0] is self.types[j] and entered[1] is self.leaves[j]:
                out.append(entered[2])
                continue
            value = self.backend.cast(self.leaves[j], self.types[j])
            if value is None:
                name, text = self.names[self.flat.owner[j]], self.backend.describe_type(self.types[j])
                if j in self.stand_ins:
                    raise errors.returned_in_loop(name, text, self.backend.array, self.what, self.loc)
                if type(self.leaves[j]) in (int, float):
                    raise errors.number_out_of_range(errors.LoopStateError, name, self.backend.describe(
                        self.leaves[j]), text, self.what, self.loc)
                raise errors.cannot_enter(name, text, self.what, self.loc)
            self.entered[j] = (self.types[j], self.leaves[j], value)
            out.append(value)
        return out

    def cond_fun(self, carry):
        return self.backend.predicate(self.test(*self.unflatten(carry, False)), self.what, self.loc)

    def body_fun(self, carry):
        return self._iteration(self.body(*self.unflatten(carry)))

    def counted_body_fun(self, carry):
        return self._iteration(self.counted_body(*self.unflatten(carry)))

    def _iteration(self, new_state):
        new = self.backend.flat(new_state)
        if self.check(new):
            raise Retry
        return self.outputs(new)

    # The rules ------------------------------------------------------------------

    def check(self, new):
        """Checks one traced iteration, `new` the state after it (a `Flat`).
        Widens `types` (or sets a stand-in for a `return`) where the loop
        must be traced again; returns True if it must.

        A `return` that first ran in this iteration needs no second trace
        where the backend sets `reuses_returns`: its value joins the state
        as an output of this trace (a stand-in where it had not run), which
        the traced iteration does not take as input. That is exact: the
        body runs only while no `return` ran (the loop's test says so), so
        an iteration never reads the returned value it gets."""
        backend, what, loc = self.backend, self.what, self.loc
        for i, name in enumerate(self.names):
            if new.treedefs[i] != self.flat.treedefs[i]:
                raise errors.loop_structure(name, self.state[i], new.rebuild(new.leaves)[i], what, loc)
        again = returned = False
        for j, (before, after) in enumerate(zip(self.leaves, new.leaves, strict=True)):
            name = self.names[self.flat.owner[j]]
            if j not in self.types:
                if type(before) is UndefinedReturnValue and not isinstance(after, Undefined):
                    if after is None:
                        self.leaves[j] = None
                    elif not backend.is_value(after):
                        raise errors.returned_in_loop(name, backend.describe(after), backend.array,
                                                      what, loc)
                    else:  # False, cast to the returned type, is zeros
                        self.leaves[j], self.types[j] = False, backend.typeof(after)
                        self.stand_ins.add(j)
                    returned = True
                elif type(before) is Undefined and type(after) is not Undefined:
                    if not backend.is_value(after):
                        raise errors.defined_in_loop(name, backend.describe(after), what, loc)
                    # First defined in the loop: carried with the type of its
                    # first value, from zeros (False cast to it); places.loop
                    # checks at run time that an iteration ran.
                    self.leaves[j], self.types[j] = False, backend.typeof(after)
                    again = True
                elif not same_python(before, after):
                    raise errors.loop_python_change(name, backend.describe(before),
                                                    backend.describe(after), backend.array, what, loc)
                continue
            t = self.types[j]
            if not backend.is_value(after):
                raise errors.loop_type_change(name, backend.describe_type(t), backend.describe(after),
                                              None, what, loc)
            after_type = backend.typeof(after)
            merged = backend.merge(t, after_type)
            if t[2] and not after_type[2] and j not in self.mixed and backend.arrays_change_in_place:
                self.mixed.add(j)  # traced again: the body's value is then marked so
                again = True
            if merged is None or merged[:2] != t[:2] and not _may_widen(t, merged):
                raise errors.loop_type_change(name, backend.describe_type(t), backend.describe(after),
                                              backend.cast_hint, what, loc,
                                              self._invariant(name, t, backend.typeof(after)))
            if merged[:2] != t[:2]:
                self.types[j] = merged
                again = True
            elif merged[2] and type(before) is float and backend.narrowed_float(merged) is not None:
                raise errors.narrowed_float(name, before, backend.narrowed_float(merged), what, loc)
        return again or returned and not self.reuses_returns

    def _invariant(self, name, before, after):
        """The `shape_invariants` that would let variable `name` go from
        type `before` to `after`, as the user writes it, or None."""
        if self.backend.static_shapes is not None or not name.isidentifier() \
                or before[1:] != after[1:] or len(before[0]) != len(after[0]):
            return None
        shape = tuple(a if a == b else None for a, b in zip(before[0], after[0], strict=True))
        return f"shape_invariants=[({name}, {shape!r})]"

    def outputs(self, new):
        """The carried leaves after an iteration, as values of their types."""
        out = []
        for j in sorted(self.types):
            value = self.backend.cast(new.leaves[j], self.types[j])
            if value is None:
                raise errors.loop_type_change(
                    self.names[self.flat.owner[j]], self.backend.describe_type(self.types[j]),
                    self.backend.describe(new.leaves[j]), self.backend.cast_hint, self.what, self.loc)
            out.append(value)
        return out


def _may_widen(before, after):
    """A carried type may change across an iteration only from a Python
    number (weak) or by dimensions becoming unknown."""
    return before[2] or (after[1] == before[1] and len(after[0]) == len(before[0]))


def bounded_while(backend, test, body, state, names, limit, what, loc):
    """The `Loop` of `while test(*state): state = body(*state)` stopped
    after at most `limit` iterations: its state is an iteration counter,
    then `state`; its trip count is `limit`, and it stops early where `test`
    fails (`stops_early`: a backend that runs all `limit` iterations runs
    each under the test)."""
    count = len(names)

    def bounded_test(k, *s):
        flag = test(*s)
        if type(flag) in NUMBERS:
            return (k < limit) if flag else False
        return backend.logical_and(backend.predicate(k < limit, what, loc), backend.predicate(flag, what, loc))

    def bounded_body(k, *s):
        return (k + 1,) + normalize(body(*s), count, "loop body")

    return Loop(backend, bounded_test, bounded_body, (0,) + tuple(state),
                ("<iteration count>",) + tuple(names), what, loc, limit, stops_early=True)


def _entered(backend, extra_test, state):
    """`state` as the body of a loop that stops where `extra_test(*state)`
    is false sees it: the loop's test ran before the body, so each carried
    flag whose being true makes that test false (`not_(do_return)`, the
    flags of an `and_`) is false in the body, a Python False where it was
    a traced one. Then a staged `if` in the body that sets the flag sets it
    to its condition, with no select of the flag that came in.
    (`extra_test` is generated code, reading only the `break` and `return`
    flags: it may run more than once.)"""
    if extra_test is None:
        return state
    entered = list(state)
    for k, value in enumerate(state):
        if type(value) in NUMBERS or not backend.is_value(value) or not _flag_type(backend.typeof(value)):
            continue
        trial = list(state)
        trial[k] = True
        if extra_test(*trial) is False:
            entered[k] = False
    return entered


def _flag_type(t):
    """Whether a carried type (shape, dtype, weak) is a boolean scalar's."""
    return t[0] == () and str(t[1]).endswith("bool")


class Counted:
    """A `for` loop over a range or over the leading axis of arrays, as a
    loop over a counter from `start` by `step` while it has not passed
    `stop`: `item(i)` is the loop target of iteration `i`. `trip_count`,
    where known while tracing (a Python int), is the number of iterations.
    `what` names the loop in messages. `limit`, where set (`bounded`), is
    a second `stop`, and `trip_count` then an upper bound."""

    limit = None

    def __init__(self, start, stop, step, item, what, trip_count=None):
        self.start, self.stop, self.step, self.item = start, stop, step, item
        self.what, self.trip_count = what, trip_count

    def bounded(self, limit):
        """This loop stopped after at most `limit` iterations
        (`set_loop_options(maximum_iterations=limit)`)."""
        bounded = copy.copy(self)
        if type(self.trip_count) is int:
            bounded.trip_count = min(self.trip_count, limit)
            bounded.stop = self.start + bounded.trip_count * self.step
        else:
            bounded.limit, bounded.trip_count = self.start + limit * self.step, limit
        return bounded

    @classmethod
    def over_arrays(cls, kind, arrays, first, stop, what, trip_count=None):
        """Over `arrays[0]` (kind None), `enumerate(arrays[0], first)` or
        `zip(*arrays)`, of length `stop`."""
        if kind is None:
            def item(i):
                return arrays[0][i]
        elif kind == "enumerate":
            def item(i):
                return (i if type(first) is int and first == 0 else first + i, arrays[0][i])
        else:
            def item(i):
                return tuple(a[i] for a in arrays)
        return cls(0, stop, 1, item, what, trip_count)

    def loop(self, backend, extra_test, body, state, names, loc):
        """The `Loop` of `for target in ...: state = body(target, *state)`
        that stops early where `extra_test(*state)` (the `break` flag) is
        false. Its state is the counter, then `state`."""
        count, stop, step, item, limit = len(names), self.stop, self.step, self.item, self.limit

        def test(i, *s):
            flag = in_range(i, stop, step)
            if limit is not None:
                flag = backend.logical_and(backend.predicate(flag, self.what, loc),
                                           backend.predicate(in_range(i, limit, step), self.what, loc))
            if extra_test is None:
                return flag
            more = extra_test(*s)
            if type(more) in NUMBERS:
                return flag if more else False
            return backend.logical_and(flag, more)

        def run(i, s):
            return normalize(body(item(i), *s), count, "loop body")

        def loop_body(i, *s):
            return (i + step,) + run(i, _entered(backend, extra_test, s))

        def counted_body(i, *s):
            # Every iteration runs, doing nothing once `break` ran.
            if extra_test is None:
                return loop_body(i, *s)
            new = backend.cond(extra_test(*s), lambda *t: pack(run(i, t), count), None, s, names)
            return (i + step,) + normalize(new, count, "loop body")

        return Loop(backend, test, loop_body, (self.start,) + tuple(state),
                    ("<loop counter>",) + tuple(names), self.what, loc,
                    self.trip_count, counted_body, extra_test is not None or limit is not None)
