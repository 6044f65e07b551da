#!/bin/bash
# tests/cli/sample.sh — `zcube sample`: windows compared with NumPy slices of
# the same data (v2 blosc-lz4 chunks smaller than the window, v3 sharded with
# partial edge shards), determinism (same seed → identical files, any batch
# alone from --start, any thread/prefetch setting), coverage of an epoch
# without replacement (random and grid), alignment of several sources
# (dimension names, --dims, offsets, jitter), NaN and fill rejection, the
# --bench line, and usage/runtime errors.
# Usage: bash sample.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr numcodecs

cat >"$TMP/chk.py" <<'EOF'
import glob, json, os, sys
import numpy as np

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

def load_batches(d, prefix, steps):
    out = []
    for k in steps:
        b = np.load(f"{d}/{prefix}batch_{k}.npy")
        o = np.load(f"{d}/{prefix}origins_{k}.npy")
        if o.dtype != np.int64:
            fail(f"{prefix}origins_{k}.npy dtype {o.dtype}, expected int64")
        out.append((k, b, o))
    return out

def sl(o, w):
    return tuple(slice(int(a), int(a) + int(n)) for a, n in zip(o, w))

def gen(d):
    import zarr
    from numcodecs import Blosc
    rng = np.random.default_rng(11)
    lz4 = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    # float data for the chunk/shard crossing checks
    cube = rng.standard_normal((9, 40, 44, 5)).astype(np.float32)
    np.save(f"{d}/cube.npy", cube)
    z = zarr.open(f"{d}/cube_v2", mode="w", shape=cube.shape, chunks=(2, 8, 8, 3), dtype="<f4", compressor=lz4)
    z[...] = cube
    # tiny array whose values encode their indices (coverage)
    t = np.arange(6 * 7, dtype=np.int32).reshape(6, 7)
    np.save(f"{d}/tiny.npy", t)
    z = zarr.open(f"{d}/tiny", mode="w", shape=t.shape, chunks=(4, 4), dtype="<i4", compressor=lz4)
    z[...] = t
    g = np.arange(10 * 13, dtype=np.int32).reshape(10, 13)
    np.save(f"{d}/grid.npy", g)
    z = zarr.open(f"{d}/grid", mode="w", shape=g.shape, chunks=(3, 5), dtype="<i4", compressor=lz4)
    z[...] = g
    # alignment: A (time, y, x) int32 made by zcube (v3, dimension_names);
    # B (time, y, x, chan) int64 v2, dims given with --dims; C (time,) float64
    ti, yi, xi = np.meshgrid(np.arange(20), np.arange(30), np.arange(40), indexing="ij")
    np.save(f"{d}/A.npy", (ti * 10000 + yi * 100 + xi).astype(np.int32))
    ti, yi, xi, ci = np.meshgrid(np.arange(24), np.arange(33), np.arange(44), np.arange(2), indexing="ij")
    B = (ti * 1000000 + yi * 10000 + xi * 100 + ci).astype(np.int64)
    np.save(f"{d}/B.npy", B)
    z = zarr.open(f"{d}/B", mode="w", shape=B.shape, chunks=(5, 7, 9, 1), dtype="<i8", compressor=lz4)
    z[...] = B
    C = np.arange(30, dtype=np.float64) + 0.5
    np.save(f"{d}/C.npy", C)
    z = zarr.open(f"{d}/C", mode="w", shape=C.shape, chunks=(7,), dtype="<f8", compressor=lz4)
    z[...] = C
    # NaN rejection: two NaNs in a 12x12 field; an all-NaN array
    n = rng.standard_normal((12, 12)).astype(np.float32)
    n[5, 5] = np.nan
    n[9, 2] = np.nan
    np.save(f"{d}/nan.npy", n)
    z = zarr.open(f"{d}/nan", mode="w", shape=n.shape, chunks=(5, 5), dtype="<f4", compressor=lz4)
    z[...] = n
    z = zarr.open(f"{d}/allnan", mode="w", shape=(6, 6), chunks=(3, 3), dtype="<f4", compressor=lz4,
                  fill_value=float("nan"))
    z[...] = np.nan
    # fill rejection: int16, fill value -1, one chunk never written, a few -1s
    f = rng.integers(0, 1000, size=(12, 12), dtype=np.int16)
    f[0:4, 8:12] = -1          # chunk (0, 2) is all fill: not stored
    f[10, 1] = -1
    np.save(f"{d}/fill.npy", f)
    z = zarr.open(f"{d}/fill", mode="w", shape=f.shape, chunks=(4, 4), dtype="<i2", compressor=lz4, fill_value=-1,
                  write_empty_chunks=False)
    z[...] = f
    if os.path.exists(f"{d}/fill/0.2"):
        fail("fill: chunk 0.2 should not be stored")

