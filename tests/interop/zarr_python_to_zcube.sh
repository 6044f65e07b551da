#!/usr/bin/env bash
# zarr-python (Zarr v2) writes a seeded random matrix of arrays; zcube reads them
# (info --json, get, get --region) and must return exactly what zarr-python reads.
# Usage: bash zarr_python_to_zcube.sh PATH-TO-ZCUBE [TESTS-DATA-DIR]
# Env: ZC_INTEROP_SEED, ZC_INTEROP_COUNT (default 240), ZC_INTEROP_KEEP=1.
set -u
source "$(dirname "$0")/common.bash"
interop_init "$@"
require_zarr_python
exec "$PY" "$HERE/zarr_python_to_zcube.py" "$ZCUBE"
