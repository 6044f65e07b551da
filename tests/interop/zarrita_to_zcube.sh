#!/usr/bin/env bash
# zarrita (npm, run by node) writes Zarr v3 arrays; zcube must read them exactly.
# Usage: bash zarrita_to_zcube.sh PATH-TO-ZCUBE [TESTS-DATA-DIR]
# Env: ZC_INTEROP_SEED, ZC_INTEROP_COUNT (default 120), ZC_INTEROP_KEEP=1.
set -u
source "$(dirname "$0")/common.bash"
interop_init "$@"
require_zarrita
exec "$PY" "$HERE/zarrita_to_zcube.py" "$ZCUBE"
