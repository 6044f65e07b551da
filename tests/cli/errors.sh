#!/bin/bash
# tests/cli/errors.sh — bad input of every kind must end in ONE stderr line
# "zcube: <cmd>: ..." with the expected fragment, exit 1 (runtime) or 2
# (usage), and never a signal. Inputs are made with zcube itself, printf,
# truncate and (mutated files) python3 without modules.
# Usage: bash errors.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"
zc_require_python

A="$TMP/a"   # int32 (23, 17), chunks (5, 4), v2, zstd
F="$TMP/f"   # float32 (23, 17), v3
expect_ok create "$A" --shape 23,17 --chunks 5,4 --dtype int32 --zarr-format 2 --fill-value 3 || finish
expect_ok create "$F" --shape 23,17 --chunks 5,4 --dtype float32 --zarr-format 3 || finish
expect_ok get "$A" -o "$TMP/int32.npy" || finish
expect_ok get "$A" --region "0:5" -o "$TMP/int32_small.npy"

# ---- command line
expect_fail 2 "missing command" 
expect_fail 2 "unknown command" frobnicate
expect_fail 2 "unknown option" --bogus
expect_fail 2 "unknown option '--bogus'" get "$A" --bogus -o x.npy
expect_fail 2 "missing -o" get "$A"
expect_fail 2 "needs a value" get "$A" -o
expect_fail 2 "missing argument" put "$A"
expect_fail 2 "unexpected argument" info "$A" extra
expect_fail 2 "unknown command" help frobnicate
expect_ok help get && grep -q "^usage: zcube get" "$TMP/out" || fail "help get"
expect_ok get --help && grep -q "region" "$TMP/out" || fail "get --help"
expect_ok --version && grep -q "^zcube [0-9]" "$TMP/out" || fail "--version"

# ---- regions
expect_fail 2 "more than two ':'" get "$A" --region "1:2:3:4" -o "$TMP/x.npy"
expect_fail 2 "'a' is not an integer" get "$A" --region "a,1" -o "$TMP/x.npy"
expect_fail 2 "negative slice steps are not supported (dimension 1" get "$A" --region ":,::-1" -o "$TMP/x.npy"
expect_fail 2 "slice step cannot be zero" get "$A" --region "::0" -o "$TMP/x.npy"
expect_fail 2 "index 23 is out of bounds for dimension 0 with size 23" get "$A" --region "23" -o "$TMP/x.npy"
expect_fail 2 "index -18 is out of bounds for dimension 1 with size 17" get "$A" --region "0,-18" -o "$TMP/x.npy"
expect_fail 2 "3 entries for a 2-dimensional array" get "$A" --region "1,2,3" -o "$TMP/x.npy"
expect_fail 2 "only one '...'" get "$A" --region "...,..." -o "$TMP/x.npy"
expect_fail 2 "empty entry" put "$A" "$TMP/int32.npy" --region "1,,2"
[ -e "$TMP/x.npy" ] && fail "a failed get left $TMP/x.npy behind"

# ---- paths that are not arrays
expect_fail 1 "No such file or directory" info "$TMP/nope"
expect_fail 1 "No such file or directory" get "$TMP/nope" -o "$TMP/x.npy"
mkdir -p "$TMP/plain"
expect_fail 1 "is not a Zarr array" get "$TMP/plain" -o "$TMP/x.npy"
expect_fail 1 "is not a Zarr array or group" info "$TMP/plain"
expect_fail 1 "is not a Zarr array or group" ls "$TMP/plain"
expect_fail 1 "is not a folder" info "$TMP/int32.npy"
expect_fail 1 "group, not an array" get "$DATA/zarrita/v2/data.zarr" -o "$TMP/x.npy"
expect_fail 1 "cannot create" get "$A" -o "$TMP/no/such/dir/x.npy"

