"""The array API's functions over lazy arrays: creation, elementwise,
statistical, searching, manipulation, data types, linear algebra basics."""
import builtins as _b
from collections import namedtuple as _namedtuple

import numpy as np

from . import _dtypes, _zcube
from ._array import Array, _operand, _wrap
from ._io import _norm_chunks, from_array

# ---------------------------------------------------------------- creation


def _shape(shape):
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def _default_dtype(value):
    if isinstance(value, bool):
        return _dtypes.bool
    if isinstance(value, int):
        return _dtypes.int64
    if isinstance(value, complex):
        return _dtypes.complex128
    return _dtypes.float64


def _tag(a, spec):
    if spec is not None:
        a._spec = spec
    return a


def full(shape, fill_value, *, dtype=None, device=None, chunks=None, spec=None):
    shape = _shape(shape)
    dt = np.dtype(dtype) if dtype is not None else _default_dtype(fill_value)
    if isinstance(fill_value, complex) or dt.kind == "c":
        one = from_array(np.asarray(fill_value, dtype=dt))
        return _tag(broadcast_to(one, shape).rechunk(_norm_chunks(chunks, shape) or shape), spec)
    node = _zcube.full(shape, _norm_chunks(chunks, shape), _dtypes.code(dt), float(fill_value))
    return _tag(Array(node, op="full"), spec)


def zeros(shape, *, dtype=None, device=None, chunks=None, spec=None):
    return full(shape, 0, dtype=dtype or _dtypes.float64, chunks=chunks, spec=spec)


def ones(shape, *, dtype=None, device=None, chunks=None, spec=None):
    return full(shape, 1, dtype=dtype or _dtypes.float64, chunks=chunks, spec=spec)


def empty(shape, *, dtype=None, device=None, chunks=None, spec=None):
    return zeros(shape, dtype=dtype, chunks=chunks, spec=spec)


def _like(kind, x, dtype, value=0.0):
    dt = 0 if dtype is None else _dtypes.code(dtype)
    return _wrap(_zcube.like(kind, x._node, dt, float(value)), x, op=f"{kind}_like")


def zeros_like(x, /, *, dtype=None, device=None):
    return _like("zeros", x, dtype)


def ones_like(x, /, *, dtype=None, device=None):
    return _like("ones", x, dtype)


def empty_like(x, /, *, dtype=None, device=None):
    return _like("empty", x, dtype)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    if isinstance(fill_value, complex):
        return full(x.shape, fill_value, dtype=dtype or x.dtype, chunks=x.chunksize)
    return _like("full", x, dtype, fill_value)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None, chunks=None, spec=None):
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = _dtypes.int64 if _b.all(isinstance(v, int) for v in (start, stop, step)) else _dtypes.float64
    if step == 0:
        raise ValueError("arange: step must not be zero")
    chunk = 0 if chunks in (None, "auto") else int(chunks if isinstance(chunks, int) else chunks[0])
    node = _zcube.arange(float(start), float(stop), float(step), _dtypes.code(dtype), chunk)
    return _tag(Array(node, op="arange"), spec)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True, chunks=None, spec=None):
    if isinstance(start, complex) or isinstance(stop, complex):
        raise TypeError("linspace: complex endpoints are not supported")
    dt = np.dtype(dtype) if dtype is not None else _dtypes.float64
    chunk = 0 if chunks in (None, "auto") else int(chunks if isinstance(chunks, int) else chunks[0])
    if not endpoint and num > 0:  # the same points as with the endpoint, one more, NumPy's rounding
        return _tag(linspace(start, stop, num + 1, dtype=dt, chunks=chunks)[:-1], spec)
    node = _zcube.linspace(float(start), float(stop), int(num), bool(endpoint), _dtypes.code(dt), chunk)
    out = Array(node, op="linspace")
    if endpoint and num > 1:  # the last point is stop exactly, as in NumPy
        last = arange(num, chunks=out.chunksize[0]) == num - 1
        out = where(last, asarray(stop, dtype=dt), out)
    return _tag(out, spec)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, chunks=None, spec=None):
    m = n_rows if n_cols is None else n_cols
    dt = np.dtype(dtype) if dtype is not None else _dtypes.float64
    k = _b.max(-n_rows - 1, _b.min(int(k), m + 1))  # beyond the matrix: all zeros either way
    if n_rows == 0 or m == 0:
        return full((n_rows, m), 0, dtype=dt, chunks=chunks, spec=spec)
    node = _zcube.eye(int(n_rows), int(m), int(k), _dtypes.code(dt), _norm_chunks(chunks, (n_rows, m)))
    return _tag(Array(node, op="eye"), spec)


