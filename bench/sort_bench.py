#!/usr/bin/python3
"""bench/sort_bench.py — zcube's sort against NumPy's in-memory np.sort and
against Dask's single-chunk-axis sort, each peer in its own process under
/usr/bin/time -v (peak RSS), ratios measured in the same run.

    PYTHONPATH=build/python /usr/bin/python3 bench/sort_bench.py [DIR]

Cases (SORT_CASES, default "numpy dask"):
  numpy  1-D float64 of BENCH_SCALE GiB (default 1: 2^27 elements, standard
         normal), Zarr v2 chunks of 2^19 (4 MiB). NumPy: the array read whole,
         then np.sort (only np.sort is timed: its memory is the whole array and
         its sorted copy). zcube: zc.sort(x).to_zarr(...) under allowed_mem
         SORT_MEM (default 128MB) with SORT_THREADS threads (default 2) — the
         external sort (runs, then merges); timed from planning to the result
         written, reading the input included. The results are compared exactly
         (fatal on a mismatch).
  dask   the same values as (lines, 2^18) float64 with whole lines in each chunk
         of (2, 2^18) (4 MiB): Dask's map_blocks(np.sort, axis=1) to Zarr, zcube's
         zc.sort(x, axis=1) to Zarr (whole lines per task), both on SORT_THREADS
         threads, both timed from opening the input to the result written.
         Dask has no sort along a chunked axis (nor a memory bound).
JSON lines on stdout (one per case and peer, then the ratios); progress on stderr.
SORT_REPS runs per peer (default 1), the best kept. DIR (default a new /tmp dir)
is removed at the end unless SORT_KEEP=1.
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import peer_run

CHUNK = 1 << 19
LINE = 1 << 18


def log(*a):
    print("sort_bench:", *a, file=sys.stderr, flush=True)


def gen(d, n):
    import zarr
    z1 = zarr.open(f"{d}/x1.zarr", mode="w", shape=(n,), chunks=(CHUNK,), dtype="f8")
    z2 = zarr.open(f"{d}/x2.zarr", mode="w", shape=(n // LINE, LINE), chunks=(2, LINE), dtype="f8")
    rng = np.random.default_rng(18)
    step = 16 * LINE
    for i in range(0, n, step):
        v = rng.standard_normal(min(step, n - i))
        z1[i:i + len(v)] = v
        z2[i // LINE:(i + len(v)) // LINE] = v.reshape(-1, LINE)


# ---- peers (each its own process) ----

def peer_numpy(d):
    import zarr
    t0 = time.perf_counter()
    x = zarr.open(f"{d}/x1.zarr", mode="r")[:]
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    s = np.sort(x)
    sec = time.perf_counter() - t0
    np.save(f"{d}/ref.npy", s)
    return {"seconds": round(sec, 3), "load_seconds": round(load, 3)}


def peer_zcube(d, case, mem, threads):
    import zcube as zc
    spec = zc.Spec(allowed_mem=mem, threads=threads, work_dir=f"{d}/work")
    t0 = time.perf_counter()
    if case == "numpy":
        x = zc.open(f"{d}/x1.zarr")
        y = zc.sort(x)
    else:
        x = zc.open(f"{d}/x2.zarr")
        y = zc.sort(x, axis=1)
    plan = str(y.plan(spec=spec))
    y.to_zarr(f"{d}/z_{case}.zarr", codec="none", zarr_format=2, spec=spec, overwrite=True)
    return {"seconds": round(time.perf_counter() - t0, 3), "plan": plan.splitlines()[1:-1]}


def peer_dask(d, threads):
    import dask
    import dask.array as da
    t0 = time.perf_counter()
    x = da.from_zarr(f"{d}/x2.zarr")
    y = x.map_blocks(np.sort, axis=1)
    with dask.config.set(scheduler="threads", num_workers=threads):
        y.to_zarr(f"{d}/d.zarr", compressor=None, overwrite=True)
    return {"seconds": round(time.perf_counter() - t0, 3)}


def run_peer(d, reps, *args):
    return peer_run.run_peer(__file__, d, reps, *args)


def check_equal(a, b, what):
    import zarr
    za = np.load(a, mmap_mode="r") if a.endswith(".npy") else zarr.open(a, mode="r")
    zb = zarr.open(b, mode="r")
    assert za.shape == zb.shape, (what, za.shape, zb.shape)
    step = 1 << 22 if len(za.shape) == 1 else 16
    for i in range(0, za.shape[0], step):
        if not np.array_equal(np.asarray(za[i:i + step]), zb[i:i + step]):
            sys.exit(f"sort_bench: {what}: results differ in [{i}, {i + step})")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "peer":
        d, who = sys.argv[2], sys.argv[3]
        r = peer_numpy(d) if who == "numpy" else peer_dask(d, int(sys.argv[4])) if who == "dask" else \
            peer_zcube(d, sys.argv[4], sys.argv[5], int(sys.argv[6]))
        print(json.dumps(r))
        return
    scale = float(os.environ.get("BENCH_SCALE", "1"))
    mem = os.environ.get("SORT_MEM", "128MB")
    threads = os.environ.get("SORT_THREADS", "2")
    reps = int(os.environ.get("SORT_REPS", "1"))
    cases = os.environ.get("SORT_CASES", "numpy dask").split()
    n = max(LINE * 16, int((1 << 27) * scale) // (LINE * 16) * LINE * 16)
    d = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="zcube-sort-bench.")
    os.makedirs(d, exist_ok=True)
    log("load:", os.popen("uptime").read().strip())
    log(f"generating {n} float64 ({n * 8 / 2**30:.2f} GiB) in {d}")
    gen(d, n)
    try:
        if "numpy" in cases:
            log("NumPy np.sort in memory")
            ref = run_peer(d, reps, "numpy")
            print(json.dumps({"case": "numpy", "peer": "numpy", "n": n, **ref}))
            log(f"zcube sort under {mem}")
            z = run_peer(d, reps, "zcube", "numpy", mem, threads)
            print(json.dumps({"case": "numpy", "peer": "zcube", "n": n, "allowed_mem": mem, **z}))
            check_equal(f"{d}/ref.npy", f"{d}/z_numpy.zarr", "zcube vs np.sort")
            print(json.dumps({"case": "numpy", "speed_ratio_zcube_vs_numpy": round(ref["seconds"] / z["seconds"], 3),
                              "rss_ratio_zcube_vs_numpy": round(z["peak_rss_mb"] / ref["peak_rss_mb"], 3)}))
        if "dask" in cases:
            log("Dask map_blocks(np.sort) along whole-line chunks")
            dk = run_peer(d, reps, "dask", threads)
            print(json.dumps({"case": "dask", "peer": "dask", "shape": [n // LINE, LINE], **dk}))
            z = run_peer(d, reps, "zcube", "dask", mem, threads)
            print(json.dumps({"case": "dask", "peer": "zcube", "allowed_mem": mem, **z}))
            check_equal(f"{d}/d.zarr", f"{d}/z_dask.zarr", "zcube vs Dask")
            print(json.dumps({"case": "dask", "speed_ratio_zcube_vs_dask": round(dk["seconds"] / z["seconds"], 3),
                              "rss_ratio_zcube_vs_dask": round(z["peak_rss_mb"] / dk["peak_rss_mb"], 3)}))
        log("load:", os.popen("uptime").read().strip())
    finally:
        if os.environ.get("SORT_KEEP") != "1" and len(sys.argv) <= 1:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
