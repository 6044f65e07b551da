"""Every function of the namespace against NumPy (values, dtypes, shapes)."""
import numpy as np
import pytest

import zcube as zc

RNG = np.random.default_rng(7)
A = RNG.standard_normal((7, 10))
P = RNG.uniform(0.1, 0.9, (7, 10))          # in (0, 1): every unary function's domain
I = RNG.integers(-50, 50, (7, 10)).astype(np.int32)
B = RNG.integers(0, 2, (7, 10)).astype(bool)


def z(a, chunks=(3, 4)):
    return zc.from_array(a, chunks=chunks if a.ndim == 2 else None)


def check(got, want, rtol=1e-12):
    got = got.compute() if isinstance(got, zc.Array) else got
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


UNARY_NP = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
            "atanh": "arctanh", "bitwise_invert": None, "conj": "conjugate", "reciprocal": None}


@pytest.mark.parametrize("name", [n for n in zc._functions._UNARY if n not in ("bitwise_invert", "logical_not",
                                                                               "imag")])
def test_unary_float(name):
    x = P + 1.0 if name == "acosh" else P
    ref = {"reciprocal": lambda v: 1.0 / v}.get(name) or getattr(np, UNARY_NP.get(name) or name)
    check(getattr(zc, name)(z(x)), ref(x))


def test_unary_complex():
    c = A + 1j * P
    for name, ref in [("real", np.real), ("imag", np.imag), ("conj", np.conj), ("abs", np.abs), ("exp", np.exp),
                      ("sqrt", np.sqrt), ("square", np.square)]:
        check(getattr(zc, name)(z(c)), ref(c))


def test_complex_tanh_of_infinite_real_part_has_the_imaginary_sign_of_the_input():
    # The standard's special case (1 + 0j for +inf + iy, y > 0); C99's ctanh signs the zero as sin(2y)
    c = np.array([complex(np.inf, 2.0), complex(np.inf, -2.0), complex(-np.inf, 2.0), complex(np.inf, 0.5)])
    got = zc.tanh(zc.from_array(c)).compute()
    assert list(got.real) == [1.0, 1.0, -1.0, 1.0]
    assert list(np.signbit(got.imag)) == [False, True, False, False]


def test_unary_int_bool():
    check(zc.bitwise_invert(z(I)), np.invert(I))
    check(zc.logical_not(z(B)), np.logical_not(B))
    check(zc.abs(z(I)), np.abs(I))
    check(zc.negative(z(I)), -I)
    check(zc.sign(z(I)), np.sign(I))


BINARY_NP = {"atan2": "arctan2", "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
             "pow": "power"}


@pytest.mark.parametrize("name", zc._functions._BINARY)
def test_binary(name):
    if name.startswith("bitwise") or name == "floor_divide" or name == "remainder":
        a, b = I, np.where(I == 0, 3, np.abs(I) % 7 + 1).astype(np.int32)
    elif name.startswith("logical"):
        a, b = B, ~B
    elif name == "pow":
        a, b = P, A
    else:
        a, b = A, P
    ref = getattr(np, BINARY_NP.get(name, name))
    check(getattr(zc, name)(z(a), z(b)), ref(a, b))


