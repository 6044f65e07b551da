# bench/common.bash — shared by the *_bench.sh scripts that compare zcube with a peer
# (compute_bench.sh, linalg_bench.sh). Sourced after the script has set reps, nice, py
# and a warm() function (cats the inputs so every run starts with them in page cache).

# run one peer $reps times: $1 = output JSON file, rest = the command. Keeps the
# fastest run's JSON, with time -v's peak RSS (the largest over the runs) added and
# every run's seconds. Calls warm() before each run unless warm_before=0.
run_peer() {
    local out=$1
    shift
    rm -f "$out".run*
    for ((r = 0; r < reps; r++)); do
        [[ ${warm_before:-1} == 1 ]] && warm
        nice -n "$nice" /usr/bin/time -v -o "$out.run$r.time" "$@" > "$out.run$r"
    done
    $py - "$out" "$reps" << 'EOF'
import json, re, sys
p, reps = sys.argv[1], int(sys.argv[2])
runs = []
for r in range(reps):
    d = json.loads(open(f"{p}.run{r}").read())
    t = open(f"{p}.run{r}.time").read()
    d["time_v_max_rss_mb"] = round(int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024, 1)
    runs.append(d)
best = min(runs, key=lambda d: d["seconds"])
best["time_v_max_rss_mb"] = max(d["time_v_max_rss_mb"] for d in runs)
best["runs_seconds"] = [d["seconds"] for d in runs]
open(p, "w").write(json.dumps(best))
EOF
}
