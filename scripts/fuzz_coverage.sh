#!/usr/bin/env bash
# Source coverage of the fuzz corpora: which lines of the library each fuzz
# target's corpus reaches (docs/internals/fuzzing.md, docs/reliability.md).
#
#   scripts/fuzz_coverage.sh [TARGET...]
#
# Builds build-cov (clang, -fprofile-instr-generate -fcoverage-mapping), replays
# each target's committed corpus plus its campaign working corpus
# (build-fuzz/campaign/<target>/work, when scripts/fuzz.sh has run) through
# fuzz_regression, and prints one line per target: inputs, and the line and
# region coverage of the source files the target reached (llvm-cov's totals over
# the files with at least one covered line), then the same for all targets
# together over src/. Reports land in build-cov/coverage/<target>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < fuzz/targets
fi
for tool in clang llvm-profdata llvm-cov; do
    command -v "$tool" >/dev/null || { echo "fuzz_coverage.sh: $tool is needed (apt-get install clang llvm)" >&2; exit 1; }
done
if [ ! -f build-cov/CMakeCache.txt ]; then
    CC=clang cmake -S . -B build-cov -DZC_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_FLAGS="-fprofile-instr-generate -fcoverage-mapping" \
        -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" >/dev/null
fi
nice cmake --build build-cov -j"$(nproc)" --target fuzz_regression >/dev/null
out=build-cov/coverage
rm -rf "$out" && mkdir -p "$out"
bin=build-cov/fuzz/fuzz_regression
printf '%-13s %8s %22s %22s\n' target inputs "lines (reached files)" "regions"
for t in "${targets[@]}"; do
    dirs=(fuzz/corpus/"$t")
    [ -d build-fuzz/campaign/"$t"/work ] && dirs+=(build-fuzz/campaign/"$t"/work)
    n=0
    for d in "${dirs[@]}"; do
        LLVM_PROFILE_FILE="$out/$t-%p.profraw" "$bin" "$t" "$d" >"$out/$t.log" 2>&1 \
            || { tail -20 "$out/$t.log"; echo "fuzz_coverage.sh: $t failed on $d" >&2; exit 1; }
        n=$((n + $(find "$d" -type f | wc -l)))
    done
    llvm-profdata merge -sparse "$out/$t"-*.profraw -o "$out/$t.profdata"
    llvm-cov report "$bin" -instr-profile="$out/$t.profdata" "$PWD/src" >"$out/$t.txt"
    # totals over the files this target reached (a file with no covered line is not its code)
    awk -v t="$t" -v n="$n" '$1 ~ /\.c$/ && $9 < $8 { reg += $2; regmiss += $3; lines += $8; lmiss += $9 }
        END { printf "%-13s %8d %10.1f%% of %6d %10.1f%% of %6d\n", t, n,
              100 * (lines - lmiss) / lines, lines, 100 * (reg - regmiss) / reg, reg }' "$out/$t.txt"
done
llvm-profdata merge -sparse "$out"/*.profraw -o "$out/all.profdata"
llvm-cov report "$bin" -instr-profile="$out/all.profdata" "$PWD/src" >"$out/all.txt"
tail -1 "$out/all.txt" | awk '{ printf "%-13s %8s %10s of %6d %10s of %6d  (all of src/)\n", "all", "-", $10, $8, $4, $2 }'
