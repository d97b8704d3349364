"""Aliasing and write-back: what Python's names see of a tensor that a
staged statement changes in place or gives as it is.

Torch traces a body on copies of what it changes, and gives a statement's
outputs as new tensors. So the backend writes a body's in-place changes
back into the tensors outside (`written_back`, `write_back`), so that their
other names, their views and the caller see them, as in Python; marks the
outputs that Python's would be another tensor's view or that tensor itself
(`mark_views`, `mark_origins`), and refuses a later change in place of
those (`refuse_view_output`), which would not reach that tensor. What
cannot be written back is refused, naming the variable and the line.
"""

from autograph.runtime.torch import compat
from autograph.runtime.torch import errors as torch_errors

__all__ = ["LEAVES_DEPTH", "PACKAGE", "Aliasing", "named_elsewhere"]

PACKAGE = __name__.split(".")[0] + "."
#: How deep `named_elsewhere`'s `leaves` look into a variable.
LEAVES_DEPTH = 3


def named_elsewhere(frames, candidates, leaves):
    """The positions of `candidates` (a staged statement's operands) that a
    variable of the user's code holds, itself, a view of it, or in a list,
    tuple or dict: tensors that other names hold after the statement (`z`
    after `z = y`, in `if c: y = y * 2`), where a body that gives one as it
    is makes the statement's output a new tensor. `frames` are (module
    name, {name: value}, names) per frame, innermost first, `names` the
    variables that a frame of this package was called to stage (its local
    `names`: those of `if_stmt`, `while_stmt`, `for_stmt`), which the user's
    frame that called it assigns and which do not count; torch's frames do
    not count either. `leaves(value)` gives (tensor, the tensor it views or
    None) per tensor in `value`, as `candidates` are given."""
    found, skip = set(), ()
    for module, local, names in frames:
        if module.startswith(PACKAGE):
            skip = names
            continue
        if not module.startswith("torch"):
            for name, value in local.items():
                if name not in skip:
                    for t, base in leaves(value, LEAVES_DEPTH):
                        found.update(i for i, c in enumerate(candidates) if c is not None and (c is t or c is base))
        skip = ()
    return found


