#!/bin/bash
# bench/compute_bench.sh — the compute engine against Dask, end to end, on the same
# Zarr data in the same run: Quadratic Means, a time→space rechunk, and 10^6 trivial
# tasks. Prints one JSON object per case on stdout (zcube's and Dask's seconds, CPU
# seconds, peak RSS, the speed ratio); progress and a table go to stderr.
#
#   usage: bash bench/compute_bench.sh [BUILD_DIR]
#
#   BUILD_DIR       a CMake build dir of this repo (default: build-bench); target
#                   bench_compute is built there if missing.
#   BENCH_T         time steps: u, v are float64 (T, 1, 987, 1920) chunked
#                   (10, 1, 987, 1920), 15.2 MB per step per array (default 200:
#                   3.0 GB each). Disk needed: ~5 × T × 15.2 MB (inputs, both peers'
#                   outputs, zcube's intermediates).
#   BENCH_MEM       allowed_mem in MiB for every zcube task (default 1500). Dask has no
#                   memory limit: the same chunks are given to both, and its peak RSS
#                   is reported beside zcube's.
#   BENCH_THREADS   threads of both peers (default 2).
#   BENCH_CASES     any of qm rechunk tasks (default all three).
#   BENCH_CHUNKS    rechunk target (default T,1,100,100).
#   BENCH_TASKS_N   blocks for zcube's task case (default 1000000).
#   BENCH_DASK_TASKS_N  blocks for Dask's task case (default 100000; Dask needs
#                   minutes for 10^6): compared per task.
#   BENCH_REPS      runs of each peer per case, the fastest kept (default 1); peak RSS
#                   is the largest over the runs.
#   BENCH_NICE      niceness of both peers (default 0; root may give -10 on a shared
#                   machine so that both run at the same raised priority).
#   BENCH_DIR       where the data goes (default: a new dir under /tmp, removed at the
#                   end unless BENCH_KEEP=1). With BENCH_REUSE=1 and u.zarr/v.zarr
#                   already there (same T), generation is skipped.
#
# Each peer runs as its own process under /usr/bin/time -v ("Maximum resident set
# size" is its peak RSS; each also reports getrusage itself). Dask runs first,
# then zcube, back to back, both on a warm page cache (the inputs are read once,
# untimed, before each case). Results are checked: the means against each other
# (≤ 1e-12 relative) and against NumPy on a corner, the rechunked arrays
# identical to u and chunked as asked.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
T=${BENCH_T:-200}
mem=${BENCH_MEM:-1500}
threads=${BENCH_THREADS:-2}
cases=${BENCH_CASES:-qm rechunk tasks}
tasks_n=${BENCH_TASKS_N:-1000000}
dask_tasks_n=${BENCH_DASK_TASKS_N:-100000}
chunks=${BENCH_CHUNKS:-$T,1,100,100}
reps=${BENCH_REPS:-1}
nice=${BENCH_NICE:-0}
py=/usr/bin/python3
bc=$build/bench/bench_compute

log() { echo "compute_bench: $*" >&2; }

if [[ ! -x $bc ]]; then
    log "building bench_compute in $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
    make -C "$build" -j2 bench_compute >&2
fi

keep=${BENCH_KEEP:-0}
if [[ -n ${BENCH_DIR:-} ]]; then
    data=$BENCH_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-compute-bench.XXXXXX)
    [[ $keep == 1 ]] || trap 'rm -rf "$data"' EXIT
fi

need=$((5 * T * 987 * 1920 * 8))
avail=$(df --output=avail -B1 "$data" | tail -1)
if ((avail < need)); then
    log "only $avail bytes free under $data, need ~$need: set BENCH_T lower"
    exit 1
fi

same_t() { $py -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["shape"][0] != int(sys.argv[2]))' "$@"; }
if [[ ${BENCH_REUSE:-0} == 1 && -f $data/u.zarr/.zarray && -f $data/v.zarr/.zarray ]] &&
    same_t "$data/u.zarr/.zarray" "$T" && same_t "$data/v.zarr/.zarray" "$T"; then
    log "reusing u.zarr, v.zarr in $data"
else
    log "generating u, v: float64 ($T, 1, 987, 1920), chunks (10, 1, 987, 1920), Zarr v2 blosc-lz4"
    rm -rf "$data/u.zarr" "$data/v.zarr"
    "$bc" gen "$data" --T "$T" >&2
fi
mkdir -p "$data/dask" "$data/zcube"
rm -f "$data/results.jsonl"

