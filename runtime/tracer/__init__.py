"""autograph's own numpy tracer: symbolic arrays, a graph IR with `cond` and
`while_loop` nodes, graph passes, and the compiler of graphs into Python functions of numpy calls.

Importing this package registers `TracerBackend` with the runtime, so the
operators in `autograph.runtime.operators` stage control flow on
`SymbolicArray` values.
"""

from autograph.runtime.backends import register_backend
from autograph.runtime.tracer import compiler, context, numpy_api, passes
from autograph.runtime.tracer.backend import TracerBackend
from autograph.runtime.tracer.compiler import compile_graph
from autograph.runtime.tracer.errors import (
    BranchMismatchError,
    LoopStateError,
    ScopeError,
    SymbolicBoolError,
    TracingError,
    UndefinedOutputError,
    UnsupportedFunctionError,
)
from autograph.runtime.tracer.explicit import Graph
from autograph.runtime.tracer.graph import Block, Node
from autograph.runtime.tracer.numpy_api import SUPPORTED_FUNCTIONS
from autograph.runtime.tracer.symbolic import SymbolicArray, SymbolicRange

__all__ = [
    "BACKEND",
    "SUPPORTED_FUNCTIONS",
    "Block",
    "BranchMismatchError",
    "Graph",
    "LoopStateError",
    "Node",
    "ScopeError",
    "SymbolicArray",
    "SymbolicBoolError",
    "SymbolicRange",
    "TracerBackend",
    "TracingError",
    "UndefinedOutputError",
    "UnsupportedFunctionError",
    "compile_graph",
    "context",
    "compiler",
    "numpy_api",
    "passes",
]

BACKEND = register_backend(TracerBackend())
