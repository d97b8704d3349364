"""Lists accumulated in staged loops: a list made before a loop, appended to
in its body, used after it.

    ys = []
    for v in x:          # staged
        ys.append(v * 2)
    np.stack(ys)

Python runs the body once per element; a tracer runs it once for all
iterations, so the list cannot simply grow while tracing. Instead the loop
carries, per list, a buffer (an array of the elements' type with one more,
leading, dimension) and the number of elements appended so far. Each traced
iteration writes the elements it appended into the buffer; after the loop
the list gets its elements back, each a row of the buffer:

    loop: buffer, count = write(buffer, count, v * 2), count + 1
    after: ys[:] = prefix + [buffer[0], ..., buffer[n - 1]]

where `n` is known while tracing (a loop that runs a known number of
iterations and appends as many elements in each). A backend gives the
buffer (`StagingBackend.buffer`, `buffer_write`): JAX and PyTorch
preallocate the rows a loop can write, the numpy tracer grows it as it goes.

Inside the body the list holds one `Appended` marker, then the elements
this iteration appended: the elements before it are not known while
tracing, so reading them raises, and `len()` gives the traced length. An
`if` inside the body may append in one branch only: then the branches write
into the buffer and the count is traced (`flush`).

A list changed otherwise than by appending (`pop`, `insert`, an item set)
raises, as does an element whose type differs from the others'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autograph.runtime import backends
from autograph.runtime.errors import BranchMismatchError, LoopStateError, TracingError
from autograph.runtime.staging import errors

__all__ = ["Accumulator", "Appended", "TracedList", "accumulate", "appended", "grown_in_one_branch", "is_accumulating",
           "length", "rebind", "stack", "truth", "truth_of"]


def _refuse(self, *args, **kwargs):
    raise self.acc.read_error()


class Appended:
    """What an accumulated list holds first inside a staged loop's body: the
    elements before this iteration's, not known while tracing."""

    __slots__ = ("acc",)

    def __init__(self, acc):
        self.acc = acc

    def __repr__(self):
        return f"<the elements appended to {self.acc.name!r} before this iteration>"

    def __getattr__(self, name):
        raise AttributeError(str(self.acc.read_error()))

    __array__ = __bool__ = __len__ = __iter__ = __index__ = __int__ = __float__ = __call__ = _refuse
    __getitem__ = __neg__ = __abs__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = _refuse
    __rmatmul__ = __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __xor__ = _refuse
    __eq__ = __ne__ = _refuse
    __hash__ = object.__hash__


def is_accumulating(value):
    """True for a list that a staged loop's body is accumulating."""
    return type(value) is list and bool(value) and type(value[0]) is Appended


def appended(before, now):
    """The elements appended to a list that held `before` and now holds
    `now`, or None if it changed otherwise."""
    if len(now) <= len(before) or any(a is not b for a, b in zip(before, now, strict=False)):
        return None
    return now[len(before):]


def length(value):
    """`len()` of an accumulating list: the traced number of elements."""
    acc = value[0].acc
    if type(acc) is _Moved:
        raise acc.read_error()
    n = acc.count + (len(value) - 1)
    while acc.outer is not None:  # the loops it is nested in append to the list too
        acc = acc.outer
        n = acc.count + n
    return n


def truth(value):
    """`bool()` of an accumulating list, as a traced value."""
    return length(value) > 0


