#!/bin/bash
# tests/cli/unique.sh — `zcube eval` with unique_all, unique_counts, unique_inverse and
# unique_values against NumPy's np.unique (equal_nan=False: each NaN distinct) over
# awkward chunkings (one element per chunk, ragged edges, ties, all NaN, empty), an
# external sort under a small --allowed-mem shown by --plan-only, complex values, and
# argument errors.
# Usage: bash unique.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr

"$PY" - "$TMP" <<'EOF2' || { echo "FAIL: generating inputs"; exit 1; }
import sys, numpy as np, zarr
d = sys.argv[1]
rng = np.random.default_rng(18)
u = rng.integers(-5, 5, (30, 41)).astype(np.float64)
u[rng.random(u.shape) < 0.1] = np.nan
u[rng.random(u.shape) < 0.05] = -0.0
zarr.open(f"{d}/u.zarr", mode="w", shape=u.shape, chunks=(7, 1), dtype=u.dtype)[...] = u
v = rng.integers(0, 20000, 150000).astype(np.float64)
zarr.open(f"{d}/v.zarr", mode="w", shape=v.shape, chunks=(999,), dtype=v.dtype)[...] = v
w = rng.integers(0, 3, 17).astype(np.int16)
zarr.open(f"{d}/w.zarr", mode="w", shape=w.shape, chunks=(1,), dtype=w.dtype)[...] = w
n = np.full(13, np.nan)
zarr.open(f"{d}/n.zarr", mode="w", shape=n.shape, chunks=(5,), dtype=n.dtype)[...] = n
e = np.zeros((4, 0), np.float32)
zarr.open(f"{d}/e.zarr", mode="w", shape=e.shape, chunks=(3, 1), dtype=e.dtype)[...] = e
EOF2

# check EXPR NUMPY-EXPR [OPTIONS...]: zcube eval EXPR equals NumPy's (u, v, w, n, e loaded;
# ua(x) = (values, indices, inverse in x's shape, counts) by np.unique)
PRELUDE='
u, v, w, n, e = (zarr.open(f"{d}/{k}.zarr", mode="r")[...] for k in "uvwne")
def ua(x):
    r = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return r[0], r[1].astype(np.int64), r[2].reshape(x.shape).astype(np.int64), r[3].astype(np.int64)
'
check() {
    local k ins=()
    for k in u v w n e; do ins+=(--in "$k=$TMP/$k.zarr"); done
    check_numpy "$PRELUDE" "$1" "$2" "${ins[@]}" "${@:3}"
}

check 'unique_values(u)' 'ua(u)[0]'
check 'unique_all(u)[1]' 'ua(u)[1]'
check 'unique_all(u)[2]' 'ua(u)[2]'
check 'unique_all(u)[3]' 'ua(u)[3]'
check 'unique_counts(u)[1]' 'ua(u)[3]'
check 'unique_inverse(u)[1] * 2' 'ua(u)[2] * 2'
check 'unique_inverse(u)[0][reshape(unique_inverse(u)[1], (-1,))]' 'ua(u)[0][ua(u)[2].ravel()]'
check 'unique_counts(w)[0]' 'ua(w)[0]'
check 'unique_all(w)[3]' 'ua(w)[3]'
check 'unique_inverse(w)[1]' 'ua(w)[2]'
check 'unique_all(n)[1]' 'ua(n)[1]'
check 'unique_counts(n)[1]' 'ua(n)[3]'
check 'unique_values(e)' 'ua(e)[0]'
check 'unique_inverse(e)[1]' 'ua(e)[2]'
check 'unique_values(v)' 'ua(v)[0]' --allowed-mem 3MB
check 'unique_all(v)[1]' 'ua(v)[1]' --allowed-mem 3MB
check 'unique_inverse(v)[1]' 'ua(v)[2]' --allowed-mem 3MB
check 'unique_counts(v)[1]' 'ua(v)[3]' --allowed-mem 3MB

# an external sort under the selection, planned before any work
expect_ok eval 'unique_values(v)' --in v="$TMP/v.zarr" --allowed-mem 3MB --plan-only
CHECKS=$((CHECKS + 1))
grep -q "sort (merge)" "$TMP/out" && grep -q "mask_select" "$TMP/out" ||
    fail "--plan-only of unique_values under 3MB lacks the merge and the selection: $(cat "$TMP/out")"

# complex: NumPy's order (real part, then imaginary; NaNs by class last)
# (eval has no complex literals: 1j is sqrt(-1 + 0j), exact)
J='sqrt(astype(full_like(u, -1), complex128))'
check "unique_all(u + flip(u, axis=0) * $J)[0]" 'ua(u + u[::-1] * 1j)[0]'
check "unique_all(u + flip(u, axis=0) * $J)[2]" 'ua(u + u[::-1] * 1j)[2]'
check "unique_counts(astype(u - 2 * $J, complex64))[1]" 'ua((u - 2j).astype(np.complex64))[3]'
expect_fail any "unique_counts" eval 'unique_counts(u, 1)' --in u="$TMP/u.zarr" -o "$TMP/x.zarr"
finish
