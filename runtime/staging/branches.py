"""The outputs of a staged `if`: the rules that merge what its two branches
give each variable, for every backend.

Per leaf of the outputs (see `values.Flat`):

  * the same Python value in both branches (the backend's `same_leaf`) stays that
    value: it is not staged;
  * a variable defined in one branch only is an `UndefinedOutputError`;
  * a lowered `return` that ran in one branch only takes, in the other,
    zeros of the returned value's type: code reads it only where the
    function has returned;
  * numbers and arrays merge into the type both can take (the backend's
    `merge`: a Python number widens to the array's dtype), or raise
    `BranchMismatchError`; so does any other Python value that differs.

A backend stages the branches in one of two ways. One that can add
operations to a branch after tracing it (the numpy tracer) traces both
(`trace`), then `settle`s, then asks each branch's `outputs`. One whose
tracer takes each branch as a function (JAX, PyTorch) gives it `callback(k)`:
the branch traced second settles, and if the first one output other types
the `if` is traced again (`values.Retry`) with the settled ones.
"""

from autograph.runtime.backends import unchanged
from autograph.runtime.staging import errors
from autograph.runtime.staging.values import Retry
from autograph.runtime.undefined import Undefined, UndefinedReturnValue

__all__ = ["Branches", "computes_nothing"]

# The kinds of a plan's entries, "static" and "carried", are written as
# literals: dynamo guards each module constant that the code it traces reads,
# on every call of the compiled function (and each read of it, again).


