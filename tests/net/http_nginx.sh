#!/usr/bin/env bash
# HTTP store against nginx on loopback (ranges, keep-alive): zarr-python's v2
# array (with missing chunks) and zcube's sharded v3 array read through
# http:// exactly as from the folder, whole and in regions; a missing array,
# a missing server and writes fail clearly.
# Usage: bash http_nginx.sh PATH-TO-ZCUBE TESTS-DATA-DIR
set -u
source "$(dirname "$0")/../cli/common.bash"
source "$(dirname "$0")/servers.bash"
net_need nginx zarr openssl
trap 'net_stop_all; rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
W=$TMP/www
mkdir -p "$W"
"$PY" - "$W" <<'PY'
import sys, zarr, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(7)
a = zarr.open(w + "/v2.zarr", mode="w", shape=(130, 70), chunks=(32, 16), dtype="f4", fill_value=-1.5)
a[:] = rng.standard_normal((130, 70)).astype("f4")
a[40:100, :] = -1.5          # whole chunks equal to the fill value: not written
g = zarr.open_group(w + "/grp", mode="w")
g.create_dataset("x", data=np.arange(1000, dtype="i8").reshape(10, 100), chunks=(3, 33))
PY
expect_ok copy "$W/v2.zarr" "$W/v3s.zarr" --zarr-format 3 --chunks 8,8 --shards 32,32 --codec blosc:lz4:5
# consolidated metadata, the only way to list a group over HTTP: v2's
# .zmetadata (zarr-python 2) and v3's inline "consolidated_metadata" in the
# group's zarr.json (zarr-python 3's form, written here by hand)
"$PY" -c "import zarr; zarr.consolidate_metadata('$W/grp')" || fail "consolidating grp"
expect_ok copy "$W/v2.zarr" "$W/g3/a" --zarr-format 3 --chunks 40,40
expect_ok copy "$W/grp/x" "$W/g3/sub/b" --zarr-format 3
"$PY" - "$W/g3" <<'PY' || fail "consolidating g3"
import json, os, sys
root = sys.argv[1]
meta = {}
for dirpath, _, files in os.walk(root):
    rel = os.path.relpath(dirpath, root)
    if "zarr.json" in files and rel != ".":
        meta[rel] = json.load(open(os.path.join(dirpath, "zarr.json")))
doc = json.load(open(root + "/zarr.json"))
doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": meta}
json.dump(doc, open(root + "/zarr.json", "w"), indent=2)
PY
# an array written into g3 after it was consolidated is entered in its index
expect_ok copy "$W/grp/x" "$W/g3/sub/c" --zarr-format 3
"$PY" -c "import json; m = json.load(open('$W/g3/zarr.json'))['consolidated_metadata']['metadata'];
assert sorted(m) == ['a', 'sub', 'sub/b', 'sub/c'] and m['sub/c']['shape'] == [10, 100], sorted(m)" ||
    fail "g3's consolidated metadata after a write: $(cat "$W/g3/zarr.json")"
chmod -R a+rX "$W"
nginx_start "$W"
U=http://127.0.0.1:$NGINX_PORT

same() { # same ARRAY REGION: http:// read == local read
    local n=$((SEQN += 1))
    local r=()
    [ -n "$2" ] && r=(-r "$2")
    expect_ok get "$W/$1" "${r[@]}" -o "$TMP/l$n.npy" || return
    expect_ok get "$U/$1" "${r[@]}" -o "$TMP/h$n.npy" || return
    cmp -s "$TMP/l$n.npy" "$TMP/h$n.npy" || fail "get $U/$1 ${r[*]} differs from the local read"
}
for arr in v2.zarr v3s.zarr grp/x; do
    same $arr ""
    same $arr "3:7,5:9"
    same $arr "::7,1::3"
    same $arr "-1"
