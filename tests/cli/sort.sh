#!/bin/bash
# tests/cli/sort.sh — `zcube eval` with sort, argsort, searchsorted (any sorter) and take_along_axis: values against NumPy's
# stable sort (NaNs last, ties, every axis, both orders), an external sort under a
# small --allowed-mem shown by --plan-only as runs + merge, and argument errors.
# Usage: bash sort.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr

"$PY" - "$TMP" <<'EOF2' || { echo "FAIL: generating inputs"; exit 1; }
import sys, numpy as np, zarr
d = sys.argv[1]
rng = np.random.default_rng(18)
u = rng.integers(-5, 5, (30, 41)).astype(np.float64)
u[rng.random(u.shape) < 0.1] = np.nan
zarr.open(f"{d}/u.zarr", mode="w", shape=u.shape, chunks=(7, 1), dtype=u.dtype)[...] = u
v = rng.integers(0, 1000, 120000).astype(np.float64)
zarr.open(f"{d}/v.zarr", mode="w", shape=v.shape, chunks=(999,), dtype=v.dtype)[...] = v
EOF2

# check EXPR NUMPY-EXPR [OPTIONS...]: zcube eval EXPR equals NumPy's (u, v loaded)
PRELUDE='
u = zarr.open(f"{d}/u.zarr", mode="r")[...]
v = zarr.open(f"{d}/v.zarr", mode="r")[...]
def st(x, axis=-1, desc=False):  # stable, NaNs last in both orders
    return np.argsort(-x if desc else x, axis=axis, kind="stable")
'
check() {
    check_numpy "$PRELUDE" "$1" "$2" --in u="$TMP/u.zarr" --in v="$TMP/v.zarr" "${@:3}"
}

check 'sort(u)' 'np.sort(u)'
check 'sort(u, axis=0)' 'np.sort(u, axis=0)'
check 'argsort(u, axis=0, descending=True)' 'st(u, 0, True)'
check 'argsort(u, stable=True)' 'st(u)'
check 'sort(u, axis=-2, descending=True) * 2' 'np.take_along_axis(u, st(u, 0, True), 0) * 2'
check 'argsort(v, descending=True)' 'st(v, -1, True)' --allowed-mem 3MB
check 'sort(v)[::1000]' 'np.sort(v)[::1000]' --allowed-mem 3MB
check "searchsorted(sort(v), u, side='right')" 'np.searchsorted(np.sort(v), u, side="right")' --allowed-mem 3MB
check 'searchsorted(v, u, sorter=argsort(v))' 'np.searchsorted(v, u, sorter=st(v))' --allowed-mem 3MB
# any sorter, not only argsort(x1): the search runs in x1[sorter]
check 'searchsorted(v[::-1], u, sorter=arange(119999, -1, -1))' 'np.searchsorted(v[::-1], u, sorter=np.arange(119999, -1, -1))' --allowed-mem 32MB
check "searchsorted(v, u, sorter=argsort(v * 1), side='right')" 'np.searchsorted(v, u, sorter=st(v), side="right")' --allowed-mem 3MB
check 'take_along_axis(u, argsort(u, axis=0), axis=0)' 'np.take_along_axis(u, st(u, 0), 0)'
check 'take_along_axis(u, argsort(u)[:, ::-4] - 41)' 'np.take_along_axis(u, st(u)[:, ::-4] - 41, -1)'
check 'take_along_axis(v, argsort(v, descending=True))' 'v[st(v, -1, True)]' --allowed-mem 3MB

# the external sort is planned before any work: runs, then merges
expect_ok eval 'sort(v)' --in v="$TMP/v.zarr" --allowed-mem 3MB --plan-only
CHECKS=$((CHECKS + 1))
grep -q "sort (runs)" "$TMP/out" && grep -q "sort (merge)" "$TMP/out" ||
    fail "--plan-only of an external sort lacks runs and merge: $(cat "$TMP/out")"

expect_fail any "axis 2 is out of range" eval 'sort(u, axis=2)' --in u="$TMP/u.zarr" -o "$TMP/e.zarr"
expect_fail 2 "side must be 'left' or 'right'" eval "searchsorted(v, u, side='up')" --in u="$TMP/u.zarr" --in v="$TMP/v.zarr" -o "$TMP/e.zarr"
expect_fail any "sorter must be 1-D with x1's length 120000" eval 'searchsorted(v, u, sorter=arange(5))' --in u="$TMP/u.zarr" --in v="$TMP/v.zarr" -o "$TMP/e.zarr"
expect_fail any "index 120000 is out of bounds" eval 'searchsorted(v, u, sorter=arange(120000) + 1)' --in u="$TMP/u.zarr" --in v="$TMP/v.zarr" -o "$TMP/e.zarr"
expect_fail any "x1 must be 1-D" eval 'searchsorted(u, v)' --in u="$TMP/u.zarr" --in v="$TMP/v.zarr" -o "$TMP/e.zarr"
expect_fail 2 "descending must be True or False" eval 'argsort(u, descending=1.5)' --in u="$TMP/u.zarr" -o "$TMP/e.zarr"
expect_fail any "integer dtype" eval 'take_along_axis(u, u)' --in u="$TMP/u.zarr" -o "$TMP/e.zarr"
expect_fail any "cannot be sorted" eval 'sort(astype(u, complex128))' --in u="$TMP/u.zarr" -o "$TMP/e.zarr"
finish
