"""bench/python_bench.py — zcube from Python against dask.array, the zcube
command, and zarr-python in a PyTorch DataLoader, on the same data and threads,
in one run. Prints one JSON line per case on stdout; progress on stderr.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [options]

    --T N          time steps of u, v: float64 (T, 1, 721, 1440) chunked
                   (10, 1, 721, 1440), Zarr v2 blosc-lz4+shuffle (default 40,
                   332 MB each)
    --threads N    threads of every peer (default 2)
    --mem SIZE     allowed_mem of zcube's tasks (default 1500MB)
    --reps N       runs of each peer per case, alternating, fastest kept (default 3)
    --cases LIST   qm,rechunk,cli,sampler (default all)
    --batches N    sampler case: batches of 32 crops per peer (default 40)
    --dir D        data folder (default a new one under /tmp, removed at the end)
    --cli PATH     the zcube command (default build/zcube)

Cases (each peer runs in its own process, the inputs in the page cache):
  qm        the Quadratic Means mean(u*u), mean(v*v), mean(u*v) over axis 0,
            written as Zarr: zcube (zc.store, one plan) vs dask (one
            dask.compute of three to_zarr); results compared (1e-12 of the largest)
  rechunk   u from time chunks to (T, 1, 100, 100): zcube vs dask; compared exactly
  cli       the binding's overhead: mean(u*v, axis=0) and the rechunk through
            the zcube command vs the same calls from Python (time from
            zc.open to the array written, and the whole process)
  sampler   random 4x128x128x10 float32 crops, batches of 32, from a Zarr v2
            blosc-lz4 array chunked (1, 64, 64, 10): zcube.torch.WindowDataset
            vs an IterableDataset reading the same crops with zarr-python, both
            in torch DataLoader(num_workers=2); and zcube's WindowSampler in the
            training process (2 threads, 1 batch prefetched, DLPack to torch)
            against the same zarr-python DataLoader; samples/s, batches compared
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
SHAPE = (1, 721, 1440)


def log(*a):
    print("python_bench:", *a, file=sys.stderr, flush=True)


def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# ---------------------------------------------------------------- peers (each in its own process)

def peer_zcube(case, d, threads, mem, T):
    import zcube as zc
    spec = zc.Spec(allowed_mem=mem, threads=threads, work_dir=os.path.join(d, "work"), progress=False)
    t0, c0 = time.perf_counter(), cpu()
    u, v = zc.open(f"{d}/u.zarr"), zc.open(f"{d}/v.zarr")
    if case == "qm":
        zc.store([zc.mean(u * u, axis=0), zc.mean(v * v, axis=0), zc.mean(u * v, axis=0)],
                 [(f"{d}/zcube/{k}.zarr", "") for k in ("uu", "vv", "uv")],
                 spec=spec, codec="blosc:lz4:5:shuffle", zarr_format=2, overwrite=True)
    elif case == "qm1":
        zc.mean(u * v, axis=0).to_zarr(f"{d}/zcube/uv1.zarr", spec=spec, codec="zstd:1", overwrite=True)
    elif case == "rechunk":
        u.rechunk((T, 1, 100, 100)).to_zarr(f"{d}/zcube/r.zarr", spec=spec, codec="blosc:lz4:5:shuffle",
                                            zarr_format=2, overwrite=True)
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": cpu() - c0}


def peer_dask(case, d, threads, mem, T):
    import dask
    import dask.array as da
    from numcodecs import Blosc
    comp = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    t0, c0 = time.perf_counter(), cpu()
    u, v = da.from_zarr(f"{d}/u.zarr"), da.from_zarr(f"{d}/v.zarr")
    if case == "qm":
        outs = {"uu": (u * u).mean(axis=0), "vv": (v * v).mean(axis=0), "uv": (u * v).mean(axis=0)}
        w = [m.to_zarr(f"{d}/dask/{k}.zarr", overwrite=True, compute=False, compressor=comp) for k, m in outs.items()]
    else:
        w = [u.rechunk((T, 1, 100, 100)).to_zarr(f"{d}/dask/r.zarr", overwrite=True, compute=False, compressor=comp)]
    with dask.config.set(scheduler="threads", num_workers=threads):
        dask.compute(*w)
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": cpu() - c0}


def children_cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_peer(peer, case, a):
    """One run of a peer in a fresh process: its JSON, plus the process's wall and CPU time."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    cmd = [PY, os.path.abspath(__file__), "--peer", peer, "--case", case, "--dir", a.dir, "--threads",
           str(a.threads), "--mem", a.mem, "--T", str(a.T)]
    t0, c0 = time.perf_counter(), children_cpu()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["process_seconds"] = time.perf_counter() - t0
    r["process_cpu_seconds"] = children_cpu() - c0
    return r


