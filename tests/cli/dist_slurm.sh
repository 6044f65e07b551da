# tests/cli/dist_slurm.sh — `--executor slurm` on a real one-node Slurm started by
# scripts/local-slurm.sh: the same results as threads, --detach + `zcube status`,
# failed and killed array elements resubmitted, a killed submitter + --resume.
. "$(dirname "$0")/common.bash"
. "$(dirname "$0")/dist_common.bash"

[ "$(id -u)" = 0 ] || zc_skip "root (slurmd)"
command -v sbatch >/dev/null 2>&1 && [ -x /usr/sbin/slurmctld ] || zc_skip "Slurm (Debian: slurm-wlm)"
[ -x /usr/sbin/munged ] || zc_skip "munge"
SCRIPT=$(realpath "$(dirname "$0")/../../scripts/local-slurm.sh")
unset ZCUBE_SLURM_DIR # start makes its own folder (munged must reach it: not under the private $TMP)
if ! env_line=$(bash "$SCRIPT" start 2>"$TMP/slurm.err"); then
    echo "FAIL: local-slurm.sh start: $(cat "$TMP/slurm.err")"
    exit 1
fi
eval "$env_line"
trap 'bash "$SCRIPT" stop; rm -rf "$TMP"' EXIT

DIST_RUN=""
DIST_OPTS="--executor slurm --sbatch-args -O --tasks-per-job 64"
dist_inputs
dist_same qm_uv eval 'mean(u*v, axis=0)' --in u="$TMP/u.zarr" --in v="$TMP/v.zarr"
dist_same rechunk rechunk "$TMP/r.zarr" --chunks 4,64,64 --allowed-mem 500KB --codec none
dist_same rfft eval 'rfft(u, axis=0)' --in u="$TMP/u.zarr" --allowed-mem 4MB
dist_same tsqr eval 'svd(a)[1]' --in a="$TMP/a.zarr"
grep -q '"executor": "slurm"' "$TMP/rechunk.json" || fail "report lacks the executor"

R="$TMP/r.zarr"
RC_ARGS=(rechunk "$R" --chunks 4,64,64 --allowed-mem 500KB --codec none --executor slurm --sbatch-args -O --tasks-per-job 64)

# --detach, then zcube status until complete
if expect_ok "${RC_ARGS[@]}" -o "$TMP/d1" --work-dir "$TMP/wd1" --detach; then
    grep -q "submitted Slurm jobs" "$TMP/out" || fail "--detach: no job ids: $(cat "$TMP/out")"
    for _ in $(seq 120); do
        "$Z" status "$TMP/wd1" >"$TMP/st" 2>&1 || break
        grep -q ": complete" "$TMP/st" && break
        sleep 0.5
    done
    CHECKS=$((CHECKS + 1))
    grep -q "608 of 608 tasks done" "$TMP/st" || fail "zcube status after the run: $(cat "$TMP/st")"
    same_tree "$TMP/rechunk.t" "$TMP/d1" || fail "--detach: output differs"
fi
expect_fail 1 "zcube-plan-summary.json" status "$TMP/nowhere"

# a failed array element: the chain is submitted again for the missing tasks
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="fail:op=1,task=100,times=1" "$Z" "${RC_ARGS[@]}" -o "$TMP/f1" --work-dir "$TMP/wf1" --json \
    >"$TMP/f1.json" 2>"$TMP/err"; then
    same_tree "$TMP/rechunk.t" "$TMP/f1" || fail "failed element: output differs"
    grep -q '"submissions": 2' "$TMP/f1.json" || fail "failed element: not resubmitted once: $(grep submissions "$TMP/f1.json")"
else
    fail "failed element: run failed: $(head -c 600 "$TMP/err")"
fi
# --retries 0: the run fails naming the jobs and the logs
ZCUBE_FAULT="fail:op=1,task=100,times=1" expect_fail 1 "ended without finishing" "${RC_ARGS[@]}" --retries 0 \
    -o "$TMP/f2" --work-dir "$TMP/wf2"

# a hung task: its element abandons it after --task-timeout and fails; the chain is resubmitted
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="hang:op=0,task=2,times=1" timeout 180 "$Z" eval 'mean(u*v, axis=0)' --in u="$TMP/u.zarr" \
    --in v="$TMP/v.zarr" --executor slurm --sbatch-args -O --tasks-per-job 1 --task-timeout 2 -o "$TMP/h1" \
    --work-dir "$TMP/wh1" --json >"$TMP/h1.json" 2>"$TMP/err"; then
    same_tree "$TMP/qm_uv.t" "$TMP/h1" || fail "hung task: output differs"
    grep -q '"submissions": 2' "$TMP/h1.json" || fail "hung task: not resubmitted once: $(grep submissions "$TMP/h1.json")"
else
    fail "hung task: run failed: $(head -c 600 "$TMP/err")"
fi

