#!/bin/bash
# bench/linalg_bench.sh — zcube's TSQR SVD and randomized SVD against Dask's
# da.linalg.svd and da.linalg.svd_compressed on the same Zarr data, in the same run.
# Prints one JSON object per case on stdout (both peers' seconds, CPU seconds, peak
# RSS from /usr/bin/time -v, the speed ratio Dask/zcube, the load average) and a
# last line with the result checks; progress goes to stderr.
#
#   usage: bash bench/linalg_bench.sh [BUILD_DIR]
#
#   BUILD_DIR        a CMake build dir of this repo (default: build-bench); target
#                    bench_linalg is built there if missing.
#   BENCH_M, BENCH_N tall matrix for svd (default 2000000 x 50 float64, 800 MB, chunks
#                    (100000, 50)).
#   BENCH_RM, BENCH_RN  matrix for svd_compressed (default 100000 x 1000, 800 MB, chunks
#                    (10000, 1000)), known decaying spectrum (bench/linalg_dask.py gen).
#   BENCH_K, BENCH_POWER  rank and power iterations (default 10 and 2; oversamples 10).
#   BENCH_MEM        zcube's allowed_mem in MiB per task (default 1024).
#   BENCH_CACHE      zcube's cache_mem in MiB (decoded source chunks kept for the whole
#                    computation, beyond allowed_mem per task; default 1024: the
#                    memory Dask holds the matrix in; 0 = off, A read at every pass).
#   BENCH_THREADS    threads of both peers (default 2).
#   BENCH_REPS       runs of each peer per case, the fastest kept (default 1).
#   BENCH_NICE       niceness of both peers (default 0).
#   BENCH_BLAS_CORE  OPENBLAS_CORETYPE for both peers (default auto: SkylakeX when the
#                    CPU has AVX-512, Haswell with AVX2; on VMs OpenBLAS 0.3.21 may not
#                    recognize the CPU and fall back to its Prescott kernels, 1.6x slower
#                    for these products). "none" leaves it unset. Dask gets
#                    OPENBLAS_NUM_THREADS=1 (its workers are the threads); zcube sets
#                    one OpenBLAS thread itself.
#   BENCH_CASES      the cases to run (default "svd rsvd"; e.g. BENCH_CASES=rsvd).
#   BENCH_DIR        where the data goes (default: a new dir under /tmp, removed at the
#                    end unless BENCH_KEEP=1); with BENCH_REUSE=1 existing data is kept.
#
# Data are Zarr v2 blosc lz4 (shuffle), outputs too, for both peers. Dask runs
# first, then zcube, back to back, on a warm page cache. Each case's results (both
# peers') are checked right after it runs (bench/linalg_dask.py check): a failed
# check stops the script with exit 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
M=${BENCH_M:-2000000}
N=${BENCH_N:-50}
RM=${BENCH_RM:-100000}
RN=${BENCH_RN:-1000}
K=${BENCH_K:-10}
POWER=${BENCH_POWER:-2}
mem=${BENCH_MEM:-1024}
cache=${BENCH_CACHE:-1024}
threads=${BENCH_THREADS:-2}
cases=${BENCH_CASES:-svd rsvd}
reps=${BENCH_REPS:-1}
nice=${BENCH_NICE:-0}
core=${BENCH_BLAS_CORE:-auto}
py=/usr/bin/python3
bl=$build/bench/bench_linalg

log() { echo "linalg_bench: $*" >&2; }

if [[ ! -x $bl ]]; then
    log "building bench_linalg in $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
    make -C "$build" -j2 bench_linalg >&2
fi
if [[ $core == auto ]]; then
    if grep -qw avx512f /proc/cpuinfo; then core=SkylakeX
    elif grep -qw avx2 /proc/cpuinfo; then core=Haswell
    else core=none; fi
fi
[[ $core != none ]] && export OPENBLAS_CORETYPE=$core

keep=${BENCH_KEEP:-0}
if [[ -n ${BENCH_DIR:-} ]]; then
    data=$BENCH_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-linalg-bench.XXXXXX)
    [[ $keep == 1 ]] || trap 'rm -rf "$data"' EXIT
