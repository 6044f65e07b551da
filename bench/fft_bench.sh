#!/bin/bash
# bench/fft_bench.sh — zcube's FFT: against FFTW in core on the same data, out of
# core (four-step) relative to FFTW in core, and against Dask's rechunk + rfft
# along time of a time-chunked (T, 360, 720) float64 Zarr array. Every ratio is
# measured in the same run (the machine is shared: `uptime` is printed). JSON
# lines on stdout; progress on stderr.
#
#   usage: bash bench/fft_bench.sh [BUILD_DIR]
#
#   BUILD_DIR      a CMake build dir of this repo (default: build-bench); targets
#                  bench_fft and zcube_cli are built there if missing.
#   FFT_INCORE     "N ROWS" pairs for the in-core cases (default "1024 4096 65536 128").
#   FFT_OOC_N      length of the out-of-core 1-D transform (default 16777216 = 2^24,
#                  256 MiB of complex128), FFT_OOC_MEM its allowed_mem in MiB (default 64).
#   FFT_T          time steps of the Dask case (default 1000: 2.07 GB); FFT_MEM its
#                  allowed_mem (default 500MB); FFT_THREADS both peers' threads (default 2).
#   FFT_CASES      any of incore ooc dask rechunk (default all).
#   FFT_RT         time steps of the rechunk case (default 1008: 2.09 GB): chunks
#                  (24, 360, 720) to (FFT_RT, 60, 60) (issue 17: (24,360,720) ->
#                  (1008,60,60)), under FFT_RMEM (default 500MB), zcube rechunk
#                  against Dask's x.rechunk(...).to_zarr, both blosc-lz4 (zarr's
#                  default), Zarr v2; compute seconds on both sides, as the Dask
#                  case; both outputs checked equal to the input.
#   FFT_REPS       runs of the Dask case, Dask and zcube in turn first (default 2);
#                  every run's ratio is printed, the best of each peer too.
#   FFT_DIR        data dir (default a new dir under /tmp, removed unless FFT_KEEP=1).
#   BENCH_NICE     run every peer under `nice -n BENCH_NICE` (e.g. -10 as root on a
#                  shared machine); unset = normal priority.
#
# In core, every case prints FFTW's and zcube's wall seconds (best of REPS) and
# their process CPU seconds (cpu_ratio_1thread_vs_fftw_estimate: steadier than
# the wall-time ratio when other processes share the cores).
#
# The Dask case: both read the same Zarr input (blosc-lz4 chunks of (10, 360, 720))
# and write rfft along axis 0 as Zarr v2 with zstd level 1; each runs as its own
# process under /usr/bin/time -v (peak RSS); the page cache is warmed before each.
# The ratio compares in-process compute seconds on both sides: Dask's from
# from_zarr to the result written (graph building included), zcube's the report's
# "seconds" (zc_compute: planning, running, writing); interpreter start and imports
# are not counted (the whole-process times are printed beside them). The two
# results are compared with each other and with NumPy on a corner (fatal on a
# mismatch, as are in-core and out-of-core results against FFTW's).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
incore=${FFT_INCORE:-1024 4096 65536 128}
ooc_n=${FFT_OOC_N:-16777216}
ooc_mem=${FFT_OOC_MEM:-64}
T=${FFT_T:-1000}
mem=${FFT_MEM:-500MB}
threads=${FFT_THREADS:-2}
cases=${FFT_CASES:-incore ooc dask rechunk}
RT=${FFT_RT:-1008}
rmem=${FFT_RMEM:-500MB}
reps=${FFT_REPS:-2}
py=/usr/bin/python3
run=()
[[ -n ${BENCH_NICE:-} ]] && run=(nice -n "$BENCH_NICE")
log() { echo "fft_bench: $*" >&2; }
# Run two sides, in turn first: on a VM that takes freed memory back (free page
# reporting), whoever runs right after a big free writes into pages not yet
# handed back, so a fixed order would favour one side. Each side deletes its
# own previous output just before it runs.
alternate() { if ((r % 2 == 0)); then "$1"; "$2"; else "$2"; "$1"; fi; }

if [[ ! -x $build/bench/bench_fft || ! -x $build/zcube ]]; then
    log "building bench_fft and zcube in $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
    make -C "$build" -j2 bench_fft zcube_cli >&2
fi
if [[ -n ${FFT_DIR:-} ]]; then
    data=$FFT_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-fft-bench.XXXXXX)
    [[ ${FFT_KEEP:-0} == 1 ]] || trap 'rm -rf "$data"' EXIT
fi
log "load: $(uptime)"

