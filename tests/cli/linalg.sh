#!/bin/bash
# tests/cli/linalg.sh — linear algebra through `zcube eval`: qr, svd, svdvals,
# svd_compressed, solve, inv, cholesky, lstsq against NumPy (linalg_numpy.py),
# tuple results indexed (svd(a)[1]), the memory bound of one-task solvers, and
# error cases (not 2-D, integer dtype, singular, not positive definite, a tuple
# left unindexed, a bad index, unsupported options) with their exit codes.
# Usage: bash linalg.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr numcodecs

CHECKS=$((CHECKS + 1))
if ! "$PY" "$(dirname "$0")/linalg_numpy.py" "$Z" "$TMP/np" >"$TMP/np.log" 2>&1; then
    fail "linalg_numpy.py: $(tail -20 "$TMP/np.log")"
else
    echo "linalg_numpy: $(tail -1 "$TMP/np.log")"
fi

"$PY" - "$TMP" <<'PYEOF' || { echo "FAIL: generating inputs"; exit 1; }
import sys, numpy as np, zarr
d = sys.argv[1]
a = np.random.default_rng(1).standard_normal((50, 6))
zarr.open(f"{d}/a.zarr", mode="w", shape=a.shape, chunks=(25, 6), dtype=a.dtype)[...] = a
s = np.array([[1.0, 2.0], [2.0, 4.0]])  # singular, not positive definite
zarr.open(f"{d}/s.zarr", mode="w", shape=s.shape, chunks=s.shape, dtype=s.dtype)[...] = s
i = np.arange(12, dtype=np.int32).reshape(3, 4)
zarr.open(f"{d}/i.zarr", mode="w", shape=i.shape, chunks=i.shape, dtype=i.dtype)[...] = i
v = np.arange(5.0)
zarr.open(f"{d}/v.zarr", mode="w", shape=v.shape, chunks=v.shape, dtype=v.dtype)[...] = v
PYEOF
A="--in a=$TMP/a.zarr"
S="--in s=$TMP/s.zarr"

# plans: TSQR stages appear; svdvals reads A once (one tsqr_r, no tsqr_q)
CHECKS=$((CHECKS + 1))
ops=$("$Z" eval 'svdvals(a)' $A --plan-only --json | "$PY" -c 'import json,sys; print(" ".join(o["kind"] for o in json.load(sys.stdin)["operations"]))')
[ "$ops" = "tsqr_r qr_r svd_s" ] || fail "svdvals plan: '$ops'"
CHECKS=$((CHECKS + 1))
ops=$("$Z" eval 'svd(a)[0]' $A --plan-only --json | "$PY" -c 'import json,sys; print(" ".join(o["kind"] for o in json.load(sys.stdin)["operations"]))')
[ "$ops" = "tsqr_r qr_q qr_r svd_u tsqr_q" ] || fail "svd(a)[0] plan: '$ops'"

# errors: library failures exit 1, expression errors exit 2
expect_fail 2 "tuple of 2 values" eval 'qr(a)' $A -o "$TMP/e1.zarr"
expect_fail 2 "out of range" eval 'svd(a)[3]' $A -o "$TMP/e2.zarr"
expect_fail 2 "indexed by an integer" eval 'qr(a)[0:1]' $A -o "$TMP/e3.zarr"
expect_fail 2 "full_matrices must be True or False" eval 'svd(a, full_matrices=2.5)[0]' $A -o "$TMP/e4.zarr"
expect_fail 2 "mode must be \"reduced\" or \"complete\"" eval 'qr(a, mode="r")[0]' $A -o "$TMP/e5.zarr"
expect_fail 2 "rcond" eval 'lstsq(a, a, rcond=0.1)[0]' $A -o "$TMP/e6.zarr"
expect_fail any "2-D" eval 'svdvals(v)' --in v="$TMP/v.zarr" -o "$TMP/e7.zarr"
expect_fail any "int32" eval 'qr(i)[0]' --in i="$TMP/i.zarr" -o "$TMP/e8.zarr"
expect_fail 1 "singular" eval 'inv(s)' $S -o "$TMP/e9.zarr"
expect_fail 1 "singular" eval 'solve(s, s)' $S -o "$TMP/e10.zarr"
expect_fail 1 "positive definite" eval 'cholesky(s)' $S -o "$TMP/e11.zarr"
expect_fail 1 "square" eval 'inv(a)' $A -o "$TMP/e12.zarr"
expect_fail any "k = 7" eval 'svd_compressed(a, k=7)[1]' $A -o "$TMP/e13.zarr"
# one-task solvers name the operation and both memory figures when they do not fit
expect_fail 1 "MB allowed" eval 'inv(uniform((2000, 2000), chunks=(200, 200)))' -o "$TMP/e14.zarr" --allowed-mem 16MB
CHECKS=$((CHECKS + 1))
grep -q "inv" "$TMP/err" || fail "memory bound message does not name inv: $(cat "$TMP/err")"

# a result used in an expression and written with the default format
expect_ok eval 'svdvals(a) / svd(a)[1][0]' $A -o "$TMP/ok1.zarr" --zarr-format 2 &&
    "$PY" - "$TMP" <<'PYEOF' || fail "svdvals(a) / svd(a)[1][0] differs from NumPy's"
import sys, numpy as np, zarr
d = sys.argv[1]
a = zarr.open(f"{d}/a.zarr", mode="r")[...]
got = zarr.open(f"{d}/ok1.zarr", mode="r")[...]
s = np.linalg.svd(a, compute_uv=False)
sys.exit(0 if got.shape == (6,) and np.abs(got - s / s[0]).max() < 1e-12 else 1)
PYEOF
finish
