#!/bin/bash
# tests/cli/faults.sh — every writing or reading command under injected
# store faults (ZC_FAULT_STORE, src/store/fs_fault.c): the Nth read, write,
# open, rename, fsync or folder sync of the run fails with EIO / ENOSPC, is
# interrupted (EINTR) or moves half the bytes (a short count). For each
# command, fault kind and N = 1, 2, ... (until the run no longer reaches the
# Nth call, or N_MAX):
#   - the command exits 0 or 1, never on a signal; a failure prints one line
#     "zcube: <cmd>: ..." naming what failed;
#   - transient faults (EINTR, short counts) never make it fail;
#   - a run that succeeds wrote exactly the reference result;
#   - no temporary file is left and no torn chunk is visible: the output, if
#     its metadata exists, reads back (missing chunks read as fill);
#   - a clean re-run (--resume for eval and rechunk) gives the reference.
# Read faults run under both read engines (ZC_STORE_IO=pread and uring).
# ZC_FAULT_LONG=1: N up to 200 (default 4). Usage: bash faults.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy
N_MAX=4
[ "${ZC_FAULT_LONG:-}" = 1 ] && N_MAX=200

"$PY" -c '
import numpy as np, sys
np.save(sys.argv[1], (np.arange(64 * 48, dtype="<f4").reshape(64, 48) % 251) - 7)' "$TMP/a.npy"
"$Z" create "$TMP/src" --shape 64,48 --chunks 16,16 --dtype float32 --codec zstd:1 >/dev/null &&
    "$Z" put "$TMP/src" "$TMP/a.npy" || { echo "FAIL: cannot build the source array"; exit 1; }

OUT=$TMP/result
WORK=$TMP/work
# Each command: prepare (no faults), run (faults on), rerun (no faults),
# result (canonical bytes of what it produced, on stdout).
prep_create() { :; }
run_create() { "$Z" create "$OUT" --shape 64,48 --chunks 16,16 --dtype float32 --codec zstd:1 "$@"; }
rerun_create() { "$Z" create "$OUT" --shape 64,48 --chunks 16,16 --dtype float32 --codec zstd:1 --overwrite; }
result_create() { "$Z" info --json "$OUT"; }

prep_put() { "$Z" create "$OUT" --shape 64,48 --chunks 16,16 --dtype float32 --codec zstd:1 >/dev/null; }
run_put() { "$Z" put "$OUT" "$TMP/a.npy" "$@"; }
rerun_put() { "$Z" put "$OUT" "$TMP/a.npy"; }
result_put() { "$Z" get "$OUT" -o - | md5sum; }

prep_copy() { :; }
run_copy() { "$Z" copy "$TMP/src" "$OUT" --chunks 32,8 --codec lz4 "$@"; }
rerun_copy() { "$Z" copy "$TMP/src" "$OUT" --chunks 32,8 --codec lz4 --overwrite; }
result_copy() { "$Z" get "$OUT" -o - | md5sum; }

prep_eval() { :; }
run_eval() { "$Z" eval 'sum(x * 2 + 1, axis=0) + x[3]' --in x="$TMP/src" -o "$OUT" --work-dir "$WORK" -q --threads 2 "$@"; }
rerun_eval() {
    local r=--resume
    [ -e "$OUT" ] || r=
    "$Z" eval 'sum(x * 2 + 1, axis=0) + x[3]' --in x="$TMP/src" -o "$OUT" --work-dir "$WORK" -q $r
}
result_eval() { "$Z" get "$OUT" -o - | md5sum; }

prep_rechunk() { :; }
run_rechunk() { "$Z" rechunk "$TMP/src" "$OUT" --chunks 64,4 --allowed-mem 300KB --work-dir "$WORK" -q "$@"; }
rerun_rechunk() {
    local r=--resume
    [ -e "$OUT" ] || r=
    "$Z" rechunk "$TMP/src" "$OUT" --chunks 64,4 --allowed-mem 300KB --work-dir "$WORK" -q $r
}
result_rechunk() { "$Z" get "$OUT" -o - | md5sum; }

prep_sample() { :; }
run_sample() { "$Z" sample "$TMP/src" --window 8,8 --batch 2 --batches 3 --seed 5 -o "$OUT" --threads 2 "$@"; }
rerun_sample() { rm -rf "$OUT"; "$Z" sample "$TMP/src" --window 8,8 --batch 2 --batches 3 --seed 5 -o "$OUT"; }
result_sample() { (cd "$OUT" && find . -type f | sort | xargs md5sum); }

