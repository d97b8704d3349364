"""The backend protocol and the registry that dispatch consults.

A backend is an object that claims some value types (its symbolic values)
and implements the functional forms of Python's control flow for them. The
runtime operators look at their operands; when none belongs to a backend they
run as plain Python, otherwise they hand over to the backend that claims the
first symbolic operand.

To add a backend, subclass `Backend`, implement what your tracer supports and
register an instance:

    class MyBackend(autograph.runtime.Backend):
        name = "mine"
        def owns_type(self, cls):
            return issubclass(cls, MyTracer)
        def cond(self, pred: Any, true_fn: Fn | None, false_fn: Fn | None, operands: Sequence[Any],
             names: Sequence[str]) -> Any:
            ...

    autograph.runtime.register_backend(MyBackend())

Methods a backend does not override fall back to the behaviour written in
each docstring, which is plain Python and will usually call `bool()` on a
symbolic value: implement at least `cond` and `while_loop`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["FROM_FIRST", "Backend", "register_backend", "unregister_backend", "backend_of", "backend_of_any",
           "function_arguments", "prepare_backends", "register_function_arguments", "run_as_written", "tracing",
           "unchanged"]


#: A branch, loop test or loop body: it takes the state's values, one argument each.
Fn = Callable[..., Any]
#: A loop's options (`set_loop_options`): maximum_iterations, shape_invariants, unroll, ...
LoopOptions = Mapping[str, Any]


def unchanged(state: Sequence[Any], count: int) -> Any:
    """What a branch given as None (an `if` without `else`, a branch that
    only returns its inputs) returns: its state, as a body returns the
    statement's `count` outputs. Generated code passes None only where the
    state is the outputs, or where there are no outputs (then it returns
    None whatever the state)."""
    if count == 0:
        return None
    if count == 1:
        return state[0]
    return tuple(state)


class Backend:
    """Base class for backends. Every method has a Python meaning."""

    # No instance dictionary unless a subclass wants one: dynamo guards, for
    # each method it looks up on an instance that has one, that the
    # instance does not shadow it.
    __slots__ = ()

    #: A short name used in error messages.
    name: str = "backend"

    def owns_type(self, cls: type) -> bool:
        """True if values of type `cls` are this backend's symbolic values."""
        return False

    def tracing(self) -> bool:
        """Whether this backend's symbolic values may reach converted code
        now: its tracer runs, in this thread or another. When no registered
        backend traces, a converted function runs its statements as written
        (`tracing()`). The default, True, keeps a backend that cannot tell
        on the converted code at every call."""
        return True

    def cond(self, pred: Any, true_fn: Fn | None, false_fn: Fn | None, operands: Sequence[Any],
             names: Sequence[str]) -> Any:
        """Functional `if`: `true_fn(*operands) if pred else false_fn(*operands)`.

        Both functions return the branch outputs, whose names are `names`
        (a bare value when there is one name, a tuple otherwise). A function
        given as None leaves the state unchanged (see `unchanged`).
        """
        fn = true_fn if pred else false_fn
        return unchanged(operands, len(names)) if fn is None else fn(*operands)

    def cond_chain(self, links: Sequence[tuple[Any, Fn | None, Sequence[Any]]],
                   last: tuple[Fn | None, Sequence[Any]], names: Sequence[str]) -> Any:
        """Functional `if`/`elif`/.../`else` whose tests were all evaluated
        (they have no side effects): `links` holds a (test, body, state) for
        the `if` and each `elif`, in order, the first test one of this
        backend's values; `last` is the else branch's (body, state). Returns
        what the body of the first true test gives from its state, or the
        else branch's. By default, nested `cond`s (one call deeper per
        `elif`); a backend may stage the chain at once."""
        count = len(names)
        test, body, state = links[0]
        if len(links) > 1:
            def rest(*_: Any) -> Any:
                return self.cond_chain(links[1:], last, names)
        else:
            def rest(*_: Any) -> Any:
                return unchanged(last[1], count) if last[0] is None else last[0](*last[1])
        return self.cond(test, body, rest, state, names)

    def stages_chain(self, pred: Any) -> bool:
        """Whether an `if` on `pred`, one of this backend's values, that an
        `elif` chain follows is staged with `cond_chain`: the runtime then
        evaluates the chain's tests before it stages any branch. False (the
        default): `cond` stages it, and each `elif` inside the else branch."""
        return False

    def while_loop(self, test: Fn, body: Fn, state: tuple[Any, ...], names: Sequence[str],
                   opts: LoopOptions) -> tuple[Any, ...]:
        """Functional `while`, entered with the current state (a tuple):

            while test(*state):
                state = body(*state)
            return state
        """
        raise NotImplementedError(f"the {self.name} backend has no while_loop")

    def while_from(self, flag: Any, test: Fn, body: Fn, state: tuple[Any, ...], names: Sequence[str],
                   opts: LoopOptions) -> tuple[Any, ...]:
        """`while_loop` where `flag`, one of this backend's values, is
        `test(*state)`: the runtime evaluated it to find the backend. A
        backend that can use it saves an evaluation of the test; by
        default the test runs again."""
        return self.while_loop(test, body, state, names, opts)

    def for_loop(self, iterable: Any, extra_test: Fn | None, body: Fn, state: tuple[Any, ...],
                 names: Sequence[str], opts: LoopOptions) -> Any:
        """Functional `for` over one of this backend's iterables (a symbolic
        range or array). Returns the final state tuple, or NotImplemented to
        let Python iterate."""
        return NotImplemented

    def stages_range(self, n: int) -> bool:
        """Whether a `for` over a Python range of `n` items, whose body only
        computes (converters/static_ranges.py), is staged as one loop now
        (runtime/static_ranges.py): while this backend traces, from a trip
        count it documents. False (the default): it runs as Python."""
        return False

    def first_iteration(self, body: Fn, item: Any, state: Sequence[Any], count: int) -> Any:
        """`body(item, *state)`, the first iteration of a `for` loop over a
        range that `set_loop_options(unroll=False)` asks to stage, whose
        state holds none of this backend's values but whose body reads
        some. A backend may instead return FROM_FIRST, to stage the loop
        from this iteration on (discarding what the iteration gave), where
        it finds that the iteration made the state its values and changed
        nothing else Python sees."""
        return body(item, *state)

    def not_(self, value: Any) -> Any:
        """`not value`."""
        return not value

    def and_(self, left: Any, right_fn: Callable[[], Any]) -> Any:
        """`left and right_fn()`, where `left` is symbolic."""
        return right_fn() if left else left

    def or_(self, left: Any, right_fn: Callable[[], Any]) -> Any:
        """`left or right_fn()`, where `left` is symbolic."""
        return left if left else right_fn()

    def logical(self, op: str, left: Any, right: Any) -> Any:
        """`left and right` (op "and") or `left or right` (op "or") as one
        value, without a cond, where `left` is symbolic and `right` is the
        value of an operand that only compared names and constants (`pure`
        in `operators.and_`); NotImplemented leaves it to `and_`/`or_`."""
        return NotImplemented

    def print_(self, *args: Any, **kwargs: Any) -> None:
        """`print(*args, **kwargs)` where some argument is symbolic."""
        builtins.print(*args, **kwargs)

    def assert_(self, test: Any, msg_fn: Callable[[], Any] | None) -> None:
        """`assert test, msg_fn()` where `test` is symbolic."""
        if not test:
            raise AssertionError(msg_fn()) if msg_fn is not None else AssertionError

    def check(self, ok: Any, error: BaseException) -> Any:
        """Raise `error` when the graph runs, where `ok`, one of this
        backend's boolean values, is False: a `raise` in one branch of a
        staged `if`. Returns NotImplemented where the backend cannot (the
        default): the `if` is then refused while tracing."""
        return NotImplemented

    def getitem(self, target: Any, index: Any) -> Any:
        """`target[index]`, where `index` is (or holds) one of this backend's
        values: converted code's `x[i]` when `i` may be traced
        (`operators.getitem`)."""
        return target[index]

    def setitem(self, target: Any, index: Any, value: Any) -> Any:
        """`target[index] = value; return target`, where `target` is symbolic,
        or a concrete array where `index` or `value` is symbolic (Python
        refused the update). A functional backend returns an updated copy."""
        target[index] = value
        return target

    def augmented(self, op: Callable[[Any, Any], Any], plain: Callable[[Any, Any], Any], target: Any,
                  value: Any) -> Any:
        """`target op= value` (`op` is operator.iadd, ...; `plain` operator.add,
        ...), where `target` is one of this backend's values: `op(target,
        value)`. A backend whose arrays stand for Python numbers after a
        staged statement (`number`) makes a new value for those, with
        `plain`, as Python does for a number."""
        return op(target, value)

    def in_place(self, target: Any) -> Any:
        """`target`, one of this backend's values, which a method is about to
        change in place (converted code's `target.add_(v)`, `target[i].zero_()`).
        A backend may raise instead, for a value it cannot change as Python would."""
        return target

    def number(self, value: Any) -> Any:
        """`value`, one of this backend's arrays that stands for a Python
        number (a variable that held an int, float or bool before a staged
        `if` or loop), as this backend tells it apart (see `augmented`)."""
        return value

    def number_or_array(self, value: Any, name: str, what: str, loc: str) -> Any:
        """`value`, one of this backend's arrays that a staged statement (`what`,
        at `loc`) gives as the variable `name` (its name as messages show it),
        which is a Python number on one way through it and an array on the
        other (`k = 0`, then `k = t * 2` in a branch). Python changes such an
        array in place on one way (`k += 1`), where every name that holds it
        sees the change, and makes a new number on the other: a backend whose
        arrays change in place refuses that change (see `augmented`)."""
        return value

    def function_arguments(self, f: Callable[..., Any]) -> Sequence[tuple[int, str | None]] | None:
        """For `f`, a library function that takes the user's functions to
        call or trace (`jax.grad`, `lax.cond`), ((position, keyword), ...)
        of those arguments: converted code converts them before the call, as
        it converts the functions it calls itself. None for another `f`."""
        return None

    def stack(self, values: Sequence[Any], axis: int) -> Any:
        """`np.stack(values, axis=axis)` as this backend's array, where some
        element of the list `values` is an array of its library (a concrete
        one too), for `autograph.stack`; NotImplemented otherwise."""
        return NotImplemented

    def builtin(self, func: Callable[..., Any]) -> Callable[..., Any] | None:
        """An override for the builtin `func` (len, range, abs, ...) for calls
        with this backend's values, or None to call the builtin itself."""
        return None

    def prepare(self) -> None:
        """Called when the registry changes and before each conversion. A
        backend whose library is loaded by then can claim its value types
        now (`claim(self, types)`): a tracer that guards on what dispatch reads (dynamo)
        then finds them known, and dispatch changes nothing while it traces."""

    def intercepts(self) -> Iterable[Callable[..., Any]]:
        """Callables other than the overridden builtins whose calls from
        converted code this backend wants to see (through `builtin`), for
        example `numpy.asarray`, which numpy runs without asking the value."""
        return ()


