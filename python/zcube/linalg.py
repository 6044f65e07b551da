"""zc.linalg: the array API's linear algebra extension (and svd_compressed),
lazily; decompositions run on float32/float64 matrices, results float64."""
from collections import namedtuple

from . import _zcube
from ._array import _wrap
from ._functions import matmul, matrix_transpose, outer, tensordot, vecdot

QRResult = namedtuple("QRResult", ["Q", "R"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def _many(x, kind, nodes, *deps):
    return [_wrap(n, x, *deps, op=kind) for n in nodes]


def qr(x, /, *, mode="reduced"):
    if mode != "reduced":
        raise NotImplementedError("qr: only mode='reduced'")
    return QRResult(*_many(x, "qr", _zcube.decomp("qr", x._node)))


def svd(x, /, *, full_matrices=True):
    if full_matrices and x.shape[-1] != x.shape[-2]:
        raise NotImplementedError("svd: only full_matrices=False (reduced) for non-square matrices")
    return SVDResult(*_many(x, "svd", _zcube.decomp("svd", x._node)))


def svdvals(x, /):
    return _many(x, "svdvals", _zcube.decomp("svdvals", x._node))[0]


def cholesky(x, /, *, upper=False):
    (l,) = _many(x, "cholesky", _zcube.decomp("cholesky", x._node))
    return matrix_transpose(l) if upper else l


def inv(x, /):
    return _many(x, "inv", _zcube.decomp("inv", x._node))[0]


def solve(x1, x2, /):
    return _wrap(_zcube.binary("solve", x1._node, x2._node), x1, x2, op="solve")


def lstsq(a, b, /):
    return LstsqResult(*_many(a, "lstsq", _zcube.lstsq(a._node, b._node), b))


def svd_compressed(x, k, *, oversamples=10, power_iters=0, seed=0):
    """Randomized SVD of rank k (Halko et al.) for matrices large both ways."""
    return SVDResult(*_many(x, "svd_compressed", _zcube.svd_compressed(x._node, int(k), int(oversamples),
                                                                        int(power_iters), int(seed))))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    if ord != "fro":
        raise NotImplementedError("matrix_norm: only ord='fro'")
    from ._functions import abs, sqrt, sum
    return sqrt(sum(abs(x) ** 2, axis=(-2, -1), keepdims=keepdims))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    from ._functions import abs, max, min, sum
    a = abs(x)
    if ord == float("inf"):
        return max(a, axis=axis, keepdims=keepdims)
    if ord == float("-inf"):
        return min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(astype_float(a != 0, a), axis=axis, keepdims=keepdims)
    return sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def astype_float(b, like):
    from ._functions import astype
    return astype(b, like.dtype if like.dtype.kind == "f" else "float64")


__all__ = ["cholesky", "inv", "lstsq", "matmul", "matrix_norm", "matrix_transpose", "outer", "qr", "solve",
           "svd", "svd_compressed", "svdvals", "tensordot", "vecdot", "vector_norm"]
