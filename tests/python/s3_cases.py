"""The Python module on S3, run by tests/python/s3.sh against @20minutes/s3rver
on loopback (it checks SigV4 signatures; AWS_* come from the script): what
boto3 uploaded from zarr-python reads identically through zc.open; a lazy
computation reads, works and writes on S3 within its memory bound and boto3's
download of the result reads identically in zarr-python; the xarray backend,
the window sampler and torch's DataLoader workers read s3:// URLs; missing keys and a wrong secret are
the module's exceptions, naming the URL and never the secret.

Not named test_*.py: pytest alone would run it without a server."""
import os

import numpy as np
import pytest

from conftest import need

boto3 = need("boto3")
zarr = need("zarr")
xr = need("xarray")
pd = need("pandas")
import zcube as zc  # noqa: E402
from botocore.config import Config  # noqa: E402
from zcube.loader import WindowSampler  # noqa: E402
from zcube.xarray_backend import ZcubeBackendEntrypoint  # noqa: E402

BUCKET = os.environ.get("ZC_S3_BUCKET", "pyb")
S3 = f"s3://{BUCKET}"


def client():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1",
                        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))


def upload(d, prefix):
    s3 = client()
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            s3.upload_file(p, BUCKET, prefix + "/" + os.path.relpath(p, d).replace(os.sep, "/"))


def download(prefix, d):
    s3 = client()
    n = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/"):
        for o in page.get("Contents", []):
            out = os.path.join(d, o["Key"][len(prefix) + 1:])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            s3.download_file(BUCKET, o["Key"], out)
            n += 1
    assert n, f"nothing below s3://{BUCKET}/{prefix}"


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    """A (48, 40, 30) float64 field written by zarr-python (v2, blosc-lz4, a
    band of fill values) and uploaded by boto3 under a prefix that needs
    percent-encoding."""
    d = tmp_path_factory.mktemp("s3py")
    rng = np.random.default_rng(5)
    val = rng.standard_normal((48, 40, 30))
    val[:, 8:16, :] = 1.5
    a = zarr.open(str(d / "f.zarr"), mode="w", shape=val.shape, chunks=(8, 16, 16), dtype="f8",
                  fill_value=1.5, compressor=zarr.Blosc(cname="lz4", clevel=5, shuffle=1))
    a[:] = val
    upload(str(d / "f.zarr"), "in put/é+f.zarr")
    return val, f"{S3}/in put/é+f.zarr", d


def test_open_reads_what_boto3_uploaded(field):
    val, url, _ = field
    a = zc.open(url)
    assert a.shape == val.shape and a.dtype == zc.float64
    np.testing.assert_array_equal(np.asarray(a), val)
    np.testing.assert_array_equal(a.read((slice(5, 40, 3), slice(7, 9), -1)), val[5:40:3, 7:9, -1:])
    np.testing.assert_array_equal(a[10:20, ::7, 3].compute(), val[10:20, ::7, 3])


def test_compute_on_s3_within_the_bound(field, tmp_path):
    val, url, _ = field
    a = zc.open(url)
    # a rechunk across all chunks and a reduction: intermediates go to the work dir on S3
    y = zc.rechunk(a * 2.0 + 1.0, (48, 8, 8))
    m = zc.mean(y ** 2, axis=0)
    spec = zc.Spec(allowed_mem="3MB", work_dir=f"{S3}/work")
    zc.to_zarr(y, f"{S3}/out/y.zarr", spec=spec, zarr_format=2)
    zc.to_zarr(m, f"{S3}/out/m.zarr", spec=spec, codec="zstd", zarr_format=2)  # Debian's zarr-python reads v2
    rep = zc.last_report()
    assert rep.operations and all(o.measured_mem <= o.projected_mem for o in rep.operations), str(rep)
    assert rep.peak_task_mem <= 40e6, str(rep)
    assert rep.raw["source_cache"]["intermediates_in_memory"] is False  # they went to S3
    left = client().list_objects_v2(Bucket=BUCKET, Prefix="work/").get("KeyCount", 0)
    assert left == 0, f"{left} intermediates left in the work dir on S3"
    download("out/y.zarr", str(tmp_path / "y.zarr"))
    download("out/m.zarr", str(tmp_path / "m.zarr"))
    y_zp = zarr.open(str(tmp_path / "y.zarr"), mode="r")
    assert y_zp.chunks == (48, 8, 8)
    np.testing.assert_array_equal(y_zp[:], val * 2.0 + 1.0)
    np.testing.assert_allclose(zarr.open(str(tmp_path / "m.zarr"), mode="r")[:],
                               ((val * 2.0 + 1.0) ** 2).mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(zc.open(f"{S3}/out/m.zarr")), ((val * 2.0 + 1.0) ** 2).mean(axis=0),
                               rtol=1e-13)