def asarray(obj, /, *, dtype=None, device=None, copy=None, chunks=None, spec=None):
    if isinstance(obj, Array):
        a = obj if dtype is None or np.dtype(dtype) == obj.dtype else astype(obj, dtype)
        if a is obj and copy is not False:  # a new handle on the same (immutable) node:
            a = Array(obj._node, obj._deps, op=obj._op)  # later x[...] = v does not change it
        return _tag(a if chunks is None else a.rechunk(chunks), spec)
    if copy is False and not isinstance(obj, np.ndarray):
        raise ValueError("asarray(copy=False): zcube arrays always hold their own copy")
    if isinstance(obj, (list, tuple)) and obj and _b.any(isinstance(v, Array) for v in obj):
        return stack([asarray(v) for v in obj])
    if dtype is None and not isinstance(obj, np.ndarray) and isinstance(obj, (bool, int, float, complex)):
        dtype = _default_dtype(obj)
    a = np.asarray(obj, dtype=dtype)
    if dtype is None and a.dtype.kind == "f" and a.dtype != np.float32 and a.dtype != np.float16:
        a = a.astype(np.float64)
    return _tag(from_array(a, chunks=chunks), spec)


def from_dlpack(x, /, *, device=None, copy=None):
    return from_array(np.from_dlpack(x))


def meshgrid(*arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij'")
    n = len(arrays)
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        s = [1] * n
        s[pos] = a.shape[0]
        out.append(broadcast_to(reshape(a, tuple(s)), tuple(shape)))
    return out


def tril(x, /, *, k=0):
    return _wrap(_zcube.int_op("tril", x._node, int(k)), x, op="tril")


def triu(x, /, *, k=0):
    return _wrap(_zcube.int_op("triu", x._node, int(k)), x, op="triu")


# ---------------------------------------------------------------- elementwise

# the library's own list (zc_elementwise_info); where (3 arguments) is defined below
_ELEMENTWISE = _zcube.elementwise_info()
_UNARY = [n for n, k in _ELEMENTWISE if k == 1]
_BINARY = [n for n, k in _ELEMENTWISE if k == 2]


def _arrays(*xs):
    """Arrays from the arguments, Python scalars taking the first array's dtype."""
    like = next((x for x in xs if isinstance(x, Array)), None)
    if like is None:
        raise TypeError("at least one argument must be a zcube array")
    out = []
    for x in xs:
        o = _operand(x, like)
        if o is NotImplemented:
            raise TypeError(f"cannot use {type(x).__name__} as an array")
        out.append(o)
    return out


def _make_unary(name):
    def f(x, /):
        if not isinstance(x, Array):
            raise TypeError(f"{name}: expected a zcube array, got {type(x).__name__}")
        return _wrap(_zcube.elementwise(name, x._node), x, op=name)
    f.__name__ = name
    f.__doc__ = f"The array API's {name}(x), elementwise and lazy."
    return f


def _make_binary(name):
    def f(x1, x2, /):
        a, b = _arrays(x1, x2)
        return _wrap(_zcube.elementwise(name, a._node, b._node), a, b, op=name)
    f.__name__ = name
    f.__doc__ = f"The array API's {name}(x1, x2), elementwise with broadcasting, lazy."
    return f


_g = globals()
for _n in _UNARY:
    _g[_n] = _make_unary(_n)
for _n in _BINARY:
    _g[_n] = _make_binary(_n)
del _n


def isin(x1, x2, /, *, invert=False):
    """Whether each element of x1 is in x2 (array API 2025.12); either may be a
    Python scalar. Every block of x1 meets every block of x2 under the bound."""
    like = x1 if isinstance(x1, Array) else x2
    if not isinstance(like, Array):
        raise TypeError("isin: x1 or x2 must be a zcube array")
    a, b = _operand(x1, like), _operand(x2, like)
    return _wrap(_zcube.isin(a._node, b._node, bool(invert)), a, b, op="isin")


def where(condition, x1, x2, /):
    like = x1 if isinstance(x1, Array) else x2
    if not isinstance(like, Array):
        raise TypeError("where: x1 or x2 must be a zcube array")
    a, b = _operand(x1, like), _operand(x2, like)
    c = condition if isinstance(condition, Array) else from_array(np.asarray(condition, dtype=bool))
    return _wrap(_zcube.elementwise("where", c._node, a._node, b._node), c, a, b, op="where")


def clip(x, /, min=None, max=None):  # noqa: A002
    out = x
    if min is not None:
        out = _g["maximum"](out, min)
    if max is not None:
        out = _g["minimum"](out, max)
    if out is x:
        return x
    return out if out.dtype == x.dtype else astype(out, x.dtype)


def astype(x, dtype, /, *, copy=True, device=None):
    dt = np.dtype(dtype)
    if dt == x.dtype and not copy:
        return x
    return _wrap(_zcube.astype(x._node, _dtypes.code(dt)), x, op="astype")


def result_type(*arrays_and_dtypes):
    vals = [a for a in arrays_and_dtypes if not isinstance(a, (bool, int, float, complex))]
    if not vals:
        raise TypeError("result_type: needs an array or a dtype")
    return _dtypes.result_type(*vals)


# ---------------------------------------------------------------- statistical


def _axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, int):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < ndim:
            raise IndexError(f"axis {a} out of range for a {ndim}-D array")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {tuple(axis)}")
    return out