#: What `Backend.first_iteration` returns to stage a loop from its first iteration.
FROM_FIRST: Any = object()

_backends: list[Backend] = []
_by_type: dict[type, Backend | None] = {}

# Types that no backend can claim: the fast path of dispatch.
for _t in (bool, int, float, complex, str, bytes, type(None), list, tuple, dict, set, range):
    _by_type[_t] = None


def register_backend(backend: Backend) -> Backend:
    """Registers `backend`; later registrations are consulted first."""
    if not isinstance(backend, Backend):
        raise TypeError(f"register_backend expects a Backend instance, got {backend!r}")
    _backends.insert(0, backend)
    _changed()
    return backend


def unregister_backend(backend: Backend) -> None:
    """Removes a backend registered with `register_backend`."""
    _backends.remove(backend)
    _changed()


def _changed() -> None:
    _reset_cache()
    _check_tracing()
    from autograph.runtime.calls import refresh
    refresh(_backends)
    prepare_backends()


def prepare_backends() -> None:
    """Calls each registered backend's `prepare`."""
    for backend in _backends:
        backend.prepare()


# What `tracing()` asks, in order: each registered backend's `tracing`.
_tracing_checks: tuple[Callable[[], bool], ...] = ()
_as_written = True


def tracing() -> bool:
    """True while some registered backend may trace (`Backend.tracing`).

    A converted function asks this once, at its entry. Outside every
    trace it runs its statements as written: there Python's control flow
    is what each operator would do, and only the calls still go through
    the call hook, which converts what a transform traces (`jax.vmap(f)`).
    While a backend traces it runs its converted code. Dynamo, which runs
    converted code's bytecode itself, calls this outside its trace and
    takes the answer as a constant (see runtime/torch/dynamo_hooks.py)."""
    for check in _tracing_checks:
        if check():
            return True
    return False


