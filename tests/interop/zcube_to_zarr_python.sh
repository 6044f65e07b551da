#!/usr/bin/env bash
# zcube creates and writes Zarr v2 arrays (create + put); zarr-python must read
# the same metadata and values, and zcube must read what zarr-python then writes.
# Usage: bash zcube_to_zarr_python.sh PATH-TO-ZCUBE [TESTS-DATA-DIR]
# Env: ZC_INTEROP_SEED, ZC_INTEROP_COUNT (default 120), ZC_INTEROP_KEEP=1.
set -u
source "$(dirname "$0")/common.bash"
interop_init "$@"
require_zarr_python
exec "$PY" "$HERE/zcube_to_zarr_python.py" "$ZCUBE"