# ---- create
expect_fail 2 "bad --dtype 'float31'" create "$TMP/c1" --shape 10 --dtype float31
expect_fail 2 "missing --shape" create "$TMP/c1" --dtype int8
expect_fail 2 "missing --dtype" create "$TMP/c1" --shape 10
expect_fail 2 "bad --shape '10,y': 'y' is not an integer" create "$TMP/c1" --shape 10,y --dtype int8
expect_fail 2 "must be positive" create "$TMP/c1" --shape 10,0 --dtype int8 --chunks 1,-1
expect_fail 2 "--chunks has 1 entries but --shape has 2" create "$TMP/c1" --shape 10,10 --chunks 5 --dtype int8
expect_fail 2 "bad --zarr-format '4'" create "$TMP/c1" --shape 10 --dtype int8 --zarr-format 4
expect_fail 2 "bad --fill-value 'hello'" create "$TMP/c1" --shape 10 --dtype int8 --fill-value hello
expect_fail 2 "bad --attrs" create "$TMP/c1" --shape 10 --dtype int8 --attrs '[1, 2]'
expect_fail 2 "bad --attrs" create "$TMP/c1" --shape 10 --dtype int8 --attrs '{"a":'
expect_fail 2 "bad --order" create "$TMP/c1" --shape 10 --dtype int8 --order X
expect_fail 2 "bad --dimension-names" create "$TMP/c1" --shape 10,3 --dtype int8 --dimension-names x
expect_fail 1 "zebra" create "$TMP/c1" --shape 10 --dtype int8 --codec zebra
expect_fail 1 "sharding needs zarr_format 3" create "$TMP/c1" --shape 10 --chunks 5 --shards 10 --dtype int8 --zarr-format 2
expect_fail 1 "multiple of chunks" create "$TMP/c1" --shape 10 --chunks 4 --shards 6 --dtype int8
expect_fail 1 "already exists" create "$A" --shape 10 --dtype int8 --zarr-format 2
expect_ok create "$A.2" --shape 10 --dtype int8 && expect_ok create "$A.2" --shape 12 --dtype int8 --overwrite
expect_fail 1 "overflows" create "$TMP/huge" --shape 9223372036854775807,9223372036854775807 --chunks 1,1 --dtype float64

