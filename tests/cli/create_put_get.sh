#!/bin/bash
# tests/cli/create_put_get.sh — create arrays (Zarr v2 and v3, every dtype,
# several codecs, sharding, F order), put .npy files made by NumPy, get regions
# back and compare with NumPy slicing of the same data.
# Usage: bash create_put_get.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr

# ---- inputs, made by NumPy
"$PY" - "$TMP" <<'EOF' || { echo "FAIL: generating inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
shape = (23, 17)
def ints(dt):
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
arrays = {
    "bool": rng.random(shape) < 0.5,
    "int8": ints(np.int8), "int16": ints(np.int16), "int32": ints(np.int32), "int64": ints(np.int64),
    "uint8": ints(np.uint8), "uint16": ints(np.uint16), "uint32": ints(np.uint32), "uint64": ints(np.uint64),
    "float16": (rng.standard_normal(shape) * 100).astype(np.float16),
    "float32": (rng.standard_normal(shape) * 1e6).astype(np.float32),
    "float64": rng.standard_normal(shape) * 1e-3,
    "complex64": (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64),
    "complex128": rng.standard_normal(shape) - 1j * rng.standard_normal(shape),
}
for k in ("float16", "float32", "float64"):
    arrays[k][0, 0] = np.nan; arrays[k][1, 1] = np.inf; arrays[k][2, 2] = -np.inf; arrays[k][3, 3] = -0.0
letters = np.array(list("abcdefghij"))
arrays["S7"] = np.array(["".join(rng.choice(letters, rng.integers(0, 8))) for _ in range(23 * 17)], dtype="S7").reshape(shape)
uni = np.array(list("aé世🚀Ñz"))
arrays["U5"] = np.array(["".join(rng.choice(uni, rng.integers(0, 6))) for _ in range(23 * 17)], dtype="<U5").reshape(shape)
for k, a in arrays.items():
    np.save(f"{d}/in_{k}.npy", a)
# a 3-D float64 array for the small-memory walks, a patch, and variants of one array
cube = rng.standard_normal((9, 10, 11))
np.save(f"{d}/cube.npy", cube)
np.save(f"{d}/patch_2d.npy", ints(np.int32)[:5, :6])
np.save(f"{d}/patch_1d.npy", ints(np.int32)[:7, 0])
base = arrays["int32"]
np.save(f"{d}/in_int32_fortran.npy", np.asfortranarray(base))
np.save(f"{d}/in_int32_be.npy", base.astype(">i4"))
for v in ((2, 0), (3, 0)):
    with open(f"{d}/in_int32_v{v[0]}.npy", "wb") as f:
        np.lib.format.write_array(f, base, version=v)
np.save(f"{d}/in_cube_fortran_be.npy", np.asfortranarray(cube.astype(">f8")))
EOF

MAN="$TMP/manifest"
: >"$MAN"
DTYPES="bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 complex128 S7 U5"
REGIONS=("3:20:2,::3" "5" "-1,2:9" "...,4" "1:1" ":,-3:" "::7,16" "22,16" "0:100,-100:3")
CODECS2=("zstd" "blosc:lz4:5:shuffle" "gzip:3" "none" "zlib" "lz4" "bz2:1" "blosc:zstd:1:bitshuffle")
CODECS3=("zstd,crc32c" "blosc:zstd:3:bitshuffle" "gzip:1" "none" "zstd:1" "blosc:lz4hc:9:noshuffle" "lz4" "zlib:9")

i=0
for fmt in 2 3; do
    for dt in $DTYPES; do
        case $dt in S7) zdt='|S7' ;; U5) zdt='<U5' ;; *) zdt=$dt ;; esac
        if [ $fmt = 2 ]; then codec=${CODECS2[$((i % 8))]}; else codec=${CODECS3[$((i % 8))]}; fi
        i=$((i + 1))
        arr="$TMP/a${fmt}_$dt"
        expect_ok create "$arr" --shape 23,17 --chunks 5,4 --dtype "$zdt" --zarr-format $fmt --codec "$codec" || continue
        expect_ok put "$arr" "$TMP/in_$dt.npy" || continue
        [ $fmt = 2 ] && echo "zarr|$arr|$TMP/in_$dt.npy" >>"$MAN"
        expect_ok get "$arr" -o "$TMP/o${fmt}_${dt}_all.npy" && echo "sel|$TMP/o${fmt}_${dt}_all.npy|$TMP/in_$dt.npy|" >>"$MAN"
        for r in "${!REGIONS[@]}"; do
            out="$TMP/o${fmt}_${dt}_$r.npy"
            expect_ok get "$arr" --region "${REGIONS[$r]}" -o "$out" &&
                echo "sel|$out|$TMP/in_$dt.npy|${REGIONS[$r]}" >>"$MAN"
        done
    done
