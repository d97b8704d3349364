"""Every numpy function the tracer lists in SUPPORTED_FUNCTIONS traces and
gives what eager numpy gives (value, dtype, shape, result type, namedtuple
results included). A name added to SUPPORTED_FUNCTIONS without an entry in
CALLS fails `test_every_supported_function_has_calls`."""

import numpy as np
import pytest
from autograph.runtime.tracer import SUPPORTED_FUNCTIONS

from autograph.traced_function import function

A = np.array([[1.0, -2.0], [3.5, 0.0], [5.0, 6.0]])          # 3x2
M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])   # symmetric positive definite
V = np.array([3.0, -1.0, 0.0, 2.5])
K = np.array([[3, 1, 4], [1, 5, 9]])           # int64
W = np.array([1.0, 2.0, 0.5, 1.5])
B = np.array([[True, False], [False, False], [True, True]])
C = np.array([1 + 2j, -3j, 0.5])
S = np.array([0.0, 1.0, 2.5, 4.0])      # sorted
N = np.array([1.0, np.nan, 3.0, np.inf])


# np.array and its family convert their argument in C, where numpy asks no
# protocol: they trace in converted code (the call hook), so these are defs.
def to_array(x):
    return np.array(x)


def to_array_f32(x):
    return np.array(x, dtype=np.float32)


def to_asarray(x):
    return np.asarray(x) * 2


def to_asarray_i16(x):
    return np.asarray(x, dtype=np.int16)


def to_asanyarray(x):
    return np.asanyarray(x) + 1


def to_contiguous(x):
    return np.ascontiguousarray(x.T)


def _name(func):
    return f"{func.__module__}.{func.__name__}"


