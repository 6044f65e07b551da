"""zcube: out-of-core arrays stored as Zarr, computed under a memory bound.

    import zcube as zc
    u = zc.open("era5.zarr", "u")               # a lazy array over a stored one
    m = zc.mean(u ** 2, axis=0)                  # the array API, lazily
    print(m.plan())                              # operations, tasks, memory per task
    out = m.compute(spec=zc.Spec(allowed_mem="500MB"))   # a NumPy array

This namespace is also an array API namespace (x.__array_namespace__()).
"""
import math as _math

import numpy as _np

from . import _errors, _zcube  # noqa: F401 (registers the exception classes)
from ._array import Array
from ._compute import compute_numpy as _compute_numpy
from ._compute import plan as _plan
from ._dtypes import (bool, can_cast, complex64, complex128, finfo, float16, float32, float64, iinfo, int8,  # noqa: A004
                      int16, int32, int64, isdtype, uint8, uint16, uint32, uint64)
from ._errors import *  # noqa: F401,F403
from ._functions import *  # noqa: F401,F403
from ._functions import __all__ as _fn_all
from ._io import Group, StoredArray, from_array, from_zarr, open, store, to_zarr  # noqa: A004
from ._progress import Callback, ProgressBar
from ._report import OperationReport, Plan, Report
from ._spec import Spec, get_spec, set_spec, using_spec
from . import fft, linalg, random  # noqa: E402

__version__ = _zcube.version()
__array_api_version__ = "2024.12"

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None


def compute(*arrays, spec=None, callbacks=None):
    """Compute several arrays in one plan (shared inputs read once); a tuple of NumPy arrays."""
    outs, _ = _compute_numpy(arrays, spec, callbacks)
    return tuple(outs)


def plan(*arrays, spec=None):
    """The plan computing these arrays together (a zcube.Plan)."""
    return _plan(arrays, spec)


def last_report():
    """The Report of the last compute in this process (None before the first)."""
    from . import _compute
    return _compute.last_report


def visualize(*arrays, filename="plan.svg", spec=None):
    return _plan(arrays, spec).visualize(filename)


class _Info:
    """__array_namespace_info__(): the array API's inspection object."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 32}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        return {"real floating": float64, "complex floating": complex128, "integral": int64, "indexing": int64}

    def dtypes(self, *, device=None, kind=None):
        all_ = {str(d): d for d in (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32,
                                    float64, complex64, complex128)}
        if kind is None:
            return all_
        return {k: d for k, d in all_.items() if isdtype(d, kind)}


def __array_namespace_info__():
    return _Info()


_ = (_np, _fn_all)
