"""`StagingBackend`: the statements of a backend that stages control flow
into its tracer's own operators (the numpy tracer, JAX, PyTorch).

A statement runs as Python where its condition's value is known while
tracing, as the unconverted function would; otherwise it is staged, with
the rules of `branches.py` and `loops.py`. A subclass gives only what is its
own, the methods below marked "backend": which values are its own and what
their types are, how to stage a `cond` and a loop, and which iterables a
`for` loop stages.
"""

import reprlib
import types

from autograph.runtime.backends import Backend, backend_of, unchanged
from autograph.runtime.errors import TracingError, raised_at, raised_by_statement, user_location
from autograph.runtime.staging import errors, places
from autograph.runtime.staging.branches import Branches
from autograph.runtime.staging.lists import stack
from autograph.runtime.staging.loops import Loop, bounded_while
from autograph.runtime.staging.values import NUMBERS, Flat, describe_marker, flatten, normalize, same_leaf, unflatten

__all__ = ["StagingBackend"]


class StagingBackend(Backend):
    """Runs `if`, `while`, `for`, `and`, `or` and `not` on a tracer's values:
    as Python where the condition is `concrete`, staged otherwise."""

    __slots__ = ()

    #: How messages say that a condition is the backend's ("traced by JAX").
    traced = "traced"
    #: The words for the backend's arrays and for changing their dtype.
    array, cast_hint = "array", ".astype()"
    #: Why a loop variable cannot change shape in the backend's loops, and
    #: what to do (`{name}` is the variable), for
    #: `set_loop_options(shape_invariants=...)`; None where it can.
    static_shapes = None
    #: True where `+=` changes the backend's arrays in place (torch): a
    #: variable that a staged statement makes a Python number on one way
    #: through it and an array on the other then goes through
    #: `number_or_array`, also in a loop's body (which is traced again for it).
    arrays_change_in_place = False

    def narrowed_float(self, t):
        """Where a Python float that a staged loop carries as type `t` (weak)
        is computed in less than Python's float64: (how the backend carries
        it, the dtype's name, how to enable float64), else None."""
        return None

    # Values (backend) -------------------------------------------------------------

    def concrete(self, value):
        """`bool(value)` if its value is known while tracing, else None."""
        raise NotImplementedError

    def is_value(self, x):
        """True for a Python number or an array (traced or not) that a staged
        statement can carry."""
        raise NotImplementedError

    def typeof(self, x):
        """(shape, dtype, weak) of a value; weak for a Python number."""
        raise NotImplementedError

    def merge(self, a, b):
        """The type that values of types `a` and `b` can both take as one
        variable, or None."""
        raise NotImplementedError

    def cast(self, x, t):
        """Value `x` (or False: zeros) as a value of type `t`, made in the
        current trace; None if it cannot be."""
        raise NotImplementedError

    def describe_type(self, t):
        """A type as messages show it: `float32[3]`."""
        raise NotImplementedError

    def flatten(self, value):
        """(leaves, treedef) of a container of values: by default Python's
        containers (`values.flatten`)."""
        return flatten(value)

    def unflatten(self, treedef, leaves):
        return unflatten(treedef, leaves)

    def predicate(self, flag, what, loc):
        """A traced condition as the boolean scalar the tracer's cond and
        loop take (Python bools included)."""
        raise NotImplementedError

    def logical_not(self, value):
        raise NotImplementedError

    def logical_and(self, a, b):
        raise NotImplementedError

    def logical_or(self, a, b):
        raise NotImplementedError

    # Staging (backend) ----------------------------------------------------------

    def stage_cond(self, pred, branches):
        """Stages `branches` (a `Branches`) on `pred`; returns the values of
        its carried leaves."""
        raise NotImplementedError

    def stage_loop(self, loop):
        """Stages `loop` (a `Loop`); returns the values of its carried leaves
        after it."""
        raise NotImplementedError

    def counted(self, iterable):
        """A `Counted` loop over `iterable`, or NotImplemented to let Python
        iterate over it."""
        return NotImplemented

    def buffer(self, t, capacity, name, what, loc):
        """The buffer of a list accumulated in a loop (staging/lists.py):
        zeros of type `t` with a leading dimension of `capacity` rows, or, for
        a backend whose buffers grow, of none. `capacity` is None where the
        number of iterations is not known while tracing: then a backend of
        fixed-size arrays raises `errors.list_unbounded`."""
        if capacity is None:
            raise errors.list_unbounded(name, self.array, what, loc)
        return self.zeros((capacity,) + tuple(t[0]), t[1])

    def zeros(self, shape, dtype):
        """(backend) An array of zeros."""
        raise NotImplementedError

    def buffer_write(self, buffer, index, value):
        """(backend) `buffer` with row `index` (a traced or Python int) set
        to `value`."""
        raise NotImplementedError

    def buffer_row(self, buffer, index):
        """Row `index` (a Python int) of a buffer."""
        return buffer[index]

    def buffer_rows(self, buffer, count):
        """The rows of a list of `count` (traced) elements: the buffer, for
        a backend of fixed-size arrays."""
        return buffer

    def exact_rows(self, rows, length):
        """`rows` (as `buffer_rows` gives them) as an array of `length`
        rows, or None where the backend's arrays cannot have a traced length."""
        return None

    def row_at(self, rows, length, index, name):
        """Element `index` (an int, traced or not; negative from the end) of
        the list of `length` elements in `rows`, checked when the program runs."""
        index = index + (index < 0) * length
        self.assert_((index >= 0) & (index < length), lambda: f"list index out of range ('{name}')")
        return rows[index]

    def list_item(self, values, index, name):
        """`values[index]` of the Python list `name` (converted code's
        `ys[i]`), `index` a traced int: the elements, all arrays of the
        backend of one type, stacked and read with `row_at`."""
        types = {self.typeof(v) if self.is_value(v) and type(v) not in NUMBERS else None for v in values}
        if len(types) != 1 or None in types:
            what = "it is empty" if not values else (
                "its elements are not all " + self.array + "s of one dtype and shape")
            raise TracingError(
                f"'{name}' is a Python list, its index is {self.traced} ({user_location()}) and {what}: "
                f"Python's list indexing needs the index's value. Index an {self.array} instead (stack the "
                f"list first, with autograph.stack({name}), after converting its elements to one dtype)")
        return self.row_at(stack(values), len(values), index, name)

    # Shared ---------------------------------------------------------------------

    def flat(self, values):
        """The leaves of `values` and how to rebuild them (`values.Flat`)."""
        return Flat(values, self.flatten, self.unflatten)

    def branches(self, true_fn, false_fn, operands, names, loc):
        """The `Branches` of a staged `if`."""
        return Branches(self, true_fn, false_fn, operands, names, loc)

    # What the statements use on every staged statement is methods: a tracer
    # that runs this code itself (dynamo) guards each module function and
    # constant that it reads, on every call of what it compiled, but no
    # method of an object whose type it checks.

    def location(self):
        """'file:line' of the user's statement being staged
        (`errors.user_location`)."""
        return user_location()

    def normalize(self, result, count, what):
        """A body's result as a tuple of `count` values (`values.normalize`)."""
        return normalize(result, count, what)

    def same_leaf(self, a, b):
        """True if a branch output is the same whichever way the program
        goes, so that it needs no staging (`values.same_leaf`)."""
        return same_leaf(a, b, self.is_value)

    def discard(self, values, kept=()):
        """Drops from the trace the operations that made `values` (but those
        in `kept`), which nothing uses: values made for an attempt that is
        traced again, or a loop test that the staged loop computes again.
        A backend whose tracer keeps every operation erases them; by
        default nothing happens."""

    def describe(self, x):
        """A value as messages show it."""
        marker = describe_marker(x)
        if marker is not None:
            return marker
        if type(x) in NUMBERS:
            return f"a Python {type(x).__name__} ({x!r})"
        if self.is_value(x):
            return self.describe_type(self.typeof(x))
        x = getattr(x, "place_value", x)  # a container as a place's value (places.Ref)
        if type(x) is types.FunctionType:
            return errors.show(x)[1:-1]  # "a lambda defined at FILE:LINE"
        return f"a Python {type(x).__name__} ({reprlib.repr(x)})"

    # The statements ---------------------------------------------------------------

    def cond(self, pred, true_fn, false_fn, operands, names):
        known = self.concrete(pred)
        if known is not None:
            return Backend.cond(self, known, true_fn, false_fn, operands, names)
        try:
            if not self.tracks_places():
                return self._cond(pred, true_fn, false_fn, operands, names)
            # What the branches change in place (places.py) is more outputs.
            return places.cond(self._cond, pred, true_fn, false_fn, operands, names)
        except Exception as error:
            k = _raising_branch(error, true_fn, false_fn)
            if k is None:
                raise
            raised = error
        return self._raise_in_branch(raised, k, pred, true_fn, false_fn, operands, names)

    def stages_chain(self, pred):
        return self.concrete(pred) is None

    def cond_chain(self, links, last, names):
        # A balanced tree of conds over the branches: each node tests whether
        # one of the tests of its left half is true. Tracing it takes
        # log2(branches) nested conds, where an `elif` each would nest one
        # deeper; when it runs, the graph tests log2(branches) conditions.
        what, loc = f"an `if` whose condition is {self.traced}", self.location()
        tests, leaves = [], []
        for test, body, state in links:
            known = self.concrete(test)
            if known is None:
                tests.append(self.predicate(test, what, loc))
                leaves.append((body, state))
            elif known:
                last = (body, state)
                break
        leaves.append(last)
        count = len(names)
        if not tests:
            body, state = last
            return unchanged(state, count) if body is None else body(*state)
        any_true = {}

        def any_of(lo, hi):  # whether one of tests[lo:hi] is true
            if (lo, hi) not in any_true:
                mid = (lo + hi) // 2
                any_true[lo, hi] = tests[lo] if hi - lo == 1 else self.logical_or(any_of(lo, mid), any_of(mid, hi))
            return any_true[lo, hi]

        def node(lo, hi, side):
            if hi - lo == 1:
                body, state = leaves[lo]
                run = (lambda: unchanged(state, count)) if body is None else (lambda: body(*state))
                calls, roots = (body,) if body is not None else (), zip(places.params(body), state)
            else:
                mid = (lo + hi) // 2
                left, right = node(lo, mid, 0), node(mid, hi, 1)
                # Made here, in the trace the chain is staged from, not in a
                # branch's: a tracer may trace a branch more than once
                # (torch.export), and a branch's values die with its trace.
                pred = any_of(lo, mid)

                def run():
                    return self.cond(pred, left, right, (), names)
                calls = left.__autograph_calls__ + right.__autograph_calls__
                roots = left.__autograph_roots__ + right.__autograph_roots__
            return places.block(run, side, calls, roots)
        return node(0, len(leaves), 0)()

    def _raise_in_branch(self, error, k, pred, true_fn, false_fn, operands, names):
        """The `if` whose branch `k` raised `error` with a `raise` statement
        while it was traced: Python raises it only where the condition takes
        that branch, so the graph checks the condition when it runs and
        raises it there (`check`), and the other branch runs here, as the
        statement's only way on."""
        loc, where = self.location(), raised_at(error) or "<unknown>"
        what = f"an `if` whose condition is {self.traced}"
        branch = ("branch taken where the condition is true", "branch taken where it is false")[k]
        pred = self.predicate(pred, what, loc)
        ok = self.logical_not(pred) if k == 0 else pred
        if hasattr(error, "add_note"):  # Python 3.11
            error.add_note(f"autograph: raised at {where} where the condition of the `if` at {loc} is "
                           f"{('true', 'false')[k]}: that `if` is staged, so the graph checks its condition and "
                           "raises this when it runs, past any `try` around the `if` in the traced function")
        if self.check(ok, error) is NotImplemented:
            raise errors.raised_in_branch(error, branch, where, what, loc) from error
        other = (false_fn, true_fn)[k]
        return unchanged(operands, len(names)) if other is None else other(*operands)

    def tracks_places(self):
        """Whether staged blocks carry what they change in place (places.py).
        A backend whose tracer follows Python side effects itself (dynamo)
        says no while that tracer runs."""
        return True

    def _cond(self, pred, true_fn, false_fn, operands, names):
        branches = self.branches(true_fn, false_fn, operands, names, self.location())
        return branches.run(lambda: self.stage_cond(pred, branches))

    def while_loop(self, test, body, state, names, opts):
        return self.while_from(test(*state), test, body, state, names, opts)

    def while_from(self, flag, test, body, state, names, opts):
        state, count = tuple(state), len(names)
        limit, done = opts.get("maximum_iterations"), 0
        while limit is None or done < limit:
            known = self.concrete(flag) if backend_of(flag) is self else bool(flag)
            if known is None:
                return self.stage_while(test, body, state, names, opts, done, flag)
            if not known:
                return state
            state = self.normalize(body(*state), count, "loop body")
            done += 1
            if limit is None or done < limit:
                flag = test(*state)
        return state

    def stage_while(self, test, body, state, names, opts, done=0, flag=None):
        """The `while` loop staged from `state` on, `done` of its iterations
        run as Python before (they count towards `maximum_iterations`); what
        the body changes in place (places.py) is more loop state. `flag`, if
        given, is what `test(*state)` gave, which the staged loop computes
        again: it is `discard`ed after the loop is staged."""
        what, loc = f"a `while` loop whose condition is {self.traced}", self.location()
        limit = opts.get("maximum_iterations")

        def stage(test, body, state, names):
            if limit is not None:
                return self._stage(bounded_while(self, test, body, state, names, limit - done, what, loc),
                                   opts)[1:]
            count = len(names)
            return self._stage(Loop(self, test, lambda *s: self.normalize(body(*s), count, "loop body"),
                                    state, names, what, loc), opts)
        if not self.tracks_places():
            result = stage(test, body, state, names)
        else:
            result = places.loop(stage, test, body, state, names, backend=self, what=what,
                                 trips=None if limit is None else limit - done)
        if flag is not None:
            self.discard((flag,), ())  # (a default argument of a backend method costs dynamo's guards)
        return result

    def for_loop(self, iterable, extra_test, body, state, names, opts):
        counted = self.counted(iterable)
        if counted is NotImplemented:
            return NotImplemented
        limit = opts.get("maximum_iterations")
        if limit is not None:
            counted = counted.bounded(limit)
        if type(counted.trip_count) is int and counted.trip_count <= 0:
            return tuple(state)  # no iteration, as in Python
        loc = self.location()

        def stage(extra_test, body, state, names):
            return self._stage(counted.loop(self, extra_test, body, state, names, loc), opts)[1:]
        if not self.tracks_places():
            return stage(extra_test, body, state, names)
        trips = counted.trip_count if type(counted.trip_count) is int else None
        return places.loop(stage, extra_test, body, state, names, for_item=True, backend=self,
                           what=counted.what, trips=trips, exact=extra_test is None and counted.limit is None)

    def _stage(self, loop, opts):
        if opts.get("shape_invariants"):
            loop.declare_shapes(opts["shape_invariants"], self.static_shapes)
        return loop.run(lambda: self.stage_loop(loop))

    def not_(self, value):
        known = self.concrete(value)
        return (not known) if known is not None else self.logical_not(value)

    def and_(self, left, right_fn):
        return self.cond(left, right_fn, _value(left), (), ("<and expression>",))

    def or_(self, left, right_fn):
        return self.cond(left, _value(left), right_fn, (), ("<or expression>",))

    def logical(self, op, left, right):
        # Where `left` is a boolean scalar, a cond gives `right` or `left` as
        # a boolean scalar: their logical and/or, when `right` is a Python
        # bool or a boolean scalar too (weak ones take left's type, as in a
        # cond). Any other pair is the cond's. Of two that stand for Python
        # bools (`not x`), the cond gives one too (`number`).
        if not self.is_value(left):
            return NotImplemented
        t = self.typeof(left)
        if t[:2] != ((), self.typeof(True)[1]):
            return NotImplemented
        if type(right) is bool and backend_of(right) is None:
            weak = t[2]
            right = self.cast(right, t)
        elif backend_of(right) is not self or not self.is_value(right) or self.typeof(right)[:2] != t[:2]:
            return NotImplemented
        else:
            weak = t[2] and self.typeof(right)[2]
            right = self.cast(right, t) if self.typeof(right)[2] else right
        result = self.logical_and(left, right) if op == "and" else self.logical_or(left, right)
        return self.number(result) if weak else result

    # What a `for` loop says it runs over, in messages.

    def over_range(self):
        return f"a `for` loop over a range whose bound is {self.traced}"

    def over_arrays(self, kind=None):
        of = "" if kind is None else f"{kind}() of "
        return f"a `for` loop over {of}an array that is {self.traced}"


def _value(value):
    """The branch of `and`/`or` that gives its left operand: it computes
    nothing (`branches.computes_nothing`)."""
    def left():
        return value
    left.trivial = True
    return left


def _raising_branch(error, true_fn, false_fn):
    """0 or 1 if a `raise` statement of converted code raised `error` inside
    `true_fn` or `false_fn` (a branch of the `if` being staged), else None."""
    if not raised_by_statement(error):
        return None
    codes = tuple(getattr(fn, "__code__", None) for fn in (true_fn, false_fn))
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code is codes[0] or code is codes[1]:
            return 0 if code is codes[0] else 1
        tb = tb.tb_next
    return None
