"""The PyTorch backend: Python control flow on tensors that `torch.export`
traces becomes torch's control-flow operators.

Under `torch.export.export` (non-strict, the default) converted code meets
fake tensors: tensors with a dtype and a shape but no data. A condition on
one of them has no value while tracing, and:

  * `if` and conditional expressions become `torch.ops.higher_order.cond`;
  * `while` becomes `torch.ops.higher_order.while_loop`;
  * `for` over `range()` of a traced bound becomes a `while_loop`; a `for`
    over a tensor runs in Python (`for_loop` returns NotImplemented): its
    length is the tensor's first dimension, known while tracing, so Python
    unrolls it as the unconverted function does;
  * `and`, `or` (a `cond`, which keeps the short circuit), `not`
    (`torch.logical_not`), `assert` (`aten._assert_async`, checked when the
    program runs), `print` and `x[i] = v` (on a copy) get their traced
    meaning, and `len()` and `range()` accept traced bounds. `print` of a
    traced tensor becomes torch's `print` operator, which prints when the
    program runs; inside a `cond` or `while_loop` body, where that operator
    fails export's checks, it prints once while tracing.

Every other tensor is concrete: an eager tensor, or a fake tensor that
holds a known constant (`torch.tensor(3)` made while tracing). The statement
then runs as plain Python, exactly as the unconverted function does. The
test is `_is_traced`: a tensor is traced when `torch._subclasses.fake_tensor
.is_fake` says it has no data (this sees through functional wrappers) and it
carries no constant. It asks nothing of the tensor's value: calling `bool()`
and catching torch's `GuardOnDataDependentSymNode` would also tell, but it
leaves an `item` node, an unbacked symbol and runtime asserts in the
exported graph.

Branch outputs and loop state are pytrees. Their tensor leaves, and Python
numbers that differ between branches or change in a loop, are what torch
carries; every other leaf (a string, None, a function, equal Python numbers,
...) must be the same whichever way the program goes. A Python number that
meets a tensor takes the tensor's dtype and shape when its kind (bool, int,
float) fits in it; tensors must agree in dtype and shape.

One mechanism serves every body that torch traces (branches, loop tests and
loop bodies): `torch.cond` and `torch.while_loop` hand a function to
`torch.compile`, which cannot run this package's runtime, so the backend
calls the operators underneath, which trace a body with `make_fx`. Those
see only tensors passed as operands: a body reading any other traced
tensor (a variable of the enclosing function, a module parameter) would
bake in a fake value. `_capture` watches the operations a body runs; a
traced tensor that the current tracer does not know is added to the
operands and the body is traced again (`staging.Retry`). The same retry settles
types that have to widen, and gives a body copies of the variables that it
modifies in place (`n += 1` on a tensor): torch forbids a body to modify
its inputs.

A condition on a symbolic number that `.item()` gives (an unbacked symbol)
is staged like one on a tensor, and `range()` of it, or of a dimension
declared dynamic with `torch.export.Dim`, becomes a `while_loop` that
leaves the dimension symbolic.

`torch.compile` and `torch.export.export(..., strict=True)` trace Python
bytecode with dynamo: there every tensor is traced, and the statements
become dynamo's own `torch.cond` and `while_loop` (torch_dynamo.py).

Importing this module does not import torch: the backend claims a type only
once torch is imported, so it costs nothing to programs that do not use it.
"""

import builtins
import contextlib
import itertools
import sys

from autograph.runtime import staging, torch_numbers
from autograph.runtime.backends import Backend
from autograph.runtime.staging import Retry
from autograph.runtime.staging import errors as serrors
from autograph.runtime.undefined import Undefined

__all__ = ["TorchBackend", "TorchRange"]

_NUMBERS = (bool, int, float)

torch = pytree = is_fake = guard_or_false = guard_or_true = has_static_value = None
# torch's functions that the dynamo path calls, read from this module (`torch_cond`).
_torch_cond = _torch_while_loop = _torch_full = _Tensor = None
_SYMBOLIC = set()  # torch.SymBool, SymInt, SymFloat once torch is loaded


def _load():
    global torch, pytree, is_fake, guard_or_false, guard_or_true, has_static_value, _torch_cond, _torch_while_loop, \
        _torch_full, _Tensor
    if torch is None:
        import torch as torch_module
        import torch.utils._pytree as pytree_module
        from torch._higher_order_ops.while_loop import while_loop
        from torch._subclasses.fake_tensor import is_fake as is_fake_function
        from torch.fx.experimental.symbolic_shapes import guard_or_false, guard_or_true, has_static_value
        torch, pytree, is_fake = torch_module, pytree_module, is_fake_function
        _torch_cond, _torch_while_loop, _torch_full, _Tensor = torch.cond, while_loop, torch.full, torch.Tensor
        _SYMBOLIC.update((torch.SymBool, torch.SymInt, torch.SymFloat))
        torch_dynamo.install(torch)


def prime(backend):
    """Tells dispatch at once that `backend` claims torch's other value
    types too: dynamo guards on the dispatch cache, and a type it first
    meets while it traces would change the cache after the trace."""
    from autograph.runtime.backends import claim, set_symbolic_numbers
    claim(backend, (torch.Tensor, torch.nn.Parameter, *_SYMBOLIC))
    _owner[0] = backend
    set_symbolic_numbers(_symbolic_number, torch.compiler.is_dynamo_compiling)


