"""Indexing: basic indices (ints, slices with steps of either sign, None, ...)
go to zc_getitem; one integer array (known values) to take; several integer
arrays and integers (any shapes, broadcast) to a take on the indexed dims
flattened; a boolean mask over leading dimensions to mask_select."""
import operator

import numpy as np

from . import _dtypes, _zcube
from ._array import Array, _wrap


def _entry(k):
    if k is None:
        return ("newaxis",)
    if k is Ellipsis:
        return ("ellipsis",)
    if isinstance(k, slice):
        step = 1 if k.step is None else operator.index(k.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        start = None if k.start is None else operator.index(k.start)
        stop = None if k.stop is None else operator.index(k.stop)
        return ("slice", start, stop, step)
    if isinstance(k, (bool, np.bool_)):
        raise IndexError("a bool scalar index is not supported")
    return ("int", operator.index(k))


def _is_array_index(k):
    return isinstance(k, (Array, np.ndarray, list))


def _is_bool(idx):
    if isinstance(idx, Array):
        return idx.dtype == _dtypes.bool
    return np.asarray(idx).dtype == np.bool_


def getitem(x, key):
    if not isinstance(key, tuple):
        key = (key,)
    arrays = [i for i, k in enumerate(key) if _is_array_index(k)]
    if not arrays:
        return _basic(x, key)
    if len(arrays) == 1 and _is_bool(key[arrays[0]]):
        return _mask(x, key, key[arrays[0]])
    if len(arrays) > 1 or any(np.ndim(key[i]) != 1 for i in arrays):
        return _int_arrays(x, key)
    i = arrays[0]
    idx = key[i]
    if isinstance(idx, Array):
        idx = idx.compute()
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu" or idx.ndim != 1:
        raise IndexError("an array index must be a 1-D integer array (or a boolean mask)")
    if any(k is None or k is Ellipsis for k in key):
        raise IndexError("an array index cannot be combined with None or ...")
    if len(key) > x.ndim:
        raise IndexError(f"too many indices for a {x.ndim}-D array")
    n = x.shape[i]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"index out of bounds for axis {i} with size {n}")
    taken = _wrap(_zcube.take(x._node, idx.astype(np.int64).tobytes(), i), x, op="take")
    rest = tuple(slice(None) if j == i else k for j, k in enumerate(key))
    return _basic(taken, rest) if any(not (isinstance(k, slice) and k == slice(None)) for k in rest) else taken


def _int_arrays(x, key):
    """x[i0, i1, ...] with integers and integer arrays of any shapes only (the
    array API 2024.12's integer array indexing): the arrays and integers
    broadcast; each element picks x at those coordinates, the dims after the
    key kept. The index values are computed now, turned into positions in x
    flattened over the indexed dims, and held in the plan as a take's."""
    if any(not (_is_array_index(k) or isinstance(k, (int, np.integer))) or isinstance(k, (bool, np.bool_))
           for k in key):
        raise IndexError("several array indices (or one of more than 1 dimension) combine with integers only, "
                         "not with slices, None, ... or booleans")
    if len(key) > x.ndim:
        raise IndexError(f"too many indices for a {x.ndim}-D array")
    vals = []
    for d, k in enumerate(key):
        v = np.asarray(k.compute() if isinstance(k, Array) else k)
        if v.dtype.kind not in "iu":
            raise IndexError(f"index {d} must be integers, not {v.dtype}")
        n = x.shape[d]
        if v.size and (v.min() < -n or v.max() >= n):
            raise IndexError(f"index out of bounds for axis {d} with size {n}")
        vals.append(np.where(v < 0, v + n, v).astype(np.int64))
    shape = np.broadcast_shapes(*[v.shape for v in vals])
    lead, rest = x.shape[:len(key)], x.shape[len(key):]
    flat = np.ravel_multi_index(tuple(np.broadcast_to(v, shape) for v in vals), lead) if lead else \
        np.zeros(shape, np.int64)
    y = _wrap(_zcube.shape_op("reshape", x._node, (int(np.prod(lead)),) + rest), x, op="reshape")
    taken = _wrap(_zcube.take(y._node, flat.astype(np.int64).ravel().tobytes(), 0), y, op="take")
    return _wrap(_zcube.shape_op("reshape", taken._node, tuple(shape) + rest), taken, op="reshape")


