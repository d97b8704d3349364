"""The functional control-flow operators that generated code calls.

Each docstring states what the operator means for Python values, as a few
lines of plain Python; that is exactly what it runs when no operand belongs to
a backend. When the condition (or the iterable, or a loop's test once
evaluated) is symbolic, the operator hands over to that value's backend.

Conventions shared by all operators:
  * `state` is a tuple of the values of the variables named in `names`,
    passed positionally to the branch and loop functions;
  * a branch or loop body returns its outputs as the statement assigns them:
    nothing when there are none, a bare value for one, a tuple otherwise.
"""

import contextvars
import itertools
import operator
import sys

from autograph.runtime import calls, static_ranges
from autograph.runtime.backends import FROM_FIRST, backend_of, backend_of_any, unchanged
from autograph.runtime.errors import TracingError, user_location
from autograph.runtime.staging import StagingBackend
from autograph.runtime.staging.lists import TracedList, is_accumulating
from autograph.runtime.staging.lists import truth_of as list_truth
from autograph.runtime.undefined import Undefined

__all__ = [
    "if_stmt", "elif_stmt", "pure_elif_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "compare",
    "assert_stmt", "setitem", "getitem", "in_place", "is_python", "iterate", "PYTHON_TYPES", "ITEM_TYPES", "ITEM_KEYS",
    "iadd", "isub", "imul", "imatmul", "itruediv", "ifloordiv", "imod", "ipow",
    "ilshift", "irshift", "iand", "ixor", "ior",
]


# The hooks of `x op= v` (all targets: names, `x[i]`, `obj.a`).

def _augmented(op, plain):
    """`op` (operator.iadd, ...) as the runtime hook of `x op= v`: for Python
    values it means `return op(x, v)`, which is what the statement does. A
    backend's value goes through the backend's `augmented`, which can tell
    a value that stands for a Python number (`+=` makes a new one) from an
    array that the statement changes in place."""
    def augmented(target, value):
        backend = backend_of(target)
        if backend is None:  # a Python value
            return op(target, value)
        return backend.augmented(op, plain, target, value)
    augmented.__name__ = augmented.__qualname__ = op.__name__
    return augmented


#: The types, among those that no backend claims (backends.py), for which
#: converted code runs `x += v` itself (converters/fast_paths.py); `iadd` of
#: any other Python value is Python's too. A tuple, most used first: dynamo
#: mistraces membership in a frozenset of classes (it guards `int not in`
#: the set, then fails that guard: "Guard failed on the same frame it was
#: created"), and five classes keep a miss (an array's `+=`) short.
PYTHON_TYPES = (int, float, list, str, tuple)
#: The containers and keys for which converted code runs `x[k] = v` itself
#: (converters/fast_paths.py): `setitem` of them is Python's assignment.
ITEM_TYPES = (list, dict)
ITEM_KEYS = (int, str)
iadd = _augmented(operator.iadd, operator.add)
isub = _augmented(operator.isub, operator.sub)
imul = _augmented(operator.imul, operator.mul)
imatmul = _augmented(operator.imatmul, operator.matmul)
itruediv = _augmented(operator.itruediv, operator.truediv)
ifloordiv = _augmented(operator.ifloordiv, operator.floordiv)
imod = _augmented(operator.imod, operator.mod)
ipow = _augmented(operator.ipow, operator.pow)
ilshift = _augmented(operator.ilshift, operator.lshift)
irshift = _augmented(operator.irshift, operator.rshift)
iand = _augmented(operator.iand, operator.and_)
ixor = _augmented(operator.ixor, operator.xor)
ior = _augmented(operator.ior, operator.or_)


iterate = iter


def is_python(value):
    """True if no backend claims `value`: the operators run Python's own
    statement for it. Generated code checks this before its inlined Python
    path (see converters/fast_paths.py), for a value that is not a bool."""
    t = type(value)
    if t is list or t is TracedList:  # accumulated in a staged loop, or of a traced length (staging/lists.py)
        return t is list and not is_accumulating(value)
    # Only `backend_of` reads the dispatch cache: dynamo checks, on every call
    # of a compiled function, that two modules' names for one dict are the
    # same (and each element of a set of types that the code it traces reads).
    return backend_of(value) is None


