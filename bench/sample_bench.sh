#!/bin/bash
# bench/sample_bench.sh — the sampler benchmark: random 4×128×128×10 float32
# crops read by `zcube sample --bench` and by zarr-python 2.13 (thread pool of
# 1, 2, 4, 8, best kept) from the same data, the same crops (zarr-python reads
# the origins zcube wrote) and the same (warm) page cache, in one run:
#
#   lz4   Zarr v2, blosc-lz4 (clevel 5, shuffle), chunks (1,64,64,10) = 160 KiB,
#         smaller than a crop; both read the same folder.
#   tiny  4 KiB chunks (1,16,16,4), a Zarr v2 array with one file per chunk;
#         both read the same folder (the headline for tiny chunks). A crop
#         touches about 4×9×9×3 = 972 chunks.
#   tiny_sharded  "what sharding buys": zcube reads a v3 copy of tiny sharded
#         (4,256,256,12) (3,072 inner chunks per shard), made with `zcube copy`,
#         against the same zarr-python figures on the v2 folder (one run: the
#         rounds time zcube on both layouts and zarr-python in turn). The
#         sharded copy's crops are checked equal to the v2 folder's.
#
# Prints one JSON line per case on stdout with zcube's figures, zarr-python's
# best, the ratio, the ceiling and the goals; progress goes to stderr.
#
#   usage: bash bench/sample_bench.sh [BUILD_DIR]
#
#   BUILD_DIR       a CMake build dir (default build-bench); zcube is built there
#                   if missing.
#   BENCH_NT        time steps of the arrays (default 64: 640 MiB decoded each;
#                   ~2 GiB of disk in all)
#   BENCH_BATCHES   batches of 32 crops zcube reads per run (default 40)
#   BENCH_REF_BATCHES  batches zarr-python reads (default: all for lz4, 6 for tiny)
#   BENCH_THREADS   zcube thread counts to try (default "1 2 4"); best kept
#   BENCH_REPS      rounds of (decode-only, zcube, zarr-python) at the best
#                   thread counts after the sweeps, best of each kept (default 3)
#   BENCH_NICE      run zcube, the decode-only pass and zarr-python under
#                   `nice -n BENCH_NICE` (all three alike; unset = normal priority)
#   BENCH_DIR       data folder (default: new under /tmp, removed unless BENCH_KEEP=1;
#                   an existing BENCH_DIR with data is reused)
#
# Ceiling = decode-only rate × threads ÷ read amplification, where the
# decode-only rate is stored (compressed) bytes decoded per second by one
# thread: bench/sample_decode (C) reads up to 4,000 chunk files of the v2
# array into memory and decodes each with blosc_decompress_ctx(1 thread), the
# c-blosc zcube links, and with zcube's own codec chain, best of 5 passes
# each; the faster of the two counts (tiny: the v2 files have the same chunk
# shape and codec as the v3 inner chunks). Read amplification is
# zcube's bytes read ÷ bytes delivered, so the ceiling is in delivered bytes
# per second; threads = min(zcube's best thread count, cores). The same
# decode through numcodecs (sample_ref.py decode, Python call per chunk) is
# reported beside it as a cross-check. The chunks/s ceiling is decode-only
# chunks/s × threads.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-bench}
nt=${BENCH_NT:-64}
nbatches=${BENCH_BATCHES:-40}
threads_list=${BENCH_THREADS:-1 2 4}
reps=${BENCH_REPS:-3}
py=/usr/bin/python3
run=()
[[ -n ${BENCH_NICE:-} ]] && run=(nice -n "$BENCH_NICE")
seed=12345
window=4,128,128,10
batch=32

log() { echo "sample_bench: $*" >&2; }

zc=$build/zcube
dec=$build/bench/sample_decode
if [[ ! -x $zc || ! -x $dec ]]; then
    log "building zcube and sample_decode in $build"
    cmake -S "$root" -B "$build" -DZC_WERROR=ON >&2
    make -C "$build" -j2 zcube_cli sample_decode >&2
fi

keep=${BENCH_KEEP:-0}
if [[ -n ${BENCH_DIR:-} ]]; then
    data=$BENCH_DIR
    mkdir -p "$data"
else
    data=$(mktemp -d /tmp/zcube-sample-bench.XXXXXX)
    [[ $keep == 1 ]] || trap 'rm -rf "$data"' EXIT
fi

