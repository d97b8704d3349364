"""autograph: convert Python control flow into functional operators.

    import autograph

    converted = autograph.to_graph(f)     # a new function, same behaviour
    print(autograph.to_code(f))           # its readable generated source

Generated code calls the operators in `autograph.runtime` (`if_stmt`,
`while_stmt`, `for_stmt`, ...), which run as Python for Python values and
dispatch to a registered backend (the numpy tracer, JAX, PyTorch) for
symbolic ones.
"""

from autograph.api import convert, do_not_convert, set_loop_options, to_code, to_graph
from autograph.conversion import clear_cache
from autograph.errors import ConversionError
from autograph.logs import set_verbosity
from autograph.tracing import Graph, Spec, function, py_function

__all__ = [
    "to_graph", "to_code", "convert", "do_not_convert", "set_loop_options", "set_verbosity",
    "clear_cache", "ConversionError", "function", "Spec", "Graph", "py_function",
]

__version__ = "0.1.0"