def test_broadcasting_and_scalars():
    row = A[0]
    check(zc.add(z(A), zc.from_array(row)), A + row)
    check(z(A) * 2.5 - 1, A * 2.5 - 1)
    check(3 - z(I), 3 - I)
    check(z(I) // 3, I // 3)
    check(z(A) ** 2, A ** 2)
    check(z(A) < 0, A < 0)
    check(~z(B), ~B)
    check(z(B) & True, B & True)
    check(zc.where(z(A) > 0, z(A), 0.0), np.where(A > 0, A, 0.0))
    check(zc.clip(z(A), -0.5, 0.5), np.clip(A, -0.5, 0.5))
    with pytest.raises(TypeError):
        z(I) + 1.5


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims):
    kw = dict(axis=axis, keepdims=keepdims)
    check(zc.sum(z(A), **kw), np.sum(A, **kw))
    check(zc.prod(z(P), **kw), np.prod(P, **kw))
    check(zc.max(z(A), **kw), np.max(A, **kw))
    check(zc.min(z(I), **kw), np.min(I, **kw))
    check(zc.mean(z(A), **kw), np.mean(A, **kw))
    check(zc.var(z(A), correction=1, **kw), np.var(A, ddof=1, **kw))
    check(zc.std(z(A), **kw), np.std(A, **kw))
    check(zc.any(z(B), **kw), np.any(B, **kw))
    check(zc.all(z(B), **kw), np.all(B, **kw))
    check(zc.sum(z(I), **kw), np.sum(I, **kw).astype(np.int64))
    check(zc.count_nonzero(z(I), **kw), np.asarray(np.count_nonzero(I, **kw)).astype(np.int64))


def test_reductions_over_no_axis_and_in_a_dtype():
    """axis=() reduces nothing (each element alone: var with correction 1 is NaN);
    dtype= is the result's dtype, wrapping as NumPy's sum in that dtype does."""
    with np.errstate(invalid="ignore", divide="ignore"):
        for kw in ({}, {"keepdims": True}):
            check(zc.sum(z(I), axis=(), **kw), np.sum(I, axis=(), **kw).astype(np.int64))
            check(zc.prod(z(P), axis=(), **kw), np.prod(P, axis=(), **kw))
            check(zc.max(z(A), axis=(), **kw), np.max(A, axis=(), **kw))
            check(zc.mean(z(A), axis=(), **kw), np.mean(A, axis=(), **kw))
            check(zc.var(z(A), axis=(), correction=1, **kw), np.var(A, axis=(), ddof=1, **kw))
            check(zc.std(z(A), axis=(), **kw), np.std(A, axis=(), **kw))
            check(zc.any(z(I), axis=(), **kw), np.any(I, axis=(), **kw))
            check(zc.count_nonzero(z(I), axis=()), (I != 0).astype(np.int64))
    big = (I.astype(np.int64) * 50_000_000).astype(np.int32)
    check(zc.sum(z(big), dtype=zc.int32), np.sum(big, dtype=np.int32))
    check(zc.prod(z(I), axis=0, dtype=zc.int8), np.prod(I, axis=0, dtype=np.int8))


@pytest.mark.parametrize("axis", [0, 1])
def test_search_and_cumulative(axis):
    check(zc.argmax(z(A), axis=axis), np.argmax(A, axis=axis))
    check(zc.argmin(z(A), axis=axis, keepdims=True), np.argmin(A, axis=axis, keepdims=True))
    check(zc.cumulative_sum(z(A), axis=axis), np.cumsum(A, axis=axis))
    check(zc.cumulative_prod(z(P), axis=axis), np.cumprod(P, axis=axis))
    check(zc.cumulative_sum(z(I), axis=axis, include_initial=True),
          np.concatenate([np.zeros_like(np.take(I, [0], axis)), np.cumsum(I, axis=axis)], axis=axis).astype(np.int64))
    n = zc.nonzero(z(I > 10))
    for g, w in zip(n, np.nonzero(I > 10)):
        check(g, w)


