#!/bin/bash
# bench/getput_bench.sh — whole arrays in and out of .npy files, as whole
# processes: `zcube get ARRAY -o OUT.npy` against zarr-python 2.13 doing the
# same (`numpy.save(OUT, zarr.open(ARRAY)[...])`), and `zcube put ARRAY IN.npy`
# against `zarr.open(ARRAY)[...] = numpy.load(IN)`, on the same arrays
# (written by zarr-python: float32 (128*S, 1024, 1024), chunks (16, 256, 256),
# uncompressed, blosc lz4+shuffle and zstd, bench/read_ref.py gen), in the
# same cache state. Each process is timed by /usr/bin/time -v: wall, user and
# system seconds, minor page faults, peak RSS. Prints one JSON object per case
# on stdout and a Markdown table on stderr; exits 1 when an output differs
# from the reference's (numpy.array_equal), 2 on bad usage.
#
#   usage: bash bench/getput_bench.sh [BUILD_DIR]
#
#   BUILD_DIR    a CMake build dir of this repo (default: build-bench); the
#                zcube target is (re)built.
#   BENCH_SCALE  array size: 1 = (128, 1024, 1024) float32 = 512 MiB (default 1).
#   BENCH_REPS   runs of each side per case (default 5), alternating: in even
#                rounds zcube runs first, in odd ones the reference.
#   BENCH_CASES  any of get-none get-lz4 get-zstd put-none put-lz4 put-zstd
#                (default: all six).
#   BENCH_DIR    where the data go (default: a new dir under /tmp, removed at
#                the end unless BENCH_KEEP=1); data already there are reused.
#   BENCH_NICE   nice value for both sides (default -10, needs root; "" = none).
#   BENCH_BASE   another zcube binary (e.g. a build of main) run as a fourth
#                side, "base", in the same rounds: before/after in one run.
#
# The references, as an expert would write them (each its own process):
#   get: ref      numpy.save(OUT, zarr.open(A, mode='r')[...])
#        ref-out  buf = numpy.empty(z.shape, z.dtype); z.get_basic_selection(
#                 Ellipsis, out=buf); numpy.save(OUT, buf)  (zarr decodes
#                 whole chunks straight into buf)
#   put: ref      zarr.open(A, mode='r+')[...] = numpy.load(IN)
#        ref-mmap the same with numpy.load(IN, mmap_mode='r')
# Same conditions on both sides: before every run the inputs are read once
# (warm page cache), the output is removed and `sync` writes back the previous
# run's dirty pages, all outside the timed process. Ratios are of the same
# round (reference / zcube, > 1 = zcube faster), against the faster reference
# of that round; the table gives their median over rounds, and the CPU ratio
# ((user + sys) of the reference / of zcube, medians).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
scale=${BENCH_SCALE:-1}
reps=${BENCH_REPS:-5}
cases=${BENCH_CASES:-get-none get-lz4 get-zstd put-none put-lz4 put-zstd}
nice=${BENCH_NICE--10}
py=/usr/bin/python3
log() { echo "getput_bench: $*" >&2; }

for c in $cases; do
    case $c in get-none | get-lz4 | get-zstd | put-none | put-lz4 | put-zstd) ;;
        *) log "unknown case '$c' in BENCH_CASES"; exit 2 ;;
    esac
done
[[ -x /usr/bin/time ]] || { log "/usr/bin/time is missing (apt-get install time)"; exit 1; }
$py -c 'import zarr, numpy, numcodecs' 2> /dev/null || { log "needs zarr, numpy and numcodecs for $py"; exit 1; }
prefix=()
if [[ -n $nice ]]; then
    nice -n "$nice" true 2> /dev/null || { log "cannot run at nice $nice (not root?): set BENCH_NICE="; exit 1; }
    prefix=(nice -n "$nice")
fi

if [[ ! -f $build/Makefile ]]; then
    log "configuring $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON >&2
fi
make -C "$build" -j2 zcube_cli >&2
zcube=$build/zcube
base=${BENCH_BASE:-}
[[ -z $base || -x $base ]] || { log "BENCH_BASE '$base' is not an executable"; exit 2; }

keep=${BENCH_KEEP:-0}
if [[ -n ${BENCH_DIR:-} ]]; then
    data=$BENCH_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-getput-bench.XXXXXX)
    [[ $keep == 1 ]] || trap 'rm -rf "$data"' EXIT
