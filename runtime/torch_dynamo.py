"""How the torch backend stages control flow under `torch.compile` (and
`torch.export(..., strict=True)`), whose tracer, dynamo, runs the bytecode of
converted code itself.

Dynamo sees every tensor as traced: a condition on one has no value while
it traces. The backend then calls dynamo's own higher-order operators,
`torch.cond` and `torch._higher_order_ops.while_loop`, which trace each body
function as a subgraph of the one graph that dynamo builds. They ask more of
a body than torch's operators underneath (which `torch.export`'s non-strict
mode calls; see torch_backend.py):

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

The call hook (calls.py) and the error locations (errors.py) take paths
that dynamo can trace while `torch.compiler.is_dynamo_compiling()`; `install`
sets them up once torch is imported.
"""

import os
import sys
import types

from autograph.runtime import calls, errors, torch_numbers
from autograph.runtime import torch_backend as tb
from autograph.runtime.staging import Retry
from autograph.runtime.staging import errors as serrors

__all__ = ["DynamoStaging", "graph_token", "install", "resuming", "tracing"]

_PACKAGE = __name__.split(".")[0] + "."


def install(torch):
    """Routes the call hook and error locations through dynamo-safe paths
    while dynamo traces."""
    global _compiling
    _compiling = torch.compiler.is_dynamo_compiling
    calls.set_bytecode_tracer(_compiling, _outside, _ready)
    errors.set_traced_location(_traced_location)


def _ready():
    """Keeps dynamo from compiling this package's runtime functions as
    frames of their own (it still traces them inside converted code): when
    dynamo cannot trace a statement, it runs the statement's operator call
    as Python, and that must run the operator as Python throughout, with
    the tensors' values, as the unconverted statement would. Run once,
    while dynamo traces, outside the trace."""
    global _skipped
    if not _skipped:
        from torch._dynamo.eval_frame import skip_code
        for code in _runtime_code():
            skip_code(code)
        _skipped = True
    return True


def _runtime_code():
    """The code objects of the runtime's modules, nested ones included."""
    found, stack = set(), []
    for name, module in list(sys.modules.items()):
        if name.startswith(_PACKAGE + "runtime") and module is not None:
            for value in vars(module).values():
                members = vars(value).values() if isinstance(value, type) else (value,)
                for member in members:
                    member = getattr(member, "__func__", member)
                    if isinstance(member, types.FunctionType) and member.__module__ == name:
                        stack.append(member.__code__)
    while stack:
        code = stack.pop()
        if code not in found:
            found.add(code)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


_compiling = None
_skipped = False


def _converted_outside(convert, f):
    """Runs `convert(f)` while dynamo traces, outside the trace: dynamo calls
    a function marked as having a constant result as it is, with the
    values of its arguments, and takes its result as a constant. A
    function is no constant that dynamo can call, so it waits in `_held`
    under a name of its own, which dynamo reads like any attribute (and
    so knows where it comes from: the closure of converted code holds
    objects that dynamo wraps only when they have a source)."""
    converted = convert(f)
    name = f"converted_{id(converted)}"
    setattr(_held, name, converted)
    return name


def _traced_location():
    """'file:line' of the user's statement that dynamo is tracing, or None
    where dynamo traces nothing (its stack of the user's frames is empty:
    eager code, torch.export's non-strict mode). While dynamo traces, it
    runs this outside the trace, as a constant (and so `_ready`): one guard
    on every call of the compiled function, where a test of
    `is_dynamo_compiling()` in the trace would add more."""
    from torch._guards import TracingContext
    stack = TracingContext.extract_stack()
    if not stack:
        return None
    _ready()
    for frame in reversed(stack):
        if not frame.filename.startswith(_RUNTIME_DIR):
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


# What `torch.compiler.assume_constant_result` does (importing it costs
# torch._dynamo's import, 1.5 s, in programs that never compile).
_converted_outside._dynamo_marked_constant = True
_traced_location._dynamo_marked_constant = True
_ready._dynamo_marked_constant = True
_held = types.SimpleNamespace()
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _generated(code):
    return errors.is_generated(code)


_generated._dynamo_marked_constant = True


def _outside(convert, f):
    """`convert(f)` while dynamo traces. A function of generated code (a
    lambda or a def inside converted code) is its own conversion; dynamo
    may have made it in the trace, and could not hand it to
    `_converted_outside`, so it is asked about its code."""
    if _generated(f.__code__):
        return f
    return getattr(_held, _converted_outside(convert, f))


