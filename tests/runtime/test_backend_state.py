"""What a backend remembers while it traces is one object per trace,
reached through a context variable, not module state: under torch.export's
non-strict mode an `ExportTrace` per outermost staged statement, under
dynamo a `DynamoTrace` per graph."""

import importlib
import pkgutil
import types

import torch
from autograph.runtime import jax as jax_backend
from autograph.runtime import torch as torch_backend
from autograph.runtime.torch import dynamo_trace, export

import autograph


def depth_now():
    """10 per body being traced, 1 per body number held, while the branch is traced."""
    return 10 * export.depth() + len(export.bodies())


def branchy(x):
    if x.sum() > 0:
        y = x * 2 + depth_now()
    else:
        y = -x
    return y


class Branchy(torch.nn.Module):
    def forward(self, x):
        return autograph.to_graph(branchy)(x)


def test_export_state_lives_while_a_statement_is_staged():
    program = torch.export.export(Branchy(), (torch.ones(2),))
    assert program.module()(torch.ones(2)).tolist() == [13.0, 13.0]  # traced in one body: 2 + 11
    assert program.module()(-torch.ones(2)).tolist() == [1.0, 1.0]
    assert export._TRACE.get() is None  # dropped when the statement ended
    assert export.depth() == 0 and export.bodies() == ()


def doubled_or_negated(x):
    if x.sum() > 0:
        x = x * 2
    else:
        x = -x
    return x


def halved_until_small(x):
    while x.sum() > 1:
        x = x / 2
    return x


def test_each_dynamo_graph_has_its_own_state():
    torch._dynamo.reset()
    torch.compile(autograph.to_graph(doubled_or_negated), fullgraph=True, backend="eager")(torch.ones(2))
    first = dynamo_trace._TRACE.get()
    torch.compile(autograph.to_graph(halved_until_small), fullgraph=True, backend="eager")(torch.ones(2) * 8)
    second = dynamo_trace._TRACE.get()
    assert first is not None and second is not None and first is not second
    assert first.token != second.token
    assert first.probe_depth == second.probe_depth == 0 and not second.versions and not second.held_copies


# Module-level values that are not trace state: caches and tables filled once.
_ALLOWED = {
    ("autograph.runtime.jax.backend", "_BUILTINS"),  # the builtin overrides, once jax is loaded
    ("autograph.runtime.jax.backend", "_TRANSFORMS"),  # jax.grad, lax.cond, ...: once jax is loaded
    ("autograph.runtime.jax.cond", "_INEXACT"),  # a cache of a dtype property
    ("autograph.runtime.torch.backend", "_BUILTINS"),  # the builtin overrides, once torch is loaded
    ("autograph.runtime.torch.backend", "_TRANSFORMS"),  # torch.func.grad, torch.cond, ...: once torch is loaded
    ("autograph.runtime.torch.dynamo_hooks", "_held"),  # callees converted for dynamo, read by name
}


def test_backends_keep_no_mutable_module_state():
    found = []
    for package in (jax_backend, torch_backend):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name, value in vars(module).items():
                if isinstance(value, (list, dict, set, types.SimpleNamespace)) and not name.startswith("__") \
                        and (module.__name__, name) not in _ALLOWED:
                    found.append(f"{module.__name__}.{name}")
    assert not found
