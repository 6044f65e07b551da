"""zc.linalg: the array API's linear algebra extension (and svd_compressed),
lazily. The library's decompositions take one real or complex matrix and compute in
float64 (complex128); here results take the input's floating dtype, stacks of matrices
(..., M, N) are decomposed matrix by matrix (one library decomposition each,
stacked), and matrices with an empty dimension get their (empty or trivial)
results directly. pinv and matrix_rank are built on svd; diagonal, trace,
cross and matrix_power on indexing, elementwise operations and matmul."""
from collections import namedtuple

import numpy as np

from . import _dtypes, _zcube
from ._array import Array, _wrap
from ._functions import (abs, astype, conj, broadcast_shapes, broadcast_to, concat, count_nonzero, eye, matmul, ones,
                         matrix_transpose, max, min, outer, reshape, result_type, stack, sum, tensordot,
                         vecdot, where, zeros)

QRResult = namedtuple("QRResult", ["Q", "R"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def _float(dtype):
    """The floating dtype results take: float32 and complex dtypes stay, the rest
    is float64."""
    return dtype if dtype.kind in "fc" else _dtypes.float64


def _cast(a, dtype):
    return a if a.dtype == dtype else astype(a, dtype)


def _per_matrix(x, one, empty):
    """Results of `one` (a 2-D matrix, its index -> a list of arrays) for every matrix of the
    stack x (..., M, N), stacked along x's leading dims. `empty(M, N)` gives the
    results (arrays) of one M x N matrix with an empty dimension, and the results'
    shapes when the stack itself is empty."""
    if x.ndim < 2:
        raise ValueError(f"linalg: needs a matrix or a stack of matrices, got a {x.ndim}-D array")
    *batch, m, n = x.shape
    batch = tuple(batch)
    if 0 in batch:
        return [zeros(batch + r.shape, dtype=r.dtype) for r in empty(m, n)]
    if m == 0 or n == 0:
        return [broadcast_to(r, batch + r.shape) if batch else r for r in empty(m, n)]
    if not batch:
        return one(x, ())
    outs = [one(x[idx], idx) for idx in np.ndindex(*batch)]
    return [reshape(stack([o[i] for o in outs]), batch + outs[0][i].shape) for i in range(len(outs[0]))]


def _real(dtype):
    """The real floating dtype of a floating or complex one."""
    return {_dtypes.complex64: _dtypes.float32, _dtypes.complex128: _dtypes.float64}.get(dtype, dtype)


def _decomp(kind, x):
    """The library's decomposition `kind` of one 2-D matrix, in x's floating dtype
    (real results of a complex matrix, as singular values, in its real dtype)."""
    dt = _float(x.dtype)
    return [_cast(o, dt if o.dtype.kind == "c" or dt.kind != "c" else _real(dt))
            for o in (_wrap(nd, x, op=kind) for nd in _zcube.decomp(kind, x._node))]


def qr(x, /, *, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', not {mode!r}")
    dt = _float(x.dtype)

    def one(a, idx):
        m, n = a.shape
        if mode == "reduced" or m <= n:
            return _decomp("qr", a)
        # complete: Q of [A | I] (M x M) spans A's columns first; R is its first N columns
        q, r = _decomp("qr", concat([_cast(a, dt), eye(m, dtype=dt)], axis=1))
        return [q, r[:, :n]]

    def empty(m, n):
        k = m if mode == "complete" else int(np.minimum(m, n))
        return [eye(m, k, dtype=dt), zeros((k, n), dtype=dt)]
    return QRResult(*_per_matrix(x, one, empty))


def _complete(u):
    """u (M x K, orthonormal columns) completed to an M x M orthogonal matrix."""
    m, k = u.shape
    if k == m:
        return u
    q, _ = qr(u, mode="complete")
    return concat([u, q[:, k:]], axis=1)


def svd(x, /, *, full_matrices=True):
    dt = _float(x.dtype)

    def one(a, idx):
        u, s, vt = _decomp("svd", a)
        if full_matrices:
            u, vt = _complete(u), matrix_transpose(_complete(matrix_transpose(vt)))
        return [u, s, vt]

    def empty(m, n):
        k = int(np.minimum(m, n))
        if full_matrices:
            return [eye(m, dtype=dt), zeros((k,), dtype=_real(dt)), eye(n, dtype=dt)]
        return [eye(m, k, dtype=dt), zeros((k,), dtype=_real(dt)), eye(k, n, dtype=dt)]
    return SVDResult(*_per_matrix(x, one, empty))


def svdvals(x, /):
    dt = _float(x.dtype)
    dt = _real(dt)
    return _per_matrix(x, lambda a, idx: _decomp("svdvals", a),
                       lambda m, n: [zeros((int(np.minimum(m, n)),), dtype=dt)])[0]


def _square(name, x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: needs square matrices, got shape {x.shape}")


def cholesky(x, /, *, upper=False):
    _square("cholesky", x)
    dt = _float(x.dtype)
    (l,) = _per_matrix(x, lambda a, idx: _decomp("cholesky", a), lambda m, n: [zeros((m, n), dtype=dt)])
    return matrix_transpose(l) if upper else l


def inv(x, /):
    _square("inv", x)
    dt = _float(x.dtype)
    return _per_matrix(x, lambda a, idx: _decomp("inv", a), lambda m, n: [zeros((m, n), dtype=dt)])[0]


def det(x, /):
    """The determinant of each matrix (from its LU factorization)."""
    _square("det", x)
    dt = _float(x.dtype)
    return _per_matrix(x, lambda a, idx: _decomp("det", a), lambda m, n: [ones((), dtype=dt)])[0]


def slogdet(x, /):
    """Sign and log|det| of each matrix (0 and -inf for a singular one)."""
    _square("slogdet", x)
    dt = _float(x.dtype)
    return SlogdetResult(*_per_matrix(x, lambda a, idx: _decomp("slogdet", a),
                                      lambda m, n: [ones((), dtype=dt), zeros((), dtype=_real(dt))]))


def eigh(x, /):
    """Eigenvalues (ascending, real) and eigenvectors (columns) of each symmetric,
    or complex Hermitian, matrix (its lower triangle is read)."""
    _square("eigh", x)
    dt = _float(x.dtype)
    return EighResult(*_per_matrix(x, lambda a, idx: _decomp("eigh", a),
                                   lambda m, n: [zeros((m,), dtype=dt), zeros((m, m), dtype=dt)]))


def eigvalsh(x, /):
    _square("eigvalsh", x)
    dt = _float(x.dtype)
    return _per_matrix(x, lambda a, idx: _decomp("eigvalsh", a), lambda m, n: [zeros((m,), dtype=dt)])[0]


def solve(x1, x2, /):
    """x1 (..., M, M) x = x2, x2 (M,) or (..., M, K), the stacks broadcast."""
    _square("solve", x1)
    dt = _float(result_type(x1, x2))
    m = x1.shape[-1]
    if x2.ndim == 1:
        if x2.shape[0] != m:
            raise ValueError(f"solve: x2 of shape {x2.shape} does not fit x1 of shape {x1.shape}")
        batch, core2 = x1.shape[:-2], (m,)
    else:
        if x2.shape[-2] != m:
            raise ValueError(f"solve: x2 of shape {x2.shape} does not fit x1 of shape {x1.shape}")
        batch, core2 = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2])), x2.shape[-2:]
    a = broadcast_to(x1, batch + (m, m)) if x1.shape[:-2] != batch else x1
    b = broadcast_to(x2, batch + core2) if x2.shape[:-len(core2)] != batch else x2

    def one(idx):
        ai, bi = (a[idx], b[idx]) if idx else (a, b)
        if m == 0 or 0 in bi.shape:
            return zeros(bi.shape, dtype=dt)
        return _cast(_wrap(_zcube.binary("solve", _cast(ai, dt)._node, _cast(bi, dt)._node), ai, bi, op="solve"), dt)
    if 0 in batch:
        return zeros(batch + core2, dtype=dt)
    if not batch:
        return one(())
    outs = [one(idx) for idx in np.ndindex(*batch)]
    return reshape(stack(outs), batch + core2)


def lstsq(a, b, /):
    return LstsqResult(*[_wrap(n, a, b, op="lstsq") for n in _zcube.lstsq(a._node, b._node)])


def pinv(x, /, *, rtol=None):
    """Moore-Penrose pseudo-inverse from the SVD: singular values at most
    rtol * the largest (default max(M, N) * eps) count as zero."""
    u, s, vh = svd(x, full_matrices=False)
    cut = _cutoff(x, s, rtol)
    sinv = where(s > cut, 1.0 / where(s > cut, s, 1.0), 0.0)
    v, uh = matrix_transpose(vh), matrix_transpose(u)
    if x.dtype.kind == "c":  # V diag(1/s) Uᴴ
        v, uh = conj(v), conj(uh)
    return matmul(v * sinv[..., None, :], uh)


def matrix_rank(x, /, *, rtol=None):
    """The number of singular values above rtol * the largest (default
    max(M, N) * eps)."""
    s = svdvals(x)
    return count_nonzero(s > _cutoff(x, s, rtol), axis=-1)


def _cutoff(x, s, rtol):
    m, n = x.shape[-2:]
    if rtol is None:
        rtol = np.maximum(m, n) * float(np.finfo(s.dtype).eps)
    if isinstance(rtol, Array):
        rtol = rtol[..., None]
    if s.shape[-1] == 0:
        return rtol
    return max(s, axis=-1, keepdims=True) * rtol


def _ext(kind, x, x2=None, n=0, d=0.0, s="", keepdims=False, axes=None):
    """The library's composition `kind` (zc_diagonal ... zc_pinv)."""
    return _wrap(_zcube.linalg_ext(kind, x._node, None if x2 is None else x2._node, int(n), float(d), s,
                                   bool(keepdims), axes), x, op=kind)


def diagonal(x, /, *, offset=0):
    """The offset diagonal of each matrix (zc_diagonal: a take on the flattened last two dims)."""
    if x.ndim < 2:
        raise ValueError(f"diagonal: needs a matrix or a stack of matrices, got a {x.ndim}-D array")
    return _ext("diagonal", x, n=offset)


def trace(x, /, *, offset=0, dtype=None):
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def matrix_power(x, n, /):
    """x @ x @ ... (n times; n = 0 the identity, n < 0 powers of inv(x)), by
    squaring (zc_matrix_power)."""
    _square("matrix_power", x)
    n = int(n)
    if n < 0:  # the namespace's inv: stacks, empty and complex matrices, x's dtype
        x, n = inv(x), -n
    return _ext("matrix_power", x, n=n)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along axis (the arrays broadcast)."""
    shape = tuple(broadcast_shapes(x1.shape, x2.shape))
    if not -len(shape) <= axis < 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross: axis {axis} must be negative and of size 3 in both arrays, "
                         f"got shapes {x1.shape} and {x2.shape}")
    return _cast(_ext("cross", x1, x2, n=axis), result_type(x1, x2))


def svd_compressed(x, k, *, oversamples=10, power_iters=0, seed=0):
    """Randomized SVD of rank k (Halko et al.) for matrices large both ways."""
    return SVDResult(*[_wrap(n, x, op="svd_compressed")
                       for n in _zcube.svd_compressed(x._node, int(k), int(oversamples), int(power_iters), int(seed))])


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    names = {1: "1", -1: "-1", 2: "2", -2: "-2", float("inf"): "inf", float("-inf"): "-inf"}
    key = ord if isinstance(ord, str) else names.get(ord)
    if key is None or key not in ("fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"):
        raise ValueError(f"matrix_norm: unknown ord {ord!r}")
    if x.ndim == 2 or key not in ("2", "-2", "nuc"):
        return _ext("matrix_norm", x, s=key, keepdims=keepdims)
    s = svdvals(x)  # a stack: the singular values of each matrix
    r = sum(s, axis=-1) if key == "nuc" else (max if key == "2" else min)(s, axis=-1)
    return r[..., None, None] if keepdims else r


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    if axis == ():  # nothing reduced: each element's norm alone
        a = abs(x)
        return astype_float(a != 0, a) if ord == 0 else astype_float(a, a)
    axes = None if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    return _ext("vector_norm", x, d=ord, keepdims=keepdims, axes=axes)


def astype_float(b, like):
    return astype(b, like.dtype if like.dtype.kind == "f" else "float64")


__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
           "svd_compressed", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]
