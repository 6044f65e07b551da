#!/usr/bin/env bash
# Install what zcube needs to build, test and benchmark, from Debian's packages
# (zarrita, for the v3 interop tests, comes from npm: tests/interop installs it
# itself from its package-lock.json; so does the S3 server of the store tests,
# @20minutes/s3rver, in tests/s3). nginx, boto3, fsspec+aiohttp: HTTP/S3 store
# tests and benchmark. Idempotent: when everything is present it
# runs no apt at all, so it is quick on a warm machine.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libjansson-dev libblosc-dev libzstd-dev liblz4-dev
      zlib1g-dev libdeflate-dev libbz2-dev liburing-dev libcurl4-openssl-dev
      libfftw3-dev libopenblas-dev liblapacke-dev
      python3-numpy python3-zarr python3-dask python3-scipy python3-pytest
      nginx python3-boto3 python3-fsspec python3-aiohttp curl)

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
    apt_install npm || echo "install-deps: npm unavailable; the zarrita interop tests will skip"
fi
echo "install-deps: all present"