fi
if [[ ${BENCH_REUSE:-0} == 1 && -f $data/tall.zarr/.zarray && -f $data/wide.zarr/.zarray ]]; then
    log "reusing the data in $data"
else
    log "generating tall ($M x $N) and wide ($RM x $RN) float64 in $data"
    rm -rf "$data/tall.zarr" "$data/wide.zarr"
    $py "$root/bench/linalg_dask.py" gen "$data" --m "$M" --n "$N" --rm "$RM" --rn "$RN"
fi
mkdir -p "$data/dask" "$data/zcube"

warm() { cat "$data"/tall.zarr/* "$data"/wide.zarr/* > /dev/null; }

# run_peer (one peer BENCH_REPS times, fastest run + peak RSS): bench/common.bash
source "$root/bench/common.bash"

merge() {
    $py - "$@" << 'EOF'
import json, sys
case, zf, df, mem, threads, core, cache, cf = sys.argv[1:9]
z = json.load(open(zf)); d = json.load(open(df)); ck = json.load(open(cf))
rep = z.pop("report") or {}
ops = rep.get("operations", [])
out = {"case": case, "shape": z["shape"], "chunks": z["chunks"], "threads": int(threads),
       "allowed_mem_mb": float(mem), "cache_mem_mb": float(cache), "openblas_coretype": core,
       "zcube_source_cache": rep.get("source_cache"),
       "loadavg1": float(open("/proc/loadavg").read().split()[0]),
       "zcube_s": z["seconds"], "dask_s": d["seconds"], "speed_ratio": round(d["seconds"] / z["seconds"], 3),
       "zcube_cpu_s": z["cpu_seconds"], "dask_cpu_s": d["cpu_seconds"],
       "zcube_peak_rss_mb": z["time_v_max_rss_mb"], "dask_peak_rss_mb": d["time_v_max_rss_mb"],
       "zcube_runs_s": z["runs_seconds"], "dask_runs_s": d["runs_seconds"],
       "zcube_tasks": rep.get("tasks"), "zcube_operations": len(ops),
       "measured_le_projected": all(o["measured_mem"] <= o["projected_mem"] for o in ops),
       "zcube_top_ops": [{"name": o["name"], "tasks": o["tasks"], "seconds": round(o["seconds"], 3),
                          "projected_mb": round(o["projected_mem"] / 2**20, 1),
                          "measured_mb": round(o["measured_mem"] / 2**20, 1)}
                         for o in sorted(ops, key=lambda o: -o["seconds"])[:6]]}
for key in ("k", "power_iters", "oversamples"):
    if key in d:
        out[key] = d[key]
out["check"] = {k: v for k, v in ck.items() if k != "case"}
print(json.dumps(out), flush=True)
EOF
}

for cs in $cases; do
    [[ $cs == svd || $cs == rsvd ]] || { log "unknown case '$cs' in BENCH_CASES"; exit 2; }
    tmp=$data/$cs
    log "$cs: Dask ($threads threads)"
    OPENBLAS_NUM_THREADS=1 run_peer "$tmp.dask.json" $py "$root/bench/linalg_dask.py" "$cs" "$data" \
        --threads "$threads" --k "$K" --power "$POWER"
    log "$cs: zcube (allowed_mem $mem MiB, cache_mem $cache MiB, $threads threads)"
    run_peer "$tmp.zcube.json" "$bl" "$cs" "$data" --allowed-mem "$mem" --cache-mem "$cache" --threads "$threads" \
        --k "$K" --power "$POWER"
    log "$cs: checking both peers' results"
    if ! $py "$root/bench/linalg_dask.py" check "$data" "$cs" > "$tmp.check.json"; then
        cat "$tmp.check.json" >&2
        log "FAIL: $cs: a result check failed (see above)"
        exit 1
    fi
    merge "$cs" "$tmp.zcube.json" "$tmp.dask.json" "$mem" "$threads" "$core" "$cache" "$tmp.check.json" |
        tee -a "$data/results.jsonl"
done
