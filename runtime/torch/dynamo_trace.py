"""What the torch backend reads of dynamo while it traces: its graph, the
variables it tracks, its side effects; and what the backend remembers per
graph. Everything here runs outside the trace, in `comptime` hooks or as
functions that dynamo takes as constants (dynamo_staging.py calls them).

The state of one graph is a `DynamoTrace`, reached through a context
variable: made when the backend first asks about a graph that dynamo
builds, replaced when dynamo builds another (it holds its graph weakly).
"""

import contextvars
import itertools
import sys
import weakref

from autograph.runtime.torch import compat, graphs, numbers
from autograph.runtime.torch.aliasing import PACKAGE, named_elsewhere

__all__ = ["RECURSION_LIMIT", "DynamoTrace", "after_probe", "before_probe", "bind_symbols", "changed", "erase_local",
           "find_origin", "graph_token", "in_body", "mark_local_if_derived", "objects_made_here", "probing",
           "record_origin", "resuming", "state", "track_local"]


class DynamoTrace:
    """What the backend remembers while dynamo builds one graph."""

    __slots__ = ("graph", "held_copies", "last_derived", "last_origin", "origins", "probe_count", "probe_depth",
                 "probe_stack", "probe_start", "token", "versions")

    def __init__(self, graph):
        self.graph = weakref.ref(graph)  # dynamo's OutputGraph
        self.token = next(_TOKENS)  # tells this graph's marks from another's (`Numbers.number`)
        self.origins = {}  # {id: (fake value, (name, what, loc), scope)}: `mark_origin`'s marks
        self.last_origin = None  # what `find_origin` found last
        self.last_derived = False  # what `mark_local_if_derived` found last
        self.probe_depth = 0  # how many probes run
        self.probe_count = 0  # how many probes ran
        self.probe_stack = []  # the numbers of the probes that run, outermost first
        self.probe_start = None  # (tracer, the last node before the outermost probe)
        self.versions = []  # what `before_probe` and `after_probe` found, for `changed`
        self.held_copies = []  # per probe running, its copies that `before_probe` tells


_TOKENS = itertools.count(1)
_TRACE = contextvars.ContextVar("autograph_torch_dynamo_trace", default=None)


def state():
    """The `DynamoTrace` of the graph that dynamo builds now."""
    graph = compat.current_translator().output
    trace = _TRACE.get()
    if trace is None or trace.graph() is not graph:
        trace = DynamoTrace(graph)
        _TRACE.set(trace)
    return trace


def graph_token():
    """A number of the graph that dynamo builds now."""
    return state().token


def resuming():
    """True when the frame that dynamo traces is the rest of a function after
    a graph break: its tensors are the interrupted frame's values, marked
    (`Numbers.number`) by the graph before the break."""
    return compat.resuming()


def track_local(ctx):
    variable = _tracked(ctx)
    variable.as_proxy().node.meta[numbers.MARK] = True


def _tracked(ctx):
    """The VariableTracker of the local `value` of the frame that `ctx`
    traces, one whose attributes the traced code may set."""
    variable = compat.local(ctx, "value")
    compat.track_new(compat.translator(ctx).output.side_effects, variable)
    return variable


def mark_local_if_derived(ctx):
    """Marks the local `value` (a tensor) as `Numbers.number` does if
    `numbers.derived` says it stands for a number and the local `store` is
    True; the trace's `last_derived` tells whether it does.
    A body of a torch.cond or while_loop is a graph of its own, in which
    each tensor that it reads from outside is an input (a lifted free
    variable): `derived` follows those to the graph outside."""
    variable = compat.local(ctx, "value")
    output = compat.translator(ctx).output
    lifted, tracer = {}, output.current_tracer
    while tracer is not None:
        lifted.update((inner.node, outer.node) for outer, inner in tracer.lifted_freevars.items())
        tracer = tracer.parent
    trace = state()
    trace.last_derived = numbers.derived(variable.as_proxy().node, lifted)
    if trace.last_derived and compat.local(ctx, "store").as_python_constant():
        output.side_effects.store_attr(_tracked(ctx), "_autograph_number", compat.constant(trace.token))


def _fake(variable):
    """The fake value that dynamo runs operations on for a TensorVariable."""
    return variable.as_proxy().node.meta.get("example_value")


def _example(ctx, name):
    """The fake value of the tensor that the local `name` of the frame that
    `ctx` traces holds."""
    return _fake(compat.local(ctx, name))


def _scope():
    """Where a mark is made: the graph being built (a body's own, inside
    the enclosing ones), and the probe that runs, if any. A mark made in a
    body holds while it is traced: what the body gives passes through it
    in the probe, as it is, and so is marked by the statement around it."""
    probes = state().probe_stack
    return compat.current_translator().output.current_tracer, probes[-1] if probes else 0


def _in_scope(scope):
    (tracer, probe), (current, _) = scope, _scope()
    while current is not None and current is not tracer:
        current = current.parent
    return current is not None and (probe == 0 or probe in state().probe_stack)


