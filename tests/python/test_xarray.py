"""The xarray backend against datasets written by Debian's xarray to_zarr:
values, dims, coordinates, CF decoding (times, scale/offset, fill), lazy
region reads, consolidated metadata, engine by class and by name."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from conftest import need

xr = need("xarray")
from zcube.xarray_backend import ZcubeBackendEntrypoint  # noqa: E402


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    d = tmp_path_factory.mktemp("xr")
    rng = np.random.default_rng(0)
    t = pd.date_range("2020-01-01", periods=12, freq="6H")
    temp = rng.standard_normal((12, 9, 7)).astype(np.float32)
    temp[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {"temp": (("time", "lat", "lon"), temp, {"units": "K", "long_name": "temperature"}),
         "mask": (("lat", "lon"), rng.integers(0, 2, (9, 7)).astype(np.int8)),
         "pres": (("time",), np.linspace(1000, 900, 12))},
        coords={"time": t, "lat": np.linspace(-40, 40, 9), "lon": np.arange(7) * 10.0},
        attrs={"title": "test", "source": "xarray to_zarr"})
    ds["pres"].encoding = {"scale_factor": 0.1, "add_offset": 900.0, "dtype": "int16", "_FillValue": -1}
    path = d / "ds.zarr"
    ds.to_zarr(path, mode="w", consolidated=True, encoding={"temp": {"chunks": (4, 5, 7)}})
    return ds, path


def test_open_dataset_with_the_class(written):
    ds, path = written
    got = xr.open_dataset(path, engine=ZcubeBackendEntrypoint)
    assert set(got.data_vars) == {"temp", "mask", "pres"}
    assert got.temp.dims == ("time", "lat", "lon") and got.temp.attrs["units"] == "K"
    assert got.attrs == ds.attrs
    ref = xr.open_dataset(path, engine="zarr")  # xarray's own zarr backend decodes the same way
    xr.testing.assert_identical(got.load(), ref.load())
    xr.testing.assert_allclose(got.load().drop_vars("pres"), ds.drop_vars("pres"))  # times decoded
    np.testing.assert_allclose(got.pres.values, ds.pres.values, atol=0.05)  # unscaled (float32, as xarray does)
    assert got.time.dtype.kind == "M"
    assert np.isnan(got.temp.values[0, 0, 0])
    assert got.temp.encoding["chunks"] == (4, 5, 7)


def test_lazy_region_reads(written):
    ds, path = written
    got = xr.open_dataset(path, engine=ZcubeBackendEntrypoint)
    var = got.temp.variable._data
    assert not isinstance(var, np.ndarray)  # still lazy
    np.testing.assert_array_equal(got.temp.isel(time=slice(2, 9, 3), lat=4).values,
                                  ds.temp.isel(time=slice(2, 9, 3), lat=4).values)
    np.testing.assert_array_equal(got.temp[::-2, 1:, ::-1].values, ds.temp[::-2, 1:, ::-1].values)
    np.testing.assert_array_equal(got.temp.sel(lat=0.0, method="nearest").values,
                                  ds.temp.sel(lat=0.0, method="nearest").values)


def test_consolidated_metadata(written, tmp_path):
    ds, path = written
    import shutil
    zarr = need("zarr")
    cons = tmp_path / "cons.zarr"
    shutil.copytree(path, cons)
    # an array added after consolidation: readers of .zmetadata (xarray's zarr
    # backend with consolidated=True, and zcube's group walk) do not list it
    zarr.open_group(str(cons), mode="a").create_dataset("late", data=np.zeros(3))
    ref = xr.open_dataset(cons, engine="zarr", consolidated=True)
    got = xr.open_dataset(cons, engine=ZcubeBackendEntrypoint)
    assert "late" not in got and "late" not in ref
    xr.testing.assert_identical(got.load(), ref.load())
    with pytest.raises(ValueError, match="not a group"):
        xr.open_dataset(cons / "temp", engine=ZcubeBackendEntrypoint)


def test_v3_dimension_names(tmp_path):
    # v3 store with dimension_names, written by zcube itself
    import zcube as zc
    v3 = tmp_path / "v3.zarr"
    g = zc._zcube.Store(str(v3), 2)
    zc._zcube.group_create(g, "", 3)
    a = np.arange(20.0).reshape(4, 5)
    z = zc._zcube.zarr_create(g, "a", {"shape": a.shape, "chunks": (2, 5), "dtype": zc._dtypes.code(a.dtype),
                                       "dimension_names": '["y", "x"]', "attributes": '{"units": "m"}',
                                       "fill_value": '"NaN"'})
    z.write(None, a.tobytes())
    got = xr.open_dataset(v3, engine=ZcubeBackendEntrypoint)
    assert got.a.dims == ("y", "x") and got.a.attrs["units"] == "m"
    np.testing.assert_array_equal(got.a.values, a)


def test_engine_by_name_through_the_entry_point(written, tmp_path):
    ds, path = written
    dist = tmp_path / "ep" / "zcube_xr-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zcube-xr\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text("[xarray.backends]\nzcube = zcube.xarray_backend:ZcubeBackendEntrypoint\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'ep'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    code = textwrap.dedent(f"""
        import xarray as xr, numpy as np
        got = xr.open_dataset({str(path)!r}, engine="zcube")
        assert got.temp.shape == (12, 9, 7), got
        print(float(np.nansum(got.temp.values)))
    """)
    out = subprocess.check_output([sys.executable, "-c", code], env=env, text=True)
    assert float(out) == pytest.approx(float(np.nansum(ds.temp.values)), rel=1e-5)