def run_cli(args):
    t0, c0 = time.perf_counter(), children_cpu()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    t, c = time.perf_counter() - t0, children_cpu() - c0
    return {"seconds": t, "process_seconds": t, "cpu_seconds": c, "process_cpu_seconds": c}


def warm(d):
    for name in ("u.zarr", "v.zarr"):
        for root, _, files in os.walk(os.path.join(d, name)):
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    while fh.read(1 << 24):
                        pass


def clean(d, *names):
    for n in names:
        shutil.rmtree(os.path.join(d, n), ignore_errors=True)
        os.makedirs(os.path.join(d, n), exist_ok=True)


def loadavg():
    return float(open("/proc/loadavg").read().split()[0])


# ---------------------------------------------------------------- cases

def gen(a):
    import zcube as zc
    for i, name in enumerate(("u", "v")):
        p = f"{a.dir}/{name}.zarr"
        if os.path.exists(p):
            continue
        x = zc.random.normal(0, 10, (a.T,) + SHAPE, seed=i + 1, chunks=(10,) + SHAPE)
        x.to_zarr(p, codec="blosc:lz4:5:shuffle", zarr_format=2,
                  spec=zc.Spec(threads=a.threads, allowed_mem="1GB", progress=False))


def compare_case(a, case, peers):
    best, runs = {}, {}
    for r in range(a.reps):
        for peer in peers:
            clean(a.dir, "zcube", "dask")
            warm(a.dir)
            res = peer()
            runs.setdefault(peer.__name__, []).append(round(res["seconds"], 3))
            if peer.__name__ not in best or res["seconds"] < best[peer.__name__]["seconds"]:
                best[peer.__name__] = res
    for k in best:
        best[k]["runs"] = runs[k]
    return best


def check_qm(d):
    import zarr
    for k in ("uu", "vv", "uv"):
        z, dk = zarr.open(f"{d}/zcube/{k}.zarr", "r")[:], zarr.open(f"{d}/dask/{k}.zarr", "r")[:]
        # relative to the largest mean: a mean near 0 (uv) differs by rounding alone
        scale = float(np.abs(dk).max()) or 1.0
        if z.shape != dk.shape or np.abs(z - dk).max() > 1e-12 * scale:
            sys.exit(f"python_bench: qm {k}: zcube and dask differ (max {np.abs(z - dk).max()}, scale {scale})")


def check_rechunk(d, T):
    import zarr
    z, dk = zarr.open(f"{d}/zcube/r.zarr", "r"), zarr.open(f"{d}/dask/r.zarr", "r")
    if tuple(z.chunks) != (T, 1, 100, 100):
        sys.exit(f"python_bench: rechunk: zcube's chunks are {z.chunks}")
    for y in range(0, SHAPE[1], 200):
        if not np.array_equal(z[:, :, y:y + 200], dk[:, :, y:y + 200]):
            sys.exit(f"python_bench: rechunk: zcube and dask differ at rows {y}..")


def case_compare(a, case):
    def zcube_py():
        r = run_peer("zcube", case, a)
        return r

    def dask_():
        return run_peer("dask", case, a)
    zcube_py.__name__, dask_.__name__ = "zcube", "dask"
    best = compare_case(a, case, [dask_, zcube_py])
    # the last run of each peer left its output: check them against each other
    clean(a.dir, "zcube", "dask")
    run_peer("zcube", case, a)
    run_peer("dask", case, a)
    check_qm(a.dir) if case == "qm" else check_rechunk(a.dir, a.T)
    z, dk = best["zcube"], best["dask"]
    return {"case": case, "T": a.T, "threads": a.threads, "loadavg1": loadavg(), "zcube_s": round(z["seconds"], 3),
            "dask_s": round(dk["seconds"], 3), "zcube_cpu_s": round(z["cpu_seconds"], 2),
            "dask_cpu_s": round(dk["cpu_seconds"], 2), "zcube_runs": z["runs"], "dask_runs": dk["runs"],
            "speed_ratio": round(dk["seconds"] / z["seconds"], 3),
            "cpu_ratio": round(dk["cpu_seconds"] / z["cpu_seconds"], 3), "goal_2x": dk["seconds"] / z["seconds"] >= 2}