def record_origin(ctx):
    fake, table = _example(ctx, "value"), state().origins
    where = compat.local(ctx, "where").as_python_constant()
    for t in (fake, getattr(fake, "_base", None)):  # (a change of the tensor it views changes it too)
        if t is not None:
            table[id(t)] = (t, where, _scope())


def find_origin(ctx):
    trace = state()
    fake, table = _example(ctx, "value"), trace.origins
    trace.last_origin = None
    for t in (fake, getattr(fake, "_base", None)):  # (a view's change changes the tensor it views)
        entry = table.get(id(t)) if t is not None else None
        if entry is not None and entry[0] is t and _in_scope(entry[2]):
            trace.last_origin = entry[1]


def _named_args(ctx, name):
    """`aliasing.named_elsewhere` for the local list `name` of the frame that
    `ctx` traces (a statement's operands), over the frames that dynamo
    traces and their variables as it tracks them."""
    TensorVariable, BaseListVariable, ConstDictVariable, LazyVariableTracker = compat.variable_kinds()

    def leaves(variable, depth):
        if isinstance(variable, LazyVariableTracker):
            if not variable.is_realized():  # (realizing it would guard it): an input, which `changed` tells
                return
            variable = variable.unwrap()
        if isinstance(variable, TensorVariable):
            example = _fake(variable)
            if example is not None:
                yield example, example._base
        elif depth and isinstance(variable, (BaseListVariable, ConstDictVariable)):
            items = variable.items.values() if isinstance(variable, ConstDictVariable) else variable.items
            for item in items:
                yield from leaves(item, depth - 1)

    def names(local):
        try:
            value = local["names"].as_python_constant() if "names" in local else ()
        except NotImplementedError:
            return ()
        return value if type(value) is tuple else ()

    frames, tx = [], compat.translator(ctx)
    side_effects = tx.output.side_effects
    while tx is not None:
        frames.append((tx.f_globals.get("__name__", ""), tx.symbolic_locals, names(tx.symbolic_locals)))
        tx = tx.parent
    # The attributes that the traced code set on the user's objects (a tensor
    # made in the trace is held by one only then).
    for variable, attributes in side_effects.store_attr_mutations.items():
        cls = getattr(variable, "value_type", None)
        module = getattr(cls, "__module__", None) or ""
        if cls is not None and not module.startswith((PACKAGE, "torch")):
            frames.append((module, attributes, ()))
    items = compat.local(ctx, name).items
    candidates = [next(iter(leaves(v, 0)), (None,))[0] for v in items]  # (the fake value of each tensor)
    return named_elsewhere(frames, candidates, leaves)


def before_probe(ctx):
    """Notes, for `changed`, the version counters of a probe's
    copies (the local `copies` of the frame that `ctx` traces) and of the
    other tensors, and the positions of its operands (the local `args`) that
    other names may hold: inputs of the outermost graph (the caller's
    tensors, parameters, buffers, also where a body reads them from
    outside), tensors that a variable of the user's code holds
    (`aliasing.named_elsewhere`), and, in an enclosing probe's body, the copies
    of such operands, which stand for them there (the operand of an `if`
    inside a traced `if`; a loop's carried value as it enters). Pushes this
    probe's copies of those for the probes inside it."""
    trace = state()
    outside, ids = _outside_versions(ctx, "copies"), _example_ids(ctx, "args")
    inputs = {id(v) for v, _, _, root in outside if root}.union(*trace.held_copies)
    held = tuple(sorted({j for j, i in enumerate(ids) if i in inputs} | _named_args(ctx, "args")))
    copies = _example_ids(ctx, "copies")
    trace.held_copies.append({copies[j] for j in held if copies[j] is not None})
    trace.versions.append((_local_versions(ctx, "copies"), outside, held))


def after_probe(ctx):
    """Notes, for `changed`, the version counters of a probe's copies after
    its body, and of the inputs that the body lifted (the other tensors are
    in `before_probe`), and the ids of the body's outputs (the local `out`)."""
    state().versions.append((_local_versions(ctx, "copies"), _outside_versions(ctx, "copies", inputs_only=True),
                             _example_ids(ctx, "out")))


def changed():
    """The positions whose tensors changed between `before_probe` and
    `after_probe` (a probe's copies before and after its body), whether a
    tensor from outside them changed in place too, the positions of the
    body's outputs that are tensors from outside the probe (which their
    names outside still hold after the statement), and those of the probe's
    operands that other names may hold (`before_probe`). A tuple: dynamo
    takes the result as a constant."""
    trace = state()
    (new, after, out), (old, before, held) = trace.versions.pop(), trace.versions.pop()
    trace.held_copies.pop()
    known = {id(v) for v, _, _, _ in before}
    # An input that dynamo lifted in the probe (a tensor that the body reads
    # from outside) was made with version 0.
    moved = [v for v, version, _, _ in before if v._version != version] + [
        v for v, version, placeholder, _ in after if placeholder and version and id(v) not in known]
    known |= {id(v) for v, _, _, _ in after}
    return (tuple(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b), bool(moved),
            tuple(j for j, i in enumerate(out) if i in known), held)


