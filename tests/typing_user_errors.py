"""Wrong uses of autograph's public API, which tests/test_typing.py has
mypy --strict check (it is never run): mypy must report each line marked
`# E: [code]` with that error code, and nothing else."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import autograph

Array = npt.NDArray[np.float64]


def scale(x: Array, factor: float) -> Array:
    return x * factor


@autograph.convert()
def twice(n: int) -> int:
    return 2 * n


autograph.to_graph(scale)(np.ones(3), "2")  # E: [arg-type]
autograph.to_graph(scale)(np.ones(3))  # E: [call-arg]
twice("3")  # E: [arg-type]
autograph.do_not_convert(twice)(3, 4)  # E: [call-arg]
autograph.function(scale)(np.ones(3), factor="2")  # E: [arg-type]
autograph.function(scale)(np.ones(3), 2.0, 1.0)  # E: [call-arg]
size: str = autograph.function(twice)(3)  # E: [assignment]
count: str = autograph.function(scale).trace_count  # E: [assignment]
autograph.function(scale, input_signature=autograph.Spec((3,)))  # E: [call-overload]
autograph.to_graph(scale, strict="yes")  # E: [arg-type]
autograph.Spec(3)  # E: [arg-type]
autograph.set_verbosity("high")  # E: [arg-type]
autograph.set_loop_options(maximum_iteration=10)  # E: [call-arg]
autograph.set_loop_options(unroll="no")  # E: [arg-type]
autograph.py_function(np.sin, [np.ones(2)], (2,))  # E: [arg-type]


class Broken(autograph.runtime.Backend):
    def cond(self, pred: Any) -> Any:  # E: [override]
        return pred