def _unpack(result, count):
    """Turns a body's return value into a state tuple."""
    if count == 1:
        return (result,)
    if count == 0:
        return ()
    return result


_NOT_RUN = object()

# A list (one accumulated in a staged loop) and a TracedList (of a traced
# length) have a traced truth: the operators ask `staging.lists.truth_of`.
# They test the two types with `is`: dynamo guards, on every call of a
# compiled function, each element of a tuple of types that code it traces reads.


def if_stmt(cond, if_body, else_body, state, names):
    """Functional `if`. For Python values it means:

        if cond:
            return if_body(*state)
        return else_body(*state)

    A body given as None leaves the state unchanged (`unchanged`): the
    statement's outputs are then its state, or it has none.
    """
    if type(cond) is list or type(cond) is TracedList:
        cond = list_truth(cond)
    backend = backend_of(cond)
    if backend is None:
        if cond:
            return unchanged(state, len(names)) if if_body is None else if_body(*state)
        return unchanged(state, len(names)) if else_body is None else _else(else_body, state)
    if else_body is not None and "pure_elif_stmt" in else_body.__code__.co_names:
        return _staged_chain(backend, cond, if_body, else_body, state, names)
    return backend.cond(cond, if_body, else_body, state, names)


class _Elif:
    """An `elif` that `elif_stmt` hands back to the loop of `_else`."""

    __slots__ = ("cond", "if_body", "else_body", "state", "names")

    def __init__(self, cond, if_body, else_body, state, names):
        self.cond, self.if_body, self.else_body, self.state, self.names = cond, if_body, else_body, state, names


def _else(body, state):
    """`body(*state)`, the else branch of an `if` on a Python value. An `elif`
    that ends it (`elif_stmt`) comes back here, and runs in this loop: a
    chain of any length takes no recursion, as Python's own `elif` takes
    none."""
    result = body(*state)
    while result.__class__ is _Elif:
        cond, state, names = result.cond, result.state, result.names
        if type(cond) is list or type(cond) is TracedList:
            cond = list_truth(cond)
        backend = backend_of(cond)
        if backend is not None:
            return if_stmt(cond, result.if_body, result.else_body, state, names)
        if cond:
            body = result.if_body
            return unchanged(state, len(names)) if body is None else body(*state)
        body = result.else_body
        if body is None:
            return unchanged(state, len(names))
        result = body(*state)
    return result


def elif_stmt(cond, if_body, else_body, state, names):
    """`if_stmt` of an `if` that ends an else branch and has that branch's
    outputs (an `elif`): `return elif_stmt(...)` means `return if_stmt(...)`.
    Called by `_else` (or by `_collect`), it leaves the statement to that
    loop instead. (The fast paths of converters/fast_paths.py write it in
    the functional code they keep, where chains are longer than they inline.)"""
    traced = calls._bytecode_traced
    if (traced is None or not traced()) and sys._getframe(2).f_code in _COLLECTORS:
        return _Elif(cond, if_body, else_body, state, names)
    return if_stmt(cond, if_body, else_body, state, names)


#: `elif_stmt` under the name that marks an `elif` that is all its else
#: branch holds, whose test has no side effect (converters/fast_paths.py
#: says which): the runtime finds the name in the branch's code, and a chain
#: of them on a traced condition can be staged at once (`_staged_chain`).
#: Only such a branch is called by `_collect`.
pure_elif_stmt = elif_stmt


