"""zc.Array: a lazy array, a node of a plan. Its shape, dtype and chunks are
known at once; nothing is read or computed until compute() (or np.asarray)."""
import numpy as np

from . import _compute, _dtypes, _zcube


class Array:
    """A lazy zcube array. Build with the functions of `zcube` (open, from_array,
    zeros, ...); compute with .compute() (a NumPy array), .to_zarr(), or
    zc.compute(*arrays)."""

    __array_priority__ = 100  # NumPy defers binary operators to us

    def __init__(self, node, deps=(), op="array"):
        self._node = node
        self._deps = tuple(deps)  # keeps inputs (and their stores) alive
        self._op = op
        self._spec = next((d._spec for d in self._deps if isinstance(d, Array) and d._spec), None)
        shape, chunks, dt = node.info()
        self._shape, self._chunksize, self._dtype = shape, chunks, _dtypes.from_code(dt)

    # ---- metadata
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def nbytes(self):
        return self.size * self._dtype.itemsize

    @property
    def chunksize(self):
        """The chunk shape (ints)."""
        return self._chunksize

    @property
    def chunks(self):
        """Chunk sizes along each dimension, Dask style: ((c, c, ..., rest), ...)."""
        out = []
        for s, c in zip(self._shape, self._chunksize):
            c = max(c, 1)
            n, r = divmod(s, c)
            out.append((c,) * n + ((r,) if r else ()))
        return tuple(out)

    @property
    def numblocks(self):
        return tuple(len(c) for c in self.chunks)

    @property
    def device(self):
        return "cpu"

    def to_device(self, device, /, *, stream=None):
        if device != "cpu":
            raise ValueError(f"zcube arrays live on the cpu, not {device!r}")
        return self

    @property
    def T(self):
        if self.ndim != 2:
            raise ValueError(f".T needs a 2-D array, this one is {self.ndim}-D (use .mT or permute_dims)")
        return self.mT

    @property
    def mT(self):
        return _wrap(_zcube.int_op("matrix_transpose", self._node), self, op="matrix_transpose")

    def __repr__(self):
        return (f"zcube.Array<{self._op}, shape={self._shape}, dtype={self._dtype}, "
                f"chunksize={self._chunksize}>")

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    # ---- computing
    def compute(self, spec=None, callbacks=None):
        """The values as a NumPy array (the plan runs under spec's memory bound)."""
        (out,), _ = _compute.compute_numpy([self], spec, callbacks)
        return out

    def plan(self, spec=None):
        """The optimized plan (zcube.Plan): str() a table, .json, _repr_svg_, visualize(path)."""
        return _compute.plan([self], spec)

    def visualize(self, path, spec=None):
        return self.plan(spec).visualize(path)

    def to_zarr(self, url, path="", *, codec=None, zarr_format=3, spec=None, callbacks=None, overwrite=False):
        """Compute into a Zarr array at url (a folder, created if needed) / path; returns it opened.
        An array or group already there is replaced only with overwrite=True."""
        from ._io import to_zarr
        return to_zarr(self, url, path, codec=codec, zarr_format=zarr_format, spec=spec, callbacks=callbacks,
                       overwrite=overwrite)

    store = to_zarr

    def __array__(self, dtype=None):
        out = self.compute()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack capsule of the computed values (a new NumPy array; stream unused on the CPU)."""
        if dl_device not in (None, (1, 0)):
            raise BufferError(f"zcube arrays are on the CPU, not {dl_device}")
        return self.compute().__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __array_namespace__(self, /, *, api_version=None):
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported array API version {api_version!r}")
        import zcube
        return zcube

    def _scalar(self, kind):
        if self.ndim != 0 and self.size != 1:
            raise TypeError(f"{kind}() of an array of shape {self._shape} (needs one element)")
        return self.compute().reshape(())[()]

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"the truth value of an array of shape {self._shape} is ambiguous")
        return bool(self._scalar("bool"))

    def __float__(self):
        if self._dtype.kind == "c":
            raise TypeError("float() of a complex array")
        return float(self._scalar("float"))

    def __int__(self):
        if self._dtype.kind in "fc":
            v = self._scalar("int")
            if self._dtype.kind == "c":
                raise TypeError("int() of a complex array")
            return int(v)
        return int(self._scalar("int"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __index__(self):
        if self._dtype.kind not in "iu":
            raise TypeError(f"__index__ of a {self._dtype} array")
        return int(self._scalar("index"))

    # ---- indexing
    def __getitem__(self, key):
        from ._index import getitem
        return getitem(self, key)

    def __setitem__(self, key, value):
        """x[key] = value for a scalar (or 0-d) value: x becomes where(mask, value, x),
        lazily (the array API's in-place update, on a new node)."""
        from ._index import setitem
        new = setitem(self, key, value)
        self._node, self._deps, self._op = new._node, new._deps, "setitem"

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    # ---- methods that mirror functions
    def astype(self, dtype, copy=True):
        from ._functions import astype
        return astype(self, dtype, copy=copy)

    def rechunk(self, chunks):
        from ._functions import rechunk
        return rechunk(self, chunks)

    def reshape(self, *shape):
        from ._functions import reshape
        return reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    def sum(self, axis=None, keepdims=False):
        from ._functions import sum
        return sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        from ._functions import mean
        return mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        from ._functions import max
        return max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        from ._functions import min
        return min(self, axis=axis, keepdims=keepdims)


def _wrap(node, *deps, op=""):
    return Array(node, deps, op=op)


def _operand(x, like):
    """x as an Array for combining with `like`: Python scalars are weak (they take
    like's dtype), NumPy arrays and scalars become arrays of their own."""
    if isinstance(x, Array):
        return x
    if isinstance(x, builtins_bool):
        if like is not None and like.dtype == _dtypes.bool:
            return Array(_zcube.full((), None, _dtypes.code(_dtypes.bool), float(x)), op="scalar")
        return Array(_zcube.scalar(float(x), True), op="scalar")
    if isinstance(x, int):
        if like is not None and like.dtype.kind in "iu":
            info = np.iinfo(like.dtype)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} does not fit the array's {like.dtype}")
        if like is not None and like.dtype == _dtypes.bool:
            raise TypeError("cannot combine a bool array with a Python int")
        return Array(_zcube.scalar(float(x), True), op="scalar")
    if isinstance(x, float):
        if like is not None and like.dtype.kind in "biu":
            raise TypeError(f"cannot combine a {like.dtype} array with a Python float")
        return Array(_zcube.scalar(x, False), op="scalar")
    if isinstance(x, complex):
        dt = like.dtype if like is not None and like.dtype.kind == "c" else _dtypes.complex128
        if like is not None and like.dtype.kind != "c" and like.dtype.kind != "f":
            raise TypeError(f"cannot combine a {like.dtype} array with a Python complex")
        if like is not None and like.dtype == _dtypes.float32:
            dt = _dtypes.complex64
        from ._io import from_array
        return from_array(np.asarray(x, dtype=dt))
    if isinstance(x, (np.ndarray, np.generic)):
        from ._io import from_array
        return from_array(np.asarray(x))
    return NotImplemented


