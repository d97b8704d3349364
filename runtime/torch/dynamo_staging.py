"""How the torch backend stages control flow under `torch.compile` (and
`torch.export(..., strict=True)`), whose tracer, dynamo, runs the bytecode of
converted code itself.

Dynamo sees every tensor as traced: a condition on one has no value while
it traces. The backend then calls dynamo's own higher-order operators,
`torch.cond` and `torch._higher_order_ops.while_loop`, which trace each body
function as a subgraph of the one graph that dynamo builds. They ask more of
a body than torch's operators underneath (which `torch.export`'s non-strict
mode calls; see export.py):

  * a body must not change Python state (dynamo checks it), and the backend
    cannot trace a body again when a type must widen. So each branch, or
    one loop iteration, first runs once in the enclosing graph (the probe),
    on copies of the state: that is how the backend learns what the
    branches give and which types the loop state settles on. The probe's
    results are unused: torch.compile's compilers (inductor, aot_eager)
    drop them;
  * a body may neither modify its inputs in place nor return them (or views
    of them), in any grad mode (with autograd off, inductor is the one that
    refuses). The probe sees which state a body modifies or returns as it
    is: the body gets copies of those. A body that returns a tensor it read
    from outside (`left` in `left and right`, a parameter) returns the same
    object in the probe and in the traced body, where each tensor it makes
    is a new one: such outputs, and views (`x[0]`, whose `_base` is set),
    are copied; nothing else is.

Dynamo lifts the tensors that a body reads from outside (module parameters,
variables of the enclosing function) into subgraph inputs by itself.

What dynamo traces on every staged statement is written as methods of the
backend (this mixin): dynamo guards, on every call of the compiled
function, each function and constant that the code it traces reads from a
module, but not a method that it looks up on the backend, whose type it
checks. What the backend asks of dynamo itself runs outside the trace
(dynamo_trace.py): in `comptime` hooks, which read this method's locals
(`ctx.get_local`), and in methods that dynamo takes as constants.
"""

from autograph.runtime import errors
from autograph.runtime.staging import Branches, Flat, Retry
from autograph.runtime.torch import compat, dynamo_hooks, dynamo_trace
from autograph.runtime.torch import errors as torch_errors

__all__ = ["DynamoStaging"]


