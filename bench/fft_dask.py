#!/usr/bin/python3
"""bench/fft_dask.py — the reference for bench/fft_bench.sh: Dask's rechunk + rfft
along time of a time-chunked (T, Y, X) float64 Zarr array, written to Zarr.

    fft_dask.py gen DIR T [CT [NAME]]  writes DIR/NAME.zarr (default t): float64
                                   (T, 360, 720), chunks (CT, 360, 720) (default 10),
                                   blosc-lz4 (zarr's default), a smooth field plus
                                   noise (compresses like ERA5)
    fft_dask.py run IN OUT THREADS  da.fft.rfft(x.rechunk({0: -1, 1: 'auto', 2: 'auto'}),
                                   axis=0).to_zarr(OUT, compressor=Zstd(1)) on the
                                   threaded scheduler; prints JSON {"seconds",
                                   "cpu_seconds", "rss_mb"} (Dask has no memory limit:
                                   rss_mb is what it used)
    fft_dask.py check IN A B       A and B (two rfft results) equal each other to 1e-12
                                   and NumPy's rfft on a corner of IN
    fft_dask.py rechunk IN OUT THREADS C0,C1,C2
                                   x.rechunk(C).to_zarr(OUT) (blosc-lz4, zarr's default)
                                   on the threaded scheduler; JSON as for run
    fft_dask.py same IN A B C0,C1,C2  A and B hold IN exactly, chunked C
"""
import json
import re
import resource
import sys
import time

import numpy as np
import zarr


def _seconds(t, kind):
    """User or System time in seconds from the text of a `/usr/bin/time -v` report."""
    return float(re.search(r"%s time \(seconds\): ([\d.]+)" % kind, t).group(1))


def sys_s(path):
    """System time in seconds from a `/usr/bin/time -v` report: on this VM it
    carries the host's cost of guest pages touched for the first time since
    they were handed back (free page reporting), which varies tenfold between
    identical runs (docs/benchmarks.md, session 20)."""
    return _seconds(open(path).read(), "System")


def time_v(path):
    """(wall, CPU seconds, peak RSS MiB) from a `/usr/bin/time -v` report."""
    t = open(path).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", t)
    wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    cpu = _seconds(t, "User") + _seconds(t, "System")
    return wall, cpu, rss


def gen(d, T, ct=10, name="t"):
    y, x = 360, 720
    z = zarr.open(f"{d}/{name}.zarr", mode="w", shape=(T, y, x), chunks=(ct, y, x), dtype="f8")
    lat = np.linspace(-1, 1, y)[:, None]
    lon = np.linspace(0, 2 * np.pi, x)[None, :]
    rng = np.random.default_rng(0)
    for t0 in range(0, T, ct):
        t = np.arange(t0, min(T, t0 + ct))[:, None, None]
        f = 280 + 20 * np.cos(lat * np.pi / 2) + 5 * np.sin(lon + t * 0.01) * lat + rng.standard_normal((len(t), y, x))
        z[t0:t0 + len(t)] = f


def run(inp, out, threads):
    import dask
    import dask.array as da
    from numcodecs import Zstd
    t0, c0 = time.perf_counter(), time.process_time()
    x = da.from_zarr(inp)
    y = da.fft.rfft(x.rechunk({0: -1, 1: "auto", 2: "auto"}), axis=0)
    with dask.config.set(scheduler="threads", num_workers=threads):
        y.to_zarr(out, compressor=Zstd(level=1), overwrite=True)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 3), "cpu_seconds": round(time.process_time() - c0, 3),
                      "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "chunks": [list(c[:2]) for c in y.chunks]}))


def check(inp, a, b):
    x = zarr.open(inp, mode="r")
    za, zb = zarr.open(a, mode="r"), zarr.open(b, mode="r")
    assert za.shape == zb.shape, (za.shape, zb.shape)
    corner = np.fft.rfft(x[:, :8, :8], axis=0)
    worst = 0.0
    for t0 in range(0, za.shape[1], 60):
        pa, pb = za[:, t0:t0 + 60], zb[:, t0:t0 + 60]
        worst = max(worst, float(np.abs(pa - pb).max() / np.abs(pb).max()))
    ec = float(np.abs(za[:, :8, :8] - corner).max() / np.abs(corner).max())
    print(json.dumps({"max_rel_diff_zcube_dask": worst, "max_rel_diff_vs_numpy_corner": ec}))
    sys.exit(0 if worst < 1e-12 and ec < 1e-12 else 1)


def rechunk(inp, out, threads, chunks):
    import dask
    import dask.array as da
    t0, c0 = time.perf_counter(), time.process_time()
    x = da.from_zarr(inp)
    with dask.config.set(scheduler="threads", num_workers=threads):
        x.rechunk(chunks).to_zarr(out, overwrite=True)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 3), "cpu_seconds": round(time.process_time() - c0, 3),
                      "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


def same(inp, a, b, chunks):
    x, za, zb = (zarr.open(p, mode="r") for p in (inp, a, b))
    for z in (za, zb):
        assert tuple(z.chunks) == chunks, (z.chunks, chunks)
        for y0 in range(0, x.shape[1], 60):
            assert np.array_equal(z[:, y0:y0 + 60], x[:, y0:y0 + 60]), y0
    print(json.dumps({"identical": True}))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), *([int(sys.argv[4])] + sys.argv[5:6] if len(sys.argv) > 4 else []))
    elif sys.argv[1] == "rechunk":
        rechunk(sys.argv[2], sys.argv[3], int(sys.argv[4]), tuple(int(c) for c in sys.argv[5].split(",")))
    elif sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3], sys.argv[4], tuple(int(c) for c in sys.argv[5].split(",")))
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
