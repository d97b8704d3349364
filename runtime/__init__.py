"""What generated code calls: the functional operators, the call hook, the
marker for undefined variables, and the backend registry.

Generated code refers to this module as `ag__` (or a hygienic variant).
This package knows nothing of parsing or conversion; a backend author reads
only `backends.py` and `operators.py`.
"""

from autograph.runtime.backends import (
    LOOP_TEST_TYPES,
    Backend,
    backend_of,
    prepare_backends,
    register_backend,
    run_as_written,
    tracing,
    unregister_backend,
)
from autograph.runtime.calls import (
    APPENDED,
    BUILTIN_LEN,
    BUILTIN_METHOD,
    OVERRIDDEN_BUILTINS,
    PLAIN_LIST,
    SIZED_TYPES,
    call,
    call_builtins,
    call_method,
    call_site,
    set_converter,
    written_call,
    written_call_method,
    written_call_site,
)
from autograph.runtime.errors import AutographError, reraise_refusal, user_location
from autograph.runtime.operators import (
    ITEM_KEYS,
    ITEM_TYPES,
    PYTHON_TYPES,
    and_,
    assert_stmt,
    compare,
    elif_stmt,
    for_stmt,
    getitem,
    iadd,
    iand,
    if_exp,
    if_stmt,
    ifloordiv,
    ilshift,
    imatmul,
    imod,
    imul,
    in_place,
    ior,
    ipow,
    irshift,
    is_python,
    isub,
    iterate,
    itruediv,
    ixor,
    not_,
    or_,
    pure_elif_stmt,
    setitem,
    while_stmt,
)
from autograph.runtime.static_ranges import unrolled
from autograph.runtime.undefined import (
    UNDEFINED_RETURN_VALUE,
    Undefined,
    UndefinedReturnValue,
    ld,
    ld_free,
    return_value,
)

__all__ = [
    "Backend", "backend_of", "prepare_backends", "register_backend", "run_as_written", "tracing",
    "unregister_backend", "written_call", "written_call_method", "written_call_site",
    "OVERRIDDEN_BUILTINS", "call", "call_builtins", "call_method", "call_site", "set_converter",
    "AutographError", "reraise_refusal", "user_location",
    "APPENDED", "BUILTIN_LEN", "BUILTIN_METHOD", "ITEM_KEYS", "ITEM_TYPES", "LOOP_TEST_TYPES", "PLAIN_LIST",
    "PYTHON_TYPES", "SIZED_TYPES",
    "and_", "assert_stmt", "compare", "is_python", "iterate", "for_stmt", "if_exp", "if_stmt", "elif_stmt",
    "pure_elif_stmt",
    "not_", "or_",
    "getitem", "in_place", "setitem", "unrolled", "while_stmt",
    "iadd", "iand", "ifloordiv", "ilshift", "imatmul", "imod", "imul", "ior", "ipow", "irshift",
    "isub", "itruediv", "ixor", "Undefined", "UndefinedReturnValue", "UNDEFINED_RETURN_VALUE", "ld", "ld_free",
    "return_value",
]

# The backends of other tracers: each claims its types only once its
# library is imported, and imports nothing before.
from autograph.runtime.jax import JaxBackend  # noqa: E402
from autograph.runtime.torch import TorchBackend  # noqa: E402

register_backend(JaxBackend())
register_backend(TorchBackend())
