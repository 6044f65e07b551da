#!/bin/bash
# bench/compute_bench.sh — the compute engine against Dask and Cubed, end to end, on
# the same Zarr data in the same run: Quadratic Means, a time→space rechunk, and
# many trivial tasks. Prints one JSON object per case on stdout (each peer's seconds,
# CPU seconds, peak RSS, the speed ratios); progress and a table go to stderr. Exits
# non-zero when a result check fails.
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
#   BENCH_QM_CHUNKS chunks of u and v when they are generated (default
#                   10,1,987,1920: 152 MB; e.g. 2,1,987,1920 for small chunks).
#                   With BENCH_REUSE=1 the existing arrays are kept whatever their chunks.
#   Cubed refusing a case (its projection above allowed_mem, e.g. Quadratic Means
#   at 152 MB chunks under 500 MB) is recorded ("cubed_refused": its message), not
#   an error; the results are then checked against Dask's only.
#   BENCH_TASKS_N   blocks of the task case, the same N for zcube and Dask (default
#                   100000; Dask needs minutes for 10^6). Dask at its best: one
#                   aggregate over all per-block sums (split_every = N).
#   BENCH_TASKS_GOAL_N  blocks of zcube's goal run alone (default 1000000): blocks/s
#                   (fused, as the engine plans it) and, on the same N with
#                   --unfused (one block per task), tasks/s.
#   BENCH_CUBED_TASKS_N blocks of the task case against Cubed (default 1000: Cubed
#                   writes every intermediate chunk, 10^4 took it ~3 minutes).
#   BENCH_PEERS     peers to run (default "dask cubed"); Cubed comes from
#                   /work/shared/peers/cubed (or BENCH_CUBED_ENV, its env.sh), with
#                   Spec(allowed_mem=BENCH_MEM) and the threads executor.
#   BENCH_REPS      runs of each peer per case, the fastest kept (default 1); peak RSS
#                   is the largest over the runs.
#   BENCH_NICE      niceness of both peers (default 0; root may give -10 on a shared
#                   machine so that both run at the same raised priority).
#   BENCH_DIR       where the data goes (default: a new dir under /tmp, removed at the
#                   end unless BENCH_KEEP=1). With BENCH_REUSE=1 and u.zarr/v.zarr
#                   already there (same T), generation is skipped.
#
# Each peer runs as its own process under /usr/bin/time -v ("Maximum resident set
# size" is its peak RSS; each also reports getrusage itself). Dask, then Cubed,
# then zcube, back to back, all on a warm page cache (the inputs are read once,
# untimed, before each run). Results are checked, fatally: the means against each
# other (≤ 1e-12 relative) and against NumPy on a corner, the rechunked arrays
# identical to u and chunked as asked, every sum of ones exact. Times are whole
# computations measured inside each process (arrays built → results written), so
# interpreter start and imports are not counted on either side.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
T=${BENCH_T:-200}
mem=${BENCH_MEM:-1500}
threads=${BENCH_THREADS:-2}
cases=${BENCH_CASES:-qm rechunk tasks}
tasks_n=${BENCH_TASKS_N:-100000}
goal_n=${BENCH_TASKS_GOAL_N:-1000000}
cubed_tasks_n=${BENCH_CUBED_TASKS_N:-1000}
peers=${BENCH_PEERS:-dask cubed}
cubed_env=${BENCH_CUBED_ENV:-/work/shared/peers/cubed/env.sh}
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
    log "generating u, v: float64 ($T, 1, 987, 1920), chunks (${BENCH_QM_CHUNKS:-10,1,987,1920}), Zarr v2 blosc-lz4"
    rm -rf "$data/u.zarr" "$data/v.zarr"
    "$bc" gen "$data" --T "$T" --chunks "${BENCH_QM_CHUNKS:-10,1,987,1920}" >&2