if [[ " $cases " == *" incore "* ]]; then
    set -- $incore
    while (($# >= 2)); do
        log "in core: complex128 ($2, $1)"
        "${run[@]}" "$build/bench/bench_fft" incore "$1" "$2" 3
        shift 2
    done
fi

if [[ " $cases " == *" ooc "* ]]; then
    log "out of core: 1-D complex128 of $ooc_n under allowed_mem $ooc_mem MiB"
    mkdir -p "$data/ooc"
    "${run[@]}" "$build/bench/bench_fft" ooc "$ooc_n" "$ooc_mem" "$data/ooc/work" "$threads"
    rm -rf "$data/ooc"
fi

if [[ " $cases " == *" dask "* ]]; then
    if [[ ! -f $data/t.zarr/.zarray ]] || ! $py -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["shape"][0] != int(sys.argv[2]))' "$data/t.zarr/.zarray" "$T"; then
        log "generating t.zarr: float64 ($T, 360, 720), chunks (10, 360, 720)"
        rm -rf "$data/t.zarr"
        $py "$root/bench/fft_dask.py" gen "$data" "$T"
    fi
    warm() { cat "$data"/t.zarr/* > /dev/null; }
    side_dask() {
        rm -rf "$data/dask.zarr"
        warm
        log "run $((r + 1))/$reps: dask: rechunk + rfft along time, $threads threads"
        "${run[@]}" /usr/bin/time -v -o "$data/dask.$r.time" $py "$root/bench/fft_dask.py" run "$data/t.zarr" "$data/dask.zarr" \
            "$threads" > "$data/dask.$r.json"
    }
    side_zcube() {
        rm -rf "$data/zcube.zarr"
        warm
        log "run $((r + 1))/$reps: zcube: rfft(t, axis=0) under --allowed-mem $mem, $threads threads"
        "${run[@]}" /usr/bin/time -v -o "$data/zcube.$r.time" "$build/zcube" eval 'rfft(t, axis=0)' --in t="$data/t.zarr" \
            -o "$data/zcube.zarr" --zarr-format 2 --codec zstd:1 --allowed-mem "$mem" --threads "$threads" --json \
            > "$data/zcube.$r.json"
    }
    for ((r = 0; r < reps; r++)); do
        alternate side_dask side_zcube
        echo "$(cut -d' ' -f1 /proc/loadavg)" > "$data/load.$r"
    done
    $py "$root/bench/fft_dask.py" check "$data/t.zarr" "$data/zcube.zarr" "$data/dask.zarr" > "$data/check.json" ||
        { cat "$data/check.json" >&2; log "FAIL: zcube's and Dask's rfft differ"; exit 1; }
    $py - "$data" "$T" "$mem" "$threads" "$reps" "$root/bench" << 'EOF'
import json, re, sys
d, T, mem, threads, reps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, sys.argv[6])
from fft_dask import sys_s, time_v
def tv(name):
    return time_v(f"{d}/{name}.time")
ck = json.load(open(f"{d}/check.json"))
runs = []
for r in range(reps):
    dw, dc, dr = tv(f"dask.{r}"); zw, zc, zr = tv(f"zcube.{r}")
    dj = json.load(open(f"{d}/dask.{r}.json")); zj = json.load(open(f"{d}/zcube.{r}.json"))
    runs.append({"run": r + 1, "loadavg1": float(open(f"{d}/load.{r}").read()),
                 "zcube_compute_s": round(zj["seconds"], 3), "dask_compute_s": dj["seconds"],
                 "speed_ratio": round(dj["seconds"] / zj["seconds"], 3),
                 "zcube_process_s": round(zw, 2), "dask_process_s": round(dw, 2),
                 "zcube_cpu_s": round(zc, 2), "dask_cpu_s": round(dc, 2), "dask_compute_cpu_s": dj["cpu_seconds"],
                 "zcube_sys_s": sys_s(f"{d}/zcube.{r}.time"), "dask_sys_s": sys_s(f"{d}/dask.{r}.time"),
                 "zcube_peak_rss_mb": round(zr), "dask_peak_rss_mb": round(dr),
                 "zcube_operations": [(o["name"], o["tasks"], round(o.get("seconds", 0), 2), o["projected_mem"] >> 20,
                                       o.get("measured_mem", 0) >> 20) for o in zj["operations"]],
                 "dask_chunks": dj["chunks"]})
bz = min(x["zcube_compute_s"] for x in runs); bd = min(x["dask_compute_s"] for x in runs)
print(json.dumps({"case": "rfft_time_vs_dask", "shape": [T, 360, 720], "gbytes": round(T * 360 * 720 * 8 / 1e9, 2),
                  "threads": threads, "zcube_allowed_mem": mem, "best_zcube_compute_s": bz, "best_dask_compute_s": bd,
                  "speed_ratio_of_bests": round(bd / bz, 3),
                  "speed_ratio_min": min(x["speed_ratio"] for x in runs), "runs": runs, **ck}))
EOF
fi
if [[ " $cases " == *" rechunk "* ]]; then
    if [[ ! -f $data/t24.zarr/.zarray ]] || ! $py -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["shape"][0] != int(sys.argv[2]))' "$data/t24.zarr/.zarray" "$RT"; then
        log "generating t24.zarr: float64 ($RT, 360, 720), chunks (24, 360, 720)"
        rm -rf "$data/t24.zarr"
        $py "$root/bench/fft_dask.py" gen "$data" "$RT" 24 t24
    fi
    rc="$RT,60,60"
    warm() { cat "$data"/t24.zarr/* > /dev/null; }
    side_dask() {
        rm -rf "$data/dask_r.zarr"
        warm
        log "run $((r + 1))/$reps: dask: rechunk to ($rc), $threads threads"
        "${run[@]}" /usr/bin/time -v -o "$data/dask_r.$r.time" $py "$root/bench/fft_dask.py" rechunk "$data/t24.zarr" \
            "$data/dask_r.zarr" "$threads" "$rc" > "$data/dask_r.$r.json"
    }
    side_zcube() {
        rm -rf "$data/zcube_r.zarr"
        warm
        log "run $((r + 1))/$reps: zcube: rechunk to ($rc) under --allowed-mem $rmem, $threads threads"
        "${run[@]}" /usr/bin/time -v -o "$data/zcube_r.$r.time" "$build/zcube" rechunk "$data/t24.zarr" "$data/zcube_r.zarr" \
            --chunks "$rc" --zarr-format 2 --codec blosc:lz4:5:shuffle --allowed-mem "$rmem" --threads "$threads" --json \
            > "$data/zcube_r.$r.json"
    }
    for ((r = 0; r < reps; r++)); do
        alternate side_dask side_zcube
        echo "$(cut -d' ' -f1 /proc/loadavg)" > "$data/load_r.$r"
    done
    $py "$root/bench/fft_dask.py" same "$data/t24.zarr" "$data/zcube_r.zarr" "$data/dask_r.zarr" "$rc" >&2 ||
        { log "FAIL: the rechunked arrays differ from the input"; exit 1; }
    $py - "$data" "$RT" "$rmem" "$threads" "$reps" "$root/bench" << 'EOF'
import json, re, sys
d, T, mem, threads, reps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, sys.argv[6])
from fft_dask import sys_s, time_v
def tv(name):
    return time_v(f"{d}/{name}.time")[1:]
runs = []
for r in range(reps):
    dc, dr = tv(f"dask_r.{r}"); zc, zr = tv(f"zcube_r.{r}")
    dj = json.load(open(f"{d}/dask_r.{r}.json")); zj = json.load(open(f"{d}/zcube_r.{r}.json"))
    runs.append({"run": r + 1, "loadavg1": float(open(f"{d}/load_r.{r}").read()),
                 "zcube_compute_s": round(zj["seconds"], 3), "dask_compute_s": dj["seconds"],
                 "speed_ratio": round(dj["seconds"] / zj["seconds"], 3),
                 "zcube_cpu_s": round(zc, 2), "dask_cpu_s": round(dc, 2),
                 "zcube_sys_s": sys_s(f"{d}/zcube_r.{r}.time"), "dask_sys_s": sys_s(f"{d}/dask_r.{r}.time"),
                 "zcube_peak_rss_mb": round(zr), "dask_peak_rss_mb": round(dr),
                 "zcube_operations": [(o["name"], o["tasks"], round(o.get("seconds", 0), 2), o["projected_mem"] >> 20,
                                       o.get("measured_mem", 0) >> 20) for o in zj["operations"]]})
bz = min(x["zcube_compute_s"] for x in runs); bd = min(x["dask_compute_s"] for x in runs)
print(json.dumps({"case": "rechunk_vs_dask", "shape": [T, 360, 720], "from": [24, 360, 720], "to": [T, 60, 60],
                  "threads": threads, "zcube_allowed_mem": mem, "best_zcube_compute_s": bz, "best_dask_compute_s": bd,
                  "speed_ratio_of_bests": round(bd / bz, 3), "speed_ratio_min": min(x["speed_ratio"] for x in runs),
                  "runs": runs}))
EOF
fi
log "done: $(uptime)"
