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
test is `TorchBackend.is_traced`: a tensor is traced when `torch._subclasses.fake_tensor
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

Each body that torch traces (branches, loop tests and loop bodies) is
traced by the operators under `torch.cond` and `torch.while_loop`
(export.py).

A condition on a symbolic number that `.item()` gives (an unbacked symbol)
is staged like one on a tensor, and `range()` of it, or of a dimension
declared dynamic with `torch.export.Dim`, becomes a `while_loop` that
leaves the dimension symbolic.

`torch.compile` and `torch.export.export(..., strict=True)` trace Python
bytecode with dynamo: there every tensor is traced, and the statements
become dynamo's own `torch.cond` and `while_loop` (dynamo_staging.py).

The package, one responsibility per module:

  backend.py         `TorchBackend`: claiming tensors, their types, the
                     staged statements' entry points, print, assert, the
                     builtins `range` and `len`
  numbers.py         the tensors that stand for Python numbers
  aliasing.py        what other names see of a tensor that a staged
                     statement changes in place or gives as it is
  errors.py          the refusals of in-place changes that torch cannot stage
  indexing.py        `x[i]` and `x[i] = v` with a traced integer index
  graphs.py          erasing what nobody uses from the fx graphs
  export.py          the non-strict `torch.export` path: cond and while_loop
                     through the operators underneath, bodies traced by make_fx
  dynamo_staging.py  the `torch.compile` / strict export path: probes, then
                     dynamo's torch.cond and while_loop; the staging core's
                     classes as dynamo reads them
  dynamo_trace.py    what the backend reads of dynamo while it traces, and
                     remembers per graph
  dynamo_hooks.py    what the backend installs in the core for dynamo (the
                     call hook's path, error locations)
  compat.py          what is taken from torch's private API, and the torch
                     release the backend is tested with

Importing the package does not import torch: the backend claims a type
only once torch is imported, so it costs nothing to programs that do not
use it.
"""

from autograph.runtime.torch.backend import TorchBackend, TorchRange

__all__ = ["TorchBackend", "TorchRange"]
