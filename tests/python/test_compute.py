"""Computing: spec and memory bound, reports and plans, callbacks, cancellation,
Ctrl-C, stores (zarr-python interop), errors."""
import glob
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import zcube as zc


def test_refused_plan_before_any_work(tmp_path):
    x = zc.random.normal(size=(2000, 2000), chunks=(1000, 1000), seed=1)
    work = tmp_path / "work"
    calls = []

    class Spy(zc.Callback):
        def on_task_end(self, *a):
            calls.append(a)

    spec = zc.Spec(allowed_mem="6MB", reserved_mem="1MB", work_dir=work)
    with pytest.raises(zc.MemoryBoundError) as ei:
        (x * 2).sum(axis=0).compute(spec=spec, callbacks=[Spy()])
    e = ei.value
    assert e.code == -13 and e.errname == "ZC_EMEMBOUND"
    assert e.allowed == 5_000_000 == spec.task_mem
    assert e.projected > e.allowed and e.projected >= 8_000_000  # one chunk is 8 MB
    # exact figures from the library (zc_errmem), which the message states rounded
    assert f"needs {e.projected / 1e6:.1f} MB per task, more than the {e.allowed / 1e6:.1f} MB" in str(e)
    assert "allowed_mem" in str(e)
    assert calls == [] and not work.exists()  # no task ran, nothing written
    assert isinstance(e, MemoryError) and isinstance(e, zc.ZcubeError)
    # the smallest bound that fits, found by the library and said in the message
    assert e.fits > spec.allowed_mem and e.fits % 100_000 == 0
    assert f"the smallest allowed_mem this plan fits is {e.fits / 1e6:.1f} MB" in str(e)
    # the same computation within that bound runs
    out = (x * 2).sum(axis=0).compute(spec=zc.Spec(allowed_mem=e.fits, reserved_mem="1MB"))
    np.testing.assert_allclose(out, (x * 2).sum(axis=0).compute(spec=zc.Spec(allowed_mem="100MB")))


def test_refused_for_the_compressor_carries_its_figures(tmp_path):
    """A plan refused for the memory its output's compressor needs: the figures
    come from the library, not from the message (whose wording differs)."""
    y = zc.random.normal(size=(400, 400), chunks=(200, 200), seed=1)
    with pytest.raises(zc.MemoryBoundError) as ei:
        y.to_zarr(tmp_path / "a.zarr", codec="zstd:22", spec=zc.Spec(allowed_mem="8MB", reserved_mem="1MB"))
    e = ei.value
    assert "for the compressor" in str(e)
    assert e.allowed == 8_000_000 and e.projected > e.allowed
    assert f"needs {e.projected / 1e6:.1f} MB per task" in str(e)


def test_corrupt_chunk_names_the_key(tmp_path):
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    s = zc.from_array(a, chunks=(4, 4)).to_zarr(tmp_path / "a.zarr", codec="zstd")
    np.testing.assert_array_equal(s.compute(), a)
    chunk = tmp_path / "a.zarr" / "c" / "1" / "0"
    chunk.write_bytes(b"not zstd at all" * 4)
    with pytest.raises(zc.CorruptChunkError) as ei:
        zc.open(tmp_path / "a.zarr").compute()
    assert ei.value.key == "c/1/0" and ei.value.code == -6
    with pytest.raises(zc.CorruptChunkError):
        zc.open(tmp_path / "a.zarr").read((slice(4, 8), slice(0, 4)))
    np.testing.assert_array_equal(zc.open(tmp_path / "a.zarr").read((slice(0, 4),)), a[:4])