class Branches:
    """One staged `if`: `true_fn(*operands)` and `false_fn(*operands)` (None:
    the state unchanged), whose outputs are the variables `names`."""

    def __init__(self, backend, true_fn, false_fn, operands, names, loc):
        self.backend, self.names, self.loc = backend, names, loc
        self.count = count = len(names)

        def same(*state):
            return unchanged(state, count)
        self.fns = tuple(same if fn is None else fn for fn in (true_fn, false_fn))
        self.given = (true_fn, false_fn)
        self.operands = tuple(operands)
        self.flats = [None, None]  # per branch, its outputs as a `Flat`
        self.plan = None           # per leaf, ("static", value) or ("carried", type)
        self.returned = {}         # leaf -> the only branch (0, 1) in which a lowered `return` ran
        self.mixed = ()            # carried leaves that are a Python number in one branch only
        self.memo = {}             # what the backend keeps across attempts

    @property
    def what(self):
        """The statement, as messages name it: made only for a message (under
        dynamo, each read of the backend's `traced` is a guard)."""
        what = "a conditional expression" if self.names == ("<expression>",) else "an `if`"
        return f"{what} whose condition is {self.backend.traced}"

    # Tracing --------------------------------------------------------------------

    @property
    def trivial(self):
        """Per branch, whether it computes nothing (`computes_nothing`): a
        backend may run it where the `if` is, without a trace of its own."""
        return tuple(computes_nothing(fn) for fn in self.given)

    def run(self, stage, attempts=8):
        """`stage()` stages the branches and returns the values of the carried
        leaves; traced again while it raises `Retry`, up to `attempts` times.
        Returns the statement's outputs (as a body returns them)."""
        for _attempt in range(attempts):
            self.flats = [None, None]
            try:
                outs = stage()
            except Retry:
                continue
            return self.result(outs)
        raise errors.branches_do_not_settle(self.what, self.loc)

    def trace(self, k, *ran):
        """Runs branch `k` (0: true, 1: false), or records its result `ran[0]`
        if the backend ran it (None too: a branch without outputs, which
        must not run twice)."""
        result = ran[0] if ran else self.fns[k](*self.operands)
        self.flats[k] = self.backend.flat(self.normalize(result))

    def normalize(self, result):
        """A branch's `result` as a tuple of the statement's outputs."""
        return self.backend.normalize(result, self.count, "branch")

    def operand_name(self, i):
        """Operand `i` as messages name it: the first operands are the
        statement's outputs, the others what the branches change and nothing
        reads after the `if`."""
        return f"`{self.names[i]}`" if i < self.count else "a tensor that a branch changes"

    def traced(self):
        return self.flats[0] is not None and self.flats[1] is not None

    def callback(self, k, call=None):
        """Branch `k` as a function of no arguments that returns the values
        of the carried leaves, for a tracer that traces branches itself.
        `call()`, if given, runs the branch and returns its result."""
        def branch():
            if call is None:
                self.trace(k)
            else:
                self.trace(k, call())
            if self.traced():
                if self.settle():
                    raise Retry
            elif self.plan is None:
                self.plan = [("carried", self.backend.typeof(leaf)) if self.backend.is_value(leaf)
                             else ("static", leaf) for leaf in self.flats[k].leaves]
            return self.outputs(k)
        return branch

    # The rules ------------------------------------------------------------------

    def settle(self):
        """Merges the outputs of the two traced branches into the plan;
        returns True if the plan changed (the carried leaves or their shapes
        and dtypes)."""
        backend, loc = self.backend, self.loc
        t_flat, f_flat = self.flats
        for i in range(len(self.names)):
            if t_flat.treedefs[i] != f_flat.treedefs[i]:
                raise errors.branch_structure(
                    self.names[i], t_flat.rebuild(t_flat.leaves)[i], f_flat.rebuild(f_flat.leaves)[i],
                    self.what, loc)
        plan, returned_in, mixed = [], {}, []
        for j in range(len(t_flat.leaves)):  # as many as f_flat's: the treedefs are equal
            a, b = t_flat.leaves[j], f_flat.leaves[j]
            name = self.names[t_flat.owner[j]]
            values = backend.is_value(a) and backend.is_value(b)
            # The markers (Undefined, a `return` not run) are no values: only a
            # leaf that is not one reads their classes (under dynamo, a guard each).
            if not values:
                returned = self._returned_once(a, b)
                if returned and returned[0] is None:
                    plan.append(("static", None))
                    continue
                if returned and backend.is_value(returned[0]):
                    # The branch that has not returned outputs zeros of its type.
                    plan.append(("carried", backend.typeof(returned[0])))
                    returned_in[j] = 0 if type(b) is UndefinedReturnValue else 1
                    continue
                if (type(a) is Undefined) != (type(b) is Undefined):
                    raise errors.one_branch(name, type(b) is Undefined, self.what, loc)
            if backend.same_leaf(a, b):
                plan.append(("static", a))
                continue
            if not values:
                raise errors.branch_python(name, backend.describe(a), backend.describe(b), self.what, loc)
            a_type, b_type = backend.typeof(a), backend.typeof(b)
            merged = backend.merge(a_type, b_type)
            if merged is None:
                raise errors.branch_type(name, backend.describe(a), backend.describe(b), self.what, loc)
            if a_type[2] != b_type[2] and backend.arrays_change_in_place:
                mixed.append(j)
            plan.append(("carried", merged))
        changed = self.plan is None or [self._key(p) for p in plan] != [self._key(p) for p in self.plan]
        self.plan, self.returned, self.mixed = plan, returned_in, mixed
        return changed

    def outputs(self, k):
        """The carried leaves of branch `k` as values of their merged types,
        made where the backend traces that branch."""
        out = []
        plan, leaves = self.plan, self.flats[k].leaves
        for j in range(len(plan)):
            kind, t = plan[j]
            if kind == "carried":
                value = self.cast(leaves[j], t)
                if value is None:
                    raise self.cannot_cast(k, j, t)
                out.append(value)
        return out

    def cannot_cast(self, k, j, t):
        """The error for leaf `j` of branch `k`, which type `t` cannot hold."""
        name, leaf = self.names[self.flats[k].owner[j]], self.flats[k].leaves[j]
        if type(leaf) in (int, float):
            return errors.number_out_of_range(errors.BranchMismatchError, name, self.backend.describe(leaf),
                                              self.backend.describe_type(t), self.what, self.loc)
        a, b = (self.flats[0].leaves[j], self.flats[1].leaves[j])
        return errors.branch_type(name, self.backend.describe(a), self.backend.describe(b), self.what, self.loc)

    def cast(self, leaf, t):
        """A branch's output `leaf` as a value of type `t` (None if it cannot
        be): zeros where a lowered `return` has not run."""
        if not self.backend.is_value(leaf) and type(leaf) is UndefinedReturnValue:
            leaf = False
        return self.backend.cast(leaf, t)

    def carried(self):
        """(type, variable name) of each carried leaf."""
        owner = self.flats[0].owner
        return [(self.plan[j][1], self.names[owner[j]]) for j in self.carried_leaves()]

    def returned_in(self):
        """Per output (carried leaf, in order), the branch (0: true, 1:
        false) in which a lowered `return` ran where it ran in one branch
        only, else None. Code reads such an output only where the function
        has returned (its return flag says so), so a backend that computes
        both branches may output that branch's value whichever way the `if`
        goes, with no select of the other's zeros."""
        return [self.returned.get(j) for j in self.carried_leaves()]

    def leaf_name(self, j):
        """The variable of leaf `j` as messages name it (None for a conditional
        expression's value)."""
        name = self.names[self.flats[0].owner[j]]
        return None if name == "<expression>" else f"`{name}`"

    def carried_leaves(self):
        """The positions of the carried leaves, in the order of the outputs."""
        plan = self.plan
        return [j for j in range(len(plan)) if plan[j][0] == "carried"]

    # A helper that dynamo traces is a method: it guards each module function
    # that the code it traces reads, on every call of the compiled function,
    # but no method of an object that the trace made.

    def _returned_once(self, a, b):
        """Where a lowered `return` ran in one branch only: (the value it
        returned there,); () otherwise."""
        if (type(a) is UndefinedReturnValue) == (type(b) is UndefinedReturnValue) \
                or type(a) is Undefined or type(b) is Undefined:
            return ()
        return (b if type(a) is UndefinedReturnValue else a,)

    def result(self, outs):
        """The statement's outputs, as a body returns them (`values.pack`):
        `outs` gives the carried leaves, in order."""
        leaves, i, backend = [], 0, self.backend
        for j, (kind, v) in enumerate(self.plan):
            if kind == "carried":  # v is its type: weak for a Python number
                out, i = outs[i], i + 1
                if j in self.mixed:
                    out = backend.number_or_array(out, self.leaf_name(j), self.what, self.loc)
                leaves.append(backend.number(out) if v[2] else out)
            else:
                leaves.append(v)
        values = self.flats[0].rebuild(leaves)
        return None if self.count == 0 else values[0] if self.count == 1 else values

    def _key(self, entry):
        """What of a plan's entry the traced branches depend on."""
        kind, v = entry
        return (kind, v[:2]) if kind == "carried" else (kind,)


def computes_nothing(fn):
    """True for a branch that leaves the state as it is (None: `if c:
    break`, an `if` without `else`) or returns a value that exists already
    (the left operand of `and`), as its `trivial` attribute says."""
    return fn is None or getattr(fn, "trivial", False)