fi
# read_ref.py's scale 1 is 256 time steps; ours is 128
if [[ ! -f $data/gen.json ]]; then
    log "generating the arrays in $data"
    $py "$root/bench/read_ref.py" gen "$data" --scale "$(awk -v s="$scale" 'BEGIN { print s / 2 }')" > "$data/gen.json"
fi
work=$data/work
mkdir -p "$work"

# timed run: $1 = label (file stem under $work), rest = the command
timed() {
    local label=$1
    shift
    "${prefix[@]}" /usr/bin/time -v -o "$work/$label.time" "$@" > "$work/$label.out" 2> "$work/$label.err" || {
        log "$label failed:"
        cat "$work/$label.err" >&2
        exit 1
    }
}

warm() { cat "$@" > /dev/null; }
chunks_of() { find "$1" -type f -print0 | xargs -0 cat > /dev/null; }

# put targets: an array like the source, chunks present (each side its own)
make_target() {
    $py - "$1" "$2" << 'EOF'
import shutil, sys, zarr
src, dst = sys.argv[1:]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
EOF
}

check_npy() { # $1 = output, $2 = expected (both .npy)
    $py - "$1" "$2" << 'EOF' || { log "MISMATCH: $1 differs from $2"; exit 1; }
import sys, numpy as np
a, b = (np.load(p, mmap_mode="r") for p in sys.argv[1:])
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b) else 1)
EOF
}

check_array() { # $1 = array, $2 = expected .npy
    $py - "$1" "$2" << 'EOF' || { log "MISMATCH: array $1 differs from $2"; exit 1; }
import sys, numpy as np, zarr
z = zarr.open(sys.argv[1], mode="r")
b = np.load(sys.argv[2], mmap_mode="r")
a = z[...]
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b) else 1)
EOF
}

REF_GET='import sys, zarr, numpy
numpy.save(sys.argv[2], zarr.open(sys.argv[1], mode="r")[...])'
REF_GET_OUT='import sys, zarr, numpy
z = zarr.open(sys.argv[1], mode="r")
buf = numpy.empty(z.shape, z.dtype)
z.get_basic_selection(Ellipsis, out=buf)
numpy.save(sys.argv[2], buf)'
REF_PUT='import sys, zarr, numpy
zarr.open(sys.argv[1], mode="r+")[...] = numpy.load(sys.argv[2])'
REF_PUT_MMAP='import sys, zarr, numpy
zarr.open(sys.argv[1], mode="r+")[...] = numpy.load(sys.argv[2], mmap_mode="r")'

# the expected values: zarr-python's own get of each array
expect() {
    local codec=$1
    [[ -f $work/expect-$codec.npy ]] || $py -c "$REF_GET" "$data/$codec.zarr" "$work/expect-$codec.npy"
}

run_get() {
    local codec=$1 round=$2 arr=$data/$1.zarr side
    local sides=(zcube ref ref-out ${base:+base})
    (( round % 2 )) && sides=(${base:+base} ref ref-out zcube)
    for side in "${sides[@]}"; do
        local label=get-$codec-$side-$round out=$work/get-$codec-$side.npy
        rm -f "$out"
        sync
        chunks_of "$arr"
        case $side in
            zcube) timed "$label" "$zcube" get "$arr" -o "$out" ;;
            base) timed "$label" "$base" get "$arr" -o "$out" ;;
            ref) timed "$label" "$py" -c "$REF_GET" "$arr" "$out" ;;
            ref-out) timed "$label" "$py" -c "$REF_GET_OUT" "$arr" "$out" ;;
        esac
        check_npy "$out" "$work/expect-$codec.npy"
    done
}

run_put() {
    local codec=$1 round=$2 in=$work/expect-$1.npy side
    local sides=(zcube ref ref-mmap ${base:+base})
    (( round % 2 )) && sides=(${base:+base} ref ref-mmap zcube)
    for side in "${sides[@]}"; do
        local label=put-$codec-$side-$round arr=$work/put-$codec-$side.zarr
        [[ -d $arr ]] || make_target "$data/$codec.zarr" "$arr"
        sync
        warm "$in"
        chunks_of "$arr"
        case $side in
            zcube) timed "$label" "$zcube" put "$arr" "$in" ;;
            base) timed "$label" "$base" put "$arr" "$in" ;;
            ref) timed "$label" "$py" -c "$REF_PUT" "$arr" "$in" ;;
            ref-mmap) timed "$label" "$py" -c "$REF_PUT_MMAP" "$arr" "$in" ;;
        esac
        check_array "$arr" "$in"
    done
}

