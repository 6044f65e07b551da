"""unique_all, unique_counts, unique_inverse, unique_values against NumPy's
np.unique (equal_nan=False: each NaN distinct; inverse in x's shape) over
awkward chunkings (one element per chunk, ragged edges), ties, -0 beside +0,
all NaN, empty and 0-d arrays, integer, bool and complex dtypes; a sort
longer than a task (an external sort) under a small bound, counted and
computed under it."""
import numpy as np
import pytest

import zcube as zc

RNG = np.random.default_rng(18)


def ref(x):
    v, i, n, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return v, i.astype(np.int64), n.reshape(x.shape).astype(np.int64), c.astype(np.int64)


def check(x, chunks, spec=None):
    a = zc.from_array(x, chunks=chunks)
    v, i, n, c = ref(x)
    with zc.using_spec(spec or zc.get_spec()):
        r = zc.unique_all(a)
        assert r._fields == ("values", "indices", "inverse_indices", "counts")
        got = [r.values.compute(), r.indices.compute(), r.inverse_indices.compute(), r.counts.compute()]
        assert got[0].dtype == x.dtype and got[1].dtype == got[2].dtype == got[3].dtype == np.int64
        for g, w in zip(got, (v, i, n, c)):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)
        uc, ui = zc.unique_counts(a), zc.unique_inverse(a)
        np.testing.assert_array_equal(uc.counts.compute(), c)
        np.testing.assert_array_equal(uc.values.compute(), v)
        np.testing.assert_array_equal(ui.inverse_indices.compute(), n)
        np.testing.assert_array_equal(zc.unique_values(a).compute(), v)


def awkward(n, k=20):
    x = RNG.integers(-k, k, n).astype(np.float64)
    x[RNG.random(n) < 0.05] = np.nan
    x[RNG.random(n) < 0.05] = -0.0
    return x


@pytest.mark.parametrize("chunks", [1, 7, 500])
def test_chunkings(chunks):
    check(awkward(500), chunks)


def test_2d_and_dtypes():
    check(awkward(13 * 17).reshape(13, 17), (4, 5))
    check(RNG.integers(0, 4, (9, 5)).astype(np.int16), (2, 3))
    check(RNG.integers(0, 2, 11).astype(bool), 1)
    check(RNG.integers(0, 300, 1000).astype(np.uint8), 33)


def test_edges():
    check(np.full(10, np.nan), 3)
    check(np.ones(10), 3)
    check(np.zeros(0), 1)
    check(np.zeros((3, 0), np.float32), (2, 1))
    check(np.array(2.5), ())
    check(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, np.inf]), 1)


def test_external_sort_under_a_small_bound():
    spec = zc.Spec(allowed_mem="3MB")
    x = awkward(150000, k=5000)
    with zc.using_spec(spec):
        v = zc.unique_values(zc.from_array(x, chunks=999))
    plan = str(v.plan(spec=spec))
    assert "sort (merge)" in plan and "mask_select" in plan
    check(x, 999, spec=spec)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("chunks", [1, 7, 300])
def test_complex(dtype, chunks):
    # NumPy's complex order (by real part, then imaginary; R + NaN j after the
    # numbers, then NaN + R j, then NaN + NaN j), ties, -0 beside +0
    n = 300
    x = (RNG.integers(-3, 3, n) + 1j * RNG.integers(-3, 3, n)).astype(dtype)
    for v in (complex(np.nan, 1), complex(1, np.nan), complex(np.nan, np.nan), complex(-0.0, 0), complex(0, -0.0)):
        x[RNG.random(n) < 0.04] = v
    check(x, chunks)
    check(x.reshape(15, 20), (4, 7))
    check(np.full(5, complex(np.nan, np.nan), dtype), 2)
    check(np.zeros(0, dtype), 1)


def test_complex_under_a_small_bound():
    spec = zc.Spec(allowed_mem="3MB")
    x = RNG.integers(-50, 50, 40000) + 1j * RNG.integers(-50, 50, 40000)
    check(x, 999, spec=spec)

