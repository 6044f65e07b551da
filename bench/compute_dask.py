"""bench/compute_dask.py — Dask's side of the compute benchmark (bench/compute_bench.sh).

    /usr/bin/python3 bench/compute_dask.py qm DIR [--threads 2]
    /usr/bin/python3 bench/compute_dask.py rechunk DIR [--chunks A,B,C,D] [--threads 2]
    /usr/bin/python3 bench/compute_dask.py tasks [--n N] [--split-every S] [--threads 2]
    /usr/bin/python3 bench/compute_dask.py check DIR qm|rechunk [PEER ...]

Debian's python3-dask (2022.12) with the threaded scheduler on --threads
workers, reading DIR/u.zarr and DIR/v.zarr (written by bench_compute gen) with
dask.array.from_zarr and writing to DIR/dask/ as Zarr v2 with the same codec as
the input (blosc lz4, shuffle):

  qm       mean over axis 0 of u*u, v*v, u*v: one dask.compute of the three
           to_zarr(..., compute=False) writes (the graph shares the reads)
  rechunk  from_zarr(u).rechunk(chunks).to_zarr(...), default chunks (T, 1, 100, 100)
  tasks    sum(ones((N, 8), chunks=(1, 8)), split_every=S): N blocks (default 10^5;
           10^6 takes minutes in Dask). Dask at its best: S defaults to N, one
           aggregate task over all the per-block sums (the fewest graph tasks; on
           this machine 1.6x faster than the default split_every at N = 2*10^4).
           Reports the graph's tasks after dask.optimize (what the scheduler runs).
  check    compares DIR/zcube/* with DIR/PEER/* for each PEER (default dask; e.g.
           dask cubed): means to 1e-12 relative, the rechunk exactly, and its
           chunks, slab by slab; prints one JSON line; exit 1 on a mismatch

Each case prints one JSON line like bench_compute's: seconds (wall, from
from_zarr to the results written), CPU seconds of the process, peak RSS
(getrusage ru_maxrss; Dask has no memory limit, this is what it used) and the
RSS before the computation (interpreter + numpy + dask + zarr loaded).
"""
import json
import resource
import sys
import time

import dask
import dask.array as da
import numpy as np
import zarr
from numcodecs import Blosc


def rss_now_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        return args[i + 1]
    return default


def emit(case, threads, t, cpu, rss0, **extra):
    rec = {"case": case, "peer": "dask", "dask_version": dask.__version__, "threads": threads,
           "seconds": round(t, 4), "cpu_seconds": round(cpu, 3), "rss_before_mb": round(rss0, 1),
           "peak_rss_mb": round(peak_mb(), 1)}
    rec.update(extra)
    print(json.dumps(rec), flush=True)


COMPRESSOR = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)


def qm(d, threads):
    rss0 = rss_now_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    u = da.from_zarr(f"{d}/u.zarr")
    v = da.from_zarr(f"{d}/v.zarr")
    outs = {"uu": (u * u).mean(axis=0), "vv": (v * v).mean(axis=0), "uv": (u * v).mean(axis=0)}
    writes = [m.to_zarr(f"{d}/dask/{k}.zarr", overwrite=True, compute=False, compressor=COMPRESSOR)
              for k, m in outs.items()]
    with dask.config.set(scheduler="threads", num_workers=threads):
        dask.compute(*writes)
    emit("quadratic_means", threads, time.perf_counter() - t0, time.process_time() - c0, rss0,
         T=u.shape[0], bytes_in=2 * u.nbytes)


def rechunk(d, threads, chunks):
    rss0 = rss_now_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    u = da.from_zarr(f"{d}/u.zarr")
    c = tuple(int(x) for x in chunks.split(",")) if chunks else (u.shape[0], 1, 100, 100)
    c = (min(c[0], u.shape[0]),) + c[1:]
    w = u.rechunk(c).to_zarr(f"{d}/dask/rechunk.zarr", overwrite=True, compute=False, compressor=COMPRESSOR)
    with dask.config.set(scheduler="threads", num_workers=threads):
        dask.compute(w)
    emit("rechunk", threads, time.perf_counter() - t0, time.process_time() - c0, rss0,
         T=u.shape[0], bytes_in=u.nbytes, chunks=list(c))