fi
mkdir -p "$data/dask" "$data/zcube" "$data/cubed"
rm -f "$data/results.jsonl"
has_cubed=0
if [[ " $peers " == *" cubed "* ]]; then
    [[ -f $cubed_env ]] || { log "Cubed asked for (BENCH_PEERS) but $cubed_env is missing"; exit 1; }
    # shellcheck disable=SC1090
    source "$cubed_env"
    $py -c 'import cubed' || { log "cannot import cubed (see /work/shared/peers/cubed/README.md)"; exit 1; }
    has_cubed=1
fi

warm() { cat "$data"/u.zarr/* "$data"/v.zarr/* > /dev/null; }
warm_before=1

# run_peer (one peer BENCH_REPS times, fastest run + peak RSS): bench/common.bash
source "$root/bench/common.bash"

# merge the two peers' lines (and the check) into one line for the case
merge() {
    $py - "$@" << 'EOF'
import json, sys
case, zf, df, cf, mem, threads, cbf = sys.argv[1:8]
z = json.load(open(zf)); d = json.load(open(df))
c = json.load(open(cf))
cb = json.load(open(cbf)) if cbf != "-" else None
mem, threads = float(mem), int(threads)
rep = z.pop("report") or {}
out = {"case": case, "T": z.get("T"), "threads": threads, "allowed_mem_mb": mem,
       "loadavg1": float(open("/proc/loadavg").read().split()[0]),
       "zcube_s": z["seconds"], "dask_s": d["seconds"],
       "zcube_cpu_s": z["cpu_seconds"], "dask_cpu_s": d["cpu_seconds"]}
out.update(bytes_in=z["bytes_in"], speed_ratio=round(d["seconds"] / z["seconds"], 3),
           cpu_ratio=round(d["cpu_seconds"] / z["cpu_seconds"], 3),
           zcube_gbps=round(z["bytes_in"] / z["seconds"] / 1e9, 3),
           dask_gbps=round(d["bytes_in"] / d["seconds"] / 1e9, 3))
if cb is not None and cb.get("refused"):
    out.update(cubed_refused=cb["refused"], cubed_allowed_mem_mb=cb["allowed_mem_mb"],
               cubed_peak_rss_mb=cb["time_v_max_rss_mb"])
elif cb is not None:
    out.update(cubed_s=cb["seconds"], cubed_cpu_s=cb["cpu_seconds"], cubed_peak_rss_mb=cb["time_v_max_rss_mb"],
               cubed_allowed_mem_mb=cb["allowed_mem_mb"], cubed_speed_ratio=round(cb["seconds"] / z["seconds"], 3),
               cubed_cpu_ratio=round(cb["cpu_seconds"] / z["cpu_seconds"], 3))
bound = threads * mem + 100
# zcube resets the kernel's peak RSS before each stage (clear_refs 5, exec/memcheck.c), so time -v
# (ru_maxrss) sees the last stage's peak only: the report's peak over all stages is the figure
mem_rep = rep.get("memory") or {}
zc_rss = max(z["time_v_max_rss_mb"], round(mem_rep.get("peak_rss", 0) / 2**20, 1))
out.update(zcube_peak_rss_mb=zc_rss, zcube_time_v_rss_mb=z["time_v_max_rss_mb"], dask_peak_rss_mb=d["time_v_max_rss_mb"],
           zcube_bound_mb=bound, zcube_within_bound=zc_rss <= bound,
           zcube_plan_s=z["plan_seconds"],
           zcube_ops=[{"name": o["name"], "tasks": o["tasks"], "seconds": round(o["seconds"], 3),
                       "projected_mb": round(o["projected_mem"] / 2**20, 1),
                       "measured_mb": round(o["measured_mem"] / 2**20, 1)} for o in rep.get("operations", [])],
           zcube_tasks=rep.get("tasks"), zcube_intermediate_bytes=rep.get("intermediate_bytes"))
ops = rep.get("operations", [])
out["measured_le_projected"] = all(o["measured_mem"] <= o["projected_mem"] for o in ops)
out["measured_over_projected_max"] = round(max((o["measured_mem"] / max(o["projected_mem"], 1) for o in ops),
                                               default=0), 3)
out["check"] = {k: v for k, v in c.items() if k not in ("case", "peer")}
print(json.dumps(out), flush=True)
EOF
}

# the task cases: equal N against Dask (and against Cubed at a small N), then zcube's
# goal run alone: blocks/s fused as planned, tasks/s with one block per task
merge_tasks() {
    $py - "$@" << 'EOF'
import json, sys
dataf, mem, threads, has_cubed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
ld = lambda n: json.load(open(f"{dataf}.{n}.json"))
def zc(j):
    rep = j["report"] or {}
    t = rep.get("tasks")
    return {"blocks": j["blocks"], "seconds": j["seconds"], "cpu_s": j["cpu_seconds"], "plan_s": j["plan_seconds"],
            "dispatched_tasks": t, "blocks_per_task": round(j["blocks"] / t, 1) if t else None,
            "blocks_per_s": round(j["blocks"] / j["seconds"]), "tasks_per_s": round(t / j["seconds"]) if t else None,
            "rounds": [(o["name"], o["tasks"]) for o in rep.get("operations", [])], "peak_rss_mb": j["time_v_max_rss_mb"]}
load = float(open("/proc/loadavg").read().split()[0])
z, d = zc(ld("zcube")), ld("dask")
print(json.dumps({"case": "tasks_vs_dask", "threads": threads, "loadavg1": load, "N": z["blocks"], "zcube": z,
                  "dask": {"blocks": d["blocks"], "seconds": d["seconds"], "cpu_s": d["cpu_seconds"],
                           "split_every": d["split_every"], "graph_tasks": d["graph_tasks"],
                           "blocks_per_s": round(d["blocks"] / d["seconds"]),
                           "tasks_per_s": round(d["graph_tasks"] / d["seconds"]), "peak_rss_mb": d["time_v_max_rss_mb"]},
                  "speed_ratio": round(d["seconds"] / z["seconds"], 2)}), flush=True)
if has_cubed:
    zs, c = zc(ld("zcube_small")), ld("cubed")
    print(json.dumps({"case": "tasks_vs_cubed", "threads": threads, "loadavg1": load, "N": zs["blocks"], "zcube": zs,
                      "cubed": {"blocks": c["blocks"], "seconds": c["seconds"], "cpu_s": c["cpu_seconds"],
                                "allowed_mem_mb": c["allowed_mem_mb"], "peak_rss_mb": c["time_v_max_rss_mb"]},
                      "speed_ratio": round(c["seconds"] / zs["seconds"], 2)}), flush=True)
g, u = zc(ld("zcube_goal")), zc(ld("zcube_unfused"))
print(json.dumps({"case": "tasks_goal", "threads": threads, "loadavg1": load, "N": g["blocks"], "fused": g,
                  "unfused": u, "goal_1e6_blocks_under_1s": g["blocks"] >= 10**6 and g["seconds"] < 1.0}), flush=True)
EOF
}

# Cubed's run of a case (qm, rechunk) when it is a peer: sets cubedf to its JSON or "-"
cubed_peer() {
    cubedf=-
    cubed_ran=0
    ((has_cubed)) || return 0
    log "$1: Cubed (allowed_mem $mem MiB, threads executor, $threads workers)"
    rm -rf "$data/cubed-work"
    run_peer "$tmp.cubed.json" $py "$root/bench/compute_cubed.py" "$1" "$data" --allowed-mem "$mem" \
        --threads "$threads" "${@:2}"
    rm -rf "$data/cubed-work"
    cubedf=$tmp.cubed.json
    if $py -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("refused") else 1)' "$cubedf"; then
        log "$1: Cubed refused at allowed_mem $mem MiB (its projection is above it)"
    else
        cubed_ran=1
    fi
}

# the results of every peer that ran, against zcube's: fatal on a mismatch
check() {
    local ps=dask
    ((cubed_ran)) && ps="dask cubed"
    # shellcheck disable=SC2086
    if ! $py "$root/bench/compute_dask.py" check "$data" "$1" $ps > "$tmp.check.json"; then
        cat "$tmp.check.json" >&2
        log "FAIL: $1: the results differ (see above)"
        exit 1
    fi
}

for case in $cases; do
    tmp=$data/$case
    case $case in
        qm)
            log "quadratic means: Dask ($threads threads)"
            run_peer "$tmp.dask.json" $py "$root/bench/compute_dask.py" qm "$data" --threads "$threads"
            cubed_peer qm
            log "quadratic means: zcube (allowed_mem $mem MiB, $threads threads)"
            run_peer "$tmp.zcube.json" "$bc" qm "$data" --allowed-mem "$mem" --threads "$threads"
            log "quadratic means: checking"
            check qm
            merge quadratic_means "$tmp.zcube.json" "$tmp.dask.json" "$tmp.check.json" "$mem" "$threads" "$cubedf" |
                tee -a "$data/results.jsonl"
            ;;
        rechunk)
            log "rechunk to $chunks: Dask ($threads threads)"
            run_peer "$tmp.dask.json" $py "$root/bench/compute_dask.py" rechunk "$data" --threads "$threads" \
                --chunks "$chunks"
            cubed_peer rechunk --chunks "$chunks"
            log "rechunk to $chunks: zcube (allowed_mem $mem MiB, $threads threads)"
            run_peer "$tmp.zcube.json" "$bc" rechunk "$data" --allowed-mem "$mem" --threads "$threads" \
                --chunks "$chunks" --work-dir "$data/zcube-work"
            log "rechunk: checking"
            check rechunk
            merge rechunk "$tmp.zcube.json" "$tmp.dask.json" "$tmp.check.json" "$mem" "$threads" "$cubedf" |
                tee -a "$data/results.jsonl"
            ;;
        tasks)
            warm_before=0
            log "sum(ones((N, 8), chunks=(1, 8))): Dask (split_every = N), N = $tasks_n"
            run_peer "$tmp.dask.json" $py "$root/bench/compute_dask.py" tasks --n "$tasks_n" \
                --threads "$threads"
            log "sum(ones((N, 8), chunks=(1, 8))): zcube, N = $tasks_n"
            run_peer "$tmp.zcube.json" "$bc" tasks --n "$tasks_n" --allowed-mem "$mem" --threads "$threads"
            if ((has_cubed)); then
                log "sum(ones((N, 8), chunks=(1, 8))): Cubed then zcube, N = $cubed_tasks_n"
                run_peer "$tmp.cubed.json" $py "$root/bench/compute_cubed.py" tasks --n "$cubed_tasks_n" \
                    --allowed-mem "$mem" --threads "$threads"
                run_peer "$tmp.zcube_small.json" "$bc" tasks --n "$cubed_tasks_n" --allowed-mem "$mem" \
                    --threads "$threads"
            fi
            log "zcube alone, N = $goal_n: fused as planned, then --unfused (one block per task)"
            run_peer "$tmp.zcube_goal.json" "$bc" tasks --n "$goal_n" --allowed-mem "$mem" --threads "$threads"
            run_peer "$tmp.zcube_unfused.json" "$bc" tasks --n "$goal_n" --allowed-mem "$mem" --threads "$threads" \
                --unfused
            merge_tasks "$tmp" "$mem" "$threads" "$has_cubed" | tee -a "$data/results.jsonl"
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
print("%-16s %9s %9s %7s %7s %9s %7s %10s %10s %8s %6s" % ("case", "zcube_s", "dask_s", "ratio", "cpu_rat",
      "cubed_s", "c_ratio", "zc_rss_MB", "dask_rss_MB", "bound", "check"))
for o in rows:
    if o["case"].startswith("tasks"):
        print(json.dumps(o))
        continue
    chk = o.get("check", {}).get("ok", "-")
    print("%-16s %9.3f %9.3f %7.3f %7s %9s %7s %10.0f %10.0f %8s %6s" % (o["case"], o["zcube_s"], o["dask_s"],
          o["speed_ratio"], o.get("cpu_ratio", "-"), o.get("cubed_s", "refused" if "cubed_refused" in o else "-"), o.get("cubed_speed_ratio", "-"),
          o["zcube_peak_rss_mb"], o["dask_peak_rss_mb"], o["zcube_within_bound"], chk))
EOF
