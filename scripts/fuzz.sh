#!/usr/bin/env bash
# A libFuzzer campaign over the fuzz targets (docs/internals/fuzzing.md).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [PARALLEL] [TARGET...]
#
# Builds build-fuzz (clang, -fsanitize=fuzzer,address,undefined) if needed,
# then runs each target (default: every libFuzzer target) for
# SECONDS_PER_TARGET (default 600) under `nice -n 19`, PARALLEL (default 1)
# at a time, starting from fuzz/corpus/<target> plus the working corpus
# kept in build-fuzz/campaign/<target>/work. Each run's final statistics
# (executions, coverage edges, features) go to
# build-fuzz/campaign/<target>/stats.txt and one summary line per target to
# build-fuzz/campaign/summary.txt; crashes land in
# build-fuzz/campaign/<target>/art/ (copy a fixed one into
# fuzz/corpus/<target>/repro-<what>). The working corpus is merged (minimized)
# at the end of each run; pick a committed cover with fuzz/select_corpus.py.
#
# ZC_FUZZ_RUNS=N also stops a target after N executions (the campaign goal
# is 10 M executions or the time, whichever comes first).
#
# A unit running over 30 s counts as a hang (-timeout=30): the instrumented
# binaries run 10-20x slower than a release build, and a loaded machine more so
# (planning fftn(t, s=(2^40,)) takes 0.3 s released, over 15 s here at load 24).
# The replay allows 120 s: its corpus keeps the slowest units found, such as
# that FFT refused under 64 MiB, whose refusal plans it ~9 times to name the
# smallest bound (3.6 s released, 65 s instrumented on this machine).
#
# SECONDS_PER_TARGET 0 only replays each committed corpus through its libFuzzer
# binary (no mutation, deterministic; fails on any finding): CI does this, so
# the clang build and the binaries cannot rot.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
par=${2:-1}
shift 2 || shift $# || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < fuzz/targets
fi
if ! command -v clang >/dev/null; then
    echo "fuzz.sh: clang is needed (apt-get install clang)" >&2
    exit 1
fi
if [ ! -f build-fuzz/CMakeCache.txt ]; then
    CC=clang cmake -S . -B build-fuzz -DZC_BUILD_FUZZERS=ON -DZC_BUILD_BENCH=OFF -DZC_BUILD_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
nice -n 19 cmake --build build-fuzz -j"$par" --target "${targets[@]/#/fuzz_}"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if [ "$secs" = 0 ]; then
    for t in "${targets[@]}"; do
        echo "fuzz.sh: replaying fuzz/corpus/$t through fuzz_$t"
        build-fuzz/fuzz/fuzz_"$t" -runs=0 -rss_limit_mb=2048 -timeout=120 fuzz/corpus/"$t" >build-fuzz/replay-"$t".log 2>&1 \
            || { tail -40 build-fuzz/replay-"$t".log; echo "fuzz.sh: fuzz_$t failed on its corpus" >&2; exit 1; }
    done
    exit 0
fi
camp=$PWD/build-fuzz/campaign
mkdir -p "$camp"

run_one() {
    local t=$1 d=$camp/$1
    mkdir -p "$d/work" "$d/art" "$d/merged"
    cp -n fuzz/corpus/"$t"/* "$d/work/" 2>/dev/null || true
    (cd "$d" && nice -n 19 ../../fuzz/fuzz_"$t" -max_total_time="$secs" -runs="${ZC_FUZZ_RUNS:--1}" \
        -rss_limit_mb=2048 -timeout=30 \
        -print_final_stats=1 -artifact_prefix=art/ work >log.txt 2>&1) || true
    grep -E '^stat::' "$d/log.txt" >"$d/stats.txt" || true
    local execs cov ft
    execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$d/stats.txt")
    cov=$(grep -oE 'cov: [0-9]+' "$d/log.txt" | tail -1 | cut -d' ' -f2)
    ft=$(grep -oE 'ft: [0-9]+' "$d/log.txt" | tail -1 | cut -d' ' -f2)
    rm -rf "$d/merged" && mkdir -p "$d/merged"
    (cd "$d" && nice -n 19 ../../fuzz/fuzz_"$t" -merge=1 merged work >merge.txt 2>&1) || true
    rm -rf "$d/work" && mv "$d/merged" "$d/work"
    local crashes
    crashes=$(find "$d/art" -type f | wc -l)
    echo "$(date -u +%FT%TZ) $t seconds=$secs execs=${execs:-?} cov=${cov:-?} ft=${ft:-?}" \
         "corpus=$(ls "$d/work" | wc -l) artifacts=$crashes" | tee -a "$camp/summary.txt"
}

running=0
for t in "${targets[@]}"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$par" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait
