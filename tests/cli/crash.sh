#!/bin/bash
# tests/cli/crash.sh — kill -9 at random points of create, put, copy, eval and
# rechunk, then look and re-run:
#   - what a reader sees right after the kill reads without error, and for put
#     (version 2 written over version 1) every chunk is wholly version 1 or
#     wholly version 2, never torn or mixed;
#   - the re-run (--resume for eval and rechunk, --overwrite for copy and
#     create, put again) gives a result bit-identical to an uninterrupted run.
# Kill points are uniform over 0.9x the command's uninterrupted run time (on
# a loaded machine some still land after the end; they are counted apart).
# ZC_CRASH_POINTS=N kill points per command (default 6: 30 in all);
# ZC_CRASH_SEED=S the random seed (default: the PID, printed).
# Usage: bash crash.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy
POINTS=${ZC_CRASH_POINTS:-6}
SEED=${ZC_CRASH_SEED:-$$}
RANDOM=$SEED
echo "seed $SEED, $POINTS kill points per command"

"$PY" -c '
import numpy as np, sys
r = np.random.default_rng(3)
np.save(sys.argv[1] + "/v1.npy", r.standard_normal((384, 512)).astype("<f4"))
np.save(sys.argv[1] + "/v2.npy", r.standard_normal((384, 512)).astype("<f4"))' "$TMP"
SRC=$TMP/src
"$Z" create "$SRC" --shape 384,512 --chunks 16,32 --dtype float32 --codec zstd:3 >/dev/null &&
    "$Z" put "$SRC" "$TMP/v1.npy" || { echo "FAIL: cannot build the source"; exit 1; }

OUT=$TMP/result
WORK=$TMP/work
T=(--threads 2)
prep_create() { :; }
run_create() { "$Z" create "$OUT" --shape 384,512 --chunks 16,32 --dtype float32 --attrs '{"a": 1}'; }
rerun_create() { "$Z" create "$OUT" --shape 384,512 --chunks 16,32 --dtype float32 --attrs '{"a": 1}' --overwrite; }
result_create() { "$Z" info --json "$OUT" | md5sum; }

prep_put() { cp -r "$SRC" "$OUT"; }  # version 1 there, version 2 written over it
run_put() { "$Z" put "$OUT" "$TMP/v2.npy" "${T[@]}"; }
rerun_put() { run_put; }
result_put() { "$Z" get "$OUT" -o - | md5sum; }

prep_copy() { :; }
run_copy() { "$Z" copy "$SRC" "$OUT" --chunks 32,16 --codec lz4 "${T[@]}"; }
rerun_copy() { "$Z" copy "$SRC" "$OUT" --chunks 32,16 --codec lz4 --overwrite "${T[@]}"; }
result_copy() { "$Z" get "$OUT" -o - | md5sum; }

EXPR='flip(x, axis=1) * 2 + sum(x, axis=1, keepdims=True) - mean(x.T[:, :384], axis=1)'
prep_eval() { :; }
run_eval() { "$Z" eval "$EXPR" --in x="$SRC" -o "$OUT" --work-dir "$WORK" --allowed-mem 2MB -q "${T[@]}" "$@"; }
rerun_eval() { if [ -e "$OUT" ]; then run_eval --resume; else run_eval; fi; }
result_eval() { "$Z" get "$OUT" -o - | md5sum; }

prep_rechunk() { :; }
run_rechunk() { "$Z" rechunk "$SRC" "$OUT" --chunks 384,4 --allowed-mem 600KB --work-dir "$WORK" -q "${T[@]}" "$@"; }
rerun_rechunk() { if [ -e "$OUT" ]; then run_rechunk --resume; else run_rechunk; fi; }
result_rechunk() { "$Z" get "$OUT" -o - | md5sum; }

# chunk-wise: each 16x32 chunk of the array read is wholly v1 or wholly v2
cat >"$TMP/chunks.py" <<'EOF'
import numpy as np, sys
a, v1, v2 = (np.load(f) for f in sys.argv[1:4])
n1 = n2 = 0
for i in range(0, 384, 16):
    for j in range(0, 512, 32):
        c = a[i:i + 16, j:j + 32]
        if np.array_equal(c, v1[i:i + 16, j:j + 32]): n1 += 1
        elif np.array_equal(c, v2[i:i + 16, j:j + 32]): n2 += 1
        else: sys.exit(f"chunk at {i},{j} is neither the old nor the new value")
print(n1, n2)
EOF

ms() { date +%s%N | cut -c1-13; }
KILLED=0
EARLY=0
for c in create put copy eval rechunk; do
    rm -rf "$OUT" "$WORK"
    prep_$c
    t0=$(ms)
    run_$c >/dev/null 2>"$TMP/err" || { echo "FAIL: $c uninterrupted: $(cat "$TMP/err")"; exit 1; }
    dur=$(($(ms) - t0))
    REF=$(result_$c)
    mixed=""
    for ((k = 0; k < POINTS; k++)); do
        rm -rf "$OUT" "$WORK"
        prep_$c
        delay=$((RANDOM * (dur * 9 / 10 + 1) / 32768))
        run_$c >/dev/null 2>&1 &
        pid=$!
        sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
        # $pid is the subshell running the function; zcube is its child
        kids=$(pgrep -P $pid)
        if [ -n "$kids" ] && kill -9 $kids 2>/dev/null; then KILLED=$((KILLED + 1)); else EARLY=$((EARLY + 1)); fi
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        for kid in $kids; do # gone for good (not still finishing a write on another core)
            while kill -0 "$kid" 2>/dev/null; do sleep 0.01; done
        done
        what="$c killed at ${delay} ms of ${dur}"
        CHECKS=$((CHECKS + 1))
        if [ "$c" = put ]; then
            if "$Z" get "$OUT" -o "$TMP/seen.npy" 2>"$TMP/err"; then
                mixed+=" $("$PY" "$TMP/chunks.py" "$TMP/seen.npy" "$TMP/v1.npy" "$TMP/v2.npy" 2>&1 | tr ' ' /)" ||
                    fail "$what: a reader sees a torn chunk: $mixed"
            else
                fail "$what: the array does not read after the kill: $(cat "$TMP/err")"
            fi
        elif [ "$c" != create ] && [ -e "$OUT/zarr.json" ]; then
            "$Z" get "$OUT" -o "$TMP/seen.npy" 2>"$TMP/err" || fail "$what: the output does not read after the kill: $(cat "$TMP/err")"
        fi
        CHECKS=$((CHECKS + 1))
        if ! rerun_$c >/dev/null 2>"$TMP/err"; then
            fail "$what: the re-run failed: $(cat "$TMP/err")"
        elif [ "$(result_$c)" != "$REF" ]; then
            fail "$what: the re-run differs from an uninterrupted run"
        fi
    done
    [ -n "$mixed" ] && echo "put: chunks old/new seen after each kill:$mixed"
done
echo "kill points: $KILLED while running, $EARLY after the end"
finish
