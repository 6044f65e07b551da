"""zarr-python (v2) writes, zcube reads.

A seeded random matrix of Zarr v2 arrays over dtypes (both byte orders),
compressors, filters, C/F order, both chunk key separators, 0-4 dimensions with
ragged edge chunks, fill values (NaN included) and missing chunks. zarr-python
writes each array; `zcube info --json` must report its shape, dtype and chunks;
`zcube get` reads the whole array and a random region into .npy files which
must equal what zarr-python itself reads, exactly (floats bit for bit, NaN
matching NaN). Arrays using a codec zcube is known not to support (LZMA,
PackBits) must be refused with an ordinary error, never read wrongly or crash.
After the random matrix come fixed cases: the extreme fill values of every
integer type, special float fills, and a group hierarchy.

Usage: /usr/bin/python3 zarr_python_to_zcube.py ZCUBE [--count N] [--seed S]
(ZC_INTEROP_SEED / ZC_INTEROP_COUNT override the defaults; ZC_INTEROP_KEEP=1
keeps the work folder.)
"""

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop_common as ic  # noqa: E402

import numcodecs  # noqa: E402
import zarr  # noqa: E402
from numcodecs import (BZ2, LZ4, LZMA, AsType, BitRound, Blosc, Delta,  # noqa: E402
                       FixedScaleOffset, GZip, PackBits, Quantize, Shuffle, Zlib, Zstd)

DTYPES = ["|b1", "|i1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8",
          "|u1", "<u2", ">u2", "<u4", ">u4", "<u8", ">u8",
          "<f2", ">f2", "<f4", ">f4", "<f8", ">f8",
          "<c8", ">c8", "<c16", ">c16",
          "|S1", "|S5", "|S12", "<U1", "<U4", ">U3"]

COMPRESSORS = ["none", "blosc", "blosc", "blosc", "zstd", "lz4", "zlib", "gzip", "bz2",
               "none", "blosc", "blosc", "blosc", "zstd", "lz4", "zlib", "gzip", "bz2", "lzma"]
BLOSC_CNAMES = ["lz4", "lz4hc", "zstd", "blosclz", "zlib"]

# Codecs zcube is known not to support: arrays using them must be refused with
# an ordinary error (exit 1 and a message naming the codec), never misread.
KNOWN_UNSUPPORTED = {"lzma": "numcodecs LZMA compressor", "packbits": "numcodecs PackBits filter"}


def make_compressor(rng, kind):
    if kind == "none":
        return None
    if kind == "blosc":
        cname = BLOSC_CNAMES[int(rng.integers(0, len(BLOSC_CNAMES)))]
        shuffle = int(rng.choice([0, 1, 2, 0, 1, 2, -1]))
        clevel = int(rng.choice([0, 1, 3, 5, 9]))
        blocksize = int(rng.choice([0, 0, 0, 256, 1024]))
        return Blosc(cname=cname, clevel=clevel, shuffle=shuffle, blocksize=blocksize)
    if kind == "zstd":
        return Zstd(level=int(rng.choice([-1, 1, 3, 5, 9, 19])))
    if kind == "lz4":
        return LZ4(acceleration=int(rng.choice([1, 1, 4, 10])))
    if kind == "zlib":
        return Zlib(level=int(rng.integers(0, 10)))
    if kind == "gzip":
        return GZip(level=int(rng.integers(0, 10)))
    if kind == "bz2":
        return BZ2(level=int(rng.integers(1, 10)))
    if kind == "lzma":
        return LZMA(preset=1)
    raise ValueError(kind)


