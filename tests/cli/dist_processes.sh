# tests/cli/dist_processes.sh — `--executor processes`: the same results as
# threads, retries, backups, crashed workers, kill -9 + --resume, --save-plan.
. "$(dirname "$0")/common.bash"
. "$(dirname "$0")/dist_common.bash"

DIST_RUN=""
DIST_OPTS="--executor processes --workers 3"
dist_inputs
dist_cases
grep -q '"executor": "processes"' "$TMP/rechunk.json" || fail "report lacks the executor"
[ "$(report_sum "$TMP/rechunk.json" tasks)" = 608 ] || fail "workers ran $(report_sum "$TMP/rechunk.json" tasks) of 608 tasks"

# Faults: an I/O error twice (retried, counted) and a crash (worker replaced), with
# backups off: a backup copy may finish a failed range before its retry starts, so
# only without backups is the number of retries fixed (2 + 1).
R="$TMP/r.zarr"
RC_ARGS=(rechunk "$R" --chunks 4,64,64 --allowed-mem 500KB --codec none --executor processes --workers 3 --json)
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="fail:op=0,task=3,times=2;crash:op=1,task=9" \
    "$Z" "${RC_ARGS[@]}" --no-backups -o "$TMP/f1" --work-dir "$TMP/wf1" >"$TMP/f1.json" 2>"$TMP/err"; then
    same_tree "$TMP/rechunk.t" "$TMP/f1" || fail "faults: output differs"
    [ "$(report_sum "$TMP/f1.json" retried)" -eq 3 ] || fail "faults: retried $(report_sum "$TMP/f1.json" retried), expected 3"
    [ "$(report_sum "$TMP/f1.json" failures)" -eq 3 ] || fail "faults: failures $(report_sum "$TMP/f1.json" failures), expected 3"
    [ "$(report_sum "$TMP/f1.json" backups)" -eq 0 ] || fail "faults: backups ran under --no-backups"
    grep -q '"revived": 1' "$TMP/f1.json" || fail "faults: the crashed worker was not replaced"
    [ ! -e "$TMP/wf1/zcube-done" ] || fail "faults: markers left after success"
else
    fail "faults: run failed: $(head -c 600 "$TMP/err")"
fi
# a straggler (3 s) is backed up on another worker
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="sleep:op=1,task=200,ms=3000" "$Z" "${RC_ARGS[@]}" -o "$TMP/s1" --work-dir "$TMP/ws1" \
    >"$TMP/s1.json" 2>"$TMP/err"; then
    same_tree "$TMP/rechunk.t" "$TMP/s1" || fail "straggler: output differs"
    [ "$(report_sum "$TMP/s1.json" backups)" -ge 1 ] || fail "straggler: no backup of the 3 s straggler"
else
    fail "straggler: run failed: $(head -c 600 "$TMP/err")"
fi
# a hung task (it never ends): abandoned after --task-timeout (2 s a task, a range
# of 2 tasks on 1 thread: 4 s), retried on another worker; its worker is replaced
CHECKS=$((CHECKS + 1))
t0=$SECONDS
if ZCUBE_FAULT="hang:op=2,task=5" timeout 120 "$Z" "${RC_ARGS[@]}" --no-backups --task-timeout 2 -o "$TMP/h1" \
    --work-dir "$TMP/wh1" >"$TMP/h1.json" 2>"$TMP/err"; then
    same_tree "$TMP/rechunk.t" "$TMP/h1" || fail "hung task: output differs"
    [ "$(report_sum "$TMP/h1.json" retried)" -ge 1 ] || fail "hung task: not retried"
    [ "$(report_sum "$TMP/h1.json" failures)" -ge 1 ] || fail "hung task: the timeout not counted as a failure"
    [ $((SECONDS - t0)) -lt 60 ] || fail "hung task: took $((SECONDS - t0)) s"
else
    fail "hung task: run failed (exit $?): $(head -c 600 "$TMP/err")"
fi
# a task that hangs every time: the run fails with its first timeout once --retries are spent
ZCUBE_FAULT="hang:op=2,task=5,times=0" expect_fail 1 "operation 2 tasks 4..5 timed out after 1 s (--task-timeout)" \
    "${RC_ARGS[@]}" --no-backups --task-timeout 0.5 --retries 1 -o "$TMP/h2"
expect_fail 2 "bad --task-timeout '0'" "${RC_ARGS[@]}" --task-timeout 0 -o "$TMP/h3"
expect_fail 2 "--task-timeout goes with --executor processes, mpi or slurm" rechunk "$R" --chunks 4,64,64 \
    --task-timeout 5 -o "$TMP/h3"
