#!/usr/bin/env bash
# Install what zcube needs to build, test and benchmark, from Debian's packages,
# and zarrita (for the v3 interop tests) from npm into tests/interop/node_modules
# (npm ci from its package-lock.json). Everything the tests use must come from
# here: scripts/test.sh runs them with ZC_REQUIRE_ALL=1, where a missing
# dependency fails the test instead of skipping it. Idempotent: when everything
# is present it runs no apt and no npm at all, so it is quick on a warm machine.
# @20minutes/s3rver (the S3 server of the net tests) from npm into tests/s3.
# nginx, boto3, fsspec+aiohttp, curl, openssl (a test certificate): HTTP/S3 store tests and benchmark.
set -euo pipefail
# (time: /usr/bin/time -v measures peak RSS in tests/cli/fft.sh)
pkgs=(build-essential cmake pkg-config libjansson-dev libblosc-dev libzstd-dev liblz4-dev
      zlib1g-dev libdeflate-dev libbz2-dev liburing-dev time
      libfftw3-dev libopenblas-dev liblapacke-dev
      python3-numpy python3-zarr python3-dask python3-scipy python3-pytest
      openmpi-bin libopenmpi-dev slurm-wlm munge  # the mpi and slurm executors and their tests
      # Cubed (vendored in /work/shared/peers/cubed) for bench/compute_bench.sh
      python3-networkx python3-tenacity python3-mypy-extensions python3-aiostream python3-rich
      python3-toolz python3-fsspec python3-psutil python3-cloudpickle
      # the Python module, its tests (pip into a venv, PyTorch, xarray)
      python3-dev python3-venv python3-setuptools python3-wheel python3-pip python3-torch python3-xarray
      # the HTTP/S3 stores (libcurl) and their tests and benchmark
      libcurl4-openssl-dev nginx python3-boto3 python3-aiohttp curl openssl
      clang llvm)  # libFuzzer binaries (scripts/fuzz.sh) and their coverage (llvm-cov)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 && SUDO="sudo"
fi

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

updated=0
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    if [ "$updated" -eq 0 ]; then
        $SUDO apt-get update -qq
        updated=1
    fi
    $SUDO apt-get install -y -qq --no-install-recommends "$@"
}

missing=()
for p in "${pkgs[@]}"; do
    installed "$p" || missing+=("$p")
done
# node for the zarrita interop tests. The nodejs installed on these machines
# ships npm itself (dpkg -S "$(command -v npm)" names nodejs), and Debian's
# separate npm package conflicts with it: install nodejs only if node is absent.
command -v node >/dev/null 2>&1 || missing+=(nodejs)

if ((${#missing[@]})); then
    echo "install-deps: installing ${missing[*]}"
    apt_install "${missing[@]}"
fi
# Debian's own nodejs comes without npm; only then is Debian's npm package the right one.
if ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: installing npm"
    apt_install npm
fi
interop=$(cd "$(dirname "$0")/../tests/interop" && pwd)
if [ ! -f "$interop/node_modules/zarrita/package.json" ]; then
    echo "install-deps: installing zarrita into $interop/node_modules (npm ci)"
    (cd "$interop" && npm ci --no-audit --no-fund)
fi
s3dir=$(cd "$(dirname "$0")/../tests/s3" && pwd)
if [ ! -f "$s3dir/node_modules/@20minutes/s3rver/package.json" ]; then
    echo "install-deps: installing @20minutes/s3rver into $s3dir/node_modules (npm ci)"
    (cd "$s3dir" && npm ci --no-audit --no-fund)
fi
echo "install-deps: all present"
