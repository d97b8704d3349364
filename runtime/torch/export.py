"""The torch backend under `torch.export`'s non-strict mode (the default):
a staged `if` or loop calls the operators under `torch.cond` and
`torch.while_loop` (`cond_op`, `while_loop_op`), which trace each body with
make_fx. (`torch.cond` itself hands its function to `torch.compile`, which
cannot run the runtime of converted code.)

Those operators see only tensors passed as operands: a body reading any
other traced tensor (a variable of the enclosing function, a module
parameter) would bake in a fake value. `_capture` watches the operations a
body runs; a traced tensor that the current tracer does not know is added
to the operands and the body is traced again (`staging.Retry`). The same
retry settles types that have to widen, and gives a body copies of the
variables that it modifies in place (`n += 1` on a tensor): torch forbids
a body to modify its inputs.

What the backend remembers while it traces a statement's bodies is one
`ExportTrace`, made when the outermost staged statement starts and dropped
when it ends (`depth()` and `bodies()` read it).
"""

import builtins
import contextlib
import contextvars
import itertools
import sys
from typing import NamedTuple

from autograph.runtime.staging import Retry
from autograph.runtime.torch import compat, numbers
from autograph.runtime.torch import errors as torch_errors
from autograph.runtime.torch.aliasing import LEAVES_DEPTH, PACKAGE, named_elsewhere

__all__ = ["BodyRun", "ExportTrace", "bodies", "depth", "stage_cond", "stage_loop"]


class ExportTrace:
    """The state of the bodies being traced, for one outermost staged statement."""

    __slots__ = ("bodies", "depth", "held_inputs")

    def __init__(self):
        self.depth = 0  # how many bodies are being traced (`_capture`)
        self.bodies = []  # the numbers of the bodies being traced, outermost first (`_body`)
        self.held_inputs = []  # per body being traced, the tensors that `_held` tells there (`_holding`)


_TRACE = contextvars.ContextVar("autograph_torch_export_trace", default=None)


def depth():
    """How many bodies are being traced (0 outside a staged statement)."""
    state = _TRACE.get()
    return 0 if state is None else state.depth


def bodies():
    """The numbers of the bodies being traced, outermost first (none
    outside a staged statement)."""
    state = _TRACE.get()
    return () if state is None else state.bodies


def _current():
    """The `ExportTrace` of the staged statement running now: what the
    bodies that it traces read and change."""
    return _TRACE.get()


@contextlib.contextmanager
def _statement():
    """A staged statement: the outermost one makes the trace's state."""
    if _TRACE.get() is not None:
        yield
        return
    token = _TRACE.set(ExportTrace())
    try:
        yield
    finally:
        _TRACE.reset(token)


def stage_cond(backend, pred, branches):
    """`branches` (a `staging.Branches`) as `cond_op`."""
    with _statement():
        return _stage_cond(backend, pred, branches)


def stage_loop(backend, loop):
    """`loop` (a `staging.Loop`) as `while_loop_op`."""
    with _statement():
        return _stage_loop(backend, loop)


class BodyRun(NamedTuple):
    """What `_call` tells of a body that torch traced."""

    result: object  # what the body returned
    values: list  # the values as the body got them (copies at the positions in `mutated`)
    changed: set  # the positions of those that it changed in place
    grew: bool  # whether `mutated` grew: then the body must be traced again


def _outside(t):
    """True for a tensor of the graph being traced that a body reads from
    outside, which must be an input of its torch operator: a traced tensor,
    or a constant one (`torch.tensor(0.5)` made while tracing), which a body
    would otherwise make a constant of its own graph that the exported
    program loses."""
    return isinstance(t, compat.torch.Tensor) and compat.is_fake(t)


def _closure_tensors(*fns):
    """The tensors of the graph being traced that `fns` see in their
    closures: the first guess of what their bodies read."""
    found = []
    for fn in fns:
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            for leaf in compat.pytree.tree_leaves(value) if type(value) in (list, tuple, dict) else (value,):
                if _outside(leaf) and not builtins.any(leaf is f for f in found):
                    found.append(leaf)
    return found


def _note(values, operands):
    """Appends to `operands` each tensor among `values` that the current
    tracer does not know: one that the body reads from outside."""
    mode = compat.get_proxy_mode()
    if mode is not None:
        for t in compat.pytree.tree_leaves(values):
            if _outside(t) and not compat.has_proxy_slot(t, mode.tracer) \
                    and not builtins.any(t is o for o in operands):
                operands.append(t)