tracing._dynamo_marked_constant = True  # type: ignore[attr-defined]


def run_as_written(enabled: bool) -> bool:
    """Whether converted functions called outside every trace run their
    statements as written (True, the default) or their converted code,
    which then runs each operator's Python path (False: what the tests of
    that path use). Returns the previous setting."""
    global _as_written
    previous, _as_written = _as_written, bool(enabled)
    _check_tracing()
    return previous


def _always() -> bool:
    return True


def _check_tracing() -> None:
    global _tracing_checks
    _tracing_checks = tuple(b.tracing for b in _backends) if _as_written else (_always,)


def registered() -> tuple[Backend, ...]:
    """The registered backends, the one consulted first first."""
    return tuple(_backends)


#: Functions that take the user's functions, as `autograph.register_transform` names them.
_transforms: dict[Any, tuple[tuple[int, str | None], ...]] = {}


def register_function_arguments(f: Callable[..., Any], arguments: Sequence[tuple[int, str | None]]) -> None:
    """Records that `f` takes the user's functions as `arguments` ((position,
    keyword) pairs), before any backend's answer."""
    _transforms[f] = tuple(arguments)


def function_arguments(f: Callable[..., Any]) -> Sequence[tuple[int, str | None]] | None:
    """The arguments of `f` that are the user's functions, as
    `register_function_arguments` recorded them or the first registered
    backend's `function_arguments(f)` gives them; None for another `f`."""
    try:
        registered = _transforms.get(f)
    except TypeError:  # an unhashable callable
        registered = None
    if registered is not None:
        return registered
    for backend in _backends:
        found = backend.function_arguments(f)
        if found is not None:
            return found
    return None


