#!/bin/bash
# bench/http_bench.sh — reading arrays over HTTP with 20 ms of latency per
# request: zcube against zarr-python 2.13 + fsspec's HTTP filesystem
# (aiohttp) and against parallel curl transfers of the same objects, all
# from one nginx on loopback through bench/latency_proxy.c --latency-ms 20
# (C, threads, splice: it moves 1.3 GB/s here, as fast as nginx alone, where
# the Python tests/net/faultproxy.py capped every reader near 130 MB/s).
# Prints one JSON object per case and run (the runs alternate between the
# peers), then the best of each; checksums must agree (fatal otherwise).
# Whole reads against zarr-python: both read into a fresh array, allocated
# as NumPy allocates one (huge pages advised; bench_numpy_alloc in
# bench/bench_util.h), and checksum it within the timing. Against curl, which writes to /dev/null: zcube reads
# into a buffer touched before the timing and checksums after it
# (bench_http --prealloc; cases *_prealloc), so neither side pays for 1 GiB
# of fresh pages.
#
#   usage: bash bench/http_bench.sh [BUILD_DIR]      (default: build)
#   BENCH_SCALE  1 = (256, 1024, 1024) float32 = 1 GiB (default 1)
#   BENCH_REPS   runs of each case, alternating between the peers (default 3)
#   BENCH_WORKERS threads issuing the 1,000 crops, both sides (default 16)
#   BENCH_CASES  whole, crops or both (default "whole crops")
#   BENCH_DATA   keep the arrays in this folder, and reuse them if it has them
#                (made at the same scale; default: a temporary folder)
#
# Arrays: lz4.zarr (v2, blosc-lz4, 4 MiB chunks, zarr-python wrote it),
# sharded.zarr (v3: the same values in 256 KiB blosc-lz4 inner chunks, 64 MiB
# shards, zcube copy wrote it) and small.zarr (v2, the same inner chunks,
# unsharded: zarr-python 2.13 cannot read shards, so its crops read this).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
scale=${BENCH_SCALE:-1}
reps=${BENCH_REPS:-3}
workers=${BENCH_WORKERS:-16}
cases=${BENCH_CASES:-whole crops}
PY=/usr/bin/python3
source "$root/tests/net/servers.bash"
net_need nginx zarr
"$PY" -c 'import fsspec, aiohttp' || { echo "http_bench: needs python3-fsspec and python3-aiohttp" >&2; exit 1; }
make -C "$build" -j2 bench_http latency_proxy zcube_cli >&2
log() { echo "http_bench: $*" >&2; }
if [ -n "${BENCH_DATA:-}" ]; then
    data=$BENCH_DATA
    mkdir -p "$data"
    trap 'set +e; net_stop_all' EXIT
else
    data=$(mktemp -d /tmp/zcube-http-bench.XXXXXX)
    trap 'set +e; net_stop_all; rm -rf "$data"' EXIT # (set -e would stop at a wait for a server not our child)
fi
chmod 755 "$data"
if [ ! -f "$data/sharded.zarr/zarr.json" ]; then
    log "generating (scale $scale) in $data"
    "$PY" "$root/bench/http_ref.py" gen "$data" "$scale"
    "$build/zcube" copy "$data/small.zarr" "$data/sharded.zarr" --zarr-format 3 --chunks 1,256,256 \
        --shards 16,1024,1024 --codec blosc:lz4:5 --max-mem 1GB -q
fi
chmod -R a+rX "$data"
nginx_start "$data"
latency_proxy_start "$build/bench/latency_proxy" "$NGINX_PORT" 20
U=http://127.0.0.1:$PROXY_PORT

curl_all() { # parallel curl of every object of array $1 (64 at once, like zcube's default)
    local cfg=$data/curl.cfg
    (cd "$data/$1" && find . -type f | sed "s|^\./||" | sort) |
        awk -v u="$U/$1/" '{print "url = \"" u $0 "\"\noutput = \"/dev/null\""}' >"$cfg"
    local t0 t1
    t0=$(date +%s.%N)
    curl -s --no-progress-meter --fail --parallel --parallel-max 64 -K "$cfg"
    t1=$(date +%s.%N)
    local bytes
    bytes=$(du -sb --apparent-size "$data/$1" | cut -f1)
    "$PY" -c "import json,sys; print(json.dumps({'seconds': round($t1 - $t0, 4), 'bytes_on_wire': $bytes}))"
}

