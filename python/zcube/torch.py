"""zcube.torch: WindowDataset, a torch IterableDataset over the window sampler.

    ds = WindowDataset(sources={"u": "era5.zarr/u"}, window=(4, 64, 64), batch=32, seed=0)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    for epoch in range(10):
        ds.set_epoch(epoch)
        for b in loader:
            b["u"]            # torch.Tensor (32, 4, 64, 64); b["u_origin"] (32, 3) int64

The batches of an epoch are split across DataLoader workers and distributed
ranks (rank, world_size; by default from torch.distributed when initialized)
without overlap: shard k = rank * workers + worker takes batches k, k + shards,
... Each batch is a pure function of (seed, epoch, batch number), so a run is
reproducible whatever the number of workers. The sampler is created in each
worker (after the fork). Inside a DataLoader worker a batch is read straight
into fresh tensors in shared memory, so handing it to the main process copies
nothing (torch's share_memory_() would copy every batch once more); elsewhere,
or for dtypes torch lacks, into NumPy arrays handed over through DLPack.
"""
import math

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from .loader import WindowSampler


def _torch_dtype(dtype):
    try:
        return torch.from_numpy(np.empty(0, dtype)).dtype
    except TypeError:  # e.g. uint16 before torch 2.3
        return None


def _shared_empty(shape, dtype):
    """An uninitialized tensor whose storage is in shared memory."""
    new = getattr(torch.UntypedStorage, "_new_shared", None)
    if new is None:
        return torch.empty(shape, dtype=dtype).share_memory_()
    nbytes = math.prod(shape) * torch.empty(0, dtype=dtype).element_size()
    return torch.empty(0, dtype=dtype).set_(new(nbytes)).view(shape)


class WindowDataset(IterableDataset):
    def __init__(self, sources, window, batch=32, seed=0, threads=1, rank=None, world_size=None, **sampler_kw):
        super().__init__()
        self._args = dict(sources=sources, window=window, batch=batch, seed=seed, threads=threads, prefetch=0,
                          **sampler_kw)
        self.epoch = 0
        self._rank, self._world = rank, world_size
        self._sampler = None
        self._pid = None

    def set_epoch(self, epoch):
        """Set before iterating (workers are started per iteration and see it)."""
        self.epoch = int(epoch)

    def _get_sampler(self):
        import os
        if self._sampler is None or self._pid != os.getpid():
            self._sampler = WindowSampler(**self._args)
            self._pid = os.getpid()
        return self._sampler

    def _rank_world(self):
        if self._rank is not None:
            return self._rank, self._world or 1
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            return torch.distributed.get_rank(), torch.distributed.get_world_size()
        return 0, 1

    def __len__(self):
        """Batches one rank sees per epoch (all its workers together)."""
        rank, world = self._rank_world()
        n = self._get_sampler().batches_per_epoch
        return len(range(rank, n, world))

    def shard_steps(self, epoch, rank, world, worker, workers):
        """The batch numbers (within the epoch) one worker of one rank reads."""
        n = self._get_sampler().batches_per_epoch
        shards = world * workers
        return range(rank * workers + worker, n, shards)

    def __iter__(self):
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        rank, world = self._rank_world()
        s = self._get_sampler()
        base = self.epoch * s.batches_per_epoch
        dtypes = [_torch_dtype(d) for d in s._dtypes]
        shared = info is not None and None not in dtypes
        for b in self.shard_steps(self.epoch, rank, world, worker, workers):
            out = {"step": base + b, "epoch": self.epoch}
            if shared:
                data = [_shared_empty(shape, dt) for shape, dt in zip(s._shapes, dtypes)]
                origins = [_shared_empty((shape[0], len(shape) - 1), torch.int64) for shape in s._shapes]
                s.read(base + b, out=([t.numpy() for t in data], [o.numpy() for o in origins]))
            else:
                batch = s.read(base + b)
                data = [torch.from_dlpack(batch.data[name]) for name in s.names]
                origins = [torch.from_dlpack(batch.origins[name]) for name in s.names]
            for name, t, o in zip(s.names, data, origins):
                out[name], out[name + "_origin"] = t, o
            yield out
