"""Shared helpers of zcube's interoperability drivers (run with /usr/bin/python3).

What lives here: running the zcube binary, random NumPy basic-slice regions
(the text zcube gets and the tuple NumPy gets), random test data per dtype,
exact (NaN-aware, bitwise) comparison, and PASS/FAIL bookkeeping that ends in
the plain closing line "interop: N passed, N failed".

Only NumPy is needed here, so the zarrita drivers can use it too.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# --------------------------------------------------------------------- zcube


class ZcubeError(Exception):
    """A zcube command failed: keeps the command line, exit status and stderr."""

    def __init__(self, argv, rc, stdout, stderr):
        self.argv = argv
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        super().__init__(self.describe())

    def describe(self):
        cmd = " ".join(_quote(a) for a in self.argv)
        how = "killed by signal %d" % -self.rc if self.rc < 0 else "exit %d" % self.rc
        err = self.stderr.strip().replace("\n", "\n      ")
        return "command: %s\n    %s; stderr: %s" % (cmd, how, err or "(empty)")

    @property
    def clean(self):
        """True if zcube refused with an ordinary error (exit 1 or 2 and a message),
        False if it crashed (signal, sanitizer report) or failed silently."""
        crashed = self.rc < 0 or self.rc >= 3 or "Sanitizer" in self.stderr
        return not crashed and self.stderr.strip() != ""


def _quote(a):
    a = str(a)
    if a and all(c.isalnum() or c in "-_./:,=+" for c in a):
        return a
    return "'" + a.replace("'", "'\\''") + "'"


class Zcube:
    """Runs the zcube binary; every call raises ZcubeError on failure."""

    def __init__(self, binary, timeout=120):
        self.binary = binary
        self.timeout = timeout
        self.calls = 0

    def run(self, *args):
        argv = [self.binary] + [str(a) for a in args]
        self.calls += 1
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=self.timeout)
        except subprocess.TimeoutExpired as e:
            raise ZcubeError(argv, 124, "", "timed out after %ss" % e.timeout)
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0:
            raise ZcubeError(argv, p.returncode, out, err)
        return out

    def command_line(self, *args):
        return " ".join(_quote(a) for a in [self.binary] + [str(x) for x in args])

    def info_json(self, path):
        out = self.run("info", path, "--json")
        try:
            return json.loads(out)
        except ValueError as e:
            raise AssertionError("zcube info --json printed invalid JSON (%s): %r" % (e, out[:400]))

    def get(self, path, out_npy, region=None, extra=()):
        args = ["get", path]
        if region is not None:
            args += ["--region=" + region]
        args += ["-o", out_npy] + list(extra)
        self.run(*args)
        return np.load(out_npy, allow_pickle=False)


def random_io_options(rng):
    """Sometimes a small --max-mem (so get/put walk the selection in many
    pieces) and/or a thread count, to exercise those paths too."""
    extra = []
    if rng.random() < 0.3:
        extra.append("--max-mem=%s" % ["200B", "1KB", "4KiB", "16KB", "64KiB"][int(rng.integers(0, 5))])
    if rng.random() < 0.3:
        extra.append("--threads=%d" % int(rng.integers(1, 4)))
    return extra


# --------------------------------------------------------------------- regions


def random_region(rng, shape):
    """A random NumPy basic-slice selection for `shape`: (text for --region,
    the same selection as a tuple for NumPy). Positive steps only (zcube's
    contract); bounds may be negative or beyond the dimension (clamped)."""
    ndim = len(shape)
    if ndim == 0:
        return "...", Ellipsis
    texts = []
    items = []
    for n in shape:
        r = rng.random()
        if r < 0.15:
            texts.append(":")
            items.append(slice(None))
        elif r < 0.30 and n > 0:
            i = int(rng.integers(-n, n))
            texts.append(str(i))
            items.append(i)
        elif r < 0.45:
            s = int(rng.integers(2, 5))
            texts.append("::%d" % s)
            items.append(slice(None, None, s))
        else:
            a = int(rng.integers(-n - 1, n + 1)) if rng.random() < 0.25 else int(rng.integers(0, n + 1))
            b = int(rng.integers(-n, n + 3)) if rng.random() < 0.25 else int(rng.integers(a if a >= 0 else 0, n + 1))
            use_a = rng.random() < 0.85
            use_b = rng.random() < 0.85
            step = int(rng.integers(1, 4)) if rng.random() < 0.35 else None
            t = (str(a) if use_a else "") + ":" + (str(b) if use_b else "")
            if step is not None:
                t += ":%d" % step
            texts.append(t)
            items.append(slice(a if use_a else None, b if use_b else None, step))
    # Sometimes trailing ":" become "..." or are left out.
    k = 0
    while k < ndim and texts[ndim - 1 - k] == ":":
        k += 1
    if k and rng.random() < 0.5:
        if rng.random() < 0.5:
            texts = texts[:ndim - k] + ["..."]
            items = items[:ndim - k] + [Ellipsis]
        else:
            texts = texts[:ndim - k] or [":"]
            items = items[:ndim - k] or [slice(None)]
    elif ndim > 1 and texts[0] == ":" and rng.random() < 0.4:
        texts = ["..."] + texts[1:]
        items = [Ellipsis] + items[1:]
    return ",".join(texts), tuple(items)


def take(arr, items):
    """arr[items] as an array of arr's dtype, also when the selection is one
    element (NumPy then returns a scalar, and a bytes/str scalar would lose its
    length)."""
    return np.asarray(arr[items], dtype=arr.dtype)


def region_text(items):
    """NumPy basic selection (tuple of slices/ints) to --region text."""
    parts = []
    for it in items:
        if it is Ellipsis:
            parts.append("...")
        elif isinstance(it, (int, np.integer)):
            parts.append(str(int(it)))
        else:
            t = ("" if it.start is None else str(it.start)) + ":" + \
                ("" if it.stop is None else str(it.stop))
            if it.step is not None:
                t += ":%d" % it.step
            parts.append(t)
    return ",".join(parts)


# --------------------------------------------------------------------- data

INT_KINDS = "iu"


def random_data(rng, dtype, shape, smooth=False, specials=True):
    """Random values of `dtype` (any byte order) and `shape`. Floats may hold
    NaN, +-inf and -0.0 when `specials`; strings hold non-ASCII content."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    k = dtype.kind
    if k == "b":
        a = rng.random(n) < 0.5
    elif k in INT_KINDS:
        info = np.iinfo(dtype)
        if smooth or rng.random() < 0.4:
            lo, hi = max(int(info.min), -100), min(int(info.max), 100)
            a = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64)
        else:
            a = rng.integers(int(info.min), int(info.max), size=n, endpoint=True,
                             dtype=np.uint64 if k == "u" else np.int64)
    elif k == "f":
        if smooth:
            a = np.cumsum(rng.normal(size=n))
        else:
            a = rng.normal(scale=10.0 ** int(rng.integers(-3, 4)), size=n)
        a = a.astype(dtype.newbyteorder("="))
        if specials and n:
            for v in (np.nan, np.inf, -np.inf, -0.0):
                if rng.random() < 0.5:
                    a[int(rng.integers(0, n))] = v
    elif k == "c":
        re = rng.normal(size=n)
        im = rng.normal(size=n)
        a = (re + 1j * im).astype(dtype.newbyteorder("="))
        if specials and n and rng.random() < 0.5:
            a[int(rng.integers(0, n))] = complex(np.nan, 1.0)
    elif k == "S":
        alphabet = [bytes([c]) for c in range(1, 256)]
        vals = []
        for _ in range(n):
            ln = int(rng.integers(0, dtype.itemsize + 1))
            s = b"".join(alphabet[int(i)] for i in rng.integers(0, 255, size=ln))
            if ln > 2 and rng.random() < 0.1:
                s = s[:1] + b"\0" + s[2:]   # an embedded NUL survives; trailing ones do not
            vals.append(s)
        a = np.array(vals, dtype=dtype) if n else np.zeros(0, dtype)
    elif k == "U":
        chars = list("abcXYZ019 -_é߷ꙮ中文") + ["\U0001F600", "\U00010348"]
        nchar = dtype.itemsize // 4
        vals = []
        for _ in range(n):
            ln = int(rng.integers(0, nchar + 1))
            vals.append("".join(chars[int(i)] for i in rng.integers(0, len(chars), size=ln)))
        a = np.array(vals, dtype=dtype) if n else np.zeros(0, dtype)
    else:
        raise ValueError("no data generator for %s" % dtype)
    return np.asarray(a).astype(dtype).reshape(shape)