class Aliasing:
    """The torch backend's methods for aliasing and write-back (both the
    non-strict export path and dynamo's)."""

    __slots__ = ()

    def in_place(self, target):
        self.refuse_view_output(target)
        return target

    def mark_views(self, outs, views):
        """Marks the outputs `outs[c]`, for each (c, (name, what, loc,
        kind)) in `views[0]`, of a staged statement that gives on some
        way through it a view of another tensor there (kind "view": `a = b
        if c else x[4]`), or ("passed") a tensor that other names may hold (the
        caller's `x`, where a branch leaves it): torch's operators give new
        tensors, so a later change in place (`a *= 2`) would not reach that
        tensor, and `refuse_view_output` refuses it. An attribute, as
        `number` sets one (`_autograph_view`, with the graph token under
        dynamo). `views[1]` goes to `mark_origins`. Returns `outs`."""
        views, origins = views
        self.mark_origins(origins)
        for c, where in views:
            t = outs[c]
            if [o for o, _ in origins if o is t]:  # a probe gives that tensor itself: marked as it is
                self.mark_origins([(t, where)])
                continue
            self._mark_output(t, where)
        return outs

    def number_or_array(self, t, name, what, loc):
        """Marks tensor `t` (see `Backend.number_or_array`) for
        `refuse_view_output`, which refuses a change in place of it, unless
        `mark_views` marked it already."""
        if isinstance(t, self.tensor_type()) and getattr(t, "_autograph_view", None) is None:
            self._mark_output(t, (name, what, loc, "number"))
        return t

    def _mark_output(self, t, where):
        """Marks `t` for `refuse_view_output`: `where` is (name, what, loc,
        kind), kind "view", "passed" (see `mark_views`) or "number"
        (`number_or_array`)."""
        if self.compiling():
            self.markable(t)
            t._autograph_view = (self.graph_token(), where)
        else:
            t._autograph_view = (True, where)

    def mark_origins(self, origins):
        """Marks each tensor `t`, for each (t, (name, what, loc)) in
        `origins`, that a staged statement gives as it is on some way
        through it (`y = x if c else -x`, for `t` the tensor `x` holds):
        torch gives a new tensor as the output `name`, so a later change
        in place of `t` (`x += 1`) would not reach it, and
        `refuse_view_output` refuses that change. Under dynamo a table
        of the graph being built (`t` may be the caller's tensor, on
        which dynamo would set an attribute after each call), whose
        probes give each body copies; otherwise an attribute, which
        holds while the body that made it is traced (export.py, `_body`). An
        output's mark (`mark_views`) goes here too, as (name, what, loc,
        kind), where a probe gives the tensor that passes through."""
        for t, where in origins:
            if self.compiling():
                self.mark_origin(t, where)
            else:
                bodies = self.export_bodies()
                t._autograph_origin = (bodies[-1] if bodies else 0, where)

    def refuse_view_output(self, target):
        """Refuses to change in place a tensor that `mark_views` or
        `mark_origins` marked in the program being traced (or a view of one
        that `mark_origins` marked)."""
        if not isinstance(target, self.tensor_type()):
            return
        mark = getattr(target, "_autograph_view", None)
        if mark is not None:
            token, (name, what, loc, kind) = mark
            if (token == self.graph_token() or self.resuming()) if self.compiling() else compat.is_fake(target):
                raise torch_errors.view_output_changed(name, what, loc, self.location(), kind)
        if self.compiling():
            origin = self.origin_of(target)
        elif compat.is_fake(target):
            origin, bodies = None, self.export_bodies()
            for t in (target, target._base):
                body, where = getattr(t, "_autograph_origin", (None, None))
                if where is not None and (body == 0 or body in bodies):
                    origin = where
        else:
            return
        if origin is not None and len(origin) == 4:  # (an output's mark, where it is the tensor that passes through)
            name, what, loc, kind = origin
            raise torch_errors.view_output_changed(name, what, loc, self.location(), kind)
        if origin is not None:
            raise torch_errors.origin_changed(*origin, self.location())

    def refuse_views_changed(self, statement, values, changed, name):
        """Refuses a body that changes in place (`a += 1`) one of `values`
        (at the positions in `changed`) that is a view of another tensor:
        Python changes the tensor it views too, but torch traces the body
        on a copy. `name(i)` names position i in the message."""
        for i in changed:
            v = values[i]
            if isinstance(v, self.tensor_type()) and v._base is not None:
                raise torch_errors.view_changed_in_place(name(i), statement.what, statement.loc)

    def written_back(self, branches, changes, results, values):
        """How the operands of `branches` that a branch changes in place
        (`changes[k]`, their positions for branch k: `y[i] = v`, `y += 1`,
        `z = y; z[i] = v`) are updated, since torch traces bodies on copies:
        after the statement, each operand gets the last value of its copy
        (`write_back`), so that its other names, its views and the caller
        see the change, as in Python. `results[k]` and `values[k]` are the
        outputs and the operands as branch k ran. Returns (written, extras):
        `extras` are the operands whose copies the branches give as extra
        outputs, after the carried ones; `written` has (operand, output,
        same) per changed operand, `output` being its position among those
        outputs, and `same` True where that output is the operand's copy in
        both branches (the variable is then the operand itself, as in
        Python: `y[0] = 5` changes `y`, which stays the same tensor)."""
        carried = branches.carried_leaves()
        written, extras = [], []
        for i in changes[0] | changes[1]:
            if i < branches.count and results[0][i] is values[0][i] and results[1][i] is values[1][i]:
                written.append((i, carried.index(branches.flats[0].owner.index(i)), True))
            else:
                written.append((i, len(carried) + len(extras), False))
                extras.append(i)
        return written, extras

    def refuse_replaced(self, loop, positions, changed, outs, values):
        """Refuses a loop body that changes the carried tensor at one of the
        positions in `changed` in place but gives back another tensor there
        (`outs[i]` is not `values[i]`, the tensor that the body got): the
        tensor that entered the loop cannot then be updated as Python's is.
        Otherwise the loop's last value is written back into it.
        `positions` are the leaves of the carry (`sorted(loop.types)`)."""
        for i in changed:
            if outs[i] is not values[i]:
                raise torch_errors.changed_in_place_and_assigned(loop.leaf_name(positions[i]), loop.what, loop.loc)

    def views_given(self, branches, views, passed, written):
        """For `mark_views`: ((carried output, (name, what, loc, kind)),
        (tensor, (name, what, loc))) for each output of `branches` that a
        branch gives as a view of another tensor (`x[4]`, or an operand that
        is one: `views` are their leaf positions), or else as a tensor that
        other names may hold (`passed`, {leaf position: that tensor}: the
        caller's `x` where a branch leaves `x` or assigns `y = x`, a tensor
        that a name outside holds in `y = t if c else -t`), but the outputs
        that `write_back` makes the operand itself (`written`); the second
        list has the tensors that `passed` holds."""
        same = [out for _, out, is_same in written if is_same]
        marks, origins = [], []
        for c, j in enumerate(branches.carried_leaves()):
            if (j in views or j in passed) and c not in same:
                name = branches.leaf_name(j)
                marks.append((c, (name, branches.what, branches.loc, "view" if j in views else "passed")))
                if j in passed and j not in views:
                    origins.append((passed[j], (name, branches.what, branches.loc)))
        return marks, origins

    def loop_views(self, loop, positions, views, changed):
        """`views_given` for a loop: `views` are the positions of the views
        that its body gives, among the state's leaves, of those that enter
        it (its outputs where it runs no iteration), in the carry, of the
        tensors that other names may hold (see `_probe`) that the body gives
        back, among the leaves, and of those that enter it, in the carry:
        where the loop runs no iteration, its output is such a tensor (the
        last two: {position: that tensor}). Not where the body changes it in
        place (at the positions `changed`): `write_back` makes the loop's
        output that tensor itself."""
        given, entering, passed, held = views
        marks, origins = [], []
        for i, j in enumerate(positions):
            if j in given or i in entering:
                marks.append((i, (loop.leaf_name(j), loop.what, loop.loc, "view")))
            elif (j in passed or i in held) and i not in changed:
                marks.append((i, (loop.leaf_name(j), loop.what, loop.loc, "passed")))
                origins += [(t, (loop.leaf_name(j), loop.what, loop.loc))
                            for t in (passed.get(j), held.get(i)) if t is not None]
        return marks, origins

    def write_back(self, originals, written, outs):
        """`outs` (a statement's outputs, carried then extra) after copying,
        for each (operand, output, same) of `written` (see `written_back`),
        the output into `originals[operand]`, which takes its place where
        `same` is True."""
        if not written:
            return outs
        outs = list(outs)
        for i, c, same in written:
            original = originals[i]
            self.refuse_view_output(original)
            original.copy_(outs[c])
            if same:
                outs[c] = original
        return outs

    def distinct(self, outs):
        """`outs` with a copy of each tensor that is also an earlier output
        (`z = y` in a branch): torch refuses outputs that alias each other
        under dynamo, and non-strict export takes them for one output (which
        is wrong where a loop runs zero times)."""
        seen = []
        for v in outs:
            seen.append(v.clone() if isinstance(v, self.tensor_type()) and [s for s in seen if s is v] else v)
        return seen
