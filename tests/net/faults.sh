#!/usr/bin/env bash
# Faults between zcube and its servers: tests/net/faultproxy.py in front of
# nginx and s3rver answers 500, 503 SlowDown and 429, resets connections,
# stalls and cuts bodies short. Within the retry bound (each request faulted
# at most twice, ZCUBE_IO_RETRIES=3) every command gives exactly the results
# of a fault-free run; beyond it (every request faulted, 1 retry) it fails
# with a clear error naming the URL and the attempts.
# Usage: bash faults.sh PATH-TO-ZCUBE TESTS-DATA-DIR
set -u
source "$(dirname "$0")/../cli/common.bash"
source "$(dirname "$0")/servers.bash"
net_need nginx node boto3 zarr
trap 'net_stop_all; rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
W=$TMP/www
mkdir -p "$W"
"$PY" - "$W" <<'PY'
import sys, zarr, numpy as np
rng = np.random.default_rng(3)
a = zarr.open(sys.argv[1] + "/v2.zarr", mode="w", shape=(64, 64), chunks=(16, 16), dtype="f4", fill_value=0)
a[:] = rng.standard_normal((64, 64)).astype("f4")
a[:16, :] = 0
PY
expect_ok copy "$W/v2.zarr" "$W/v3s.zarr" --zarr-format 3 --chunks 8,8 --shards 32,32 --codec blosc:lz4:5
expect_ok copy "$W/v2.zarr" "$W/v3c.zarr" --zarr-format 3 --chunks 16,16 --codec zstd:1,crc32c
expect_ok copy "$W/v2.zarr" "$W/v3sc.zarr" --zarr-format 3 --chunks 8,8 --shards 32,32 --codec zstd:1,crc32c
chmod -R a+rX "$W"
nginx_start "$W"
s3_start "$TMP/s3data" bk
export ZCUBE_IO_RETRIES=3 ZCUBE_IO_BACKOFF_MS=5 ZCUBE_IO_TIMEOUT=1
FAULTY=(--rate 0.35 --max-per-request 2 --stall 2.5 --log "$TMP/proxy.log")

# HTTP: whole and partial reads, v2 and sharded v3
proxy_start "$NGINX_PORT" "${FAULTY[@]}" --seed 5
H=http://127.0.0.1:$PROXY_PORT
for arr in v2.zarr v3s.zarr; do
    for r in "" "3:40,5:9" "::5,1::3"; do
        a=(); [ -n "$r" ] && a=(-r "$r")
        n=$((SEQN += 1))
        expect_ok get "$W/$arr" "${a[@]}" -o "$TMP/l$n.npy" && expect_ok get "$H/$arr" "${a[@]}" -o "$TMP/h$n.npy" &&
            { cmp -s "$TMP/l$n.npy" "$TMP/h$n.npy" || fail "faulty http get $arr '$r' differs"; }
    done
done
for f in 500 503 429 reset stall cut; do
    grep -q " $f\$" "$TMP/proxy.log" || fail "the proxy never injected '$f' in front of nginx"
done

# S3: writes (single and multipart), reads, listing, eval with a work dir
proxy_start "$S3_PORT" "${FAULTY[@]}" --seed 9
export AWS_ENDPOINT_URL=http://127.0.0.1:$PROXY_PORT
S=s3://bk
: >"$TMP/proxy.log"
ZCUBE_S3_MULTIPART_THRESHOLD=4000 ZCUBE_S3_PART_SIZE=2048 expect_ok copy "$W/v3s.zarr" "$S/v3s.zarr"
grep -q "partNumber=" "$TMP/proxy.log" || fail "no multipart upload went through the proxy"
expect_ok copy "$W/v2.zarr" "$S/v2.zarr"
for arr in v2.zarr v3s.zarr; do
    n=$((SEQN += 1))
    expect_ok get "$W/$arr" -o "$TMP/l$n.npy" && expect_ok get "$S/$arr" -o "$TMP/s$n.npy" &&
        { cmp -s "$TMP/l$n.npy" "$TMP/s$n.npy" || fail "faulty s3 round trip of $arr differs"; }
done
expect_ok info "$S/v3s.zarr"
expect_ok eval 'sum(rechunk(u, (64, 4)) + 1, axis=0)' --in "u=$S/v2.zarr" -o "$S/e.zarr" --work-dir "$S/work" \
    --allowed-mem 64MB