class Accumulator:
    """A list `holder` that a staged loop accumulates; `prefix` its elements
    before the loop."""

    __slots__ = ("backend", "buffer", "count", "holder", "loc", "marker", "name", "outer", "prefix", "rows",
                 "seen", "step", "type", "what", "written")

    def __init__(self, backend, holder, name, prefix, elements, what, loc):
        self.backend, self.holder, self.name, self.prefix = backend, holder, name, list(prefix)
        self.what, self.loc = what, loc
        self.type = None     # of the elements
        self.rows = 1        # elements the traced body can append in one iteration, at most
        self.marker = Appended(self)
        self.buffer = self.count = None  # while the body is traced
        self.step = 0        # elements each iteration appends, or None where it depends on the path
        self.written = 0     # elements the body wrote into the buffer, over all its paths
        # A list that an enclosing staged loop accumulates too starts with its marker.
        self.outer = self.prefix[0].acc if is_accumulating(self.prefix) else None
        self.seen = None     # the type of the elements of the current trace of the body
        self.check(self.values() + list(elements))
        self.rows = max(1, len(elements))

    # Messages -------------------------------------------------------------

    def read_error(self):
        return TracingError(
            f"'{self.name}' is a list accumulated in {self.what} ({self.loc}): inside the loop only "
            f"`{self.name}.append(...)` and `len({self.name})` work on it, its elements are known only "
            "after the loop; carry the value you need in a variable of its own")

    def changed_error(self, now):
        return errors.list_changed(self.name, self.what, self.loc)

    def values(self):
        """The elements before the loop that it knows (not an enclosing
        loop's marker)."""
        return list(self.prefix[1:] if self.outer is not None else self.prefix)

    # Element types ----------------------------------------------------------

    def check(self, elements):
        """Checks the types of `elements`, appended in one trace of the
        body: all elements of a trace have one dtype and shape (numbers of
        one kind and arrays of their dtype agree). Widens the buffer's type
        and returns True where the loop must be traced again (a loop
        variable the elements come from widened)."""
        backend = self.backend
        for e in elements:
            if not backend.is_value(e):
                raise LoopStateError(
                    f"'{self.name}' is a list appended to in {self.what} ({self.loc}), and "
                    f"{backend.describe(e)} is appended to it; a list appended to in a traced loop "
                    f"can hold only numbers and {backend.array}s, of one dtype and shape")
            t = backend.typeof(e)
            if self.seen is None:
                self.seen = t
                continue
            merged = backend.merge(self.seen, t)
            if merged is None or merged[1] != self.seen[1] or merged[1] != t[1] \
                    or len(merged[0]) != len(self.seen[0]):
                raise LoopStateError(
                    f"'{self.name}' is a list appended to in {self.what} ({self.loc}), and it holds "
                    f"both {backend.describe_type(self.seen)} and {backend.describe(e)}; "
                    "the elements of a list appended to in a traced loop must have one dtype and "
                    f"shape, as the rows of one {backend.array} (convert them, for example with "
                    f"{backend.cast_hint})")
            self.seen = merged
        if self.seen is None or self.type == self.seen:
            return False
        merged = self.seen if self.type is None else backend.merge(self.type, self.seen)
        if merged is None:
            merged = self.seen
        if merged == self.type:
            return False
        self.type = merged
        return True

    # In the traced loop ---------------------------------------------------------

    def entry(self, trips):
        """(buffer, count) as they enter the loop: `trips` is the number of
        iterations the loop can run at most, None if not known. The buffer
        holds the elements before the loop first."""
        backend, values = self.backend, self.values()
        n = len(values)
        capacity = None if trips is None else n + trips * self.rows
        buffer = backend.buffer(self.type, capacity, self.name, self.what, self.loc)
        for j, e in enumerate(values):
            buffer = backend.buffer_write(buffer, j, backend.cast(e, self.type))
        return buffer, n

    def enter(self, buffer, count):
        self.buffer, self.count, self.step, self.written = buffer, count, 0, 0
        self.seen = self.type if self.values() else None  # the elements before the loop are in the buffer
        self.holder[:] = [self.marker]

    def flush(self):
        """Writes this iteration's elements so far into the buffer."""
        now = self.holder
        if not now or now[0] is not self.marker:
            raise self.changed_error(now)
        elements = now[1:]
        if self.check(elements):
            raise Widen
        backend = self.backend
        for e in elements:
            self.buffer = backend.buffer_write(self.buffer, self.count, backend.cast(e, self.type))
            self.count = self.count + 1
        self.written += len(elements)
        if self.step is not None:
            self.step += len(elements)
        now[:] = [self.marker]

    def leave(self):
        """(buffer, count) after an iteration."""
        self.flush()
        if self.written > self.rows:
            self.rows = self.written
            raise Widen
        return self.buffer, self.count

    def finish(self, buffer, count, trips):
        """Gives the list its elements after the loop, which ran `trips`
        iterations (None if that is not known while tracing). Where the
        number of elements is not known while tracing, returns the
        `TracedList` that the list's variable must hold instead."""
        backend, t, n = self.backend, self.type, len(self.values())
        if trips is None or self.step is None:
            why = "depends on which way an `if` goes" if self.step is None else \
                "depends on how many iterations the loop runs"
            if self.outer is not None:
                raise TracingError(
                    f"'{self.name}' is a list appended to in {self.what} ({self.loc}), inside a loop "
                    f"that appends to it too, and the number of elements the inner loop appends {why}: "
                    "only a loop of a known number of iterations, appending as many elements in each, "
                    "can append to a list an enclosing traced loop appends to")
            return TracedList(backend, backend.buffer_rows(buffer, count), count, self.name,
                              f"a list appended to in {self.what} ({self.loc}), whose length {why}")
        self.holder[:] = self.prefix + [backend.cast(backend.buffer_row(buffer, j), t)
                                       for j in range(n, n + trips * self.step)]
        return None


