"""Exceptions: one class per library error code, all subclasses of ZcubeError.

The library's message (what failed and where) is the exception's text; the
code and its name are attributes. Some classes parse extra fields out of the
message: MemoryBoundError the projected and allowed memory, CorruptChunkError
the chunk key and array path.
"""
import re

from . import _zcube

__all__ = [
    "ZcubeError", "InvalidArgumentError", "OutOfMemoryError", "StoreIOError", "NotFoundError",
    "FormatError", "CorruptChunkError", "ChecksumError", "UnsupportedError", "SelectionError",
    "SizeOverflowError", "AlreadyExistsError", "CanceledError", "MemoryBoundError", "InternalError",
]


class ZcubeError(Exception):
    """A failure reported by the zcube library: `code` (negative int), `errname`, the message."""

    code = None
    errname = None

    def __init__(self, message, code=None, errname=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if errname is not None:
            self.errname = errname


class InvalidArgumentError(ZcubeError, ValueError):
    """ZC_EINVAL: a bad argument (named in the message)."""


class OutOfMemoryError(ZcubeError, MemoryError):
    """ZC_ENOMEM."""


class StoreIOError(ZcubeError, OSError):
    """ZC_EIO: reading or writing a store failed."""


class NotFoundError(ZcubeError, FileNotFoundError):
    """ZC_ENOENT: no array, group or store there."""


class FormatError(ZcubeError, ValueError):
    """ZC_EFORMAT: malformed metadata (the field named)."""


_KEY = re.compile(r"(?:chunk|shard) '([^']*)'")
_ARRAY = re.compile(r"array '([^']*)'")


class CorruptChunkError(ZcubeError):
    """ZC_ECORRUPT: a stored chunk does not decode. `key` is its chunk (or shard)
    key, `array` the array's path, when the message names them."""

    def __init__(self, message, code=None, errname=None):
        super().__init__(message, code, errname)
        m = _KEY.search(message)
        self.key = m.group(1) if m else None
        m = _ARRAY.search(message)
        self.array = m.group(1) if m else None


class ChecksumError(CorruptChunkError):
    """ZC_ECHECKSUM: a chunk's checksum does not match."""


class UnsupportedError(ZcubeError, NotImplementedError):
    """ZC_EUNSUPPORTED: a dtype, codec or feature zcube does not support."""


class SelectionError(ZcubeError, IndexError):
    """ZC_ERANGE: a selection outside the array."""


class SizeOverflowError(ZcubeError, OverflowError):
    """ZC_EOVERFLOW."""


class AlreadyExistsError(ZcubeError, FileExistsError):
    """ZC_EEXIST."""


class CanceledError(ZcubeError):
    """ZC_ECANCELED: a compute stopped by a callback or a cancel token."""


_UNITS = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
          "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}
_NUM = r"([0-9.]+) ?([KMGT]?i?B|kB)"
_OP = re.compile(r"needs " + _NUM + r" per task, more than the " + _NUM + r" allowed")
_RECHUNK = re.compile(r"needs " + _NUM + r" per task at best, allowed " + _NUM)
_FITS = re.compile(r"the smallest allowed_mem this plan fits is " + _NUM)


def _bytes(num, unit):
    return int(round(float(num) * _UNITS.get(unit, 1)))


class MemoryBoundError(ZcubeError, MemoryError):
    """ZC_EMEMBOUND: the plan was refused before any work because a task would
    need more memory than allowed. `projected` and `allowed` are bytes per task,
    exact from the library (zc_errmem) for a refused plan; `allowed` is
    allowed_mem - reserved_mem, the part tasks may use. `fits` is the smallest
    allowed_mem (bytes) with which the same computation is planned, found by
    the library to within 1% (zc_errmem_fit), or None when no bound fits.
    Without the library's figures (an error raised from a message alone) they
    are read from the message, rounded to its printed precision (0.1 MB), or
    None."""

    def __init__(self, message, code=None, errname=None, projected=None, allowed=None, fits=None):
        super().__init__(message, code, errname)
        m = _OP.search(message) or _RECHUNK.search(message)
        self.projected = projected if projected is not None else _bytes(*m.group(1, 2)) if m else None
        self.allowed = allowed if allowed is not None else _bytes(*m.group(3, 4)) if m else None
        f = _FITS.search(message)
        self.fits = fits if fits else _bytes(*f.group(1, 2)) if f else None


class InternalError(ZcubeError):
    """ZC_EINTERNAL."""


_BY_NAME = {
    "ZC_EINVAL": InvalidArgumentError, "ZC_ENOMEM": OutOfMemoryError, "ZC_EIO": StoreIOError,
    "ZC_ENOENT": NotFoundError, "ZC_EFORMAT": FormatError, "ZC_ECORRUPT": CorruptChunkError,
    "ZC_EUNSUPPORTED": UnsupportedError, "ZC_ERANGE": SelectionError, "ZC_EOVERFLOW": SizeOverflowError,
    "ZC_EEXIST": AlreadyExistsError, "ZC_ECHECKSUM": ChecksumError, "ZC_ECANCELED": CanceledError,
    "ZC_EMEMBOUND": MemoryBoundError, "ZC_EINTERNAL": InternalError,
}


def _make(code, errname, message, projected=None, allowed=None, fits=None):
    if projected is not None:
        return MemoryBoundError(message, code, errname, projected, allowed, fits)
    return _BY_NAME.get(errname, ZcubeError)(message, code, errname)


_zcube._set_error_factory(_make)