def check_slices(src, d, prefix, first, n, window, batch):
    """Every window equals the NumPy slice at its origin."""
    a = np.load(src)
    w = [int(x) for x in window.split(",")]
    seen = 0
    for k, b, o in load_batches(d, prefix, range(first, first + n)):
        if b.shape != (batch, *w) or b.dtype != a.dtype:
            fail(f"{prefix}batch_{k}: shape {b.shape} dtype {b.dtype}, expected {(batch, *w)} {a.dtype}")
        if o.shape != (batch, a.ndim):
            fail(f"{prefix}origins_{k}: shape {o.shape}")
        for i in range(batch):
            if any(o[i] < 0) or any(o[i] + w > a.shape):
                fail(f"{prefix}batch_{k}[{i}]: origin {o[i]} out of bounds for window {w} in {a.shape}")
            if not np.array_equal(b[i], a[sl(o[i], w)], equal_nan=a.dtype.kind == "f"):
                fail(f"{prefix}batch_{k}[{i}]: data differs from the slice at {o[i]}")
            seen += 1
    print(seen)

def check_cover(src, d, first, nepochs, per_epoch, batch, window, stride):
    """Each epoch delivers every origin (every valid one, or every grid one)
    exactly once; epochs differ in order."""
    a = np.load(src)
    w = [int(x) for x in window.split(",")]
    st = [int(x) for x in stride.split(",")]
    axes = [range(0, a.shape[i] - w[i] + 1, st[i]) for i in range(a.ndim)]
    want = sorted(tuple(int(v) for v in t) for t in np.array(np.meshgrid(*axes, indexing="ij")).reshape(a.ndim, -1).T)
    orders = []
    for e in range(nepochs):
        got = []
        steps = range(first + e * per_epoch, first + (e + 1) * per_epoch)
        for k, b, o in load_batches(d, "", steps):
            for i in range(batch):
                if not np.array_equal(b[i], a[sl(o[i], w)]):
                    fail(f"batch_{k}[{i}]: data differs from the slice at {o[i]}")
            got += [tuple(int(v) for v in r) for r in o]
        if sorted(got) != want:
            missing = sorted(set(want) - set(got))[:5]
            dup = sorted({t for t in got if got.count(t) > 1})[:5]
            extra = sorted(set(got) - set(want))[:5]
            fail(f"epoch {e}: {len(got)} windows for {len(want)} origins; missing {missing} repeated {dup} "
                 f"not on the grid {extra}")
        orders.append(got)
    for e in range(1, nepochs):
        if len(want) > 2 and orders[e] == orders[0]:
            fail(f"epoch {e} visits the windows in the same order as epoch 0")
    print(len(want))