def test_creation():
    check(zc.zeros((5, 3), chunks=2), np.zeros((5, 3)))
    check(zc.ones((4,), dtype=zc.int32), np.ones(4, np.int32))
    check(zc.full((2, 3), 7), np.full((2, 3), 7))
    check(zc.full((2, 3), 1.5, dtype=zc.float32, chunks=(1, 2)), np.full((2, 3), 1.5, np.float32))
    check(zc.full((2,), 1 + 2j), np.full((2,), 1 + 2j))
    check(zc.arange(10), np.arange(10))
    check(zc.arange(2, 11, 3, chunks=2), np.arange(2, 11, 3))
    check(zc.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25))
    check(zc.linspace(0, 1, 11), np.linspace(0, 1, 11))
    check(zc.linspace(0, 1, 10, endpoint=False), np.linspace(0, 1, 10, endpoint=False))
    check(zc.eye(4, 5, k=1, chunks=(2, 2)), np.eye(4, 5, k=1))
    check(zc.zeros_like(z(I)), np.zeros_like(I))
    check(zc.ones_like(z(A), dtype=zc.float32), np.ones_like(A, dtype=np.float32))
    check(zc.full_like(z(I), 3), np.full_like(I, 3))
    check(zc.empty_like(z(A)), np.zeros_like(A))
    check(zc.asarray([[1, 2], [3, 4]]), np.asarray([[1, 2], [3, 4]]))
    check(zc.asarray(2.5), np.asarray(2.5))
    check(zc.tril(z(A), k=-1), np.tril(A, -1))
    check(zc.triu(z(A)), np.triu(A))
    gx, gy = zc.meshgrid(zc.arange(3), zc.arange(4))
    wx, wy = np.meshgrid(np.arange(3), np.arange(4))
    check(gx, wx)
    check(gy, wy)
    assert zc.zeros((10, 10), chunks=(4, 5)).chunks == ((4, 4, 2), (5, 5))


def test_random_is_chunk_independent():
    a = zc.random.normal(size=(50, 40), chunks=(7, 9), seed=3).compute()
    b = zc.random.normal(size=(50, 40), chunks=(50, 40), seed=3).compute()
    np.testing.assert_array_equal(a, b)
    assert abs(a.mean()) < 0.1 and 0.9 < a.std() < 1.1
    u = zc.random.uniform(2, 3, (1000,), seed=1).compute()
    assert u.min() >= 2 and u.max() < 3
    assert not np.array_equal(u, zc.random.uniform(2, 3, (1000,), seed=2).compute())


@pytest.mark.parametrize("key", [
    (1,), (-1,), (slice(1, 5),), (slice(None, None, 2),), (slice(None, None, -1),),
    (slice(5, 1, -2), slice(None, None, -3)), (Ellipsis, 3), (None, slice(2, 4)), (2, None, slice(1, None, -1)),
    (slice(-3, None), -2), (slice(8, 2, -1),), (slice(2, 2),),
])
def test_getitem(key):
    check(z(A)[key], A[key])


def test_array_indices():
    check(z(A)[[0, 3, 6]], A[[0, 3, 6]])
    check(z(A)[:, np.array([9, 0, -1])], A[:, np.array([9, 0, -1])])
    check(z(A)[A > 0.5], A[A > 0.5])
    check(zc.take(z(A), [1, 2], axis=1), np.take(A, [1, 2], axis=1))
    with pytest.raises(IndexError):
        z(A)[[0, 7]]


def test_data_dependent_sizes():
    """x[mask] and nonzero are counted when made (under the arrays' spec) and
    placed when computed: a lazy mask, a mask of leading dims, all-False, one
    element per chunk; then planned on like any array."""
    x = z(A, chunks=(1, 1))
    check(x[x > 0.5], A[A > 0.5])
    check(x[zc.from_array(A[:, 0] > 0)], A[A[:, 0] > 0])
    check(x[x > 100], A[A > 100])
    for mshape in [(0, 10), (7, 0), (0,)]:   # empty masks, also where a 0 stands for a longer dim
        check(x[zc.zeros(mshape, dtype=zc.bool)], np.zeros((0,) + A.shape[len(mshape):]))
    check(zc.ones((0, 3))[zc.zeros((0, 0), dtype=zc.bool)], np.zeros(0))
    with pytest.raises(IndexError, match="does not match"):
        x[zc.zeros((3, 0), dtype=zc.bool)]
    check(zc.sum(x[x < 0]), np.sum(A[A < 0]))
    check(x[x > 0][::-2], A[A > 0][::-2])
    for got, want in zip(zc.nonzero(z(I) > 10), np.nonzero(I > 10)):
        check(got, want.astype(np.int64))
    check(zc.isin(z(I), zc.from_array(I[2])), np.isin(I, I[2]))
    check(zc.isin(z(I), 7, invert=True), np.isin(I, 7, invert=True))
    check(zc.expand_dims(z(A), axis=(0, 3)), np.expand_dims(A, (0, 3)))
    assert zc.__array_namespace_info__().capabilities()["data-dependent shapes"]


