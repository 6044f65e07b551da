"""zarrita (JS) writes Zarr v3, zcube reads.

A seeded random matrix of v3 arrays written by zarrita: codec chains made of
bytes (little/big endian), transpose, zstd (with and without its checksum),
blosc and numcodecs.lz4 (zarrita 0.7.5 cannot encode gzip, zlib or crc32c); both chunk key
encodings ("default" and "v2") and separators; fill values (NaN/Infinity
included); whole-array writes, region writes, scalar writes and untouched
(missing) chunks. zarrita cannot write sharded arrays (its set() refuses), so
sharding is covered by zcube_to_zarrita and the zarrita fixtures instead.
zcube must report the right shape/dtype/chunks (info --json) and `zcube get`
must return exactly the values written, whole and for a random region.

Usage: /usr/bin/python3 zarrita_to_zcube.py ZCUBE [--count N] [--seed S]
"""

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import interop_common as ic  # noqa: E402

# zarrita 0.7.5 encodes bytes, transpose, zstd, blosc and numcodecs.lz4; it
# refuses to encode gzip, numcodecs.zlib and crc32c ("Unsupported: ... encode").
CHAINS = ["bytes", "bytes-big", "transpose", "zstd", "zstd-checksum", "blosc", "blosc",
          "lz4", "transpose+zstd", "transpose+blosc"]


def codecs_for(rng, chain, dtype, ndim):
    # zarrita byte-swaps bool data in 4-byte groups when endian is "big" (its
    # BoolArray has no static BYTES_PER_ELEMENT), writing misplaced values: bool
    # arrays get "little" only.
    big = (chain == "bytes-big" or rng.random() < 0.2) and dtype != "bool"
    itemsize = np.dtype("|b1" if dtype == "bool" else dtype).itemsize
    # bytes' endian is required for multi-byte types only; zarrita writes it either way
    out = []
    if "transpose" in chain and ndim > 1:
        out.append({"name": "transpose",
                    "configuration": {"order": [int(x) for x in rng.permutation(ndim)]}})
    out.append({"name": "bytes", "configuration": {"endian": "big" if big else "little"}})
    if "gzip" in chain:
        out.append({"name": "gzip", "configuration": {"level": int(rng.integers(0, 10))}})
    if chain.startswith("zstd"):
        out.append({"name": "zstd", "configuration": {"level": int(rng.choice([-1, 1, 3, 9])),
                                                      "checksum": chain == "zstd-checksum"}})
    if chain.endswith("blosc"):
        out.append({"name": "blosc", "configuration": {
            "cname": str(rng.choice(["lz4", "lz4hc", "zstd", "blosclz", "zlib"])),
            "clevel": int(rng.integers(0, 10)),
            "shuffle": str(rng.choice(["noshuffle", "shuffle", "bitshuffle"])),
            "typesize": itemsize, "blocksize": 0}})
    if chain == "zlib":
        out.append({"name": "numcodecs.zlib", "configuration": {"level": int(rng.integers(1, 10))}})
    if chain == "lz4":
        out.append({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}})
    if "crc32c" in chain:
        out.append({"name": "crc32c", "configuration": {}})
    return out


def make_fill(rng, dtype):
    if rng.random() < 0.3:
        return 0 if dtype != "bool" else False
    if dtype == "bool":
        return bool(rng.random() < 0.5)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        # zarrita parses fill values as JS numbers: 64-bit ones stay below 2**53
        vals = [3, int(info.max) if dt.itemsize < 8 else 2 ** 52 + 1]
        if dt.kind == "i":
            vals += [-7, int(info.min)]
        return vals[int(rng.integers(0, len(vals)))]
    # not -0.0: zarrita writes it as JSON 0 (JSON.stringify(-0) is "0")
    vals = [np.nan, np.inf, -np.inf, 2.75, -1e-3]
    return vals[int(rng.integers(0, len(vals)))]


