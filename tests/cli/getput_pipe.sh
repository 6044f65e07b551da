#!/bin/bash
# tests/cli/getput_pipe.sh — get and put through two buffers (tools/boxpipe.c:
# a box decoded while the one before is written, or read while the one before
# is encoded): results equal to NumPy's over many boxes, to a file and to
# standard output; a failure on either side (a corrupt chunk, a write refused
# for the file size, a .npy that ends early) gives one error line, leaves no
# temporary file and no torn output: OUT is either the old file or absent.
# Usage: bash getput_pipe.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"
zc_require_python numpy

"$PY" - "$TMP" <<'EOF' || { echo "FAIL: generating inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(11)
a = rng.standard_normal((40, 64, 64)).astype(np.float32)
np.save(f"{d}/in.npy", a)
np.save(f"{d}/in_be.npy", a.astype(">f4"))
np.save(f"{d}/old.npy", np.arange(5))
EOF

same_npy() { # $1 = output, $2 = expected .npy, $3 = NumPy region (or "")
    "$PY" - "$1" "$2" "$3" <<'EOF'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if sys.argv[3]:
    b = eval("b[" + sys.argv[3] + "]")
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b) else 1)
EOF
}

no_tmp() { # $1 = folder: no temporary output left behind
    local left
    left=$(find "$1" -maxdepth 1 -name '*.tmp*' | head -3)
    [ -z "$left" ] || fail "temporary files left in $1: $left"
}

# chunks of (8, 16, 64) float32 = 32 KiB; --max-mem 96KB: two buffers of 48 KiB,
# boxes of one chunk, 20 of them
for codec in zstd:3 none "blosc:lz4:5:shuffle"; do
    arr="$TMP/a_$((++SEQN))"
    expect_ok create "$arr" --shape 40,64,64 --chunks 8,16,64 --dtype float32 --codec "$codec" || continue
    expect_ok put "$arr" "$TMP/in.npy" --max-mem 96KB || continue
    for r in "" "3:37:2,5:60,::3" "...,7" "39"; do
        out="$TMP/o_$((++SEQN)).npy"
        expect_ok get "$arr" --region "$r" --max-mem 96KB -o "$out" && {
            same_npy "$out" "$TMP/in.npy" "$r" || fail "get $codec region '$r' differs from NumPy"
        }
        out="$TMP/s_$((++SEQN)).npy"
        if "$Z" get "$arr" --region "$r" --max-mem 96KB -o - >"$out"; then
            same_npy "$out" "$TMP/in.npy" "$r" || fail "get -o - $codec region '$r' differs from NumPy"
        else
            fail "get -o - $codec region '$r' failed"
        fi
    done
    # big-endian input, swapped on the reading thread, into a strided region
    expect_ok put "$arr" "$TMP/in_be.npy" --max-mem 96KB &&
        expect_ok get "$arr" -o "$TMP/be_$SEQN.npy" --max-mem 1MB && {
        same_npy "$TMP/be_$SEQN.npy" "$TMP/in.npy" "" || fail "put of big-endian $codec input differs"
    }
    no_tmp "$TMP"
done

# ---- a corrupt chunk half-way: the error names it, the old OUT stays whole
arr="$TMP/corrupt"
if expect_ok create "$arr" --shape 40,64,64 --chunks 8,16,64 --dtype float32 --codec zstd:3 --zarr-format 2 &&
    expect_ok put "$arr" "$TMP/in.npy"; then
    printf 'not zstd at all' >"$arr/3.1.0"
    cp "$TMP/old.npy" "$TMP/kept.npy"
    expect_fail 1 "3.1.0" get "$arr" --max-mem 96KB -o "$TMP/kept.npy"
    cmp -s "$TMP/kept.npy" "$TMP/old.npy" || fail "a failed get changed the existing output"
    expect_fail 1 "3.1.0" get "$arr" --max-mem 96KB -o "$TMP/absent.npy"
    [ ! -e "$TMP/absent.npy" ] || fail "a failed get left a partial output"
    no_tmp "$TMP"
fi

# ---- the file size limit below the output's size: no output, no temporary
arr="$TMP/a_1"
if [ -d "$arr" ]; then
    CHECKS=$((CHECKS + 1))
    (trap '' XFSZ; ulimit -f 200; exec "$Z" get "$arr" --max-mem 96KB -o "$TMP/limited.npy") 2>"$TMP/err"
    rc=$?
    if [ "$rc" -ne 1 ] || [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -q "writing '$TMP/limited.npy': File too large" "$TMP/err"; then
        fail "get over the file size limit: exit $rc, $(head -c 300 "$TMP/err")"
    fi
    [ ! -e "$TMP/limited.npy" ] || fail "a get whose write failed left an output"
    no_tmp "$TMP"
fi

# ---- standard output closed early, the writing thread fails: one error line
CHECKS=$((CHECKS + 1))
"$Z" get "$TMP/a_1" -o - --max-mem 96KB 2>"$TMP/pipe_err" | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 1 ] || [ "$(wc -l <"$TMP/pipe_err")" -ne 1 ] ||
    ! grep -q "^zcube: get: writing to standard output: Broken pipe" "$TMP/pipe_err"; then
    fail "get -o - | head: exit $rc: $(cat "$TMP/pipe_err")"
fi

# ---- a .npy that ends half-way: put stops with one error line
head -c 300000 "$TMP/in.npy" >"$TMP/short.npy"
"$PY" -c "
import sys
h = open(sys.argv[1], 'rb').read(128)
assert b'(40, 64, 64)' in h
" "$TMP/short.npy" || fail "short.npy lost its header"
expect_fail 1 "truncated .npy" put "$TMP/a_1" "$TMP/short.npy" --max-mem 96KB

finish