def tracing():
    """True while dynamo traces, asked outside the trace (in the code that
    dynamo traces, `torch.compiler.is_dynamo_compiling()` says it; called,
    it says False). Importing dynamo costs 1.5 s: a program that has not
    imported it traces nothing."""
    module = sys.modules.get("torch._dynamo.symbolic_convert")
    return module is not None and getattr(module.tls, "current_tx", None) is not None


def graph_token():
    """A number of the graph that dynamo builds now (trace-time state)."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    graph = InstructionTranslator.current_tx().output
    if _graphs.get("graph") is not graph:
        _graphs.update(graph=graph, token=_graphs.get("token", 0) + 1)
    return _graphs["token"]


def resuming():
    """True when the frame that dynamo traces is the rest of a function after
    a graph break: its tensors are the interrupted frame's values, marked
    (tb._number) by the graph before the break. Trace-time state."""
    from torch._dynamo.resume_execution import TORCH_DYNAMO_RESUME_IN_PREFIX
    from torch._dynamo.symbolic_convert import InstructionTranslator
    return InstructionTranslator.current_tx().output.root_tx.f_code.co_name.startswith(
        TORCH_DYNAMO_RESUME_IN_PREFIX)


graph_token._dynamo_marked_constant = resuming._dynamo_marked_constant = True
_graphs = {}


def _track_local(ctx):
    variable = _tracked(ctx)
    variable.as_proxy().node.meta[torch_numbers.MARK] = True


def _tracked(ctx):
    """The VariableTracker of the local `value` of the frame that `ctx`
    traces, one whose attributes the traced code may set."""
    from torch._dynamo.variables.base import AttributeMutationNew
    variable = ctx.get_local("value")._i_will_not_complain_if_bc_breaks_VariableTracker()
    side_effects = ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator().output.side_effects
    if not side_effects.is_attribute_mutation(variable):
        side_effects.track_mutable(object(), variable, AttributeMutationNew)
    return variable


def _mark_local_if_derived(ctx):
    """Marks the local `value` (a tensor) as tb._number does if
    torch_numbers.derived says it stands for a number and the local
    `store` is True; `_last_derived[0]` tells whether it does.
    A body of a torch.cond or while_loop is a graph of its own, in which
    each tensor that it reads from outside is an input (a lifted free
    variable): `derived` follows those to the graph outside."""
    from torch._dynamo.variables import ConstantVariable
    variable = ctx.get_local("value")._i_will_not_complain_if_bc_breaks_VariableTracker()
    output = ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator().output
    lifted, tracer = {}, output.current_tracer
    while tracer is not None:
        lifted.update((inner.node, outer.node) for outer, inner in tracer.lifted_freevars.items())
        tracer = tracer.parent
    _last_derived[0] = torch_numbers.derived(variable.as_proxy().node, lifted)
    if _last_derived[0] and ctx.get_local("store")._i_will_not_complain_if_bc_breaks_VariableTracker() \
            .as_python_constant():
        output.side_effects.store_attr(_tracked(ctx), "_autograph_number", ConstantVariable.create(graph_token()))


def _fake(variable):
    """The fake value that dynamo runs operations on for a TensorVariable."""
    return variable.as_proxy().node.meta.get("example_value")


def _example(ctx, name):
    """The fake value of the tensor that the local `name` of the frame that
    `ctx` traces holds."""
    return _fake(ctx.get_local(name)._i_will_not_complain_if_bc_breaks_VariableTracker())


def _origins_now():
    """{id: (fake value, (name, what, loc), scope)} of the tensors that
    `DynamoStaging.mark_origin` marked in the graph that dynamo builds now."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    graph = InstructionTranslator.current_tx().output
    if _origins.get("graph") is not graph:
        _origins.update(graph=graph, table={})
    return _origins["table"]


