"""zcube writes Zarr v3, zarrita (JS) reads.

A seeded random matrix of v3 arrays made with `zcube create --zarr-format 3`
(and, for a quarter of them, `zcube copy --zarr-format 3` of a v2 array
zarr-python wrote, with new codecs, chunks and shards)
(codecs bytes, zstd, gzip, zlib, lz4, blosc, optionally crc32c; sharded or
not, with shapes that leave partial shards and partial inner chunks at the
edges; fill values incl. NaN/Infinity; both chunk key separators) and filled
with `zcube put` (whole array, regions, both, or nothing). One node process
then reads every array with zarrita, whole and a random region, and dumps the
bytes; they must equal, exactly, what zcube was given.

Usage: /usr/bin/python3 zcube_to_zarrita.py ZCUBE [--count N] [--seed S]
"""

import argparse
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import interop_common as ic  # noqa: E402

CODECS = ["none", "zstd", "zstd:3", "zstd:-2", "gzip", "gzip:9", "zlib:4", "lz4", "lz4:5",
          "blosc", "blosc:zstd:5:bitshuffle", "blosc:lz4:1:shuffle", "blosc:blosclz:9:noshuffle",
          "blosc:lz4hc:4:shuffle", "blosc:zlib:3:bitshuffle"]


def make_fill(rng, dtype):
    """(text for --fill-value or None for the default, value it stands for)."""
    r = rng.random()
    if r < 0.3:
        return None, 0
    if dtype == "bool":
        return ("true", True) if rng.random() < 0.5 else ("false", False)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [7, int(info.max) if dt.itemsize < 8 else 2 ** 40, -5 if dt.kind == "i" else 255 % (int(info.max) + 1)]
        if dt.kind == "i":
            vals.append(int(info.min) if dt.itemsize < 8 else -(2 ** 50))
        v = vals[int(rng.integers(0, len(vals)))]
        return str(v), v
    vals = [("NaN", np.nan), ("Infinity", np.inf), ("-Infinity", -np.inf), ("-2.5", -2.5), ("1e-3", 1e-3),
            ("-0.0", -0.0)]
    return vals[int(rng.integers(0, len(vals)))]


def make_case(rng, zc, work, i, dtype, codec):
    shape, chunks = ic.random_shape_chunks(rng, max_elems=3000, max_chunks=150)
    shards = None
    if rng.random() < 0.55:
        # shard = k inner chunks per dimension; the array rarely divides evenly
        shards = tuple(c * int(rng.integers(1, 4)) for c in chunks)
    if codec != "none" and rng.random() < 0.3:
        codec += ",crc32c"
    elif codec == "none" and rng.random() < 0.2:
        codec = "none,crc32c"
    sep = "/" if rng.random() < 0.6 else "."
    fill_text, fill = make_fill(rng, dtype)
    dt = np.dtype("|b1" if dtype == "bool" else dtype)
    # alternate v3 names and NumPy spellings for --dtype
    dtype_arg = dtype if rng.random() < 0.7 else dt.newbyteorder("=").str
    path = os.path.join(work, "a%03d.zarr" % i)
    args = ["create", path, "--zarr-format", "3", "--shape", ",".join(map(str, shape)),
            "--dtype", dtype_arg, "--chunks", ",".join(map(str, chunks)), "--codec", codec,
            "--separator", sep]
    if shards:
        args += ["--shards", ",".join(map(str, shards))]
    if fill_text is not None:
        args += ["--fill-value=" + fill_text]
    desc = "dtype=%s shape=%s chunks=%s shards=%s codec=%s sep=%s fill=%s" % (
        dtype, shape, chunks, shards, codec, sep, fill_text)
    case = {"id": i, "path": path, "dtype": dtype, "desc": desc, "cmds": [zc.command_line(*args)]}
    zc.run(*args)
    expected = np.full(shape, fill, dtype=dt)

    def make_data(s):
        return ic.random_data(rng, dt, s, smooth=rng.random() < 0.3)

    plan, done = ic.random_writes(rng, zc, path, expected, make_data, work, str(i))
    case["desc"] += " writes=%s" % plan
    case["cmds"] += done
    for _ in range(20):   # zarrita's get() fails on an empty selection
        text, items = ic.random_region(rng, shape)
        if ic.take(expected, items).size:
            break
    case["region_text"] = text
    case["region"] = ic.expand_region(items, shape)
    case["expected"] = expected
    case["expected_region"] = ic.take(expected, items)
    case["chunks"] = chunks
    case["fill"] = fill
    return case