# ---- .npy input
cp "$TMP/int32.npy" "$TMP/trunc.npy"
truncate -s -5 "$TMP/trunc.npy"
expect_fail 1 "truncated .npy" put "$A" "$TMP/trunc.npy"
head -c 40 "$TMP/int32.npy" >"$TMP/trunc_header.npy"
expect_fail 1 "truncated .npy header" put "$A" "$TMP/trunc_header.npy"
printf 'hello world, not numpy at all' >"$TMP/text.npy"
expect_fail 1 "not a .npy file" put "$A" "$TMP/text.npy"
: >"$TMP/zero.npy"
expect_fail 1 "not a .npy file" put "$A" "$TMP/zero.npy"
expect_fail 1 "cannot open" put "$A" "$TMP/missing.npy"
# header claiming a huge shape (data truncated)
hdr="{'descr': '<i4', 'fortran_order': False, 'shape': (1000000000000, 1000000), }"
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#hdr} + 1) % 256 )))\\x$(printf %02x $(( (${#hdr} + 1) / 256 )))"; printf '%s\n' "$hdr"; } >"$TMP/huge.npy"
expect_fail 1 "truncated .npy" put "$A" "$TMP/huge.npy"
hdr="{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( ${#hdr} + 1 )))\\x00"; printf '%s\n' "$hdr"; } >"$TMP/object.npy"
expect_fail 1 "Python objects" put "$A" "$TMP/object.npy"
hdr="{'descr': '<i4', 'fortran_order': False, 'shape': (23, 17), 'extra': 1, }"
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( ${#hdr} + 1 )))\\x00"; printf '%s\n' "$hdr"; } >"$TMP/extra.npy"
expect_fail 1 "malformed .npy header" put "$A" "$TMP/extra.npy"

# ---- dtype and shape mismatch on put
expect_fail 1 "dtype mismatch" put "$F" "$TMP/int32.npy"
grep -q "int32" "$TMP/err" && grep -q "float32" "$TMP/err" || fail "dtype mismatch message names both dtypes: $(cat "$TMP/err")"
expect_fail 1 "shape mismatch" put "$A" "$TMP/int32_small.npy"
grep -qF "(5, 17)" "$TMP/err" && grep -qF "(23, 17)" "$TMP/err" || fail "shape mismatch names both shapes"
expect_fail 1 "shape mismatch" put "$A" "$TMP/int32.npy" --region "0:22"

# ---- malformed metadata written by hand
mkdir -p "$TMP/m1" "$TMP/m2" "$TMP/m3" "$TMP/m4" "$TMP/m5"
printf '{"zarr_format": 2, "shape": [10], ' >"$TMP/m1/.zarray"
expect_fail 1 ".zarray" info "$TMP/m1"
expect_fail 1 ".zarray" get "$TMP/m1" -o "$TMP/x.npy"
printf '{"zarr_format": 2, "shape": [10], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C", "filters": null}' >"$TMP/m2/.zarray"
expect_fail 1 "chunks" info "$TMP/m2"
printf '{"zarr_format": 2, "shape": [-10], "chunks": [5], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C", "filters": null}' >"$TMP/m3/.zarray"
expect_fail 1 "shape" info "$TMP/m3"
printf '{"zarr_format": 2, "shape": [10], "chunks": [5], "dtype": "<i4", "compressor": {"id": "nosuchcodec"}, "fill_value": 0, "order": "C", "filters": null}' >"$TMP/m4/.zarray"
expect_fail 1 "nosuchcodec" get "$TMP/m4" -o "$TMP/x.npy"
printf '{"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "int32", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}}, "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "storage_transformers": [{"name": "nope"}]}' >"$TMP/m5/zarr.json"
expect_fail 1 "storage transformers" info "$TMP/m5"
[ -e "$TMP/x.npy" ] && fail "a failed get left $TMP/x.npy behind"

# ---- standard output closed early: an error line, not SIGPIPE
expect_ok create "$TMP/big" --shape 1000,1000 --chunks 100,100 --dtype float64 --fill-value 1
CHECKS=$((CHECKS + 1))
"$Z" get "$TMP/big" -o - --max-mem 64KB 2>"$TMP/pipe_err" | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 1 ] || ! grep -q "^zcube: get: writing to standard output: Broken pipe" "$TMP/pipe_err"; then
    fail "get -o - | head: exit $rc: $(cat "$TMP/pipe_err")"
fi

# ---- robustness: odd regions, mutated .npy headers and metadata never crash
check_no_crash() { # ARGS...: any exit below 128 and at most one stderr line
    CHECKS=$((CHECKS + 1))
    run "$@"
    if [ "$RC" -ge 128 ] || [ "$(wc -l <"$TMP/err")" -gt 1 ]; then
        fail "zcube $* -> exit $RC: $(head -c 600 "$TMP/err")"
    fi
}
for r in "" " " ":" "::" ":::" "1:" "-0" "+3" "9223372036854775807" "-9223372036854775808" \
    "1:9223372036854775807:9223372036854775807" "-9223372036854775808:9223372036854775807" "[" "]" "[]" "()" \
    "(1,2" "[1,2]" $'\t1' "1 2" "0x10" "1e3" "--" "," ",," "..." "... ," "1,...," "0:0:1,0:0:1," \
    "....,1" ". . ." "1:2:" "::3,::3,::3" $'\xff\xfe' "1,2,...,3"; do
    check_no_crash get "$A" --region "$r" -o "$TMP/r.npy" --max-mem 64B
done
"$PY" - "$TMP" <<'PYEOF' || fail "python3 could not write the mutated inputs"
import os, random, sys
d = sys.argv[1]
rnd = random.Random(11)
good = open(f"{d}/int32.npy", "rb").read()
os.makedirs(f"{d}/mut", exist_ok=True)
for i in range(60):
    b = bytearray(good[:200])
    for _ in range(rnd.randint(1, 4)):
        b[rnd.randrange(len(b))] = rnd.randrange(256)
    open(f"{d}/mut/npy{i}.npy", "wb").write(bytes(b) + good[200:rnd.choice([200, len(good)])])
meta = open(f"{d}/a/.zarray").read()
for i in range(40):
    m = list(meta)
    for _ in range(rnd.randint(1, 3)):
        m[rnd.randrange(len(m))] = rnd.choice('{}[]":,0123456789-e.x ')
    os.makedirs(f"{d}/mut/z{i}", exist_ok=True)
    open(f"{d}/mut/z{i}/.zarray", "w").write("".join(m))
PYEOF
expect_ok create "$TMP/a_mut" --shape 23,17 --chunks 5,4 --dtype int32 --zarr-format 2
for f in "$TMP"/mut/npy*.npy; do check_no_crash put "$TMP/a_mut" "$f"; done
for z in "$TMP"/mut/z*; do
    check_no_crash info "$z"
    check_no_crash get "$z" --region "1:3" -o "$TMP/z.npy"
done

# ---- corrupt chunk data: the error names the chunk
C="$TMP/corrupt"
expect_ok get "$A" --region "0,0:10" -o "$TMP/row10.npy" &&
    expect_ok create "$C" --shape 10 --chunks 5 --dtype int32 --zarr-format 2 --codec zstd &&
    expect_ok put "$C" "$TMP/row10.npy" && [ -f "$C/1" ] || fail "chunk 1 of $C not written"
printf 'garbage garbage garbage' >"$C/1"
expect_fail 1 "'1'" get "$C" -o "$TMP/x.npy"
expect_fail 1 "'1'" copy "$C" "$TMP/corrupt_copy"
expect_ok get "$C" --region "0:5" -o "$TMP/x.npy" # the intact chunk still reads

finish