def _staged_chain(backend, cond, if_body, else_body, state, names):
    """`if_stmt` of a traced `cond` whose else branch is an `elif` chain of
    side-effect-free tests (`pure_elif_stmt`): the tests are evaluated now,
    in order (staged, each branch would evaluate the next; they read the
    same values and change nothing), and the backend stages the chain at
    once (`Backend.cond_chain`), not one nested cond per `elif`. A test
    with a Python value ends the chain (true) or drops its branch (false);
    an else branch that holds more than an `elif` is the chain's last."""
    traced = calls._bytecode_traced
    if (traced is not None and traced()) or _ONE_BY_ONE.get() or not backend.stages_chain(cond):
        return backend.cond(cond, if_body, else_body, state, names)  # (dynamo traces them one by one)
    links, last = [(cond, if_body, state)], (else_body, state)
    while last[0] is not None and "pure_elif_stmt" in last[0].__code__.co_names:
        link = _collect(last[0], last[1])
        test = link.cond
        if type(test) is list or type(test) is TracedList:
            test = list_truth(test)
        if backend_of(test) is None:
            if test:
                last = (link.if_body, link.state)
                break
            last = (link.else_body, link.state)
            continue
        links.append((test, link.if_body, link.state))
        last = (link.else_body, link.state)
    if len(links) == 1:
        body, given = last
        return backend.cond(cond, if_body, body if given is state else _bound(body, given, len(names)), state,
                            names)
    try:
        return backend.cond_chain(links, last, names)
    except TracingError as error:
        # The chain's conds are halves of it, not the user's branches: staged
        # one `elif` at a time, the error names the branches and the line
        # of the `elif` that gave it (where the chain is short enough).
        token = _ONE_BY_ONE.set(True)
        try:
            return backend.cond(cond, if_body, else_body, state, names)
        except RecursionError:
            raise error from None
        finally:
            _ONE_BY_ONE.reset(token)


# Set while a chain is staged again one `elif` at a time.
_ONE_BY_ONE = contextvars.ContextVar("autograph_elif_one_by_one", default=False)


def _collect(else_body, state):
    """The `_Elif` that an else branch of `pure_elif_stmt` hands back."""
    return else_body(*state)


def _bound(body, state, count):
    """A branch that takes no state: `body(*state)` (its state as it was when
    the chain was collected; None leaves that state as it is)."""
    if body is None:
        return lambda *_: unchanged(state, count)
    return lambda *_: body(*state)


_ELSE = _else.__code__
_COLLECTORS = (_ELSE, _collect.__code__)


def _options(opts, done):
    """The options of a loop that a backend takes over after `done`
    iterations ran as Python: `maximum_iterations` checked, and counting
    only the iterations still allowed."""
    if not opts or opts.get("maximum_iterations") is None:
        return opts or {}
    limit = opts["maximum_iterations"]
    what = f"set_loop_options(maximum_iterations=...) of the loop at {user_location()}"
    backend = backend_of(limit)
    if backend is not None:
        raise TypeError(f"{what} must be a Python int, got {backend.describe(limit)}: a staged loop's "
                        "bound must be known while tracing")
    if type(limit) is bool or not hasattr(type(limit), "__index__"):
        raise TypeError(f"{what} must be a Python int, got {limit!r}")
    if operator.index(limit) < 0:
        raise ValueError(f"{what} must not be negative, got {limit!r}")
    return {**opts, "maximum_iterations": max(operator.index(limit) - done, 0)}


def while_stmt(test, body, state, names, opts=None, first_test=_NOT_RUN):
    """Functional `while`. For Python values it means:

        while test(*state):
            state = body(*state)
        return state

    When `test` returns a symbolic value the loop continues, from the current
    state, as the backend's `while_from` (which gets that value); the
    iterations run so far count towards its `maximum_iterations`
    (`set_loop_options`). `first_test`, if given, is what `test(*state)`
    gave already (the inlined loop of fast_paths.py hands over with it).
    """
    count, done = len(names), 0
    while True:
        result = test(*state) if first_test is _NOT_RUN else first_test
        first_test = _NOT_RUN
        backend = backend_of(result)
        if backend is not None:
            opts = _options(opts, done) if opts else {}  # (a call that dynamo would guard, for no options)
            return unchanged(backend.while_from(result, test, body, state, names, opts), count)
        if not result:
            return unchanged(state, count)
        state = _unpack(body(*state), count)
        done += 1