done
same v3s.zarr "33:95,10:60"
ZCUBE_IO_COALESCE_GAP=0 same v3s.zarr "33:95,10:60"         # one GET per inner chunk
ZCUBE_IO_COALESCE_GAP=100000000 same v3s.zarr "1:129:9,::7"  # a shard's chunks in one GET
expect_ok get "$U/v2.zarr" -o "$TMP/z.npy" --io-concurrency 1
expect_ok get --io-concurrency=200 "$U/v2.zarr" -o "$TMP/z.npy"
expect_fail 2 "--io-concurrency" get "$U/v2.zarr" -o "$TMP/z.npy" --io-concurrency 0
"$PY" -c "import sys, zarr, numpy as np; a=np.load('$TMP/z.npy'); b=zarr.open('$W/v2.zarr')[:];
sys.exit(0 if a.dtype==b.dtype and np.array_equal(a,b) else 1)" || fail "http read differs from zarr-python's"
for g in grp g3; do
    expect_ok ls "$W/$g" && tr -s ' ' <"$TMP/out" >"$TMP/ls_local" &&
        expect_ok ls "$U/$g" && { cmp -s "$TMP/ls_local" <(sed "s|$U|$W|" "$TMP/out" | tr -s ' ') ||
        fail "ls $U/$g differs from the local ls: $(cat "$TMP/out") against $(cat "$TMP/ls_local")"; }
done
grep -q "^    c  *array v3" "$TMP/out" || fail "ls $U/g3 misses sub/c: $(cat "$TMP/out")"
same g3/sub/c "2:9,::3"
# redirects are followed (a 302 per key, ranges included); a loop is an error
for arr in v3s.zarr v2.zarr; do
    expect_ok get "$W/$arr" -r 33:95,10:60 -o "$TMP/l.npy" && expect_ok get "$U/moved/$arr" -r 33:95,10:60 -o "$TMP/m.npy" &&
        { cmp -s "$TMP/l.npy" "$TMP/m.npy" || fail "get $U/moved/$arr differs from the local read"; }
done
expect_ok ls "$U/moved/g3"
expect_fail 1 "redirects" get "$U/loop/v2.zarr" -o "$TMP/n.npy"
expect_ok info "$U/v3s.zarr"
grep -q "shards" "$TMP/out" || fail "info over http shows no shards: $(cat "$TMP/out")"
expect_fail 1 "not a Zarr array" get "$U/nothere.zarr" -o "$TMP/n.npy"
expect_fail 1 "read-only" put "$U/v2.zarr" "$TMP/z.npy"
# https with a self-signed certificate: refused unless trusted by name (the
# machine may set these variables to the system's bundle: start without them)
unset SSL_CERT_FILE CURL_CA_BUNDLE AWS_CA_BUNDLE
tls_cert "$TMP" || fail "making a certificate"
nginx_start "$TMP" "$TMP/cert.pem" "$TMP/key.pem"
T=https://127.0.0.1:$NGINX_PORT
chmod 644 "$TMP/cert.pem"
expect_fail 1 "certificate" get "$T/www/v2.zarr" -o "$TMP/n.npy"
grep -qF "$T/www/v2.zarr" "$TMP/err" || fail "the certificate error names no URL: $(cat "$TMP/err")"
for var in SSL_CERT_FILE CURL_CA_BUNDLE; do
    env "$var=$TMP/cert.pem" "$Z" get "$T/www/v2.zarr" -o "$TMP/t.npy" 2>"$TMP/err" &&
        cmp -s "$TMP/t.npy" "$TMP/z.npy" || fail "https with $var: $(cat "$TMP/err")"
done
CURL_CA_BUNDLE=$TMP/none.pem expect_fail 1 "CURL_CA_BUNDLE" get "$T/www/v2.zarr" -o "$TMP/n.npy"
# an anonymous S3 GET from an https endpoint (the folder www as the bucket)
AWS_ENDPOINT_URL=$T ZCUBE_S3_ANONYMOUS=1 AWS_CA_BUNDLE=$TMP/cert.pem "$Z" get s3://www/v2.zarr -o "$TMP/t.npy" \
    2>"$TMP/err" && cmp -s "$TMP/t.npy" "$TMP/z.npy" || fail "s3 over https with AWS_CA_BUNDLE: $(cat "$TMP/err")"
# a server that is not there: connection refused, retried, then a clear error
P=$(free_port)
ZCUBE_IO_RETRIES=2 ZCUBE_IO_BACKOFF_MS=10 expect_fail 1 "127.0.0.1:$P" get "http://127.0.0.1:$P/v2.zarr" -o "$TMP/n.npy"
grep -q "3 attempts" "$TMP/err" || fail "no retry count in: $(cat "$TMP/err")"
finish