# disk: two v2 arrays (tiny: one 4 KiB block per file at least) + the v3 copy
need=$((nt * 40 * 1024 * 1024))
avail=$(df --output=avail -B1 "$data" | tail -1)
if ((avail < need)); then
    log "only $avail bytes free under $data, need ~$need: lower BENCH_NT"
    exit 1
fi

if [[ ! -f $data/lz4.zarr/.zarray || ! -f $data/tiny.zarr/.zarray ]]; then
    log "generating (T=$nt, 512, 512, 10) float32 with zarr-python in $data"
    $py "$root/bench/sample_ref.py" gen "$data" --nt "$nt" >&2
fi
if [[ ! -f $data/tiny_v3.zarr/zarr.json ]]; then
    log "zcube copy tiny.zarr -> tiny_v3.zarr (sharded 4,256,256,12; inner 1,16,16,4)"
    "$zc" copy "$data/tiny.zarr" "$data/tiny_v3.zarr" --zarr-format 3 --chunks 1,16,16,4 \
        --shards 4,256,256,12 --codec blosc:lz4:5:shuffle >&2
fi

# Both readers get the page cache warm (the data fits in memory).
cat "$data"/lz4.zarr/* > /dev/null
find "$data/tiny.zarr" "$data/tiny_v3.zarr" -type f -exec cat {} + > /dev/null

cores=$(nproc)
best_t() { $py -c 'import json,sys; print(max((json.loads(l) for l in open(sys.argv[1])), key=lambda j: j["crops_per_s"])["threads"])' "$1"; }
for case in lz4 tiny; do
    # what zcube reads: label=array; zarr-python always reads $case.zarr
    if [[ $case == tiny ]]; then runs="tiny=tiny.zarr tiny_sharded=tiny_v3.zarr"; else runs="lz4=lz4.zarr"; fi
    ref_batches=${BENCH_REF_BATCHES:-}
    [[ -z $ref_batches ]] && { [[ $case == tiny ]] && ref_batches=6 || ref_batches=$nbatches; }
    odir=$data/origins_$case
    rm -rf "$odir"
    log "$case: origins of $ref_batches batches from zcube sample -o on $case.zarr (seed $seed)"
    for ((s = 0; s < ref_batches; s += 4)); do
        n=$((ref_batches - s < 4 ? ref_batches - s : 4))
        "$zc" sample "$data/$case.zarr" --window $window --batch $batch --batches $n --seed $seed --start $s -o "$odir" > /dev/null
        find "$odir" -name 'batch_*.npy' ! -name batch_0.npy -delete
    done
    if [[ $case == tiny ]]; then
        log "tiny: the sharded copy's first batch must equal the v2 folder's"
        rm -rf "$data/origins_sharded"
        "$zc" sample "$data/tiny_v3.zarr" --window $window --batch $batch --batches 1 --seed $seed -o "$data/origins_sharded" > /dev/null
        for f in batch_0.npy origins_0.npy; do
            cmp "$odir/$f" "$data/origins_sharded/$f" || { log "FAIL: $f differs between tiny.zarr and tiny_v3.zarr"; exit 1; }
        done
    fi

    log "$case: zarr-python, threads 1,2,4,8 ($((ref_batches * batch)) crops)"
    "${run[@]}" $py "$root/bench/sample_ref.py" time "$data" "$case" "$odir" --window $window --check 1 | grep -v '"best"' \
        > "$data/ref_$case.jsonl"
    cat "$data/ref_$case.jsonl" >&2
    $py "$root/bench/sample_ref.py" decode "$data" "$case" > "$data/decode_py_$case.json"
    cat "$data/decode_py_$case.json" >&2

    zc_run() { # label array threads
        "${run[@]}" "$zc" sample "$data/$2" --window $window --batch $batch --batches "$nbatches" --seed $seed \
            --threads "$3" --prefetch 2 --bench | tee -a "$data/zc_$1.jsonl" >&2
    }
    declare -A tz=()
    for r in $runs; do
        label=${r%=*} arr=${r#*=}
        log "$label: zcube on $arr, threads $threads_list ($((nbatches * batch)) crops)"
        : > "$data/zc_$label.jsonl"
        for t in $threads_list; do zc_run "$label" "$arr" "$t"; done
        tz[$label]=$(best_t "$data/zc_$label.jsonl")
    done

    # Then rounds of decode-only, zcube (each layout) and zarr-python at their best
    # thread counts, one after the other, so that load from elsewhere hits all.
    tp=$(best_t "$data/ref_$case.jsonl")
    : > "$data/decode_$case.jsonl"
    for ((r = 0; r < reps; r++)); do
        log "$case: round $((r + 1))/$reps: decode-only, zcube, zarr-python $tp threads"
        "${run[@]}" "$dec" "$data/$case.zarr" 4000 | tee -a "$data/decode_$case.jsonl" >&2
        for x in $runs; do zc_run "${x%=*}" "${x#*=}" "${tz[${x%=*}]}"; done
        "${run[@]}" $py "$root/bench/sample_ref.py" time "$data" "$case" "$odir" --window $window --check 0 --threads "$tp" |
            grep -v '"best"' | tee -a "$data/ref_$case.jsonl" >&2
    done

    for x in $runs; do
    label=${x%=*}
    $py - "$label" "$data/zc_$label.jsonl" "$data/ref_$case.jsonl" "$data/decode_$case.jsonl" "$cores" \
        "$data/decode_py_$case.json" "$data/zc_tiny.jsonl" <<'EOF'
import json, os, sys
case, zf, rf, df, cores, pf, v2f = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
py_dec = json.load(open(pf))
zc = max((json.loads(l) for l in open(zf)), key=lambda j: j["crops_per_s"])
ref = [json.loads(l) for l in open(rf)]
best = max(ref, key=lambda r: r["crops_per_s"])
by_threads = {}
for r in ref:
    by_threads[r["threads"]] = max(by_threads.get(r["threads"], 0), round(r["crops_per_s"], 1))
dec = max((json.loads(l) for l in open(df)), key=lambda j: j["stored_bytes_per_s"])
threads = min(zc["threads"] or cores, cores)
amp = zc["read_amplification"]
ceiling_bytes = dec["stored_bytes_per_s"] * threads / amp            # delivered bytes per second
ceiling_gbs = ceiling_bytes / 1e9
ceiling_chunks = dec["chunks_per_s"] * threads
out = {
    "case": case,
    "zcube": {k: zc[k] for k in ("threads", "prefetch", "windows", "seconds", "crops_per_s", "decoded_gb_per_s",
                                 "bytes_read", "read_amplification", "chunks_read", "chunks_per_s")},
    "zarr_python": {"threads": best["threads"], "crops": best["crops"], "crops_per_s": best["crops_per_s"],
                    "decoded_gb_per_s": best["decoded_gb_per_s"],
                    "by_threads": by_threads},
    "ratio": zc["crops_per_s"] / best["crops_per_s"],
    "decode_only": {"stored_gb_per_s_per_thread": dec["stored_bytes_per_s"] / 1e9,
                    "decoded_gb_per_s_per_thread": dec["decoded_bytes_per_s"] / 1e9,
                    "chunks_per_s_per_thread": dec["chunks_per_s"], "compression_ratio": dec["compression_ratio"],
                    "decoder": dec["decoder"],
                    "library_stored_gb_per_s_per_thread": dec["library_stored_bytes_per_s"] / 1e9,
                    "zcube_stored_gb_per_s_per_thread": dec["zcube_stored_bytes_per_s"] / 1e9,
                    "numcodecs_decoded_gb_per_s_per_thread": py_dec["decoded_bytes_per_s"] / 1e9},
    "ceiling": {"threads": threads, "decoded_gb_per_s": ceiling_gbs, "chunks_per_s": ceiling_chunks},
    "of_ceiling": zc["decoded_gb_per_s"] / ceiling_gbs,
    "cores": cores,
    "loadavg_1min": os.getloadavg()[0],
}
if case == "lz4":
    out["goals"] = {"ratio>=2.5": out["ratio"] >= 2.5, "of_ceiling>=0.7": out["of_ceiling"] >= 0.7}
elif case == "tiny":
    out["goals"] = {"chunks_per_s>=1e6": zc["chunks_per_s"] >= 1e6, "ratio>=10": out["ratio"] >= 10}
else:  # what sharding buys: the sharded copy against the v2 folder, both read by zcube in this run
    v2 = max((json.loads(l) for l in open(v2f)), key=lambda j: j["crops_per_s"])
    out["zcube_sharded_over_v2"] = zc["crops_per_s"] / v2["crops_per_s"]
print(json.dumps(out))
EOF
    done
done
