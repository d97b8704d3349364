"""Everything the torch backend takes from torch's private API, in one
place, each use with the public API that is missing.

Importing this module does not import torch: `load()` binds the names
below once torch is imported (the backend calls it when it first meets a
tensor). Dynamo's internals are imported only where a function here runs
while dynamo traces: importing `torch._dynamo` costs 1.5 s.

`TESTED_VERSION` is the torch release the backend is tested with; another
one gets one warning when the backend loads.
"""

import sys
import warnings

__all__ = ["TESTED_VERSION", "check_version", "load"]

TESTED_VERSION = "2.13.0"

# Bound by `load()`:
torch = None
#: torch.utils._pytree: torch.utils.pytree is public in later releases only.
pytree = None
#: torch.SymBool, SymInt, SymFloat: the types of symbolic numbers.
SYMBOLIC = ()
#: torch._subclasses.fake_tensor.is_fake: whether a tensor has no data (sees
#: through functional wrappers); no public test.
is_fake = None
#: torch.fx.experimental.symbolic_shapes: deciding a symbolic condition
#: without failing, and whether a number has a static value.
guard_or_false = guard_or_true = has_static_value = None
#: torch._higher_order_ops.while_loop.while_loop: torch.while_loop is not
#: public in 2.13.
while_loop = None
#: The operators under torch.cond and while_loop, which trace a body with
#: make_fx (torch.export's non-strict mode): torch.cond hands its function
#: to torch.compile, which cannot run converted code's runtime.
cond_op = while_loop_op = None
#: torch._higher_order_ops.print: a print that runs when the program runs.
print_op = None
#: torch._assert_async: an assert that is checked when the program runs.
assert_async = None
#: torch._C.DisableTorchFunction: runs torch functions without the modes
#: that watch them (torch.overrides has no public context for it).
disable_torch_function = None
#: torch.fx.experimental.proxy_tensor: the graph that make_fx traces now and
#: the node of a tensor in it; no public API.
get_proxy_mode = get_proxy_slot = has_proxy_slot = None


def load():
    """Binds this module's names; call once torch is imported."""
    global torch, SYMBOLIC, assert_async, disable_torch_function, pytree, is_fake, guard_or_false, guard_or_true, \
        has_static_value, while_loop, cond_op, while_loop_op, print_op, get_proxy_mode, get_proxy_slot, has_proxy_slot
    if torch is not None:
        return
    import torch as torch_module
    import torch.utils._pytree as pytree_module
    from torch._higher_order_ops.cond import cond_op as cond_operator
    from torch._higher_order_ops.print import print as print_operator
    from torch._higher_order_ops.while_loop import while_loop as while_loop_function
    from torch._higher_order_ops.while_loop import while_loop_op as while_loop_operator
    from torch._subclasses.fake_tensor import is_fake as is_fake_function
    from torch.fx.experimental import proxy_tensor, symbolic_shapes
    check_version(torch_module.__version__)
    pytree, is_fake, while_loop, cond_op, while_loop_op, print_op = (
        pytree_module, is_fake_function, while_loop_function, cond_operator, while_loop_operator, print_operator)
    guard_or_false, guard_or_true = symbolic_shapes.guard_or_false, symbolic_shapes.guard_or_true
    has_static_value = symbolic_shapes.has_static_value
    get_proxy_mode, get_proxy_slot = proxy_tensor.get_proxy_mode, proxy_tensor.get_proxy_slot
    has_proxy_slot = proxy_tensor.has_proxy_slot
    assert_async, disable_torch_function = torch_module._assert_async, torch_module._C.DisableTorchFunction
    SYMBOLIC = (torch_module.SymBool, torch_module.SymInt, torch_module.SymFloat)
    torch = torch_module


def check_version(version):
    """Warns once, naming the version, where torch is not the release this
    backend is tested with (a local build's suffix, `+cpu`, does not count)."""
    if version.split("+")[0] != TESTED_VERSION:
        warnings.warn(
            f"autograph's PyTorch backend is tested with torch {TESTED_VERSION}, and torch {version} is "
            f"installed: it uses torch internals (autograph/runtime/torch/compat.py) that may have changed; "
            f"if staging fails, install torch=={TESTED_VERSION}", RuntimeWarning, stacklevel=2)


