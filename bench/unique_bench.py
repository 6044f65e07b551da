#!/usr/bin/python3
"""bench/unique_bench.py — zcube's unique_counts against Dask's
da.unique(x, return_counts=True) on the same Zarr array, each peer in its own
process under /usr/bin/time -v (peak RSS), the ratio measured in the same run.

    PYTHONPATH=build/python /usr/bin/python3 bench/unique_bench.py [DIR]

Data: 1-D float64 of BENCH_SCALE GiB (default 0.25: 2^25 elements), Zarr v2
chunks of 2^19 (4 MiB), no NaNs (Dask's np.unique would merge them). Cases
(UNIQUE_CASES, default "few many"):
  few   floor(uniform(0, 1000)): 1000 distinct values — Dask's best case
        (np.unique per chunk, then once more over the concatenated partials);
  many  round(normal * 2^20): 5.1M distinct values (at 0.25 GiB), which
        Dask's last step holds at once with their counts.
Dask: da.from_zarr, da.unique(x, return_counts=True), computed on
UNIQUE_THREADS threads (default 2) into NumPy arrays. zcube:
zc.unique_counts(zc.open(x)) under allowed_mem UNIQUE_MEM (default 64MB) on
the same threads, values and counts computed into NumPy arrays in one plan;
timed from opening the input to the results in memory, zcube's count pass (a
sort of x) included. Both results are compared with each other and with
NumPy's np.unique (fatal on a mismatch). JSON lines on stdout (one per case
and peer, then the ratios); progress on stderr. UNIQUE_REPS runs per peer
(default 1), the best kept. DIR (default a new /tmp dir) is removed at the end
unless UNIQUE_KEEP=1.
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


def log(*a):
    print("unique_bench:", *a, file=sys.stderr, flush=True)


def gen(d, n):
    import zarr
    rng = np.random.default_rng(18)
    z = {c: zarr.open(f"{d}/{c}.zarr", mode="w", shape=(n,), chunks=(CHUNK,), dtype="f8") for c in ("few", "many")}
    step = 16 * CHUNK
    for i in range(0, n, step):
        m = min(step, n - i)
        z["few"][i:i + m] = np.floor(rng.uniform(0, 1000, m))
        z["many"][i:i + m] = np.round(rng.standard_normal(m) * (1 << 20))


# ---- peers (each its own process) ----

def peer_dask(d, case, threads):
    import dask
    import dask.array as da
    t0 = time.perf_counter()
    x = da.from_zarr(f"{d}/{case}.zarr")
    v, c = da.unique(x, return_counts=True)
    with dask.config.set(scheduler="threads", num_workers=threads):
        v, c = dask.compute(v, c)
    sec = time.perf_counter() - t0
    np.save(f"{d}/dask_v.npy", v)
    np.save(f"{d}/dask_c.npy", c)
    return {"seconds": round(sec, 3), "distinct": int(v.size)}


def peer_zcube(d, case, mem, threads):
    import zcube as zc
    spec = zc.Spec(allowed_mem=mem, threads=threads, work_dir=f"{d}/work")
    t0 = time.perf_counter()
    with zc.using_spec(spec):
        r = zc.unique_counts(zc.open(f"{d}/{case}.zarr"))
    count = time.perf_counter() - t0
    plan = str(zc.plan(r.values, r.counts, spec=spec))
    t1 = time.perf_counter()
    v, c = zc.compute(r.values, r.counts, spec=spec)
    sec = count + time.perf_counter() - t1
    np.save(f"{d}/zcube_v.npy", v)
    np.save(f"{d}/zcube_c.npy", c)
    return {"seconds": round(sec, 3), "count_pass_seconds": round(count, 3), "distinct": int(v.size),
            "plan": plan.splitlines()[1:-1]}


def run_peer(d, reps, *args):
    return peer_run.run_peer(__file__, d, reps, *args)


def check(d, case):
    """Both peers' values and counts equal NumPy's np.unique of the data."""
    import zarr
    v, c = np.unique(zarr.open(f"{d}/{case}.zarr", mode="r")[:], return_counts=True)
    for who in ("dask", "zcube"):
        gv, gc = np.load(f"{d}/{who}_v.npy"), np.load(f"{d}/{who}_c.npy")
        if not (np.array_equal(gv, v) and np.array_equal(gc, c)):
            sys.exit(f"unique_bench: {case}: {who}'s values or counts differ from np.unique's")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "peer":
        d, who, case = sys.argv[2], sys.argv[3], sys.argv[4]
        r = peer_dask(d, case, int(sys.argv[5])) if who == "dask" else \
            peer_zcube(d, case, sys.argv[5], int(sys.argv[6]))
        print(json.dumps(r))
        return
    scale = float(os.environ.get("BENCH_SCALE", "0.25"))
    mem = os.environ.get("UNIQUE_MEM", "64MB")
    threads = os.environ.get("UNIQUE_THREADS", "2")
    reps = int(os.environ.get("UNIQUE_REPS", "1"))
    cases = os.environ.get("UNIQUE_CASES", "few many").split()
    n = max(CHUNK * 16, int((1 << 27) * scale) // CHUNK * CHUNK)
    d = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="zcube-unique-bench.")
    os.makedirs(d, exist_ok=True)
    log("load:", os.popen("uptime").read().strip())
    log(f"generating {n} float64 ({n * 8 / 2**30:.2f} GiB) x 2 in {d}")
    gen(d, n)
    try:
        for case in cases:
            log(f"{case}: Dask da.unique(return_counts=True)")
            dk = run_peer(d, reps, "dask", case, threads)
            print(json.dumps({"case": case, "peer": "dask", "n": n, **dk}))
            log(f"{case}: zcube unique_counts under {mem}")
            z = run_peer(d, reps, "zcube", case, mem, threads)
            print(json.dumps({"case": case, "peer": "zcube", "n": n, "allowed_mem": mem, **z}))
            check(d, case)
            print(json.dumps({"case": case, "speed_ratio_zcube_vs_dask": round(dk["seconds"] / z["seconds"], 3),
                              "rss_ratio_zcube_vs_dask": round(z["peak_rss_mb"] / dk["peak_rss_mb"], 3)}))
        log("load:", os.popen("uptime").read().strip())
    finally:
        if os.environ.get("UNIQUE_KEEP") != "1" and len(sys.argv) <= 1:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
