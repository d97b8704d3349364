"""Typed code that uses autograph's public API, which tests/test_typing.py
has mypy --strict check (it is never run): mypy must accept all of it, and
each assert_type holds only while the API keeps the types of the functions
it converts and traces."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_type  # typing's from Python 3.11; the checker targets 3.10

import autograph
from autograph.traced_function import ConcreteFunction, TracedFunction

Array = npt.NDArray[np.float64]


def scale(x: Array, factor: float) -> Array:
    return x * factor


# to_graph, convert and do_not_convert keep the signature.
converted = autograph.to_graph(scale, strict=True, include=["mylib"])
assert_type(converted(np.ones(3), 2.0), Array)
assert_type(converted(x=np.ones(3), factor=2.0), Array)


@autograph.convert(recursive=False)
def twice(n: int) -> int:
    return 2 * n


assert_type(twice(3), int)


@autograph.do_not_convert
def shout(word: str) -> str:
    return word.upper()


assert_type(shout("a"), str)

# function: a TracedFunction with f's parameters, returning f's result type.
traced = autograph.function(scale)
signature: TracedFunction[[Array, float], Array] = traced
assert_type(traced(np.ones(3), 2.0), Array)
assert_type(traced.trace_count, int)
python_function: Callable[[Array, float], Array] = traced.python_function
concrete = traced.get_concrete_function(autograph.Spec((3,)), 2.0)
assert_type(concrete, ConcreteFunction)
assert_type(concrete.source, str)
assert_type(concrete.stale(), str | None)


@autograph.function(input_signature=[autograph.Spec((None,), "float64")], reduce_retracing=True)
def total(x: Array) -> float:
    return float(x.sum())


assert_type(total(np.ones(3)), float)
assert_type(autograph.function(autograph=False)(twice)(4), int)


class Model:
    @autograph.function
    def step(self, x: Array) -> float:
        return float(x.sum())


assert_type(Model().step(np.ones(3)), float)  # bound: the instance is the first argument
unbound: TracedFunction[[Model, Array], float] = Model.step

# The other public names.
spec = autograph.Spec((None, 2), np.float32)
assert_type(spec.shape, tuple[int | None, ...])
with autograph.run_functions_eagerly(True):
    traced(np.ones(3), 2.0)
autograph.set_verbosity(3, alsologtostdout=True)
autograph.set_verbosity(None)
autograph.clear_cache()
code: str = autograph.to_code(scale)
host = autograph.py_function(np.sin, [np.ones(2)], autograph.Spec((2,)))
stacked = autograph.stack([np.ones(2), np.zeros(2)], axis=1)
with autograph.Graph() as graph:
    x = graph.placeholder((None,), "float64")
graph.run(x * 2, {x: np.ones(3)})


def loop(n: int) -> int:
    k = 0
    while k < n:
        autograph.set_loop_options(maximum_iterations=100, unroll=False)
        k += 1
    return k


# A backend: its methods override the protocol's with compatible types.
class Mine(autograph.runtime.Backend):
    name = "mine"

    def owns_type(self, cls: type) -> bool:
        return cls is complex

    def cond(self, pred: Any, true_fn: Any, false_fn: Any, operands: Any, names: Any) -> Any:
        return None


assert_type(autograph.runtime.backends.registered(), tuple[autograph.runtime.Backend, ...])
try:
    autograph.to_graph(len, strict=True)
except autograph.ConversionError as error:
    assert_type(str(error), str)