class DynamoStaging:
    """What the torch backend (a subclass) does while dynamo traces: its
    helpers are methods, not module functions. Dynamo guards, on every call
    of the compiled function, each function and constant that the code it
    traces reads from a module, but not a method that it looks up on an
    object whose type it checks (the backend): so the code that dynamo
    traces on every staged statement reads as few globals as it can."""

    __slots__ = ()

    # The staging core's classes, as dynamo reads them: through a method whose
    # result it takes as a constant (`_dynamo_marked_constant`, as
    # torch.compiler.assume_constant_result marks it), where it would guard,
    # on every call of what it compiled, each class read from a module. (A
    # class that other modules read too, as loops.py reads Loop, is read as
    # a global: dynamo checks that the class it finds under two names is one
    # object, and cannot name such a constant in that check.)

    def classes(self):
        return Flat, Branches

    classes._dynamo_marked_constant = True

    def flat(self, values):
        return self.classes()[0](values, self.flatten, self.unflatten)

    def branches(self, true_fn, false_fn, operands, names, loc):
        return self.classes()[1](self, true_fn, false_fn, operands, names, loc)

    def normalize(self, result, count, what):
        """`values.normalize`, as a method: dynamo guards a module function."""
        if count == 0:
            return ()
        if count == 1:
            return (result,)
        if not isinstance(result, (tuple, list)) or len(result) != count:
            raise errors.TracingError(f"the {what} must return {count} values, got {result!r}")
        return tuple(result)

    def location(self):
        # Under dynamo `traced_location` runs outside the trace, where
        # `errors.user_location` would cost its module, its defaults and the
        # hook it calls.
        return self.traced_location() or errors.user_location()

    # Trace-time state, which dynamo runs outside the trace (a constant
    # result, as `torch.compiler.assume_constant_result` marks it): methods,
    # which dynamo calls without a guard, where it guards each module function.

    def traced_location(self):
        return dynamo_hooks.traced_location()

    def probes(self, delta):
        return dynamo_trace.probing(delta)

    def objects_made_here(self):
        return dynamo_trace.objects_made_here()

    def last_derived(self):
        return dynamo_trace.state().last_derived

    def dynamo_in_body(self):
        """True while dynamo traces a cond or while_loop body, or a probe."""
        return dynamo_trace.in_body()

    def changed(self):
        """See `dynamo_trace.changed`."""
        return dynamo_trace.changed()

    def graph_token(self):
        return dynamo_trace.graph_token()

    def resuming(self):
        return dynamo_trace.resuming()

    def may_turn_grad_off(self):
        """True if autograd is on where dynamo traces (it sets the mode that
        the traced code enters), under torch.compile: strict torch.export
        then fails on a cond nested in another one in a region with autograd
        off (torch 2.13; docs/pytorch.md, Limitations)."""
        return compat.torch.is_grad_enabled() and not compat.current_translator().export

    traced_location._dynamo_marked_constant = True
    probes._dynamo_marked_constant = True
    objects_made_here._dynamo_marked_constant = True
    last_derived._dynamo_marked_constant = changed._dynamo_marked_constant = True
    dynamo_in_body._dynamo_marked_constant = may_turn_grad_off._dynamo_marked_constant = True

    def mark_derived(self, value):
        """Marks tensor `value` as standing for a Python number, as `number`
        does, if `numbers.derived` says that arithmetic made it from such tensors
        and numbers only (`n = steps * 2`); True if so. The answer comes back
        as a constant: reading the attribute again would make dynamo guard
        it on each input tensor asked about."""
        return self._derived(value, True)

    def derived(self, value):
        """`mark_derived`'s answer, without the mark: a body that dynamo traces
        may not change a tensor from outside it."""
        return self._derived(value, False)

    def _derived(self, value, store):  # (a default value would be a guard)
        from torch._dynamo.comptime import comptime

        def mark(ctx):  # made here: dynamo guards a function read from a module or a class
            dynamo_trace.mark_local_if_derived(ctx)
        comptime(mark)
        return self.last_derived()

    graph_token._dynamo_marked_constant = resuming._dynamo_marked_constant = True

    def markable(self, value):
        """Lets the code that dynamo traces set an attribute on tensor `value`
        (`number` marks a tensor that stands for a Python number): dynamo
        allows it on the tensors that an operation makes, but not on the
        outputs of a torch.cond or while_loop, or on the values that their
        bodies get, until it tracks them as new objects. Trace-time state."""
        from torch._dynamo.comptime import comptime

        def track(ctx):  # made here: dynamo guards a function read from a module or a class
            dynamo_trace.track_local(ctx)
        comptime(track)

    def mark_origin(self, value, where):
        """`mark_origins` for tensor `value` while dynamo traces: a table of
        the graph being built (trace-time state), which `origin_of` reads."""
        from torch._dynamo.comptime import comptime

        def record(ctx):  # made here: dynamo guards a function read from a module or a class
            dynamo_trace.record_origin(ctx)
        comptime(record)

    def origin_of(self, value):
        """The (name, what, loc) with which `mark_origin` marked tensor
        `value`, or the tensor that it views, in the graph being built; None
        if it did not."""
        from torch._dynamo.comptime import comptime

        def find(ctx):  # made here: dynamo guards a function read from a module or a class
            dynamo_trace.find_origin(ctx)
        comptime(find)
        return self.last_origin()

    def last_origin(self):
        return dynamo_trace.state().last_origin

    last_origin._dynamo_marked_constant = True

    def erase_traced(self, value):
        """Erases the operations that made `value` (a tensor that nothing uses
        and nothing will) from the graph that dynamo builds, as far back as
        nothing else uses them."""
        from torch._dynamo.comptime import comptime
        comptime(dynamo_trace.erase_local)

    def _copies(self, values):
        """`values` with each tensor leaf copied."""
        tensor = self.tensor_type()
        if isinstance(values, tensor):
            return self.copy(values)
        if self.is_scalar(values):
            return values
        return self.tree_map(lambda v: self.copy(v) if isinstance(v, tensor) else v, values)

    def _passed_through(self, values, leaves):
        """Positions of the tensors among `values` that a body gives back as
        they are: it returns them unchanged or modifies them in place (as
        `n += 1` does), which dynamo forbids. Such a body gets copies."""
        tensor = self.tensor_type()
        # (No any(): dynamo guards each builtin. No enumerate(): a frame it traces.)
        return {i for i in range(len(values)) if isinstance(values[i], tensor)
                and [leaf for leaf in leaves if leaf is values[i]]}

    def _guarded(self, values, mutated):
        """`values` with copies at the positions in `mutated`."""
        from torch._dynamo.comptime import comptime

        def bind(ctx):  # made here: dynamo guards a function read from a module or a class
            dynamo_trace.bind_symbols()
        copies = [self.copy(values[i]) if i in mutated else values[i] for i in range(len(values))]
        comptime(bind)
        return copies

    def _unaliased(self, out, probed, inputs):
        """`out` as a body may return it: a copy if it is a view, one of the
        body's `inputs`, or the tensor that the body's probe gave (`probed`): a
        tensor that the body made is a new object in each run, so one that is
        the same in both came from outside the body."""
        if out is probed or out._base is not None or [i for i in inputs if i is out]:  # (no any(): a guard)
            return out.clone()
        return out

    def _probe(self, statement, fn, args, leaves):
        """`fn(*copies)` as a probe of a body of `statement`, `copies` being
        `args` with each tensor copied (a body that changes in place a
        tensor from outside them is refused: torch would trace it on a
        copy); returns (copies, result, changed, views): `changed` are the
        positions of the copies that `fn` modified in place, as their
        version counters tell (through a view too: `y[i] += c` adds to the
        view `y[i]`), `views` (the positions among `leaves(result)` of the
        views of other tensors and of the copies of `args` that are views,
        the positions of those `args`, {position among `leaves(result)`: the
        tensor from outside the body that it gives there as it is: one that
        a name outside still holds after the statement, or an operand that
        other names may hold (`_before_probe`)}, {position of such an
        operand: it}), read in the probe, whose unused operations are
        erased. Statements staged inside it give only their types, without
        torch operators of their own. (Dynamo forgets what a traced
        object's attributes become after it traces a torch.cond or a
        while_loop, so nothing is staged before a plan is settled.) What the
        probe adds to the graph and nothing uses is erased."""
        from torch._dynamo.comptime import comptime

        def before(ctx):  # made here: dynamo guards a function read from a module or a class
            dynamo_trace.before_probe(ctx)

        def after(ctx):
            dynamo_trace.after_probe(ctx)
        self.probes(1)
        try:
            copies = [self._copies(v) for v in args]
            comptime(before)
            result = fn(*copies)
            out = leaves(result)
            comptime(after)
            changed, outside, kept, held_args = self.changed()
            if outside:
                raise torch_errors.outside_changed_in_place(statement.what, statement.loc)
            tensor = self.tensor_type()
            based = {i for i in range(len(args)) if isinstance(args[i], tensor) and args[i]._base is not None}
            views = {j for j in range(len(out)) if isinstance(out[j], tensor) and (
                out[j]._base is not None or [i for i in based if copies[i] is out[j]])}
            held = {i: args[i] for i in held_args}
            passed = {}  # position: the tensor from outside that the output is
            for j in range(len(out)):
                v = out[j]
                if j in views or not isinstance(v, tensor):
                    continue
                for i in held_args:
                    if copies[i] is v and not self.is_number(v):  # (a copy, which the probe made)
                        passed[j] = args[i]
                if j in kept and not (self.marked(v) or not v.dim() and self.derived(v)):
                    passed[j] = v
                elif j not in kept and not v.dim():
                    # Marked now if it stands for a number: the walk back through the
                    # arithmetic that made it (`numbers.derived`) needs the probe's
                    # nodes, which are erased when the outermost probe ends.
                    self.is_number(v)
            return copies, result, changed, (views, based, passed, held)
        finally:
            self.probes(-1)

    def _refuse_objects_made_here(self, statement):
        """Torch 2.13's dynamo loses the attribute writes made, after it traces a
        torch.cond or a while_loop, to an object created inside the compiled
        function (reads see the value from before the statement; docs/pytorch.md
        has a repro without autograph): refused rather than a wrong result.
        `statement` (a Branches or Loop) gives its `what` and `loc` only then."""
        names = self.objects_made_here()
        if names:
            raise errors.TracingError(
                f"{statement.what} ({statement.loc}) becomes a torch.cond or while_loop under torch.compile, and "
                f"the compiled function creates an object of class {names[0]}: torch "
                f"{compat.torch.__version__}'s dynamo loses the attribute writes made to such an object after "
                "that statement (docs/pytorch.md), which would give a wrong result. Create the object outside "
                "the compiled function and pass it in, or keep the values in variables or a dict")

    def _keeps_grad(self, values):
        """False if a cond, whose branches gave `values` in the probe, is
        traced with autograd off: under torch.compile where autograd is on and
        no tensor among `values` requires a gradient, which gives the same
        tensors. Dynamo then lets the branches read a tensor and a view of it
        (`x` and a row `v` of `for v in x`), which it refuses with autograd on
        ("Encountered aliasing during higher order op tracing")."""
        if not self.may_turn_grad_off():
            return True
        tensor = self.tensor_type()
        for v in values:
            if isinstance(v, tensor) and v.requires_grad:
                return True
        return False

    def dynamo_cond(self, pred, branches):
        """`torch.cond`, after a probe of both branches settles their plan."""
        memo = branches.memo
        if "mutated" not in memo:
            passed, changes, results, values, given = [], [], [], [], []
            for k in (0, 1):
                copies, result, changed, views = self._probe(
                    branches, branches.fns[k], branches.operands, lambda r: self.flat(branches.normalize(r)).leaves)
                self.refuse_views_changed(branches, branches.operands, changed, branches.operand_name)
                branches.trace(k, result)
                passed.append(self._passed_through(copies, branches.flats[k].leaves) | {*changed})
                changes.append({*changed})
                results.append(branches.normalize(result))
                values.append(copies)
                given.append(views)
            memo["mutated"] = passed[0] | passed[1]  # (a set() would cost a guard)
            branches.settle()
            memo["written"], memo["extras"] = self.written_back(branches, changes, results, values)
            memo["probed"] = [values[0][i] for i in memo["extras"]]
            memo["grad"] = self._keeps_grad([*branches.flats[0].leaves, *branches.flats[1].leaves,
                                             *memo["probed"], *values[1]])
            memo["views"] = self.views_given(branches, given[0][0] | given[1][0], {**given[0][2], **given[1][2]},
                                             memo["written"])
        written, extras = memo["written"], memo["extras"]
        if self.probes(0):  # (the outer probe sees the operands change)
            outs = branches.outputs(0)
            return self.mark_views(self.write_back(branches.operands, written, outs + memo["probed"])[:len(outs)],
                                   memo["views"])
        self._refuse_objects_made_here(branches)
        plan, mutated = list(branches.plan), memo["mutated"]
        probed = [flat.leaves for flat in branches.flats]

        def branch(k):
            def run():
                operands = self._guarded(list(branches.operands), mutated)
                result = branches.fns[k](*operands)
                leaves = self.flat(branches.normalize(result)).leaves
                outs = []
                for j in range(len(plan)):
                    kind, t = plan[j]
                    if kind == "carried":
                        leaf = leaves[j]
                        value = branches.cast(leaf, t)
                        if value is None:
                            raise branches.cannot_cast(k, j, t)
                        outs.append(value if value is not leaf else self._unaliased(value, probed[k][j], operands))
                for i in extras:  # the copies, for `write_back`
                    outs.append(operands[i].clone())
                # One output as it is: torch.cond's pytree then has no tuple,
                # whose flattening dynamo would guard on every call.
                return outs[0] if single else tuple(self.distinct(outs))
            return run

        carried = [kind for kind, _ in plan if kind == "carried"]  # (sum() costs dynamo's polyfills' guards)
        if not carried and not extras:
            return ()  # the branches give nothing that depends on the condition
        single = len(carried) == 1 and not extras
        outs = self.torch_cond(self.boolean(pred), branch(0), branch(1), memo["grad"])
        outs = self.write_back(branches.operands, written, (outs,) if single else outs)
        return self.mark_views(outs[:len(carried)] if extras else outs, memo["views"])

    def dynamo_loop(self, loop):
        """dynamo's `while_loop`, after a probe of one iteration settles the
        types of the carried values."""
        memo = loop.memo
        memo.setdefault("mutated", set())
        carry, new, changed, views = self._probe(loop, lambda *carry: loop.body(*loop.unflatten(carry)),
                                                 self.entering(loop), lambda r: self.flat(r).leaves)
        new = self.flat(new)
        positions = sorted(loop.types)
        self.refuse_views_changed(loop, [loop.leaves[j] for j in positions], changed,
                                  lambda i: loop.leaf_name(positions[i]))
        memo["mutated"] |= {i for i, j in enumerate(positions)
                            if isinstance(carry[i], self.tensor_type()) and new.leaves[j] is carry[i]} | {*changed}
        self.refuse_replaced(loop, positions, changed, [new.leaves[j] for j in positions], carry)
        if loop.check(new):
            raise Retry
        originals = [loop.leaves[j] for j in positions]
        written = [(i, i, True) for i in changed]  # see `written_back`
        views = self.loop_views(loop, positions, views, changed)
        if self.probes(0):  # (the outer probe sees the values change)
            return self.mark_views(self.write_back(originals, written, loop.init()), views)
        self._refuse_objects_made_here(loop)
        mutated, probed = memo["mutated"], new.leaves

        def cond_fn(*carry):
            return loop.cond_fun(carry)

        def body_fn(*carry):
            new = self.flat(loop.body(*loop.unflatten(self._guarded(list(carry), mutated))))
            outs = loop.outputs(new)
            return tuple(self.distinct([v if v is not new.leaves[j] else self._unaliased(v, probed[j], carry)
                                         for v, j in zip(outs, positions, strict=True)]))

        # A copy of each tensor that enters the loop as it is: the loop's bodies
        # may read it from outside as well, and torch forbids a carried value to
        # alias a tensor that they read.
        init = tuple(v.clone() if v is loop.leaves[j] else v
                     for v, j in zip(loop.init(), positions, strict=True))
        # Dynamo gives the loop's outputs strides of unbacked symbols, and fails
        # when a later torch.cond reads such a tensor ("Source of '4*u0 - 4' is
        # None when lifting it to input of top-level"): a copy has plain strides.
        outs = [v.clone() if v.dim() else v for v in self.torch_while_loop(cond_fn, body_fn, init)]
        return tuple(self.mark_views(self.write_back(originals, written, outs), views))
