"""zcube.torch.WindowDataset with the real torch DataLoader(num_workers=2):
every batch of an epoch exactly once across workers and ranks, the same data
as the sampler, deterministic per (seed, epoch)."""
import numpy as np

from conftest import need

torch = need("torch")
from zcube.loader import WindowSampler  # noqa: E402
from zcube.torch import WindowDataset  # noqa: E402

import zcube as zc  # noqa: E402


def _store(tmp_path):
    d = tmp_path / "s.zarr"
    val = np.arange(24 * 20 * 16, dtype=np.float32).reshape(24, 20, 16)
    zc.from_array(val, chunks=(8, 10, 16)).to_zarr(d, "u", codec="lz4")
    return d


def _collect(ds, workers):
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers)
    return {int(b["step"]): b for b in loader}


def test_dataloader_two_workers(tmp_path):
    d = _store(tmp_path)
    kw = dict(sources={"u": d / "u"}, window=(4, 5, 6), batch=16, seed=11)
    ref = WindowSampler(**kw)
    n = len(ref)
    ds = WindowDataset(**kw)
    ds.set_epoch(2)
    got = _collect(ds, 2)
    assert sorted(got) == [2 * n + b for b in range(n)]  # each batch once, none twice
    for step, b in got.items():
        assert isinstance(b["u"], torch.Tensor) and b["u"].shape == (16, 4, 5, 6)
        want = ref.read(step)
        np.testing.assert_array_equal(b["u"].numpy(), want.data["u"])
        np.testing.assert_array_equal(b["u_origin"].numpy(), want.origins["u"])
    again = _collect(ds, 0)  # the same without workers
    assert sorted(again) == sorted(got)
    for step in got:
        assert torch.equal(again[step]["u"], got[step]["u"])


def test_ranks_split_without_overlap(tmp_path):
    d = _store(tmp_path)
    kw = dict(sources={"u": d / "u"}, window=(4, 5, 6), batch=16, seed=5)
    steps = []
    for rank in range(2):
        ds = WindowDataset(rank=rank, world_size=2, **kw)
        got = _collect(ds, 2)
        assert len(got) == len(ds)
        steps += list(got)
    assert sorted(steps) == list(range(len(WindowSampler(**kw))))


def test_dlpack_shares_memory():
    a = np.arange(6.0)
    t = torch.from_dlpack(a)
    a[0] = 42
    assert t[0] == 42


def test_sampler_batches_go_to_torch_without_a_copy(tmp_path):
    # in the training process: the sampler's own buffer, as a tensor through
    # DLPack (no copy; valid until the next batch)
    d = _store(tmp_path)
    kw = dict(sources={"u": d / "u"}, window=(4, 5, 6), batch=16, seed=9)
    ref = WindowSampler(**kw)
    s = WindowSampler(threads=2, prefetch=1, **kw)
    for step, b in zip(range(3), s):
        t = torch.from_dlpack(b.data["u"])
        assert t.data_ptr() == b.data["u"].ctypes.data
        np.testing.assert_array_equal(t.numpy(), ref.read(step).data["u"])
        o = torch.from_dlpack(b.origins["u"])
        np.testing.assert_array_equal(o.numpy(), ref.read(step).origins["u"])


def test_worker_batches_are_read_into_shared_memory(tmp_path, monkeypatch):
    # In a DataLoader worker a batch is read straight into shared memory, so the
    # hand-over to the main process does not copy it again (see zcube/torch.py)
    import types

    import zcube.torch as zt
    d = _store(tmp_path)
    kw = dict(sources={"u": d / "u"}, window=(4, 5, 6), batch=16, seed=3)
    ref = WindowSampler(**kw)
    ds = WindowDataset(**kw)
    monkeypatch.setattr(zt, "get_worker_info", lambda: types.SimpleNamespace(id=1, num_workers=2))
    got = list(ds)
    assert [int(b["step"]) for b in got] == list(range(1, len(ref), 2))
    for b in got:
        assert b["u"].is_shared() and b["u_origin"].is_shared()
        want = ref.read(int(b["step"]))
        np.testing.assert_array_equal(b["u"].numpy(), want.data["u"])
        np.testing.assert_array_equal(b["u_origin"].numpy(), want.origins["u"])
