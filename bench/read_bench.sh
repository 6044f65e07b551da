#!/bin/bash
# bench/read_bench.sh — the read benchmark, end to end: zcube against zarr-python
# 2.13 on the same data, the same 1,000 crops and the same cache state, plus the
# memcpy/decode ceiling. Prints one JSON object per case (codec × {whole into a
# preallocated buffer, whole into a fresh buffer per read, regions} × cache
# mode) on stdout; progress goes to stderr. Exits non-zero when zcube read
# other values than zarr-python (two checksums, one order-sensitive).
#
#   usage: bash bench/read_bench.sh [BUILD_DIR]
#
#   BUILD_DIR      a CMake build dir of this repo (default: build-bench);
#                  configured if needed, target bench_read (re)built.
#   BENCH_SCALE    size of each array: 1 = (256, 1024, 1024) float32 = 1 GiB
#                  (default 1; 0.25 = 256 MiB). Data needs ~2.6 GiB × scale.
#   BENCH_CACHE    cold, warm or both (default both). cold drops the page cache
#                  before every timed read (root only; falls back to warm).
#   BENCH_REPS     repetitions of whole-array reads, best kept (default 3).
#   BENCH_DIR      where to write the data (default: a new dir under /tmp,
#                  removed at the end unless BENCH_KEEP=1). With BENCH_REUSE=1
#                  and data already in BENCH_DIR, generation is skipped.
#   ZC_NUM_THREADS zcube threads (default 2).
#   BENCH_NICE     run both peers under `nice -n BENCH_NICE` (e.g. -10 as root
#                  on a shared machine, so that both keep their cores); unset =
#                  normal priority.
#
# Steps: read_ref.py gen (zarr-python writes none/lz4/zstd arrays and
# regions.txt), then per cache mode, codec and phase: read_ref.py time
# (zarr-python timing) and right after it bench_read (zcube timing, ceiling,
# ratio, checksum check). Whole reads run twice, both peers alike: into a
# buffer allocated and touched before timing (zarr-python: out=), and into a
# new buffer inside each timed read (zarr-python: z[...]).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
scale=${BENCH_SCALE:-1}
reps=${BENCH_REPS:-3}
modes=${BENCH_CACHE:-both}
export ZC_NUM_THREADS=${ZC_NUM_THREADS:-2}
py=/usr/bin/python3
run=()
[[ -n ${BENCH_NICE:-} ]] && run=(nice -n "$BENCH_NICE")

log() { echo "read_bench: $*" >&2; }

if [[ ! -f $build/Makefile ]]; then
    log "configuring $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON >&2
fi
if ! make -C "$build" -j2 bench_read >&2; then
    [[ -x $build/bench/bench_read ]] || { log "cannot build bench_read"; exit 1; }
    log "WARNING: rebuilding bench_read failed; using the existing binary"
fi

keep=${BENCH_KEEP:-0}
if [[ -n ${BENCH_DIR:-} ]]; then
    data=$BENCH_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-read-bench.XXXXXX)
    [[ $keep == 1 ]] || trap 'rm -rf "$data"' EXIT
fi

# disk: none (1 GiB) + lz4 + zstd (~0.6-0.8 each) per unit of scale, plus margin
need=$(awk -v s="$scale" 'BEGIN { printf "%d", s * 2.8 * 1024 * 1024 * 1024 }')
avail=$(df --output=avail -B1 "$data" | tail -1)
if (( avail < need )); then
    log "only $avail bytes free under $data, need ~$need: set BENCH_SCALE lower (e.g. 0.25)"
    exit 1
fi

case $modes in
    both) modes="cold warm" ;;
    cold | warm) ;;
    *) log "BENCH_CACHE must be cold, warm or both"; exit 2 ;;
esac
if [[ $modes == *cold* ]] && ! { sync && echo 3 > /proc/sys/vm/drop_caches; } 2> /dev/null; then
    log "cannot drop the page cache (not root?): measuring warm only"
    modes=warm
fi

rm -f "$data/results.jsonl"
if [[ ${BENCH_REUSE:-0} == 1 && -f $data/regions.txt ]]; then
    log "reusing the data in $data"
else
    log "generating data with zarr-python in $data (scale $scale)"
    $py "$root/bench/read_ref.py" gen "$data" --scale "$scale" >&2
fi

# Each case runs zarr-python then zcube back to back, so both see about the same
# load on this shared machine.
for mode in $modes; do
    for codec in none lz4 zstd; do
        for variant in whole:prealloc whole:fresh regions:prealloc; do
            phase=${variant%:*} buffer=${variant#*:}
            ref=$data/ref_${mode}_${codec}_${phase}_$buffer.json
            log "$mode $codec $phase ($buffer buffer): zarr-python"
            "${run[@]}" $py "$root/bench/read_ref.py" time "$data" --cache "$mode" --reps "$reps" \
                --codec "$codec" --phase "$phase" --buffer "$buffer" > "$ref"
            cat "$ref" >&2
            log "$mode $codec $phase ($buffer buffer): zcube (ZC_NUM_THREADS=$ZC_NUM_THREADS)"
            "${run[@]}" "$build/bench/bench_read" "$data" "$ref" --cache "$mode" --reps "$reps" \
                --codec "$codec" --phase "$phase" --buffer "$buffer" | tee -a "$data/results.jsonl"
        done
    done
done

# a table for people, on stderr (stdout stays JSON lines)
$py - "$data/results.jsonl" >&2 << 'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v, d=2: "-" if v is None else ("%.*f" % (d, v))
print("%-22s %-5s %8s %8s %7s %7s %7s %8s %6s %5s" % ("case", "cache", "zcube_s", "ref_s", "ratio",
      "cpu_rat", "GB/s", "ceiling", "frac", "load"))
for o in rows:
    print("%-22s %-5s %8s %8s %7s %7s %7s %8s %6s %5s" % (o["case"], o["cache"], f(o["zcube_s"], 3),
          f(o.get("ref_s"), 3), f(o.get("ratio")), f(o.get("cpu_ratio")), f(o["zcube_gbps"]),
          f(o.get("ceiling_gbps")), f(o.get("fraction_of_ceiling")), f(o.get("loadavg1"), 1)))
EOF