def check_align(d, n, batch, jit, off):
    """A (time,y,x) offset 0; B (time,y,x,chan) at shared + off ± jit; C (time) at shared + 5."""
    A, B, C = np.load(f"{d}/A.npy"), np.load(f"{d}/B.npy"), np.load(f"{d}/C.npy")
    wa, wb, wc = (4, 8, 8), (4, 6, 10, 1), (4,)
    jit = [int(x) for x in jit.split(",")]
    off = [int(x) for x in off.split(",")]
    shifts = set()
    for k in range(n):
        (_, ba, oa), = load_batches(f"{d}/al", "A_", [k])
        (_, bb, ob), = load_batches(f"{d}/al", "B_", [k])
        (_, bc, oc), = load_batches(f"{d}/al", "C_", [k])
        for i in range(batch):
            for arr, b, o, w, nm in ((A, ba, oa, wa, "A"), (B, bb, ob, wb, "B"), (C, bc, oc, wc, "C")):
                if any(o[i] < 0) or any(o[i] + w > arr.shape):
                    fail(f"{nm} batch {k}[{i}]: origin {o[i]} out of bounds")
                if not np.array_equal(b[i], arr[sl(o[i], w)]):
                    fail(f"{nm} batch {k}[{i}]: data differs from the slice at {o[i]}")
            for dim in range(3):  # time, y, x shared by A and B
                s = int(ob[i][dim]) - int(oa[i][dim]) - off[dim]
                if abs(s) > jit[dim]:
                    fail(f"batch {k}[{i}] dim {dim}: B origin {ob[i]} vs A origin {oa[i]}: shift {s} beyond offset {off[dim]} ± {jit[dim]}")
                shifts.add((dim, s))
            if int(oc[i][0]) != int(oa[i][0]) + 5:
                fail(f"batch {k}[{i}]: C origin {oc[i]} is not A's time {oa[i][0]} + 5")
            # the values themselves say where they come from
            if ba[i][0, 0, 0] // 10000 != bc[i][0] - 0.5 - 5:
                fail(f"batch {k}[{i}]: A starts at time {ba[i][0,0,0] // 10000}, C at {bc[i][0] - 0.5}")
    for dim in range(3):
        used = sorted(s for dd, s in shifts if dd == dim)
        if jit[dim] > 0 and len(used) < 2:
            fail(f"jitter of dim {dim} never varied: shifts {used}")
        if jit[dim] == 0 and used != [0]:
            fail(f"dim {dim} without jitter shifted by {used}")
    print(n * batch)

def count_nan(d, first, n):
    print(sum(int(np.isnan(np.load(f"{d}/batch_{k}.npy")).reshape(-1, 16).any(axis=1).sum()) for k in range(first, first + n)))

def count_fill(d, n, fill):
    print(sum(int((np.load(f"{d}/batch_{k}.npy") == int(fill)).reshape(-1, 9).any(axis=1).sum()) for k in range(n)))

def bench(line, windows, nbytes):
    j = json.loads(line)
    for key in ("crops_per_s", "decoded_gb_per_s", "bytes_read", "read_amplification", "chunks_per_s", "seconds",
                "rejected", "chunks_read", "bytes_used"):
        if key not in j:
            fail(f"bench line lacks {key}: {line}")
    if j["windows"] != int(windows) or j["bytes_used"] != int(nbytes):
        fail(f"bench: windows {j['windows']} bytes_used {j['bytes_used']}, expected {windows} {nbytes}")
    if not (j["bytes_read"] > 0 and j["chunks_read"] > 0 and j["read_amplification"] > 0 and j["seconds"] > 0):
        fail(f"bench: empty figures: {line}")
    print(j["rejected"])

cmd = sys.argv[1]
if cmd == "gen":
    gen(sys.argv[2])
elif cmd == "slices":
    check_slices(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7], int(sys.argv[8]))
elif cmd == "cover":
    check_cover(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]),
                sys.argv[8], sys.argv[9])