def fill_json(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return str(v)            # the driver turns it into a Number or BigInt
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def js_number_fill(dtype, v):
    """zarrita's create takes a Number for <= 32-bit ints and a BigInt for 64-bit."""
    if dtype in ("int64", "uint64") or isinstance(v, bool) or not isinstance(v, int):
        return fill_json(v)
    return v


def make_case(rng, work, i, dtype, chain):
    shape, chunks = ic.random_shape_chunks(rng, max_elems=3000, max_chunks=120)
    dt = np.dtype("|b1" if dtype == "bool" else dtype)
    fill = make_fill(rng, dtype)
    sep = "/" if rng.random() < 0.6 else "."
    key_enc = "v2" if rng.random() < 0.25 else "default"
    codecs = codecs_for(rng, chain, dtype, len(shape))
    path = os.path.join(work, "a%03d.zarr" % i)
    expected = np.full(shape, fill, dtype=dt)
    writes = []
    plan = ["whole", "regions", "regions", "whole+region", "none", "scalar"][int(rng.integers(0, 6))]
    if plan in ("whole", "whole+region"):
        data = ic.random_data(rng, dt, shape, smooth=rng.random() < 0.3)
        inp = path + ".in0.bin"
        data.astype(dt.newbyteorder("<")).tofile(inp)
        writes.append({"region": None, "input": inp, "shape": list(shape)})
        expected[...] = data
    if plan in ("regions", "whole+region", "scalar"):
        for k in range(int(rng.integers(1, 4))):
            _text, items = ic.random_region(rng, shape)
            region = ic.expand_region(items, shape)
            # zarrita needs slices for a write (integer indices make a 0-d view): widen ints
            region = [[r, r + 1, 1] if isinstance(r, int) else r for r in region]
            np_items = tuple(slice(a, b, s) for a, b, s in region)
            tshape = expected[np_items].shape
            if 0 in tshape:
                continue     # zarrita's set() fails on an empty selection
            if plan == "scalar":
                v = make_fill(rng, dtype)
                writes.append({"region": region, "scalar": js_number_fill(dtype, v)})
                expected[np_items] = v
            else:
                data = ic.random_data(rng, dt, tshape)
                inp = path + ".in%d.bin" % (k + 1)
                data.astype(dt.newbyteorder("<")).tofile(inp)
                writes.append({"region": region, "input": inp, "shape": list(tshape)})
                expected[np_items] = data
    text, items = ic.random_region(rng, shape)
    case = {"id": i, "path": path, "dtype": dtype, "shape": list(shape),
            "chunk_shape": list(chunks), "codecs": codecs, "fill_value": js_number_fill(dtype, fill),
            "separator": sep, "key_encoding": key_enc, "writes": writes}
    desc = "dtype=%s shape=%s chunks=%s codecs=%s fill=%r key_encoding=%s sep=%s writes=%s" % (
        dtype, shape, chunks, json.dumps(codecs), fill, key_enc, sep, plan)
    return case, {"desc": desc, "expected": expected, "region_text": text,
                  "expected_region": ic.take(expected, items), "chunks": chunks}


def check_info(info, shape, chunks, dtype):
    problems = []
    if list(info.get("shape", [])) != list(shape):
        problems.append("shape %r != %r" % (info.get("shape"), list(shape)))
    ch = info.get("chunks", info.get("chunk_shape"))
    if ch is None or list(ch) != list(chunks):
        problems.append("chunks %r != %r" % (ch, list(chunks)))
    d = info.get("dtype", info.get("data_type"))
    rd = ic.reported_dtype(d)
    if rd is None or not ic.same_dtype_family(rd, "|b1" if dtype == "bool" else dtype):
        problems.append("dtype %r != %s" % (d, dtype))
    if info.get("zarr_format", 3) != 3:
        problems.append("zarr_format %r != 3" % info.get("zarr_format"))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zcube")
    ap.add_argument("--count", type=int, default=int(os.environ.get("ZC_INTEROP_COUNT", "120")))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", type=int, action="append")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else ic.seed_from_env(20240613)
    dtypes = list(ic.ZARRITA_DTYPES) + (["float16"] if ic.node_has_float16() else [])
    print("seed %d (ZC_INTEROP_SEED=%d to repeat), %d arrays; dtypes %s"
          % (seed, seed, args.count, ",".join(dtypes)), flush=True)
    rng = np.random.default_rng(seed)
    zc = ic.Zcube(args.zcube)
    res = ic.Results("zarrita_to_zcube")
    work = ic.make_workdir("zc-interop-zr2zc-")
    t0 = time.time()
    try:
        dts = cycle_items(rng, dtypes)
        chs = cycle_items(rng, CHAINS)
        cases, extra = [], {}
        for i in range(args.count):
            dtype, chain = next(dts), next(chs)
            if args.only and i not in args.only:
                continue
            c, x = make_case(np.random.default_rng([seed, i]), work, i, dtype, chain)
            cases.append(c)
            extra[i] = x
        written = ic.run_zarrita(HERE, "write", {"cases": cases}, work)
        # zarrita reads its own arrays back first: a mismatch there is a harness
        # (or zarrita) problem, reported as such, not blamed on zcube.
        reread = ic.run_zarrita(HERE, "read", {"cases": [
            {"id": c["id"], "path": c["path"]} for c in cases if written[c["id"]].get("ok")]}, work)
        out = os.path.join(work, "out.npy")
        for c in cases:
            x = extra[c["id"]]
            label = "case %d [%s]" % (c["id"], x["desc"])
            w = written[c["id"]]
            if not w.get("ok"):
                res.fail(label, "zarrita could not write it (harness problem): %s" % w.get("error"))
                continue
            r = reread[c["id"]]
            why = r.get("error") or ic.compare_arrays(
                x["expected"], ic.load_zarrita_dump(r["whole"], c["dtype"]))
            if why:
                res.fail(label, "zarrita does not read back what it wrote (harness problem): %s" % why)
                continue
            meta = open(os.path.join(c["path"], "zarr.json")).read()
            # every step runs even if an earlier one failed: one FAIL names them all
            problems = []
            steps = (
                ("zcube info --json", lambda: "; ".join(
                    check_info(zc.info_json(c["path"]), c["shape"], x["chunks"], c["dtype"]))),
                ("zcube get (whole)", lambda: ic.compare_arrays(x["expected"], zc.get(c["path"], out))),
                ("zcube get --region=%s" % x["region_text"], lambda: ic.compare_arrays(
                    x["expected_region"], zc.get(c["path"], out, x["region_text"]))),
            )
            for what, fn in steps:
                try:
                    why = fn()
                    if why:
                        problems.append("%s: %s" % (what, why))
                except ic.ZcubeError as e:
                    problems.append("%s failed:\n%s" % (what, e.describe()))
                except Exception:
                    problems.append("%s: harness error:\n%s" % (what, traceback.format_exc()))
            if problems:
                res.fail(label, "\n".join(problems) + "\nzarr.json: %s" % meta)
                continue
            res.ok(label + " (region %s)" % x["region_text"])
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
