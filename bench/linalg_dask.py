"""bench/linalg_dask.py — data and Dask's side of the linear algebra benchmark
(bench/linalg_bench.sh).

    /usr/bin/python3 bench/linalg_dask.py gen DIR [--m 2000000] [--n 50] [--rm 100000] [--rn 1000]
    /usr/bin/python3 bench/linalg_dask.py svd DIR [--threads 2]
    /usr/bin/python3 bench/linalg_dask.py rsvd DIR [--k 10] [--power 2] [--threads 2]
    /usr/bin/python3 bench/linalg_dask.py check DIR svd|rsvd

gen writes, as Zarr v2 (blosc lz4, shuffle), DIR/tall.zarr: float64 (m, n) standard
normal, chunks (100000, n); DIR/wide.zarr: float64 (rm, rn) = X·diag(0.8^i)·Y + 1e-3·noise
with X, Y Gaussian of inner size 40 (a known, decaying spectrum), chunks (10000, rn).

svd   da.linalg.svd (tsqr) of tall.zarr: U written to DIR/dask/u.zarr, S and V computed
      in the same dask.compute.
rsvd  da.linalg.svd_compressed(wide, k, n_power_iter=power, n_oversamples=10, seed=0):
      U, S, V written to DIR/dask/r_*.zarr in one dask.compute.
check compares one case's results of both peers (DIR/zcube/*, DIR/dask/*) with NumPy's:
      svd: both S with numpy.linalg.svd's (1e-10 relative to S[0]), zcube's
      U·diag(S)·Vt = A on a slab (1e-10 relative to max |A|) and UᵀU = I (1e-10);
      rsvd: both S with the exact top values from eigvalsh(AᵀA) of the wide matrix
      (1e-3 relative), zcube's UᵀU = I (1e-10). Prints one JSON line; exit 1 when a
      check fails (a peer's wrong result makes the comparison void as well).

Each run prints one JSON line: seconds (wall, from from_zarr to results written),
CPU seconds and peak RSS of the process (getrusage).
"""
import json
import os
import resource
import sys
import time

import numpy as np
import zarr
from numcodecs import Blosc


def arg(name, default, conv=int):
    if name in sys.argv:
        return conv(sys.argv[sys.argv.index(name) + 1])
    return default


def usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_maxrss / 1024


COMP = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)


def gen(d):
    m, n, rm, rn = arg("--m", 2000000), arg("--n", 50), arg("--rm", 100000), arg("--rn", 1000)
    rng = np.random.default_rng(1)
    t = zarr.open(f"{d}/tall.zarr", mode="w", shape=(m, n), chunks=(100000, n), dtype="f8", compressor=COMP)
    for i in range(0, m, 100000):
        t[i:i + 100000] = rng.standard_normal((min(100000, m - i), n))
    r = 40
    y = rng.standard_normal((r, rn)) * (0.8 ** np.arange(r))[:, None]
    w = zarr.open(f"{d}/wide.zarr", mode="w", shape=(rm, rn), chunks=(10000, rn), dtype="f8", compressor=COMP)
    for i in range(0, rm, 10000):
        h = min(10000, rm - i)
        w[i:i + h] = rng.standard_normal((h, r)) @ y + 1e-3 * rng.standard_normal((h, rn))


