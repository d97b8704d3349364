"""autograph: convert Python control flow into functional operators.

    import autograph

    converted = autograph.to_graph(f)     # a new function, same behaviour
    print(autograph.to_code(f))           # its readable generated source

Generated code calls the operators in `autograph.runtime` (`if_stmt`,
`while_stmt`, `for_stmt`, ...), which run as Python for Python values and
dispatch to a registered backend (the numpy tracer, JAX, PyTorch) for
symbolic ones.
"""

import os as _os

# In a source checkout `autograph/` sits beside `converters/` and `runtime/`,
# which install as `autograph.converters` and `autograph.runtime`: a checkout
# on sys.path (the repository root as the working directory) then imports
# them from there, as the installed package does from its own folder.
if not _os.path.isdir(_os.path.join(__path__[0], "runtime")):
    _checkout = _os.path.dirname(_os.path.abspath(__path__[0]))
    if _os.path.isfile(_os.path.join(_checkout, "runtime", "__init__.py")):
        __path__.append(_checkout)

from autograph import callees  # noqa: E402, F401 - installs the callee policy in the runtime
from autograph.api import convert, do_not_convert, register_transform, set_loop_options, to_code, to_graph  # noqa: E402
from autograph.conversion import clear_cache  # noqa: E402
from autograph.errors import ConversionError  # noqa: E402
from autograph.logs import set_verbosity  # noqa: E402
from autograph.runtime.staging.lists import stack  # noqa: E402
from autograph.traced_function import Graph, Spec, function, py_function, run_functions_eagerly  # noqa: E402

__all__ = [
    "to_graph", "to_code", "convert", "do_not_convert", "register_transform", "set_loop_options", "set_verbosity",
    "clear_cache", "ConversionError", "function", "Spec", "Graph", "py_function", "run_functions_eagerly",
    "stack",
]

__version__ = "0.1.0"