def case_cli(a):
    cli = a.cli
    out = []
    for case, argv in (("qm1", [cli, "eval", "mean(u*v, axis=0)", "--in", f"u={a.dir}/u.zarr", "--in",
                                f"v={a.dir}/v.zarr", "-o", f"{a.dir}/zcube/uv1.zarr", "--codec", "zstd:1"]),
                       ("rechunk", [cli, "rechunk", f"{a.dir}/u.zarr", f"{a.dir}/zcube/r.zarr", "--chunks",
                                    f"{a.T},1,100,100", "--codec", "blosc:lz4:5:shuffle", "--zarr-format", "2"])):
        argv = argv + ["--allowed-mem", a.mem, "--threads", str(a.threads), "--work-dir",
                       f"{a.dir}/work", "-q"]
        best, runs = {"cli": None, "py": None}, {"cli": [], "py": []}
        for _ in range(a.reps):
            for peer in ("cli", "py"):
                clean(a.dir, "zcube")
                warm(a.dir)
                r = run_cli(argv) if peer == "cli" else run_peer("zcube", case, a)
                runs[peer].append(round(r["seconds"], 3))
                if best[peer] is None or r["seconds"] < best[peer]["seconds"]:
                    best[peer] = r
        c, p = best["cli"], best["py"]
        out.append({"case": f"binding_{case}", "T": a.T, "threads": a.threads, "loadavg1": loadavg(),
                    "cli_process_s": round(c["seconds"], 3), "python_compute_s": round(p["seconds"], 3),
                    "python_process_s": round(p["process_seconds"], 3), "cli_runs": runs["cli"],
                    "python_compute_runs": runs["py"],
                    "cli_cpu_s": round(c["cpu_seconds"], 3), "python_compute_cpu_s": round(p["cpu_seconds"], 3),
                    "python_process_cpu_s": round(p["process_cpu_seconds"], 3),
                    "overhead_compute_pct": round(100 * (p["seconds"] / c["seconds"] - 1), 2),
                    "overhead_compute_cpu_pct": round(100 * (p["cpu_seconds"] / c["cpu_seconds"] - 1), 2)})
    return out


def case_sampler(a):
    import torch
    import zarr
    from numcodecs import Blosc

    import zcube as zc
    from zcube.torch import WindowDataset
    p = f"{a.dir}/crops.zarr"
    shape, chunks, window, batch = (24, 512, 512, 10), (1, 64, 64, 10), (4, 128, 128, 10), 32
    if not os.path.exists(p):
        z = zarr.open(p, "w", shape=shape, chunks=chunks, dtype="f4",
                      compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE))
        rng = np.random.default_rng(0)
        for t in range(shape[0]):
            z[t] = (np.cumsum(rng.standard_normal(shape[1:]), axis=0) * 0.1).astype("f4")
    nb = a.batches
    ds = WindowDataset({"x": p}, window=window, batch=batch, seed=7, threads=1)
    ref = ZarrCrops(p, ds, nb)
    ceiling = Transport((batch,) + window)
    best = {}
    for _ in range(a.reps):
        for name, dset in (("zarr_python", ref), ("zcube", ds), ("transport", ceiling)):
            loader = torch.utils.data.DataLoader(LimitSteps(dset, nb), batch_size=None, num_workers=2)
            t0 = time.perf_counter()
            n, first = 0, None
            for b in loader:
                n += b["x"].shape[0]
                if int(b["step"]) == 0:
                    first = b["x"].clone()
            dt = time.perf_counter() - t0
            if name not in best or dt < best[name][0]:
                best[name] = (dt, n, first)
        # the sampler as zcube means it to be used in a training loop: in the
        # training process, its own 2 threads decoding and one batch prefetched,
        # each batch handed to torch without a copy (DLPack), no worker processes;
        # timed from its construction (its prefetch starts there), as the
        # DataLoaders are timed from starting their workers
        from zcube.loader import WindowSampler
        t0 = time.perf_counter()
        s = WindowSampler({"x": p}, window=window, batch=batch, seed=7, threads=2, prefetch=1)
        n, first = 0, None
        for step, b in enumerate(s):
            if step == nb:
                break
            x = torch.from_dlpack(b.data["x"])
            n += x.shape[0]
            if step == 0:
                first = x.clone()
        dt = time.perf_counter() - t0
        del s
        if "inprocess" not in best or dt < best["inprocess"][0]:
            best["inprocess"] = (dt, n, first)
    (zt, zn, zf), (rt, rn, rf), (tt, tn, _) = best["zcube"], best["zarr_python"], best["transport"]
    it, inn, inf = best["inprocess"]
    if zn != rn or zn != nb * batch or inn != zn or not torch.equal(zf, rf) or not torch.equal(inf, rf):
        sys.exit("python_bench: sampler: zcube's and zarr-python's batches differ")
    return {"case": "sampler_dataloader", "workers": 2, "batches": nb, "batch": batch, "window": window,
            "loadavg1": loadavg(), "zcube_samples_per_s": round(zn / zt, 1),
            "zarr_python_samples_per_s": round(rn / rt, 1), "speed_ratio": round(rt / zt, 3),
            "transport_ceiling_samples_per_s": round(tn / tt, 1), "zcube_of_ceiling": round(tt / zt, 3),
            "goal_3x": rt / zt >= 3, "zcube_inprocess_samples_per_s": round(inn / it, 1),
            "inprocess_speed_ratio": round(rt / it, 3), "inprocess_goal_3x": rt / it >= 3}