def tasks(n, threads, split_every):
    rss0 = rss_now_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    s = da.ones((n, 8), chunks=(1, 8)).sum(split_every=split_every)
    tg = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=threads):
        v = s.compute()
    t = time.perf_counter() - t0
    if v != 8 * n:
        sys.exit(f"compute_dask: sum of ones is {v}, expected {8 * n}")
    cpu = time.process_time() - c0
    (opt_s,) = dask.optimize(s)  # outside the timing: what the scheduler ran
    emit("tasks", threads, t, cpu, rss0, blocks=n, split_every=split_every,
         graph_tasks=len(opt_s.__dask_graph__()), graph_tasks_unoptimized=len(s.__dask_graph__()),
         build_seconds=round(tg - t0, 4), result_ok=True)


def check(d, case, peers):
    res = {"case": case, "peer": "check", "peers": peers}
    if case == "qm":
        worst = 0.0
        for k in ("uu", "vv", "uv"):
            a = zarr.open_array(f"{d}/zcube/{k}.zarr", mode="r")[:]
            for p in peers:
                b = zarr.open_array(f"{d}/{p}/{k}.zarr", mode="r")[:]
                if a.shape != b.shape:
                    res.update(ok=False, shape_mismatch=[k, p, list(a.shape), list(b.shape)])
                    print(json.dumps(res), flush=True)
                    return False
                worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))))
        # and against NumPy on a corner of the inputs
        u = zarr.open_array(f"{d}/u.zarr", mode="r")[:, :, :16, :16]
        v = zarr.open_array(f"{d}/v.zarr", mode="r")[:, :, :16, :16]
        ref = {"uu": (u * u).mean(axis=0), "vv": (v * v).mean(axis=0), "uv": (u * v).mean(axis=0)}
        np_worst = 0.0
        for k, r in ref.items():
            a = zarr.open_array(f"{d}/zcube/{k}.zarr", mode="r")[:, :16, :16]
            np_worst = max(np_worst, float(np.max(np.abs(a - r) / np.abs(r))))
        res.update(max_rel_diff_vs_peers=worst, max_rel_diff_vs_numpy=np_worst,
                   ok=worst < 1e-12 and np_worst < 1e-12)
    else:
        a = zarr.open_array(f"{d}/zcube/rechunk.zarr", mode="r")
        bs = [zarr.open_array(f"{d}/{p}/rechunk.zarr", mode="r") for p in peers]
        u = zarr.open_array(f"{d}/u.zarr", mode="r")
        same = a.shape == u.shape and all(b.shape == u.shape and a.chunks == b.chunks for b in bs)
        # bands along axis 2 of whole rechunked chunks: each of their chunks is decoded
        # once (slabs along time would decode every rechunked chunk once per slab)
        step = max(1, 500 // a.chunks[2]) * a.chunks[2]
        for y in range(0, u.shape[2], step):
            x = u[:, :, y:y + step]
            same = same and np.array_equal(a[:, :, y:y + step], x) and \
                all(np.array_equal(b[:, :, y:y + step], x) for b in bs)
        res.update(chunks=list(a.chunks), identical=bool(same), ok=bool(same))
    print(json.dumps(res), flush=True)
    return res["ok"]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    threads = int(opt(args, "--threads", "2"))
    cmd = args[0]
    if cmd == "qm":
        qm(args[1], threads)
    elif cmd == "rechunk":
        rechunk(args[1], threads, opt(args, "--chunks", None))
    elif cmd == "tasks":
        n = int(opt(args, "--n", "100000"))
        tasks(n, threads, int(opt(args, "--split-every", str(n))))
    elif cmd == "check":
        sys.exit(0 if check(args[1], args[2], args[3:] or ["dask"]) else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
