#!/usr/bin/python3
"""tests/cli/fft_numpy.py — `zcube eval` FFT expressions against numpy.fft.

A seeded random set of cases (shapes, chunkings, dtypes, axes, n, s, norms;
lengths prime, powers of two and mixed radix) plus the issue's examples. Each
expression string is run by `zcube eval EXPR --in t=T.zarr -o OUT` and by
NumPy's eval of the same string with the names mapped to numpy.fft. Results
must have NumPy's shape, the array API dtype (float32/complex64 inputs stay
single precision; NumPy 1.x computes those in double) and values within
1e-12 (float64) / 1e-5 (float32) of max |NumPy|.

A case may force the four-step algorithm with --allowed-mem small enough that
the axis does not fit in a task (and Bluestein's, for primes 40009 and 20011).

Usage: /usr/bin/python3 fft_numpy.py ZCUBE WORKDIR SEED [NRANDOM]
Prints one line per failure and a last line "N cases, F failed"; exit 1 on failure.
"""
import random
import shutil
import subprocess
import sys

import numpy as np
import zarr

ZCUBE, WORK, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3])
NRANDOM = int(sys.argv[4]) if len(sys.argv) > 4 else 40
rnd = random.Random(SEED)
rng = np.random.default_rng(SEED)
failures = []
ncases = 0

NAMES = {n: getattr(np.fft, n) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn",
                                         "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift")}
NAMES.update({"abs": np.abs, "real": np.real, "imag": np.imag, "conj": np.conj})
LENGTHS = [1, 2, 3, 7, 8, 12, 13, 16, 30, 31, 60, 64, 97, 100, 128, 210, 256, 257]


def single(dt):
    return np.dtype(dt) in (np.dtype("float32"), np.dtype("complex64"))


def expected_dtype(value, in_dtype):
    """NumPy 1.x computes in double: map back to the array API's precision."""
    if in_dtype is not None and single(in_dtype):
        return np.dtype("complex64") if np.iscomplexobj(value) else np.dtype("float32")
    return value.dtype


def run_case(expr, arr=None, chunks=None, mem=None):
    global ncases
    ncases += 1
    d = f"{WORK}/c{ncases}"
    shutil.rmtree(d, ignore_errors=True)
    cmd = [ZCUBE, "eval", expr, "-o", f"{d}/out.zarr", "--zarr-format", "2", "--quiet"]
    env = {"np": np, **NAMES}
    if arr is not None:
        zarr.open(f"{d}/t.zarr", mode="w", shape=arr.shape, chunks=chunks, dtype=arr.dtype)[...] = arr
        cmd += ["--in", f"t={d}/t.zarr"]
        env["t"] = arr
    if mem:
        cmd += ["--allowed-mem", mem]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        failures.append(f"{expr} (shape {None if arr is None else arr.shape}, chunks {chunks}, mem {mem}): "
                        f"exit {p.returncode}: {p.stderr.strip()[:300]}")
        return
    with np.errstate(all="ignore"):
        exp = np.asarray(eval(expr, env))
    got = zarr.open(f"{d}/out.zarr", mode="r")[...]
    want_dt = expected_dtype(exp, None if arr is None else arr.dtype)
    tol = 1e-5 if single(want_dt) else 1e-12
    scale = max(np.abs(exp).max() if exp.size else 0.0, 1e-300)
    err = np.abs(got.astype(np.complex128) - exp).max() / scale if exp.size else 0.0
    if got.shape != exp.shape or got.dtype != want_dt or not err <= tol:
        failures.append(f"{expr} (shape {None if arr is None else arr.shape} {None if arr is None else arr.dtype}, "
                        f"chunks {chunks}, mem {mem}): got {got.shape} {got.dtype}, want {exp.shape} {want_dt}, "
                        f"rel err {err:.3g}")
    shutil.rmtree(d, ignore_errors=True)


def rand_array(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "i":
        x = np.round(x * 50)
    return x.astype(dtype)


def rand_chunks(shape):
    return tuple(rnd.randint(1, max(1, n)) for n in shape)


# ---------------------------------------------------------------- the examples
t = rand_array((50, 64), "float64")
run_case("abs(rfft(t, axis=1))**2", t, (7, 9))
run_case('irfft(rfft(t, axis=0), n=1000, axis=0, norm="ortho")', t, (7, 9))
run_case("fftshift(fftfreq(64, d=0.5))")
run_case("rfftfreq(101, d=0.01)")
run_case("ifftshift(fftshift(t, axes=1), axes=(1,))", t, (7, 9))
run_case("fftshift(t)", t, (50, 5))

# ---------------------------------------------------------------- random cases
ONE = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MANY = ["fftn", "ifftn", "rfftn", "irfftn"]
NORMS = [None, "backward", "ortho", "forward"]
for _ in range(NRANDOM):
    ndim = rnd.randint(1, 3)
    shape = [rnd.choice([1, 3, 5, 6]) for _ in range(ndim)]
    axis = rnd.randrange(ndim)
    shape[axis] = rnd.choice(LENGTHS[2:])
    shape = tuple(shape)
    norm = rnd.choice(NORMS)
    nm = f', norm="{norm}"' if norm else ""
    if rnd.random() < 0.7:
        f = rnd.choice(ONE)
        real_in = f in ("rfft", "ihfft")
        dtype = rnd.choice(["float64", "float32", "int32"] if real_in else ["complex128", "complex64", "float64", "float32"])
        n = rnd.choice([None, None, rnd.choice(LENGTHS[1:])])
        if f in ("irfft", "hfft") and n is None and shape[axis] < 2:
            n = 4
        ax = axis - ndim if rnd.random() < 0.5 else axis
        args = f"t, axis={ax}" + (f", n={n}" if n else "") + nm
        expr = f"{f}({args})"
    else:
        f = rnd.choice(MANY)
        dtype = rnd.choice(["float64", "float32"] if f == "rfftn" else ["complex128", "float64"])
        k = rnd.randint(1, ndim)
        axes = sorted(rnd.sample(range(ndim), k))
        use_s = rnd.random() < 0.5
        if use_s:
            s = tuple(rnd.choice(LENGTHS[2:10]) for _ in axes)
            expr = f"{f}(t, s={s}, axes={tuple(axes)}{nm})"
        else:
            if f == "irfftn" and shape[axes[-1]] < 2:
                continue
            expr = f"{f}(t, axes={tuple(axes)}{nm})"
    run_case(expr, rand_array(shape, dtype), rand_chunks(shape))

# ---------------------------------------------------------------- four-step (axis longer than a task)
# --allowed-mem 3MB: reserved 384 KiB, a line of at most ~14000 complex128 per task (at 2MB the
# output stage's tasks also need zstd:1's 0.6 MB state, counted since issue 12: over the bound)
for n, f, dtype in ((60000, "fft", "complex128"), (2 ** 15 * 3, "ifft", "complex128"), (50000, "rfft", "float64"),
                    (40001, "irfft", "complex128"), (65536, "fft", "complex64"), (40009, "fft", "complex128"),
                    (20011, "ihfft", "float64")):
    x = rand_array((n,), dtype)
    expr = f"{f}(t)" if f != "irfft" else "irfft(t, n=80000)"
    run_case(expr, x, (4096,), mem="3MB")
x = rand_array((3, 20000), "float64")
run_case('rfft(t, axis=1, norm="ortho")', x, (3, 1000), mem="3MB")

for line in failures:
    print(line)
print(f"{ncases} cases, {len(failures)} failed")
sys.exit(1 if failures else 0)
