"""zcube.loader: random windows (crops) from several Zarr arrays, batched for
ML training (zc_sampler_*).

    s = WindowSampler(sources={"u": "era5.zarr/u", "v": ("era5.zarr", "v")},
                      window=(4, 64, 64), batch=32, seed=42, threads=4, prefetch=2)
    for b in s:                   # one epoch
        b.data["u"]               # (32, 4, 64, 64) NumPy view of the library's buffer,
        b.origins["u"]            # valid until the next batch (copy=True: owned arrays)
    s.set_epoch(1)
    s.batch(17)                   # random access: batch 17 of the current epoch (owned)

Batch b of epoch e for a seed is a pure function of (seed, e, b), so runs are
reproducible and training can resume anywhere. Sources sharing a dimension
name (dimension_names, or dims=) see the same index along it.
"""
import os
from collections import namedtuple

import numpy as np

from . import _zcube
from ._io import StoredArray, _store

Batch = namedtuple("Batch", ["step", "epoch", "data", "origins", "rejected"])


def _open_source(spec):
    """A zc_zarr handle (and its store) from a path "folder[/inner/path]", (url, path) or a StoredArray."""
    if isinstance(spec, StoredArray):
        return spec._zarr, spec.shape, spec.dtype
    if isinstance(spec, tuple):
        url, path = spec
    else:
        url, path = os.fspath(spec), ""
        # "store.zarr/u": the array u inside the store folder store.zarr
        head, tail = url, ""
        while head and not os.path.isdir(head):
            head, t = os.path.split(head)
            tail = f"{t}/{tail}".strip("/")
        if head and tail:
            url, path = head, tail
    st = _store(url, "r")
    z = _zcube.zarr_open(st, path)
    info = z.info()
    from ._dtypes import from_code
    return z, info["shape"], from_code(info["dtype"])


def _per_source(v, name, what, ndim):
    if v is None:
        return None
    if isinstance(v, dict):
        v = v.get(name)
        if v is None:
            return None
    v = tuple(int(x) for x in v)
    if len(v) != ndim:
        raise ValueError(f"{what} for source {name!r}: {len(v)} entries for its {ndim} dimensions")
    return v


class WindowSampler:
    """Random (or grid) windows from the arrays in `sources` (name -> path,
    (url, path) or zc.open() array).

    window   a shape for every source, or {name: shape}
    batch    windows per batch;  seed  the shuffle's key;  mode  "random" or "grid"
    threads  reading threads (0 = all cores);  prefetch  batches read ahead
    copy     False: iteration yields views of the library's buffers, yours
             until the next batch (writable: torch.from_dlpack takes them
             without a copy); True: owned arrays
    dims, offset, jitter, overlap   optional, a tuple per source or {name: tuple}
    reject_nan, reject_fill, max_redraws   redraw windows with NaN / fill values
    """

    def __init__(self, sources, window, batch=32, seed=0, threads=0, prefetch=2, mode="random", copy=False,
                 dims=None, offset=None, jitter=None, overlap=None, reject_nan=False, reject_fill=False,
                 max_redraws=0):
        if mode not in ("random", "grid"):
            raise ValueError(f"mode {mode!r}: expected 'random' or 'grid'")
        if not sources:
            raise ValueError("sources: give at least one array")
        self.batch_size, self.seed, self.copy = int(batch), int(seed), bool(copy)
        self._s = _zcube.Sampler(seed=self.seed, batch_size=self.batch_size, grid=mode == "grid",
                                 threads=int(threads), prefetch=int(prefetch), reject_nan=bool(reject_nan),
                                 reject_fill=bool(reject_fill), max_redraws=int(max_redraws))
        self.names, self._shapes, self._dtypes = [], [], []
        self._keep = []
        for name, spec in sources.items():
            z, shape, dtype = _open_source(spec)
            ndim = len(shape)
            win = _per_source(window, name, "window", ndim)
            if win is None:
                raise ValueError(f"window: none given for source {name!r}")
            d = dims.get(name) if isinstance(dims, dict) else dims
            self._s.add_source(z, name, win, None if d is None else [str(x) for x in d],
                               _per_source(offset, name, "offset", ndim), _per_source(jitter, name, "jitter", ndim),
                               _per_source(overlap, name, "overlap", ndim))
            self._keep.append(z)
            self.names.append(name)
            self._shapes.append((self.batch_size,) + win)
            self._dtypes.append(dtype)
        self.windows_per_epoch, self.batches_per_epoch = self._s.epoch_size()
        self.epoch = 0
        self._s.seek(0)

    def __len__(self):
        """Batches per epoch (the last partial batch is dropped)."""
        return self.batches_per_epoch

    def set_epoch(self, epoch):
        """Iteration continues at the first batch of `epoch`."""
        self.epoch = int(epoch)
        self._s.seek(self.epoch * self.batches_per_epoch)

    def _new_buffers(self):
        data = [np.empty(s, dtype=d) for s, d in zip(self._shapes, self._dtypes)]
        origins = [np.empty((self.batch_size, len(s) - 1), dtype=np.int64) for s in self._shapes]
        return data, origins

    def read(self, step, out=None):
        """Batch number `step` (counted across epochs) into owned arrays (or `out`,
        a (data, origins) pair of lists as _new_buffers makes). Thread-safe."""
        data, origins = out or self._new_buffers()
        self._s.read(int(step), data, origins)
        return Batch(int(step), int(step) // max(self.batches_per_epoch, 1), dict(zip(self.names, data)),
                     dict(zip(self.names, origins)), 0)

    def batch(self, b):
        """Batch b of the current epoch, in owned arrays (random access)."""
        if not 0 <= b < self.batches_per_epoch:
            raise IndexError(f"batch {b} outside the epoch's {self.batches_per_epoch} batches")
        return self.read(self.epoch * self.batches_per_epoch + b)

    def __next__(self):
        step, epoch, data, origins, rejected = self._s.next()
        arrays, orig = {}, {}
        for name, mv, om, shape, dt in zip(self.names, data, origins, self._shapes, self._dtypes):
            a = np.frombuffer(mv, dtype=dt).reshape(shape)
            o = np.frombuffer(om, dtype=np.int64).reshape(shape[0], len(shape) - 1)
            arrays[name], orig[name] = (a.copy(), o.copy()) if self.copy else (a, o)
        return Batch(step, epoch, arrays, orig, rejected)

    def __iter__(self):
        """The rest of the current epoch, then the epoch counter moves on."""
        start = self.epoch * self.batches_per_epoch
        self._s.seek(start)
        for _ in range(self.batches_per_epoch):
            yield next(self)
        self.epoch += 1

    def stats(self):
        return self._s.stats()