def _capture(backend, operands):
    """A context in which the operands of each torch operation go through
    `_note`."""
    from torch.overrides import TorchFunctionMode

    class Capture(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            _note((args, kwargs), operands)
            return _on_numbers(backend, func, func(*args, **(kwargs or {})), args, kwargs)

        def __enter__(self):
            _current().depth += 1
            return super().__enter__()

        def __exit__(self, *exc):
            _current().depth -= 1
            return super().__exit__(*exc)

    return Capture()


def _on_numbers(backend, func, result, args, kwargs):
    """`result`, marked as a number if `func` is Python's arithmetic and the
    tensors it was made from all stand for numbers (`steps * 2`): what the
    bodies that `_capture` watches make, where a tensor read from outside
    can be a constant of the graph, which `numbers.derived` cannot follow."""
    if isinstance(result, compat.torch.Tensor) and args and backend.is_number(args[0]) and numbers.arithmetic(func) \
            and not result.dim():
        tensors = [a for a in compat.pytree.tree_leaves((args, kwargs)) if isinstance(a, compat.torch.Tensor)]
        if builtins.all(backend.is_number(a) for a in tensors):
            backend.number(result)
    return result


def _mark_derived(backend, tensors):
    """Marks each of `tensors` that arithmetic made from numbers while the
    graph that made it is the one being traced: a body that torch traces
    runs in a graph of its own, where `numbers.derived` cannot follow
    it."""
    for t in tensors:
        backend.is_number(t)


def _call(backend, statement, fn, values, mutated, operands):
    """`fn(*values)` as a body that torch traces: the traced tensors it reads
    from outside join `operands`, and it gets copies of the tensors at the
    positions in `mutated` (torch's operators forbid a body to modify its
    inputs in place, which `x += 1` does). Returns a `BodyRun`. Where
    the statement is inside another traced body, raises
    `outside_changed_in_place` (with `statement`'s `what` and `loc`) for a
    body that changes in place a tensor from outside that it does not get
    as one of `values` (`row = y[0]; row[0] = v`): torch loses that change
    there (it drops such a `cond`, which gives nothing, from the graph of
    the body around it); outside any body, torch keeps it."""
    state = _current()
    nested, originals = state.depth > 0, values
    with _capture(backend, operands), _body(state):
        values = [backend.copy(v) if i in mutated else v for i, v in enumerate(values)]
        if state.held_inputs:  # a copy stands for the tensor it copies
            held = state.held_inputs[-1]
            held += [c for c, v in zip(values, originals, strict=True)
                     if c is not v and builtins.any(v is h for h in held)]
        versions = [v._version if isinstance(v, compat.torch.Tensor) else None for v in values]
        outside = [(o, o._version) for o in operands if nested and not builtins.any(o is v for v in values)]
        result = fn(*values)
    if builtins.any(o._version != version for o, version in outside):
        raise torch_errors.outside_changed_in_place(statement.what, statement.loc)
    changed = {i for i, (v, version) in enumerate(zip(values, versions, strict=True))
               if version is not None and v._version != version}
    grew = not changed <= mutated
    mutated |= changed
    return BodyRun(result, values, changed, grew)


@contextlib.contextmanager
def _body(state):
    """A body being traced, as `mark_origins` scopes its marks: a mark made
    in a body holds until the body ends, not in the other branch or in the
    body traced again (a body may get the operands themselves)."""
    state.bodies.append(next(_BODY_NUMBERS))
    try:
        yield
    finally:
        state.bodies.pop()


_BODY_NUMBERS = itertools.count(1)  # numbers bodies across traces: a mark never matches another's


def _fresh(out, inputs):
    """`out`, copied if it is (a view of) an input: torch's operators do not
    let a body's output alias its input."""
    if builtins.any(out is i for i in inputs) or out._is_view():
        return out.clone()
    return out


def _frames():
    """`named_elsewhere`'s frames, for Python's stack (outside dynamo), up to
    the body being traced, if any (`_call`): torch traces a body on the
    tensors outside themselves, which the variables of the frames around it
    hold as they were before the statement (`_holding` tells a body's
    tensors that stand for those that other names hold)."""
    frame, frames = sys._getframe(1), []
    while frame is not None and frame.f_code is not _call.__code__:
        local = frame.f_locals
        names = local.get("names")
        frames.append((frame.f_globals.get("__name__", ""), local,
                       names if type(names) is tuple else ()))
        frame = frame.f_back
    return frames


def _leaves(value, depth):
    """`named_elsewhere`'s leaves, for Python's values: in a variable, the
    attributes of an object of the user's too (`self.last = y`)."""
    if isinstance(value, compat.torch.Tensor):
        yield value, value._base
    elif depth and type(value) in (list, tuple, dict):
        for item in value.values() if type(value) is dict else value:
            yield from _leaves(item, depth - 1)
    elif depth == LEAVES_DEPTH and not type(value).__module__.startswith((PACKAGE, "torch", "builtins")):
        for item in getattr(value, "__dict__", {}).values():
            yield from _leaves(item, 1)


def _named(values):
    """The positions of the tensors among `values` that `named_elsewhere` tells."""
    return named_elsewhere(_frames(), [v if isinstance(v, compat.torch.Tensor) else None for v in values], _leaves)


def _held(backend, t):
    """True for a tensor that other names than the variable may hold, as
    far as the graphs being traced tell: an input of the outermost one
    (the caller's tensor, a parameter or buffer), where a body reads it
    too, or a tensor that they do not trace. Not for a tensor that the
    function made (`y = x * 1`): Python's variable alone holds that,
    unless the function gave it another name (docs/pytorch.md)."""
    if not isinstance(t, compat.torch.Tensor) or backend.is_number(t):
        return False
    held = _current().held_inputs
    if held:  # in a body: its inputs that stand for such tensors
        return builtins.any(t is h for h in held[-1])
    node = numbers.node_of(t)
    return node is None or node.op == "placeholder"


@contextlib.contextmanager
def _holding(tensors):
    """A body's inputs that stand for tensors that `_held` tells, while it is traced."""
    held = _current().held_inputs
    held.append(tensors)
    try:
        yield
    finally:
        held.pop()


def _passed(outs, positions, shared):
    """{positions[c]: tensor} for each of a body's outputs `outs[c]` that is
    not a view and is the value of one of the (value, tensor) pairs
    `shared`, where `tensor` is what it stands for outside the body."""
    passed = {}
    for c, out in enumerate(outs):
        if isinstance(out, compat.torch.Tensor) and not _is_view(out):
            for value, tensor in shared:
                if out is value:
                    passed[positions[c]] = tensor
                    break
    return passed


def _is_view(t):
    return isinstance(t, compat.torch.Tensor) and t._base is not None


def _stage_cond(backend, pred, branches):
    memo = branches.memo
    if not memo:  # the first attempt
        inputs = []  # each tensor once: torch's operators take distinct inputs
        for t in compat.pytree.tree_leaves(list(branches.operands)) + list(_closure_tensors(*branches.fns)):
            if _outside(t) and not builtins.any(t is i for i in inputs):
                inputs.append(t)
        # The predicate is made once: a retried trace would leave an unused copy.
        memo.update(inputs=inputs, mutated=set(), pred=backend.predicate(pred, branches.what, branches.loc))
    inputs, mutated = memo["inputs"], memo["mutated"]  # mutated: positions in `operands`
    _mark_derived(backend, inputs)
    copies = builtins.len(mutated)
    held = [i for i, t in enumerate(inputs) if _held(backend, t)]
    named = _named(branches.operands)
    held_operands = [i for i, t in enumerate(branches.operands) if _held(backend, t) or i in named]
    operand_leaves = compat.pytree.tree_leaves(list(branches.operands))

    def branch(k):
        def call():
            ran = _call(backend, branches, branches.fns[k], branches.operands, mutated, inputs)
            backend.refuse_views_changed(branches, branches.operands, mutated, branches.operand_name)
            _note(ran.result, inputs)
            memo[k] = (branches.normalize(ran.result), ran.values, ran.changed)
            return ran.result
        run = branches.callback(k, call)

        def fn(*args):
            with _holding([args[i] for i in held] + [inputs[i] for i in held]):
                outs = run()
            if branches.traced():
                if builtins.len(mutated) > copies or builtins.len(inputs) > builtins.len(args):
                    raise Retry
                # The copies that the branches give as extra outputs, for `write_back`.
                results, values, changes = zip(memo[0], memo[1], strict=True)
                written, extras = backend.written_back(branches, changes, results, values)
                if extras != memo.get("extras", []):
                    memo["extras"] = extras
                    raise Retry
                memo["written"] = written
            # The tensors that other names may hold after the statement, as the
            # branch has them: those that it reads from outside (not operands,
            # which the statement assigns) and the caller's.
            kept = [i for i, t in enumerate(inputs[:builtins.len(args)])
                    if i in held or not builtins.any(t is o for o in operand_leaves)]
            shared = [(args[i], inputs[i]) for i in kept] + [(inputs[i], inputs[i]) for i in kept] + [
                (memo[k][1][i], branches.operands[i]) for i in held_operands]
            leaves = branches.carried_leaves()  # (the positions of `outs` among the leaves)
            memo["views", k] = ({leaves[c] for c, out in enumerate(outs) if _is_view(out)},
                                _passed(outs, leaves, shared))
            extras = [memo[k][1][i] for i in memo.get("extras", [])]
            return tuple(backend.distinct([_fresh(out, args) for out in outs] + extras))
        return fn

    outs = compat.cond_op(memo["pred"], branch(0), branch(1), tuple(inputs))
    outs = backend.write_back(branches.operands, memo["written"], outs)
    (views, passed), (other_views, other_passed) = memo["views", 0], memo["views", 1]
    return backend.mark_views(outs[:builtins.len(branches.carried_leaves())], backend.views_given(
        branches, views | other_views, {**passed, **other_passed}, memo["written"]))


def _stage_loop(backend, loop):
    memo = loop.memo
    if not memo:  # the first attempt
        memo.update(inputs=_closure_tensors(loop.test, loop.body), mutated=set())
    inputs, mutated = memo["inputs"], memo["mutated"]  # mutated: positions in the carry
    _mark_derived(backend, inputs)
    size, init = builtins.len(inputs), backend.entering(loop)
    n = builtins.len(init)  # torch calls the functions with the carry, then `inputs`
    named = _named(init)
    held = [i for i, t in enumerate(init) if _held(backend, t) or i in named]
    held_inputs = [i for i, t in enumerate(inputs) if _held(backend, t)]

    def cond_fun(*args):
        with _capture(backend, inputs):
            return loop.cond_fun(args[:n])

    def body_fun(*args):
        # A carried value that enters as a tensor that other names hold is
        # that tensor in the first iteration (in later ones, a new tensor).
        outside = [args[n + i] for i in held_inputs] + [inputs[i] for i in held_inputs]
        with _holding([args[i] for i in held] + outside):
            ran = _call(backend, loop, lambda *carry: loop.body_fun(carry[:n]), args, mutated, inputs)
        outs, values = ran.result, ran.values
        positions = sorted(loop.types)  # the carry; later positions are `inputs`
        backend.refuse_replaced(loop, positions, [i for i in mutated if i < n], outs, values)
        # The tensors that other names may hold after the loop: those that the
        # body reads from outside, and the caller's, as the body has them.
        shared = [(args[i], init[i]) for i in held] + [(values[i], init[i]) for i in held] + [
            (args[n + i], t) for i, t in enumerate(inputs[:builtins.len(args) - n])] + [(t, t) for t in inputs]
        memo["views"] = backend.loop_views(loop, positions, (
            {positions[i] for i, out in enumerate(outs) if _is_view(out)},
            {i for i, v in enumerate(init) if _is_view(v)},
            _passed(outs, positions, shared), {i: init[i] for i in held}), mutated)
        backend.refuse_views_changed(loop, [loop.leaves[j] for j in positions], [i for i in mutated if i < n],
                                      lambda i: loop.leaf_name(positions[i]))
        _note(outs, inputs)
        if ran.grew or builtins.len(inputs) > size:
            raise Retry
        return tuple(backend.distinct([_fresh(out, args) for out in outs]))

    try:
        outs = compat.while_loop_op(cond_fun, body_fun, init, tuple(inputs))
        originals = [loop.leaves[j] for j in sorted(loop.types)]
        outs = backend.write_back(originals, [(i, i, True) for i in sorted(mutated) if i < n], outs)
        return tuple(backend.mark_views(outs, memo["views"]))
    except Retry:
        raise  # traced again with `init`, or the values that replace it
    except BaseException:
        backend.discard(init, loop.leaves)  # the statement fails, or is traced again from the start
        raise
