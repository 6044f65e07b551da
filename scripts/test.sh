#!/usr/bin/env bash
# Install dependencies, build, and run every test: once in a normal build and
# once under AddressSanitizer + UndefinedBehaviorSanitizer. Every test must run:
# with ZC_REQUIRE_ALL=1 a test missing a dependency fails instead of skipping
# (tests/skip.bash, tests/harness.h), and a run in which ctest still reports a
# test as skipped or not run fails as well.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
export ZC_REQUIRE_ALL=1

# run_ctest DIR: ctest in DIR (its output also in DIR/ctest.log); fails on any
# failed, skipped or not-run test.
run_ctest() {
    (cd "$1" && ctest --output-on-failure -j"$jobs") 2>&1 | tee "$1/ctest.log"
    if grep -qE '\*\*\*(Skipped|Not Run)|tests did not run' "$1/ctest.log"; then
        echo "test.sh: tests skipped or not run in $1 (none may be, ZC_REQUIRE_ALL=1):"
        grep -E '\*\*\*(Skipped|Not Run)' "$1/ctest.log"
        exit 1
    fi
}

bash scripts/build.sh build -DZC_WERROR=ON -DZC_PYTHON=ON  # the Python tests must be built
run_ctest build

bash scripts/build.sh build-asan -DZC_WERROR=ON -DZC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest build-asan

# The libFuzzer binaries (clang) replay every committed corpus: the clang build
# and the campaign tooling stay working (docs/internals/fuzzing.md).
bash scripts/fuzz.sh 0 "$jobs"
