#!/usr/bin/python3
"""bench/read_ref.py — data generation and zarr-python reference timings for
the read benchmark (bench/read_bench.sh runs it; bench/bench_read compares).

  /usr/bin/python3 bench/read_ref.py gen DIR [--scale S] [--seed N]
      Writes DIR/{none,lz4,zstd}.zarr with zarr-python (Zarr v2), float32,
      shape (256*S, 1024, 1024) rounded to whole time chunks, chunks
      (16, 256, 256) = 4 MiB, and DIR/regions.txt: 1,000 random crops.
  /usr/bin/python3 bench/read_ref.py time DIR --cache cold|warm [--reps N]
                                      [--codec C] [--phase whole|regions]
                                      [--buffer prealloc|fresh]
      Times zarr-python reading each whole array and the 1,000 crops; prints
      one JSON object per (codec, phase) with the seconds (wall clock), the
      process CPU seconds (all threads, blosc's included) and two checksums.
      Whole reads, --buffer: prealloc (default) reads into one array allocated
      and touched before timing, z.get_basic_selection(..., out=buf) (zarr
      decodes whole chunks straight into it); fresh reads z[...], a new array
      per timed read. bench_read gives zcube the same treatment.

The data imitates a reanalysis field (2 m temperature-like): a smooth
latitude gradient and travelling waves plus small-scale noise, so that it
compresses as real float32 fields do (poorly without shuffle) rather than
as zeros or pure noise.

Checksums, printed as 16 hex digits, so that bench_read can check it read the
same values in the same places: the sum of the values' uint32 bit patterns
modulo 2**64, and an order-sensitive one, the sum of (i + 1) * word[i] modulo
2**64 over the C-order words (regions: per crop, folded in crop order as
h = h * 1000003 + crop's, mod 2**64).

regions.txt: a header line "# shape T Y X crop CT CY CX seed N", then one
line "t y x" (start corner) per crop.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import zarr
from numcodecs import Blosc, Zstd

CODECS = ("none", "lz4", "zstd")
CHUNKS = (16, 256, 256)
CROP = (4, 128, 128)
NREGIONS = 1000


def compressor(name):
    if name == "none":
        return None
    if name == "lz4":
        return Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    if name == "zstd":
        return Zstd(level=3)
    raise ValueError(name)


def field(t0, nt, ny, nx, rng):
    """Time steps [t0, t0+nt) of the synthetic temperature field, float32."""
    lat = np.linspace(-np.pi / 2, np.pi / 2, ny, dtype=np.float32)[:, None]
    lon = np.linspace(0, 2 * np.pi, nx, endpoint=False, dtype=np.float32)[None, :]
    out = np.empty((nt, ny, nx), dtype=np.float32)
    for k in range(nt):
        t = np.float32((t0 + k) * 0.05)
        f = 250.0 + 45.0 * np.cos(lat) ** 2
        f = f + 6.0 * np.sin(3 * lon - t) * np.cos(2 * lat)
        f = f + 3.0 * np.sin(7 * lon + 2 * lat + 0.7 * t)
        f = f + rng.normal(0.0, 0.4, size=(ny, nx)).astype(np.float32)
        out[k] = f
    return out


def gen(args):
    os.makedirs(args.dir, exist_ok=True)
    nt = max(CHUNKS[0], int(round(256 * args.scale / CHUNKS[0])) * CHUNKS[0])
    shape = (nt, 1024, 1024)
    rng = np.random.default_rng(args.seed)
    arrays = {}
    for name in CODECS:
        arrays[name] = zarr.open(os.path.join(args.dir, name + ".zarr"), mode="w", shape=shape,
                                 chunks=CHUNKS, dtype="<f4", compressor=compressor(name),
                                 fill_value=0.0)
    # one slab of time chunks at a time, the same values into every array
    for t0 in range(0, nt, CHUNKS[0]):
        slab = field(t0, CHUNKS[0], shape[1], shape[2], rng)
        for name in CODECS:
            arrays[name][t0:t0 + CHUNKS[0]] = slab
    rrng = np.random.default_rng(args.seed + 1)
    with open(os.path.join(args.dir, "regions.txt"), "w") as f:
        f.write("# shape %d %d %d crop %d %d %d seed %d n %d\n" % (shape + CROP + (args.seed, NREGIONS)))
        for _ in range(NREGIONS):
            corner = [int(rrng.integers(0, shape[d] - CROP[d] + 1)) for d in range(3)]
            f.write("%d %d %d\n" % tuple(corner))
    sizes = {}
    for name in CODECS:
        root = os.path.join(args.dir, name + ".zarr")
        sizes[name] = sum(os.path.getsize(os.path.join(root, k)) for k in os.listdir(root)
                          if not k.startswith("."))
    print(json.dumps({"generated": args.dir, "shape": shape, "chunks": CHUNKS, "crop": CROP,
                      "stored_bytes": sizes, "decoded_bytes": int(np.prod(shape)) * 4}))


def read_regions(path):
    with open(path) as f:
        head = f.readline().split()
        crop = tuple(int(v) for v in head[6:9])
        corners = [tuple(int(v) for v in line.split()) for line in f if line.strip()]
    return crop, corners


def checksum(a):
    return int(a.view(np.uint32).sum(dtype=np.uint64))


def checksum_ordered(a, slab=1 << 24):
    """sum of (i + 1) * word[i] mod 2**64 (uint64 arithmetic wraps), in slabs"""
    w = a.reshape(-1).view(np.uint32)
    s = np.uint64(0)
    with np.errstate(over="ignore"):
        for i0 in range(0, w.size, slab):
            x = w[i0:i0 + slab].astype(np.uint64)
            x *= np.arange(i0 + 1, i0 + 1 + x.size, dtype=np.uint64)
            s += x.sum(dtype=np.uint64)
    return int(s)


def drop_caches(mode):
    """cold: flush the page cache (needs root); returns False if not possible."""
    if mode != "cold":
        return True
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def time_all(args):
    crop, corners = read_regions(os.path.join(args.dir, "regions.txt"))
    for name in CODECS:
        if args.codec and name != args.codec:
            continue
        z = zarr.open(os.path.join(args.dir, name + ".zarr"), mode="r")
        if args.phase in (None, "whole"):
            time_whole(args, name, z)
        if args.phase in (None, "regions"):
            time_regions(args, name, z, crop, corners)


def time_whole(args, name, z):
    best = None
    cs = None
    dropped = True
    out = None
    if args.buffer == "prealloc":
        out = np.empty(z.shape, dtype=z.dtype)
        out[...] = 0  # touched once, untimed, as bench_read's buffer
    if args.cache == "warm":
        z[...]  # warm the page cache
    cpu = None
    for _ in range(args.reps):
        dropped = drop_caches(args.cache) and dropped
        c = time.process_time()
        t = time.perf_counter()
        if out is None:
            a = z[...]
        else:
            a = z.get_basic_selection(Ellipsis, out=out)
        dt = time.perf_counter() - t
        c = time.process_time() - c
        if best is None or dt < best:
            best, cpu = dt, c
        if cs is None:
            a = out if out is not None else a
            cs = (checksum(a), checksum_ordered(a))
        del a
    print(json.dumps({"codec": name, "phase": "whole", "buffer": args.buffer, "cache": args.cache,
                      "cache_dropped": dropped and args.cache == "cold", "seconds": best,
                      "cpu_seconds": cpu, "reps": args.reps, "bytes": z.nbytes,
                      "checksum": "%016x" % cs[0], "checksum_ordered": "%016x" % cs[1]}), flush=True)


def time_regions(args, name, z, crop, corners):
    """The same list of crops as bench_read, in order, one read each."""
    if args.cache == "warm":
        z[...]
    dropped = drop_caches(args.cache)
    total = 0.0
    cs = 0
    ocs = 0
    nbytes = 0
    cpu = 0.0
    for (t0, y0, x0) in corners:
        c = time.process_time()
        t = time.perf_counter()
        a = z[t0:t0 + crop[0], y0:y0 + crop[1], x0:x0 + crop[2]]
        total += time.perf_counter() - t
        cpu += time.process_time() - c
        cs = (cs + checksum(a)) % (1 << 64)
        ocs = (ocs * 1000003 + checksum_ordered(a)) % (1 << 64)
        nbytes += a.nbytes
    print(json.dumps({"codec": name, "phase": "regions", "cache": args.cache,
                      "cache_dropped": dropped and args.cache == "cold", "seconds": total,
                      "cpu_seconds": cpu, "reps": 1,
                      "bytes": nbytes, "checksum": "%016x" % cs, "checksum_ordered": "%016x" % ocs}),
          flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    g.add_argument("--seed", type=int, default=20240601)
    t = sub.add_parser("time")
    t.add_argument("dir")
    t.add_argument("--cache", choices=("cold", "warm"), default="cold")
    t.add_argument("--reps", type=int, default=1)
    t.add_argument("--codec", choices=CODECS, help="time this codec only")
    t.add_argument("--phase", choices=("whole", "regions"), help="time this phase only")
    t.add_argument("--buffer", choices=("prealloc", "fresh"), default="prealloc",
                   help="whole reads: into a preallocated out= array or a new array per read")
    args = p.parse_args()
    if args.cmd == "gen":
        gen(args)
    else:
        time_all(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