# --------------------------------------------------------------------- compare


def reported_dtype(value):
    """The NumPy dtype zcube's `info --json` "dtype" names: a v3 name ("int16"),
    a NumPy string ("<i2"), or a v3 object for fixed-length strings
    ({"name": "null_terminated_bytes" | "fixed_length_utf32",
      "configuration": {"length_bytes": N}}). None if it names none."""
    try:
        if isinstance(value, dict):
            n = int(value["configuration"]["length_bytes"])
            if value["name"] == "null_terminated_bytes":
                return np.dtype("S%d" % n)
            if value["name"] == "fixed_length_utf32" and n % 4 == 0:
                return np.dtype("U%d" % (n // 4))
            return None
        if isinstance(value, str):
            return np.dtype(value)
    except (TypeError, KeyError, ValueError):
        return None
    return None


def same_dtype_family(a, b):
    """True if two dtypes hold the same values (kind and item size; byte order free)."""
    a, b = np.dtype(a), np.dtype(b)
    return a.kind == b.kind and a.itemsize == b.itemsize


def compare_arrays(expected, got):
    """None if `got` equals `expected` exactly, else a one-line reason.
    Byte order and memory layout may differ; values may not: integers, bools
    and strings are compared byte for byte, floats bit for bit except that any
    NaN matches any NaN."""
    expected = np.asarray(expected)
    got = np.asarray(got)
    if expected.shape != got.shape:
        return "shape: expected %s, got %s" % (expected.shape, got.shape)
    if not same_dtype_family(expected.dtype, got.dtype):
        return "dtype: expected %s, got %s" % (expected.dtype.str, got.dtype.str)
    # (not np.ascontiguousarray: it turns 0-d arrays into 1-d ones)
    e = expected.astype(expected.dtype.newbyteorder("<"), order="C")
    g = got.astype(expected.dtype.newbyteorder("<"), order="C")
    if e.dtype.kind in "fc":
        fdt = e.dtype if e.dtype.kind == "f" else np.dtype("<f%d" % (e.dtype.itemsize // 2))
        if e.dtype.kind == "c":       # (re, im) pairs along a new last axis
            ev = e[..., None].view(fdt)
            gv = g[..., None].view(fdt)
        else:
            ev = e
            gv = g
        nan_e = np.isnan(ev)
        nan_g = np.isnan(gv)
        ubits = np.dtype("<u%d" % fdt.itemsize)
        eb = ev.view(ubits).copy()
        gb = gv.view(ubits).copy()
        eb[nan_e] = 0
        gb[nan_g] = 0
        bad = (nan_e != nan_g) | (eb != gb)
        if e.dtype.kind == "c":
            bad = bad.any(axis=-1)
    else:
        w = e.dtype.itemsize
        eb = e[..., None].view(np.uint8) if e.size else np.zeros(e.shape + (w,), np.uint8)
        gb = g[..., None].view(np.uint8) if g.size else np.zeros(g.shape + (w,), np.uint8)
        bad = (eb != gb).any(axis=-1) if w else np.zeros(e.shape, bool)
    bad = np.asarray(bad)
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return "%d of %d elements differ; first at %s: expected %r, got %r" % (
        int(bad.sum()), bad.size, idx, expected[idx], got[idx])


# --------------------------------------------------------------------- results


class Results:
    """Counts PASS/XFAIL/FAIL lines; prints them as they come."""

    def __init__(self, name, verbose=True):
        self.name = name
        self.verbose = verbose
        self.passed = 0
        self.failed = 0
        self.xfail = 0
        self.failures = []

    def ok(self, label):
        self.passed += 1
        if self.verbose:
            print("PASS %s" % label, flush=True)

    def xfailed(self, label, why):
        self.xfail += 1
        print("XFAIL %s: %s" % (label, why), flush=True)

    def fail(self, label, why):
        self.failed += 1
        self.failures.append(label)
        print("FAIL %s\n    %s" % (label, why.replace("\n", "\n    ")), flush=True)

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed + self.xfail, self.failed)
              + (" (%d known-unsupported cases refused cleanly)" % self.xfail if self.xfail else ""),
              flush=True)
        if self.failed:
            print("FAILED cases:", ", ".join(self.failures[:40])
                  + (" ..." if len(self.failures) > 40 else ""), flush=True)
        return 1 if self.failed else 0


def make_workdir(prefix):
    """A fresh temporary folder (removed by remove_workdir unless ZC_INTEROP_KEEP=1)."""
    return tempfile.mkdtemp(prefix=prefix)


def remove_workdir(path):
    if os.environ.get("ZC_INTEROP_KEEP") == "1":
        print("kept work folder %s" % path, file=sys.stderr)
        return
    shutil.rmtree(path, ignore_errors=True)


def seed_from_env(default):
    """Seed from ZC_INTEROP_SEED (decimal) or `default`; printed by the caller."""
    s = os.environ.get("ZC_INTEROP_SEED", "")
    return int(s) if s.strip() else default


# --------------------------------------------------------------------- zarrita

# Zarr v3 data type names zarrita reads and writes (float16 only where node has
# Float16Array; complex and fixed-length strings are not v3 types zarrita knows).
ZARRITA_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float32", "float64"]


def node_has_float16():
    p = subprocess.run(["node", "-e", "process.stdout.write(typeof Float16Array)"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p.stdout.decode().strip() == "function"


def expand_region(items, shape):
    """A NumPy basic selection tuple to one entry per dimension, each either
    an int (non-negative) or a (start, stop, step) with stop clamped; for
    zarrita, which is given explicit values only."""
    items = list(items) if isinstance(items, tuple) else [items]
    if any(it is Ellipsis for it in items):
        k = items.index(Ellipsis)
        items = items[:k] + [slice(None)] * (len(shape) - len(items) + 1) + items[k + 1:]
    items += [slice(None)] * (len(shape) - len(items))
    out = []
    for it, n in zip(items, shape):
        if isinstance(it, (int, np.integer)):
            out.append(int(it) + n if it < 0 else int(it))
        else:
            start, stop, step = it.indices(n)
            out.append([start, max(start, stop), step])
    return out


def run_zarrita(here, mode, manifest, workdir):
    """Run zarrita_driver.mjs on `manifest` (dict); returns {id: result}."""
    mpath = os.path.join(workdir, "manifest-%s.json" % mode)
    rpath = os.path.join(workdir, "results-%s.json" % mode)
    with open(mpath, "w") as f:
        json.dump(manifest, f)
    p = subprocess.run(["node", os.path.join(here, "zarrita_driver.mjs"), mode, mpath, rpath],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=here, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("zarrita driver (%s) exited %d:\n%s%s" % (
            mode, p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")))
    with open(rpath) as f:
        res = json.load(f)
    return {r["id"]: r for r in res["results"]}


def load_zarrita_dump(dump, dtype):
    """The array zarrita returned (dumped by zarrita_driver.mjs) as NumPy."""
    dt = np.dtype("|b1" if dtype == "bool" else dtype).newbyteorder("<")
    if "scalar" in dump:
        v = dump["scalar"]
        if isinstance(v, str):
            v = float(v) if v in ("NaN", "Infinity", "-Infinity", "-0.0") else int(v)
        return np.array(v, dtype=dt)
    raw = np.fromfile(dump["file"], dtype=np.uint8)
    flat = raw.view(dt) if raw.size else np.zeros(0, dt)
    shape = tuple(dump["shape"])
    strides = tuple(s * dt.itemsize for s in dump["stride"])
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return np.zeros(shape, dt)
    return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=strides).copy()


# --------------------------------------------------------------------- zcube writes


def random_shape_chunks(rng, max_elems=4000, max_chunks=120, ndims=(1, 1, 2, 2, 2, 3, 3, 4)):
    """A 1-4-D shape and a chunk shape that usually leaves ragged edge chunks."""
    ndim = int(ndims[int(rng.integers(0, len(ndims)))])
    per = int(round(max_elems ** (1.0 / ndim)))
    shape = [int(rng.integers(1, per * 2)) for _ in range(ndim)]
    while np.prod(shape) > max_elems:
        i = int(np.argmax(shape))
        shape[i] = max(1, shape[i] // 2)
    chunks = []
    for n in shape:
        c = int(rng.integers(1, n + 1)) if n > 1 else 1
        if c > 1 and n % c == 0 and rng.random() < 0.7:
            c -= 1
        chunks.append(c)
    while np.prod([-(-n // c) for n, c in zip(shape, chunks)]) > max_chunks:
        i = int(np.argmax([-(-n // c) for n, c in zip(shape, chunks)]))
        chunks[i] *= 2
    return tuple(shape), tuple(chunks)


def random_shape_chunks_for(rng, shape, max_chunks=120):
    """A random chunk shape for an existing `shape` (ragged edges likely)."""
    chunks = [int(rng.integers(1, n + 1)) if n > 1 else 1 for n in shape]
    while np.prod([-(-n // c) for n, c in zip(shape, chunks)]) > max_chunks:
        i = int(np.argmax([-(-n // c) for n, c in zip(shape, chunks)]))
        chunks[i] *= 2
    return tuple(chunks)


def save_npy_variant(rng, path, data):
    """Save `data` as .npy, sometimes big-endian and/or Fortran-ordered, to
    exercise zcube's .npy reader; values are unchanged."""
    a = np.asarray(data)
    if a.dtype.itemsize > 1 and a.dtype.kind not in "SV" and rng.random() < 0.25:
        a = a.astype(a.dtype.newbyteorder("S"))
    if a.ndim > 1 and rng.random() < 0.25:
        a = np.asfortranarray(a)
    np.save(path, a)


def random_writes(rng, zc, path, expected, make_data, work, tag):
    """Write into a zcube-created array at `path` with `zcube put`: the whole
    array, some regions, both, or nothing (all fill). `expected` (NumPy, holding
    the fill value) is updated in place. Returns the list of commands run."""
    shape = expected.shape
    plan = ["whole", "regions", "regions", "whole+region", "none"][int(rng.integers(0, 5))]
    if int(np.prod(shape, dtype=np.int64)) == 0:
        plan = "whole"
    done = []
    npy = os.path.join(work, "in-%s.npy" % tag)
    if plan in ("whole", "whole+region"):
        data = make_data(shape)
        save_npy_variant(rng, npy, data)
        extra = random_io_options(rng)
        zc.run("put", path, npy, *extra)
        done.append("put (whole) %s" % " ".join(extra))
        expected[...] = data
    if plan in ("regions", "whole+region"):
        for _ in range(int(rng.integers(1, 4))):
            text, items = random_region(rng, shape)
            target = take(expected, items)
            data = make_data(np.shape(target))
            save_npy_variant(rng, npy, data)
            extra = random_io_options(rng)
            zc.run("put", path, npy, "--region=" + text, *extra)
            done.append("put --region=%s %s" % (text, " ".join(extra)))
            expected[items] = data
    return plan, done
