#!/usr/bin/env bash
# Install dependencies, build, and run every test: once in a normal build and
# once under AddressSanitizer + UndefinedBehaviorSanitizer; the threaded and
# concurrent ones also under ThreadSanitizer. Every test must run:
# with ZC_REQUIRE_ALL=1 a test missing a dependency fails instead of skipping
# (tests/skip.bash, tests/harness.h), and a run in which ctest still reports a
# test as skipped or not run fails as well.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
export ZC_REQUIRE_ALL=1

# run_ctest DIR [CTEST ARGS...]: ctest in DIR (its output also in
# DIR/ctest.log), with TMPDIR a fresh folder; fails on any failed, skipped or
# not-run test, and on any work directory (zcube-work-*) a test left in TMPDIR:
# a computation removes its own, and a test removes what it kept on purpose.
run_ctest() {
    local dir=$1 tmp left
    shift
    tmp=$(mktemp -d)
    chmod 755 "$tmp" # the one-node Slurm's daemons and nginx run as their own users
    (cd "$dir" && TMPDIR=$tmp ctest --output-on-failure -j"$jobs" "$@") 2>&1 | tee "$dir/ctest.log"
    if grep -qE '\*\*\*(Skipped|Not Run)|tests did not run' "$dir/ctest.log"; then
        echo "test.sh: tests skipped or not run in $dir (none may be, ZC_REQUIRE_ALL=1):"
        grep -E '\*\*\*(Skipped|Not Run)' "$dir/ctest.log"
        exit 1
    fi
    left=$(find "$tmp" -maxdepth 1 -name 'zcube-work-*')
    if [[ -n $left ]]; then
        echo "test.sh: work directories left behind by the tests in $dir:"
        echo "$left"
        exit 1
    fi
    rm -rf "$tmp"
}

bash scripts/build.sh build -DZC_WERROR=ON -DZC_PYTHON=ON  # the Python tests must be built
run_ctest build

bash scripts/build.sh build-asan -DZC_WERROR=ON -DZC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest build-asan

# The threaded and concurrent tests once more under ThreadSanitizer: a data
# race makes a test fail (halt_on_error). RSS checks are off there, as under
# ASan (tests/harness.c). Not the whole suite: under TSan it takes longer
# than CI allows, and most compute tests spend their time in uninstrumented
# OpenBLAS and FFTW.
TSAN_TESTS='^(core\.|codec\.|store\.|zarr\.|loader\.|kernels\.ew_threads|compute\.(threads_plan_and_compute_graphs_sharing_nodes|saved_plan_runs_the_planned_tasks_whatever_the_threads)|cli\.(concurrent|getput_pipe))'
bash scripts/build.sh build-tsan -DZC_WERROR=ON -DZC_TSAN=ON -DZC_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
TSAN_OPTIONS="halt_on_error=1 exitcode=66" run_ctest build-tsan --timeout 1200 -R "$TSAN_TESTS"

# The Release build the benchmarks use (bench/*.sh, build-bench) compiles
# without warnings: -O3 finds "may be used uninitialized" paths -O2 does not,
# and a broken build-bench leaves the benchmarks running stale binaries.
bash scripts/build.sh build-release -DZC_WERROR=ON -DCMAKE_BUILD_TYPE=Release

# The libFuzzer binaries (clang) replay every committed corpus: the clang build
# and the campaign tooling stay working (docs/internals/fuzzing.md).
bash scripts/fuzz.sh 0 "$jobs"