builtins_bool = bool


def _binary(name, reflected=False):
    def op(self, other):
        o = _operand(other, self)
        if o is NotImplemented:
            return NotImplemented
        a, b = (o, self) if reflected else (self, o)
        return _wrap(_zcube.elementwise(name, a._node, b._node), a, b, op=name)
    op.__name__ = f"__{'r' if reflected else ''}{name}__"
    return op


def _unary(name):
    def op(self):
        return _wrap(_zcube.elementwise(name, self._node), self, op=name)
    return op


_BINOPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
           "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
           "rshift": "bitwise_right_shift"}
for _py, _api in _BINOPS.items():
    setattr(Array, f"__{_py}__", _binary(_api))
    setattr(Array, f"__r{_py}__", _binary(_api, reflected=True))
    setattr(Array, f"__i{_py}__", _binary(_api))
for _py, _api in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                  "eq": "equal", "ne": "not_equal"}.items():
    setattr(Array, f"__{_py}__", _binary(_api))
Array.__hash__ = None
Array.__neg__ = _unary("negative")
Array.__pos__ = _unary("positive")
Array.__abs__ = _unary("abs")


def _invert(self):
    return _wrap(_zcube.elementwise("logical_not" if self.dtype == _dtypes.bool else "bitwise_invert",
                                    self._node), self, op="invert")


Array.__invert__ = _invert


def _matmul(self, other):
    if not isinstance(other, Array):
        if isinstance(other, np.ndarray):
            from ._io import from_array
            other = from_array(other)
        else:
            return NotImplemented
    return _wrap(_zcube.binary("matmul", self._node, other._node), self, other, op="matmul")


def _rmatmul(self, other):
    if isinstance(other, np.ndarray):
        from ._io import from_array
        return _matmul(from_array(other), self)
    return NotImplemented


Array.__matmul__ = _matmul
Array.__rmatmul__ = _rmatmul
Array.__imatmul__ = _matmul
del _py, _api