done

# ---- v3 sharded, v2 Fortran order, '.' and '/' separators
for variant in "3 --shards 10,8" "3 --shards 5,16" "2 --order F" "2 --separator /" "3 --separator ."; do
    set -- $variant
    fmt=$1
    shift
    arr="$TMP/var_${fmt}_${1#--}_$((++SEQN))"
    if expect_ok create "$arr" --shape 23,17 --chunks 5,4 --dtype int32 --zarr-format "$fmt" "$@" &&
        expect_ok put "$arr" "$TMP/in_int32.npy"; then
        for r in "" "3:20:2,::3" "-1,2:9" "4:19,1:16"; do
            out="$TMP/var_$((++SEQN)).npy"
            expect_ok get "$arr" --region "$r" -o "$out" && echo "sel|$out|$TMP/in_int32.npy|$r" >>"$MAN"
        done
    fi
done

# ---- .npy variants on input: Fortran order, big endian, format versions 2 and 3
for v in fortran be v2 v3; do
    arr="$TMP/npy_$v"
    expect_ok create "$arr" --shape 23,17 --chunks 6,5 --dtype int32 --zarr-format 3 &&
        expect_ok put "$arr" "$TMP/in_int32_$v.npy" &&
        expect_ok get "$arr" -o "$TMP/npy_$v.npy" && echo "sel|$TMP/npy_$v.npy|$TMP/in_int32.npy|" >>"$MAN"
done

# ---- put into regions (partial chunks are read, updated, written back)
arr="$TMP/patched"
if expect_ok create "$arr" --shape 23,17 --chunks 5,4 --dtype int32 --zarr-format 2 &&
    expect_ok put "$arr" "$TMP/in_int32.npy" &&
    expect_ok put "$arr" "$TMP/patch_2d.npy" --region "2:7,3:9" &&
    expect_ok get "$arr" -o "$TMP/patched1.npy"; then
    echo "patch|$TMP/patched1.npy|$TMP/in_int32.npy|$TMP/patch_2d.npy|2:7,3:9" >>"$MAN"
    # a strided, integer-indexed region: 1-D patch into rows 1,4,...,19 of column 5
    expect_ok put "$arr" "$TMP/patch_1d.npy" --region "1:20:3,5" &&
        expect_ok get "$arr" -o "$TMP/patched2.npy" &&
        echo "patch2|$TMP/patched2.npy|$TMP/patched1.npy|$TMP/patch_1d.npy|1:20:3,5" >>"$MAN"
fi

# ---- small --max-mem: many boxes, chunks cut below one chunk, sharded writes
for spec in "--zarr-format 2" "--zarr-format 3 --shards 8,6,10"; do
    arr="$TMP/cube_$((++SEQN))"
    expect_ok create "$arr" --shape 9,10,11 --chunks 4,3,5 --dtype float64 $spec || continue
    expect_ok put "$arr" "$TMP/cube.npy" --max-mem 1KB || continue
    for mem in 8B 100B 1KB 1MB; do
        for r in "" "1:8:2,::3,2:" "...,7" "3"; do
            out="$TMP/cube_o_$((++SEQN)).npy"
            expect_ok get "$arr" --region "$r" --max-mem $mem --threads 2 -o "$out" &&
                echo "sel|$out|$TMP/cube.npy|$r" >>"$MAN"
        done
    done
    # Fortran-order big-endian input through a tiny buffer
    out="$TMP/cube_fbe_$((++SEQN)).npy"
    expect_ok put "$arr" "$TMP/in_cube_fortran_be.npy" --max-mem 200B &&
        expect_ok get "$arr" -o "$out" && echo "sel|$out|$TMP/cube.npy|" >>"$MAN"
done