def run(case, d):
    import dask
    import dask.array as da
    threads = arg("--threads", 2)
    dask.config.set(scheduler="threads", num_workers=threads)
    os.makedirs(f"{d}/dask", exist_ok=True)
    t0 = time.perf_counter()
    if case == "svd":
        a = da.from_zarr(f"{d}/tall.zarr")
        u, s, v = da.linalg.svd(a)
        w = da.to_zarr(u, f"{d}/dask/u.zarr", overwrite=True, compute=False, compressor=COMP)
        _, s, v = dask.compute(w, s, v)
        np.save(f"{d}/dask/s.npy", s)
        np.save(f"{d}/dask/v.npy", v)
        info = {"shape": list(a.shape), "chunks": list(a.chunksize)}
    else:
        k, power = arg("--k", 10), arg("--power", 2)
        a = da.from_zarr(f"{d}/wide.zarr")
        u, s, v = da.linalg.svd_compressed(a, k, n_power_iter=power, n_oversamples=10, seed=0)
        ws = [da.to_zarr(x, f"{d}/dask/r_{nm}.zarr", overwrite=True, compute=False, compressor=COMP)
              for x, nm in ((u, "u"), (s, "s"), (v, "v"))]
        dask.compute(*ws)
        info = {"shape": list(a.shape), "chunks": list(a.chunksize), "k": k, "power_iters": power, "oversamples": 10}
    sec = time.perf_counter() - t0
    cpu, rss = usage()
    print(json.dumps(dict(peer="dask", case=case, seconds=round(sec, 3), cpu_seconds=round(cpu, 3),
                          peak_rss_mb=round(rss, 1), **info)))


def check(d, case):
    out = {"case": case}
    if case == "svd":
        a = zarr.open(f"{d}/tall.zarr", mode="r")
        A = a[...]
        sref = np.linalg.svd(A, compute_uv=False)
        zs = zarr.open(f"{d}/zcube/s.zarr", mode="r")[...]
        ds = np.load(f"{d}/dask/s.npy")
        out["tall_s_vs_numpy"] = float(np.max(np.abs(zs - sref)) / sref[0])
        out["tall_s_dask_vs_numpy"] = float(np.max(np.abs(ds - sref)) / sref[0])
        zu = zarr.open(f"{d}/zcube/u.zarr", mode="r")
        zvt = zarr.open(f"{d}/zcube/vt.zarr", mode="r")[...]
        u0 = zu[:200000]
        out["tall_usv_minus_a_slab"] = float(np.max(np.abs((u0 * zs) @ zvt - A[:200000])) / np.max(np.abs(A)))
        g = np.zeros((zu.shape[1], zu.shape[1]))
        for i in range(0, zu.shape[0], 200000):
            x = zu[i:i + 200000]
            g += x.T @ x
        out["tall_utu_minus_i"] = float(np.max(np.abs(g - np.eye(g.shape[0]))))
        out["ok"] = (out["tall_s_vs_numpy"] < 1e-10 and out["tall_s_dask_vs_numpy"] < 1e-10 and
                     out["tall_usv_minus_a_slab"] < 1e-10 and out["tall_utu_minus_i"] < 1e-10)
    else:
        w = zarr.open(f"{d}/wide.zarr", mode="r")
        gram = np.zeros((w.shape[1], w.shape[1]))
        for i in range(0, w.shape[0], 10000):
            x = w[i:i + 10000]
            gram += x.T @ x
        exact = np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[::-1], 0))
        rz = zarr.open(f"{d}/zcube/r_s.zarr", mode="r")[...]
        rd = zarr.open(f"{d}/dask/r_s.zarr", mode="r")[...]
        k = len(rz)
        out["rsvd_k"] = k
        out["rsvd_s_vs_exact"] = float(np.max(np.abs(rz - exact[:k]) / exact[:k]))
        out["rsvd_s_dask_vs_exact"] = float(np.max(np.abs(rd - exact[:k]) / exact[:k]))
        ru = zarr.open(f"{d}/zcube/r_u.zarr", mode="r")[...]
        out["rsvd_utu_minus_i"] = float(np.max(np.abs(ru.T @ ru - np.eye(k))))
        out["sigma_k_plus_1_exact"] = float(exact[k])
        out["ok"] = (len(rd) == k and out["rsvd_s_vs_exact"] < 1e-3 and out["rsvd_s_dask_vs_exact"] < 1e-3 and
                     out["rsvd_utu_minus_i"] < 1e-10)
    print(json.dumps(out))
    return out["ok"]


if __name__ == "__main__":
    case, d = sys.argv[1], sys.argv[2]
    if case == "gen":
        gen(d)
    elif case == "check":
        sys.exit(0 if check(d, sys.argv[3]) else 1)
    else:
        run(case, d)