class Grown(Exception):
    """A list that a branch of an `if` inside a staged loop's body appends
    to, the other not: the loop accumulates it (`elements`: some that are
    appended, or None), or raises `error`."""

    def __init__(self, holder, elements, error):
        super().__init__()
        self.holder, self.elements, self.error = holder, elements, error


class Widen(Exception):
    """An accumulated list needs another type or more rows: trace again."""


tracing_loops = [0]  # how many staged loops are being traced (places.loop counts them)


def grown_in_one_branch(container, holder, first, where):
    """A list that the branches of a staged `if` give different lengths
    (`container`: what places recorded of it, `first`: the number of
    elements in the first branch traced, and those it appended): one a
    staged loop accumulates (Grown), or an error."""
    _, _, name, before = container
    first, grown = first
    error = BranchMismatchError(
        f"'{name}' is a list that the branches of an `if` whose condition is traced ({where}) change "
        f"to different lengths ({first} and {len(holder)} elements): after the `if` its length would "
        "depend on the condition. Change it the same way in both branches, or, in a traced loop, "
        "append to it")
    if not tracing_loops[0]:
        raise error
    if len(holder) > first and appended(before, holder) is not None:
        raise Grown(holder, holder[len(before):], error)
    raise Grown(holder, list(grown) if len(holder) < first and grown else None, error)


def accumulate(containers, changed, accumulated, backend, what, where, elements=None):
    """Makes each list among the `changed` places (places.Place) that a
    loop body appended to an accumulated list (`accumulated`: id of the
    list -> its Accumulator); True if there is one."""
    grown = False
    for place in changed:
        if place.kind != "list" or backend is None:
            continue
        prefix = containers[id(place.holder)][3]
        new = elements if elements is not None else appended(prefix, place.holder)
        if new is None and len(prefix) != len(place.holder):
            raise errors.list_changed(place.name, what or "a traced loop", where)
        if new is not None:
            accumulated[id(place.holder)] = Accumulator(
                backend, place.holder, place.name, prefix, new, what or "a traced loop", where)
            grown = True
    return grown


class TracedList:
    """What a list appended to in a staged loop is after it where its length
    is known only when the program runs: `rows` holds its elements (the
    first `length` of them, where the backend's arrays have a fixed size).
    `len()`, indexing, iteration and stacking work in converted code;
    changing it raises."""

    __slots__ = ("backend", "length", "name", "rows", "what")

    def __init__(self, backend, rows, length, name, what):
        self.backend, self.rows, self.length, self.name, self.what = backend, rows, length, name, what

    def __repr__(self):
        return f"<'{self.name}': {self.what}>"

    def _error(self, doing):
        return TracingError(
            f"'{self.name}' is {self.what}: {doing}; after the loop such a list can only be read, "
            f"with len({self.name}), {self.name}[i], a `for` loop over it or np.stack({self.name}) "
            "(autograph.stack), in converted code")

    def stacked(self):
        """The elements as one array, where the backend's arrays can have a
        length known only when the program runs."""
        rows = self.backend.exact_rows(self.rows, self.length)
        if rows is None:
            raise TracingError(
                f"'{self.name}' is {self.what}: it cannot be stacked or iterated over, since "
                f"{self.backend.array}s traced by {self.backend.name} have a shape known while tracing; "
                "read its elements by index and its length with len(), or append the same number of "
                "elements in each iteration of a loop whose number of iterations is known")
        return rows

    def __getitem__(self, index):
        if type(index) is slice:
            raise self._error("it cannot be sliced")
        return self.backend.row_at(self.rows, self.length, index, self.name)

    def __len__(self):
        self.stacked()  # what a backend of fixed-size arrays says (jnp.stack asks len() first)
        raise self._error("len() from code that is not converted (a library function, say) needs a Python int")

    def __iter__(self):
        self.stacked()  # what a backend of fixed-size arrays says
        raise self._error("it cannot be iterated over by code that is not converted")

    def __bool__(self):
        raise self._error("its truth value is traced")

    def _changing(self, *args, **kwargs):
        raise self._error("it cannot be changed")

    append = extend = insert = pop = remove = clear = sort = reverse = __setitem__ = __delitem__ = _changing
    __add__ = __radd__ = __iadd__ = __mul__ = __rmul__ = _changing

    def call(self, func, args, kwargs):
        """`func(*args, **kwargs)` from converted code, this among `args`."""
        import numpy as np
        if func is len:
            return self.length
        if func in (np.stack, np.array, np.asarray, np.asanyarray, stack) and args[0] is self and len(args) == 1:
            rows = self.stacked()
            axis = kwargs.pop("axis", 0)
            if kwargs:
                return func(rows, **kwargs)
            return rows if axis == 0 else np.moveaxis(rows, 0, axis)
        raise self._error(f"{getattr(func, '__name__', 'the function')}() cannot take it")


