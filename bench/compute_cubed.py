"""bench/compute_cubed.py — Cubed's side of the compute benchmark (bench/compute_bench.sh).

    . /work/shared/peers/cubed/env.sh    (the vendored Cubed 0.25.0, see its README)
    /usr/bin/python3 bench/compute_cubed.py qm DIR --allowed-mem MB [--threads 2]
    /usr/bin/python3 bench/compute_cubed.py rechunk DIR --allowed-mem MB [--chunks A,B,C,D] [--threads 2]
    /usr/bin/python3 bench/compute_cubed.py tasks --n N --allowed-mem MB [--threads 2]

Configured as its authors advise for a fair comparison: Spec(allowed_mem=) at the
bound zcube gets (MiB, per task), the threads executor with the same number of
workers, optimizations on (the default), intermediates in DIR/cubed-work (tasks:
a new dir under /tmp, removed). Reads DIR/u.zarr and DIR/v.zarr (written by
bench_compute gen) and writes DIR/cubed/ as Zarr v2 with the same codec as the
input (blosc lz4, shuffle), like bench_compute and compute_dask.py:

  qm       mean over axis 0 of u*u, v*v, u*v: one cubed.store of the three
           (when Cubed refuses, its projection above allowed_mem, the line has
           "refused": its message and no seconds)
  rechunk  from_zarr(u).rechunk(chunks) stored, default chunks (T, 1, 100, 100)
  tasks    sum(ones((N, 8), chunks=(1, 8))), checked to be 8N (Cubed writes every
           intermediate chunk to its work dir: give it a small N)

Prints one JSON line like compute_dask.py's: seconds (wall, from from_zarr to the
results written), CPU seconds of the process, peak RSS (getrusage).
"""
import json
import resource
import shutil
import sys
import tempfile
import time

import cubed
import cubed.array_api as xp
import zarr
from cubed.runtime.executors.local import ThreadsExecutor
from numcodecs import Blosc

COMPRESSOR = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)


def opt(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def emit(case, threads, mem, t, cpu, **extra):
    rec = {"case": case, "peer": "cubed", "threads": threads, "allowed_mem_mb": mem,
           "seconds": None if t is None else round(t, 4), "cpu_seconds": None if cpu is None else round(cpu, 3),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    rec.update(extra)
    print(json.dumps(rec), flush=True)


def spec(work, mem):
    return cubed.Spec(work_dir=work, allowed_mem=int(mem * 2**20))  # bytes, as zcube's


def target(path, a):
    return zarr.open(path, mode="w", shape=a.shape, chunks=a.chunksize, dtype=a.dtype, compressor=COMPRESSOR)


def store(sources, paths, threads):
    cubed.store(sources, [target(p, s) for s, p in zip(sources, paths)], executor=ThreadsExecutor(),
                max_workers=threads)


def qm(d, threads, mem):
    t0, c0 = time.perf_counter(), time.process_time()
    s = spec(f"{d}/cubed-work", mem)
    u = cubed.from_zarr(f"{d}/u.zarr", spec=s)
    v = cubed.from_zarr(f"{d}/v.zarr", spec=s)
    try:
        outs = {"uu": xp.mean(u * u, axis=0), "vv": xp.mean(v * v, axis=0), "uv": xp.mean(u * v, axis=0)}
        store(list(outs.values()), [f"{d}/cubed/{k}.zarr" for k in outs], threads)
    except ValueError as e:  # Cubed projects more than allowed_mem: it refuses (before any work)
        if "allowed_mem" not in str(e) and "rojected" not in str(e):
            raise
        emit("quadratic_means", threads, mem, None, None, T=u.shape[0], bytes_in=2 * u.nbytes, refused=str(e))
        return
    emit("quadratic_means", threads, mem, time.perf_counter() - t0, time.process_time() - c0,
         T=u.shape[0], bytes_in=2 * u.nbytes)


def rechunk(d, threads, mem, chunks):
    t0, c0 = time.perf_counter(), time.process_time()
    s = spec(f"{d}/cubed-work", mem)
    u = cubed.from_zarr(f"{d}/u.zarr", spec=s)
    c = tuple(int(x) for x in chunks.split(",")) if chunks else (u.shape[0], 1, 100, 100)
    c = (min(c[0], u.shape[0]),) + c[1:]
    store([u.rechunk(c)], [f"{d}/cubed/rechunk.zarr"], threads)
    emit("rechunk", threads, mem, time.perf_counter() - t0, time.process_time() - c0,
         T=u.shape[0], bytes_in=u.nbytes, chunks=list(c))


def tasks(n, threads, mem):
    work = tempfile.mkdtemp(prefix="zcube-cubed-tasks.")
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        s = xp.sum(xp.ones((n, 8), chunks=(1, 8), spec=spec(work, mem)))
        v = float(s.compute(executor=ThreadsExecutor(), max_workers=threads))
        t = time.perf_counter() - t0
        if v != 8 * n:
            sys.exit(f"compute_cubed: sum of ones is {v}, expected {8 * n}")
        emit("tasks", threads, mem, t, time.process_time() - c0, blocks=n, result_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    threads = int(opt(args, "--threads", "2"))
    mem = float(opt(args, "--allowed-mem", "1500"))
    cmd = args[0]
    if cmd == "qm":
        qm(args[1], threads, mem)
    elif cmd == "rechunk":
        rechunk(args[1], threads, mem, opt(args, "--chunks", None))
    elif cmd == "tasks":
        tasks(int(opt(args, "--n", "1000")), threads, mem)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
