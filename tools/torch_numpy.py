"""The numpy functions that tools/numeric_generator.py's programs call, on
torch tensors: the fuzzer runs the same programs with `np` bound to this
module, eagerly and under `torch.compile`, and compares the two (the eager
torch run is the reference, so torch's own semantics hold on both sides)."""

import torch


def _as_tensor(a, like=None):
    if isinstance(a, torch.Tensor):
        return a
    return torch.tensor(a, dtype=torch.float64 if like is None else like.dtype)


def _on_tensor(fn):
    def apply(a):
        return fn(_as_tensor(a))
    apply.__name__ = fn.__name__
    return apply


sin, cos, tanh, abs, sqrt, exp, log = (_on_tensor(f) for f in (
    torch.sin, torch.cos, torch.tanh, torch.abs, torch.sqrt, torch.exp, torch.log))
sum, mean, any, all = (_on_tensor(f) for f in (torch.sum, torch.mean, torch.any, torch.all))
max, min = _on_tensor(torch.amax), _on_tensor(torch.amin)
zeros_like, ones_like, copy = torch.zeros_like, torch.ones_like, torch.clone


def arange(*bounds):
    """np.arange(lo, hi) of ints: an index array."""
    return torch.arange(*bounds)


def float64(value):
    """np.float64(c): a float64 scalar."""
    return torch.tensor(value, dtype=torch.float64)


def clip(a, low, high):
    return torch.clip(_as_tensor(a), low, high)


def maximum(a, b):
    a = _as_tensor(a)
    return torch.maximum(a, _as_tensor(b, a))


def minimum(a, b):
    a = _as_tensor(a)
    return torch.minimum(a, _as_tensor(b, a))


def where(condition, a, b):
    return torch.where(condition, a, b)


def cumsum(a):
    return torch.cumsum(a, 0)


def sort(a):
    return torch.sort(a).values


def roll(a, shift):
    return torch.roll(a, shift)


def flip(a):
    return torch.flip(a, (0,))


def dot(a, b):
    return torch.dot(a, b)