# ---- random regions against NumPy: same selection, or both refuse (IndexError)
RC3="$TMP/randcube"
if expect_ok create "$RC3" --shape 9,10,11 --chunks 4,3,5 --dtype float64 --zarr-format 3 --shards 8,6,10 &&
    expect_ok put "$RC3" "$TMP/cube.npy"; then
    "$PY" - "$TMP/cube.npy" >"$TMP/regions" <<'PYEOF'
import random, sys, numpy as np
a = np.load(sys.argv[1])
rnd = random.Random(5)
def part():
    return "" if rnd.random() < 0.3 else str(rnd.randint(-14, 14))
def entry():
    r = rnd.random()
    if r < 0.25:
        return str(rnd.randint(-12, 12))
    s = part() + ":" + part()
    if rnd.random() < 0.5:
        s += ":" + str(rnd.randint(1, 4))
    return s
for _ in range(60):
    items = [entry() for _ in range(rnd.randint(0, 3))]
    if rnd.random() < 0.2:
        items.insert(rnd.randint(0, len(items)), "...")
    text = ",".join(items)
    try:
        a[eval(f"np.s_[{text}]")] if text else a
        print("ok\t" + text)
    except IndexError:
        print("err\t" + text)
PYEOF
    k=0
    while IFS=$'\t' read -r want r; do
        k=$((k + 1))
        if [ "$want" = ok ]; then
            expect_ok get "$RC3" --region "$r" --max-mem 500B -o "$TMP/rr$k.npy" &&
                echo "sel|$TMP/rr$k.npy|$TMP/cube.npy|$r" >>"$MAN"
        else
            expect_fail 2 "out of bounds" get "$RC3" --region "$r" -o "$TMP/rr$k.npy"
        fi
    done <"$TMP/regions"
fi

# ---- get to standard output
arr="$TMP/a3_float32"
if [ -d "$arr" ]; then
    CHECKS=$((CHECKS + 1))
    if "$Z" get "$arr" --region "2:9,::2" -o - --max-mem 64B >"$TMP/stdout.npy"; then
        echo "sel|$TMP/stdout.npy|$TMP/in_float32.npy|2:9,::2" >>"$MAN"
    else
        fail "get -o - failed"
    fi
fi

# ---- fill values, never-written arrays, 0-d and empty selections
expect_ok create "$TMP/fnan" --shape 7,3 --chunks 2,2 --dtype float32 --fill-value nan &&
    expect_ok get "$TMP/fnan" -o "$TMP/fnan.npy" && echo "fill|$TMP/fnan.npy|float32|7,3|nan" >>"$MAN"
expect_ok create "$TMP/fninf" --shape 4 --chunks 3 --dtype float64 --fill-value -inf --zarr-format 2 &&
    expect_ok get "$TMP/fninf" -o "$TMP/fninf.npy" && echo "fill|$TMP/fninf.npy|float64|4|-inf" >>"$MAN"
expect_ok create "$TMP/fint" --shape 5,6 --chunks 5,6 --dtype int16 --fill-value 7 --zarr-format 2 &&
    expect_ok get "$TMP/fint" --region "1:3" -o "$TMP/fint.npy" && echo "fill|$TMP/fint.npy|int16|2,6|7" >>"$MAN"
expect_ok create "$TMP/empty" --shape 23,17 --chunks 5,4 --dtype int32 &&
    expect_ok put "$TMP/empty" "$TMP/in_int32.npy" &&
    expect_ok get "$TMP/empty" --region "5:5" -o "$TMP/empty.npy" &&
    echo "sel|$TMP/empty.npy|$TMP/in_int32.npy|5:5" >>"$MAN"
"$PY" -c "import numpy as np; np.save('$TMP/scalar.npy', np.array(2.5))"
expect_ok create "$TMP/zerod" --shape "" --dtype float64 --zarr-format 3 &&
    expect_ok put "$TMP/zerod" "$TMP/scalar.npy" &&
    expect_ok get "$TMP/zerod" -o "$TMP/zerod.npy" && echo "sel|$TMP/zerod.npy|$TMP/scalar.npy|" >>"$MAN"