def make_filters(rng, dt):
    """(filters list or None, data hints). Hints: 'smooth' asks for small
    values (Delta with a narrower astype), 'fso' gives a value range."""
    hints = {}
    r = rng.random()
    k = dt.kind
    if r < 0.45:
        return None, hints
    choices = ["shuffle"]
    if k in "iuf":
        choices += ["delta", "delta"]
    if k == "f":
        choices += ["fso", "fso"]
    if k == "f" and dt.itemsize >= 4:
        choices += ["astype", "quantize", "bitround"]
    if k == "b":
        choices += ["packbits", "packbits"]
    what = choices[int(rng.integers(0, len(choices)))]
    filters = []
    if what == "shuffle":
        # numcodecs' Shuffle needs element sizes dividing the chunk's bytes
        divisors = [d for d in range(1, dt.itemsize + 1) if dt.itemsize % d == 0]
        es = dt.itemsize if rng.random() < 0.7 else divisors[int(rng.integers(0, len(divisors)))]
        filters.append(Shuffle(elementsize=es))
    elif what == "delta":
        astype = dt.str
        if k in "iu" and rng.random() < 0.4:
            # the same type in the other byte order, or a wider/narrower one
            opts = [dt.newbyteorder("S").str, "<i2", ">i4", "<i8"] if dt.itemsize > 1 else ["<i2", "|i1"]
            astype = opts[int(rng.integers(0, len(opts)))]
            hints["smooth"] = True
        filters.append(Delta(dtype=dt.str, astype=astype))
    elif what == "fso":
        astype = str(rng.choice(["|u1", "<i2", ">i2", "<i4", "<u2", "<i8"]))
        at = np.dtype(astype)
        info = np.iinfo(at)
        scale = float(rng.choice([1, 10, 100, 0.5, 2 ** int(rng.integers(1, 6))]))
        offset = float(rng.choice([0.0, 10.0, -3.25, 1000.0]))
        span = min(int(info.max) - int(info.min), 2 ** 20) / scale / 2.2
        if dt.itemsize == 2:
            span = min(span, 200.0)
            offset = min(offset, 10.0)
        hints["fso"] = (offset + (int(info.min) + int(info.max)) / 2.0 / scale, span)
        filters.append(FixedScaleOffset(offset=offset, scale=scale, dtype=dt.str, astype=astype))
    elif what == "quantize":
        filters.append(Quantize(digits=int(rng.integers(1, 6)), dtype=dt.str))
    elif what == "bitround":
        filters.append(BitRound(keepbits=int(rng.integers(1, 10))))
    elif what == "packbits":
        filters.append(PackBits())
    elif what == "astype":
        enc = "<f4" if dt.itemsize == 8 else "<f2"
        hints["astype_to"] = enc
        filters.append(AsType(encode_dtype=enc, decode_dtype=dt.str))
    if what != "delta" and k in "iu" and rng.random() < 0.3:
        filters.insert(0, Delta(dtype=dt.str))
    return filters, hints