# Dynamo ------------------------------------------------------------------------
# The functions below run while dynamo traces, outside the trace (in
# `comptime` hooks, or as functions dynamo takes as constants). Dynamo has
# no public API for any of it: the frame it traces, its graph, the
# variables it tracks, its side effects. (The one use outside this module:
# the backend's methods call `torch._dynamo.comptime.comptime` themselves,
# dynamo_staging.py, since a hook reads the locals of the frame that calls
# it.)

def local(ctx, name):
    """The VariableTracker of the local `name` of the frame that `ctx` traces."""
    return ctx.get_local(name)._i_will_not_complain_if_bc_breaks_VariableTracker()


def translator(ctx):
    """The InstructionTranslator of the frame that `ctx` traces."""
    return ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator()


def current_translator():
    """The InstructionTranslator that dynamo runs now (its `output` is the
    graph being built)."""
    from torch._dynamo.symbolic_convert import InstructionTranslator
    return InstructionTranslator.current_tx()


def tracing():
    """True while dynamo traces, asked outside the trace (in the code that
    dynamo traces, `torch.compiler.is_dynamo_compiling()` says it; called,
    it says False). A program that has not imported dynamo traces nothing."""
    module = sys.modules.get("torch._dynamo.symbolic_convert")
    return module is not None and getattr(module.tls, "current_tx", None) is not None


def mode_stacks():
    """(the lengths of torch's dispatch mode stack, of its function mode
    stack), as functions: torch modes watch tensor operations where either
    is not 0 (the fake and proxy modes of torch.export and make_fx, a
    user's mode), and fake tensors, which the backend stages on, exist only
    under them."""
    return torch._C._len_torch_dispatch_stack, torch._C._len_torch_function_stack


def resuming():
    """True when the frame that dynamo traces is the rest of a function after
    a graph break."""
    from torch._dynamo.resume_execution import TORCH_DYNAMO_RESUME_IN_PREFIX
    return current_translator().output.root_tx.f_code.co_name.startswith(TORCH_DYNAMO_RESUME_IN_PREFIX)


def user_stack():
    """The user's frames that dynamo traces now, outermost first (empty where
    it traces nothing)."""
    from torch._guards import TracingContext
    return TracingContext.extract_stack()


def skip_code(code):
    """Keeps dynamo from compiling `code` as a frame of its own (it still
    inlines it into the frames it traces)."""
    from torch._dynamo.eval_frame import skip_code as skip
    skip(code)


def track_new(side_effects, variable):
    """Lets traced code set attributes on `variable`: dynamo tracks it as an
    object made in the trace."""
    from torch._dynamo.variables.base import AttributeMutationNew
    if not side_effects.is_attribute_mutation(variable):
        side_effects.track_mutable(object(), variable, AttributeMutationNew)


def made_in_trace(variable):
    """True for a variable of an object that the traced code created."""
    from torch._dynamo.variables.base import AttributeMutationNew
    return isinstance(variable.mutation_type, AttributeMutationNew)


def constant(value):
    """A VariableTracker of a Python constant."""
    from torch._dynamo.variables import ConstantVariable
    return ConstantVariable.create(value)


def variable_kinds():
    """(TensorVariable, BaseListVariable, ConstDictVariable, LazyVariableTracker)."""
    from torch._dynamo.variables import BaseListVariable, ConstDictVariable, TensorVariable
    from torch._dynamo.variables.lazy import LazyVariableTracker
    return TensorVariable, BaseListVariable, ConstDictVariable, LazyVariableTracker


def bind_lazy_symbols(tracer):
    """Binds the symbols of sizes that `tracer` (a body's graph) binds lazily
    (torch 2.13's dynamo hands a later closure read of such a size its lazy
    binding itself: "NotImplementedError: argument of type: LazyProxy")."""
    from torch._dynamo.output_graph import LazyProxy
    for symbol, proxy in list(tracer.bound_symbols.items()):
        if isinstance(proxy, LazyProxy):
            tracer.bound_symbols[symbol] = proxy()
