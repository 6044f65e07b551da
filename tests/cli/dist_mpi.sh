# tests/cli/dist_mpi.sh — `mpirun -np N zcube ... --executor mpi`: the same results
# as threads, faults retried and backed up on other ranks, a killed rank ends the
# run promptly naming it, --resume finishes it bit-identically.
. "$(dirname "$0")/common.bash"
. "$(dirname "$0")/dist_common.bash"

command -v mpirun >/dev/null 2>&1 || zc_skip "mpirun (Debian: openmpi-bin)"
if "$Z" eval 'sum(ones((4,)))' -o "$TMP/probe" --executor mpi -q 2>&1 | grep -q "built without MPI"; then
    zc_skip "a zcube built with MPI (libopenmpi-dev at build time)"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI's own allocations are not ours to check under the leak sanitizer
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
MPI="mpirun -np"

DIST_RUN="$MPI 3"
DIST_OPTS="--executor mpi"
dist_inputs
dist_cases
DIST_RUN="$MPI 4"
dist_same rechunk4 rechunk "$TMP/r.zarr" --chunks 4,64,64 --allowed-mem 1MB --codec none
same_tree "$TMP/rechunk.t" "$TMP/rechunk4.d" || fail "4 ranks: output differs"
grep -q '"executor": "mpi"' "$TMP/rechunk4.json" || fail "report lacks the executor"
[ "$(report_sum "$TMP/rechunk4.json" tasks)" = 608 ] || fail "ranks ran $(report_sum "$TMP/rechunk4.json" tasks) of 608 tasks"

R="$TMP/r.zarr"
RC_ARGS=(rechunk "$R" --chunks 4,64,64 --allowed-mem 1MB --codec none --executor mpi --json)
# faults: I/O errors retried on another rank, a straggler backed up
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="fail:op=0,task=3,times=2;sleep:op=1,task=200,ms=3000" \
    $MPI 3 "$Z" "${RC_ARGS[@]}" -o "$TMP/f1" --work-dir "$TMP/wf1" >"$TMP/f1.json" 2>"$TMP/err"; then
    same_tree "$TMP/rechunk.t" "$TMP/f1" || fail "faults: output differs"
    [ "$(report_sum "$TMP/f1.json" retried)" -ge 2 ] || fail "faults: retried $(report_sum "$TMP/f1.json" retried), expected >= 2"
    [ "$(report_sum "$TMP/f1.json" backups)" -ge 1 ] || fail "faults: no backup of the 3 s straggler"
else
    fail "faults: run failed: $(head -c 600 "$TMP/err")"
fi
# a hung task: the rank abandons it after --task-timeout and takes no more ranges; the
# range is retried on another rank; a task hanging every time fails the run, every rank ending
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="hang:op=2,task=5" timeout 120 $MPI 3 "$Z" "${RC_ARGS[@]}" --no-backups --task-timeout 2 -o "$TMP/h1" \
    --work-dir "$TMP/wh1" >"$TMP/h1.json" 2>"$TMP/err"; then
    same_tree "$TMP/rechunk.t" "$TMP/h1" || fail "hung task: output differs"
    [ "$(report_sum "$TMP/h1.json" retried)" -ge 1 ] || fail "hung task: not retried"
    [ "$(report_sum "$TMP/h1.json" failures)" -ge 1 ] || fail "hung task: the timeout not counted"
else
    fail "hung task: run failed (exit $?): $(head -c 600 "$TMP/err")"
fi
CHECKS=$((CHECKS + 1))
ZCUBE_FAULT="hang:op=2,task=5,times=0" timeout 120 $MPI 3 "$Z" "${RC_ARGS[@]}" --no-backups --task-timeout 0.5 \
    --retries 1 -o "$TMP/h2" >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "tasks 4..5 timed out after 1 s" "$TMP/err"; } ||
    fail "a task hanging every time under MPI: exit $rc: $(head -c 600 "$TMP/err")"