# ---- arrays written into a group with consolidated metadata are entered in it
# (ls and xarray read the hierarchy from .zmetadata; a new member was missing)
"$PY" -c "import zarr; g = zarr.open_group('$TMP/cons', mode='w'); g.create_dataset('a', shape=(2,)); g.create_dataset('sub-x', shape=(1,)); zarr.consolidate_metadata('$TMP/cons')" ||
    fail "making a consolidated group"
expect_ok create "$TMP/cons/sub/x" --shape 4,4 --chunks 2,2 --dtype float32 --zarr-format 2 &&
    expect_ok eval 'u + 1' --in u="$TMP/cons/sub/x" -o "file://$TMP/cons/y" --zarr-format 2 &&
    expect_ok ls "$TMP/cons" && {
    for node in "  a " "  sub " "    x " "  y "; do
        grep -qF -- "$node" "$TMP/out" || fail "ls of a consolidated group does not list '$node': $(cat "$TMP/out")"
    done
    # a parent's children right below it ('/' before '-')
    [ "$(awk '{print $1}' "$TMP/out" | tr '\n' ' ')" = "$TMP/cons a sub x sub-x y " ] ||
        fail "ls of a consolidated group in the wrong order: $(cat "$TMP/out")"
    "$PY" -c "import zarr; g = zarr.open_consolidated('$TMP/cons'); assert (g['y'][:] == 1).all() and g['sub/x'].shape == (4, 4)" ||
        fail "zarr.open_consolidated does not see what zcube wrote"
}

# ---- attributes and dimension names reach the metadata
if expect_ok create "$TMP/attrs" --shape 4,5 --chunks 2,5 --dtype uint8 --attrs '{"units": "m", "n": [1, 2]}' \
    --dimension-names y,x && expect_ok info --json "$TMP/attrs"; then
    "$PY" - "$TMP/out" <<'EOF' || fail "info --json of attrs"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["attributes"] == {"units": "m", "n": [1, 2]}, j["attributes"]
assert j["dimension_names"] == ["y", "x"], j["dimension_names"]
assert j["shape"] == [4, 5] and j["chunks"] == [2, 5] and j["node"] == "array", j
EOF
fi

# ---- default chunks: the shape halved along the longest dimension down to <= 1 MiB
if expect_ok create "$TMP/auto" --shape 1000,1000 --dtype float64 && expect_ok info --json "$TMP/auto"; then
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["chunks"]; assert c == [250, 500], c' "$TMP/out" ||
        fail "default chunks"
fi

# ---- compare everything against NumPy
"$PY" - "$MAN" <<'EOF' || fail "NumPy comparison"
import sys, numpy as np
bad = 0
n = 0
def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"dtype/shape {a.dtype}{a.shape} != {b.dtype}{b.shape}"
    if a.dtype.kind in "fc":
        ok = np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a.real), np.signbit(b.real))
    else:
        ok = np.array_equal(a, b)
    return None if ok else "values differ"
for line in open(sys.argv[1]):
    parts = line.rstrip("\n").split("|")
    kind, out = parts[0], parts[1]
    if kind == "zarr":  # zarr-python reads the v2 arrays zcube wrote
        import zarr
        got = zarr.open_array(out, mode="r")[...]
        exp = np.load(parts[2])
        n += 1
        why = same(np.asarray(got), exp)
        if why:
            bad += 1
            print(f"FAIL: zarr-python reading {out}: {why}")
        continue
    got = np.load(out)
    if kind == "sel":
        src = np.load(parts[2])
        exp = src[eval(f"np.s_[{parts[3]}]")] if parts[3] else src
        exp = np.asarray(exp, dtype=src.dtype)  # a single string element keeps its itemsize
    elif kind in ("patch", "patch2"):
        exp = np.load(parts[2]).copy()
        exp[eval(f"np.s_[{parts[4]}]")] = np.load(parts[3])
    elif kind == "fill":
        shape = tuple(int(x) for x in parts[3].split(","))
        exp = np.full(shape, float(parts[4]) if parts[2].startswith("float") else int(parts[4]), dtype=parts[2])
    n += 1
    why = same(got, np.asarray(exp))
    if why:
        bad += 1
        print(f"FAIL: {out} ({line.strip()}): {why}")
print(f"{n - bad} of {n} outputs match NumPy")
sys.exit(1 if bad or n == 0 else 0)
EOF

finish
