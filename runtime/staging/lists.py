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

from autograph.runtime.errors import LoopStateError, TracingError

__all__ = ["Accumulator", "Appended", "appended", "is_accumulating", "length", "stack", "truth"]


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
    return acc.count + (len(acc.prefix) + len(value) - 1)


def truth(value):
    """`bool()` of an accumulating list, as a traced value."""
    return length(value) > 0


class Accumulator:
    """A list `holder` that a staged loop accumulates; `prefix` its elements
    before the loop."""

    def __init__(self, backend, holder, name, prefix, what, loc):
        self.backend, self.holder, self.name, self.prefix = backend, holder, name, list(prefix)
        self.what, self.loc = what, loc
        self.type = None     # of the elements
        self.rows = 1        # elements the traced body can append in one iteration, at most
        self.marker = Appended(self)
        self.buffer = self.count = None  # while the body is traced
        self.step = 0        # elements each iteration appends, or None where it depends on the path
        self.written = 0     # elements the body wrote into the buffer, over all its paths
        elements = list(holder[len(prefix):])
        self.check(elements)
        self.rows = max(1, len(elements))

    # Messages -------------------------------------------------------------

    def read_error(self):
        return TracingError(
            f"'{self.name}' is a list accumulated in {self.what} ({self.loc}): inside the loop only "
            f"`{self.name}.append(...)` and `len({self.name})` work on it, its elements are known only "
            "after the loop; carry the value you need in a variable of its own")

    def changed_error(self, now):
        return LoopStateError(
            f"'{self.name}' is a list accumulated in {self.what} ({self.loc}), and an iteration "
            f"changes it otherwise than by appending (it holds {len(now) - 1} of this iteration's "
            f"elements after it, the earlier ones {'removed' if not now else 'replaced'}): inside a "
            "traced loop a list can only be appended to (pop, insert, remove and item assignment "
            "are for lists the loop does not change)")

    # Element types ----------------------------------------------------------

    def check(self, elements):
        """Checks the types of `elements`; widens the elements' type and
        returns True where the loop must be traced again."""
        backend = self.backend
        for e in elements:
            if not backend.is_value(e):
                raise LoopStateError(
                    f"'{self.name}' is a list appended to in {self.what} ({self.loc}), and "
                    f"{backend.describe(e)} is appended to it; a list appended to in a traced loop "
                    f"can hold only numbers and {backend.array}s, of one dtype and shape")
            t = backend.typeof(e)
            if self.type is None:
                self.type = t
                continue
            merged = backend.merge(self.type, t)
            if merged is None or merged[:2] != self.type[:2] and not (
                    self.type[2] or merged[1] == self.type[1] and len(merged[0]) == len(self.type[0])):
                raise LoopStateError(
                    f"'{self.name}' is a list appended to in {self.what} ({self.loc}), and both "
                    f"{backend.describe_type(self.type)} and {backend.describe(e)} are appended to it; "
                    "the elements of a list appended to in a traced loop must have one dtype and "
                    f"shape, as the rows of one {backend.array} (convert them, for example with "
                    f"{backend.cast_hint})")
            if merged[:2] != self.type[:2]:
                self.type = merged
                return True
        return False

    # In the traced loop ---------------------------------------------------------

    def entry(self, trips):
        """(buffer, count) as they enter the loop: `trips` is the number of
        iterations the loop can run at most, None if not known."""
        capacity = None if trips is None else trips * self.rows
        return self.backend.buffer(self.type, capacity, self.name, self.what, self.loc), 0

    def enter(self, buffer, count):
        self.buffer, self.count, self.step, self.written = buffer, count, 0, 0
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
        """The list after the loop, which ran `trips` iterations (None if
        that is not known while tracing)."""
        if trips is None or self.step is None:
            raise TracingError(
                f"the length of '{self.name}', a list appended to in {self.what} ({self.loc}), "
                f"{'depends on which way an `if` goes' if self.step is None else 'is not known while tracing'}"
                f": a traced list must have a length known while tracing. Append the same number of elements "
                "in each iteration of a loop whose number of iterations is known (a `for` over an "
                f"{self.backend.array}, or over a range of known length), or keep a fixed-size "
                f"{self.backend.array} and write into it")
        backend, t = self.backend, self.type
        self.holder[:] = self.prefix + [backend.cast(backend.buffer_row(buffer, j), t)
                                       for j in range(trips * self.step)]


class Widen(Exception):
    """An accumulated list needs another type or more rows: trace again."""


def stack(values, axis=0):
    """`np.stack(values)`, `jnp.stack(values)` or `torch.stack(values)`,
    whichever framework the elements are of: for code that should not
    depend on one (a list accumulated in a loop, say)."""
    import numpy as np
    if not len(values):
        raise ValueError("need at least one array to stack")
    for v in values:
        module = type(v).__module__ or ""
        if module.startswith(("jax", "jaxlib")):
            import jax.numpy as jnp
            return jnp.stack(values, axis=axis)
        if module.startswith("torch"):
            import torch
            return torch.stack([v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for v in values],
                               dim=axis)
    return np.stack(values, axis=axis)
