#!/bin/bash
# tests/cli/concurrent.sh — several processes on one array at once:
#   - 8 `zcube put` processes write disjoint, chunk-aligned row blocks of one
#     array at the same time: the result is exactly all their data;
#   - readers (`zcube get`) run during those writes: every read succeeds and
#     every chunk it sees is either still the fill value or wholly written
#     (never torn, never a mix inside a chunk);
#   - two evals sharing one --work-dir: the second is refused with a message
#     naming the folder while the first holds it (checked deterministically
#     with flock(1) holding the folder, then with two real evals racing).
# Writers of regions that share a chunk are not safe (each rewrites the whole
# chunk: the last one wins), as in zarr-python; they are not tested here.
# Usage: bash concurrent.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy
command -v flock >/dev/null || zc_skip "flock(1) (util-linux) is needed to hold the work folder"

A=$TMP/a.zarr
NW=8
expect_ok create "$A" --shape 256,512 --chunks 32,64 --dtype float32 --codec zstd:1 --fill-value -1
"$PY" -c '
import numpy as np, sys
for w in range(int(sys.argv[2])):
    for v in range(1, 4):
        a = (np.arange(32 * 512, dtype="<f4").reshape(32, 512) % 1000) + 1000 * (w + 1) + 100000 * v
        np.save(f"{sys.argv[1]}/w{w}v{v}.npy", a.astype("<f4"))
' "$TMP" $NW

# readers in the background, checking each chunk they see
cat >"$TMP/check.py" <<'EOF'
import numpy as np, sys
nw = int(sys.argv[1])
ref = (np.arange(32 * 512, dtype="<f4").reshape(32, 512) % 1000)
for f in sys.argv[2:]:
    a = np.load(f)
    for w in range(nw):
        blk = a[32 * w:32 * (w + 1)]
        for j in range(0, 512, 64):
            c = blk[:, j:j + 64]
            if (c == -1).all():
                continue
            if not any(np.array_equal(c, ref[:, j:j + 64] + 1000 * (w + 1) + 100000 * v) for v in (1, 2, 3)):
                sys.exit(f"{f}: rows {32*w}:{32*(w+1)} cols {j}:{j+64}: a torn or mixed chunk")
print(len(sys.argv) - 2, "reads checked")
EOF
reader() { # every read kept, checked at the end
    local i=0
    while [ ! -e "$TMP/stop" ]; do
        i=$((i + 1))
        "$Z" get "$A" -o "$TMP/r$1_$i.npy" 2>"$TMP/rerr$1" || echo "read failed: $(cat "$TMP/rerr$1")" >>"$TMP/reader_fail"
    done
}
reader 1 &
R1=$!
reader 2 &
R2=$!
pids=()
for ((w = 0; w < NW; w++)); do
    (for v in 1 2 3 1 2 3; do # each chunk goes fill -> v1 -> v2 -> v3 -> v1 ...: readers see one of them whole
        "$Z" put "$A" "$TMP/w${w}v$v.npy" --region "$((32 * w)):$((32 * (w + 1)))" --threads 1 || exit 1
    done) 2>"$TMP/perr$w" &
    pids+=($!)
done
CHECKS=$((CHECKS + 1))
for ((w = 0; w < NW; w++)); do
    wait "${pids[$w]}" || fail "writer $w failed: $(cat "$TMP/perr$w")"
done
touch "$TMP/stop"
wait $R1 $R2
CHECKS=$((CHECKS + 1))
[ ! -s "$TMP/reader_fail" ] || fail "readers during the writes: $(head -3 "$TMP/reader_fail")"
CHECKS=$((CHECKS + 1))
"$PY" "$TMP/check.py" $NW "$TMP"/r[12]_*.npy || fail "a reader saw a torn chunk"
echo "(during $NW concurrent writers of 6 versions each)"
expect_ok get "$A" -o "$TMP/final.npy"
CHECKS=$((CHECKS + 1))
"$PY" -c '
import numpy as np, sys
a = np.load(sys.argv[1]); ref = (np.arange(32 * 512, dtype="<f4").reshape(32, 512) % 1000)
want = np.concatenate([ref + 1000 * (w + 1) + 300000 for w in range(int(sys.argv[2]))])
sys.exit(0 if np.array_equal(a, want) else "the array is not the union of the writers data")
' "$TMP/final.npy" $NW || fail "concurrent disjoint writers lost data"

# ---- one work dir, two evals
W=$TMP/work
mkdir -p "$W"
flock -n -F "$W" sleep 30 &
HOLD=$!
sleep 0.3
expect_fail 1 "is in use by another computation" rechunk "$A" "$TMP/e1.zarr" --chunks 256,8 --allowed-mem 200KB --codec none \
    --work-dir "$W" -q
expect_fail 1 "is in use by another computation" rechunk "$A" "$TMP/e1.zarr" --chunks 256,8 --allowed-mem 200KB --codec none \
    --work-dir "file://$W" -q # the same folder
kill $HOLD
wait $HOLD 2>/dev/null
rm -rf "$TMP/e1.zarr"
expect_ok rechunk "$A" "$TMP/e1.zarr" --chunks 256,8 --allowed-mem 200KB --codec none --work-dir "$W" -q
# the folder was there before: it stays, emptied of what the run wrote (intermediates and their root group)
[ -d "$W" ] && [ -z "$(ls -A "$W")" ] || fail "the work dir after a rechunk: $(ls -A "$W" 2>&1)"
# two real evals racing on one work dir (a rechunk through intermediates):
# each either finishes right or is refused with the message, never mixed
for k in 1 2; do
    "$Z" rechunk "$A" "$TMP/rc$k.zarr" --chunks 256,8 --allowed-mem 200KB --codec none --work-dir "$W" -q 2>"$TMP/rcerr$k" &
    eval "RC$k=\$!"
done
for k in 1 2; do
    CHECKS=$((CHECKS + 1))
    eval "p=\$RC$k"
    if wait "$p"; then
        expect_ok get "$TMP/rc$k.zarr" -o "$TMP/rc$k.npy" && { cmp -s <("$PY" -c '
import numpy as np, sys; sys.stdout.buffer.write(np.load(sys.argv[1]).tobytes())' "$TMP/rc$k.npy") <("$PY" -c '
import numpy as np, sys; sys.stdout.buffer.write(np.load(sys.argv[1]).tobytes())' "$TMP/final.npy") ||
            fail "rechunk $k gave other values"; }
    else
        grep -q "is in use by another computation" "$TMP/rcerr$k" || fail "rechunk $k failed otherwise: $(cat "$TMP/rcerr$k")"
    fi
done
finish