# kill -9 of a running array element at a random moment: resubmitted, identical
for i in 1 2 3; do
    CHECKS=$((CHECKS + 1))
    "$Z" "${RC_ARGS[@]}" -o "$TMP/k$i" --work-dir "$TMP/wk$i" >/dev/null 2>"$TMP/err.k$i" &
    pid=$!
    victim=""
    for _ in $(seq 100); do
        victim=$(pgrep -f -- "$TMP/wk$i/zcube-plan.json --job-op" | shuf -n 1)
        [ -n "$victim" ] && break
        sleep 0.05
    done
    sleep "0.0$((RANDOM % 9 + 1))"
    [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
    if wait "$pid"; then
        same_tree "$TMP/rechunk.t" "$TMP/k$i" || fail "element killed (round $i): output differs"
    else
        fail "element killed (round $i): run failed: $(head -c 600 "$TMP/err.k$i")"
    fi
done

# MPI inside Slurm: srun --mpi=pmix starts the ranks (no mpirun); the same results
if ! srun --mpi=list 2>&1 | grep -qw pmix; then
    fail "srun has no PMIx plugin (Debian: slurm-wlm with libpmix2, i.e. Open MPI installed)"
elif "$Z" eval 'sum(ones((4,)))' -o "$TMP/probe" --executor mpi -q 2>&1 | grep -q "built without MPI"; then
    [ "${ZC_REQUIRE_ALL:-}" = 1 ] && fail "srun + MPI: this zcube was built without MPI"
else
    # Open MPI's and PMIx's own allocations are not ours to check under the leak sanitizer
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    DIST_RUN="srun -O -n 3 --mpi=pmix"
    DIST_OPTS="--executor mpi"
    dist_same srun_qm eval 'mean(u*v, axis=0)' --in u="$TMP/u.zarr" --in v="$TMP/v.zarr"
    same_tree "$TMP/qm_uv.t" "$TMP/srun_qm.d" || fail "srun: QM differs from threads"
    dist_same srun_rechunk rechunk "$TMP/r.zarr" --chunks 4,64,64 --allowed-mem 500KB --codec none
    [ "$(report_sum "$TMP/srun_rechunk.json" tasks)" = 608 ] || fail "srun: ranks ran $(report_sum "$TMP/srun_rechunk.json" tasks) of 608 tasks"
    CHECKS=$((CHECKS + 1))
    [ "$(grep -c '"worker":' "$TMP/srun_rechunk.json")" = 3 ] || fail "srun: not 3 ranks in one job: $(grep -c '"worker":' "$TMP/srun_rechunk.json") workers"
    # kill -9 of a random rank (rank 0 too) at a random moment: srun ends promptly
    # naming the task (= rank); --resume under srun gives the identical output
    M_ARGS=(rechunk "$TMP/r.zarr" --chunks 4,64,64 --allowed-mem 500KB --codec none --executor mpi -q)
    for i in 1 2 3 4; do
        CHECKS=$((CHECKS + 1))
        rm -rf "$TMP/m$i" "$TMP/wm$i"
        srun -O -n 3 --mpi=pmix "$Z" "${M_ARGS[@]}" -o "$TMP/m$i" --work-dir "$TMP/wm$i" 2>"$TMP/err.m$i" &
        pid=$!
        for _ in $(seq 500); do
            compgen -G "$TMP/wm$i/zcube-done/op*/*" >/dev/null && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.01
        done
        sleep "0.$((RANDOM % 4))"
        victim=$(pgrep -f -- "--work-dir $TMP/wm$i" | while read -r p; do
            [ "$(cat /proc/"$p"/comm 2>/dev/null)" = zcube ] && echo "$p"; done | shuf -n 1)
        [ -n "$victim" ] && kill -9 "$victim"
        t0=$SECONDS
        for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            fail "srun kill $i: srun still running 30 s after the kill"
            scancel "$(squeue -h -o %i | tr '\n' ',')" 2>/dev/null
        fi
        wait "$pid"
        rc=$?
        if [ -n "$victim" ] && [ $rc -ne 0 ] && ! grep -qE "task [0-9]+: Killed" "$TMP/err.m$i"; then
            fail "srun kill $i: the failure does not name the task: $(head -c 400 "$TMP/err.m$i")"
        fi
        if srun -O -n 3 --mpi=pmix "$Z" "${M_ARGS[@]}" -o "$TMP/m$i" --work-dir "$TMP/wm$i" --resume 2>"$TMP/err"; then
            same_tree "$TMP/rechunk.t" "$TMP/m$i" || fail "srun kill $i: resumed output differs"
        else
            fail "srun kill $i: --resume failed: $(head -c 600 "$TMP/err")"
        fi
    done
fi

# kill -9 of the submitter; once its jobs are gone, --resume finishes the run
for i in 1 2; do
    CHECKS=$((CHECKS + 1))
    "$Z" "${RC_ARGS[@]}" -o "$TMP/s$i" --work-dir "$TMP/ws$i" >/dev/null 2>&1 &
    pid=$!
    sleep "$((RANDOM % 2)).$((RANDOM % 9 + 1))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    for _ in $(seq 200); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    if "$Z" "${RC_ARGS[@]}" -o "$TMP/s$i" --work-dir "$TMP/ws$i" --resume >/dev/null 2>"$TMP/err"; then
        same_tree "$TMP/rechunk.t" "$TMP/s$i" || fail "submitter killed (round $i): resumed output differs"
    else
        fail "submitter killed (round $i): --resume failed: $(head -c 600 "$TMP/err")"
    fi
done
finish