def _reduce(name, x, axis, keepdims, ddof=0.0, dtype=None):
    if dtype is not None:
        x = astype(x, dtype, copy=False)
    axes = _axes(axis, x.ndim)
    if axes == []:
        # axis=() reduces over no axis (the library reads no axes as all axes): each
        # element is reduced alone, over a new length-1 axis, keeping the reduction's
        # dtype and values (var of one element with correction 1 is NaN, as NumPy's)
        out = _wrap(_zcube.reduce(name, expand_dims(x, axis=0)._node, [0], False, float(ddof)), x, op=name)
    else:
        out = _wrap(_zcube.reduce(name, x._node, axes, bool(keepdims), float(ddof)), x, op=name)
    # the library sums integers in (u)int64; a dtype asked for is the result's
    # (wrapping as NumPy's sum in that dtype does)
    return out if dtype is None or out.dtype == dtype else astype(out, dtype)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    return _reduce("sum", x, axis, keepdims, dtype=dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    return _reduce("prod", x, axis, keepdims, dtype=dtype)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _reduce("max", x, axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _reduce("min", x, axis, keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    return _reduce("mean", x, axis, keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _reduce("var", x, axis, keepdims, ddof=correction)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _reduce("std", x, axis, keepdims, ddof=correction)


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _reduce("any", x, axis, keepdims)


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _reduce("all", x, axis, keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    return _reduce("count_nonzero", x, axis, keepdims)


def argmax(x, /, *, axis=None, keepdims=False):
    return _reduce("argmax", x, axis, keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    return _reduce("argmin", x, axis, keepdims)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    dt = 0 if dtype is None else _dtypes.code(dtype)
    return _wrap(_zcube.cumulative("sum", x._node, axis, dt, bool(include_initial)), x, op="cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    dt = 0 if dtype is None else _dtypes.code(dtype)
    return _wrap(_zcube.cumulative("prod", x._node, axis, dt, bool(include_initial)), x, op="cumulative_prod")


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """Sorted copy along axis; always stable, NaNs last in both orders. Lines
    longer than one task's memory are sorted externally under the bound."""
    return _wrap(_zcube.sort(x._node, int(axis), bool(descending), False), x, op="sort")


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices (int64) that sort x along axis; stable, NaNs last in both orders."""
    return _wrap(_zcube.sort(x._node, int(axis), bool(descending), True), x, op="argsort")


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion indices (int64) of x2's values into the sorted 1-D x1 (any length);
    sorter: None, or indices that sort x1 (the search is then in x1[sorter])."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x2 = _operand(x2, x1)
    if sorter is not None and not isinstance(sorter, Array):
        sorter = from_array(np.asarray(sorter))
    s = None if sorter is None else sorter._node
    return _wrap(_zcube.searchsorted(x1._node, x2._node, side == "right", s), x1, op="searchsorted")


def take_along_axis(x, indices, /, *, axis=-1):
    """x's values at indices along axis (indices from argsort, say; lazy, any
    length; the other dims broadcast)."""
    if not isinstance(indices, Array):
        indices = from_array(np.asarray(indices))
    return _wrap(_zcube.take_along_axis(x._node, indices._node, int(axis)), x, indices, op="take_along_axis")


def nonzero(x, /):
    """Indices of the non-zero elements, one array per dimension: counted now
    (under the spec x carries, or the default one), placed when computed."""
    from ._compute import _spec
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array")
    return tuple(_wrap(n, x, op="nonzero") for n in _zcube.nonzero(_spec(None, (x,)).to_dict(), x._node))


UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique(x, want):
    """zc_unique's results named by want (v values, i indices, n inverse, c
    counts): a sort, then a selection counted now (under the spec x carries, or
    the default one)."""
    from ._compute import _spec
    return [_wrap(n, x, op="unique") for n in _zcube.unique(_spec(None, (x,)).to_dict(), x._node, want)]


def unique_all(x, /):
    """Distinct values of x flattened (sorted, each NaN distinct), the first index
    of each, the inverse indices (x's shape) and the counts."""
    return UniqueAllResult(*_unique(x, "vinc"))


def unique_counts(x, /):
    return UniqueCountsResult(*_unique(x, "vc"))


def unique_inverse(x, /):
    return UniqueInverseResult(*_unique(x, "vn"))


def unique_values(x, /):
    return _unique(x, "v")[0]


# ---------------------------------------------------------------- manipulation


def reshape(x, /, shape, *, copy=None):
    return _wrap(_zcube.shape_op("reshape", x._node, _shape(shape)), x, op="reshape")


def rechunk(x, chunks):
    c = _norm_chunks(chunks, x.shape)
    if c is None:
        raise ValueError("rechunk: give the chunk shape")
    return _wrap(_zcube.rechunk(x._node, c), x, op="rechunk")


def broadcast_to(x, /, shape):
    return _wrap(_zcube.shape_op("broadcast_to", x._node, _shape(shape)), x, op="broadcast_to")


def broadcast_shapes(*shapes):
    return np.broadcast_shapes(*shapes)


def broadcast_arrays(*arrays):
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [a if a.shape == shape else broadcast_to(a, shape) for a in arrays]


def permute_dims(x, /, axes):
    return _wrap(_zcube.axes_op("permute_dims", x._node, tuple(axes)), x, op="permute_dims")


def matrix_transpose(x, /):
    return x.mT


def moveaxis(x, source, destination, /):
    s = (source,) if isinstance(source, int) else tuple(source)
    d = (destination,) if isinstance(destination, int) else tuple(destination)
    return _wrap(_zcube.moveaxis(x._node, s, d), x, op="moveaxis")


def expand_dims(x, /, axis=0):
    if isinstance(axis, tuple):
        out = x
        n = x.ndim + len(axis)
        for a in sorted(a % n for a in axis):
            out = expand_dims(out, axis=a)
        return out
    return _wrap(_zcube.int_op("expand_dims", x._node, int(axis)), x, op="expand_dims")


def squeeze(x, /, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if not axes:
        return x
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise IndexError(f"squeeze: axis {a} out of range")
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return _wrap(_zcube.axes_op("squeeze", x._node, axes), x, op="squeeze")


def flip(x, /, *, axis=None):
    axes = None if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    if axes == ():
        return x
    return _wrap(_zcube.axes_op("flip", x._node, axes), x, op="flip")


def roll(x, /, shift, *, axis=None):
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = None if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    return _wrap(_zcube.roll(x._node, shifts, axes), x, op="roll")


def concat(arrays, /, *, axis=0):
    arrays = list(arrays)
    return _wrap(_zcube.join("concat", [a._node for a in arrays], axis), *arrays, op="concat")


def stack(arrays, /, *, axis=0):
    arrays = list(arrays)
    return _wrap(_zcube.join("stack", [a._node for a in arrays], axis), *arrays, op="stack")


def unstack(x, /, *, axis=0):
    axis = axis % x.ndim
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


def repeat(x, repeats, /, *, axis=None):
    if isinstance(repeats, Array):
        repeats = repeats.compute()
    r = np.asarray(repeats)
    if r.ndim > 1 or r.dtype.kind not in "biu":
        raise ValueError(f"repeat: repeats must be an integer or a 1-D array of integers, not {r.dtype} {r.shape}")
    if r.ndim == 0 or r.size == 1:
        return _wrap(_zcube.repeat(x._node, int(r.reshape(())), axis), x, op="repeat")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    n = x.shape[axis % x.ndim] if -x.ndim <= axis < x.ndim else None
    if n is None:
        raise IndexError(f"repeat: axis {axis} out of range for a {x.ndim}-D array")
    if r.size != n:
        raise ValueError(f"repeat: {r.size} repeat counts for an axis of length {n}")
    if (r < 0).any():
        raise ValueError("repeat: repeat counts must not be negative")
    # one count per element: a take of each index as often as its count (the
    # indices, sum(repeats) of them, are held in the plan)
    return take(x, np.repeat(np.arange(n, dtype=np.int64), r), axis=axis)


def tile(x, repetitions, /):
    return _wrap(_zcube.shape_op("tile", x._node, tuple(repetitions)), x, op="tile")


def take(x, indices, /, *, axis=None):
    idx = indices.compute() if isinstance(indices, Array) else np.asarray(indices)
    if idx.ndim != 1:
        raise ValueError("take: indices must be 1-D")
    if axis is None and x.ndim != 1:
        raise ValueError("take: axis is required for arrays of more than one dimension")
    return _wrap(_zcube.take(x._node, idx.astype(np.int64).tobytes(), axis if axis is not None else 0),
                 x, op="take")


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    pre = None if prepend is None else _operand(prepend, x)
    app = None if append is None else _operand(append, x)
    deps = [d for d in (x, pre, app) if d is not None]
    return _wrap(_zcube.diff(x._node, int(axis), int(n), pre._node if pre is not None else None,
                             app._node if app is not None else None), *deps, op="diff")


# ---------------------------------------------------------------- linear algebra (namespace level)


def matmul(x1, x2, /):
    return _wrap(_zcube.binary("matmul", x1._node, x2._node), x1, x2, op="matmul")


def tensordot(x1, x2, /, *, axes=2):
    if isinstance(axes, int):
        return _wrap(_zcube.tensordot(x1._node, x2._node, axes, None, None), x1, x2, op="tensordot")
    a1, a2 = axes
    a1 = (a1,) if isinstance(a1, int) else tuple(a1)
    a2 = (a2,) if isinstance(a2, int) else tuple(a2)
    return _wrap(_zcube.tensordot(x1._node, x2._node, len(a1), a1, a2), x1, x2, op="tensordot")


def vecdot(x1, x2, /, *, axis=-1):
    return _wrap(_zcube.vecdot(x1._node, x2._node, int(axis)), x1, x2, op="vecdot")


def outer(x1, x2, /):
    return _wrap(_zcube.binary("outer", x1._node, x2._node), x1, x2, op="outer")


__all__ = [n for n in list(_g) if not n.startswith("_") and n not in ("np", "Array")]
