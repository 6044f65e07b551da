"""sort and argsort against NumPy's stable sort: awkward chunkings (one element
per chunk, ragged edges), ties, NaNs, empty axes, both orders, every axis;
lines longer than a task (an external sort, shown by the plan) under a small
bound."""
import numpy as np
import pytest

import zcube as zc

RNG = np.random.default_rng(18)


def ref_argsort(x, axis, descending):
    """NumPy's stable argsort, NaNs last in both orders (negating keeps NaNs last)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    if x.dtype == bool:
        return np.argsort(~x, axis=axis, kind="stable")
    if x.dtype.kind == "u":
        return np.argsort(np.iinfo(x.dtype).max - x, axis=axis, kind="stable")
    if x.dtype.kind == "i":
        return np.argsort(-(x.astype(np.float64)) if x.dtype.itemsize < 8 else ~x, axis=axis, kind="stable")
    return np.argsort(-x, axis=axis, kind="stable")


def check(x, chunks, axis=-1, spec=None):
    a = zc.from_array(x, chunks=chunks)
    for desc in (False, True):
        want = ref_argsort(x, axis, desc)
        got_i = zc.argsort(a, axis=axis, descending=desc).compute(spec=spec)
        got_s = zc.sort(a, axis=axis, descending=desc).compute(spec=spec)
        assert got_i.dtype == np.int64 and got_s.dtype == x.dtype
        np.testing.assert_array_equal(got_i, want)
        np.testing.assert_array_equal(got_s, np.take_along_axis(x, want, axis=axis))


def awkward(n, k=20):
    x = RNG.integers(-k, k, n).astype(np.float64)
    x[RNG.random(n) < 0.05] = np.nan
    return x


@pytest.mark.parametrize("chunks", [1, 7, 100, 1000])
def test_1d_chunkings(chunks):
    check(awkward(1000), chunks)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_3d_every_axis(axis):
    check(awkward(6 * 9 * 11).reshape(6, 9, 11), (4, 2, 5), axis=axis)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   np.float16, np.float32, bool])
def test_dtypes(dtype):
    x = RNG.integers(0, 100, (13, 17)) % (2 if dtype is bool else 100)
    check(x.astype(dtype), (5, 6), axis=0)
    check(x.astype(dtype), (5, 6), axis=1)


def test_edges():
    check(np.full(10, np.nan), 3)
    check(np.zeros(0), 1)
    check(np.zeros((3, 0)), (2, 1), axis=1)
    check(np.zeros((3, 0)), (2, 1), axis=0)
    check(np.array([0.0, -0.0, 0.0, -0.0]), 1)
    check(np.array([np.inf, -np.inf, np.nan, 1.0, -np.inf]), 2)


def test_external_sort_under_a_small_bound():
    spec = zc.Spec(allowed_mem="3MB")
    x = awkward(150000, k=1000)
    a = zc.from_array(x, chunks=999)
    assert "sort (merge)" in str(zc.sort(a).plan(spec=spec))
    check(x, 999, spec=spec)
    check(np.ones(150000), 5000, spec=spec)          # ties only
    y = awkward(2 * 60000).reshape(60000, 2)
    check(y, (7001, 1), axis=0, spec=spec)


def test_errors():
    with pytest.raises(zc.ZcubeError, match="complex128 arrays cannot be sorted"):
        zc.sort(zc.from_array(np.zeros(3, complex)))
    with pytest.raises(zc.ZcubeError, match="axis 1 is out of range"):
        zc.argsort(zc.from_array(np.zeros(3)), axis=1)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.sort(awkward(5000, k=300))
    v = np.concatenate([awkward(700, k=400), [np.nan, np.inf, -np.inf, a[0], a[-1]]]).reshape(5, 141)
    for chunks in (1, 37, 5000):
        got = zc.searchsorted(zc.from_array(a, chunks=chunks), zc.from_array(v, chunks=(2, 50)), side=side)
        np.testing.assert_array_equal(got.compute(), np.searchsorted(a, v, side=side))
    x = awkward(5000, k=300)
    zx = zc.from_array(x, chunks=999)
    got = zc.searchsorted(zx, zc.from_array(v), side=side, sorter=zc.argsort(zx))
    np.testing.assert_array_equal(got.compute(spec=zc.Spec(allowed_mem="3MB")),
                                  np.searchsorted(x, v, side=side, sorter=np.argsort(x, kind="stable")))
    # any sorter: the argsort of another node, a NumPy permutation, a list
    want = np.searchsorted(x, v, side=side, sorter=np.argsort(x, kind="stable"))
    for sorter in (zc.argsort(zc.from_array(x)), np.argsort(x, kind="stable"), np.argsort(x).tolist()):
        got = zc.searchsorted(zx, zc.from_array(v), side=side, sorter=sorter)
        np.testing.assert_array_equal(got.compute(spec=zc.Spec(allowed_mem="32MB")), want)
    with pytest.raises(zc.ZcubeError, match="sorter must be 1-D with x1's length 5000"):
        zc.searchsorted(zx, zc.from_array(v), sorter=np.arange(7))


def test_take_along_axis():
    x = awkward(23 * 301).reshape(23, 301)
    for chunks in ((1, 1), (5, 37)):
        a = zc.from_array(x, chunks=chunks)
        for axis in (0, 1, -1):
            got = zc.take_along_axis(a, zc.argsort(a, axis=axis), axis=axis).compute()
            np.testing.assert_array_equal(got, np.sort(x, axis=axis))
    idx = np.array([[-1, 0, 300, 7]])                  # broadcast along dim 0, negative
    got = zc.take_along_axis(zc.from_array(x, chunks=(5, 37)), zc.from_array(idx), axis=1)
    np.testing.assert_array_equal(got.compute(), np.take_along_axis(x, np.broadcast_to(idx, (23, 4)), axis=1))
    y = awkward(150000, k=5000)                        # a line longer than a task, under 3MB
    a = zc.from_array(y, chunks=999)
    got = zc.take_along_axis(a, zc.argsort(a, descending=True), axis=0).compute(spec=zc.Spec(allowed_mem="3MB"))
    np.testing.assert_array_equal(got, y[ref_argsort(y, 0, True)])
    with pytest.raises(zc.ZcubeError, match="integer dtype"):
        zc.take_along_axis(a, zc.from_array(np.zeros(3)))
    with pytest.raises(zc.ZcubeError, match="out of bounds"):
        zc.take_along_axis(zc.from_array(x), zc.from_array(np.array([[301]])), axis=1).compute()
