"""Stored arrays: open (arrays and groups, v2/v3, sharded), from_zarr,
from_array / asarray, to_zarr."""
import json
import os

import numpy as np

from . import _compute, _dtypes, _zcube
from ._array import Array

READONLY, CREATE = 1, 2


def _url(url):
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        raise TypeError(f"a store URL or path is a str or os.PathLike, not {type(url).__name__}")
    return url


def _store(url, mode):
    if mode not in ("r", "r+", "a", "w"):
        raise ValueError(f"mode {mode!r}: expected 'r', 'r+', 'a' or 'w'")
    return _zcube.Store(_url(url), READONLY if mode == "r" else (0 if mode == "r+" else CREATE))


class StoredArray(Array):
    """An Array read from a Zarr array: also `attrs`, `metadata`, `zarr_format`,
    `url` and `path`, and `read(selection)` for a direct hyperslab read."""

    def __init__(self, store, url, path):
        super().__init__(_zcube.from_zarr(store, path), (store,), op=f"zarr:{path or '/'}")
        self._store, self.url, self.path = store, url, path
        self._zarr = _zcube.zarr_open(store, path)

    @property
    def metadata(self):
        return json.loads(self._zarr.metadata_json())

    @property
    def attrs(self):
        return self.metadata.get("attributes") or {}

    @property
    def zarr_format(self):
        return self._zarr.info()["zarr_format"]

    @property
    def dimension_names(self):
        return self.metadata.get("dimension_names")

    def read(self, selection=None):
        """Read a hyperslab now (a tuple of slices with positive steps, or None) into NumPy."""
        if selection is None:
            sel = [(0, s, 1) for s in self.shape]
        else:
            if not isinstance(selection, tuple):
                selection = (selection,)
            selection = selection + (slice(None),) * (self.ndim - len(selection))
            sel = []
            for k, n in zip(selection, self.shape):
                if isinstance(k, slice):
                    start, stop, step = k.indices(n)
                    if step < 0:
                        raise ValueError("read: steps must be positive (index the Array for negative steps)")
                    sel.append((start, max(start, stop), step))
                else:
                    i = int(k) + (n if int(k) < 0 else 0)
                    sel.append((i, i + 1, 1))
        shape = tuple(max(0, -(-(b - a) // c)) for a, b, c in sel)
        out = np.empty(shape, dtype=self.dtype)
        if out.size:
            self._zarr.read(sel, memoryview(out.reshape(-1)).cast("B"))
        return out


class Group:
    """A Zarr group: a mapping of member names to StoredArrays and Groups."""

    def __init__(self, store, url, path):
        self._store, self.url, self.path = store, url, path

    def _members(self):
        base = self.path.strip("/")
        out = {}
        for p, kind, _ in _zcube.group_walk(self._store, self.path):
            rel = p.strip("/")
            if base:
                if not rel.startswith(base + "/"):
                    continue
                rel = rel[len(base) + 1:]
            if rel and "/" not in rel:
                out[rel] = kind
        return out

    def __iter__(self):
        return iter(sorted(self._members()))

    def __len__(self):
        return len(self._members())

    def __contains__(self, name):
        return name in self._members()

    def keys(self):
        return list(self)

    def __getitem__(self, name):
        members = self._members()
        if name not in members:
            raise KeyError(name)
        full = f"{self.path.strip('/')}/{name}".strip("/")
        return StoredArray(self._store, self.url, full) if members[name] == 2 else Group(self._store, self.url, full)

    def arrays(self):
        return {k: self[k] for k, kind in sorted(self._members().items()) if kind == 2}

    def __repr__(self):
        return f"<zcube.Group {self.url!s}:{self.path or '/'} members={sorted(self._members())}>"


def open(url, path="", mode="r"):  # noqa: A001 (zc.open)
    """Open the array or group at url (a folder, file://, memory://, s3:// or http(s)://) / path."""
    url = _url(url)
    store = _store(url, mode)
    kind, _ = _zcube.node_kind_at(store, path)
    if kind == 2:
        return StoredArray(store, url, path)
    if kind == 1:
        return Group(store, url, path)
    from ._errors import NotFoundError
    raise NotFoundError(f"{url}: no Zarr array or group at '{path}'", -4, "ZC_ENOENT")


def from_zarr(url, path=""):
    """A lazy array over the stored array at url / path (read only)."""
    a = open(url, path)
    if not isinstance(a, Array):
        raise TypeError(f"{url}:{path or '/'} is a group; name an array in it")
    return a


def _norm_chunks(chunks, shape):
    """None for the library's choice; else one chunk length per dimension:
    an int for all, or per dimension an int, -1 / None (the whole
    dimension) or Dask's tuple of block sizes (the first is taken)."""
    if chunks is None or chunks == "auto":
        return None
    if isinstance(chunks, (int, np.integer)):
        if chunks < 1:
            raise ValueError(f"chunks {chunks} is not a chunk length (a positive integer)")
        return tuple(min(int(chunks), s) if s else 1 for s in shape)
    chunks = tuple(chunks)
    if len(chunks) != len(shape):
        raise ValueError(f"chunks {chunks} has {len(chunks)} entries for shape {shape}")
    out = []
    for c, s in zip(chunks, shape):
        if isinstance(c, tuple):  # Dask style: take the first block size
            c = c[0] if c else s
        if c is None or c == -1 or (c == 0 and s == 0):  # (an empty dimension's length is whole too)
            c = s
        elif not isinstance(c, (int, np.integer)) or c < 1:
            raise ValueError(f"chunks {chunks}: {c!r} is not a chunk length (a positive integer, or -1 / None "
                             f"for the whole dimension)")
        out.append(max(1, int(c)))
    return tuple(out)


def from_array(x, chunks=None):
    """A lazy array holding a copy of a NumPy array (or anything np.asarray takes)."""
    if isinstance(x, Array):
        return x if chunks is None else x.rechunk(chunks)
    a = np.asarray(x)
    if a.dtype.byteorder not in "=|":
        a = a.astype(a.dtype.newbyteorder("="))
    a = np.require(a, requirements="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    c = _norm_chunks(chunks, a.shape)
    buf = memoryview(a.reshape(-1)).cast("B") if a.size else b""
    return Array(_zcube.asarray(buf, _dtypes.code(a.dtype), a.shape, c), op="from_array")


def _target_store(url, path, overwrite):
    """The store to write url / path into; an array or group already there is
    refused unless overwrite (as zarr-python, Dask, Cubed and xarray do)."""
    s = _store(url, "a")
    if not overwrite:
        kind, fmt = _zcube.node_kind_at(s, path)
        if kind:
            from ._errors import AlreadyExistsError
            raise AlreadyExistsError(f"{url}: '{path or '/'}' already holds a Zarr v{fmt} "
                                     f"{'array' if kind == 2 else 'group'}; pass overwrite=True to replace it",
                                     -10, "ZC_EEXIST")
    return s


def to_zarr(x, url, path="", *, codec=None, zarr_format=3, spec=None, callbacks=None, overwrite=False):
    """Compute x into the Zarr array url / path (the folder is created if needed;
    an array or group already there is replaced only with overwrite=True)."""
    url = _url(url)
    store = _target_store(url, path, overwrite)
    _compute.compute_store([x], [(store, path, codec, zarr_format)], spec, callbacks)
    return StoredArray(store, url, path)


def store(sources, targets, *, spec=None, callbacks=None, codec=None, zarr_format=3, overwrite=False):
    """Compute several arrays into (url, path) targets in one plan (work shared)."""
    stores, tg = [], []
    for url, path in targets:
        s = _target_store(_url(url), path, overwrite)
        stores.append(s)
        tg.append((s, path, codec, zarr_format))
    _compute.compute_store(list(sources), tg, spec, callbacks)
    return [StoredArray(s, _url(u), p) for s, (u, p) in zip(stores, targets)]