_HELD = ("it is also held elsewhere (by an attribute, a container, an argument or a variable of code "
         "that is not converted), which cannot be made to hold it: keep it in a local variable of the "
         "converted function")


def rebind(acc, value, recorded_cells):
    """Makes the variables (among `recorded_cells`) that hold the list of
    `acc` hold `value`.
    Raises where the list is held by an object other than those variables
    (an attribute, a container): that would still see the list. A variable
    of a running function that is not converted raises too; the list then
    holds a marker that raises when converted code reads it."""
    import gc
    holder, acc.holder = acc.holder, None
    cells = []  # (no comprehension: it would hold `holder` in a cell of its own)
    for entry in recorded_cells:
        if entry[2] is holder:
            cells.append(entry[0])
    if not cells or _held_elsewhere(holder, cells):
        gc.collect()  # what is left of earlier traces (frames of their exceptions) goes
        if not cells or _held_elsewhere(holder, cells):
            raise value._error(_HELD)
    if _held_by_unconverted_caller(holder):
        raise value._error(_HELD)
    for cell in cells:
        cell.cell_contents = value
    holder[:] = [Appended(_Moved(value))]  # for a reference the check cannot see


def _held_elsewhere(holder, cells):
    """Whether list `holder` is held by an object other than `cells` and this
    package's bookkeeping (an attribute, a container, another closure). A
    running frame's variables, and the dict of them that reading its
    `f_locals` (or `locals()`) leaves on it, do not count."""
    import gc
    import sys
    import types
    for r in gc.get_referrers(holder):
        t = type(r)
        if not (t is types.CellType and any(r is c for c in cells) or t is types.FrameType
                or t is dict and _frame_locals(r, sys._getframe(1))
                or (getattr(t, "__module__", "") or "").startswith("autograph.")):
            return True
    return False


def _frame_locals(d, frame):
    """Whether dict `d` is the `f_locals` of `frame` or of a function that
    called it (not a module's: its globals are its `f_locals`)."""
    while frame is not None:
        if d is not frame.f_globals and frame.f_locals is d:
            return True
        frame = frame.f_back
    return False


def _held_by_unconverted_caller(holder):
    """Whether a running function that is not converted (a caller of the
    converted function, such as the function `jax.jit` traces) holds list
    `holder` in a variable of its own: `len()` there would not see the
    elements. Converted code (whose code reads `ag__` from a cell) reads
    the list through the marker `rebind` leaves, which raises."""
    import sys
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "") or ""
        if not module.startswith("autograph.") and "ag__" not in frame.f_code.co_freevars:
            if any(v is holder for v in frame.f_locals.values()):
                return True
        frame = frame.f_back
    return False


class _Moved:
    """What the list itself then holds, for a variable that still holds it
    (of a caller that is not converted, say): reading it raises."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def read_error(self):
        return self.value._error("this is the list as it was before the loop, which a variable of code "
                                 "that is not converted (or an argument) still holds")


def truth_of(value):
    """The truth of a value that converted code tests: traced for a list
    accumulated or traced in a staged loop."""
    if type(value) is TracedList:
        return value.length > 0
    if is_accumulating(value):
        return truth(value)
    return value


def stack(values: Sequence[Any], axis: int = 0) -> Any:
    """`np.stack(values)`, `jnp.stack(values)` or `torch.stack(values)`,
    whichever framework the elements are of (the first registered backend
    whose `stack` takes them; numpy otherwise): for code that should not
    depend on one (a list accumulated in a loop, say)."""
    import numpy as np
    if type(values) is TracedList:
        return values.call(stack, (values,), {"axis": axis})
    if not len(values):
        raise ValueError("need at least one array to stack")
    for backend in backends.registered():
        stacked = backend.stack(values, axis)
        if stacked is not NotImplemented:
            return stacked
    return np.stack(values, axis=axis)