expect_ok eval 'sum(rechunk(u, (64, 4)) + 1, axis=0)' --in "u=$W/v2.zarr" -o "$TMP/e.zarr" --allowed-mem 64MB
expect_ok get "$S/e.zarr" -o "$TMP/e1.npy" && expect_ok get "$TMP/e.zarr" -o "$TMP/e2.npy" &&
    { cmp -s "$TMP/e1.npy" "$TMP/e2.npy" || fail "eval through the faulty proxy differs"; }
for f in 500 503 429 reset stall cut; do
    grep -q " $f\$" "$TMP/proxy.log" || fail "the proxy never injected '$f' in front of s3rver"
done

# A chunk or shard index damaged in transit (one byte flipped) fails its
# crc32c and is read again: the right data; damaged every time: a clear error
# (inner chunks far apart, not coalesced: one read again is then the same
# request, which the proxy damages only once)
export ZCUBE_IO_COALESCE_GAP=0
for arr in v3c.zarr v3sc.zarr; do
    proxy_start "$NGINX_PORT" --rate 1 --max-per-request 1 --faults flip --match /c/ --log "$TMP/flip.log"
    expect_ok get "$W/$arr" -r ::16,::16 -o "$TMP/c1.npy" &&
        expect_ok get "http://127.0.0.1:$PROXY_PORT/$arr" -r ::16,::16 -o "$TMP/c2.npy" &&
        { cmp -s "$TMP/c1.npy" "$TMP/c2.npy" || fail "$arr damaged once in transit read wrong"; }
    grep -q " flip\$" "$TMP/flip.log" || fail "the proxy never flipped a byte of $arr"
    proxy_start "$NGINX_PORT" --rate 1 --max-per-request 9 --faults flip --match /c/
    expect_fail 1 "checksum did not match" get "http://127.0.0.1:$PROXY_PORT/$arr" -o "$TMP/c3.npy"
done
grep -q "^GET /v3sc.zarr/c/0/0 bytes=-.* flip$" "$TMP/flip.log" || fail "no shard index was damaged"
unset ZCUBE_IO_COALESCE_GAP

# A part upload failing beyond the bound: the multipart upload is aborted
# (DELETE ?uploadId=...), the copy fails naming the cause, and no shard
# object appears (s3rver does not implement the abort; S3 drops the parts)
proxy_start "$S3_PORT" --rate 1 --max-per-request 99 --faults 500 --match "partNumber=2&" --log "$TMP/abort.log"
AWS_ENDPOINT_URL=http://127.0.0.1:$PROXY_PORT ZCUBE_IO_RETRIES=1 ZCUBE_S3_MULTIPART_THRESHOLD=4000 \
    ZCUBE_S3_PART_SIZE=2048 expect_fail 1 "InternalError" copy "$W/v3s.zarr" "$S/ab.zarr"
grep -q "gave up after 2 attempts" "$TMP/err" || fail "no retry count in: $(cat "$TMP/err")"
sed -n 's|^DELETE /bk/\(ab.zarr/[^?]*\)?uploadId=.*|\1|p' "$TMP/abort.log" | sort -u >"$TMP/aborted"
[ -s "$TMP/aborted" ] || fail "no AbortMultipartUpload after a failed part"
AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$PY" "$NET_HERE/s3_client.py" keys bk ab.zarr/ >"$TMP/keys" ||
    fail "boto3 listing"
grep -qxFf "$TMP/aborted" "$TMP/keys" && fail "an aborted upload left its object: $(cat "$TMP/aborted")"

# Beyond the bound: every request faulted twice, one retry allowed -> a clear error
proxy_start "$NGINX_PORT" --rate 1 --max-per-request 2 --faults 503 --seed 1
ZCUBE_IO_RETRIES=1 expect_fail 1 "gave up after 2 attempts" get "http://127.0.0.1:$PROXY_PORT/v2.zarr" -o "$TMP/x.npy"
grep -q "SlowDown" "$TMP/err" && grep -q "127.0.0.1:$PROXY_PORT/v2.zarr" "$TMP/err" ||
    fail "error lacks the cause or the URL: $(cat "$TMP/err")"
ZCUBE_IO_RETRIES=2 expect_ok get "http://127.0.0.1:$PROXY_PORT/v2.zarr" -o "$TMP/x.npy"
proxy_start "$NGINX_PORT" --rate 1 --max-per-request 9 --faults cut --seed 1
ZCUBE_IO_RETRIES=2 expect_fail 1 "cut short" get "http://127.0.0.1:$PROXY_PORT/v3s.zarr" -o "$TMP/x.npy"
finish