def for_stmt(iterable, extra_test, body, state, names, opts=None):
    """Functional `for`. For Python values it means:

        for item in iterable:
            if extra_test is not None and not extra_test(*state):
                break
            state = body(item, *state)
        return state

    A symbolic iterable (a backend's range or array) goes to the backend's
    `for_loop`; where the backend lets Python iterate over it (returns
    NotImplemented), `opts['maximum_iterations']` still bounds the loop (the
    backend took it: its bound holds however the backend runs it). When
    `extra_test` (the loop's `break` flag) becomes symbolic in a Python loop,
    each later iteration runs under the backend's `cond`.

    With `opts['unroll']` False (`set_loop_options(unroll=False)`), a Python
    `range` goes to the backend of the state, once the state holds a
    symbolic value (after the first iteration, run as Python, if it does not
    hold one before or some variable is not defined yet): the backend may
    stage the rest as one loop. Where the body reads a backend's values,
    that backend runs the first iteration (`Backend.first_iteration`) and
    may say to stage the loop from it on.
    """
    count, done = len(names), 0
    if type(iterable) is TracedList:  # a list of a traced length (staging/lists.py)
        iterable = iterable.stacked()
    backend = backend_of(iterable)
    if backend is None and opts and "stageable" in opts and extra_test is None and type(iterable) is range \
            and iterable:
        # A long range whose body only computes, while a backend traces.
        state, iterable = static_ranges.run(iterable, body, state, names, opts["stageable"],
                                            lambda result: _unpack(result, count))
        if not iterable:
            return unchanged(state, count)
    if backend is None and type(iterable) is range and opts and opts.get("unroll") is False and iterable:
        backend = backend_of_any(state)
        if (backend is None or any(isinstance(v, Undefined) for v in state)) \
                and (extra_test is None or extra_test(*state) is True):
            reader = backend or backend_of_any(_cell_values(body))
            first = (body(iterable[0], *state) if reader is None
                     else reader.first_iteration(body, iterable[0], state, count))
            if first is not FROM_FIRST:
                state = _unpack(first, count)
                iterable, done = iterable[1:], 1
            backend = backend_of_any(state) or (reader if first is FROM_FIRST else None)
    if backend is not None:
        opts = _options(opts, done)
        result = backend.for_loop(iterable, extra_test, body, state, names, opts)
        if result is not NotImplemented:
            return unchanged(result, count)
        if opts.get("maximum_iterations") is not None:
            iterable = itertools.islice(iterable, opts["maximum_iterations"])
    if extra_test is None:
        for item in iterable:
            state = _unpack(body(item, *state), count)
        return unchanged(state, count)
    # The test runs before each fetch of the next item, so that a loop that
    # breaks consumes no more of its iterator than Python's loop does.
    flag = extra_test(*state)
    guard = backend_of(flag)
    if guard is None and not flag:
        return unchanged(state, count)
    for item in iterable:
        if guard is None:
            state = _unpack(body(item, *state), count)
            flag = extra_test(*state)
            guard = backend_of(flag)
            if guard is None and not flag:
                break
            continue
        # The break flag is symbolic: the iteration runs only where it holds.
        if flag is _NOT_RUN:
            flag = extra_test(*state)
        state = _unpack(guard.cond(flag, lambda *s, item=item: body(item, *s), None, state, names), count)
        # Tested again only if another item comes: after the last one the
        # test would be an unused operation in the backend's graph.
        flag = _NOT_RUN
    return unchanged(state, count)


def _cell_values(fn):
    """What function `fn` reads from enclosing functions."""
    values = []
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # not bound yet
            pass
    return values


def if_exp(cond, if_true, if_false):
    """Functional conditional expression `if_true() if cond else if_false()`."""
    if type(cond) is list or type(cond) is TracedList:
        cond = list_truth(cond)
    backend = backend_of(cond)
    if backend is None:
        return if_true() if cond else if_false()
    return backend.cond(cond, if_true, if_false, (), ("<expression>",))


