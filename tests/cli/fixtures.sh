#!/bin/bash
# tests/cli/fixtures.sh — zcube ls/info/get on every array of the zarrita v2 and
# v3 fixtures (written by zarr-python 2 and 3). Arrays with a dtype zcube does
# not support (object, variable-length string) must fail with one clear error
# line and exit 1; every other array must read back the values in
# expected.json (compared with NumPy).
# Usage: bash fixtures.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy

MAN="$TMP/manifest"
: >"$MAN"
for v in v2 v3; do
    root="$DATA/zarrita/$v/data.zarr"
    expected="$DATA/zarrita/$v/expected.json"
    rm -f "$TMP/ls_$v.txt"
    expect_ok ls "$root" && cp "$TMP/out" "$TMP/ls_$v.txt"
    expect_ok info "$root" && grep -q "^node: *group" "$TMP/out" || fail "info $root: not shown as a group"
    expect_ok info --json "$root"
    # key <TAB> dtype, from expected.json (python3 without numpy is enough here)
    "$PY" -c '
import json, sys
for k, v in json.load(open(sys.argv[1])).items():
    print(k + "\t" + v["dtype"])' "$expected" >"$TMP/keys_$v" || { fail "reading $expected"; continue; }
    while IFS=$'\t' read -r key dtype; do
        path="$root/$key"
        [ -f "$TMP/ls_$v.txt" ] && { grep -qF "$(basename "$key")" "$TMP/ls_$v.txt" || fail "ls $root does not list $key"; }
        case $dtype in
        v2:object | string)
            expect_fail 1 "not supported" info "$path"
            expect_fail 1 "not supported" get "$path" -o "$TMP/never.npy"
            [ -e "$TMP/never.npy" ] && fail "get $path left an output file"
            ;;
        *)
            expect_ok info "$path" && grep -q "^shape:" "$TMP/out" || fail "info $path: no shape line"
            expect_ok info --json "$path"
            out="$TMP/${v}_$(echo "$key" | tr '/ ' '__').npy"
            expect_ok get "$path" -o "$out" && printf '%s\t%s\t%s\n' "$expected" "$key" "$out" >>"$MAN"
            # a region read must agree with the full read (checked below)
            expect_ok get "$path" --region "1:" -o "$out.r.npy" &&
                printf '%s\t%s\t%s\t1:\n' "$expected" "$key" "$out.r.npy" >>"$MAN"
            ;;
        esac
    done <"$TMP/keys_$v"
done

CHECKS=$((CHECKS + 1))
"$PY" - "$MAN" <<'EOF' || fail "values differ from expected.json"
import json, sys, numpy as np
cache = {}
bad = n = 0
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    exp_file, key, out = f[0], f[1], f[2]
    region = f[3] if len(f) > 3 else ""
    e = cache.setdefault(exp_file, json.load(open(exp_file)))[key]
    got = np.load(out)
    dt = e["dtype"]
    vals = e["data_c_order"]
    if dt.startswith("v2:S"):
        want = np.array([s.encode() for s in vals], dtype=dt[3:])
    elif dt.startswith("v2:U"):
        want = np.array(vals, dtype=dt[3:])
    elif dt.startswith("float"):
        want = np.array([float(x) for x in vals], dtype=dt)
    elif dt.startswith(("int", "uint")):
        want = np.array([int(x) for x in vals], dtype=dt)
    else:
        want = np.array(vals, dtype=dt)
    want = want.reshape(e["shape"])
    if region:
        want = want[eval(f"np.s_[{region}]")]
    n += 1
    ok = got.shape == want.shape and got.dtype == want.dtype and (
        np.array_equal(got, want, equal_nan=True) if want.dtype.kind == "f" else np.array_equal(got, want))
    if not ok:
        bad += 1
        print(f"FAIL: {key} {region}: got {got.dtype}{got.shape} {got.ravel()[:8]}, want {want.dtype}{want.shape} {want.ravel()[:8]}")
print(f"{n - bad} of {n} fixture reads match expected.json")
sys.exit(1 if bad or n == 0 else 0)
EOF

finish