def test_manipulation():
    check(zc.reshape(z(A), (10, 7)), A.reshape(10, 7))
    check(z(A).reshape(-1), A.reshape(-1))
    check(zc.permute_dims(z(A), (1, 0)), A.T)
    check(z(A).T, A.T)
    check(z(A).mT, A.T)
    check(zc.matrix_transpose(z(A)), A.T)
    check(zc.moveaxis(z(A), 0, 1), np.moveaxis(A, 0, 1))
    check(zc.expand_dims(z(A), axis=1), np.expand_dims(A, 1))
    check(zc.squeeze(zc.expand_dims(z(A), axis=0), axis=0), A)
    check(zc.broadcast_to(zc.from_array(A[0]), (3, 10)), np.broadcast_to(A[0], (3, 10)))
    check(zc.concat([z(A), z(P)], axis=0), np.concatenate([A, P], 0))
    check(zc.concat([z(A), z(P)], axis=None), np.concatenate([A, P], axis=None))
    check(zc.stack([z(A), z(P)], axis=1), np.stack([A, P], 1))
    check(zc.flip(z(A)), np.flip(A))
    check(zc.flip(z(A), axis=1), np.flip(A, 1))
    check(zc.roll(z(A), 3), np.roll(A, 3))
    check(zc.roll(z(A), (1, -2), axis=(0, 1)), np.roll(A, (1, -2), axis=(0, 1)))
    check(zc.repeat(z(A), 2, axis=0), np.repeat(A, 2, axis=0))
    check(zc.repeat(z(A), 3), np.repeat(A, 3))
    r = RNG.integers(0, 3, 10)
    check(zc.repeat(z(A), r, axis=1), np.repeat(A, r, axis=1))
    check(zc.repeat(z(A), zc.from_array(np.tile(r, 7))), np.repeat(A, np.tile(r, 7)))
    check(zc.repeat(z(A), np.array([2]), axis=-2), np.repeat(A, [2], axis=-2))
    with pytest.raises(ValueError, match="3 repeat counts for an axis of length 10"):
        zc.repeat(z(A), [1, 2, 3], axis=1)
    with pytest.raises(ValueError, match="negative"):
        zc.repeat(z(A), -r, axis=1)
    check(zc.tile(z(A), (2, 1)), np.tile(A, (2, 1)))
    check(zc.diff(z(A), axis=0), np.diff(A, axis=0))
    check(zc.diff(z(A), n=2, prepend=z(A[:, :1])), np.diff(A, n=2, prepend=A[:, :1]))
    for g, w in zip(zc.unstack(z(A), axis=1), [A[:, i] for i in range(10)]):
        check(g, w)
    b1, b2 = zc.broadcast_arrays(z(A), zc.from_array(A[0]))
    check(b2, np.broadcast_to(A[0], A.shape))
    check(zc.rechunk(z(A), (7, 1)), A)
    assert zc.rechunk(z(A), (7, 1)).chunksize == (7, 1)


def test_dtypes():
    check(zc.astype(z(A), zc.float32), A.astype(np.float32))
    check(z(I).astype(zc.int8), I.astype(np.int8))
    assert zc.result_type(zc.int8, zc.uint8) == np.int16
    assert zc.result_type(z(I), zc.float32) == np.float64
    assert zc.can_cast(zc.int8, zc.int32) and not zc.can_cast(zc.float64, zc.int32)
    assert zc.finfo(zc.float32).eps == np.finfo(np.float32).eps
    assert zc.iinfo(zc.int16).max == 32767 and zc.iinfo(zc.uint8).min == 0
    assert zc.isdtype(zc.float32, "real floating") and zc.isdtype(zc.int8, ("integral", "bool"))
    assert not zc.isdtype(zc.uint8, "signed integer")
    assert z(A).dtype == np.float64 and isinstance(z(A).dtype, np.dtype)


