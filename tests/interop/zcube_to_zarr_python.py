"""zcube writes Zarr v2, zarr-python reads (and writes back).

A seeded random matrix of v2 arrays made with `zcube create --zarr-format 2`
over dtypes, codec specs (none, zstd, gzip, zlib, bz2, lz4, blosc variants,
and a JSON compressor object), C/F order, both separators, fill values (NaN,
+-inf included) and 1-4-D shapes with ragged edge chunks, then filled with
`zcube put` (whole array, regions incl. steps and integer indices, both, or
nothing; input .npy files sometimes big-endian or Fortran-ordered).
zarr-python must see the same metadata (shape, chunks, dtype, order, fill
value, separator, compressor id and level) and read exactly the values zcube
was given, whole and for a random region. Then zarr-python overwrites a region
of some arrays and `zcube get` must read the result.

Usage: /usr/bin/python3 zcube_to_zarr_python.py ZCUBE [--count N] [--seed S]
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

import numcodecs  # noqa: E402
import zarr  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "|S6", "<U3"]

# (spec, expected compressor config subset or None)
CODECS = [
    ("none", None),
    ("zstd", {"id": "zstd"}),
    ("zstd:7", {"id": "zstd", "level": 7}),
    ("gzip", {"id": "gzip"}),
    ("gzip:2", {"id": "gzip", "level": 2}),
    ("zlib:9", {"id": "zlib", "level": 9}),
    ("bz2:3", {"id": "bz2", "level": 3}),
    ("lz4", {"id": "lz4"}),
    ("lz4:8", {"id": "lz4", "acceleration": 8}),
    ("blosc", {"id": "blosc"}),
    ("blosc:lz4", {"id": "blosc", "cname": "lz4"}),
    ("blosc:zstd:3:bitshuffle", {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2}),
    ("blosc:blosclz:9:noshuffle", {"id": "blosc", "cname": "blosclz", "clevel": 9, "shuffle": 0}),
    ("blosc:zlib:1:shuffle", {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 1}),
    ("blosc:lz4hc:5:shuffle", {"id": "blosc", "cname": "lz4hc", "clevel": 5, "shuffle": 1}),
    ('{"compressor": {"id": "zstd", "level": 2}, "filters": null}', {"id": "zstd", "level": 2}),
    ("json+filters", {"id": "zlib", "level": 1}),
]


def json_spec_with_filters(dt):
    """A v2 {compressor, filters} JSON spec with a filter that suits `dt`."""
    if dt.kind in "iu":
        f = {"id": "delta", "dtype": dt.newbyteorder("<").str}
    elif dt.kind == "f":
        f = {"id": "fixedscaleoffset", "offset": 0, "scale": 1,
             "dtype": dt.newbyteorder("<").str, "astype": dt.newbyteorder("<").str}
    else:
        f = {"id": "shuffle", "elementsize": dt.itemsize}
    return json.dumps({"compressor": {"id": "zlib", "level": 1}, "filters": [f]}), [f]


def make_fill(rng, dt):
    """(text for --fill-value or None for the default, the value zarr-python should see)."""
    k = dt.kind
    if rng.random() < 0.3:
        return None, (b"" if k == "S" else "" if k == "U" else False if k == "b" else 0)
    if k == "b":
        return ("true", True) if rng.random() < 0.5 else ("false", False)
    if k in "iu":
        info = np.iinfo(dt)
        vals = [int(info.min), int(info.max), 42, -3 if k == "i" else 3]
        v = vals[int(rng.integers(0, len(vals)))]
        return str(v), v
    if k == "f":
        vals = [("NaN", np.nan), ("Infinity", np.inf), ("-Infinity", -np.inf), ("-1.5", -1.5),
                ("0.1", 0.1), ("-0.0", -0.0)]
        t, v = vals[int(rng.integers(0, len(vals)))]
        return t, (float(np.array(v, dtype=dt)) if np.isfinite(v) else v)
    # complex, strings: the default fill only (the CLI spelling of such fills is not part
    # of the contract)
    return None, (b"" if k == "S" else "" if k == "U" else 0)


def fill_matches(got, want, dt):
    if dt.kind in "fc":
        a = np.array(got if got is not None else 0, dtype=dt)
        b = np.array(want, dtype=dt)
        return ic.compare_arrays(b, a) is None
    if dt.kind == "S":
        return (got or b"") == want
    if dt.kind == "U":
        return (got or "") == want
    return got == want


def check_meta(z, case, path):
    problems = []
    if z.shape != case["shape"]:
        problems.append("shape %s != %s" % (z.shape, case["shape"]))
    if z.chunks != case["chunks"]:
        problems.append("chunks %s != %s" % (z.chunks, case["chunks"]))
    if not ic.same_dtype_family(z.dtype, case["dt"]):
        problems.append("dtype %s != %s" % (z.dtype.str, case["dt"].str))
    if z.order != case["order"]:
        problems.append("order %s != %s" % (z.order, case["order"]))
    sep = getattr(z, "_dimension_separator", None) or "."
    if sep != case["sep"]:
        problems.append("dimension_separator %r != %r" % (sep, case["sep"]))
    if not fill_matches(z.fill_value, case["fill"], case["dt"]):
        problems.append("fill_value %r != %r" % (z.fill_value, case["fill"]))
    want = case["compressor"]
    cfg = z.compressor.get_config() if z.compressor is not None else None
    if want is None:
        if cfg is not None:
            problems.append("compressor %r, expected none" % cfg)
    elif cfg is None or any(cfg.get(k) != v for k, v in want.items()):
        problems.append("compressor %r does not match %r" % (cfg, want))
    got_filters = [f.get_config() for f in z.filters] if z.filters else None
    want_filters = case["filters"]
    if (got_filters is None) != (want_filters is None) or (
            want_filters and [{k: g.get(k) for k in w} for g, w in zip(got_filters, want_filters)]
            != want_filters):
        problems.append("filters %r, expected %r" % (got_filters, want_filters))
    if z.attrs.asdict() != case["attrs"]:
        problems.append("attributes %r != %r" % (z.attrs.asdict(), case["attrs"]))
    info = str(z.info)          # zarr-python's own summary must build
    if "Compressor" not in info:
        problems.append("zarr .info lacks Compressor: %r" % info)
    # zarr-python's own metadata parser (and nothing else) wrote nothing odd
    meta = json.load(open(os.path.join(path, ".zarray")))
    if meta.get("zarr_format") != 2:
        problems.append("zarr_format %r" % meta.get("zarr_format"))
    return problems


def run_case(zc, seed, work, i, dtype_name, codec, res):
    rng = np.random.default_rng([seed, i])
    dt = np.dtype(dtype_name)
    shape, chunks = ic.random_shape_chunks(rng, max_elems=3000, max_chunks=120)
    order = "F" if rng.random() < 0.5 else "C"
    sep = "/" if rng.random() < 0.5 else "."
    fill_text, fill = make_fill(rng, dt)
    spec, want_comp = codec
    want_filters = None
    if spec == "json+filters":
        spec, want_filters = json_spec_with_filters(dt)
    dtype_arg = dtype_name if rng.random() < 0.6 else dt.newbyteorder("=").str
    path = os.path.join(work, "a%03d.zarr" % i)
    # A fifth of the cases: zcube writes a v3 array (maybe sharded) and
    # `zcube copy --zarr-format 2 --codec SPEC` makes the v2 array zarr-python reads.
    via_copy = not want_filters and not spec.startswith("{") and rng.random() < 0.2
    if via_copy:
        src = os.path.join(work, "src%03d.zarr" % i)
        v3codec = ["zstd", "blosc,crc32c", "gzip:3", "none"][int(rng.integers(0, 4))]
        args = ["create", src, "--zarr-format", "3", "--shape", ",".join(map(str, shape)),
                "--dtype", dtype_arg, "--chunks", ",".join(map(str, chunks)), "--codec", v3codec,
                "--separator", sep]
        if rng.random() < 0.5:
            args += ["--shards", ",".join(str(c * int(rng.integers(1, 4))) for c in chunks)]
        copy_args = ["copy", src, path, "--zarr-format", "2", "--codec", spec]
        order, sep, write_path = "C", ".", src     # the v2 defaults of a copy
        if rng.random() < 0.4:
            chunks = ic.random_shape_chunks_for(rng, shape)
            copy_args += ["--chunks", ",".join(map(str, chunks))]
    else:
        args = ["create", path, "--zarr-format", "2", "--shape", ",".join(map(str, shape)),
                "--dtype", dtype_arg, "--chunks", ",".join(map(str, chunks)), "--codec", spec,
                "--order", order, "--separator", sep]
        write_path = path
    if fill_text is not None:
        args.append("--fill-value=" + fill_text)
    attrs = None
    if rng.random() < 0.3:
        # ASCII here; non-ASCII metadata has its own fixed case (check_non_ascii)
        attrs = {"title": "a \"quoted\" title", "n": [1, 2.5, None], "nested": {"ok": True}}
        args.append("--attrs=" + json.dumps(attrs))
    case = {"shape": shape, "chunks": chunks, "dt": dt, "order": order, "sep": sep, "fill": fill,
            "compressor": want_comp, "filters": want_filters, "attrs": attrs or {}}
    label = "case %d [%sdtype=%s shape=%s chunks=%s order=%s sep=%s codec=%s fill=%s" % (
        i, "v3 %s copied to v2: " % args[args.index("--codec") + 1] if via_copy else "",
        dtype_arg, shape, chunks, order, sep, spec, fill_text)
    cmds = [zc.command_line(*args)]
    try:
        zc.run(*args)
        expected = np.full(shape, fill, dtype=dt)

        def make_data(s):
            d = ic.random_data(rng, dt, s, smooth=rng.random() < 0.3)
            # fixedscaleoffset (scale 1) rounds to integers: give it integral values
            # (and no -0.0, which comes back as 0.0)
            return np.around(d) + dt.type(0) if want_filters and dt.kind == "f" else d

        plan, done = ic.random_writes(rng, zc, write_path, expected, make_data, work, str(i))
        cmds += done
        if via_copy:
            cmds.append(zc.command_line(*copy_args))
            zc.run(*copy_args)
        label += " writes=%s]" % plan
    except ic.ZcubeError as e:
        res.fail(label + "]", "zcube failed while writing:\n%s" % e.describe())
        return
    try:
        z = zarr.open_array(path, mode="r")
        problems = check_meta(z, case, path)
        if problems:
            raise AssertionError("zarr-python sees other metadata: " + "; ".join(problems))
        why = ic.compare_arrays(expected, z[...])
        if why:
            raise AssertionError("zarr-python read (whole): " + why)
        text, items = ic.random_region(rng, shape)
        why = ic.compare_arrays(ic.take(expected, items), np.asarray(z[items], dtype=z.dtype))
        if why:
            raise AssertionError("zarr-python read [%s]: %s" % (text, why))
        # zarr-python writes into the zcube-made array; zcube reads the result
        if rng.random() < 0.4 and expected.size:
            zw = zarr.open_array(path, mode="r+")
            text2, items2 = ic.random_region(rng, shape)
            new = make_data(np.shape(ic.take(expected, items2)))
            zw[items2] = new
            expected[items2] = new
            cmds.append("zarr-python: z[%s] = new values" % text2)
            got = zc.get(path, os.path.join(work, "out.npy"))
            why = ic.compare_arrays(expected, got)
            if why:
                raise AssertionError("zcube get after zarr-python wrote [%s]: %s" % (text2, why))
    except ic.ZcubeError as e:
        res.fail(label, "%s\ncommands:\n  %s" % (e.describe(), "\n  ".join(cmds)))
        return
    except AssertionError as e:
        meta = open(os.path.join(path, ".zarray")).read()
        res.fail(label, "%s\ncommands:\n  %s\n.zarray: %s" % (e, "\n  ".join(cmds), meta))
        return
    except Exception:
        meta = open(os.path.join(path, ".zarray")).read() if os.path.exists(
            os.path.join(path, ".zarray")) else "(none)"
        res.fail(label, "zarr-python failed on zcube's array:\n%s\ncommands:\n  %s\n.zarray: %s"
                 % (traceback.format_exc(), "\n  ".join(cmds), meta))
        return
    res.ok(label)


def check_non_ascii(zc, work, res):
    """Non-ASCII text in v2 metadata (attributes, a 'U' fill value): zarr-python
    2.13 decodes .zarray/.zattrs as ASCII, so the JSON must use \\u escapes,
    as zarr-python itself writes it."""
    label = "non-ASCII metadata [--attrs with 'tést ✓ 😀', --dtype <U2 --fill-value \"é\"]"
    p = os.path.join(work, "text.zarr")
    attrs = {"title": "tést ✓ \U0001F600"}
    try:
        zc.run("create", p, "--zarr-format", "2", "--shape", "3", "--dtype", "<U2", "--chunks", "2",
               "--fill-value", json.dumps("é"), "--attrs", json.dumps(attrs, ensure_ascii=False))
    except ic.ZcubeError as e:
        res.fail(label, e.describe())
        return
    problems = []
    for f in (".zarray", ".zattrs"):
        raw = open(os.path.join(p, f), "rb").read()
        if any(b > 127 for b in raw):
            problems.append("%s holds raw non-ASCII bytes (zarr-python 2.13 reads it as ASCII)" % f)
    try:
        z = zarr.open_array(p, mode="r")
        if z.attrs.asdict() != attrs:
            problems.append("attributes %r != %r" % (z.attrs.asdict(), attrs))
        if z.fill_value != "é" or list(z[...]) != ["é"] * 3:
            problems.append("fill %r, values %r" % (z.fill_value, list(z[...])))
    except Exception as e:
        problems.append("zarr-python cannot open it: %s: %s" % (type(e).__name__, e))
    if problems:
        res.fail(label, "; ".join(problems))
    else:
        res.ok(label)


def check_bytes_fill_copy(zc, work, res):
    """A v3 fixed-length bytes array with the default fill value (all NUL
    bytes; v3 stores it base64-encoded), partly written, copied to v2: zarr-python
    must see fill b'' and b'' in the unwritten elements."""
    label = "v3 |S6 default fill copied to v2 [create --zarr-format 3, put --region=1:3, copy --zarr-format 2]"
    src, dst = os.path.join(work, "bytes3.zarr"), os.path.join(work, "bytes2.zarr")
    npy = os.path.join(work, "bytes.npy")
    np.save(npy, np.array([b"ab", b"c\xffd"], dtype="|S6"))
    try:
        zc.run("create", src, "--zarr-format", "3", "--shape", "5", "--dtype", "|S6", "--chunks", "2")
        zc.run("put", src, npy, "--region=1:3")
        zc.run("copy", src, dst, "--zarr-format", "2")
    except ic.ZcubeError as e:
        res.fail(label, e.describe())
        return
    want = np.array([b"", b"ab", b"c\xffd", b"", b""], dtype="|S6")
    problems = []
    try:
        z = zarr.open_array(dst, mode="r")
        if z.fill_value not in (b"", None):
            problems.append("zarr-python sees fill_value %r, expected b''" % z.fill_value)
        why = ic.compare_arrays(want, z[...])
        if why:
            problems.append("zarr-python reads: %s" % why)
    except Exception as e:
        problems.append("zarr-python cannot open it: %s: %s" % (type(e).__name__, e))
    if problems:
        meta = json.load(open(os.path.join(src, "zarr.json")))
        res.fail(label, "; ".join(problems) + "\nv3 source fill_value %r" % meta.get("fill_value"))
    else:
        res.ok(label)


def check_hierarchy(zc, work, res):
    """zcube creates arrays inside a hierarchy (root/grp/a, root/grp/sub/b,
    root/c); zarr-python must open the root as a group and find them all, as
    it does for hierarchies it writes itself (where every parent has .zgroup)."""
    label = "hierarchy [zcube create root/grp/a, root/grp/sub/b, root/c; zarr.open_group(root)]"
    root = os.path.join(work, "tree.zarr")
    want = {"grp/a": np.arange(5, dtype="<i4"), "grp/sub/b": np.linspace(0, 1, 6).reshape(2, 3),
            "c": np.array([True, False, True])}
    try:
        for name, data in want.items():
            p = os.path.join(root, name)
            zc.run("create", p, "--zarr-format", "2", "--shape", ",".join(map(str, data.shape)),
                   "--dtype", data.dtype.str, "--chunks", ",".join("2" for _ in data.shape))
            npy = os.path.join(work, "h.npy")
            np.save(npy, data)
            zc.run("put", p, npy)
    except ic.ZcubeError as e:
        res.fail(label, e.describe())
        return
    try:
        g = zarr.open_group(root, mode="r")
        problems = []
        for name, data in want.items():
            why = ic.compare_arrays(data, g[name][...])
            if why:
                problems.append("%s: %s" % (name, why))
        members = sorted(list(g.group_keys()) + list(g.array_keys()))
        if members != ["c", "grp"]:
            problems.append("root members %r, expected ['c', 'grp']" % members)
        if problems:
            raise AssertionError("; ".join(problems))
    except Exception as e:
        files = sorted(os.path.relpath(os.path.join(d, f), root)
                       for d, _, fs in os.walk(root) for f in fs if f.startswith(".z"))
        res.fail(label, "zarr-python: %s: %s\nmetadata files zcube wrote: %s"
                 % (type(e).__name__, e, ", ".join(files)))
        return
    res.ok(label)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zcube")
    ap.add_argument("--count", type=int, default=int(os.environ.get("ZC_INTEROP_COUNT", "120")))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", type=int, action="append")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else ic.seed_from_env(20240614)
    print("zarr-python %s, numcodecs %s; seed %d (ZC_INTEROP_SEED=%d to repeat), %d arrays"
          % (zarr.__version__, numcodecs.__version__, seed, seed, args.count), flush=True)
    rng = np.random.default_rng(seed)
    zc = ic.Zcube(args.zcube)
    res = ic.Results("zcube_to_zarr_python")
    work = ic.make_workdir("zc-interop-zc2zp-")
    t0 = time.time()
    try:
        dts = cycle_items(rng, DTYPES)
        cds = cycle_items(rng, CODECS)
        for i in range(args.count):
            d, c = next(dts), next(cds)
            if args.only and i not in args.only:
                continue
            run_case(zc, seed, work, i, d, c, res)
        if not args.only:
            check_non_ascii(zc, work, res)
            check_bytes_fill_copy(zc, work, res)
            check_hierarchy(zc, work, res)
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
