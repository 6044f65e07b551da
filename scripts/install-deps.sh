#!/usr/bin/env bash
# Install what zcube needs to build, test and benchmark, from Debian's packages
# (and zarrita from npm for the v3 interop tests, installed by those tests).
# Idempotent and quick when everything is present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libjansson-dev libblosc-dev libzstd-dev liblz4-dev
      zlib1g-dev libdeflate-dev libbz2-dev liburing-dev
      python3-numpy python3-zarr python3-dask python3-scipy python3-pytest)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node + npm for the zarrita (Zarr v3) interop tests: the machine's nodejs ships npm;
# Debian's separate npm package conflicts with it, so only install nodejs if absent.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if ((${#missing[@]})); then
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v npm >/dev/null 2>&1; then
    apt-get install -y -qq npm >/dev/null || echo "install-deps: npm unavailable; zarrita interop tests will skip"
fi