def test_linalg():
    M = RNG.standard_normal((40, 6))
    S = M.T @ M + 6 * np.eye(6)
    check(z(M, (10, 6)) @ z(M.T, (6, 10)), M @ M.T, rtol=1e-10)
    check(zc.matmul(z(A), z(P.T, (4, 3))), A @ P.T, rtol=1e-10)
    check(zc.tensordot(z(A), z(P), axes=([0, 1], [0, 1])), np.tensordot(A, P, axes=([0, 1], [0, 1])), rtol=1e-10)
    check(zc.vecdot(z(A), z(P)), np.sum(A * P, axis=-1), rtol=1e-10)
    check(zc.linalg.outer(zc.from_array(A[0]), zc.from_array(P[0])), np.outer(A[0], P[0]))
    s = zc.linalg.svdvals(z(M, (10, 6))).compute()
    np.testing.assert_allclose(s, np.linalg.svd(M, compute_uv=False), rtol=1e-10)
    u, s2, vt = zc.compute(*zc.linalg.svd(z(M, (10, 6)), full_matrices=False))
    np.testing.assert_allclose(u @ np.diag(s2) @ vt, M, atol=1e-10)
    q, r = zc.compute(*zc.linalg.qr(z(M, (10, 6))))
    np.testing.assert_allclose(q @ r, M, atol=1e-10)
    np.testing.assert_allclose(q.T @ q, np.eye(6), atol=1e-10)
    check(zc.linalg.cholesky(z(S, (3, 3))), np.linalg.cholesky(S), rtol=1e-10)
    check(zc.linalg.inv(z(S, (3, 3))), np.linalg.inv(S), rtol=1e-8)
    b = RNG.standard_normal(6)
    check(zc.linalg.solve(z(S, (3, 3)), zc.from_array(b)), np.linalg.solve(S, b), rtol=1e-8)
    x, res, rank, sv = zc.compute(*zc.linalg.lstsq(z(M, (10, 6)), zc.from_array(M[:, 0] + 1)))
    np.testing.assert_allclose(x, np.linalg.lstsq(M, M[:, 0] + 1, rcond=None)[0], rtol=1e-8)
    check(zc.linalg.vector_norm(z(A)), np.linalg.norm(A.ravel()), rtol=1e-10)
    check(zc.linalg.matrix_norm(z(A)), np.linalg.norm(A), rtol=1e-10)
    u, s3, vt = zc.compute(*zc.linalg.svd_compressed(z(M, (10, 6)), 6, oversamples=0, seed=1))
    np.testing.assert_allclose(s3, np.linalg.svd(M, compute_uv=False), rtol=1e-8)


