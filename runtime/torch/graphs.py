"""Edits of the fx graphs that torch traces: erasing the operations whose
results nobody uses (torch.export keeps every operation it traced, where a
probe or a retried attempt made some that the program does not need)."""

from autograph.runtime.torch import compat

__all__ = ["draws", "erase_added", "erase_unused", "erase_value", "has_effect"]


def erase_value(value):
    """Erases from the graph that torch traces the operations that made
    `value`, a tensor that nothing uses and nothing will, as far back as
    nothing else uses them."""
    mode = compat.get_proxy_mode()
    if mode is not None:
        erase_unused(compat.get_proxy_slot(value, mode.tracer).proxy.node, mode.tracer.root)


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
        if has_effect(node):
            continue
        pending.extend(node.all_input_nodes)
        node.graph.erase_node(node)


_IN_PLACE = frozenset({"iadd", "isub", "imul", "imatmul", "itruediv", "ifloordiv", "imod", "ipow",
             "ilshift", "irshift", "iand", "ixor", "ior", "setitem"})


def has_effect(node):
    """True unless fx `node` is a call that only computes its result (dynamo
    writes methods as `call_method`, `x += 1` as operator.iadd)."""
    if node.op == "call_method":
        return node.target.endswith("_")
    if node.op != "call_function" or node.is_impure():
        return True
    name = getattr(node.target, "__name__", "")
    return name.endswith("_") or name in _IN_PLACE and getattr(node.target, "__module__", "") == "_operator"


def erase_added(tracer, last):
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
        if has_effect(node) and not (node.args and node.args[0] in made) and not draws(node):
            continue  # an effect on a value from outside the probe
        tracer.remove_node(node)


# torch's functions that draw from its random generator and return new tensors.
_DRAWS = frozenset({"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli",
                    "normal", "multinomial", "poisson"})


def draws(node):
    """True if fx `node` makes a new tensor from torch's random generator: its
    only effect is on the generator's state, which a probe's draws must leave
    as it was (the program draws in the staged body, as Python does once)."""
    if node.op != "call_function":
        return False
    target = node.target
    tags = getattr(target, "tags", None)
    if tags is not None:  # an aten operator
        return compat.torch.Tag.nondeterministic_seeded in tags and not target._schema.is_mutable
    return getattr(target, "__name__", "") in _DRAWS and getattr(target, "__module__", "") in ("torch", None)