def test_error_types(tmp_path):
    with pytest.raises(zc.NotFoundError):
        zc.open(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(zc.NotFoundError):
        zc.open(tmp_path / "empty")
    with pytest.raises(zc.InvalidArgumentError) as ei:
        zc.reshape(zc.zeros((3, 4)), (5,))
    assert isinstance(ei.value, ValueError) and "reshape" in str(ei.value)
    with pytest.raises(zc.InvalidArgumentError):
        zc.add(zc.zeros((3,)), zc.zeros((4,)))
    (tmp_path / "bad.zarr").mkdir()
    (tmp_path / "bad.zarr" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array"}')
    with pytest.raises(zc.FormatError):
        zc.open(tmp_path / "bad.zarr")
    s = zc.zeros((2, 3)).to_zarr(tmp_path / "z.zarr")
    with pytest.raises(zc.SelectionError) as ei:
        s.read((5,))
    assert isinstance(ei.value, IndexError) and ei.value.code == -8
    assert issubclass(zc.ChecksumError, zc.CorruptChunkError)


def test_output_over_its_own_input_is_refused(tmp_path):
    """Writing over an input, even with overwrite=True, would erase it before
    it is read (the result was the fill value's): refused, by path, file://
    URL, link or holding group; a sibling in the same group is fine."""
    a = np.arange(24.0).reshape(4, 6)
    zc.from_array(a, chunks=(2, 3)).to_zarr(tmp_path / "g", "x")
    x = zc.open(tmp_path / "g", "x")
    (tmp_path / "link").symlink_to(tmp_path / "g")
    for url, path in [(tmp_path / "g", "x"), (f"file://{tmp_path}/g", "x"), (tmp_path / "link", "x"),
                      (tmp_path / "g" / "x", ""), (tmp_path / "g", "")]:
        with pytest.raises(zc.InvalidArgumentError, match="erase") as ei:
            zc.to_zarr(x + 1, url, path, overwrite=True)
        assert str(tmp_path / "g") in str(ei.value)
    np.testing.assert_array_equal(zc.open(tmp_path / "g", "x").compute(), a)  # untouched
    np.testing.assert_array_equal(zc.to_zarr(x + 1, tmp_path / "g", "y").compute(), a + 1)
    m = zc.from_array(a, chunks=(2, 3)).to_zarr("memory://selfw", "m")
    with pytest.raises(zc.InvalidArgumentError, match="memory://selfw/m"):
        zc.to_zarr(m * 2, "memory://selfw", "m", overwrite=True)


def test_existing_output_needs_overwrite(tmp_path):
    """As zarr-python, Dask, Cubed and xarray: an array or group already at the
    output is replaced only when asked to."""
    zc.to_zarr(zc.ones((4, 4), chunks=(2, 2)), tmp_path / "o.zarr")
    with pytest.raises(zc.AlreadyExistsError, match="v3 array; pass overwrite=True") as ei:
        zc.zeros((2, 2)).to_zarr(tmp_path / "o.zarr")
    assert isinstance(ei.value, FileExistsError)
    np.testing.assert_array_equal(zc.open(tmp_path / "o.zarr").compute(), np.ones((4, 4)))
    zc.to_zarr(zc.zeros((2, 2)), tmp_path / "o.zarr", overwrite=True)
    np.testing.assert_array_equal(zc.open(tmp_path / "o.zarr").compute(), np.zeros((2, 2)))
    zc.to_zarr(zc.ones(2), tmp_path / "g", "a")  # g becomes a group holding a
    with pytest.raises(zc.AlreadyExistsError, match="group"):
        zc.store([zc.ones(3)], [(tmp_path / "g", "")])
    zc.to_zarr(zc.ones(2), tmp_path / "g", "b")  # a new member of an existing group


def test_writes_keep_consolidated_metadata_true(tmp_path):
    """Readers that trust .zmetadata (zarr.open_consolidated, xarray, zcube's
    own group walk) did not see arrays zcube wrote into the group."""
    zarr = pytest.importorskip("zarr") if os.environ.get("ZC_REQUIRE_ALL") != "1" else __import__("zarr")
    root = tmp_path / "ds"
    g = zarr.open_group(str(root), mode="w")
    g.create_dataset("a", data=np.arange(6).reshape(2, 3), chunks=(1, 3))
    g.create_group("sub").create_dataset("u", data=np.ones(4, dtype="u8"), fill_value=2**64 - 1)
    zarr.consolidate_metadata(str(root))
    zarr.consolidate_metadata(str(root / "sub"))  # an index of a subgroup too
    x = np.arange(12.0).reshape(3, 4)
    zc.to_zarr(zc.from_array(x, chunks=(2, 2)), root, "sub/deep/b", zarr_format=2)  # a member by path
    zc.to_zarr(zc.from_array(x + 1, chunks=(2, 2)), root / "c", zarr_format=2)  # a member by URL
    zc.to_zarr(zc.from_array(x[:1], chunks=(1, 2)), root, "a", zarr_format=2, overwrite=True)  # replaced
    top = zarr.open_consolidated(str(root))
    np.testing.assert_array_equal(top["sub/deep/b"][:], x)
    np.testing.assert_array_equal(top["c"][:], x + 1)
    assert top["a"].shape == (1, 4) and top["sub/u"].fill_value == 2**64 - 1
    assert sorted(zarr.open_consolidated(str(root / "sub")).group_keys()) == ["deep"]
    assert sorted(zc.open(root)) == ["a", "c", "sub"]
    assert sorted(zc.open(root)["sub"]) == ["deep", "u"]  # walked from sub/.zmetadata
    np.testing.assert_array_equal(zc.open(root)["sub"]["deep"]["b"].compute(), x)


def test_bad_chunks_and_urls_are_errors():
    """Chunk lengths below 1 were taken as 1 without a word."""
    for bad in [(0, 2), (-3, 2), (2.5, 2), 0]:
        with pytest.raises(ValueError, match="not a chunk length"):
            zc.from_array(np.ones((4, 4)), chunks=bad)
        with pytest.raises(ValueError, match="not a chunk length"):
            zc.ones((4, 4)).rechunk(bad)
    assert zc.from_array(np.ones((4, 4)), chunks=(-1, None)).chunksize == (4, 4)
    assert zc.ones((4, 4)).rechunk(((2, 2), 3)).chunksize == (2, 3)
    with pytest.raises(TypeError, match="not NoneType"):
        zc.open(None)


def test_spec_default_and_report(tmp_path):
    spec = zc.Spec(allowed_mem="200MB", threads=2, work_dir=tmp_path / "w", progress=False)
    assert spec.allowed_mem == 200_000_000 and spec.reserved_mem is None
    assert zc.Spec(allowed_mem="1GiB").allowed_mem == 2 ** 30
    with pytest.raises(ValueError):
        zc.Spec(allowed_mem="lots")
    with pytest.raises(ValueError):
        zc.Spec(executor="gpu")
    x = zc.random.uniform(size=(500, 400), chunks=(100, 100), seed=5)
    with zc.using_spec(spec):
        assert zc.get_spec() is spec
        m = zc.mean(x * x, axis=0).compute()
    assert zc.get_spec() is not spec
    np.testing.assert_allclose(m, (x.compute() ** 2).mean(axis=0), rtol=1e-12)
    r = zc.last_report()
    assert isinstance(r, zc.Report) and r.tasks > 0 and r.operations
    assert all(o.measured_mem <= o.projected_mem for o in r.operations)
    assert "tasks" in str(r)
    # creation functions carry a spec to the compute
    y = zc.ones((100, 100), chunks=(10, 10), spec=zc.Spec(allowed_mem="1kB", reserved_mem=0, progress=False))
    with pytest.raises(zc.MemoryBoundError):
        (y + 1).compute()
    zc.set_spec(None)


def test_plan_text_json_svg(tmp_path):
    u = zc.random.normal(size=(100, 50), chunks=(10, 50), seed=1)
    p = zc.mean(u ** 2, axis=0).plan()
    assert isinstance(p, zc.Plan) and p.tasks > 0 and p.operations
    assert "mean" in str(p) or "sum" in str(p)
    assert '"operations"' in p.json
    svg = p._repr_svg_()
    assert svg.startswith("<?xml") and "<svg" in svg
    out = p.visualize(tmp_path / "plan.svg")
    assert open(out).read() == svg
    both = zc.plan(u.sum(), u.mean())
    assert both.tasks >= p.tasks - 100


def test_several_results_in_one_plan():
    a = np.random.default_rng(0).standard_normal((300, 40))
    x = zc.from_array(a, chunks=(50, 40))
    s, m, t = zc.compute(x.sum(axis=0), zc.max(x), x.T)
    np.testing.assert_allclose(s, a.sum(0), rtol=1e-12)
    assert m == a.max()
    np.testing.assert_array_equal(t, a.T)


def test_callbacks_progress_and_cancel(tmp_path):
    x = zc.random.uniform(size=(400, 400), chunks=(20, 400), seed=2)
    seen = []

    class Rec(zc.Callback):
        def on_compute_start(self, plan):
            seen.append(("start", plan.tasks))

        def on_task_end(self, op, name, done, total):
            seen.append((op, done, total))

        def on_compute_end(self, report):
            seen.append(("end", report.tasks))

    (x + 1).compute(callbacks=[Rec()], spec=zc.Spec(progress=False))
    assert seen[0][0] == "start" and seen[-1][0] == "end"
    steps = [s for s in seen if isinstance(s[0], int)]
    assert len(steps) == 20 and max(s[1] for s in steps) == 20

    class Stop(zc.Callback):
        def on_task_end(self, op, name, done, total):
            return done >= 3

    with pytest.raises(zc.CanceledError):
        (x + 1).to_zarr(tmp_path / "c.zarr", spec=zc.Spec(threads=1, progress=False), callbacks=[Stop()])

    class Boom(zc.Callback):
        def on_task_end(self, *a):
            raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        (x + 1).compute(callbacks=[Boom()], spec=zc.Spec(progress=False))

    import io
    buf = io.StringIO()
    (x + 1).compute(callbacks=[zc.ProgressBar(file=buf)], spec=zc.Spec(progress=False))
    assert "20/20" in buf.getvalue()


def test_ctrl_c_cancels_compute(tmp_path):
    work = tmp_path / "work"
    script = textwrap.dedent(f"""
        import sys, time, zcube as zc
        x = zc.random.normal(size=(20000, 2000), chunks=(100, 2000), seed=1)
        class Slow(zc.Callback):
            def on_task_end(self, op, name, done, total):
                if done == 1:
                    print("started", flush=True)
                time.sleep(0.05)
        t0 = time.monotonic()
        try:
            (zc.sin(x) ** 2).to_zarr({str(tmp_path / 'out.zarr')!r},
                spec=zc.Spec(threads=2, work_dir={str(work)!r}, progress=False), callbacks=[Slow()])
        except KeyboardInterrupt:
            print("interrupted", round(time.monotonic() - t0, 2), flush=True)
            sys.exit(0)
        print("finished", flush=True)
        sys.exit(3)
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(0.2)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    assert out.startswith("interrupted"), out
    assert time.monotonic() - t0 < 10
    assert not glob.glob(str(work / "*"))  # the work folder's intermediates are gone


def test_stores_and_zarr_python_interop(tmp_path):
    zarr = pytest.importorskip("zarr") if os.environ.get("ZC_REQUIRE_ALL") != "1" else __import__("zarr")
    a = np.arange(600, dtype=np.int16).reshape(20, 30)
    z2 = zarr.open(str(tmp_path / "v2.zarr"), mode="w", shape=a.shape, chunks=(7, 11), dtype=">i2")
    z2[:] = a
    z2.attrs["units"] = "K"
    x = zc.open(tmp_path / "v2.zarr")
    assert x.zarr_format == 2 and x.attrs == {"units": "K"} and x.dtype == np.int16
    np.testing.assert_array_equal(x.compute(), a)
    np.testing.assert_array_equal(x[3:17:4, ::-5].compute(), a[3:17:4, ::-5])
    np.testing.assert_array_equal(x.read((slice(2, 9), 4)), a[2:9, 4:5])
    # group with arrays of both formats
    g = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_dataset("t", data=np.linspace(0, 1, 5))
    g.create_group("sub").create_dataset("u", data=np.ones((2, 2)))
    grp = zc.open(tmp_path / "g.zarr")
    assert isinstance(grp, zc.Group) and set(grp) == {"t", "sub"}
    np.testing.assert_array_equal(grp["t"].compute(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(grp["sub"]["u"].compute(), np.ones((2, 2)))
    # zcube writes v2, zarr-python reads it
    out = (x * 2).to_zarr(tmp_path / "out.zarr", zarr_format=2, codec="blosc:lz4:5:shuffle")
    np.testing.assert_array_equal(zarr.open(str(tmp_path / "out.zarr"), mode="r")[:], a * 2)
    np.testing.assert_array_equal(out.compute(), a * 2)
    # several targets in one plan
    s1, s2 = zc.store([x + 1, x - 1], [(tmp_path / "s.zarr", "p"), (tmp_path / "s.zarr", "m")])
    np.testing.assert_array_equal(s1.compute(), a + 1)
    np.testing.assert_array_equal(zc.open(tmp_path / "s.zarr", "m").compute(), a - 1)
    with pytest.raises(TypeError):
        zc.from_zarr(tmp_path / "g.zarr")