def and_(left, *rest, pure=False):
    """`left and rest[0]() and rest[1]() ...`, short-circuit like Python.

    `pure` says that the later operands only compare names and constants
    (converters/logical_expressions.py): once an operand is a backend's
    value, the next is evaluated at once, and where both are booleans the
    backend joins them without a cond (`Backend.logical`)."""
    value = left
    for i, right in enumerate(rest):
        if type(value) is list or type(value) is TracedList:
            value = list_truth(value)  # a list of a traced length: its truth
        backend = backend_of(value)
        if backend is not None:
            if pure:
                joined, right = _joined(backend, "and", value, right)
                if joined is not NotImplemented:
                    value = joined
                    continue
            return backend.and_(value, lambda right=right, later=rest[i + 1:]: and_(right(), *later, pure=pure))
        if not value:
            return value
        value = right()
    return value


def or_(left, *rest, pure=False):
    """`left or rest[0]() or rest[1]() ...`, short-circuit like Python;
    `pure` as for `and_`."""
    value = left
    for i, right in enumerate(rest):
        if type(value) is list or type(value) is TracedList:
            value = list_truth(value)  # a list of a traced length: its truth
        backend = backend_of(value)
        if backend is not None:
            if pure:
                joined, right = _joined(backend, "or", value, right)
                if joined is not NotImplemented:
                    value = joined
                    continue
            return backend.or_(value, lambda right=right, later=rest[i + 1:]: or_(right(), *later, pure=pure))
        if value:
            return value
        value = right()
    return value


def _joined(backend, op, left, right):
    """(`backend.logical(op, left, right())`, a function giving the value
    of `right()`): a cond would trace `right` anyway, so its one run is
    the one the cond would do."""
    other = right()
    return backend.logical(op, left, other), lambda: other


_COMPARISONS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}


def compare(left, ops, right, *later):
    """A chained comparison `left ops[0] right ops[1] later[0]() ...`:

        return and_(left ops[0] right, lambda: right ops[1] later[0]() ...)

    each operand evaluated once, left to right, as Python does."""
    first = _COMPARISONS[ops[0]](left, right)
    if not later:
        return first
    return and_(first, lambda: compare(right, ops[1:], later[0](), *later[1:]))


def not_(value):
    """`not value`."""
    if type(value) is list or type(value) is TracedList:
        value = list_truth(value)
    backend = backend_of(value)
    if backend is None:
        return not value
    return backend.not_(value)


def assert_stmt(test, msg=None):
    """`assert test, msg()`: `msg` is a function, called only on failure."""
    backend = backend_of(test)
    if backend is None:
        if not test:
            if msg is None:
                raise AssertionError
            raise AssertionError(msg())
        return None
    return backend.assert_(test, msg)


def setitem(target, index, value):
    """`target[index] = value`, then `return target`. A functional backend
    returns an updated copy of a symbolic `target` instead, and of a
    concrete array whose update Python refuses because `index` or `value`
    is symbolic."""
    backend = backend_of(target)
    if backend is None:
        try:
            target[index] = value
            return target
        except Exception:
            backend = backend_of_any((index, value))
            if backend is None:
                raise
    return backend.setitem(target, index, value)


def in_place(target):
    """`target`, which a method is about to change in place (`target.add_(v)`,
    or an item of it: `target[i].add_(v)`). A backend may refuse the change
    (`Backend.in_place`): torch refuses it for a tensor that a staged
    statement gave where Python's would be another tensor."""
    backend = backend_of(target)
    return target if backend is None else backend.in_place(target)


def getitem(target, index, name):
    """`target[index]`, where `name` is how the converted function writes
    `target`, for an index that a backend may trace (converters/item_reads.py):
    a traced index reads a Python list through the backend
    (`StagingBackend.list_item`: Python's list indexing would need its
    value), and any other object as its backend says (`Backend.getitem`)."""
    if type(index) is int:
        return target[index]
    if type(target) is list and is_accumulating(target):
        raise target[0].acc.read_error()
    backend = backend_of_any(index) if type(index) is tuple else backend_of(index)
    if backend is None:
        return target[index]
    # (A tracer that follows Python itself, dynamo, traces Python's list indexing.)
    if type(target) is list and isinstance(backend, StagingBackend) and getattr(index, "shape", None) == () \
            and backend.tracks_places() and backend.concrete(index) is None:
        return backend.list_item(target, index, name)
    return backend.getitem(target, index)


# Kept importable from here for generated code: `ag__.Undefined`.
Undefined = Undefined