# name -> [(function to trace, its arguments)]
CALLS = {
    "numpy.all": [(lambda x: np.all(x), (B,)), (lambda x: np.all(x, axis=0), (B,))],
    "numpy.any": [(lambda x: np.any(x), (B,)), (lambda x: np.any(x > 3, axis=1), (A,))],
    "numpy.allclose": [(lambda x, y: np.allclose(x, y), (A, A + 1e-12)), (lambda x: np.allclose(x, 0), (A,))],
    "numpy.amax": [(lambda x: np.amax(x, axis=0), (A,))],
    "numpy.amin": [(lambda x: np.amin(x), (K,))],
    "numpy.max": [(lambda x: np.max(x), (A,)), (lambda x: x.max(axis=1), (K,))],
    "numpy.min": [(lambda x: np.min(x, axis=0), (A,)), (lambda x: x.min(), (K,))],
    "numpy.angle": [(lambda x: np.angle(x), (C,)), (lambda x: np.angle(x, deg=True), (V,))],
    "numpy.argmax": [(lambda x: np.argmax(x), (A,)), (lambda x: np.argmax(x, axis=1), (K,))],
    "numpy.argmin": [(lambda x: np.argmin(x), (V,)), (lambda x: x.argmin(axis=0), (A,))],
    "numpy.argsort": [(lambda x: np.argsort(x), (V,)), (lambda x: np.argsort(x, axis=0), (A,))],
    "numpy.argwhere": [(lambda x: np.argwhere(x), (B,)), (lambda x: np.argwhere(x > 1), (A,))],
    "numpy.around": [(lambda x: np.around(x / 3, 2), (A,))],
    "numpy.round": [(lambda x: np.round(x / 3), (A,)), (lambda x: x.round(1), (V,))],
    "numpy.array": [(to_array, (A,)), (to_array_f32, (K,))],
    "numpy.array_equal": [(lambda x, y: np.array_equal(x, y), (A, A)), (lambda x: np.array_equal(x, x + 1), (V,))],
    "numpy.array_split": [(lambda x: np.array_split(x, 3), (V,)), (lambda x: np.array_split(x, 2, axis=1), (A,))],
    "numpy.split": [(lambda x: np.split(x, 2), (V,)), (lambda x: np.split(x, [1], axis=0), (A,))],
    "numpy.asanyarray": [(to_asanyarray, (A,))],
    "numpy.asarray": [(to_asarray_i16, (A,)), (to_asarray, (K,))],
    "numpy.ascontiguousarray": [(to_contiguous, (A,))],
    "numpy.atleast_1d": [(lambda x: np.atleast_1d(x), (np.float64(2.0),)), (lambda x: np.atleast_1d(x), (V,))],
    "numpy.atleast_2d": [(lambda x: np.atleast_2d(x), (V,))],
    "numpy.atleast_3d": [(lambda x: np.atleast_3d(x), (A,))],
    "numpy.average": [(lambda x: np.average(x), (V,)), (lambda x, w: np.average(x, weights=w), (V, W)),
                      (lambda x, w: np.average(x, axis=1, weights=w[:2]), (A, W))],
    "numpy.broadcast_arrays": [(lambda x, y: np.broadcast_arrays(x, y), (A, A[0]))],
    "numpy.broadcast_to": [(lambda x: np.broadcast_to(x, (2, 4)), (V,))],
    "numpy.clip": [(lambda x: np.clip(x, 0, 3), (A,)), (lambda x: x.clip(-1, 1), (V,))],
    "numpy.column_stack": [(lambda x: np.column_stack([x, x * 2]), (V,))],
    "numpy.concatenate": [(lambda x: np.concatenate([x, x], axis=1), (A,)),
                          (lambda x: np.concatenate([x, [1.0]]), (V,))],
    "numpy.conjugate": [(lambda x: np.conj(x), (C,)), (lambda x: np.conjugate(x), (V,))],
    "numpy.convolve": [(lambda x, w: np.convolve(x, w), (V, W)), (lambda x: np.convolve(x, [1.0, -1.0], "same"), (V,))],
    "numpy.copy": [(lambda x: np.copy(x), (A,)), (lambda x: x.copy(), (K,))],
    "numpy.count_nonzero": [(lambda x: np.count_nonzero(x), (B,)), (lambda x: np.count_nonzero(x, axis=0), (A,))],
    "numpy.cross": [(lambda x, y: np.cross(x, y), (M[0], M[1]))],
    "numpy.cumprod": [(lambda x: np.cumprod(x), (V,)), (lambda x: x.cumprod(axis=0), (K,))],
    "numpy.cumsum": [(lambda x: np.cumsum(x, axis=1), (A,)), (lambda x: x.cumsum(), (K,))],
    "numpy.diag": [(lambda x: np.diag(x), (V,)), (lambda x: np.diag(x, 1), (M,))],
    "numpy.diagonal": [(lambda x: np.diagonal(x), (M,)), (lambda x: x.diagonal(offset=-1), (A,))],
    "numpy.diff": [(lambda x: np.diff(x), (V,)), (lambda x: np.diff(x, n=2, axis=0), (A,))],
    "numpy.digitize": [(lambda x, b: np.digitize(x, b), (V, S))],
    "numpy.dot": [(lambda x, y: np.dot(x, y), (A.T, A)), (lambda x: x.dot(x), (V,))],
    "numpy.dstack": [(lambda x: np.dstack([x, x]), (A,))],
    "numpy.einsum": [(lambda x, y: np.einsum("ij,jk->ik", x, y), (A, A.T)), (lambda x: np.einsum("ii", x), (M,))],
    "numpy.empty_like": [(lambda x: np.empty_like(x).shape, (A,))],
    "numpy.expand_dims": [(lambda x: np.expand_dims(x, 1), (V,))],
    "numpy.flip": [(lambda x: np.flip(x), (A,)), (lambda x: np.flip(x, axis=1), (K,))],
    "numpy.fliplr": [(lambda x: np.fliplr(x), (A,))],
    "numpy.flipud": [(lambda x: np.flipud(x), (A,))],
    "numpy.full_like": [(lambda x: np.full_like(x, 7), (K,)), (lambda x: np.full_like(x, 0.5, dtype=np.float32), (A,))],
    "numpy.ones_like": [(lambda x: np.ones_like(x), (A,))],
    "numpy.zeros_like": [(lambda x: np.zeros_like(x, dtype=bool), (K,))],
    "numpy.hstack": [(lambda x: np.hstack([x, x]), (V,))],
    "numpy.vstack": [(lambda x: np.vstack([x, x]), (A,))],
    "numpy.stack": [(lambda x: np.stack([x, x], axis=1), (V,))],
    "numpy.imag": [(lambda x: np.imag(x), (C,))],
    "numpy.real": [(lambda x: np.real(x), (C,)), (lambda x: np.real(x), (V,))],
    "numpy.inner": [(lambda x, y: np.inner(x, y), (V, W))],
    "numpy.outer": [(lambda x, y: np.outer(x, y), (V, W))],
    "numpy.interp": [(lambda x, xp, fp: np.interp(x, xp, fp), (V, S, W))],
    "numpy.isclose": [(lambda x, y: np.isclose(x, y), (V, W))],
    "numpy.kron": [(lambda x, y: np.kron(x, y), (A, M))],
    "numpy.mean": [(lambda x: np.mean(x), (A,)), (lambda x: x.mean(axis=0), (K,))],
    "numpy.median": [(lambda x: np.median(x), (V,)), (lambda x: np.median(x, axis=0), (A,))],
    "numpy.meshgrid": [(lambda x, y: np.meshgrid(x, y), (V, W[:3])),
                       (lambda x, y: np.meshgrid(x, y, indexing="ij"), (V, W))],
    "numpy.moveaxis": [(lambda x: np.moveaxis(x, 0, -1), (A,))],
    "numpy.rollaxis": [(lambda x: np.rollaxis(x, 1), (A,))],
    "numpy.swapaxes": [(lambda x: np.swapaxes(x, 0, 1), (A,)), (lambda x: x.swapaxes(1, 0), (K,))],
    "numpy.nan_to_num": [(lambda x: np.nan_to_num(x), (N,)), (lambda x: np.nan_to_num(x, nan=-1.0, posinf=9.0), (N,))],
    "numpy.nanmax": [(lambda x: np.nanmax(x), (N,))],
    "numpy.nanmin": [(lambda x: np.nanmin(x), (N,))],
    "numpy.nanmean": [(lambda x: np.nanmean(x[:3]), (N,))],
    "numpy.nansum": [(lambda x: np.nansum(x[:3]), (N,))],
    "numpy.nonzero": [(lambda x: np.nonzero(x), (B,)), (lambda x: x.nonzero(), (V,))],
    "numpy.percentile": [(lambda x: np.percentile(x, 30), (V,)), (lambda x: np.percentile(x, [10, 90], axis=0), (A,))],
    "numpy.quantile": [(lambda x: np.quantile(x, 0.3), (V,))],
    "numpy.prod": [(lambda x: np.prod(x), (A,)), (lambda x: x.prod(axis=1), (K,))],
    "numpy.ravel": [(lambda x: np.ravel(x), (A,)), (lambda x: x.ravel(), (K,))],
    "numpy.reshape": [(lambda x: np.reshape(x, (2, 3)), (A,)), (lambda x: x.reshape(-1), (K,))],
    "numpy.repeat": [(lambda x: np.repeat(x, 2), (V,)), (lambda x: x.repeat(2, axis=0), (A,))],
    "numpy.pad": [(lambda x: np.pad(x, (0, 1)), (V,)),
                  (lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=-1), (A,)),
                  (lambda x: np.pad(x, 2, mode="edge"), (K,)), (lambda x: np.pad(x, (1, 2), mode="reflect"), (V,)),
                  (lambda x, y: np.pad(x, (0, 1), constant_values=y[0]), (V, W))],
    "numpy.roll": [(lambda x: np.roll(x, 1), (V,)), (lambda x: np.roll(x, -1, axis=0), (A,))],
    "numpy.searchsorted": [(lambda s, x: np.searchsorted(s, x), (S, V))],
    "numpy.sort": [(lambda x: np.sort(x), (V,)), (lambda x: np.sort(x, axis=0), (A,))],
    "numpy.squeeze": [(lambda x: np.squeeze(x[:1]), (A,)), (lambda x: x[None].squeeze(), (V,))],
    "numpy.std": [(lambda x: np.std(x), (V,)), (lambda x: x.std(axis=0, ddof=1), (A,))],
    "numpy.var": [(lambda x: np.var(x), (A,)), (lambda x: x.var(), (K,))],
    "numpy.sum": [(lambda x: np.sum(x), (A,)), (lambda x: x.sum(axis=0, keepdims=True), (K,))],
    "numpy.take": [(lambda x: np.take(x, [0, 2]), (V,)), (lambda x: x.take([1], axis=1), (A,))],
    "numpy.take_along_axis": [(lambda x: np.take_along_axis(x, np.argsort(x, axis=0), axis=0), (A,))],
    "numpy.tensordot": [(lambda x, y: np.tensordot(x, y, axes=1), (A, A.T))],
    "numpy.tile": [(lambda x: np.tile(x, 2), (V,)), (lambda x: np.tile(x, (2, 1)), (A,))],
    "numpy.trace": [(lambda x: np.trace(x), (M,)), (lambda x: x.trace(), (K,))],
    "numpy.transpose": [(lambda x: np.transpose(x), (A,)), (lambda x: x.T, (K,))],
    "numpy.tril": [(lambda x: np.tril(x), (M,))],
    "numpy.triu": [(lambda x: np.triu(x, 1), (M,))],
    "numpy.vdot": [(lambda x, y: np.vdot(x, y), (V, W))],
    "numpy.where": [(lambda x: np.where(x > 1, x, 0), (A,)), (lambda x: np.where(x), (B,))],
    "numpy.linalg.cholesky": [(lambda m: np.linalg.cholesky(m), (M,))],
    "numpy.linalg.det": [(lambda m: np.linalg.det(m), (M,))],
    "numpy.linalg.eigh": [(lambda m: np.linalg.eigh(m), (M,)), (lambda m: np.linalg.eigh(m).eigenvalues, (M,))],
    "numpy.linalg.inv": [(lambda m: np.linalg.inv(m), (M,))],
    "numpy.linalg.matrix_power": [(lambda m: np.linalg.matrix_power(m, -1), (M,)),
                                  (lambda m: np.linalg.matrix_power(m, 3), (M,))],
    "numpy.linalg.norm": [(lambda x: np.linalg.norm(x), (A,)), (lambda x: np.linalg.norm(x, axis=1), (A,))],
    "numpy.linalg.pinv": [(lambda x: np.linalg.pinv(x), (A,))],
    "numpy.linalg.qr": [(lambda x: np.linalg.qr(x), (A,)), (lambda m: np.linalg.qr(m)[1], (M,))],
    "numpy.linalg.slogdet": [(lambda m: np.linalg.slogdet(m), (M,))],
    "numpy.linalg.solve": [(lambda m, b: np.linalg.solve(m, b), (M, W[:3]))],
    "numpy.linalg.svd": [(lambda x: np.linalg.svd(x), (A,)), (lambda x: np.linalg.svd(x, compute_uv=False), (A,))],
}

CASES = [(name, k) for name in sorted(CALLS) for k in range(len(CALLS[name]))]


def test_every_supported_function_has_calls():
    supported = {_name(f) for f in SUPPORTED_FUNCTIONS}
    assert sorted(supported - set(CALLS)) == []
    assert sorted(set(CALLS) - supported) == []


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _check(got, expected):
    assert type(got) is type(expected)
    got, expected = _leaves(got), _leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert type(g) is type(e)
        assert np.shape(g) == np.shape(e)
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, k", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_traced_matches_eager(name, k):
    fn, args = CALLS[name][k]
    expected = fn(*args)
    _check(function(fn, autograph=fn.__name__ != "<lambda>")(*args), expected)