elif cmd == "align":
    check_align(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
elif cmd == "nan":
    count_nan(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
elif cmd == "fill":
    count_fill(sys.argv[2], int(sys.argv[3]), sys.argv[4])
elif cmd == "bench":
    bench(sys.argv[2], sys.argv[3], sys.argv[4])
EOF

chk() {
    CHECKS=$((CHECKS + 1))
    if ! "$PY" "$TMP/chk.py" "$@" >"$TMP/chk.out" 2>&1; then
        fail "check $*: $(tail -c 800 "$TMP/chk.out")"
        return 1
    fi
    return 0
}

# identical sets of files in two folders (names and bytes)
same_files() {
    local a=$1 b=$2
    CHECKS=$((CHECKS + 1))
    if ! diff <(cd "$a" && ls) <(cd "$b" && ls) >/dev/null; then
        fail "$a and $b hold different files"
        return 1
    fi
    local f
    for f in "$a"/*.npy; do
        if ! cmp -s "$f" "$b/$(basename "$f")"; then
            fail "$(basename "$f") differs between $a and $b"
            return 1
        fi
    done
    return 0
}

"$PY" "$TMP/chk.py" gen "$TMP" || { echo "FAIL: generating inputs"; exit 1; }

# ---- windows across chunk boundaries: v2 blosc-lz4, chunks (2,8,8,3) < window
W=4,16,16,5
V2="$TMP/cube_v2"
expect_ok sample "$V2" --window $W --batch 8 --batches 5 --seed 1 -o "$TMP/s_v2" &&
    chk slices "$TMP/cube.npy" "$TMP/s_v2" "" 0 5 $W 8
grep -q "rejected 0 windows" "$TMP/out" || fail "summary line: $(cat "$TMP/out")"

# ---- v3 sharded (made by zcube create --shards + put): partial shards at the edges
for spec in "--chunks 2,8,8,3 --shards 4,16,16,3 --codec blosc:lz4:5:shuffle" \
    "--chunks 1,4,4,5 --shards 3,12,20,5 --codec zstd:1,crc32c" \
    "--chunks 3,5,6,2 --shards 3,10,18,4 --codec none"; do
    V3="$TMP/cube_v3_$((++SEQN))"
    if expect_ok create "$V3" --shape 9,40,44,5 --dtype float32 --zarr-format 3 $spec &&
        expect_ok put "$V3" "$TMP/cube.npy"; then
        expect_ok sample "$V3" --window $W --batch 6 --batches 4 --seed 3 --threads 2 -o "$TMP/s_v3" &&
            chk slices "$TMP/cube.npy" "$TMP/s_v3" "" 0 4 $W 6
        expect_ok sample "$V3" --window 9,3,44,1 --batch 5 --batches 3 --seed 4 -o "$TMP/s_v3b" &&
            chk slices "$TMP/cube.npy" "$TMP/s_v3b" "" 0 3 9,3,44,1 5
        rm -rf "$TMP/s_v3" "$TMP/s_v3b"
    fi
done

# ---- determinism: same seed → identical files, whatever threads and prefetch
expect_ok sample "$V2" --window $W --batch 8 --batches 7 --seed 42 --threads 1 --prefetch 0 -o "$TMP/d1"
expect_ok sample "$V2" --window $W --batch 8 --batches 7 --seed 42 --threads 2 --prefetch 5 -o "$TMP/d2"
same_files "$TMP/d1" "$TMP/d2"
expect_ok sample "$V2" --window $W --batch 8 --batches 7 --seed 42 -o "$TMP/d3"
same_files "$TMP/d1" "$TMP/d3"
# any batch alone from its step number
for s in 0 3 6; do
    rm -rf "$TMP/d4"
    expect_ok sample "$V2" --window $W --batch 8 --batches 1 --seed 42 --start $s -o "$TMP/d4" &&
        { [ "$(ls "$TMP/d4")" = "$(printf 'batch_%s.npy\norigins_%s.npy' $s $s)" ] || fail "--start $s wrote $(ls "$TMP/d4")"; }
    CHECKS=$((CHECKS + 1))
    cmp -s "$TMP/d1/batch_$s.npy" "$TMP/d4/batch_$s.npy" && cmp -s "$TMP/d1/origins_$s.npy" "$TMP/d4/origins_$s.npy" ||
        fail "batch $s alone (--start $s) differs from batch $s of the full run"
done
rm -rf "$TMP/d4"
expect_ok sample "$V2" --window $W --batch 8 --batches 3 --seed 42 --start 4 --prefetch 1 -o "$TMP/d4"
for s in 4 5 6; do
    CHECKS=$((CHECKS + 1))
    cmp -s "$TMP/d1/batch_$s.npy" "$TMP/d4/batch_$s.npy" || fail "batch $s (--start 4) differs"
done
# another seed, other windows
expect_ok sample "$V2" --window $W --batch 8 --batches 1 --seed 43 -o "$TMP/d5"
CHECKS=$((CHECKS + 1))
cmp -s "$TMP/d1/origins_0.npy" "$TMP/d5/origins_0.npy" && fail "seeds 42 and 43 drew the same origins"
# the largest seed is a seed like any other
expect_ok sample "$V2" --window $W --batch 2 --batches 1 --seed 18446744073709551615 -o "$TMP/d6" &&
    chk slices "$TMP/cube.npy" "$TMP/d6" "" 0 1 $W 2

# ---- coverage of an epoch without replacement
# random: (6,7) window (2,3) → 5×5 = 25 origins; batch 5 → 5 batches per epoch
expect_ok sample "$TMP/tiny" --window 2,3 --batch 5 --batches 1 --seed 9 --bench &&
    "$PY" -c "import json,sys; j=json.loads(open('$TMP/out').read()); sys.exit(0 if (j['epoch_windows'], j['epoch_batches']) == (25, 5) else 1)" ||
    fail "tiny: epoch size $(cat "$TMP/out")"
expect_ok sample "$TMP/tiny" --window 2,3 --batch 5 --batches 15 --seed 9 -o "$TMP/cov" &&
    chk cover "$TMP/tiny.npy" "$TMP/cov" 0 3 5 5 2,3 1,1
# batch 4 does not divide 25: whole batches only, still no repeats within the epoch
expect_ok sample "$TMP/tiny" --window 2,3 --batch 4 --batches 6 --seed 9 -o "$TMP/cov4" &&
    "$PY" - "$TMP/cov4" <<'EOF' || fail "tiny batch 4: a window repeated within epoch 0"
import sys, numpy as np
o = np.concatenate([np.load(f"{sys.argv[1]}/origins_{k}.npy") for k in range(6)])
sys.exit(0 if len({tuple(r) for r in o}) == 24 else 1)
EOF
# whole-array windows: one origin, every batch the same
expect_ok sample "$TMP/tiny" --window 6,7 --batch 1 --batches 3 --seed 1 -o "$TMP/cov1" &&
    chk cover "$TMP/tiny.npy" "$TMP/cov1" 0 1 1 1 6,7 1,1
# grid: (10,13) window (4,4) overlap (2,1) → stride (2,3): 4 × 4 = 16 origins
expect_ok sample "$TMP/grid" --window 4,4 --mode grid --overlap 2,1 --batch 4 --batches 8 --seed 5 -o "$TMP/gr" &&
    chk cover "$TMP/grid.npy" "$TMP/gr" 0 2 4 4 4,4 2,3
# grid without overlap: (10,13) window (5,4) → 2 × 3 tiles
expect_ok sample "$TMP/grid" --window 5,4 --mode grid --batch 3 --batches 4 --seed 5 -o "$TMP/gr0" &&
    chk cover "$TMP/grid.npy" "$TMP/gr0" 0 2 2 3 5,4 5,4
# resuming mid-epoch in grid mode gives the same batches
expect_ok sample "$TMP/grid" --window 4,4 --mode grid --overlap 2,1 --batch 4 --batches 2 --seed 5 --start 5 -o "$TMP/gr2" &&
    for s in 5 6; do
        CHECKS=$((CHECKS + 1))
        cmp -s "$TMP/gr/origins_$s.npy" "$TMP/gr2/origins_$s.npy" || fail "grid batch $s alone differs"
    done

# 0-d array: the window is the whole (scalar) array
if expect_ok create "$TMP/zerod" --shape "" --dtype float64 --zarr-format 3 --fill-value 2.5; then
    expect_ok sample "$TMP/zerod" --window "" --batch 1 --batches 2 --seed 1 -o "$TMP/z0" &&
        "$PY" - "$TMP/z0" <<'EOF' || fail "0-d sample: $(ls "$TMP/z0")"
import sys, numpy as np
b, o = np.load(f"{sys.argv[1]}/batch_1.npy"), np.load(f"{sys.argv[1]}/origins_1.npy")
sys.exit(0 if b.shape == (1,) and b[0] == 2.5 and o.shape == (1, 0) else 1)
EOF
fi

# ---- several sources aligned through shared dimension names
A="$TMP/A"
if expect_ok create "$A" --shape 20,30,40 --chunks 3,7,9 --dtype int32 --zarr-format 3 --dimension-names time,y,x &&
    expect_ok put "$A" "$TMP/A.npy"; then
    expect_ok sample --source A="$A":4,8,8 --source "B=$TMP/B:4,6,10,1" --source "C=$TMP/C:4" \
        --dims B=time,y,x,chan --dims C=time --offset B=2,3,1,0 --offset C=5 --jitter B=1,2,0,0 \
        --batch 16 --batches 6 --seed 77 -o "$TMP/al" &&
        chk align "$TMP" 6 16 1,2,0 2,3,1
    # the same run again: identical
    expect_ok sample --source A="$A":4,8,8 --source "B=$TMP/B:4,6,10,1" --source "C=$TMP/C:4" \
        --dims B=time,y,x,chan --dims C=time --offset B=2,3,1,0 --offset C=5 --jitter B=1,2,0,0 \
        --batch 16 --batches 6 --seed 77 --threads 1 --prefetch 0 -o "$TMP/al2" &&
        same_files "$TMP/al" "$TMP/al2"
    # without shared names (positional dim0.. for both), B's 'chan' would be
    # dim3 and C's time dim0 = A's time: still aligned on dim0..2
    expect_ok sample --source A="$A":4,8,8 --source "B=$TMP/B:4,6,10,1" --dims A=dim0,dim1,dim2 \
        --batch 4 --batches 2 --seed 1 -o "$TMP/al3" &&
        "$PY" - "$TMP/al3" <<'EOF' || fail "positional dims: A and B origins differ on dims 0-2"
import sys, numpy as np
for k in range(2):
    a, b = np.load(f"{sys.argv[1]}/A_origins_{k}.npy"), np.load(f"{sys.argv[1]}/B_origins_{k}.npy")
    if not (a == b[:, :3]).all(): sys.exit(1)
EOF
    # shared ranges that do not overlap: an error naming the dimension
    expect_fail 1 "time" sample --source A="$A":4,8,8 --source "C=$TMP/C:4" --dims C=time --offset C=40 \
        --batch 2 --batches 1 --seed 1 --bench
fi

# ---- NaN rejection
expect_ok sample "$TMP/nan" --window 4,4 --batch 9 --batches 9 --seed 2 -o "$TMP/n0" &&
    chk nan "$TMP/n0" 0 9 && { [ "$(cat "$TMP/chk.out")" -gt 0 ] || fail "no window with NaN in a whole epoch without --reject-nan"; }
expect_ok sample "$TMP/nan" --window 4,4 --batch 9 --batches 9 --seed 2 --reject-nan -o "$TMP/n1" &&
    chk nan "$TMP/n1" 0 9 && { [ "$(cat "$TMP/chk.out")" = 0 ] || fail "--reject-nan delivered $(cat "$TMP/chk.out") windows with NaN"; } &&
    chk slices "$TMP/nan.npy" "$TMP/n1" "" 0 9 4,4 9
expect_ok sample "$TMP/nan" --window 4,4 --batch 9 --batches 9 --seed 2 --reject-nan -o "$TMP/n2" &&
    { grep -Eq "rejected [1-9][0-9]* windows" "$TMP/out" || fail "--reject-nan summary: $(cat "$TMP/out")"; }
same_files "$TMP/n1" "$TMP/n2"
expect_ok sample "$TMP/nan" --window 4,4 --batch 9 --batches 9 --seed 2 --reject-nan --bench &&
    chk bench "$(cat "$TMP/out")" 81 $((81 * 16 * 4)) &&
    { [ "$(cat "$TMP/chk.out")" -gt 0 ] || fail "--bench with --reject-nan reports 0 rejected"; }
# a batch alone from its step is the same with rejection too
expect_ok sample "$TMP/nan" --window 4,4 --batch 9 --batches 1 --seed 2 --reject-nan --start 7 -o "$TMP/n3" &&
    { CHECKS=$((CHECKS + 1)); cmp -s "$TMP/n1/batch_7.npy" "$TMP/n3/batch_7.npy" || fail "--reject-nan batch 7 alone differs"; }
# nothing but NaN: give up with an error, not a hang
expect_fail 1 "" sample "$TMP/allnan" --window 2,2 --batch 2 --batches 1 --seed 1 --reject-nan -o "$TMP/n4"

# ---- fill-value rejection (missing chunk reads as fill, plus a stray -1)
expect_ok sample "$TMP/fill" --window 3,3 --batch 10 --batches 10 --seed 3 -o "$TMP/f0" &&
    chk fill "$TMP/f0" 10 -1 && { [ "$(cat "$TMP/chk.out")" -gt 0 ] || fail "no window with fill value without --reject-fill"; }
expect_ok sample "$TMP/fill" --window 3,3 --batch 10 --batches 10 --seed 3 --reject-fill -o "$TMP/f1" &&
    chk fill "$TMP/f1" 10 -1 && { [ "$(cat "$TMP/chk.out")" = 0 ] || fail "--reject-fill delivered $(cat "$TMP/chk.out") windows with the fill value"; } &&
    chk slices "$TMP/fill.npy" "$TMP/f1" "" 0 10 3,3 10
grep -Eq "rejected [1-9][0-9]* windows" "$TMP/out" || fail "--reject-fill summary: $(cat "$TMP/out")"

# ---- --bench: one JSON line, figures consistent with the run
expect_ok sample "$V2" --window $W --batch 8 --batches 5 --seed 1 --bench --threads 2 &&
    { [ "$(wc -l <"$TMP/out")" = 1 ] || fail "--bench printed $(wc -l <"$TMP/out") lines"; } &&
    chk bench "$(cat "$TMP/out")" 40 $((40 * 4 * 16 * 16 * 5 * 4))

# ---- usage errors (exit 2)
expect_fail 2 "missing PATH" sample --batch 2 --batches 1 --seed 1 --bench
expect_fail 2 "missing --window" sample "$V2" --batch 2 --batches 1 --seed 1 --bench
expect_fail 2 "not both" sample "$V2" --window $W --source a="$V2":$W --batches 1 --seed 1 --bench
expect_fail 2 "missing --batches" sample "$V2" --window $W --seed 1 --bench
expect_fail 2 "missing --seed" sample "$V2" --window $W --batches 1 --bench
expect_fail 2 "missing -o DIR" sample "$V2" --window $W --batches 1 --seed 1
expect_fail 2 "drop -o" sample "$V2" --window $W --batches 1 --seed 1 --bench -o "$TMP/x"
expect_fail 2 "bad --batch" sample "$V2" --window $W --batch 0 --batches 1 --seed 1 --bench
expect_fail 2 "bad --batches" sample "$V2" --window $W --batches -3 --seed 1 --bench
expect_fail 2 "bad --seed" sample "$V2" --window $W --batches 1 --seed -1 --bench
expect_fail 2 "bad --seed" sample "$V2" --window $W --batches 1 --seed 18446744073709551616 --bench
expect_fail 2 "bad --start" sample "$V2" --window $W --batches 1 --seed 1 --start x --bench
expect_fail 2 "bad --mode" sample "$V2" --window $W --batches 1 --seed 1 --mode tiles --bench
expect_fail 2 "bad --prefetch" sample "$V2" --window $W --batches 1 --seed 1 --prefetch -1 --bench
expect_fail 2 "bad --prefetch" sample "$V2" --window $W --batches 1 --seed 1 --prefetch 257 --bench
expect_fail 2 "bad --threads" sample "$V2" --window $W --batches 1 --seed 1 --threads many --bench
expect_fail 2 "bad --window" sample "$V2" --window 4,0,16,5 --batches 1 --seed 1 --bench
expect_fail 2 "4 dimensions" sample "$V2" --window 4,16,16 --batches 1 --seed 1 --bench
expect_fail 2 "--jitter" sample "$V2" --window $W --jitter 1,1 --batches 1 --seed 1 --bench
expect_fail 2 "no source names with PATH" sample "$V2" --window $W --jitter a=1,1,1,1 --batches 1 --seed 1 --bench
expect_fail 2 "needs --mode grid" sample "$V2" --window $W --overlap 1,1,1,1 --batches 1 --seed 1 --bench
expect_fail 2 "not below the window" sample "$V2" --window $W --mode grid --overlap 1,16,1,1 --batches 1 --seed 1 --bench
expect_fail 2 "bad --dims" sample "$V2" --window $W --dims t,,x,c --batches 1 --seed 1 --bench
expect_fail 2 "given twice" sample --source a="$V2":$W --source a="$V2":$W --batches 1 --seed 1 --bench
expect_fail 2 "NAME=PATH:WINDOW" sample --source a="$V2" --batches 1 --seed 1 --bench
expect_fail 2 "NAME must be" sample --source "a/b=$V2:$W" --batches 1 --seed 1 --bench
expect_fail 2 "no --source named 'c'" sample --source a="$V2":$W --jitter c=1,1,1,1 --batches 1 --seed 1 --bench
expect_fail 2 "say which source" sample --source a="$V2":$W --source b="$V2":$W --jitter 1,1,1,1 --batches 1 --seed 1 --bench
expect_fail 2 "needs a value" sample "$V2" --window $W --batches 1 --seed 1 --bench --source
expect_fail 2 "unknown option" sample "$V2" --window $W --batches 1 --seed 1 --bench --frobnicate
expect_fail 2 "--window goes with PATH" sample --source a="$V2":$W --window $W --batches 1 --seed 1 --bench

# ---- runtime errors (exit 1)
expect_fail 1 "nope" sample "$TMP/nope" --window 1 --batches 1 --seed 1 --bench
expect_fail 1 "" sample "$V2" --window 10,16,16,5 --batches 1 --seed 1 --bench
expect_fail 1 "fewer than one batch" sample "$TMP/tiny" --window 2,3 --batch 26 --batches 1 --seed 1 --bench
expect_fail 1 "fewer than one batch" sample "$TMP/tiny" --window 2,3 --batch 26 --batches 1 --seed 1 -o "$TMP/nodir"
[ -e "$TMP/nodir" ] && fail "a failed sample left its -o folder behind"
touch "$TMP/afile"
expect_fail 1 "not a folder" sample "$V2" --window $W --batches 1 --seed 1 -o "$TMP/afile"
expect_fail 1 "not a Zarr array" sample "$TMP" --window 1 --batches 1 --seed 1 --bench

# ---- help
expect_ok sample --help && { grep -q "^usage: zcube sample" "$TMP/out" || fail "sample --help"; }
expect_ok help sample && { grep -q -- "--reject-nan" "$TMP/out" || fail "help sample"; }
expect_ok help && { grep -q "^  sample " "$TMP/out" || fail "zcube help lacks sample"; }

finish