def make_copy_case(rng, zc, work, i, dtype, codec):
    """zarr-python writes a v2 array; `zcube copy --zarr-format 3` converts it
    (codec, chunks and shards changed or kept); zarrita reads the copy."""
    import zarr
    from numcodecs import GZip, LZ4, Blosc, Zlib, Zstd
    dt = np.dtype("|b1" if dtype == "bool" else dtype)
    if dt.itemsize > 1 and rng.random() < 0.4:
        dt = dt.newbyteorder(">")
    shape, chunks = ic.random_shape_chunks(rng, max_elems=3000, max_chunks=100)
    # compressors zarrita can read (when the copy keeps the source's: no --codec)
    comps = [None, Zstd(level=3), LZ4(), Zlib(level=5), GZip(level=1),
             Blosc(cname="zstd", clevel=4, shuffle=Blosc.BITSHUFFLE),
             Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)]
    comp = comps[int(rng.integers(0, len(comps)))]
    _t, fill = make_fill(rng, dtype)
    src = os.path.join(work, "src%03d.zarr" % i)
    z = zarr.open_array(src, mode="w", shape=shape, chunks=chunks, dtype=dt, compressor=comp,
                        fill_value=fill, order="F" if rng.random() < 0.4 else "C",
                        dimension_separator="/" if rng.random() < 0.5 else ".")
    data = ic.random_data(rng, dt, shape, smooth=rng.random() < 0.3)
    if rng.random() < 0.5:
        z[...] = data
    else:
        _t, items = ic.random_region(rng, shape)
        z[items] = ic.take(data, items)          # the rest stays missing (fill)
    reopened = zarr.open_array(src, mode="r")
    expected = reopened[...]
    fill = reopened.fill_value   # as stored: zarr-python 2.13 writes a -0.0 fill as 0.0
    dst = os.path.join(work, "a%03d.zarr" % i)
    args = ["copy", src, dst, "--zarr-format", "3"]
    if rng.random() < 0.7:
        args += ["--codec", codec]
    new_chunks = chunks
    r = rng.random()
    if r < 0.3:
        new_chunks = ic.random_shape_chunks_for(rng, shape, max_chunks=100)
        args += ["--chunks", ",".join(map(str, new_chunks))]
    unit = new_chunks
    if rng.random() < 0.6:
        unit = tuple(c * int(rng.integers(1, 4)) for c in new_chunks)
        args += ["--shards", ",".join(map(str, unit))]
    if rng.random() < 0.4:
        # a small memory bound: 1-3 write units (shard or chunk), but at least 1 MiB,
        # since copy's --max-mem bounds everything a task holds (decoders, codec
        # state), which the engine does not plan under a few hundred KB
        nbytes = int(np.prod(unit)) * dt.itemsize
        args.append("--max-mem=%dB" % max(nbytes * int(rng.integers(1, 4)), 1 << 20))
    if rng.random() < 0.3:
        args.append("--threads=%d" % int(rng.integers(1, 4)))
    case = {"id": i, "path": dst, "dtype": dtype,
            "desc": "copy of zarr-python v2 dtype=%s shape=%s chunks=%s compressor=%s fill=%r" % (
                dt.str, shape, chunks, comp.get_config() if comp else None, fill),
            "cmds": ["zarr-python wrote %s" % src, zc.command_line(*args)]}
    zc.run(*args)
    for _ in range(20):
        text, items = ic.random_region(rng, shape)
        if ic.take(expected, items).size:
            break
    case.update(region_text=text, region=ic.expand_region(items, shape), expected=expected,
                expected_region=ic.take(expected, items), chunks=new_chunks, fill=fill)
    return case