# worker: the two operations of a plan saved by eval, each in its own process
# (faults count per process, so each is hit); it has no --fsync, ZC_FSYNC asks.
PLAN=$TMP/plan.json
prep_worker() {
    rm -f "$PLAN"
    "$Z" eval 'sum(x * 2 + 1, axis=0) + x[3]' --in x="$TMP/src" -o "$OUT" --work-dir "$WORK" --save-plan "$PLAN" >/dev/null
}
run_worker() {
    local op
    for op in 0 1; do
        ZC_FSYNC=1 "$Z" worker "$PLAN" --op $op --threads 2 || return
    done
}
rerun_worker() { run_worker; }
result_worker() { "$Z" get "$OUT" -o - | md5sum; }

COMMANDS=(create put copy eval rechunk sample worker)
[ -n "${ZC_FAULT_COMMANDS:-}" ] && read -ra COMMANDS <<<"$ZC_FAULT_COMMANDS" # a subset, by hand
# op:err pairs; fsync and dirsync are reached only with --fsync
FAULTS=(write:EIO write:ENOSPC write:EINTR write:short open:EIO open:EINTR rename:EIO rename:EINTR
        fsync:EIO fsync:EINTR dirsync:EIO read:EIO read:EINTR read:short write:ENOSPC:persistent)

declare -A REF OUTCOME # OUTCOME[cmd fault]: "<failed cleanly> <completed right>" counts
for c in "${COMMANDS[@]}"; do
    rm -rf "$OUT" "$WORK"
    prep_$c
    run_$c >/dev/null 2>"$TMP/err" || { echo "FAIL: $c without faults: $(cat "$TMP/err")"; exit 1; }
    REF[$c]=$(result_$c)
done

temp_files() { find "$OUT" "$WORK" -name '*.tmp.*' 2>/dev/null | head -3; }
RUNS=0
INJECTED=0
FAILED_CLEANLY=0
for c in "${COMMANDS[@]}"; do
    for f in "${FAULTS[@]}"; do
        IFS=: read -r op err mode <<<"$f"
        mode=${mode:-once}
        engines=(auto)
        [ "$op" = read ] && engines=(pread uring)
        for engine in "${engines[@]}"; do
        for ((n = 1; n <= N_MAX; n++)); do
            rm -rf "$OUT" "$WORK" "$TMP/log"
            prep_$c
            RUNS=$((RUNS + 1))
            CHECKS=$((CHECKS + 1))
            ZC_STORE_IO=$engine ZC_FAULT_STORE="op=$op,nth=$n,err=$err,mode=$mode" ZC_FAULT_LOG="$TMP/log" \
                run_$c --fsync >"$TMP/stdout" 2>"$TMP/err"
            rc=$?
            what="$c with the ${n}th $op failing ($err, $mode, engine $engine)"
            [ -s "$TMP/log" ] || break # the run made fewer such calls: done with this fault
            INJECTED=$((INJECTED + 1))
            read -r nf nc <<<"${OUTCOME[$c $f]:-0 0}"
            [ $rc -eq 0 ] && nc=$((nc + 1)) || nf=$((nf + 1))
            OUTCOME[$c $f]="$nf $nc"
            if [ $rc -ge 128 ]; then
                fail "$what: died with exit $rc: $(head -c 300 "$TMP/err")"
            elif [ $rc -ne 0 ]; then
                FAILED_CLEANLY=$((FAILED_CLEANLY + 1))
                [ "$err" = EINTR ] || [ "$err" = short ] && fail "$what: a transient fault made it fail: $(cat "$TMP/err")"
                [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "^zcube: $c: " "$TMP/err" ||
                    fail "$what: exit $rc without one 'zcube: $c:' line: $(head -c 300 "$TMP/err")"
            elif [ "$(result_$c 2>&1)" != "${REF[$c]}" ]; then
                fail "$what: succeeded with a wrong result"
            fi
            t=$(temp_files)
            [ -z "$t" ] || fail "$what: temporary files left: $t"
            if [ $rc -ne 0 ] && [ "$c" != sample ] && [ -e "$OUT/zarr.json" ]; then
                "$Z" get "$OUT" -o "$TMP/partial.npy" 2>"$TMP/err2" || fail "$what: the output left behind does not read: $(cat "$TMP/err2")"
            fi
            if [ $rc -ne 0 ]; then
                rerun_$c >/dev/null 2>"$TMP/err2" || { fail "$what: the clean re-run failed: $(cat "$TMP/err2")"; continue; }
                [ "$(result_$c 2>&1)" = "${REF[$c]}" ] || fail "$what: the clean re-run gave a wrong result"
            fi
        done
        done
    done
done
for k in "${!OUTCOME[@]}"; do
    read -r nf nc <<<"${OUTCOME[$k]}"
    echo "  $k: $nf failed cleanly, $nc completed right"
done | sort
echo "fault runs: $RUNS, faults injected: $INJECTED, clean failures: $FAILED_CLEANLY"
[ "$INJECTED" -gt 50 ] || fail "only $INJECTED faults were injected: is ZC_FAULT_STORE working?"
finish
