#!/usr/bin/python3
"""bench/mask_dask.py — the reference for bench/mask_bench.sh: Dask's boolean-mask
selection x[x > 1] of a row-chunked (R, C) float64 Zarr array, written to Zarr.

    mask_dask.py gen DIR R C ROWS   writes DIR/x.zarr: float64 (R, C), chunks (ROWS, C),
                                    blosc-lz4 (zarr's default), standard normal values
    mask_dask.py run IN OUT THREADS CHUNK
                                    y = x[x > 1]; y.compute_chunk_sizes() (Dask's sizes
                                    are unknown until computed); y.rechunk(CHUNK).to_zarr(
                                    OUT, compressor=Zstd(1)) on the threaded scheduler;
                                    prints JSON {"seconds", "cpu_seconds", "rss_mb", "n"}
    mask_dask.py check IN A B       A and B hold the same values, and NumPy's x[x > 1]
                                    over the first rows of IN is their start
"""
import json
import resource
import sys
import time

import numpy as np
import zarr


def gen(d, rows, cols, chunk):
    z = zarr.open(f"{d}/x.zarr", mode="w", shape=(rows, cols), chunks=(chunk, cols), dtype="f8")
    rng = np.random.default_rng(0)
    for r0 in range(0, rows, chunk):
        z[r0:r0 + chunk] = rng.standard_normal((min(chunk, rows - r0), cols))


def run(inp, out, threads, chunk):
    import dask
    import dask.array as da
    from numcodecs import Zstd
    t0, c0 = time.perf_counter(), time.process_time()
    with dask.config.set(scheduler="threads", num_workers=threads):
        x = da.from_zarr(inp)
        y = x[x > 1]
        y.compute_chunk_sizes()
        y.rechunk(chunk).to_zarr(out, compressor=Zstd(level=1), overwrite=True)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 3), "cpu_seconds": round(time.process_time() - c0, 3),
                      "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "n": int(y.shape[0])}))


def check(inp, a, b):
    x = zarr.open(inp, mode="r")
    za, zb = zarr.open(a, mode="r"), zarr.open(b, mode="r")
    assert za.shape == zb.shape, (za.shape, zb.shape)
    n = za.shape[0]
    step = 1 << 24
    for s in range(0, n, step):
        assert np.array_equal(za[s:s + step], zb[s:s + step]), f"zcube and Dask differ in [{s}, {s + step})"
    head = x[:64]
    want = head[head > 1]
    assert np.array_equal(za[:len(want)], want), "zcube's first values are not NumPy's"
    print(json.dumps({"checked_values": n, "numpy_checked": len(want)}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