def _local_versions(ctx, name):
    """Per element of the local list `name` of the frame that `ctx` traces,
    the version counters of its tensors (of the fake values that dynamo
    runs each operation on: an in-place one bumps them, through a view too)."""
    TensorVariable, BaseListVariable, ConstDictVariable, _ = compat.variable_kinds()

    def versions(variable):
        if isinstance(variable, TensorVariable):
            example = _fake(variable)
            return example._version if example is not None else None
        if isinstance(variable, BaseListVariable):
            return tuple(versions(item) for item in variable.items)
        if isinstance(variable, ConstDictVariable):
            return tuple(versions(item) for item in variable.items.values())
        return None
    return versions(compat.local(ctx, name))


def _example_ids(ctx, name):
    """`id()` of the fake value of each tensor in the local list `name` of
    the frame that `ctx` traces (None for another value)."""
    TensorVariable = compat.variable_kinds()[0]
    items = compat.local(ctx, name).items
    return [id(_fake(v)) if isinstance(v, TensorVariable) else None for v in items]


def _outside_versions(ctx, name, inputs_only=False):
    """(fake value, version counter, whether it is an input, whether it is
    an input of the outermost graph) of each tensor that the graphs being
    built hold (the current one and those around it; a tensor that a body
    reads from outside has the fake value of the tensor outside),
    but the tensors of the local list `name` of the frame that `ctx` traces
    (a probe's copies). With `inputs_only`, only the graphs' inputs, which
    dynamo keeps at the start of each graph."""
    TensorVariable, BaseListVariable, _, _ = compat.variable_kinds()
    own, pending = set(), [compat.local(ctx, name)]
    while pending:
        variable = pending.pop()
        if isinstance(variable, TensorVariable):
            own.add(id(_fake(variable)))
        elif isinstance(variable, BaseListVariable):
            pending.extend(variable.items)
    found, tracer = {}, compat.current_translator().output.current_tracer
    while tracer is not None:
        for node in tracer.graph.nodes:
            if inputs_only and node.op != "placeholder":
                break
            value = node.meta.get("example_value")
            if isinstance(value, compat.torch.Tensor) and id(value) not in own:
                found[id(value)] = (value, value._version, node.op == "placeholder",
                                    node.op == "placeholder" and tracer.parent is None)
        tracer = tracer.parent
    return list(found.values())


def bind_symbols():
    """Binds, in the body that dynamo traces, the symbols of the sizes of
    the tensors made there so far (a copy of a value with a dynamic size,
    `DynamoStaging._guarded`): torch 2.13's dynamo binds them lazily, and a
    closure that reads such a size later gets the lazy binding itself
    (`n - 1` with `n = len(x)` in a loop body: "NotImplementedError:
    argument of type: <class 'torch._dynamo.output_graph.LazyProxy'>")."""
    compat.bind_lazy_symbols(compat.current_translator().output.current_tracer)


def erase_local(ctx):
    graphs.erase_unused(ctx.get_local("value").as_proxy().node, None)  # dynamo keeps what the graph reads


#: Python's recursion limit while dynamo traces a staged statement (raised
#: to it if lower): dynamo runs about 125 Python frames deep per nested
#: staged `if` of converted code (about 40 for a hand-written torch.cond,
#: which has fewer frames to inline), so Python's default of 1000 refused
#: 8 nested `if`s ("RecursionError: maximum recursion depth exceeded");
#: 4000 allows about 28.
RECURSION_LIMIT = 4000


def probing(delta):
    """How many probes run (after adding `delta`) in the graph that dynamo
    builds now: trace-time state, kept outside the trace, per graph (a
    trace that dynamo abandons in a probe leaves no count behind). When
    the outermost probe ends, the nodes that it added and that nothing
    uses are erased: `torch.export` keeps every node of the graph."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    trace = state()
    if delta > 0 and trace.probe_depth == 0:
        tracer = trace.graph().current_tracer
        trace.probe_start = (tracer, tracer.graph._root.prev)  # the last node before the probe
    if delta > 0:
        trace.probe_count += 1
        trace.probe_stack.append(trace.probe_count)  # (for _scope)
    elif delta < 0:
        trace.probe_stack.pop()
    trace.probe_depth += delta
    if delta < 0 and trace.probe_depth == 0:
        graphs.erase_added(*trace.probe_start)
        trace.probe_start = None
        trace.versions.clear()  # what a probe that raised (Retry) left
        trace.held_copies.clear()
    return trace.probe_depth


def in_body():
    """True while dynamo traces a cond or while_loop body, or a probe."""
    trace = state()
    return trace.graph().current_tracer.parent is not None or trace.probe_depth > 0


def objects_made_here():
    """The class names of the user objects created in the graph that dynamo
    builds now (not this package's, not torch's): trace-time state."""
    side_effects = compat.current_translator().output.side_effects
    names = []
    for var in side_effects.id_to_variable.values():
        cls = getattr(var, "value_type", None)
        module = getattr(cls, "__module__", "") or ""
        if compat.made_in_trace(var) and cls is not None \
                and not module.startswith((PACKAGE, "torch")) and cls.__qualname__ not in names:
            names.append(cls.__qualname__)
    return names
