"""An xarray backend: xr.open_dataset(path, engine="zcube") (registered through
the `xarray.backends` entry point when pip-installed; or pass the class,
engine=ZcubeBackendEntrypoint). Opens Zarr stores written by xarray (v2 with
_ARRAY_DIMENSIONS, v3 with dimension_names; consolidated metadata is read by
the library); CF decoding is left to xarray. Variables are lazy: indexing one
reads only the chunks of that region, through zcube's parallel decoder."""
import json
import os

import numpy as np
from xarray import Dataset, Variable, conventions
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from . import _zcube
from ._io import Group, StoredArray, _store

DIMENSION_KEY = "_ARRAY_DIMENSIONS"


class ZcubeBackendArray(BackendArray):
    """One stored array; basic indexing reads just the selected region."""

    def __init__(self, array):
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._raw)

    def _raw(self, key):
        sel, flips, drop = [], [], []
        for d, (k, n) in enumerate(zip(key, self.shape)):
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                if step < 0:  # read the same elements in ascending order, then reverse
                    r = range(start, stop, step)
                    start, stop, step = (r[-1], r[0] + 1, -step) if len(r) else (0, 0, 1)
                    flips.append(d)
                sel.append(slice(start, max(start, stop), step))
            else:
                sel.append(int(k))
                drop.append(d)
        out = self.array.read(tuple(sel)) if self.array.ndim else self.array.read()
        if flips:
            out = np.flip(out, axis=tuple(flips))
        return out.reshape(tuple(s for d, s in enumerate(out.shape) if d not in drop)) if drop else out


def _fill_value(v):
    if isinstance(v, str):
        return {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}.get(v, v)
    return v


def _group_attrs(url, path):
    """A group's attributes, read from its metadata files (.zattrs or zarr.json)."""
    base = os.path.join(url, path) if path else url
    for name, pick in ((".zattrs", lambda d: d), ("zarr.json", lambda d: d.get("attributes", {}))):
        p = os.path.join(base, name)
        if os.path.isfile(p):
            with open(p) as f:
                return dict(pick(json.load(f)))
    return {}


def _variable(name, arr):
    meta = arr.metadata
    attrs = dict(meta.get("attributes") or {})
    dims = attrs.pop(DIMENSION_KEY, None) or meta.get("dimension_names")
    if dims is None or len(dims) != arr.ndim or any(d is None for d in dims):
        raise ValueError(f"zcube engine: array {name!r} names no dimensions ({DIMENSION_KEY} or "
                         f"dimension_names): not a store written by xarray")
    fill = meta.get("fill_value")
    if fill is not None:
        attrs["_FillValue"] = _fill_value(fill)
    encoding = {"chunks": arr.chunksize, "preferred_chunks": dict(zip(dims, arr.chunksize))}
    return Variable(tuple(dims), indexing.LazilyIndexedArray(ZcubeBackendArray(arr)), attrs, encoding)


class ZcubeBackendEntrypoint(BackendEntrypoint):
    description = "Open Zarr stores (v2, v3, sharded) with zcube"
    url = "https://zarr.dev"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "group", "mask_and_scale", "decode_times",
                               "concat_characters", "decode_coords", "use_cftime", "decode_timedelta")

    def open_dataset(self, filename_or_obj, *, drop_variables=None, group=None, mask_and_scale=True,
                     decode_times=True, concat_characters=True, decode_coords=True, use_cftime=None,
                     decode_timedelta=None):
        url = os.fspath(filename_or_obj)
        path = (group or "").strip("/")
        store = _store(url, "r")
        kind, _ = _zcube.node_kind_at(store, path)
        if kind == 2:
            raise ValueError(f"zcube engine: {url}:{path or '/'} is an array, not a group (a dataset)")
        g = Group(store, url, path)
        variables = {name: _variable(name, arr) for name, arr in g.arrays().items()}
        attrs = _group_attrs(url, path)
        variables, attrs, coord_names = conventions.decode_cf_variables(
            variables, attrs, concat_characters=concat_characters, mask_and_scale=mask_and_scale,
            decode_times=decode_times, decode_coords=decode_coords, drop_variables=drop_variables,
            use_cftime=use_cftime, decode_timedelta=decode_timedelta)
        ds = Dataset(variables, attrs=attrs)
        ds = ds.set_coords(coord_names.intersection(variables))
        ds.set_close(lambda: None)
        return ds

    def guess_can_open(self, filename_or_obj):
        try:
            p = os.fspath(filename_or_obj)
        except TypeError:
            return False
        return os.path.isdir(p) and any(os.path.exists(os.path.join(p, f)) for f in (".zgroup", "zarr.json"))


__all__ = ["ZcubeBackendArray", "ZcubeBackendEntrypoint", "StoredArray"]
