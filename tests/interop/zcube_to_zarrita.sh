#!/usr/bin/env bash
# zcube creates and writes Zarr v3 arrays (sharded or not, several codecs);
# zarrita (npm, run by node) must read exactly the values zcube was given.
# Usage: bash zcube_to_zarrita.sh PATH-TO-ZCUBE [TESTS-DATA-DIR]
# Env: ZC_INTEROP_SEED, ZC_INTEROP_COUNT (default 120), ZC_INTEROP_KEEP=1.
set -u
source "$(dirname "$0")/common.bash"
interop_init "$@"
require_zarrita
exec "$PY" "$HERE/zcube_to_zarrita.py" "$ZCUBE"