_owner = [None]  # the registered backend
_PACKAGE = __name__.split(".")[0] + "."


def _symbolic_number(x):
    """The backend of a number that dynamo traces as a symbol (its type()
    is int, float or bool there), else None."""
    return _owner[0] if _is_symbolic(x) else None


class TorchRange(staging.TracedRange):
    __slots__ = ()
    traced_by, staged_as = "torch", "a while_loop"


def _is_symbolic(x):
    """True for a symbolic number (torch.SymBool, SymInt, SymFloat): a
    dimension declared dynamic, or a value that `.item()` gives, under
    `torch.export` (strict or not) or `torch.compile`. Dynamo gives such a
    number the type int, float or bool, and `has_static_value` tells."""
    if type(x) in _SYMBOLIC:
        return True
    return type(x) in _NUMBERS and torch.compiler.is_dynamo_compiling() and not has_static_value(x)


def _kind(dtype):
    return 0 if dtype == torch.bool else 2 if dtype.is_floating_point or dtype.is_complex else 1


def _outside(t):
    """True for a tensor of the graph being traced that a body reads from
    outside, which must be an input of its torch operator: a traced tensor,
    or a constant one (`torch.tensor(0.5)` made while tracing), which a body
    would otherwise make a constant of its own graph that the exported
    program loses."""
    return isinstance(t, torch.Tensor) and is_fake(t)


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
            for leaf in pytree.tree_leaves(value) if type(value) in (list, tuple, dict) else (value,):
                if _outside(leaf) and not builtins.any(leaf is f for f in found):
                    found.append(leaf)
    return found


def _note(values, operands):
    """Appends to `operands` each tensor among `values` that the current
    tracer does not know: one that the body reads from outside."""
    from torch.fx.experimental.proxy_tensor import get_proxy_mode, has_proxy_slot
    mode = get_proxy_mode()
    if mode is not None:
        for t in pytree.tree_leaves(values):
            if _outside(t) and not has_proxy_slot(t, mode.tracer) \
                    and not builtins.any(t is o for o in operands):
                operands.append(t)


_depth = [0]  # how many traced bodies are running


