#!/usr/bin/python3
"""bench/fft_dask.py — the reference for bench/fft_bench.sh: Dask's rechunk + rfft
along time of a time-chunked (T, Y, X) float64 Zarr array, written to Zarr.

    fft_dask.py gen DIR T          writes DIR/t.zarr: float64 (T, 360, 720), chunks
                                   (10, 360, 720), blosc-lz4 (zarr's default), a
                                   smooth field plus noise (compresses like ERA5)
    fft_dask.py run IN OUT THREADS  da.fft.rfft(x.rechunk({0: -1, 1: 'auto', 2: 'auto'}),
                                   axis=0).to_zarr(OUT, compressor=Zstd(1)) on the
                                   threaded scheduler; prints JSON {"seconds",
                                   "cpu_seconds", "rss_mb"} (Dask has no memory limit:
                                   rss_mb is what it used)
    fft_dask.py check IN A B       A and B (two rfft results) equal each other to 1e-12
                                   and NumPy's rfft on a corner of IN
"""
import json
import resource
import sys
import time

import numpy as np
import zarr


def gen(d, T):
    y, x = 360, 720
    z = zarr.open(f"{d}/t.zarr", mode="w", shape=(T, y, x), chunks=(10, y, x), dtype="f8")
    lat = np.linspace(-1, 1, y)[:, None]
    lon = np.linspace(0, 2 * np.pi, x)[None, :]
    rng = np.random.default_rng(0)
    for t0 in range(0, T, 10):
        t = np.arange(t0, min(T, t0 + 10))[:, None, None]
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


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