# --no-backups: the straggler is waited for
CHECKS=$((CHECKS + 1))
if ZCUBE_FAULT="sleep:op=1,task=200,ms=1500" "$Z" "${RC_ARGS[@]}" --no-backups -o "$TMP/f2" >"$TMP/f2.json" 2>"$TMP/err"; then
    [ "$(report_sum "$TMP/f2.json" backups)" = 0 ] || fail "--no-backups made backups"
else
    fail "--no-backups run failed: $(head -c 600 "$TMP/err")"
fi
# retries exhausted: the first error; a non-retryable error fails at once
ZCUBE_FAULT="fail:op=0,task=3,times=0" expect_fail 1 "injected fault: operation 0 task 3 failed" \
    "${RC_ARGS[@]}" --retries 1 -o "$TMP/f3"
ZCUBE_FAULT="bad:op=1,task=7,times=0" expect_fail 1 "bad input" "${RC_ARGS[@]}" -o "$TMP/f4" --work-dir "$TMP/wf4"
ZCUBE_FAULT="bad:op=1,task=7,times=0" "$Z" "${RC_ARGS[@]}" -o "$TMP/f4b" >/dev/null 2>&1
ZCUBE_FAULT="what:op=1" expect_fail 1 "ZCUBE_FAULT: unknown kind 'what'" "${RC_ARGS[@]}" -o "$TMP/f5"
expect_fail 2 "unknown --executor 'nope'" "${RC_ARGS[@]}" --executor nope -o "$TMP/f6"
expect_fail 2 "--resume needs the --work-dir" "${RC_ARGS[@]}" --resume -o "$TMP/f7"

# kill -9 of a random worker at a random moment: the run survives, output identical
for i in 1 2 3 4 5; do
    CHECKS=$((CHECKS + 1))
    rm -rf "$TMP/kw"
    "$Z" "${RC_ARGS[@]}" -o "$TMP/kw" --work-dir "$TMP/wkw" >"$TMP/kw.json" 2>"$TMP/err" &
    pid=$!
    sleep "0.$((RANDOM % 6 + 1))"
    victim=$(pgrep -P "$pid" | shuf -n 1)
    [ -n "$victim" ] && kill -9 "$victim"
    if wait "$pid"; then
        same_tree "$TMP/rechunk.t" "$TMP/kw" || fail "worker killed (round $i): output differs"
    else
        fail "worker killed (round $i): run failed: $(head -c 600 "$TMP/err")"
    fi
done

# kill -9 of the coordinator at a random moment, then --resume: identical output
for i in 1 2 3 4 5 6; do
    CHECKS=$((CHECKS + 1))
    rm -rf "$TMP/kc" "$TMP/wkc"
    "$Z" "${RC_ARGS[@]}" -o "$TMP/kc" --work-dir "$TMP/wkc" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 8 + 1))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if "$Z" "${RC_ARGS[@]}" -o "$TMP/kc" --work-dir "$TMP/wkc" --resume >"$TMP/kc.json" 2>"$TMP/err"; then
        same_tree "$TMP/rechunk.t" "$TMP/kc" || fail "coordinator killed (round $i): resumed output differs"
    else
        fail "coordinator killed (round $i): --resume failed: $(head -c 600 "$TMP/err")"
    fi
done
# resuming a finished-or-started work directory with another computation is refused
mkdir -p "$TMP/wx"
expect_ok rechunk "$R" --chunks 4,64,64 --allowed-mem 500KB --codec none --save-plan "$TMP/wx/p.json" -o "$TMP/x0" -q
"$Z" "${RC_ARGS[@]}" -o "$TMP/kx" --work-dir "$TMP/wkx" >/dev/null 2>&1 &
pid=$!; sleep 0.2; kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
if [ -e "$TMP/wkx/zcube-plan-summary.json" ]; then
    expect_fail 1 "holds the plan of another computation" rechunk "$R" --chunks 4,64,32 --allowed-mem 500KB --codec none \
        --executor processes --resume --work-dir "$TMP/wkx" -o "$TMP/kx"
fi

# --save-plan, then `zcube worker` slices by hand (any batch system): identical
rm -rf "$TMP/sp" "$TMP/wsp"
if expect_ok rechunk "$R" --chunks 4,64,64 --allowed-mem 500KB --codec none --save-plan "$TMP/sp.json" --work-dir "$TMP/wsp" -o "$TMP/sp"; then
    grep -q "saved the plan" "$TMP/out" || fail "--save-plan: no message"
    [ ! -e "$TMP/sp/c" ] || fail "--save-plan ran tasks"
    expect_ok worker "$TMP/sp.json" --op 0 --blocks 0:30
    expect_ok worker "$TMP/sp.json" --op 0 --blocks 30:
    expect_ok worker "$TMP/sp.json" --op 1
    expect_ok worker "$TMP/sp.json" --op 2
    same_tree "$TMP/rechunk.t" "$TMP/sp" || fail "--save-plan + zcube worker: output differs"
fi
finish
