"""bench/http_ref.py — the references of bench/http_bench.sh.

  http_ref.py gen DIR SCALE            write DIR/lz4.zarr (blosc-lz4, 4 MiB chunks),
                                       DIR/small.zarr (same data, the sharded array's
                                       inner chunks) and DIR/regions.txt (1,000 crops)
  http_ref.py zarr URL [REGIONS [WORKERS]]  zarr-python 2.13 + fsspec's HTTP filesystem
                                       (aiohttp) reads the whole array or the crops
  http_ref.py zarr URL - WORKERS       the whole array as slabs of planes, WORKERS threads
Prints {"seconds", "cpu_s", "bytes", "checksum"} like bench_http.

Settings, as the libraries' experts would have them for this: zarr 2.13 asks
for all chunks of a selection at once (FSStore.getitems -> fsspec's cat), and
fsspec runs them concurrently (its batch for many small files: 1280; aiohttp's
pool: 100 connections per host, more than zcube's 64); blosc decodes with
every core (numcodecs' default in the main thread, set explicitly here). A
whole read as one a[:] fetches everything before decoding anything, so the
slab variant (threads each reading a slab of planes) overlaps the two; the
bench keeps the faster of both. Both variants end with the whole array in
one fresh NumPy array, as zcube's read does (the slabs are decoded into it
with get_basic_selection(out=...)); until session 19 each slab was read into
an array of its own and dropped, so the slab variant reused 64 MiB of memory
where zcube filled 1 GiB of fresh pages."""
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def checksum(a):
    return int(np.ascontiguousarray(a).view(np.uint32).sum(dtype=np.uint64))


def gen(d, scale):
    import numcodecs
    import zarr
    nz = max(2, int(256 * scale))
    shape = (nz, 1024, 1024)
    comp = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    big = zarr.open(d + "/lz4.zarr", mode="w", shape=shape, chunks=(1, 1024, 1024), dtype="f4", compressor=comp)
    small = zarr.open(d + "/small.zarr", mode="w", shape=shape, chunks=(1, 256, 256), dtype="f4", compressor=comp)
    rng = np.random.default_rng(0)
    x = np.linspace(0, 20, 1024, dtype="f4")
    for z in range(nz):  # smooth field plus noise: compresses like measured data, not like pure noise
        plane = (np.sin(x[None, :] + z * 0.1) * np.cos(x[:, None]) +
                 0.01 * rng.standard_normal((1024, 1024), dtype="f4")).astype("f4")
        big[z] = plane
        small[z] = plane
    with open(d + "/regions.txt", "w") as f:
        for _ in range(1000):
            dz, dy, dx = 2, int(rng.integers(32, 200)), int(rng.integers(32, 200))
            z0, y0, x0 = int(rng.integers(0, nz - dz + 1)), int(rng.integers(0, 1024 - dy)), int(rng.integers(0, 1024 - dx))
            f.write("%d %d %d %d %d %d\n" % (z0, z0 + dz, y0, y0 + dy, x0, x0 + dx))


def read_zarr(url, regions=None, workers=1):
    import numcodecs
    import zarr
    numcodecs.blosc.use_threads = True
    a = zarr.open_array(url, mode="r")
    t0, c0 = time.perf_counter(), time.process_time()
    if regions is None:
        v = a[:]
        total, nbytes = checksum(v), v.nbytes
    elif regions == "-":  # whole, as slabs of planes read by `workers` threads into one array
        numcodecs.blosc.use_threads = False  # blosc's threads are not for worker threads
        step = max(1, a.chunks[0] * max(1, a.shape[0] // (a.chunks[0] * workers * 4)))
        v = np.empty(a.shape, a.dtype)

        def slab(z):
            a.get_basic_selection(slice(z, z + step), out=v[z:z + step])
        with ThreadPoolExecutor(workers) as ex:
            list(ex.map(slab, range(0, a.shape[0], step)))
        total, nbytes = checksum(v), v.nbytes
    else:
        boxes = [list(map(int, line.split())) for line in open(regions)]

        def one(b):
            v = a[b[0]:b[1], b[2]:b[3], b[4]:b[5]]
            return checksum(v), v.nbytes
        if workers > 1:
            with ThreadPoolExecutor(workers) as ex:
                res = list(ex.map(one, boxes))
        else:
            res = [one(b) for b in boxes]
        total, nbytes = sum(r[0] for r in res) % (1 << 64), sum(r[1] for r in res)
    t1, c1 = time.perf_counter(), time.process_time()
    print(json.dumps({"seconds": round(t1 - t0, 4), "cpu_s": round(c1 - c0, 4), "bytes": nbytes,
                      "checksum": total % (1 << 64)}))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], float(sys.argv[3]))
    else:
        read_zarr(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None,
                  int(sys.argv[4]) if len(sys.argv) > 4 else 1)