warm() { cat "$data"/u.zarr/* "$data"/v.zarr/* > /dev/null; }
warm_before=1

# run_peer (one peer BENCH_REPS times, fastest run + peak RSS): bench/common.bash
source "$root/bench/common.bash"

# merge the two peers' lines (and the check) into one line for the case
merge() {
    $py - "$@" << 'EOF'
import json, sys
case, zf, df, cf, mem, threads = sys.argv[1:7]
z = json.load(open(zf)); d = json.load(open(df))
c = json.load(open(cf)) if cf != "-" else None
mem, threads = float(mem), int(threads)
rep = z.pop("report") or {}
out = {"case": case, "T": z.get("T"), "threads": threads, "allowed_mem_mb": mem,
       "loadavg1": float(open("/proc/loadavg").read().split()[0]),
       "zcube_s": z["seconds"], "dask_s": d["seconds"],
       "zcube_cpu_s": z["cpu_seconds"], "dask_cpu_s": d["cpu_seconds"]}
if case == "tasks":
    zb, db = z["blocks"], d["blocks"]
    out.update(zcube_blocks=zb, dask_blocks=db, zcube_plan_s=z["plan_seconds"],
               zcube_us_per_block=round(1e6 * z["seconds"] / zb, 2),
               dask_us_per_block=round(1e6 * d["seconds"] / db, 2),
               dask_graph_tasks=d["graph_tasks"],
               speed_ratio=round((d["seconds"] / db) / (z["seconds"] / zb), 3),
               goal_under_1s=z["seconds"] < 1.0)
else:
    out.update(bytes_in=z["bytes_in"], speed_ratio=round(d["seconds"] / z["seconds"], 3),
               cpu_ratio=round(d["cpu_seconds"] / z["cpu_seconds"], 3),
               zcube_gbps=round(z["bytes_in"] / z["seconds"] / 1e9, 3),
               dask_gbps=round(d["bytes_in"] / d["seconds"] / 1e9, 3))
bound = threads * mem + 100
out.update(zcube_peak_rss_mb=z["time_v_max_rss_mb"], dask_peak_rss_mb=d["time_v_max_rss_mb"],
           zcube_bound_mb=bound, zcube_within_bound=z["time_v_max_rss_mb"] <= bound,
           zcube_plan_s=z["plan_seconds"],
           zcube_ops=[{"name": o["name"], "tasks": o["tasks"], "seconds": round(o["seconds"], 3),
                       "projected_mb": round(o["projected_mem"] / 2**20, 1),
                       "measured_mb": round(o["measured_mem"] / 2**20, 1)} for o in rep.get("operations", [])],
           zcube_tasks=rep.get("tasks"), zcube_intermediate_bytes=rep.get("intermediate_bytes"))
ops = rep.get("operations", [])
out["measured_le_projected"] = all(o["measured_mem"] <= o["projected_mem"] for o in ops)
out["measured_over_projected_max"] = round(max((o["measured_mem"] / max(o["projected_mem"], 1) for o in ops),
                                               default=0), 3)
if c is not None:
    out["check"] = {k: v for k, v in c.items() if k not in ("case", "peer")}
print(json.dumps(out), flush=True)
EOF
}

for case in $cases; do
    tmp=$data/$case
    case $case in
        qm)
            log "quadratic means: Dask ($threads threads)"
            run_peer "$tmp.dask.json" $py "$root/bench/compute_dask.py" qm "$data" --threads "$threads"
            log "quadratic means: zcube (allowed_mem $mem MiB, $threads threads)"
            run_peer "$tmp.zcube.json" "$bc" qm "$data" --allowed-mem "$mem" --threads "$threads"
            log "quadratic means: checking"
            $py "$root/bench/compute_dask.py" check "$data" qm > "$tmp.check.json" || true
            merge quadratic_means "$tmp.zcube.json" "$tmp.dask.json" "$tmp.check.json" "$mem" "$threads" |
                tee -a "$data/results.jsonl"
            ;;
        rechunk)
            log "rechunk to $chunks: Dask ($threads threads)"
            run_peer "$tmp.dask.json" $py "$root/bench/compute_dask.py" rechunk "$data" --threads "$threads" \
                --chunks "$chunks"
            log "rechunk to $chunks: zcube (allowed_mem $mem MiB, $threads threads)"
            run_peer "$tmp.zcube.json" "$bc" rechunk "$data" --allowed-mem "$mem" --threads "$threads" \
                --chunks "$chunks" --work-dir "$data/zcube-work"
            log "rechunk: checking"
            $py "$root/bench/compute_dask.py" check "$data" rechunk > "$tmp.check.json" || true
            merge rechunk "$tmp.zcube.json" "$tmp.dask.json" "$tmp.check.json" "$mem" "$threads" |
                tee -a "$data/results.jsonl"
            ;;
        tasks)
            warm_before=0
            log "sum(ones((N, 8), chunks=(1, 8))): Dask, N = $dask_tasks_n"
            run_peer "$tmp.dask.json" $py "$root/bench/compute_dask.py" tasks --n "$dask_tasks_n" \
                --threads "$threads"
            log "sum(ones((N, 8), chunks=(1, 8))): zcube, N = $tasks_n"
            run_peer "$tmp.zcube.json" "$bc" tasks --n "$tasks_n" --allowed-mem "$mem" --threads "$threads"
            merge tasks "$tmp.zcube.json" "$tmp.dask.json" - "$mem" "$threads" | tee -a "$data/results.jsonl"
            ;;
        *)
            log "unknown case '$case' (qm, rechunk, tasks)"
            exit 2
            ;;
    esac
done

# a table for people, on stderr (stdout stays JSON lines)
$py - "$data/results.jsonl" >&2 << 'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("%-16s %9s %9s %7s %7s %10s %10s %8s %6s" % ("case", "zcube_s", "dask_s", "ratio", "cpu_rat",
      "zc_rss_MB", "dask_rss_MB", "bound", "check"))
for o in rows:
    chk = o.get("check", {}).get("ok", "-")
    print("%-16s %9.3f %9.3f %7.3f %7s %10.0f %10.0f %8s %6s" % (o["case"], o["zcube_s"], o["dask_s"],
          o["speed_ratio"], o.get("cpu_ratio", "-"), o["zcube_peak_rss_mb"], o["dask_peak_rss_mb"],
          o["zcube_within_bound"], chk))
EOF
