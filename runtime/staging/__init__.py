"""The staging core: what every backend that stages control flow into its
tracer's own operators shares (the numpy tracer, JAX, PyTorch).

  backend.py   `StagingBackend`: Python or staged, and the statements; the
               methods a backend implements
  branches.py  the outputs of a staged `if`: how its branches' outputs merge
  loops.py     the state of a staged loop and the check of each iteration;
               a `for` loop as a counted loop
  errors.py    every branch and loop error, with its text
  lists.py     lists appended to in staged loops: the rows of a buffer the
               loop carries, a list again after it
  places.py    what staged blocks change in place, made explicit state
  values.py    conventions of bodies and state shared with `operators.py`
"""

from autograph.runtime.staging.backend import StagingBackend
from autograph.runtime.staging.branches import Branches
from autograph.runtime.staging.loops import Counted, Loop
from autograph.runtime.staging.values import (
    NUMBERS,
    Flat,
    Retry,
    TracedRange,
    describe_marker,
    holds,
    in_range,
    normalize,
    numpy_holds,
    pack,
    range_bounds,
    same_leaf,
    same_python,
)

__all__ = ["NUMBERS", "Branches", "Counted", "Flat", "Loop", "Retry", "StagingBackend",
           "TracedRange", "describe_marker", "holds", "in_range", "normalize", "numpy_holds", "pack", "range_bounds",
           "same_leaf", "same_python"]
