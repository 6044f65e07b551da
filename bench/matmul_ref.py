#!/usr/bin/python3
"""bench/matmul_ref.py — the peers of bench/matmul_bench.sh on the same Zarr data.

  matmul_ref.py gen DIR N CHUNK      a.zarr, b.zarr: N×N float64 uniform(-0.5, 0.5), CHUNK² blocks,
                                     Zarr v2 blosc lz4 shuffle (what both peers read)
  matmul_ref.py dask DIR THREADS     DIR/dask.zarr = a @ b with dask.array (threaded scheduler)
  matmul_ref.py numpy DIR THREADS    a and b read whole, A @ B (NumPy on OpenBLAS), written to numpy.zarr
  matmul_ref.py check DIR            c.zarr (zcube), dask.zarr, numpy.zarr agree to 1e-12 (relative to max |C|)
Each peer prints one JSON line: wall seconds (read + product + write), the product alone
(numpy), CPU seconds and the peak RSS (getrusage)."""
import json
import os
import resource
import sys
import time

import numpy as np
import zarr
from numcodecs import Blosc

COMP = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)


def usage():
    return {"seconds_cpu": resource.getrusage(resource.RUSAGE_SELF).ru_utime +
            resource.getrusage(resource.RUSAGE_SELF).ru_stime,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "gen":
        n, c = int(sys.argv[3]), int(sys.argv[4])
        rng = np.random.default_rng(0)
        for name in ("a", "b"):
            z = zarr.open(os.path.join(d, f"{name}.zarr"), mode="w", shape=(n, n), chunks=(c, c), dtype="f8",
                          compressor=COMP)
            for i in range(0, n, c):
                z[i:i + c] = rng.uniform(-0.5, 0.5, (min(c, n - i), n))
        return
    if mode == "dask":
        import dask
        import dask.array as da
        threads = int(sys.argv[3])
        t0 = time.monotonic()
        a, b = da.from_zarr(os.path.join(d, "a.zarr")), da.from_zarr(os.path.join(d, "b.zarr"))
        with dask.config.set(scheduler="threads", num_workers=threads):
            (a @ b).to_zarr(os.path.join(d, "dask.zarr"), compressor=COMP, overwrite=True)
        print(json.dumps({"peer": "dask", "seconds": round(time.monotonic() - t0, 3), **usage()}))
        return
    if mode == "numpy":
        t0 = time.monotonic()
        a = zarr.open(os.path.join(d, "a.zarr"), mode="r")[...]
        b = zarr.open(os.path.join(d, "b.zarr"), mode="r")[...]
        t1 = time.monotonic()
        c = a @ b
        t2 = time.monotonic()
        z = zarr.open(os.path.join(d, "numpy.zarr"), mode="w", shape=c.shape, chunks=zarr.open(
            os.path.join(d, "a.zarr"), mode="r").chunks, dtype=c.dtype, compressor=COMP)
        z[...] = c
        print(json.dumps({"peer": "numpy", "seconds": round(time.monotonic() - t0, 3),
                          "matmul_seconds": round(t2 - t1, 3), **usage()}))
        return
    if mode == "check":
        ref = None
        out = {}
        for name in ("numpy.zarr", "c.zarr", "dask.zarr"):
            p = os.path.join(d, name)
            if not os.path.exists(p):
                continue
            v = zarr.open(p, mode="r")[...]
            if ref is None:
                ref, scale = v, float(np.abs(v).max())
                continue
            out[name] = float(np.abs(v - ref).max() / scale)
        print(json.dumps({"max_rel_diff_vs_numpy": out}))
        sys.exit(0 if all(x < 1e-12 for x in out.values()) else 1)


if __name__ == "__main__":
    main()