report() { # report CASE ZCUBE_JSON REF_JSON REF_NAME
    "$PY" - "$@" <<'PY'
import json, sys
case, z, ref, name = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
if "checksum" in ref and ref["checksum"] != z["checksum"]:
    sys.exit("http_bench: %s: checksum mismatch: zcube %d, %s %d" % (case, z["checksum"], name, ref["checksum"]))
print(json.dumps({"case": case, "reference": name, "zcube_s": z["seconds"], "ref_s": ref["seconds"],
                  "ratio": round(ref["seconds"] / z["seconds"], 2), "zcube_cpu_s": z["cpu_s"],
                  "ref_cpu_s": ref.get("cpu_s"), "bytes": z["bytes"]}))
PY
}

fastest() { # the JSON with the fewest seconds among the arguments
    "$PY" -c "import json,sys; print(min(sys.argv[1:], key=lambda a: json.loads(a)['seconds']))" "$@"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

if [[ " $cases " == *" whole "* ]]; then
    Z=() ZPRE=() ZP=() ZS=() CU=() ZH=() CS=()
    for ((r = 1; r <= reps; r++)); do
        log "run $r: whole lz4.zarr (load $(load))"
        # against zarr-python both sides read into a fresh array and checksum it in
        # the timing; against curl (to /dev/null) zcube reads into a buffer touched
        # before the timing and checksums after it (bench_http --prealloc)
        z=$("$build/bench/bench_http" "$U/lz4.zarr")
        zpre=$("$build/bench/bench_http" "$U/lz4.zarr" --prealloc)
        zp=$("$PY" "$root/bench/http_ref.py" zarr "$U/lz4.zarr")
        zs=$("$PY" "$root/bench/http_ref.py" zarr "$U/lz4.zarr" - 4)
        cu=$(curl_all lz4.zarr)
        report whole_lz4 "$z" "$zp" "zarr-python+fsspec a[:]"
        report whole_lz4 "$z" "$zs" "zarr-python+fsspec, slabs on 4 threads"
        report whole_lz4_prealloc "$zpre" "$cu" parallel-curl
        log "run $r: whole sharded.zarr (load $(load))"
        zh=$("$build/bench/bench_http" "$U/sharded.zarr" --prealloc)
        "$PY" -c "import json,sys; a,b,c=(json.loads(x) for x in sys.argv[1:]); sys.exit(0 if a['checksum']==b['checksum']==c['checksum'] else 'the arrays read differently')" "$z" "$zpre" "$zh"
        cs=$(curl_all sharded.zarr)
        report whole_sharded_prealloc "$zh" "$cs" parallel-curl
        Z+=("$z") ZPRE+=("$zpre") ZP+=("$zp") ZS+=("$zs") CU+=("$cu") ZH+=("$zh") CS+=("$cs")
    done
    log "best of $reps"
    report best_whole_lz4 "$(fastest "${Z[@]}")" "$(fastest "${ZP[@]}" "${ZS[@]}")" "zarr-python+fsspec (best of a[:] and slabs)"
    report best_whole_lz4_prealloc "$(fastest "${ZPRE[@]}")" "$(fastest "${CU[@]}")" parallel-curl
    report best_whole_sharded_prealloc "$(fastest "${ZH[@]}")" "$(fastest "${CS[@]}")" parallel-curl
fi
if [[ " $cases " == *" crops "* ]]; then
    for ((r = 1; r <= reps; r++)); do
        log "run $r: 1,000 crops (load $(load))"
        zc=$("$build/bench/bench_http" "$U/sharded.zarr" --regions "$data/regions.txt" --workers "$workers")
        zr1=$("$PY" "$root/bench/http_ref.py" zarr "$U/small.zarr" "$data/regions.txt" 1)
        zrw=$("$PY" "$root/bench/http_ref.py" zarr "$U/small.zarr" "$data/regions.txt" "$workers")
        report crops_sharded "$zc" "$zr1" "zarr-python+fsspec (v2, same inner chunks), one crop at a time"
        report crops_sharded "$zc" "$zrw" "zarr-python+fsspec (v2, same inner chunks), $workers threads"
    done
fi
