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
worker (after the fork); batches are read into fresh NumPy arrays and handed to
torch through DLPack (no copy).
"""
import torch
from torch.utils.data import IterableDataset, get_worker_info

from .loader import WindowSampler


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
        for b in self.shard_steps(self.epoch, rank, world, worker, workers):
            batch = s.read(base + b)
            out = {"step": base + b, "epoch": self.epoch}
            for name in s.names:
                out[name] = torch.from_dlpack(batch.data[name])
                out[name + "_origin"] = torch.from_dlpack(batch.origins[name])
            yield out