def make_shape(rng):
    r = rng.random()
    if r < 0.02:
        return (), ()
    ndim = int(rng.choice([1, 1, 2, 2, 2, 3, 3, 4]))
    budget = {1: 3000, 2: 4000, 3: 5000, 4: 5000}[ndim]
    per = int(round(budget ** (1.0 / ndim)))
    shape = [int(rng.integers(1, per * 2)) for _ in range(ndim)]
    while np.prod(shape) > budget:
        i = int(np.argmax(shape))
        shape[i] = max(1, shape[i] // 2)
    if rng.random() < 0.03:
        shape[int(rng.integers(0, ndim))] = 0
    chunks = []
    for n in shape:
        if n <= 1 or rng.random() < 0.1:
            c = max(1, n + int(rng.integers(0, 3)))  # one chunk, possibly larger than the array
        else:
            c = int(rng.integers(1, n + 1))
            if rng.random() < 0.7 and n % c == 0 and c > 1:
                c -= 1                                # ragged edge chunks
        chunks.append(c)
    nchunks = np.prod([max(1, -(-n // c)) for n, c in zip(shape, chunks)])
    while nchunks > 160:
        i = int(np.argmax([-(-n // c) for n, c in zip(shape, chunks)]))
        chunks[i] = chunks[i] * 2
        nchunks = np.prod([max(1, -(-n // c)) for n, c in zip(shape, chunks)])
    return tuple(shape), tuple(chunks)


def make_fill(rng, dt):
    k = dt.kind
    r = rng.random()
    if r < 0.1:
        return None
    if r < 0.4:
        return 0 if k not in "SU" else ("" if k == "U" else b"")
    if k == "b":
        return bool(rng.random() < 0.5)
    if k in "iu":
        info = np.iinfo(dt)
        vals = [int(info.min), int(info.max), 7, -1 if k == "i" else 1]
        return vals[int(rng.integers(0, len(vals)))]
    if k == "f":
        vals = [np.nan, np.nan, np.inf, -np.inf, -0.0, 1.5, -1234.25]
        return vals[int(rng.integers(0, len(vals)))]
    if k == "c":
        return complex(rng.choice([1.5, -2.0, np.nan]), rng.choice([0.25, -1.0]))
    if k == "S":
        return b"xy\xff"[:dt.itemsize]
    if k == "U":
        return "zé\U0001F600"[:dt.itemsize // 4]
    raise ValueError(dt)


def chunk_files(path):
    out = []
    for root, _dirs, files in os.walk(path):
        for f in files:
            if not f.startswith(".z"):
                out.append(os.path.join(root, f))
    return sorted(out)


def describe(case):
    return ("dtype=%s shape=%s chunks=%s order=%s sep=%s compressor=%s filters=%s fill=%r "
            "write_empty_chunks=%s missing=%s" % (
                case["dtype"], case["shape"], case["chunks"], case["order"], case["sep"],
                case["compressor"], case["filters"], case["fill"], case["wec"], case["missing"]))


def dtype_ok(reported, dt):
    """zcube's dtype names the same element type (byte order aside)."""
    rd = ic.reported_dtype(reported)
    return rd is not None and ic.same_dtype_family(rd, dt)


def check_info(info, z):
    problems = []
    shape = info.get("shape")
    if shape is None or list(shape) != list(z.shape):
        problems.append("shape %r != %r" % (shape, list(z.shape)))
    chunks = info.get("chunks", info.get("chunk_shape"))
    if chunks is None or list(chunks) != list(z.chunks):
        problems.append("chunks %r != %r" % (chunks, list(z.chunks)))
    dtype = info.get("dtype", info.get("data_type"))
    if not dtype_ok(dtype, z.dtype):
        problems.append("dtype %r does not name %s" % (dtype, z.dtype.str))
    if info.get("zarr_format", 2) != 2:
        problems.append("zarr_format %r != 2" % info.get("zarr_format"))
    # optional fields of zcube's JSON: checked when present
    if "numpy_dtype" in info and info["numpy_dtype"] != z.dtype.str:
        problems.append("numpy_dtype %r != %r (byte order included)" % (info["numpy_dtype"], z.dtype.str))
    if "order" in info and info["order"] != z.order:
        problems.append("order %r != %r" % (info["order"], z.order))
    sep = getattr(z, "_dimension_separator", None) or "."
    if "separator" in info and info["separator"] != sep:
        problems.append("separator %r != %r" % (info["separator"], sep))
    if "attributes" in info and (info["attributes"] or {}) != z.attrs.asdict():
        problems.append("attributes %r != %r" % (info["attributes"], z.attrs.asdict()))
    if "fill_value" in info:
        meta = json.loads(open(os.path.join(z.store.path, z.path, ".zarray")).read())
        if not same_fill_json(info["fill_value"], meta["fill_value"], z.dtype):
            problems.append("fill_value %r, .zarray has %r" % (info["fill_value"], meta["fill_value"]))
    return problems


def same_fill_json(got, want, dt):
    """zcube's fill_value (JSON) and the .zarray one denote the same value."""
    if got == want:
        return True
    if dt.kind == "S" and isinstance(got, str) and isinstance(want, str):
        import base64       # both base64; NUL padding to the item size is the same value
        try:
            g, w = base64.b64decode(got), base64.b64decode(want)
        except ValueError:
            return False
        return g.ljust(dt.itemsize, b"\0") == w.ljust(dt.itemsize, b"\0")
    if dt.kind in "fc" and want is not None and got is not None:
        def val(v):
            if isinstance(v, list):
                return complex(val(v[0]), val(v[1]))
            return float(v)          # also "NaN", "Infinity", "-Infinity"
        try:
            a, b = np.array(val(got), dt), np.array(val(want), dt)
        except (TypeError, ValueError):
            return False
        return ic.compare_arrays(b, a) is None
    return False


def run_case(zc, seed, work, i, dtype_str, comp_kind, res, force_fill=()):
    rng = np.random.default_rng([seed, i])   # each case reproducible on its own
    dt = np.dtype(dtype_str)
    shape, chunks = make_shape(rng)
    filters, hints = make_filters(rng, dt)
    compressor = make_compressor(rng, comp_kind)
    order = "F" if rng.random() < 0.4 else "C"
    sep = "/" if rng.random() < 0.5 else "."
    fill = make_fill(rng, dt) if not force_fill else force_fill[0]
    if "fso" in hints and fill is not None and not (isinstance(fill, float) and np.isfinite(fill)):
        fill = 0.0 if rng.random() < 0.5 else None
    wec = bool(rng.random() < 0.6)
    path = os.path.join(work, "a%03d.zarr" % i)
    case = {"dtype": dt.str, "shape": shape, "chunks": chunks, "order": order, "sep": sep,
            "compressor": compressor.get_config() if compressor else None,
            "filters": [f.get_config() for f in filters] if filters else None,
            "fill": fill, "wec": wec, "missing": 0}
    label = "case %d [%s]" % (i, describe(case))
    try:
        if "fso" in hints:
            center, span = hints["fso"]
            data = (center + rng.uniform(-span, span, size=shape)).astype(dt)
        elif "astype_to" in hints:
            data = ic.random_data(rng, hints["astype_to"], shape, specials=False).astype(dt)
        else:
            data = ic.random_data(rng, dt, shape, smooth=hints.get("smooth", False))
        z = zarr.open_array(path, mode="w", shape=shape, chunks=chunks, dtype=dt,
                            compressor=compressor, filters=filters, fill_value=fill, order=order,
                            dimension_separator=sep, write_empty_chunks=wec)
        z[...] = data
        if rng.random() < 0.3:
            z.attrs.update({"title": "tést ✓ \U0001F600", "n": [1, 2.5, None], "nested": {"ok": True}})
        if sep == "." and rng.random() < 0.4:
            # arrays written before zarr 2.8 have no dimension_separator ('.' implied)
            meta = json.load(open(os.path.join(path, ".zarray")))
            del meta["dimension_separator"]
            json.dump(meta, open(os.path.join(path, ".zarray"), "w"))
        files = chunk_files(path)
        if fill is not None and files and (rng.random() < 0.5 or force_fill):
            k = max(1, int(len(files) * rng.uniform(0.1, 0.6)))
            for j in rng.choice(len(files), size=k, replace=False):
                os.remove(files[int(j)])
            case["missing"] = "%d of %d chunks" % (k, len(files))
        elif not wec:
            case["missing"] = "empty chunks not written (%d stored)" % len(files)
        label = "case %d [%s]" % (i, describe(case))
        z = zarr.open_array(path, mode="r")
        expected = z[...]
        region_text, region = ic.random_region(rng, shape)
        expected_region = ic.take(expected, region)
    except Exception:
        res.fail(label, "zarr-python side failed (harness error):\n" + traceback.format_exc())
        return
    meta = open(os.path.join(path, ".zarray")).read()
    unsupported = [KNOWN_UNSUPPORTED[f.codec_id] for f in (filters or []) + [compressor]
                   if f is not None and f.codec_id in KNOWN_UNSUPPORTED]
    # Each step runs even if an earlier one failed, so one FAIL names them all.
    out = os.path.join(work, "out.npy")
    problems = []
    refusals = []

    def step(what, fn):
        try:
            why = fn()
            if why:
                problems.append("%s: %s" % (what, why))
        except ic.ZcubeError as e:
            if unsupported and e.clean:
                refusals.append(e.stderr.strip())
            else:
                problems.append("%s failed:\n%s" % (what, e.describe()))
        except AssertionError as e:
            problems.append("%s: %s" % (what, e))

    step("zcube info --json", lambda: "; ".join(check_info(zc.info_json(path), z)))
    extra = ic.random_io_options(rng)
    step("zcube get %s(whole array)" % " ".join(extra + [""]),
         lambda: ic.compare_arrays(expected, zc.get(path, out, None, extra)))
    extra2 = ic.random_io_options(rng)
    step("zcube get --region=%s %s" % (region_text, " ".join(extra2)),
         lambda: ic.compare_arrays(expected_region, zc.get(path, out, region_text, extra2)))
    if problems:
        res.fail(label, "\n".join(problems) + "\n.zarray: %s" % meta)
    elif refusals:
        res.xfailed(label, "refused (%s): %s" % (", ".join(unsupported), refusals[0]))
    elif unsupported:
        res.ok(label + " (region %s; %s now supported)" % (region_text, ", ".join(unsupported)))
    else:
        res.ok(label + " (region %s)" % region_text)


def check_hierarchy(zc, work, res):
    """zarr-python builds a small group hierarchy (nested groups, names with a
    space and non-ASCII letters, attributes); zcube must list it (info --json
    of groups, ls) and read its arrays by path."""
    label = "hierarchy [zarr-python groups: root/{sub/{x y, deeper/z}, ünï/w, top}]"
    root = os.path.join(work, "tree.zarr")
    try:
        g = zarr.open_group(root, mode="w")
        g.attrs["title"] = "tést"
        sub = g.create_group("sub")
        xy = sub.create_dataset("x y", shape=(7,), chunks=(3,), dtype="<i2")
        xy[...] = np.arange(7) - 3
        sub.create_group("deeper").create_dataset("z", shape=(2, 2), chunks=(1, 2), dtype="|u1")[...] = 5
        g.create_group("ünï").create_dataset("w", shape=(3,), chunks=(2,), dtype=">f8")[...] = [1.5, np.nan, -2]
        g.create_dataset("top", shape=(2, 3), chunks=(2, 2), dtype="<f4", fill_value=np.nan)
        want_members = {n: "group" for n in g.group_keys()}
        want_members.update({n: "array" for n in g.array_keys()})
    except Exception:
        res.fail(label, "zarr-python side failed (harness error):\n" + traceback.format_exc())
        return
    try:
        info = zc.info_json(root)
        got = {m.get("name"): m.get("kind") for m in info.get("members", [])}
        problems = []
        if info.get("node") != "group":
            problems.append("root node %r, expected group" % info.get("node"))
        if got != want_members:
            problems.append("root members %r, expected %r" % (got, want_members))
        sub_info = zc.info_json(os.path.join(root, "sub"))
        got = {m.get("name"): m.get("kind") for m in sub_info.get("members", [])}
        if got != {"x y": "array", "deeper": "group"}:
            problems.append("sub members %r" % got)
        listing = zc.run("ls", root)
        for name in ("sub", "x y", "deeper", "z", "ünï", "w", "top"):
            if not any(line.strip().startswith(name + " ") for line in listing.splitlines()):
                problems.append("zcube ls does not list %r" % name)
        out = os.path.join(work, "out.npy")
        for path, want in (("sub/x y", g["sub/x y"][...]), ("sub/deeper/z", g["sub/deeper/z"][...]),
                           ("ünï/w", g["ünï/w"][...]), ("top", g["top"][...])):
            why = ic.compare_arrays(want, zc.get(os.path.join(root, path), out))
            if why:
                problems.append("get %s: %s" % (path, why))
        if problems:
            res.fail(label, "; ".join(problems) + "\nzcube ls:\n" + listing)
            return
    except ic.ZcubeError as e:
        res.fail(label, e.describe())
        return
    res.ok(label)


def cycle(rng, items):
    """Endless sequence visiting every item once per round, in random order."""
    while True:
        for j in rng.permutation(len(items)):
            yield items[int(j)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zcube")
    ap.add_argument("--count", type=int, default=int(os.environ.get("ZC_INTEROP_COUNT", "240")))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--quiet", action="store_true", help="print FAIL lines only")
    ap.add_argument("--only", type=int, action="append", help="run only this case number")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else ic.seed_from_env(20240611)
    print("zarr-python %s, numcodecs %s, numpy %s; seed %d (ZC_INTEROP_SEED=%d to repeat), %d arrays"
          % (zarr.__version__, numcodecs.__version__, np.__version__, seed, seed, args.count),
          flush=True)
    rng = np.random.default_rng(seed)
    zc = ic.Zcube(args.zcube)
    res = ic.Results("zarr_python_to_zcube", verbose=not args.quiet)
    work = ic.make_workdir("zc-interop-zp2zc-")
    t0 = time.time()
    try:
        dts = cycle(rng, DTYPES)
        comps = cycle(rng, COMPRESSORS)
        for i in range(args.count):
            dt, comp = next(dts), next(comps)
            if args.only and i not in args.only:
                continue
            run_case(zc, seed, work, i, dt, comp, res)
        if not args.only:
            # fixed cases: extreme and special fill values, with missing chunks.
            # (No infinite imaginary fill: zarr-python 2.13 decodes [re, "Infinity"]
            # as re + 1j*inf, whose real part is NaN; zcube reads it correctly.)
            i = args.count
            for d in ["|i1", "|u1", "<i2", ">u2", "<i4", ">u4", "<i8", ">i8", "<u8", ">u8"]:
                info = np.iinfo(d)
                for v in (int(info.min), int(info.max)):
                    run_case(zc, seed, work, i, d, "zstd", res, force_fill=(v,))
                    i += 1
            for d, v in (("<f4", np.nan), (">f8", -np.inf), ("<f2", np.inf), ("<f8", -0.0),
                         ("<c16", complex(np.nan, -1)), (">c8", complex(np.inf, 0.5)),
                         ("|b1", True), ("|S3", b"a\xffb"), ("<U2", "\U0001F600é")):
                run_case(zc, seed, work, i, d, "blosc", res, force_fill=(v,))
                i += 1
            check_hierarchy(zc, work, res)
    finally:
        ic.remove_workdir(work)
    print("%d zcube calls in %.1f s" % (zc.calls, time.time() - t0))
    return res.finish()


if __name__ == "__main__":
    sys.exit(main())