def _mask(x, key, mask):
    """x[mask]: counted now (under the spec the arrays carry, or the default one),
    placed when computed; a 0-d mask is a new axis (x[True]) or an empty one."""
    from ._compute import _spec
    from ._io import from_array
    if not isinstance(mask, Array):
        mask = from_array(np.asarray(mask, dtype=bool))
    if len(key) == 1 and mask.ndim == 0:  # x[True]: a new axis; x[False]: and empty
        y = _basic(x, (None,))
        return y if mask.compute() else _basic(y, (slice(0, 0),))
    if len(key) != 1:
        raise IndexError("a boolean index must be the only index")
    lead = x.shape[:mask.ndim]
    if mask.ndim <= x.ndim and mask.size == 0 and all(m in (n, 0) for m, n in zip(mask.shape, lead)):
        # an empty mask selects nothing, also where its zero-length dims stand for
        # longer ones of x (as the array API's tests and NumPy allow)
        rest = x.shape[mask.ndim:]
        flat = _wrap(_zcube.shape_op("reshape", x._node, (int(np.prod(lead)),) + rest), x, op="reshape")
        return _basic(flat, (slice(0, 0),))
    if mask.shape != lead:
        raise IndexError(f"a boolean index of shape {mask.shape} does not match the array's leading dims {x.shape}")
    return _wrap(_zcube.mask_select(_spec(None, (x, mask)).to_dict(), x._node, mask._node), x, mask, op="getitem")


def _basic(x, key):
    entries = [_entry(k) for k in key]
    if all(e == ("slice", None, None, 1) for e in entries) and len(entries) <= x.ndim:
        return x
    return _wrap(_zcube.getitem(x._node, entries), x, op="getitem")


def _selected(k, n):
    """Which of n positions an index entry (int or slice) selects, as a bool vector."""
    m = np.zeros(n, dtype=bool)
    if isinstance(k, slice):
        m[k] = True
    else:
        i = operator.index(k)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of bounds for size {n}")
        m[i] = True
    return m


def setitem(x, key, value):
    """where(mask, value, x): the mask from a boolean array key or from basic
    indices; an array value is first spread to x's shape (take along each axis
    with the position each selected index has in the selection)."""
    from ._functions import astype, broadcast_to, expand_dims, logical_and, take, where
    from ._io import from_array
    if not isinstance(key, tuple):
        key = (key,)
    if isinstance(value, np.ndarray):
        value = from_array(value)
    if len(key) == 1 and isinstance(key[0], (Array, np.ndarray)) and key[0].dtype == np.bool_:
        mask = key[0] if isinstance(key[0], Array) else from_array(key[0])
        if isinstance(value, Array) and value.ndim:
            raise NotImplementedError("setitem with a boolean mask: only a scalar value")
        return _cast(where(broadcast_to(mask, x.shape), value, x), x)
    if any(k is None or _is_array_index(k) for k in key):
        raise NotImplementedError("setitem: basic indices (ints, slices, ...) or one boolean mask")
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("at most one ... in an index")
    if n_ell:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - len(key) + 1) + key[i + 1:]
    if len(key) > x.ndim:
        raise IndexError(f"too many indices for a {x.ndim}-D array")
    key = key + (slice(None),) * (x.ndim - len(key))
    vecs = [_selected(k, n) for k, n in zip(key, x.shape)]
    if any(not v.any() for v in vecs):
        return x  # nothing selected
    mask = from_array(np.ones((), dtype=bool))
    for d, v in enumerate(vecs):
        if not v.all():
            mask = logical_and(mask, from_array(v.reshape([x.shape[d] if e == d else 1 for e in range(x.ndim)])))
    if isinstance(value, Array) and value.ndim:
        sel_shape = tuple(len(range(*k.indices(n))) for k, n in zip(key, x.shape) if isinstance(k, slice))
        v = broadcast_to(value, sel_shape) if value.shape != sel_shape else value
        for d, (k, n) in enumerate(zip(key, x.shape)):
            if not isinstance(k, slice):
                v = expand_dims(v, axis=d)
                pos = np.zeros(n, dtype=np.int64)
            else:
                r = range(*k.indices(n))
                if r == range(n):
                    continue
                pos = np.zeros(n, dtype=np.int64)
                pos[list(r)] = np.arange(len(r))
            v = take(v, pos, axis=d)
        value = v
    return _cast(where(mask, value, x), x)


def _cast(out, x):
    from ._functions import astype, broadcast_to
    if out.shape != x.shape:
        out = broadcast_to(out, x.shape)
    return out if out.dtype == x.dtype else astype(out, x.dtype)
