#!/usr/bin/env bash
# Install dependencies, build, and run every test: once in a normal build and
# once under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

bash scripts/build.sh build -DZC_WERROR=ON
(cd build && ctest --output-on-failure -j"$jobs")

bash scripts/build.sh build-asan -DZC_WERROR=ON -DZC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j"$jobs")