def test_linalg_stacks_complex_and_derived():
    """Stacks of matrices (one decomposition per matrix), results in the input's
    floating dtype, complex inv/solve/pinv/svdvals/eigh (LAPACK z routines),
    qr mode="complete" and svd full_matrices=True for any shape, pinv and
    matrix_rank from the SVD, det/slogdet (LU) and eigh/eigvalsh (dsyevd, zheevd), diagonal/trace/matrix_power/cross/matrix_norm,
    and matrices with an empty dimension, all against NumPy."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 4, 4))
    c = a + 1j * rng.standard_normal(a.shape)
    spd = a @ a.swapaxes(-1, -2) + 4 * np.eye(4)
    r = rng.standard_normal((2, 5, 3))
    rc = r + 1j * rng.standard_normal(r.shape)
    za, zcx = zc.asarray(a), zc.asarray(c)
    check(zc.linalg.inv(za), np.linalg.inv(a), rtol=1e-8)
    check(zc.linalg.inv(zcx), np.linalg.inv(c), rtol=1e-8)
    check(zc.linalg.inv(zc.asarray(a.astype(np.float32))), np.linalg.inv(a.astype(np.float32)), rtol=1e-3)
    check(zc.linalg.cholesky(zc.asarray(spd)), np.linalg.cholesky(spd), rtol=1e-10)
    check(zc.linalg.cholesky(zc.asarray(spd), upper=True), np.linalg.cholesky(spd).swapaxes(-1, -2), rtol=1e-10)
    b = rng.standard_normal((3, 4, 2))
    check(zc.linalg.solve(za, zc.asarray(b)), np.linalg.solve(a, np.broadcast_to(b, (2, 3, 4, 2))), rtol=1e-8)
    check(zc.linalg.solve(zcx, zc.asarray(b[0, :, 0])), np.linalg.solve(c, b[0, :, 0][:, None])[..., 0], rtol=1e-8)
    check(zc.linalg.svdvals(za), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    check(zc.linalg.svdvals(zcx), np.linalg.svd(c, compute_uv=False), rtol=1e-10)
    for m in (r, r.swapaxes(1, 2), rc):
        check(zc.linalg.pinv(zc.asarray(m)), np.linalg.pinv(m), rtol=1e-8)
    low = r @ r.swapaxes(1, 2)  # 5 x 5 of rank 3
    check(zc.linalg.matrix_rank(zc.asarray(low)), np.linalg.matrix_rank(low))
    check(zc.linalg.matrix_rank(zc.asarray(low), rtol=zc.asarray(np.array([1e-10, 0.99]))),
          np.linalg.matrix_rank(low, tol=np.array([1e-10, 0.99]) * np.linalg.svd(low, compute_uv=False).max(-1)))
    for m in (r, r.swapaxes(1, 2), a):
        for full in (False, True):
            u, s, vh = zc.compute(*zc.linalg.svd(zc.asarray(m), full_matrices=full))
            nu, ns, nvh = np.linalg.svd(m, full_matrices=full)
            assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
            k = s.shape[-1]
            np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], m, atol=1e-10)
            np.testing.assert_allclose(u.swapaxes(-1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                                                                               (u.shape[-1],) * 2), atol=1e-10)
            np.testing.assert_allclose(vh @ vh.swapaxes(-1, -2), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] +
                                                                                 (vh.shape[-2],) * 2), atol=1e-10)
        for mode in ("reduced", "complete"):
            q, rr = zc.compute(*zc.linalg.qr(zc.asarray(m.astype(np.float32)), mode=mode))
            nq, nr = np.linalg.qr(m.astype(np.float32), mode=mode)
            assert (q.shape, rr.shape, q.dtype, rr.dtype) == (nq.shape, nr.shape, nq.dtype, nr.dtype)
            np.testing.assert_allclose(q @ rr, m, atol=1e-5)
            assert (np.triu(rr) == rr).all()
    ints = rng.integers(-5, 5, (2, 4, 5)).astype(np.int16)
    for off in (-5, -2, 0, 1, 3, 9):
        check(zc.linalg.diagonal(zc.asarray(ints), offset=off), np.diagonal(ints, off, -2, -1))
        check(zc.linalg.trace(zc.asarray(ints), offset=off), np.trace(ints, off, axis1=-2, axis2=-1).astype(np.int64))
    check(zc.linalg.trace(za, dtype=zc.float32), np.trace(a, axis1=-2, axis2=-1).astype(np.float32), rtol=1e-5)
    for n in (0, 1, 2, 3, 5, -1, -3):
        check(zc.linalg.matrix_power(zcx, n), np.linalg.matrix_power(c, n), rtol=1e-7)
    v1, v2 = rng.integers(-9, 9, (4, 3)).astype(np.int32), rng.integers(-9, 9, (2, 1, 3)).astype(np.int8)
    check(zc.linalg.cross(zc.asarray(v1), zc.asarray(v2)), np.cross(v1, v2))
    check(zc.linalg.cross(zc.asarray(a[..., :3, :]), zc.asarray(a[0, 0, :3, :]), axis=-2),
          np.cross(a[..., :3, :], a[0, 0, :3, :], axis=-2))
    with pytest.raises(ValueError, match="size 3"):
        zc.linalg.cross(za, za)
    for o in ("fro", 1, -1, 2, -2, np.inf, -np.inf, "nuc"):
        check(zc.linalg.matrix_norm(za, ord=o), np.linalg.norm(a, ord=o, axis=(-2, -1)), rtol=1e-10)
    check(zc.linalg.matrix_norm(za, ord=2, keepdims=True), np.linalg.norm(a, ord=2, axis=(-2, -1), keepdims=True))
    check(zc.linalg.det(za), np.linalg.det(a), rtol=1e-10)
    check(zc.linalg.det(zc.asarray(np.diag([2.0, 3.0, 7.0])[::-1])), np.float64(-42.0))  # a row swap: the sign
    sign, logdet = zc.compute(*zc.linalg.slogdet(za))
    nsign, nlogdet = np.linalg.slogdet(a)
    check(sign, nsign)
    check(logdet, nlogdet, rtol=1e-12)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    check(zc.linalg.det(zc.asarray(singular)), np.float64(0.0))
    check(zc.stack(list(zc.linalg.slogdet(zc.asarray(singular)))), np.array([0.0, -np.inf]))
    check(zc.linalg.det(zc.asarray(a.astype(np.float32))), np.linalg.det(a.astype(np.float32)), rtol=1e-4)
    sym = a + a.swapaxes(-1, -2)
    w, v = zc.compute(*zc.linalg.eigh(zc.asarray(sym)))
    nw, nv = np.linalg.eigh(sym)
    check(w, nw, rtol=1e-10)
    np.testing.assert_allclose(np.abs((v * nv).sum(-2)), 1, rtol=1e-8)  # the same vectors, up to sign
    np.testing.assert_allclose(sym @ v, v * w[..., None, :], atol=1e-10)
    check(zc.linalg.eigvalsh(zc.asarray(np.tril(a))), np.linalg.eigvalsh(np.tril(a)), rtol=1e-10)  # lower triangle
    herm = sym + 1j * (a - a.swapaxes(-1, -2))  # Hermitian (zheevd), read from its lower triangle too
    w, v = zc.compute(*zc.linalg.eigh(zc.asarray(np.tril(herm))))
    check(w, np.linalg.eigvalsh(herm), rtol=1e-10)
    assert w.dtype == np.float64 and v.dtype == np.complex128
    np.testing.assert_allclose(herm @ v, v * w[..., None, :], atol=1e-10)
    for shape in [(0, 0), (3, 0), (0, 3), (2, 0, 3), (0, 2, 2)]:
        e, ne = zc.zeros(shape), np.zeros(shape)
        for mode in ("reduced", "complete"):
            q, rr = zc.linalg.qr(e, mode=mode)
            nq, nr = np.linalg.qr(ne, mode=mode)
            assert (q.shape, rr.shape) == (nq.shape, nr.shape), (shape, mode)
        check(zc.linalg.svdvals(e), np.linalg.svd(ne, compute_uv=False))
        check(zc.linalg.pinv(e), np.linalg.pinv(ne))
        check(zc.linalg.matrix_rank(e), np.zeros(shape[:-2], np.int64))
        if shape[-1] == shape[-2]:
            check(zc.linalg.inv(e), np.linalg.inv(ne))
            check(zc.linalg.cholesky(e), ne)
            check(zc.linalg.det(e), np.linalg.det(ne))
            check(zc.linalg.eigvalsh(e), np.linalg.eigvalsh(ne))


def test_fft():
    x = RNG.standard_normal((8, 12))
    c = x + 1j * RNG.standard_normal((8, 12))
    check(zc.fft.fft(z(x)), np.fft.fft(x), rtol=1e-10)
    check(zc.fft.ifft(z(c), axis=0, norm="ortho"), np.fft.ifft(c, axis=0, norm="ortho"), rtol=1e-10)
    check(zc.fft.rfft(z(x), n=16), np.fft.rfft(x, n=16), rtol=1e-10)
    check(zc.fft.irfft(z(c)), np.fft.irfft(c), rtol=1e-10)
    check(zc.fft.hfft(z(c), norm="forward"), np.fft.hfft(c, norm="forward"), rtol=1e-10)
    check(zc.fft.ihfft(z(x)), np.fft.ihfft(x), rtol=1e-10)
    check(zc.fft.fftn(z(c)), np.fft.fftn(c), rtol=1e-10)
    check(zc.fft.ifftn(z(c), axes=(0,)), np.fft.ifftn(c, axes=(0,)), rtol=1e-10)
    check(zc.fft.rfftn(z(x), s=(8, 10)), np.fft.rfftn(x, s=(8, 10)), rtol=1e-10)
    check(zc.fft.irfftn(z(c)), np.fft.irfftn(c), rtol=1e-10)
    check(zc.fft.fftfreq(9, d=0.5), np.fft.fftfreq(9, d=0.5))
    check(zc.fft.rfftfreq(10), np.fft.rfftfreq(10))
    check(zc.fft.fftshift(z(x)), np.fft.fftshift(x))
    check(zc.fft.ifftshift(z(x), axes=1), np.fft.ifftshift(x, axes=1))


def test_python_protocols():
    x = z(A)
    assert x.shape == (7, 10) and x.ndim == 2 and x.size == 70 and x.nbytes == 560
    np.testing.assert_array_equal(np.asarray(x), A)
    assert float(zc.sum(x)) == pytest.approx(A.sum())
    assert int(zc.asarray(3)) == 3 and zc.asarray(3).__index__() == 3
    assert bool(zc.asarray(True)) and not bool(zc.asarray(0.0))
    with pytest.raises(ValueError):
        bool(x)
    with pytest.raises(NotImplementedError):
        x[[0, 1]] = 1.0  # setitem takes basic indices or a boolean mask
    assert "shape=(7, 10)" in repr(x) and "float64" in repr(x) and "from_array" in repr(x)
    assert x.__array_namespace__() is zc
    d = zc.sum(x).compute()
    np.testing.assert_array_equal(np.from_dlpack(x), A)
    assert x.__dlpack_device__() == (1, 0)
    assert len(x) == 7 and [r.shape for r in zc.from_array(A[:2])] == [(10,), (10,)]
    assert d.shape == ()


@pytest.mark.parametrize("key, value", [
    ((1,), 5.0), ((slice(None, None, 2), 3), -1.0), ((Ellipsis, slice(8, 2, -2)), 0.5),
    ((slice(1, 3),), "row"), ((2, slice(None, None, -1)), "vec"), ((A > 0,), 9.0),
])
def test_setitem(key, value):
    want = A.copy()
    got = z(A)
    if value == "row":
        value = A[4:6] * 10
    elif value == "vec":
        value = np.arange(10.0)
    want[key if len(key) > 1 else key[0]] = value
    got[key if len(key) > 1 else key[0]] = value if np.isscalar(value) else zc.from_array(value)
    check(got, want)


def test_linspace_eye_edges():
    check(zc.linspace(0, 1, 5, endpoint=False), np.linspace(0, 1, 5, endpoint=False))
    assert zc.linspace(1.0, 211803313171755.0, 389).compute()[-1] == 211803313171755.0
    check(zc.eye(1, 0), np.eye(1, 0))
    check(zc.eye(3, k=10**20), np.zeros((3, 3)))
    c = zc.asarray(z(A), copy=True)
    x = z(A)
    y = zc.asarray(x)
    x[0] = 0.0
    check(y, A)
    check(c, A)
    check(z(A)[np.asarray(True)], A[None])
    check(z(A)[np.asarray(False)], A[np.asarray(False)])
