"""bench/peer_run.py — one peer of a Python benchmark (sort_bench.py,
unique_bench.py) run as its own process, `python3 SCRIPT peer DIR ARGS...`,
under /usr/bin/time -v: its last stdout line (JSON) with its peak RSS added,
the fastest of `reps` runs."""
import json
import re
import subprocess

PY = "/usr/bin/python3"


def run_peer(script, d, reps, *args):
    best = None
    for _ in range(reps):
        tf = f"{d}/time.txt"
        out = subprocess.run(["/usr/bin/time", "-v", "-o", tf, PY, script, "peer", d, *args], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        r["peak_rss_mb"] = round(int(re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                                               open(tf).read()).group(1)) / 1024, 1)
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best
