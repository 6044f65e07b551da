"""zcube.loader.WindowSampler: windows equal the arrays at their origins, views
vs copies, epochs, random access, two sources aligned by dimension name."""
import numpy as np
import pytest

import zcube as zc
from zcube.loader import WindowSampler

T, Y, X = 40, 30, 20


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("loader") / "s.zarr"
    t, y, x = np.meshgrid(np.arange(T), np.arange(Y), np.arange(X), indexing="ij")
    val = (t * 10000 + y * 100 + x).astype(np.float32)
    zc.from_array(val, chunks=(8, 16, 16)).to_zarr(d, "u", codec="lz4")
    zc.from_array(val[:, :, 0] * -1, chunks=(8, 16)).to_zarr(d, "v")
    return d, val


def test_windows_match_origins(store):
    d, val = store
    s = WindowSampler({"u": (str(d), "u")}, window=(4, 8, 6), batch=5, seed=1, threads=2)
    assert len(s) == s.windows_per_epoch // 5 and s.windows_per_epoch == (T - 3) * (Y - 7) * (X - 5)
    seen = 0
    for i, b in enumerate(s):
        u, o = b.data["u"], b.origins["u"]
        assert u.shape == (5, 4, 8, 6) and o.shape == (5, 3) and u.dtype == np.float32
        assert not u.flags.owndata and u.flags.writeable  # the library's buffer, ours until the next batch
        for w in range(5):
            t0, y0, x0 = o[w]
            np.testing.assert_array_equal(u[w], val[t0:t0 + 4, y0:y0 + 8, x0:x0 + 6])
        seen += 1
        if i == 20:
            break
    assert seen == 21


def test_epochs_random_access_copy(store):
    d, val = store
    s = WindowSampler({"u": d / "u"}, window=(2, 4, 4), batch=8, seed=7, copy=True)
    first = [next(s) for _ in range(3)]
    assert first[0].data["u"].flags.writeable  # owned
    for k in range(3):
        b = s.batch(k)
        np.testing.assert_array_equal(b.data["u"], first[k].data["u"])
        np.testing.assert_array_equal(b.origins["u"], first[k].origins["u"])
    s.set_epoch(1)
    e1 = next(s)
    assert e1.epoch == 1 and e1.step == len(s)
    assert not np.array_equal(e1.origins["u"], first[0].origins["u"])  # another shuffle
    s2 = WindowSampler({"u": d / "u"}, window=(2, 4, 4), batch=8, seed=7)
    s2.set_epoch(1)
    np.testing.assert_array_equal(next(s2).origins["u"], e1.origins["u"])  # same (seed, epoch, batch)
    s3 = WindowSampler({"u": d / "u"}, window=(2, 4, 4), batch=8, seed=8)
    assert not np.array_equal(next(s3).origins["u"], first[0].origins["u"])
    with pytest.raises(IndexError):
        s.batch(len(s))


def test_two_sources_share_dimensions(store):
    d, val = store
    s = WindowSampler({"u": d / "u", "v": d / "v"}, window={"u": (3, 5, 4), "v": (3, 5)}, batch=4, seed=3,
                      dims={"u": ("t", "y", "x"), "v": ("t", "y")})
    b = next(s)
    np.testing.assert_array_equal(b.origins["u"][:, :2], b.origins["v"])
    for w in range(4):
        t0, y0 = b.origins["v"][w]
        np.testing.assert_array_equal(b.data["v"][w], -val[t0:t0 + 3, y0:y0 + 5, 0])


def test_bad_window_is_an_error(store):
    d, _ = store
    with pytest.raises(zc.InvalidArgumentError):
        WindowSampler({"u": d / "u"}, window=(T + 1, 1, 1))
    with pytest.raises(ValueError):
        WindowSampler({"u": d / "u"}, window=(1, 1))