# a non-retryable error: every rank stops, rank 0 says which task
CHECKS=$((CHECKS + 1))
ZCUBE_FAULT="bad:op=1,task=7,times=0" timeout 60 $MPI 3 "$Z" "${RC_ARGS[@]}" -o "$TMP/f2" >/dev/null 2>"$TMP/err"
rc=$?
{ [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "bad input" "$TMP/err"; } || fail "bad input under MPI: exit $rc: $(head -c 600 "$TMP/err")"

# a rank killed (a crash, and kill -9 from outside at a random moment): mpirun ends
# promptly naming the failed rank; --resume completes with the identical output
crash_and_resume() {
    local name=$1 np=$2
    shift 2
    CHECKS=$((CHECKS + 1))
    local t0=$SECONDS
    timeout 120 "$@" >/dev/null 2>"$TMP/err"
    local rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        fail "$name: exit $rc (expected a prompt failure)"
        return
    fi
    grep -qiE "rank|process name|exited on signal|killed" "$TMP/err" || fail "$name: the failure does not name the rank: $(head -c 600 "$TMP/err")"
    if ZCUBE_FAULT= $MPI "$np" "$Z" "${RC_ARGS[@]}" -o "$TMP/$name" --work-dir "$TMP/w$name" --resume >"$TMP/$name.json" 2>"$TMP/err"; then
        same_tree "$TMP/rechunk.t" "$TMP/$name" || fail "$name: resumed output differs"
    else
        fail "$name: --resume failed: $(head -c 600 "$TMP/err")"
    fi
    [ $((SECONDS - t0)) -lt 100 ] || fail "$name: took $((SECONDS - t0)) s"
}
crash_and_resume crash1 3 env ZCUBE_FAULT="crash:op=1,task=100" $MPI 3 "$Z" "${RC_ARGS[@]}" -o "$TMP/crash1" --work-dir "$TMP/wcrash1"

kill_random_rank() {
    local out=$1 np=$2
    $MPI "$np" "$Z" "${RC_ARGS[@]}" -o "$TMP/$out" --work-dir "$TMP/w$out" >/dev/null 2>"$TMP/err.$out" &
    local pid=$!
    # Kill only once every rank is past MPI start-up: a task's completion marker
    # means the plan's broadcast (collective) went through. Open MPI 4.1 can hang
    # when a rank dies inside MPI_Init, a window zcube does not control.
    local k
    for k in $(seq 100); do
        compgen -G "$TMP/w$out/zcube-done/op*/*" >/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    sleep "0.$((RANDOM % 5))"
    # the zcube processes of this mpirun (ranks), one at random
    local victim
    victim=$(pgrep -f -- "$TMP/w$out" | grep -v "^$pid\$" | while read -r p; do
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = zcube ] && echo "$p"; done | shuf -n 1)
    [ -n "$victim" ] && kill -9 "$victim"
    # never hang the suite: mpirun must end within 90 s of the kill
    for k in $(seq 900); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid"; pkill -9 -P "$pid" 2>/dev/null
        wait "$pid"; echo "mpirun still running 90 s after the kill" >>"$TMP/err.$out"; return 99
    fi
    wait "$pid"
}
for i in 1 2 3 4 5 6 7 8 9 10; do
    CHECKS=$((CHECKS + 1))
    rm -rf "$TMP/k$i" "$TMP/wk$i"
    t0=$SECONDS
    kill_random_rank "k$i" 3
    rc=$?
    [ $((SECONDS - t0)) -lt 60 ] || fail "kill round $i: mpirun took $((SECONDS - t0)) s to end"
    if [ $rc -ne 0 ] && ! grep -qiE "rank|process name|signal" "$TMP/err.k$i"; then
        fail "kill round $i: the failure does not name the rank: $(head -c 400 "$TMP/err.k$i")"
    fi
    if $MPI 3 "$Z" "${RC_ARGS[@]}" -o "$TMP/k$i" --work-dir "$TMP/wk$i" --resume >/dev/null 2>"$TMP/err"; then
        same_tree "$TMP/rechunk.t" "$TMP/k$i" || fail "kill round $i: resumed output differs"
    else
        fail "kill round $i: --resume failed: $(head -c 600 "$TMP/err")"
    fi
done
finish
