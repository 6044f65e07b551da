"""NumPy dtypes <-> the library's dtype codes, and the array API's dtype functions."""
import numpy as np

from . import _zcube

bool = np.dtype("bool")  # noqa: A001 (the array API's name)
int8, int16, int32, int64 = (np.dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (np.dtype(n) for n in ("float16", "float32", "float64"))
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

_NUMERIC = [bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
            complex64, complex128]
_TO_CODE = {dt: _zcube.dtype_parse(dt.name)[0] for dt in _NUMERIC}
_FROM_CODE = {c: dt for dt, c in _TO_CODE.items()}


def code(dtype):
    """The library's code of a NumPy-compatible dtype (TypeError if zcube lacks it)."""
    dt = np.dtype(dtype)
    try:
        return _TO_CODE[dt.newbyteorder("=") if dt.byteorder not in "=|" else dt]
    except KeyError:
        raise TypeError(f"zcube does not compute on dtype {dt}") from None


def from_code(c):
    return _FROM_CODE[c]


def result_type(*arrays_and_dtypes):
    codes = [code(getattr(x, "dtype", x)) for x in arrays_and_dtypes]
    if not codes:
        raise ValueError("result_type needs at least one array or dtype")
    return from_code(_zcube.result_type(codes))


def can_cast(from_, to, /):
    return _zcube.can_cast(code(getattr(from_, "dtype", from_)), code(to))


class finfo_object:
    def __init__(self, d):
        self.bits, self.eps, self.max, self.min = d["bits"], d["eps"], d["max"], d["min"]
        self.smallest_normal = d["smallest_normal"]
        self.dtype = from_code(d["dtype"])

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


class iinfo_object:
    def __init__(self, d):
        self.bits, self.min, self.max, self.dtype = d["bits"], d["min"], d["max"], from_code(d["dtype"])

    def __repr__(self):
        return f"iinfo(bits={self.bits}, min={self.min}, max={self.max}, dtype={self.dtype})"


def finfo(type, /):  # noqa: A002
    return finfo_object(_zcube.finfo(code(getattr(type, "dtype", type))))


def iinfo(type, /):  # noqa: A002
    return iinfo_object(_zcube.iinfo(code(getattr(type, "dtype", type))))


_KINDS = {
    "bool": lambda d: d == bool,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind):
    dt = np.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}")
        return _KINDS[kind](dt)
    return dt == np.dtype(kind)