load0=$(cut -d' ' -f1 /proc/loadavg)
for c in $cases; do
    op=${c%%-*} codec=${c#*-}
    expect "$codec"
    log "$c: $reps rounds (load $(cut -d' ' -f1-3 /proc/loadavg))"
    for ((r = 0; r < reps; r++)); do
        "run_$op" "$codec" "$r"
    done
done
load1=$(cut -d' ' -f1 /proc/loadavg)

$py - "$work" "$reps" "$load0" "$load1" "${base:+1}" $cases << 'EOF'
import json, re, statistics, sys
work, reps, load0, load1, has_base, cases = (sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5],
                                             sys.argv[6:])

def tv(path):
    t = open(path).read()
    def num(pat):
        return float(re.search(pat, t).group(1))
    w = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", t)
    wall = int(w.group(1) or 0) * 3600 + int(w.group(2)) * 60 + float(w.group(3))
    return {"wall": wall, "user": num(r"User time \(seconds\): ([\d.]+)"),
            "sys": num(r"System time \(seconds\): ([\d.]+)"),
            "minflt": int(num(r"Minor \(reclaiming a frame\) page faults: (\d+)")),
            "rss_mb": num(r"Maximum resident set size \(kbytes\): (\d+)") / 1024}

med = statistics.median
rows = []
for c in cases:
    op = c.split("-")[0]
    refs = ["ref", "ref-out"] if op == "get" else ["ref", "ref-mmap"]
    sides = ["zcube"] + refs + (["base"] if has_base else [])
    runs = {s: [tv(f"{work}/{c}-{s}-{r}.time") for r in range(reps)] for s in sides}
    ratio, cpu_ratio, which = [], [], []
    for r in range(reps):
        z = runs["zcube"][r]
        best = min(refs, key=lambda s: runs[s][r]["wall"])
        which.append(best)
        ratio.append(runs[best][r]["wall"] / z["wall"])
        cpu_ratio.append((runs[best][r]["user"] + runs[best][r]["sys"]) / max(z["user"] + z["sys"], 1e-3))
    out = {"case": c, "reps": reps, "load": [float(load0), float(load1)],
           "ratio_median": round(med(ratio), 3), "ratios": [round(x, 3) for x in ratio],
           "cpu_ratio_median": round(med(cpu_ratio), 3), "faster_reference": which}
    for s, rs in runs.items():
        out[s] = {k: round(med([x[k] for x in rs]), 3) for k in rs[0]}
        out[s]["minflt"] = int(out[s]["minflt"])
        out[s]["walls"] = [x["wall"] for x in rs]
    if has_base:  # base wall / zcube wall, same round
        out["base_ratio_median"] = round(med([runs["base"][r]["wall"] / runs["zcube"][r]["wall"] for r in range(reps)]), 3)
    print(json.dumps(out))
    rows.append(out)

extra = " base wall / user / sys s | faults | RSS MB | base / zcube |" if has_base else ""
print("| case | zcube wall / user / sys s | faults | RSS MB | ref wall / user / sys s | faults | RSS MB | "
      "ref2 wall / user / sys s | faults | RSS MB | **ratio** (rounds) | CPU ratio |" + extra, file=sys.stderr)
print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if has_base else ""), file=sys.stderr)
for o in rows:
    refs = [k for k in o if k in ("ref", "ref-out", "ref-mmap")]
    cells = []
    for s in ["zcube"] + refs:
        m = o[s]
        cells += [f"{m['wall']:.2f} / {m['user']:.2f} / {m['sys']:.2f}", f"{m['minflt']}", f"{m['rss_mb']:.0f}"]
    rr = ", ".join(f"{x:.2f}" for x in o["ratios"])
    tail = ""
    if has_base:
        m = o["base"]
        tail = (f" {m['wall']:.2f} / {m['user']:.2f} / {m['sys']:.2f} | {m['minflt']} | {m['rss_mb']:.0f} | "
                f"{o['base_ratio_median']:.2f} |")
    print(f"| {o['case']} | " + " | ".join(cells) + f" | **{o['ratio_median']:.2f}** ({rr}) | {o['cpu_ratio_median']:.2f} |"
          + tail, file=sys.stderr)
gets = [o["ratio_median"] for o in rows if o["case"].startswith("get")]
if gets:
    g = 1.0
    for x in gets:
        g *= x
    print(f"get: geometric mean of the median ratios {g ** (1 / len(gets)):.2f} over {len(gets)} codecs; "
          f"load {load0} -> {load1}", file=sys.stderr)
EOF
