#!/bin/bash
# bench/matmul_bench.sh — matmul: zcube against OpenBLAS/NumPy in core and against
# Dask out of core, same data, same run.
#
#   usage: bash bench/matmul_bench.sh [BUILD_DIR]
#
#   BENCH_N         in-core case: N×N float64 in memory (default 3000), BENCH_CHUNK blocks
#                   (default 1000); zcube's engine vs one cblas_dgemm on the same buffers
#                   (bench_matmul incore), best of BENCH_REPS (default 3).
#   BENCH_ON        out-of-core case: N×N float64 Zarr arrays a, b (default 8000: 512 MB
#                   each), BENCH_OCHUNK blocks (default 1000), c = a @ b written as Zarr by
#                   zcube (allowed_mem BENCH_MEM MiB, default 128: each operand is 4× that)
#                   and by Dask (no memory limit: its peak RSS is reported), and by NumPy
#                   (whole arrays in memory: the in-core ceiling).
#   BENCH_THREADS   threads of every peer (default 2; OpenBLAS threads for NumPy).
#   BENCH_DIR       data folder (default: new under /tmp, removed unless BENCH_KEEP=1).
#   BENCH_NICE      run every peer under `nice -n BENCH_NICE` (e.g. -10 as root on a
#                   shared machine); unset = normal priority.
# Each peer runs as its own process under /usr/bin/time -v ("Maximum resident set size");
# seconds are measured inside each process (read + product + write), not its start-up.
# Results are checked against NumPy's (≤ 1e-12 relative to max |C|): exit 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
n=${BENCH_N:-3000}
chunk=${BENCH_CHUNK:-1000}
reps=${BENCH_REPS:-3}
on=${BENCH_ON:-8000}
ochunk=${BENCH_OCHUNK:-1000}
mem=${BENCH_MEM:-128}
threads=${BENCH_THREADS:-2}
py=/usr/bin/python3
bm=$build/bench/bench_matmul
run=()
[[ -n ${BENCH_NICE:-} ]] && run=(nice -n "$BENCH_NICE")
log() { echo "matmul_bench: $*" >&2; }
if [[ ! -x $bm ]]; then
    cmake -S "$root" -B "$build" -DZC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
    make -C "$build" -j2 bench_matmul >&2
fi
dir=${BENCH_DIR:-$(mktemp -d /tmp/zcube-matmul.XXXXXX)}
mkdir -p "$dir"
[[ ${BENCH_KEEP:-0} == 1 ]] || trap 'rm -rf "$dir"' EXIT
peak() { awk -F': ' '/Maximum resident/ {printf "%d", $2 / 1024}' "$1"; }

log "load: $(cut -d' ' -f1-3 /proc/loadavg)"
log "in core: ${n}x${n} float64, ${chunk}² blocks, $threads threads"
"${run[@]}" "$bm" incore "$n" "$chunk" --threads "$threads" --reps "$reps"

log "out of core: generating ${on}x${on} float64 a, b (${ochunk}² chunks) in $dir"
"$py" "$root/bench/matmul_ref.py" gen "$dir" "$on" "$ochunk"
cat "$dir"/a.zarr/* > /dev/null; cat "$dir"/b.zarr/* > /dev/null  # warm page cache for both peers
log "load: $(cut -d' ' -f1-3 /proc/loadavg)"
"${run[@]}" /usr/bin/time -v -o "$dir/dask.time" "$py" "$root/bench/matmul_ref.py" dask "$dir" "$threads" > "$dir/dask.json"
echo "{\"peer\": \"dask\", \"rss_mb\": $(peak "$dir/dask.time"), \"run\": $(cat "$dir/dask.json")}"
log "load: $(cut -d' ' -f1-3 /proc/loadavg)"
"${run[@]}" /usr/bin/time -v -o "$dir/zcube.time" "$bm" zarr "$dir" --allowed-mem "$mem" --threads "$threads" > "$dir/zcube.json"
echo "{\"peer\": \"zcube\", \"rss_mb\": $(peak "$dir/zcube.time"), \"run\": $(cat "$dir/zcube.json")}"
log "load: $(cut -d' ' -f1-3 /proc/loadavg)"
OPENBLAS_NUM_THREADS=$threads "${run[@]}" /usr/bin/time -v -o "$dir/numpy.time" "$py" "$root/bench/matmul_ref.py" numpy "$dir" "$threads" > "$dir/numpy.json"
echo "{\"peer\": \"numpy\", \"rss_mb\": $(peak "$dir/numpy.time"), \"run\": $(cat "$dir/numpy.json")}"
"$py" "$root/bench/matmul_ref.py" check "$dir"