def _scope():
    """Where a mark is made: the graph being built (a body's own, inside
    the enclosing ones), and the probe that runs, if any. A mark made in a
    body holds while it is traced: what the body gives passes through it
    in the probe, as it is, and so is marked by the statement around it."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    probes = _probes.get("stack")
    return InstructionTranslator.current_tx().output.current_tracer, probes[-1] if probes else 0


def _in_scope(scope):
    (tracer, probe), (current, _) = scope, _scope()
    while current is not None and current is not tracer:
        current = current.parent
    return current is not None and (probe == 0 or probe in _probes["stack"])


def _record_origin(ctx):
    fake, table = _example(ctx, "value"), _origins_now()
    where = ctx.get_local("where")._i_will_not_complain_if_bc_breaks_VariableTracker().as_python_constant()
    for t in (fake, getattr(fake, "_base", None)):  # (a change of the tensor it views changes it too)
        if t is not None:
            table[id(t)] = (t, where, _scope())


def _find_origin(ctx):
    fake, table = _example(ctx, "value"), _origins_now()
    _last_origin[0] = None
    for t in (fake, getattr(fake, "_base", None)):  # (a view's change changes the tensor it views)
        entry = table.get(id(t)) if t is not None else None
        if entry is not None and entry[0] is t and _in_scope(entry[2]):
            _last_origin[0] = entry[1]


_origins = {}  # for _origins_now: trace-time state
_last_origin = [None]  # what _find_origin found last: trace-time state


def _named_args(ctx, name):
    """`tb.named_elsewhere` for the local list `name` of the frame that
    `ctx` traces (a statement's operands), over the frames that dynamo
    traces and their variables as it tracks them."""
    from torch._dynamo.variables import BaseListVariable, ConstDictVariable, TensorVariable
    from torch._dynamo.variables.lazy import LazyVariableTracker

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

    frames, tx = [], ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator()
    side_effects = tx.output.side_effects
    while tx is not None:
        frames.append((tx.f_globals.get("__name__", ""), tx.symbolic_locals, names(tx.symbolic_locals)))
        tx = tx.parent
    # The attributes that the traced code set on the user's objects (a tensor
    # made in the trace is held by one only then).
    for variable, attributes in side_effects.store_attr_mutations.items():
        cls = getattr(variable, "value_type", None)
        module = getattr(cls, "__module__", None) or ""
        if cls is not None and not module.startswith((_PACKAGE, "torch")):
            frames.append((module, attributes, ()))
    items = ctx.get_local(name)._i_will_not_complain_if_bc_breaks_VariableTracker().items
    candidates = [next(iter(leaves(v, 0)), (None,))[0] for v in items]  # (the fake value of each tensor)
    return tb.named_elsewhere(frames, candidates, leaves)


def _before_probe(ctx):
    """Notes, for `DynamoStaging.changed`, the version counters of a probe's
    copies (the local `copies` of the frame that `ctx` traces) and of the
    other tensors, and the positions of its operands (the local `args`) that
    other names may hold: inputs of the outermost graph (the caller's
    tensors, parameters, buffers, also where a body reads them from
    outside), tensors that a variable of the user's code holds
    (`tb.named_elsewhere`), and, in an enclosing probe's body, the copies
    of such operands, which stand for them there (the operand of an `if`
    inside a traced `if`; a loop's carried value as it enters). Pushes this
    probe's copies of those for the probes inside it."""
    outside, ids = _outside_versions(ctx, "copies"), _example_ids(ctx, "args")
    inputs = {id(v) for v, _, _, root in outside if root}.union(*_held_copies)
    held = tuple(sorted({j for j, i in enumerate(ids) if i in inputs} | _named_args(ctx, "args")))
    copies = _example_ids(ctx, "copies")
    _held_copies.append({copies[j] for j in held if copies[j] is not None})
    _versions.append((_local_versions(ctx, "copies"), outside, held))


def _local_versions(ctx, name):
    """Per element of the local list `name` of the frame that `ctx` traces,
    the version counters of its tensors (of the fake values that dynamo
    runs each operation on: an in-place one bumps them, through a view too)."""
    from torch._dynamo.variables import BaseListVariable, ConstDictVariable, TensorVariable

    def versions(variable):
        if isinstance(variable, TensorVariable):
            example = _fake(variable)
            return example._version if example is not None else None
        if isinstance(variable, BaseListVariable):
            return tuple(versions(item) for item in variable.items)
        if isinstance(variable, ConstDictVariable):
            return tuple(versions(item) for item in variable.items.values())
        return None
    return versions(ctx.get_local(name)._i_will_not_complain_if_bc_breaks_VariableTracker())


def _example_ids(ctx, name):
    """`id()` of the fake value of each tensor in the local list `name` of
    the frame that `ctx` traces (None for another value)."""
    from torch._dynamo.variables import TensorVariable
    items = ctx.get_local(name)._i_will_not_complain_if_bc_breaks_VariableTracker().items
    return [id(_fake(v)) if isinstance(v, TensorVariable) else None for v in items]


def _outside_versions(ctx, name, inputs_only=False):
    """(fake value, version counter, whether it is an input, whether it is
    an input of the outermost graph) of each tensor that the graphs being
    built hold (the current one and those around it; a tensor that a body
    reads from outside has the fake value of the tensor outside),
    but the tensors of the local list `name` of the frame that `ctx` traces
    (a probe's copies). With `inputs_only`, only the graphs' inputs, which
    dynamo keeps at the start of each graph."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    from torch._dynamo.variables import BaseListVariable, TensorVariable
    own, pending = set(), [ctx.get_local(name)._i_will_not_complain_if_bc_breaks_VariableTracker()]
    while pending:
        variable = pending.pop()
        if isinstance(variable, TensorVariable):
            own.add(id(_fake(variable)))
        elif isinstance(variable, BaseListVariable):
            pending.extend(variable.items)
    found, tracer = {}, InstructionTranslator.current_tx().output.current_tracer
    while tracer is not None:
        for node in tracer.graph.nodes:
            if inputs_only and node.op != "placeholder":
                break
            value = node.meta.get("example_value")
            if isinstance(value, tb.torch.Tensor) and id(value) not in own:
                found[id(value)] = (value, value._version, node.op == "placeholder",
                                    node.op == "placeholder" and tracer.parent is None)
        tracer = tracer.parent
    return list(found.values())


def _bind_symbols():
    """Binds, in the body that dynamo traces, the symbols of the sizes of
    the tensors made there so far (a copy of a value with a dynamic size,
    `DynamoStaging._guarded`): torch 2.13's dynamo binds them lazily, and a
    closure that reads such a size later gets the lazy binding itself
    (`n - 1` with `n = len(x)` in a loop body: "NotImplementedError:
    argument of type: <class 'torch._dynamo.output_graph.LazyProxy'>")."""
    from torch._dynamo.output_graph import LazyProxy
    from torch._dynamo.symbolic_convert import InstructionTranslator
    tracer = InstructionTranslator.current_tx().output.current_tracer
    for symbol, proxy in list(tracer.bound_symbols.items()):
        if isinstance(proxy, LazyProxy):
            tracer.bound_symbols[symbol] = proxy()


def _erase_local(ctx):
    tb.erase_unused(ctx.get_local("value").as_proxy().node, None)  # dynamo keeps what the graph reads


# Trace-time state, kept outside the trace ---------------------------------------

#: Python's recursion limit while dynamo traces a staged statement (raised
#: to it if lower): dynamo runs about 125 Python frames deep per nested
#: staged `if` of converted code (about 40 for a hand-written torch.cond,
#: which has fewer frames to inline), so Python's default of 1000 refused
#: 8 nested `if`s ("RecursionError: maximum recursion depth exceeded");
#: 4000 allows about 28.
RECURSION_LIMIT = 4000


def _probing(delta):
    """How many probes run (after adding `delta`) in the graph that dynamo
    builds now: trace-time state, kept outside the trace, per graph (a
    trace that dynamo abandons in a probe leaves no count behind). When
    the outermost probe ends, the nodes that it added and that nothing
    uses are erased: `torch.export` keeps every node of the graph."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    graph = InstructionTranslator.current_tx().output
    if _probes.get("graph") is not graph:
        _probes.update(graph=graph, depth=0, stack=[], count=0)
        _versions.clear()
        _held_copies.clear()
    if delta > 0 and _probes["depth"] == 0:
        tracer = graph.current_tracer
        _probes["start"] = (tracer, tracer.graph._root.prev)  # the last node before the probe
    if delta > 0:
        _probes["count"] += 1
        _probes["stack"].append(_probes["count"])  # (for _scope)
    elif delta < 0:
        _probes["stack"].pop()
    _probes["depth"] += delta
    if delta < 0 and _probes["depth"] == 0:
        _erase_unused(*_probes.pop("start"))
        _versions.clear()  # what a probe that raised (Retry) left
        _held_copies.clear()
    return _probes["depth"]


def _in_body():
    from torch._dynamo.symbolic_convert import InstructionTranslator
    output = InstructionTranslator.current_tx().output
    return output.current_tracer.parent is not None or (_probes.get("graph") is output and _probes["depth"] > 0)


def _erase_unused(tracer, last):
    """Erases the nodes after `last` in `tracer`'s graph that nothing uses,
    last first, keeping the in-place operations on values made before."""
    added = []
    node = last.next
    while node is not tracer.graph._root:
        added.append(node)
        node = node.next
    made = set(added)
    for node in reversed(added):
        if node.users or node.op not in ("call_function", "call_method"):
            continue
        if tb._has_effect(node) and not (node.args and node.args[0] in made):
            continue  # an effect on a value from outside the probe
        tracer.remove_node(node)


_probes = {}
_last_derived = [False]  # what DynamoStaging.mark_derived found last: trace-time state
_versions = []  # what _local_versions found, for DynamoStaging.changed: trace-time state
_held_copies = []  # per probe running, its copies that _before_probe tells: trace-time state


def _objects_made_here():
    """The class names of the user objects created in the graph that dynamo
    builds now (not this package's, not torch's): trace-time state."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    from torch._dynamo.variables.base import AttributeMutationNew
    side_effects = InstructionTranslator.current_tx().output.side_effects
    names = []
    for var in side_effects.id_to_variable.values():
        cls = getattr(var, "value_type", None)
        module = getattr(cls, "__module__", "") or ""
        if isinstance(var.mutation_type, AttributeMutationNew) and cls is not None \
                and not module.startswith((_PACKAGE, "torch")) and cls.__qualname__ not in names:
            names.append(cls.__qualname__)
    return names


# cond and loops ----------------------------------------------------------------

class DynamoStaging:
    """What the torch backend (a subclass) does while dynamo traces: its
    helpers are methods, not module functions. Dynamo guards, on every call
    of the compiled function, each function and constant that the code it
    traces reads from a module, but not a method that it looks up on an
    object whose type it checks (the backend): so the code that dynamo
    traces on every staged statement reads as few globals as it can."""

    __slots__ = ()

    def location(self):
        # Under dynamo `traced_location` runs outside the trace, where
        # `errors.user_location` would cost its module, its defaults and the
        # hook it calls.
        return self.traced_location() or errors.user_location()

    # Trace-time state, which dynamo runs outside the trace (a constant
    # result, as `torch.compiler.assume_constant_result` marks it): methods,
    # which dynamo calls without a guard, where it guards each module function.

    def traced_location(self):
        return _traced_location()

    def probes(self, delta):
        return _probing(delta)

    def objects_made_here(self):
        return _objects_made_here()

    def last_derived(self):
        return _last_derived[0]

    def dynamo_in_body(self):
        """True while dynamo traces a cond or while_loop body, or a probe."""
        return _in_body()

    def changed(self):
        """The positions whose tensors changed between the last two
        `_local_versions` (a probe's copies before and after its body),
        whether a tensor from outside them changed in place too, the
        positions of the body's outputs that are tensors from outside the
        probe (which their names outside still hold after the statement),
        and those of the probe's operands that other names may hold
        (`_before_probe`)."""
        (new, after, out), (old, before, held) = _versions.pop(), _versions.pop()
        _held_copies.pop()
        known = {id(v) for v, _, _, _ in before}
        # An input that dynamo lifted in the probe (a tensor that the body reads
        # from outside) was made with version 0.
        changed = [v for v, version, _, _ in before if v._version != version] + [
            v for v, version, placeholder, _ in after if placeholder and version and id(v) not in known]
        known |= {id(v) for v, _, _, _ in after}
        return (tuple(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b), bool(changed),
                tuple(j for j, i in enumerate(out) if i in known), held)

    def graph_token(self):
        return graph_token()

    def resuming(self):
        return resuming()

    traced_location._dynamo_marked_constant = True
    probes._dynamo_marked_constant = True
    objects_made_here._dynamo_marked_constant = True
    last_derived._dynamo_marked_constant = changed._dynamo_marked_constant = True
    dynamo_in_body._dynamo_marked_constant = True

    def mark_derived(self, value):
        """Marks tensor `value` as standing for a Python number, as tb._number
        does, if torch_numbers.derived says that arithmetic made it from such tensors
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
            _mark_local_if_derived(ctx)
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
            _track_local(ctx)
        comptime(track)

    def mark_origin(self, value, where):
        """`mark_origins` for tensor `value` while dynamo traces: a table of
        the graph being built (trace-time state), which `origin_of` reads."""
        from torch._dynamo.comptime import comptime

        def record(ctx):  # made here: dynamo guards a function read from a module or a class
            _record_origin(ctx)
        comptime(record)

    def origin_of(self, value):
        """The (name, what, loc) with which `mark_origin` marked tensor
        `value`, or the tensor that it views, in the graph being built; None
        if it did not."""
        from torch._dynamo.comptime import comptime

        def find(ctx):  # made here: dynamo guards a function read from a module or a class
            _find_origin(ctx)
        comptime(find)
        return self.last_origin()

    def last_origin(self):
        return _last_origin[0]

    last_origin._dynamo_marked_constant = True

    def erase_traced(self, value):
        """Erases the operations that made `value` (a tensor that nothing uses
        and nothing will) from the graph that dynamo builds, as far back as
        nothing else uses them."""
        from torch._dynamo.comptime import comptime
        comptime(_erase_local)

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
        return {i for i, v in enumerate(values) if isinstance(v, self.tensor_type())
                and [leaf for leaf in leaves if leaf is v]}  # (no any(): dynamo guards each builtin)

    def _guarded(self, values, mutated):
        """`values` with copies at the positions in `mutated`."""
        from torch._dynamo.comptime import comptime

        def bind(ctx):  # made here: dynamo guards a function read from a module or a class
            _bind_symbols()
        copies = [self.copy(v) if i in mutated else v for i, v in enumerate(values)]
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

    def distinct(self, outs):
        """`outs` with a copy of each tensor that is also an earlier output
        (`z = y` in a branch): torch refuses outputs that alias each other
        under dynamo, and non-strict export takes them for one output (which
        is wrong where a loop runs zero times)."""
        seen = []
        for v in outs:
            seen.append(v.clone() if isinstance(v, self.tensor_type()) and [s for s in seen if s is v] else v)
        return seen

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
            _before_probe(ctx)

        def after(ctx):  # (the inputs that the body lifted: the other tensors are in `before`)
            _versions.append((_local_versions(ctx, "copies"), _outside_versions(ctx, "copies", inputs_only=True),
                              _example_ids(ctx, "out")))
        self.probes(1)
        try:
            copies = [self._copies(v) for v in args]
            comptime(before)
            result = fn(*copies)
            out = leaves(result)
            comptime(after)
            changed, outside, kept, held_args = self.changed()
            if outside:
                raise serrors.outside_changed_in_place(statement.what, statement.loc)
            tensor = self.tensor_type()
            based = {i for i, a in enumerate(args) if isinstance(a, tensor) and a._base is not None}
            views = {j for j, v in enumerate(out) if isinstance(v, tensor) and (
                v._base is not None or [i for i in based if copies[i] is v])}
            held = {i: args[i] for i in held_args}
            passed = {}  # position: the tensor from outside that the output is
            for j, v in enumerate(out):
                if j in views or not isinstance(v, tensor):
                    continue
                for i in held_args:
                    if copies[i] is v and not self.is_number(v):  # (a copy, which the probe made)
                        passed[j] = args[i]
                if j in kept and not (self.marked(v) or not v.dim() and self.derived(v)):
                    passed[j] = v
            return copies, result, changed, (views, based, passed, held)
        finally:
            self.probes(-1)

    def refuse_views_changed(self, statement, values, changed, name):
        """Refuses a body that changes in place (`a += 1`) one of `values`
        (at the positions in `changed`) that is a view of another tensor:
        Python changes the tensor it views too, but torch traces the body
        on a copy. `name(i)` names position i in the message."""
        for i in changed:
            v = values[i]
            if isinstance(v, self.tensor_type()) and v._base is not None:
                raise serrors.view_changed_in_place(name(i), statement.what, statement.loc)

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
                raise serrors.changed_in_place_and_assigned(loop.leaf_name(positions[i]), loop.what, loop.loc)

    def views_given(self, branches, views, passed, written):
        """For `mark_views`: ((carried output, (name, what, loc, passed)),
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
                name = self.output_name(branches.names[branches.flats[0].owner[j]])
                marks.append((c, (name, branches.what, branches.loc, j not in views)))
                if j in passed and j not in views:
                    origins.append((passed[j], (name, branches.what, branches.loc)))
        return marks, origins

    def output_name(self, name):
        """A statement's output `name` as messages name it (None for a
        conditional expression's value)."""
        return None if name == "<expression>" else f"`{name}`"

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
                marks.append((i, (loop.leaf_name(j), loop.what, loop.loc, False)))
            elif (j in passed or i in held) and i not in changed:
                marks.append((i, (loop.leaf_name(j), loop.what, loop.loc, True)))
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
                f"{tb.torch.__version__}'s dynamo loses the attribute writes made to such an object after "
                "that statement (docs/pytorch.md), which would give a wrong result. Create the object outside "
                "the compiled function and pass it in, or keep the values in variables or a dict")

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
                for j, (kind, t) in enumerate(plan):
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
        outs = self.torch_cond(self.boolean(pred), branch(0), branch(1))
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
