#!/bin/bash
# bench/mask_bench.sh — boolean-mask selection x[x > 1] of a row-chunked float64
# Zarr array (about 16% of the values selected), written to Zarr v2 with zstd:1:
# zcube (`zcube eval 'x[x > 1]'` under --allowed-mem: a count pass, then the
# placement) against Dask (x[x > 1], compute_chunk_sizes, rechunk, to_zarr: Dask
# also reads x twice). Each runs as its own process under /usr/bin/time -v, the
# page cache warmed before each; runs alternate. The ratio compares Dask's
# in-process seconds (from_zarr to the result written, imports not counted) with
# zcube's whole process (parsing, the count, planning, running, writing): the
# comparison leans towards Dask. The results are compared with each other and
# with NumPy (fatal on a mismatch). One JSON line on stdout; progress on stderr.
#
#   usage: bash bench/mask_bench.sh [BUILD_DIR]
#
#   BUILD_DIR     a CMake build dir of this repo (default: build-bench); zcube_cli is
#                 built there if missing.
#   MASK_ROWS, MASK_COLS, MASK_CHUNK  shape and rows per chunk (default 6400 10000 200:
#                 512 MB of float64 in 16 MB chunks)
#   MASK_MEM      zcube's --allowed-mem (default 128MB); MASK_THREADS both peers' threads
#                 (default 2); MASK_REPS runs of each (default 2); MASK_DIR data dir.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
rows=${MASK_ROWS:-6400}
cols=${MASK_COLS:-10000}
chunk=${MASK_CHUNK:-200}
mem=${MASK_MEM:-128MB}
threads=${MASK_THREADS:-2}
reps=${MASK_REPS:-2}
py=/usr/bin/python3
log() { echo "mask_bench: $*" >&2; }

if [[ ! -x $build/zcube ]]; then
    log "building zcube in $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
    make -C "$build" -j2 zcube_cli >&2
fi
if [[ -n ${MASK_DIR:-} ]]; then
    data=$MASK_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-mask-bench.XXXXXX)
    trap 'rm -rf "$data"' EXIT
fi
log "load: $(uptime)"
if [[ ! -f $data/x.zarr/.zarray ]]; then
    log "generating x.zarr: float64 ($rows, $cols), chunks ($chunk, $cols)"
    $py "$root/bench/mask_dask.py" gen "$data" "$rows" "$cols" "$chunk"
fi
warm() { cat "$data"/x.zarr/* > /dev/null; }
out_chunk=$((chunk * cols))
for ((r = 0; r < reps; r++)); do
    rm -rf "$data/dask.zarr" "$data/zcube.zarr"
    warm
    log "run $((r + 1))/$reps: dask, $threads threads"
    /usr/bin/time -v -o "$data/dask.$r.time" $py "$root/bench/mask_dask.py" run "$data/x.zarr" "$data/dask.zarr" \
        "$threads" "$out_chunk" > "$data/dask.$r.json"
    warm
    log "run $((r + 1))/$reps: zcube under --allowed-mem $mem, $threads threads"
    /usr/bin/time -v -o "$data/zcube.$r.time" "$build/zcube" eval 'x[x > 1]' --in x="$data/x.zarr" \
        -o "$data/zcube.zarr" --zarr-format 2 --codec zstd:1 --allowed-mem "$mem" --threads "$threads" --json \
        > "$data/zcube.$r.json"
    cut -d' ' -f1 /proc/loadavg > "$data/load.$r"
done
$py "$root/bench/mask_dask.py" check "$data/x.zarr" "$data/zcube.zarr" "$data/dask.zarr" > "$data/check.json" ||
    { cat "$data/check.json" >&2; log "FAIL: zcube's and Dask's selections differ"; exit 1; }
$py - "$data" "$rows" "$cols" "$mem" "$threads" "$reps" << 'PY'
import json, re, sys
d, rows, cols, mem, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
def tv(name):
    t = open(f"{d}/{name}.time").read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", t)
    return int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3)), rss
runs = []
for r in range(reps):
    zw, zr = tv(f"zcube.{r}")
    dw, dr = tv(f"dask.{r}")
    dj = json.load(open(f"{d}/dask.{r}.json"))
    zj = json.load(open(f"{d}/zcube.{r}.json"))
    runs.append({"run": r + 1, "loadavg1": float(open(f"{d}/load.{r}").read()), "zcube_process_s": round(zw, 2),
                 "dask_compute_s": dj["seconds"], "speed_ratio": round(dj["seconds"] / zw, 3),
                 "zcube_peak_rss_mb": round(zr), "dask_peak_rss_mb": round(dr),
                 "zcube_operations": [(o["name"], o["tasks"], o["projected_mem"] >> 20, o.get("measured_mem", 0) >> 20)
                                      for o in zj["operations"]], "selected": dj["n"]})
bz = min(x["zcube_process_s"] for x in runs); bd = min(x["dask_compute_s"] for x in runs)
print(json.dumps({"case": "mask_select_vs_dask", "shape": [rows, cols], "gbytes": round(rows * cols * 8 / 1e9, 2),
                  "threads": threads, "zcube_allowed_mem": mem, "best_zcube_process_s": bz, "best_dask_compute_s": bd,
                  "speed_ratio_of_bests": round(bd / bz, 3), "runs": runs, **json.load(open(f"{d}/check.json"))}))
PY
log "done: $(uptime)"
