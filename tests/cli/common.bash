# tests/cli/common.bash — helpers sourced by the CLI test scripts (not a test
# itself: ctest runs tests/cli/*.sh as `bash script.sh <zcube> <tests/data>`).
#
#   run ARGS...                 run zcube, keep RC, $TMP/out, $TMP/err
#   expect_ok ARGS...           must exit 0
#   expect_fail CODE FRAG ARGS...  must exit CODE (or any of 1/2 with CODE=any),
#                               print ONE stderr line "zcube: <cmd>: ..." that
#                               contains FRAG, and never die from a signal
#   check_numpy PRELUDE EXPR REF OPTIONS...  zcube eval EXPR equals NumPy's REF
#   finish                      exit 1 if anything failed
#   zc_skip, zc_require_python  a missing dependency: see tests/skip.bash
# ZC_CLI_VERBOSE=1 prints every expected error line.

set -u
Z=$(realpath "$1")
DATA=$(realpath "$2")
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/zcube-cli.XXXXXX")
SEQN=0 # unique names for outputs within one script ($RANDOM collided: two outputs in one file)
trap 'rm -rf "$TMP"' EXIT
# the work directories that failed runs keep (for --resume) land here too
# (readable by others: a one-node Slurm's daemons, started from here, run as
# their own users)
chmod 755 "$TMP"
export TMPDIR="$TMP"
FAILS=0
CHECKS=0
. "$(dirname "${BASH_SOURCE[0]}")/../skip.bash"

fail() {
    echo "FAIL: $*"
    FAILS=$((FAILS + 1))
}

run() {
    "$Z" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

expect_ok() {
    CHECKS=$((CHECKS + 1))
    run "$@"
    if [ "$RC" -ne 0 ]; then
        fail "zcube $* -> exit $RC: $(head -c 600 "$TMP/err")"
        return 1
    fi
    return 0
}

expect_fail() {
    local code=$1 frag=$2
    shift 2
    CHECKS=$((CHECKS + 1))
    run "$@"
    local lines
    lines=$(wc -l <"$TMP/err")
    [ -n "${ZC_CLI_VERBOSE:-}" ] && echo "[exit $RC] zcube $*: $(cat "$TMP/err")"
    if [ "$RC" -ge 128 ]; then
        fail "zcube $* died with exit $RC (signal?): $(head -c 600 "$TMP/err")"
        return 1
    fi
    if [ "$RC" -eq 0 ]; then
        fail "zcube $* succeeded, expected failure with '$frag'"
        return 1
    fi
    if [ "$code" != any ] && [ "$RC" -ne "$code" ]; then
        fail "zcube $* -> exit $RC, expected $code: $(head -c 600 "$TMP/err")"
        return 1
    fi
    if [ "$lines" -ne 1 ]; then
        fail "zcube $*: expected one stderr line, got $lines: $(head -c 600 "$TMP/err")"
        return 1
    fi
    if ! grep -q '^zcube: [^:]*: ' "$TMP/err"; then
        fail "zcube $*: stderr not of the form 'zcube: <cmd>: ...': $(cat "$TMP/err")"
        return 1
    fi
    if ! grep -qF -- "$frag" "$TMP/err"; then
        fail "zcube $*: stderr lacks '$frag': $(cat "$TMP/err")"
        return 1
    fi
    return 0
}

# check_numpy PRELUDE EXPR REF [OPTIONS...]: `zcube eval EXPR -o NEW OPTIONS...` must
# succeed and give NumPy's eval(REF): the same dtype, shape and values (NaNs equal).
# PRELUDE is Python run first with d = $TMP and np, zarr imported (it loads the inputs).
check_numpy() {
    local prelude=$1 expr=$2 ref=$3
    shift 3
    SEQN=$((SEQN + 1))
    local out=$TMP/o$SEQN.zarr
    expect_ok eval "$expr" -o "$out" --zarr-format 2 "$@" || return
    CHECKS=$((CHECKS + 1))
    "$PY" - "$TMP" "$out" "$ref" "$prelude" <<'EOF2' || fail "$expr: differs from NumPy's $ref"
import sys, numpy as np, zarr
d, out, ref, prelude = sys.argv[1:]
exec(prelude)
got, want = zarr.open(out, mode="r")[...], eval(ref)
assert got.dtype == want.dtype, (got.dtype, want.dtype)
assert got.shape == want.shape, (got.shape, want.shape)
np.testing.assert_array_equal(got, want)
EOF2
}

finish() {
    if [ "$FAILS" -ne 0 ]; then
        echo "$FAILS of $CHECKS checks failed"
        exit 1
    fi
    echo "all $CHECKS checks passed"
    exit 0
}