def check(case, r):
    if not r.get("ok"):
        return "zarrita failed to read: %s" % r.get("error")
    if r["dtype"] != case["dtype"]:
        return "zarrita sees dtype %s, expected %s" % (r["dtype"], case["dtype"])
    if list(r["shape"]) != list(case["expected"].shape):
        return "zarrita sees shape %s, expected %s" % (r["shape"], list(case["expected"].shape))
    if list(r["chunks"]) != list(case["chunks"]):
        return "zarrita sees (inner) chunks %s, expected %s" % (r["chunks"], list(case["chunks"]))
    fv = r["fill_value"]
    if isinstance(fv, str) and fv in ("NaN", "Infinity", "-Infinity", "-0.0"):
        fv = float(fv)
    elif isinstance(fv, str):
        fv = int(fv)
    dt = case["expected"].dtype
    if fv is None or ic.compare_arrays(np.array(case["fill"], dtype=dt), np.array(fv, dtype=dt)):
        return "zarrita sees fill_value %r, expected %r" % (r["fill_value"], case["fill"])
    got = ic.load_zarrita_dump(r["whole"], case["dtype"])
    why = ic.compare_arrays(case["expected"], got)
    if why:
        return "whole array: %s" % why
    got = ic.load_zarrita_dump(r["region"], case["dtype"])
    why = ic.compare_arrays(case["expected_region"], got)
    if why:
        return "region %s (zarrita selection %s): %s" % (case["region_text"], case["region"], why)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zcube")
    ap.add_argument("--count", type=int, default=int(os.environ.get("ZC_INTEROP_COUNT", "120")))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", type=int, action="append")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else ic.seed_from_env(20240612)
    dtypes = list(ic.ZARRITA_DTYPES) + (["float16"] if ic.node_has_float16() else [])
    print("seed %d (ZC_INTEROP_SEED=%d to repeat), %d arrays; dtypes %s"
          % (seed, seed, args.count, ",".join(dtypes)), flush=True)
    rng = np.random.default_rng(seed)
    zc = ic.Zcube(args.zcube)
    res = ic.Results("zcube_to_zarrita")
    work = ic.make_workdir("zc-interop-zc2zr-")
    t0 = time.time()
    try:
        dts = cycle_items(rng, dtypes)
        cds = cycle_items(rng, CODECS)
        cases = []
        for i in range(args.count):
            dtype, codec = next(dts), next(cds)
            if args.only and i not in args.only:
                continue
            crng = np.random.default_rng([seed, i])
            try:
                if crng.random() < 0.25:  # the copy cases convert arrays zarr-python wrote
                    cases.append(make_copy_case(crng, zc, work, i, dtype, codec))
                else:
                    cases.append(make_case(crng, zc, work, i, dtype, codec))
            except ic.ZcubeError as e:
                res.fail("case %d [dtype=%s codec=%s]" % (i, dtype, codec),
                         "zcube failed while writing:\n" + e.describe())
            except Exception:
                res.fail("case %d [dtype=%s codec=%s]" % (i, dtype, codec),
                         "harness error:\n" + traceback.format_exc())
        manifest = {"cases": [{"id": c["id"], "path": c["path"], "region": c["region"]}
                              for c in cases]}
        results = ic.run_zarrita(HERE, "read", manifest, work)
        for c in cases:
            label = "case %d [%s]" % (c["id"], c["desc"])
            why = check(c, results[c["id"]])
            if why:
                meta = open(os.path.join(c["path"], "zarr.json")).read()
                res.fail(label, "%s\nzcube commands:\n  %s\nzarr.json: %s"
                         % (why, "\n  ".join(c["cmds"]), meta))
            else:
                res.ok(label + " (region %s)" % c["region_text"])
    finally:
        ic.remove_workdir(work)
    print("%d zcube calls, %.1f s" % (zc.calls, time.time() - t0))
    return res.finish()


def cycle_items(rng, items):
    while True:
        for j in rng.permutation(len(items)):
            yield items[int(j)]


if __name__ == "__main__":
    sys.exit(main())
