"""A function that converted code calls through a library decorator's
wrapper (`@torch.no_grad()`, a `@contextlib.contextmanager` used as a
decorator: wrappers that `functools.wraps` links to the user's function)
is converted, the wrapper with it: its `if` on a traced value is staged
(before: the wrapper, library code, called the function unconverted, and
dynamo refused its data-dependent branch). The decorator still does its
work. Differential: against the unconverted function run eagerly."""

import contextlib

import numpy as np
import pytest
import torch

import autograph


@torch.no_grad()
def scaled(x):
    if x.sum() > 0:
        return x * 2
    return -x


def calls_scaled(x):
    return scaled(x) + 1


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_torch_no_grad_callee_under_compile_and_export(sign):
    x = sign * torch.ones(3)
    expected = calls_scaled(x)
    converted = autograph.to_graph(calls_scaled)
    torch.testing.assert_close(torch.compile(converted, fullgraph=True, backend="eager")(x), expected)

    class Module(torch.nn.Module):
        def forward(self, x):
            return converted(x)
    exported = torch.export.export(Module(), (torch.ones(3),), strict=False).module()
    torch.testing.assert_close(exported(x), expected)


def test_the_decorator_still_applies():
    x = torch.ones(3, requires_grad=True)
    assert not autograph.to_graph(calls_scaled)(x).requires_grad
    assert not calls_scaled(x).requires_grad


entered = []


@contextlib.contextmanager
def counting():
    entered.append(1)
    yield


@counting()
def clipped(x):
    if x > 1.0:
        x = np.float64(1.0)
    return x


def calls_clipped(x):
    return clipped(x) * 3


@pytest.mark.parametrize("x", [0.5, 2.0])
def test_contextmanager_decorated_callee_with_the_numpy_tracer(x):
    traced = autograph.function(calls_clipped)
    assert traced(np.float64(x)) == calls_clipped(np.float64(x))