def claim(backend: Backend, types: Iterable[type]) -> None:
    """Records `backend` as the backend of `types` in the dispatch cache
    (unless another backend claimed them first)."""
    for cls in types:
        _by_type.setdefault(cls, backend)


def _reset_cache() -> None:
    for cls in [c for c, b in _by_type.items() if b is not None or c not in _FIXED]:
        del _by_type[cls]


_FIXED = frozenset(_by_type)


# A tracer may give symbolic numbers Python's own number types: under dynamo,
# `type()` of an `.item()` value or of a dynamic dimension is int, float or
# bool. `set_symbolic_numbers` installs the backend of such numbers, the
# test that tells them apart, and the test of whether that tracer runs:
# outside it a Python number is Python (what dispatch asks most, for every
# number in converted code).
_NUMBER_TYPES = frozenset({bool, int, float})
#: In its one element, the types of the values whose truth a converted
#: loop's test takes as Python's without asking dispatch (converters/
#: fast_paths.py), as no backend claims them; none once a tracer gives
#: symbolic numbers Python's number types (`set_symbolic_numbers`: dynamo,
#: which would guard on each type the test reads). A list, which the loop's
#: code reads on each test: that changes its element.
LOOP_TEST_TYPES: list[tuple[type, ...]] = [(int, float, str, type(None), tuple)]
_symbolic_backend: Backend | None = None
_is_symbolic: Callable[[Any], bool] | None = None
_tracing: Callable[[], bool] | None = None


def set_symbolic_numbers(backend: Backend, is_symbolic: Callable[[Any], bool], tracing: Callable[[], bool]) -> None:
    """Makes `backend` the backend of each number for which
    `is_symbolic(number)` is true: one whose value its tracer does not
    know. Dispatch asks about ints, floats and bools only while `tracing()`
    is true (a tracer that runs the bytecode of converted code, such as
    dynamo, sees that call as a constant)."""
    global _symbolic_backend, _is_symbolic, _tracing
    _symbolic_backend, _is_symbolic, _tracing = backend, is_symbolic, tracing
    LOOP_TEST_TYPES[0] = ()  # (a type read there would be a guard of dynamo's on every call)


def backend_of(value: Any) -> Backend | None:
    """The backend that claims `value`, or None for a Python value."""
    cls = type(value)
    try:
        found = _by_type[cls]
    except KeyError:
        pass
    else:
        if found is None and _tracing is not None and cls in _NUMBER_TYPES and _tracing():
            return _symbolic_backend if _is_symbolic(value) else None  # type: ignore[misc]  # set with _tracing
        return found
    found = None
    for backend in _backends:
        if backend.owns_type(cls):
            found = backend
            break
    _by_type[cls] = found
    return found


def backend_of_any(values: Iterable[Any]) -> Backend | None:
    """The backend of the first symbolic value among `values`, or None.
    Looks inside lists, tuples and dicts."""
    for value in values:
        cls = type(value)
        if cls is list or cls is tuple:
            found = backend_of_any(value)
        elif cls is dict:
            found = backend_of_any(value.values())
        else:
            found = backend_of(value)
        if found is not None:
            return found
    return None