def test_xarray_opens_s3(tmp_path):
    t = pd.date_range("2001-01-01", periods=6)
    ds = xr.Dataset({"t2m": (("time", "lat"), np.arange(18.0).reshape(6, 3), {"units": "K"})},
                    coords={"time": t, "lat": [10.0, 20.0, 30.0]})
    ds.to_zarr(tmp_path / "x.zarr", mode="w", consolidated=True, encoding={"t2m": {"chunks": (2, 3)}})
    upload(str(tmp_path / "x.zarr"), "x.zarr")
    got = xr.open_dataset(f"{S3}/x.zarr", engine=ZcubeBackendEntrypoint)
    assert got.t2m.attrs["units"] == "K" and list(got.time.values) == list(t.values)
    np.testing.assert_array_equal(got.t2m.isel(time=slice(1, 4)).values, ds.t2m.values[1:4])
    # an array zcube writes into the dataset is entered in its .zmetadata
    zc.to_zarr(zc.from_array(np.arange(4.0), chunks=2), f"{S3}/x.zarr/w", zarr_format=2)
    assert "w" in zc.open(f"{S3}/x.zarr")
    download("x.zarr", str(tmp_path / "x2.zarr"))
    np.testing.assert_array_equal(zarr.open_consolidated(str(tmp_path / "x2.zarr"))["w"][:], np.arange(4.0))


def test_sampler_draws_windows_from_s3(field):
    val, url, _ = field
    s = WindowSampler({"f": (url, "")}, window=(4, 8, 6), batch=6, seed=3, threads=2)
    for i, b in zip(range(5), s):
        for w in range(6):
            t0, y0, x0 = b.origins["f"][w]
            np.testing.assert_array_equal(b.data["f"][w], val[t0:t0 + 4, y0:y0 + 8, x0:x0 + 6])


def test_torch_workers_read_s3(field):
    """DataLoader worker processes (forked after the parent used the store)
    each open their own connections."""
    torch = need("torch")
    from zcube.torch import WindowDataset
    val, url, _ = field
    zc.open(url).read((slice(0, 1),))  # the parent has used libcurl before the fork
    ds = WindowDataset({"f": (url, "")}, window=(4, 8, 6), batch=4, seed=2, mode="grid")  # 12*5*5 windows
    ds.set_epoch(1)
    steps = []
    for b in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2):
        u, o = b["f"].numpy(), b["f_origin"].numpy()
        for w in range(4):
            t0, y0, x0 = o[w]
            np.testing.assert_array_equal(u[w], val[t0:t0 + 4, y0:y0 + 8, x0:x0 + 6])
        steps.append(int(b["step"]))
    assert sorted(steps) == list(range(len(ds), 2 * len(ds))), steps[:10]


def test_missing_array_names_the_url():
    with pytest.raises(zc.NotFoundError, match=f"{S3}/nothing.zarr"):
        zc.open(f"{S3}/nothing.zarr")


def test_wrong_secret_is_a_clear_403(field, monkeypatch):
    _, url, _ = field
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-xyz")
    with pytest.raises(zc.ZcubeError) as e:
        np.asarray(zc.open(url))
    msg = str(e.value)
    assert "403" in msg and "not-the-secret-xyz" not in msg, msg


def test_output_over_its_input_is_refused(field):
    val, url, _ = field
    with pytest.raises(zc.InvalidArgumentError, match="erase"):
        zc.to_zarr(zc.open(url) + 1, url, overwrite=True)
    np.testing.assert_array_equal(np.asarray(zc.open(url)), val)


def test_no_partial_objects_left(field):
    """A failing write (the bound cannot hold a task) leaves nothing on S3."""
    _, url, _ = field
    with pytest.raises(zc.MemoryBoundError):
        zc.to_zarr(zc.open(url) + 1, f"{S3}/refused.zarr", spec=zc.Spec(allowed_mem="10kB"))
    s3 = client()
    left = s3.list_objects_v2(Bucket=BUCKET, Prefix="refused.zarr/").get("KeyCount", 0)
    assert left == 0, f"{left} objects left below refused.zarr"
