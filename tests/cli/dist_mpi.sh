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
dist_same rechunk4 rechunk "$TMP/r.zarr" --chunks 4,64,64 --allowed-mem 500KB --codec none
same_tree "$TMP/rechunk.t" "$TMP/rechunk4.d" || fail "4 ranks: output differs"
grep -q '"executor": "mpi"' "$TMP/rechunk4.json" || fail "report lacks the executor"
[ "$(report_sum "$TMP/rechunk4.json" tasks)" = 608 ] || fail "ranks ran $(report_sum "$TMP/rechunk4.json" tasks) of 608 tasks"

R="$TMP/r.zarr"
RC_ARGS=(rechunk "$R" --chunks 4,64,64 --allowed-mem 500KB --codec none --executor mpi --json)
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

# Ranks take PMIx's job data by message (gds hash), not from its shared-memory
# store, with which a rank killed inside MPI_Init can leave mpirun deadlocked
# (exec_mpi.c); a user's own PMIX_MCA_gds still wins.
CHECKS=$((CHECKS + 1))
for gds in "" ds21,hash; do
    want=${gds%%,*}
    $MPI 1 env ${gds:+PMIX_MCA_gds=$gds} PMIX_MCA_gds_base_verbose=10 \
        "$Z" eval 'sum(ones((4,)))' -o "$TMP/gds$gds" --executor mpi -q >/dev/null 2>"$TMP/err"
    grep -q "GDS STORE JOB INFO WITH ${want:-hash}" "$TMP/err" ||
        fail "PMIx job store (PMIX_MCA_gds=$gds): $(grep -m1 'GDS STORE JOB INFO' "$TMP/err")"
done

# The ranks of mpirun $1 (its zcube children), "PID RANK" lines.
ranks_of() {
    local p
    for p in $(pgrep -P "$1"); do
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = zcube ] || continue
        echo "$p $({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')"
    done
}

# Run the rechunk on np ranks and kill -9 one rank (`which`: a rank number or
# "any") at a random moment of a phase: "init" (0-150 ms after the ranks start:
# Open MPI's start-up, MPI_Init, rank 0 planning), "plan" (0-9 ms after rank 0
# saved the plan: the plan's broadcast) or "work" (0-0.4 s after the first task
# range finished). mpirun must end within 60 s; the return is mpirun's status.
kill_rank() {
    local out=$1 np=$2 phase=$3 which=$4
    $MPI "$np" "$Z" "${RC_ARGS[@]}" -o "$TMP/$out" --work-dir "$TMP/w$out" >/dev/null 2>"$TMP/err.$out" &
    local pid=$! k
    for k in $(seq 1000); do
        case $phase in
        init) [ -n "$(ranks_of "$pid")" ] && break ;;
        plan) [ -e "$TMP/w$out/zcube-plan.json" ] && break ;;
        work) compgen -G "$TMP/w$out/zcube-done/op*/*" >/dev/null && break ;;
        esac
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    case $phase in
    init) sleep "0.$(printf %03d $((RANDOM % 150)))" ;;
    plan) sleep "0.00$((RANDOM % 10))" ;;
    work) sleep "0.$((RANDOM % 5))" ;;
    esac
    local victim
    if [ "$which" = any ]; then victim=$(ranks_of "$pid" | shuf -n 1 | cut -d' ' -f1)
    else victim=$(ranks_of "$pid" | awk -v r="$which" '$2 == r {print $1}'); fi
    [ -n "$victim" ] && kill -9 "$victim"
    echo "$phase: killed ${victim:-nothing} (rank $which)" >>"$TMP/kills"
    for k in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then # a hang: end exactly this mpirun and its ranks
        local kids
        kids=$(pgrep -P "$pid")
        kill -9 "$pid" $kids
        wait "$pid"
        echo "mpirun still running 60 s after the kill" >>"$TMP/err.$out"
        return 99
    fi
    wait "$pid"
}

# 18 randomized kill points: 6 in start-up, 4 in the plan's broadcast, 8 while
# working; the victim is rank 0 in a third of them. Each: a prompt end naming the
# rank, then --resume on a fresh mpirun gives the identical output.
i=0 landed=0
for spec in init:any init:0 init:any init:2 init:0 init:any plan:any plan:0 plan:1 plan:any \
    work:any work:0 work:any work:any work:0 work:2 work:any work:any; do
    i=$((i + 1))
    CHECKS=$((CHECKS + 1))
    rm -rf "$TMP/k$i" "$TMP/wk$i"
    t0=$SECONDS
    kill_rank "k$i" 3 "${spec%%:*}" "${spec#*:}"
    rc=$?
    [ $rc -ne 0 ] && landed=$((landed + 1))
    [ $rc -ne 99 ] && [ $((SECONDS - t0)) -lt 30 ] || fail "kill $i ($spec): mpirun took $((SECONDS - t0)) s to end: $(tail -c 300 "$TMP/err.k$i")"
    if [ $rc -ne 0 ] && ! grep -qE "rank [0-9]+ with PID|Process name|exited on signal" "$TMP/err.k$i"; then
        fail "kill $i ($spec): the failure does not name the rank: $(head -c 400 "$TMP/err.k$i")"
    fi
    if $MPI 3 "$Z" "${RC_ARGS[@]}" -o "$TMP/k$i" --work-dir "$TMP/wk$i" --resume >/dev/null 2>"$TMP/err"; then
        same_tree "$TMP/rechunk.t" "$TMP/k$i" || fail "kill $i ($spec): resumed output differs"
    else
        fail "kill $i ($spec): --resume failed: $(head -c 600 "$TMP/err")"
    fi
done
[ -n "${ZC_CLI_VERBOSE:-}" ] && cat "$TMP/kills"
# a kill after the run ended proves nothing: most must land while it runs
[ $landed -ge 12 ] || fail "only $landed of 18 kills ended a running job: $(cat "$TMP/kills")"
finish