class Transport:
    """The DataLoader's own ceiling: batches of the same shape made in shared memory
    and filled (one write, as a reader's), no reading — what 2 workers and the main
    process can hand over per second on this machine."""

    def __init__(self, shape):
        self.shape = shape

    def read_step(self, step):
        import torch
        from zcube.torch import _shared_empty
        t = _shared_empty(self.shape, torch.float32)
        t.numpy().fill(step)
        return {"step": step, "x": t}


LimitSteps = None  # set by _datasets()


def _datasets():
    """Defined once torch is imported (the peers of the sampler case)."""
    import torch
    from torch.utils.data import IterableDataset, get_worker_info

    class Limit(IterableDataset):
        """The first n batches of an epoch of `inner`, split over workers like WindowDataset."""

        def __init__(self, inner, n):
            self.inner, self.n = inner, n

        def __iter__(self):
            info = get_worker_info()
            w, nw = (info.id, info.num_workers) if info else (0, 1)
            if hasattr(self.inner, "read_step"):
                for s in range(w, self.n, nw):
                    yield self.inner.read_step(s)
            else:  # WindowDataset's own worker path (epoch 0 splits the same way)
                for b in self.inner:
                    if int(b["step"]) >= self.n:
                        break
                    yield b

    class Crops:
        """zarr-python reading the crops whose origins the sampler draws (origins
        taken from zcube's sampler, data read by zarr-python, one
        get_basic_selection per crop straight into the batch), into the same
        kind of buffer as WindowDataset: a fresh tensor in shared memory."""

        def __init__(self, path, ds, n):
            s = ds._get_sampler()
            self.path, self.origins = path, [s.read(b).origins["x"].copy() for b in range(n)]
            self.window = s._shapes[0][1:]
            self.z = None

        def read_step(self, step):
            import zarr
            if self.z is None:
                self.z = zarr.open(self.path, "r")
            from zcube.torch import _shared_empty
            w = self.window
            t = _shared_empty((len(self.origins[step]),) + tuple(w), torch.float32)
            out = t.numpy()
            for i, o in enumerate(self.origins[step]):
                self.z.get_basic_selection(tuple(slice(int(a), int(a) + n) for a, n in zip(o, w)), out=out[i])
            return {"step": step, "x": t}

    return Limit, Crops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mem", default="1500MB")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cases", default="qm,rechunk,cli,sampler")
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--dir")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "zcube"))
    ap.add_argument("--peer")
    ap.add_argument("--case")
    a = ap.parse_args()
    if a.peer:
        fn = peer_zcube if a.peer == "zcube" else peer_dask
        print(json.dumps(fn(a.case, a.dir, a.threads, a.mem, a.T)))
        return
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    tmp = None
    if not a.dir:
        tmp = a.dir = tempfile.mkdtemp(prefix="zcube-python-bench.")
    try:
        cases = a.cases.split(",")
        if {"qm", "rechunk", "cli"} & set(cases):
            log(f"generating u, v: float64 ({a.T}, 1, 721, 1440) in {a.dir}")
            gen(a)
        for case in cases:
            log(f"case {case}")
            if case in ("qm", "rechunk"):
                print(json.dumps(case_compare(a, case)), flush=True)
            elif case == "cli":
                for line in case_cli(a):
                    print(json.dumps(line), flush=True)
            elif case == "sampler":
                global LimitSteps, ZarrCrops
                LimitSteps, ZarrCrops = _datasets()
                print(json.dumps(case_sampler(a)), flush=True)
            else:
                sys.exit(f"python_bench: unknown case {case!r}")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


ZarrCrops = None

if __name__ == "__main__":
    main()
