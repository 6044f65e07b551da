#!/usr/bin/python3
"""bench/sample_ref.py — data and zarr-python reference for the sampler
benchmark (bench/sample_bench.sh runs it and `zcube sample --bench`).

  sample_ref.py gen DIR [--nt T] [--seed N]
      Writes with zarr-python (Zarr v2, float32, shape (T, 512, 512, 10)):
        DIR/lz4.zarr   chunks (1, 64, 64, 10) = 160 KiB, blosc lz4 clevel 5 shuffle
        DIR/tiny.zarr  chunks (1, 16, 16, 4) = 4 KiB, same codec, one file per chunk
      The same values go to both (a smooth field plus noise, so lz4 compresses
      it about as it does real float32 fields).
  sample_ref.py time DIR CASE ORIGINS_DIR [--threads 1,2,4,8] [--check N]
      Reads with zarr-python the crops whose origins zcube wrote
      (ORIGINS_DIR/origins_*.npy, int64 (batch, 4)), one z[...] per crop, on a
      thread pool of each size; prints one JSON line per thread count and one
      with the best. With --check N, the crops of the first N batches are
      compared with zcube's batch_k.npy files there (must be identical).
  sample_ref.py decode DIR CASE [--chunks N]
      Decode-only rate: N stored chunks of the array are read into memory, then
      decoded with numcodecs' Blosc (the same c-blosc library zcube links),
      single-threaded (numcodecs.blosc.use_threads = False), best of 3 passes.
      Prints stored bytes/s and decoded bytes/s per thread. A cross-check of
      bench/sample_decode (C, no Python call per chunk), whose rate is the
      ceiling's basis.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import random
import sys
import time

import numpy as np
import numcodecs
import zarr
from numcodecs import Blosc

SHAPE_YXC = (512, 512, 10)
CHUNKS = {"lz4": (1, 64, 64, 10), "tiny": (1, 16, 16, 4)}


def compressor():
    return Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)


def field(t0, nt, rng):
    ny, nx, nc = SHAPE_YXC
    lat = np.linspace(-np.pi / 2, np.pi / 2, ny, dtype=np.float32)[:, None]
    lon = np.linspace(0, 2 * np.pi, nx, endpoint=False, dtype=np.float32)[None, :]
    out = np.empty((nt, ny, nx, nc), dtype=np.float32)
    for k in range(nt):
        t = np.float32((t0 + k) * 0.05)
        for c in range(nc):
            f = 250.0 + 45.0 * np.cos(lat) ** 2 + c
            f = f + 6.0 * np.sin(3 * lon - t + c) * np.cos(2 * lat)
            f = f + 3.0 * np.sin(7 * lon + 2 * lat + 0.7 * t)
            f = f + rng.normal(0.0, 0.4, size=(ny, nx)).astype(np.float32)
            out[k, :, :, c] = f
    return out


def gen(args):
    os.makedirs(args.dir, exist_ok=True)
    shape = (args.nt,) + SHAPE_YXC
    rng = np.random.default_rng(args.seed)
    arrays = {name: zarr.open(os.path.join(args.dir, name + ".zarr"), mode="w", shape=shape, chunks=ch,
                              dtype="<f4", compressor=compressor(), fill_value=0.0)
              for name, ch in CHUNKS.items()}
    step = 4
    for t0 in range(0, args.nt, step):
        slab = field(t0, min(step, args.nt - t0), rng)
        for z in arrays.values():
            z[t0:t0 + slab.shape[0]] = slab
    sizes = {}
    for name in CHUNKS:
        root = os.path.join(args.dir, name + ".zarr")
        sizes[name] = sum(os.path.getsize(os.path.join(root, k)) for k in os.listdir(root) if not k.startswith("."))
    print(json.dumps({"generated": args.dir, "shape": shape, "chunks": CHUNKS, "stored_bytes": sizes,
                      "decoded_bytes": int(np.prod(shape)) * 4}))


def load_origins(odir):
    files = sorted(glob.glob(os.path.join(odir, "origins_*.npy")),
                   key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    if not files:
        sys.exit(f"sample_ref: no origins_*.npy in {odir}")
    return [np.load(f) for f in files]


def time_case(args):
    z = zarr.open(os.path.join(args.dir, args.case + ".zarr"), mode="r")
    window = tuple(int(v) for v in args.window.split(","))
    batches = load_origins(args.origins)
    origins = [tuple(int(v) for v in o) for b in batches for o in b]
    crop_bytes = int(np.prod(window)) * 4

    def read(o):
        return z[tuple(slice(a, a + w) for a, w in zip(o, window))]

    # correctness: zarr-python's crops equal zcube's batches
    for k in range(min(args.check, len(batches))):
        path = os.path.join(args.origins, f"batch_{k}.npy")
        if not os.path.exists(path):
            sys.exit(f"sample_ref: {path} is missing: cannot check zarr-python's crops against zcube's")
        ref = np.load(path)
        for i, o in enumerate(batches[k]):
            if not np.array_equal(read(tuple(int(v) for v in o)), ref[i]):
                sys.exit(f"sample_ref: crop {i} of batch {k} at {tuple(o)} differs between zarr-python and zcube")
    read(origins[0])  # open files, import codecs
    results = []
    for nthreads in [int(v) for v in args.threads.split(",")]:
        t = time.perf_counter()
        if nthreads == 1:
            for o in origins:
                read(o)
        else:
            with cf.ThreadPoolExecutor(nthreads) as ex:
                for _ in ex.map(read, origins):
                    pass
        dt = time.perf_counter() - t
        r = {"case": args.case, "reader": "zarr-python", "zarr_version": zarr.__version__, "threads": nthreads,
             "crops": len(origins), "seconds": dt, "crops_per_s": len(origins) / dt,
             "decoded_gb_per_s": len(origins) * crop_bytes / dt / 1e9}
        results.append(r)
        print(json.dumps(r), flush=True)
    best = max(results, key=lambda r: r["crops_per_s"])
    print(json.dumps(dict(best, best=True)), flush=True)


def decode(args):
    numcodecs.blosc.use_threads = False
    root = os.path.join(args.dir, args.case + ".zarr")
    keys = [k for k in os.listdir(root) if not k.startswith(".")]
    random.Random(1).shuffle(keys)
    keys = keys[:args.chunks]
    blobs = []
    for k in keys:
        with open(os.path.join(root, k), "rb") as f:
            blobs.append(f.read())
    codec = compressor()
    out = np.empty(int(np.prod(CHUNKS[args.case])), dtype=np.float32)
    stored = sum(len(b) for b in blobs)
    best = None
    for _ in range(3):
        t = time.perf_counter()
        for b in blobs:
            codec.decode(b, out=out)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    print(json.dumps({"case": args.case, "decode_only": True, "chunks": len(blobs), "seconds": best,
                      "stored_bytes_per_s": stored / best, "decoded_bytes_per_s": len(blobs) * out.nbytes / best,
                      "chunks_per_s": len(blobs) / best, "compression_ratio": len(blobs) * out.nbytes / stored}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--nt", type=int, default=64)
    g.add_argument("--seed", type=int, default=20240601)
    t = sub.add_parser("time")
    t.add_argument("dir")
    t.add_argument("case", choices=tuple(CHUNKS))
    t.add_argument("origins")
    t.add_argument("--window", default="4,128,128,10")
    t.add_argument("--threads", default="1,2,4,8")
    t.add_argument("--check", type=int, default=1)
    d = sub.add_parser("decode")
    d.add_argument("dir")
    d.add_argument("case", choices=tuple(CHUNKS))
    d.add_argument("--chunks", type=int, default=2000)
    args = p.parse_args()
    {"gen": gen, "time": time_case, "decode": decode}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