def _capture(operands):
    """A context in which the operands of each torch operation go through
    `_note`."""
    from torch.overrides import TorchFunctionMode

    class Capture(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            _note((args, kwargs), operands)
            return _on_numbers(func, func(*args, **(kwargs or {})), args, kwargs)

        def __enter__(self):
            _depth[0] += 1
            return super().__enter__()

        def __exit__(self, *exc):
            _depth[0] -= 1
            return super().__exit__(*exc)

    return Capture()


def _on_numbers(func, result, args, kwargs):
    """`result`, marked as a number if `func` is Python's arithmetic and the
    tensors it was made from all stand for numbers (`steps * 2`): what the
    bodies that `_capture` watches make, where a tensor read from outside
    can be a constant of the graph, which `torch_numbers.derived` cannot follow."""
    if isinstance(result, torch.Tensor) and args and _BACKEND.is_number(args[0]) and torch_numbers.arithmetic(func) \
            and not result.dim():
        tensors = [a for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
        if builtins.all(_BACKEND.is_number(a) for a in tensors):
            _number(result)
    return result


def _mark_derived(tensors):
    """Marks each of `tensors` that arithmetic made from numbers while the
    graph that made it is the one being traced: a body that torch traces
    runs in a graph of its own, where `torch_numbers.derived` cannot follow
    it."""
    for t in tensors:
        _BACKEND.is_number(t)


def _call(statement, fn, values, mutated, operands):
    """`fn(*values)` as a body that torch traces: the traced tensors it reads
    from outside join `operands`, and it gets copies of the tensors at the
    positions in `mutated` (torch's operators forbid a body to modify its
    inputs in place, which `x += 1` does). Returns the result, the values
    as the body got them, the positions of those it changed in place, and
    whether `mutated` grew: then the body must be traced again. Where
    the statement is inside another traced body, raises
    `outside_changed_in_place` (with `statement`'s `what` and `loc`) for a
    body that changes in place a tensor from outside that it does not get
    as one of `values` (`row = y[0]; row[0] = v`): torch loses that change
    there (it drops such a `cond`, which gives nothing, from the graph of
    the body around it); outside any body, torch keeps it."""
    nested, originals = _depth[0] > 0, values
    with _capture(operands), _body():
        values = [_BACKEND.copy(v) if i in mutated else v for i, v in enumerate(values)]
        if _held_inputs:  # a copy stands for the tensor it copies
            held = _held_inputs[-1]
            held += [c for c, v in zip(values, originals, strict=True)
                     if c is not v and builtins.any(v is h for h in held)]
        versions = [v._version if isinstance(v, torch.Tensor) else None for v in values]
        outside = [(o, o._version) for o in operands if nested and not builtins.any(o is v for v in values)]
        result = fn(*values)
    if builtins.any(o._version != version for o, version in outside):
        raise serrors.outside_changed_in_place(statement.what, statement.loc)
    changed = {i for i, (v, version) in enumerate(zip(values, versions, strict=True))
               if version is not None and v._version != version}
    grew = not changed <= mutated
    mutated |= changed
    return result, values, changed, grew


@contextlib.contextmanager
def _body():
    """A body being traced, as `mark_origins` scopes its marks: a mark made
    in a body holds until the body ends, not in the other branch or in the
    body traced again (a body may get the operands themselves)."""
    _bodies.append(next(_body_numbers))
    try:
        yield
    finally:
        _bodies.pop()


_bodies = []  # the numbers of the bodies being traced, outermost first
_body_numbers = itertools.count(1)


def _fresh(out, inputs):
    """`out`, copied if it is (a view of) an input: torch's operators do not
    let a body's output alias its input."""
    if builtins.any(out is i for i in inputs) or out._is_view():
        return out.clone()
    return out


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
        if module.startswith(_PACKAGE):
            skip = names
            continue
        if not module.startswith("torch"):
            for name, value in local.items():
                if name not in skip:
                    for t, base in leaves(value, _DEPTH):
                        found.update(i for i, c in enumerate(candidates) if c is not None and (c is t or c is base))
        skip = ()
    return found


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
    if isinstance(value, torch.Tensor):
        yield value, value._base
    elif depth and type(value) in (list, tuple, dict):
        for item in value.values() if type(value) is dict else value:
            yield from _leaves(item, depth - 1)
    elif depth == _DEPTH and not type(value).__module__.startswith((_PACKAGE, "torch", "builtins")):
        for item in getattr(value, "__dict__", {}).values():
            yield from _leaves(item, 1)


_DEPTH = 3  # how deep `_leaves` looks into a variable


def _named(values):
    """The positions of the tensors among `values` that `named_elsewhere` tells."""
    return named_elsewhere(_frames(), [v if isinstance(v, torch.Tensor) else None for v in values], _leaves)


def _held(t):
    """True for a tensor that other names than the variable may hold, as
    far as the graphs being traced tell: an input of the outermost one
    (the caller's tensor, a parameter or buffer), where a body reads it
    too, or a tensor that they do not trace. Not for a tensor that the
    function made (`y = x * 1`): Python's variable alone holds that,
    unless the function gave it another name (docs/pytorch.md)."""
    if not isinstance(t, torch.Tensor) or _BACKEND.is_number(t):
        return False
    if _held_inputs:  # in a body: its inputs that stand for such tensors
        return builtins.any(t is h for h in _held_inputs[-1])
    node = torch_numbers.node_of(t)
    return node is None or node.op == "placeholder"


_held_inputs = []  # per body being traced, the tensors that `_held` tells there


@contextlib.contextmanager
def _holding(tensors):
    """A body's inputs that stand for tensors that `_held` tells, while it is traced."""
    _held_inputs.append(tensors)
    try:
        yield
    finally:
        _held_inputs.pop()


def _passed(outs, positions, shared):
    """{positions[c]: tensor} for each of a body's outputs `outs[c]` that is
    not a view and is the value of one of the (value, tensor) pairs
    `shared`, where `tensor` is what it stands for outside the body."""
    passed = {}
    for c, out in enumerate(outs):
        if isinstance(out, torch.Tensor) and not _is_view(out):
            for value, tensor in shared:
                if out is value:
                    passed[positions[c]] = tensor
                    break
    return passed


def _is_view(t):
    return isinstance(t, torch.Tensor) and t._base is not None


def _erase_unused(value):
    """Erases from the graph that torch traces the operations that made
    `value`, a tensor that nothing uses and nothing will, as far back as
    nothing else uses them."""
    from torch.fx.experimental.proxy_tensor import get_proxy_mode, get_proxy_slot
    mode = get_proxy_mode()
    if mode is not None:
        erase_unused(get_proxy_slot(value, mode.tracer).proxy.node, mode.tracer.root)


def erase_unused(node, root):
    """Erases fx `node` if nothing uses it and it has no effect, then so the
    nodes that made its arguments; the attributes of `root` (the module
    that holds the graph's constants and subgraphs) that only they read go
    too."""
    pending = [node]
    while pending:
        node = pending.pop()
        if node.users or getattr(node, "_erased", False):
            continue
        if node.op == "get_attr":
            graph, target = node.graph, node.target
            graph.erase_node(node)
            if not any(n.op == "get_attr" and n.target == target for n in graph.nodes) \
                    and hasattr(root, target):
                delattr(root, target)
            continue
        if _has_effect(node):
            continue
        pending.extend(node.all_input_nodes)
        node.graph.erase_node(node)


_IN_PLACE = {"iadd", "isub", "imul", "imatmul", "itruediv", "ifloordiv", "imod", "ipow",
             "ilshift", "irshift", "iand", "ixor", "ior", "setitem"}


def _has_effect(node):
    """True unless fx `node` is a call that only computes its result (dynamo
    writes methods as `call_method`, `x += 1` as operator.iadd)."""
    if node.op == "call_method":
        return node.target.endswith("_")
    if node.op != "call_function" or node.is_impure():
        return True
    name = getattr(node.target, "__name__", "")
    return name.endswith("_") or name in _IN_PLACE and getattr(node.target, "__module__", "") == "_operator"


# cond and loops ---------------------------------------------------------------

def _cond(pred, branches):
    memo = branches.memo
    if not memo:  # the first attempt
        inputs = []  # each tensor once: torch's operators take distinct inputs
        for t in pytree.tree_leaves(list(branches.operands)) + list(_closure_tensors(*branches.fns)):
            if _outside(t) and not builtins.any(t is i for i in inputs):
                inputs.append(t)
        # The predicate is made once: a retried trace would leave an unused copy.
        memo.update(inputs=inputs, mutated=set(), pred=_BACKEND.predicate(pred, branches.what, branches.loc))
    inputs, mutated = memo["inputs"], memo["mutated"]  # mutated: positions in `operands`
    _mark_derived(inputs)
    copies = builtins.len(mutated)
    held = [i for i, t in enumerate(inputs) if _held(t)]
    named = _named(branches.operands)
    held_operands = [i for i, t in enumerate(branches.operands) if _held(t) or i in named]
    operand_leaves = pytree.tree_leaves(list(branches.operands))

    def branch(k):
        def call():
            result, values, changed, _ = _call(branches, branches.fns[k], branches.operands, mutated, inputs)
            _BACKEND.refuse_views_changed(branches, branches.operands, mutated, branches.operand_name)
            _note(result, inputs)
            memo[k] = (branches.normalize(result), values, changed)
            return result
        run = branches.callback(k, call)

        def fn(*args):
            with _holding([args[i] for i in held] + [inputs[i] for i in held]):
                outs = run()
            if branches.traced():
                if builtins.len(mutated) > copies or builtins.len(inputs) > builtins.len(args):
                    raise Retry
                # The copies that the branches give as extra outputs, for `write_back`.
                results, values, changes = zip(memo[0], memo[1], strict=True)
                written, extras = _BACKEND.written_back(branches, changes, results, values)
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
            return tuple(_BACKEND.distinct([_fresh(out, args) for out in outs] + extras))
        return fn

    from torch._higher_order_ops.cond import cond_op
    outs = cond_op(memo["pred"], branch(0), branch(1), tuple(inputs))
    outs = _BACKEND.write_back(branches.operands, memo["written"], outs)
    (views, passed), (other_views, other_passed) = memo["views", 0], memo["views", 1]
    return _BACKEND.mark_views(outs[:builtins.len(branches.carried_leaves())], _BACKEND.views_given(
        branches, views | other_views, {**passed, **other_passed}, memo["written"]))


def _loop(loop):
    from torch._higher_order_ops.while_loop import while_loop_op
    memo = loop.memo
    if not memo:  # the first attempt
        memo.update(inputs=_closure_tensors(loop.test, loop.body), mutated=set())
    inputs, mutated = memo["inputs"], memo["mutated"]  # mutated: positions in the carry
    _mark_derived(inputs)
    size, init = builtins.len(inputs), _BACKEND.entering(loop)
    n = builtins.len(init)  # torch calls the functions with the carry, then `inputs`
    named = _named(init)
    held = [i for i, t in enumerate(init) if _held(t) or i in named]
    held_inputs = [i for i, t in enumerate(inputs) if _held(t)]

    def cond_fun(*args):
        with _capture(inputs):
            return loop.cond_fun(args[:n])

    def body_fun(*args):
        # A carried value that enters as a tensor that other names hold is
        # that tensor in the first iteration (in later ones, a new tensor).
        outside = [args[n + i] for i in held_inputs] + [inputs[i] for i in held_inputs]
        with _holding([args[i] for i in held] + outside):
            outs, values, _, grew = _call(loop, lambda *carry: loop.body_fun(carry[:n]), args, mutated, inputs)
        positions = sorted(loop.types)  # the carry; later positions are `inputs`
        _BACKEND.refuse_replaced(loop, positions, [i for i in mutated if i < n], outs, values)
        # The tensors that other names may hold after the loop: those that the
        # body reads from outside, and the caller's, as the body has them.
        shared = [(args[i], init[i]) for i in held] + [(values[i], init[i]) for i in held] + [
            (args[n + i], t) for i, t in enumerate(inputs[:builtins.len(args) - n])] + [(t, t) for t in inputs]
        memo["views"] = _BACKEND.loop_views(loop, positions, (
            {positions[i] for i, out in enumerate(outs) if _is_view(out)},
            {i for i, v in enumerate(init) if _is_view(v)},
            _passed(outs, positions, shared), {i: init[i] for i in held}), mutated)
        _BACKEND.refuse_views_changed(loop, [loop.leaves[j] for j in positions], [i for i in mutated if i < n],
                                      lambda i: loop.leaf_name(positions[i]))
        _note(outs, inputs)
        if grew or builtins.len(inputs) > size:
            raise Retry
        return tuple(_BACKEND.distinct([_fresh(out, args) for out in outs]))

    try:
        outs = while_loop_op(cond_fun, body_fun, init, tuple(inputs))
        originals = [loop.leaves[j] for j in sorted(loop.types)]
        outs = _BACKEND.write_back(originals, [(i, i, True) for i in sorted(mutated) if i < n], outs)
        return tuple(_BACKEND.mark_views(outs, memo["views"]))
    except Retry:
        raise  # traced again with `init`, or the values that replace it
    except BaseException:
        _BACKEND.discard(init, loop.leaves)  # the statement fails, or is traced again from the start
        raise


# builtins --------------------------------------------------------------------

def _range(*args):
    if not builtins.any(_is_traced(a) or _is_symbolic(a) for a in args):
        return builtins.range(*args)
    # A symbolic bound (n.item(), x.shape[0] of a dynamic dimension) as a
    # traced tensor: what the loop's bodies can read.
    args = [torch.scalar_tensor(a, dtype=torch.int64) if _is_symbolic(a) else a for a in args]
    bounds = staging.range_bounds(
        args, lambda a: isinstance(a, torch.Tensor),
        lambda a: a.numel() == 1 and _kind(a.dtype) == 1, _BACKEND.describe)
    return TorchRange(*(a.reshape(()) if isinstance(a, torch.Tensor) else a for a in bounds))


def _len(obj):
    if type(obj) is TorchRange:
        step = obj.step
        sign = (1 if step > 0 else -1) if type(step) is int else torch.sign(step)
        return torch.clamp((obj.stop - obj.start + step - sign) // step, min=0)
    if isinstance(obj, torch.Tensor) and obj.dim():
        return obj.shape[0]  # a dynamic dimension stays symbolic: Python's len() would specialize it
    return builtins.len(obj)


_BUILTINS = {builtins.range: _range, builtins.len: _len}


def _template(args, sep, end):
    """A format string for torch's print: `print(*args, sep, end)` with the
    tensors as `{}` slots."""
    parts = ["{}" if isinstance(a, torch.Tensor) else str(a).replace("{", "{{").replace("}", "}}")
             for a in args]
    return sep.join(parts) + end[:-1]


from autograph.runtime import torch_dynamo  # noqa: E402 - it reads this module's helpers when it runs


class TorchBackend(torch_dynamo.DynamoStaging, staging.StagingBackend):
    """Stages control flow on traced tensors into torch's control-flow
    operators."""

    __slots__ = ()  # see Backend
    name = "torch"
    traced = "traced by torch"
    array, cast_hint = "tensor", ".to()"
    static_shapes = ("torch's while_loop carries '{name}' with one shape in every iteration; make "
                     "'{name}' its largest size before the loop and write into it ({name}[i] = ...)")

    def __init__(self):
        if "torch" in sys.modules:
            _load()

    def tracks_places(self):
        # Under torch.compile dynamo follows the Python side effects of the
        # bodies itself (and cannot trace the walk over closures).
        return not self.compiling()

    def owns_type(self, cls):
        if issubclass(cls, TorchRange):
            return True
        if "torch" not in sys.modules:
            return False
        _load()
        if issubclass(cls, torch.Tensor) or cls in _SYMBOLIC:
            if not torch.compiler.is_dynamo_compiling():
                prime(self)
            return True
        return False

    def prepare(self):
        if "torch" in sys.modules:
            _load()
            prime(self)

    # What dynamo traces on every staged statement is written as methods:
    # dynamo guards each module function that the code it traces reads (on
    # every call of the compiled function), but no method of the backend
    # (see torch_dynamo.DynamoStaging).

    # Facts that hold for a whole trace, which dynamo takes as constants: it
    # runs these outside the trace (`_dynamo_marked_constant`, what
    # torch.compiler.assume_constant_result sets) and guards nothing, where
    # reading `torch.compiler.is_dynamo_compiling` or a dtype through torch
    # would cost guards on this module, on torch and on each attribute, and
    # a check that torch is the module that torch.cond reads.

    def compiling(self):
        """True while dynamo traces (`torch.compiler.is_dynamo_compiling()`
        in the code that it traces)."""
        return torch_dynamo.tracing()

    def tensor_type(self):
        # Read from this module, not through torch, and not as a constant of
        # the trace: dynamo checks that a class it finds under two names is
        # one object (type() of a tensor names torch.Tensor too), and it cannot
        # name a constant's result in that check under dynamic shapes.
        return _Tensor

    def dtype(self, kind):
        """The dtype of a Python number whose type is named `kind` ("bool",
        "int", "float"). (Dynamo's guard on the global state covers the
        default dtype.)"""
        return torch.bool if kind == "bool" else torch.int64 if kind == "int" else torch.get_default_dtype()

    compiling._dynamo_marked_constant = True
    dtype._dynamo_marked_constant = True

    def in_body(self):
        """True while torch traces a cond or while_loop body (or dynamo a
        probe of one)."""
        return self.dynamo_in_body() if self.compiling() else _depth[0] > 0

    def is_traced(self, x):
        """True for a tensor whose value is unknown while tracing (dynamo knows
        none: `is_fake` is not for it to call)."""
        return isinstance(x, self.tensor_type()) and (
            self.compiling() or is_fake(x) and getattr(x, "constant", None) is None)

    def number(self, t):
        """Marks tensor `t` as standing for a Python number (a variable that held
        an int, float or bool before a staged `if` or loop): `steps += 1` on it
        makes a new tensor, as Python makes a new int, where `+=` on any other
        tensor changes it in place (`augmented`). An attribute, which dynamo
        traces (a lookup by `id()` would make it guard on the frame;
        `markable` lets it set one): `_autograph_number`, written as a literal
        where it is read or set (dynamo guards each read of a module
        constant, on every call of the compiled function). The node that
        makes `t` in the graph being traced is marked too, for
        `torch_numbers.derived`."""
        if isinstance(t, self.tensor_type()):
            if self.compiling():
                self.markable(t)
                t._autograph_number = self.graph_token()
            else:
                t._autograph_number = True
                node = torch_numbers.node_of(t)
                if node is not None:
                    node.meta[torch_numbers.MARK] = True
        return t

    def marked(self, x):
        """True for a tensor that `number` marked in the program being traced.
        Dynamo sets the attribute on the tensors that a compiled function
        returns as well: there it holds the token of the graph that marked it,
        which counts in that graph and, after a graph break, in the rest of the
        function; the tensors of an eager run (no fake tensors) are never
        numbers. `is_number` also tells the tensors that arithmetic made from
        numbers."""
        if not isinstance(x, self.tensor_type()):
            return False
        mark = getattr(x, "_autograph_number", None)
        if mark is None:
            return False
        if self.compiling():
            return mark == self.graph_token() or self.resuming()
        return is_fake(x)

    def is_number(self, x):
        """True for a tensor that stands for a Python number: one that `number`
        marked, or one that Python's arithmetic made from such tensors and
        numbers only (`n = steps * 2`, an int in the unconverted function),
        which `torch_numbers.derived` tells; this marks it then."""
        if self.marked(x):
            return True
        if not isinstance(x, self.tensor_type()) or x.dim():
            return False
        if self.compiling():
            return self.mark_derived(x)
        node = torch_numbers.node_of(x) if is_fake(x) else None
        with torch._C.DisableTorchFunction():  # `_capture` would take the values of the nodes for operands
            if node is None or not torch_numbers.derived(node):
                return False
        self.number(x)
        return True

    def copy(self, t):
        """A copy of tensor `t`, standing for a number if `t` does, and then
        marked as `t` is by `mark_views` (`+=` on such a copy, in a body,
        makes a new number, where a view would change in place; `+=` on
        another tensor changes the copy, and `write_back` refuses it)."""
        if not self.is_number(t):
            return t.clone()
        c = self.number(t.clone())
        mark = getattr(t, "_autograph_view", None)
        if mark is not None:
            if self.compiling():
                self.markable(c)
            c._autograph_view = mark
        return c

    def torch_cond(self, pred, true_fn, false_fn):
        # torch.cond read from this module: torch's own module stays the only
        # place where dynamo finds torch (a second one is a check on every call).
        return _torch_cond(pred, true_fn, false_fn, ())

    def torch_while_loop(self, cond_fn, body_fn, init):
        return _torch_while_loop(cond_fn, body_fn, init)

    def tree_map(self, fn, values):
        return pytree.tree_map(fn, values)

    def concrete(self, x):
        """`bool(x)` if x's value is known, else None. A condition on a symbolic
        number has a value when torch can decide it: on a dimension it guards
        (as the unconverted function does), on an `.item()` value (an unbacked
        symbol) it has none. `guard_or_false` and `guard_or_true` ask that
        without failing, and dynamo traces both."""
        if self.is_traced(x):
            return None
        if _is_symbolic(x):
            flag = x if type(x) in (bool, torch.SymBool) else x != 0
            known = guard_or_false(flag)
            return known if known == guard_or_true(flag) else None
        return bool(x)

    # These ask about tensors first, and write Python's types out: dynamo
    # guards, on every call, each element of a module's container that the
    # code it traces reads (a builtin it reads is one guard for all code).

    def is_value(self, x):
        return isinstance(x, self.tensor_type()) or type(x) in (bool, int, float)

    def is_scalar(self, x):
        """True for a Python value that is its own only leaf: what most state
        is, said without the staging core's containers, whose code dynamo
        would trace (and guard on) for each."""
        t = type(x)
        return t is bool or t is int or t is float or t is complex or t is str or x is None

    def typeof(self, x):
        """(shape, dtype, weak): weak for a Python number (or a tensor that
        stands for one)."""
        if isinstance(x, self.tensor_type()):
            return (tuple(x.shape), x.dtype, self.is_number(x))
        return ((), self.dtype(type(x).__name__), True)

    def describe_type(self, t):
        shape, dtype, weak = t
        text = f"{str(dtype).replace('torch.', '')}[{','.join(map(str, shape))}]"
        return text + " (from a Python number)" if weak else text

    def merge(self, a, b):
        """The type that both a and b can take as one variable, or None."""
        if a[:2] == b[:2]:
            return a if a[2] and b[2] else (a[0], a[1], False)
        if a[2] and b[2]:
            return ((), torch.promote_types(a[1], b[1]), True)
        (weak, strong) = (a, b) if a[2] else (b, a)
        if weak[2] and _kind(weak[1]) <= _kind(strong[1]):
            return strong
        return None

    def cast(self, x, t):
        """x as a tensor of type t (shape, dtype, weak); None for a Python
        number that t's dtype cannot hold (`staging.holds`)."""
        shape, dtype, _ = t
        if isinstance(x, self.tensor_type()):
            x = x if x.dtype == dtype else x.to(dtype)
            # Only a number's 0-d stand-in has another shape than its merged
            # type; sizes are not compared: in a while_loop body under dynamo,
            # comparing a dynamic size with the type's (the enclosing graph's)
            # fails in torch ("argument of type: LazyProxy").
            return x if x.dim() == len(shape) else x.expand(shape).clone()
        if not self.compiling() and not self.holds(x, dtype):
            return None  # (dynamo's torch.full raises "value cannot be converted ... without overflow")
        return _torch_full(shape, x, dtype=dtype)

    def holds(self, x, dtype):
        """`staging.holds` for a tensor's dtype."""
        if type(x) is int and dtype != torch.bool and not dtype.is_floating_point and not dtype.is_complex \
                and not _is_symbolic(x):
            info = torch.iinfo(dtype)
            return staging.holds(x, "i", info.min, info.max)
        if type(x) is float and dtype.is_floating_point and not _is_symbolic(x):
            info = torch.finfo(dtype)
            return staging.holds(x, "f", -float(info.max), float(info.max))
        return True

    def same_leaf(self, a, b):
        # A tensor's type does not say its dtype: it is not the same leaf as
        # another tensor (`values.same_leaf`, without numpy's scalars).
        if a is b:
            return True
        return not isinstance(a, self.tensor_type()) and staging.same_python(a, b)

    def predicate(self, flag, what, loc):
        return self.boolean(flag)

    def boolean(self, flag):
        """A traced condition as the boolean scalar tensor torch wants."""
        if not isinstance(flag, self.tensor_type()):
            if _is_symbolic(flag):
                return torch.scalar_tensor(flag, dtype=torch.bool) if type(flag) in (bool, torch.SymBool) else \
                    torch.scalar_tensor(flag) != 0
            return torch.tensor(bool(flag))
        if flag.numel() != 1:
            # What `bool()` of the tensor says in unconverted code.
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        if flag.dim() != 0:
            flag = flag.reshape(())
        return flag if flag.dtype == self.dtype("bool") else flag != 0

    def stage_cond(self, pred, branches):
        if self.compiling():
            return self.dynamo_cond(pred, branches)
        return _cond(pred, branches)

    def stage_loop(self, loop):
        if self.compiling():
            return self.dynamo_loop(loop)
        return _loop(loop)

    def entering(self, loop):
        """`loop.init()`, after erasing the values that an earlier attempt made
        for it and that this one does not use (a type widened)."""
        init = tuple(loop.init())
        self.discard(loop.memo.get("init", ()), init + tuple(loop.leaves))
        loop.memo["init"] = init
        return init

    def discard(self, values, kept=()):
        """Erases the operations that made the traced tensors among `values`
        (but those in `kept`) from the graph: torch.export keeps every
        operation. (The loop's test ran once before the loop, to tell that
        it is traced; the while_loop runs it again.)"""
        for value in values:
            if self.is_traced(value) and not [k for k in kept if k is value]:  # (no builtins.any: a guard each)
                if self.compiling():
                    self.erase_traced(value)
                else:
                    _erase_unused(value)

    def flatten(self, value):
        if isinstance(value, self.tensor_type()) or self.is_scalar(value) or isinstance(value, Undefined):
            return [value], None  # a value that is its own only leaf (values.flatten gives a Treedef)
        return super().flatten(value)

    def unflatten(self, treedef, leaves):
        if treedef is None:
            return leaves[0]
        return super().unflatten(treedef, leaves)

    def zeros(self, shape, dtype):
        return torch.zeros(shape, dtype=dtype)

    def buffer_write(self, buffer, index, value):
        index = torch.as_tensor(index, dtype=torch.int64).reshape(1)
        return torch.index_copy(buffer, 0, index, value.unsqueeze(0))

    def logical_not(self, value):
        return self.number(torch.logical_not(value))  # `not x` is a Python bool

    def logical_and(self, a, b):
        return torch.logical_and(a, b)

    def logical_or(self, a, b):
        return torch.logical_or(a, b)

    def counted(self, iterable):
        if type(iterable) is TorchRange:
            return staging.Counted(iterable.start, iterable.stop, iterable.step, lambda i: i,
                                   self.over_range())
        return NotImplemented

    def print_(self, *args, sep=" ", end="\n", **kwargs):
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        # torch's print operator fails export's checks inside a cond or
        # while_loop body; there the print runs once, while tracing.
        if kwargs or not end.endswith("\n") or _depth[0] \
                or not builtins.any(_is_traced(a) for a in args):
            return builtins.print(*args, sep=sep, end=end, **kwargs)
        from torch._higher_order_ops.print import print as print_op
        print_op(_template(args, sep, end), *[a for a in args if isinstance(a, torch.Tensor)])
        return None

    def assert_(self, test, msg_fn):
        concrete = self.concrete(test)
        if concrete is not None:
            return Backend.assert_(self, concrete, msg_fn)
        loc = self.location()
        message = msg_fn() if msg_fn is not None else f"assertion failed ({loc})"
        torch._assert_async(self.predicate(test, "an `assert`", loc), str(message))
        return None

    def getitem(self, target, index):
        parts = self.scalar_indices(target, index)
        if parts is None:
            return target[index]
        view, indices = parts
        return torch.ops.aten.index.Tensor(view, indices)

    def setitem(self, target, index, value):
        # In place, as Python does: a name or a view that holds `target` sees
        # the change. A body that torch traces gets a copy of an input it
        # changes (`_call`, `DynamoStaging._probe`), as for `x += 1`.
        self.refuse_view_output(target)
        parts = self.scalar_indices(target, index)
        if parts is None:
            target[index] = value
            return target
        view, indices = parts
        value = value if isinstance(value, torch.Tensor) else view.new_full((), value)
        view.index_put_(indices, value if value.dtype == view.dtype else value.to(view.dtype))
        return target

    def scalar_indices(self, target, index):
        """For an index of a tensor that holds a traced integer scalar (a
        staged loop's counter): Python's indexing would want its value (torch
        raises "Could not extract specialized integer from data-dependent
        expression"), so (what the other items select: a view of `target`,
        the index list of `aten.index` and `index_put_` for it: each such
        scalar at the dimension it indexes), which read the item and check
        its bounds when the program runs. None for another index: Python's
        indexing does."""
        if not isinstance(target, torch.Tensor):
            return None
        items = index if type(index) is tuple else (index,)
        basic, indices = [], []
        for item in items:
            if isinstance(item, torch.Tensor):
                if item.dim() != 0 or item.dtype == torch.bool or item.is_floating_point() \
                        or item.is_complex() or not _is_traced(item):
                    return None
                basic.append(slice(None))
                indices.append(item)
            elif type(item) is slice:
                basic.append(item)
                indices.append(None)
            elif type(item) is int or type(item) is torch.SymInt:
                basic.append(item)  # its dimension goes
            else:
                return None  # `...`, None, a list: Python's indexing, as it is
        if not [i for i in indices if i is not None]:
            return None
        while indices[-1] is None:
            indices.pop()
        plain = [b for b in basic if not (type(b) is slice and b == slice(None))]
        return (target[tuple(basic)] if plain else target), indices

    def stack(self, values, axis):
        if "torch" not in sys.modules:
            return NotImplemented
        _load()
        if not builtins.any(isinstance(v, torch.Tensor) for v in values):
            return NotImplemented
        return torch.stack([v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for v in values], dim=axis)

    def builtin(self, func):
        return _BUILTINS.get(func)

    def augmented(self, op, plain, target, value):
        # (First: a number on one way through a staged statement may be a view on another.)
        self.refuse_view_output(target)
        if self.is_number(target):  # a new number, as Python makes
            result = plain(target, value)
            return self.number(result) if type(value) in _NUMBERS or _is_symbolic(value) or self.is_number(value) \
                else result
        return op(target, value)

    def in_place(self, target):
        self.refuse_view_output(target)
        return target

    def mark_views(self, outs, views):
        """Marks the outputs `outs[c]`, for each (c, (name, what, loc,
        passed)) in `views[0]`, of a staged statement that gives on some
        way through it a view of another tensor there (`a = b if c else
        x[4]`), or (`passed`) a tensor that other names may hold (the
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
            if self.compiling():
                self.markable(t)
                t._autograph_view = (self.graph_token(), where)
            else:
                t._autograph_view = (True, where)
        return outs

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
        holds while the body that made it is traced (`_body`). An
        output's mark (`mark_views`) goes here too, as (name, what, loc,
        passed), where a probe gives the tensor that passes through."""
        for t, where in origins:
            if self.compiling():
                self.mark_origin(t, where)
            else:
                t._autograph_origin = (_bodies[-1] if _bodies else 0, where)

    def refuse_view_output(self, target):
        """Refuses to change in place a tensor that `mark_views` or
        `mark_origins` marked in the program being traced (or a view of one
        that `mark_origins` marked)."""
        if not isinstance(target, self.tensor_type()):
            return
        mark = getattr(target, "_autograph_view", None)
        if mark is not None:
            token, (name, what, loc, passed) = mark
            if (token == self.graph_token() or self.resuming()) if self.compiling() else is_fake(target):
                raise serrors.view_output_changed(name, what, loc, self.location(), passed)
        if self.compiling():
            origin = self.origin_of(target)
        elif is_fake(target):
            origin = None
            for t in (target, target._base):
                body, where = getattr(t, "_autograph_origin", (None, None))
                if where is not None and (body == 0 or body in _bodies):
                    origin = where
        else:
            return
        if origin is not None:  # (an output's mark, where it is the tensor that passes through)
            raise (serrors.view_output_changed if len(origin) == 4 else serrors.origin_changed)(
                *origin, self.location())


_BACKEND = TorchBackend()  # for messages, and the helpers of the non-strict path:
_is_traced, _is_number, _number, _copy = _BACKEND.is_traced, _BACKEND.marked, _BACKEND.number, _BACKEND.copy
