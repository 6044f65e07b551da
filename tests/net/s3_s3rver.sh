#!/usr/bin/env bash
# S3 store against @20minutes/s3rver on loopback (it checks SigV4 signatures):
# boto3 uploads what zarr-python wrote -> zcube reads it identically; zcube
# writes (single PUTs and multipart uploads) -> boto3 downloads -> zarr-python
# reads it identically; sharded v3 partial reads; eval with inputs, work dir
# and output on S3; ls via ListObjectsV2 with pagination; keys that need
# percent-encoding; a session token; wrong secret -> 403; missing bucket;
# create, put, rechunk, sample, eval --save-plan + worker, and eval on worker
# processes, all on S3, with no credential in plans, reports or errors.
# Usage: bash s3_s3rver.sh PATH-TO-ZCUBE TESTS-DATA-DIR
set -u
source "$(dirname "$0")/../cli/common.bash"
source "$(dirname "$0")/servers.bash"
net_need node boto3 zarr
trap 'net_stop_all; rm -rf "$TMP"' EXIT
L=$TMP/local
mkdir -p "$L"
"$PY" - "$L" <<'PY'
import sys, zarr, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(11)
a = zarr.open(d + "/v2.zarr", mode="w", shape=(90, 50), chunks=(16, 16), dtype="f8", fill_value=2.5)
a[:] = rng.standard_normal((90, 50))
a[32:64, :] = 2.5
g = zarr.open_group(d + "/grp", mode="w")
for i in range(12):   # listed in pages of 5 below
    g.create_dataset("m%02d" % i, data=np.full((4, 4), i, dtype="i4"), chunks=(2, 2))
PY
s3_start "$TMP/s3data" bk
S=s3://bk
C="$PY $NET_HERE/s3_client.py"

# 1. boto3 uploads zarr-python's arrays (under a prefix that needs encoding); zcube reads them
P="in put/é+x"
$C upload "$L/v2.zarr" bk "$P/v2.zarr" || fail "boto3 upload"
$C upload "$L/grp" bk "$P/grp" || fail "boto3 upload"
expect_ok get "$S/$P/v2.zarr" -o "$TMP/a.npy"
"$PY" -c "import sys, zarr, numpy as np; a=np.load('$TMP/a.npy'); b=zarr.open('$L/v2.zarr')[:];
sys.exit(0 if a.dtype==b.dtype and np.array_equal(a,b) else 1)" || fail "s3 read differs from zarr-python's"
expect_ok get "$S/$P/v2.zarr" -r 5:70:3,7:9 -o "$TMP/b.npy"
expect_ok get "$L/v2.zarr" -r 5:70:3,7:9 -o "$TMP/c.npy"
cmp -s "$TMP/b.npy" "$TMP/c.npy" || fail "s3 region read differs"
ZCUBE_S3_LIST_PAGE=5 expect_ok ls "$S/$P/grp"   # 3 pages (continuation tokens)
[ "$(grep -c "m[0-9][0-9]" "$TMP/out")" -eq 12 ] || fail "ls over s3 lists $(grep -c m "$TMP/out") of 12 arrays: $(cat "$TMP/out")"

# 2. zcube writes (v2 copy; v3 sharded copy in multipart uploads); boto3 downloads; zarr-python / zcube read
expect_ok copy "$L/v2.zarr" "$S/out/v2.zarr"
$C download bk out/v2.zarr "$TMP/dl/v2.zarr" || fail "boto3 download"
"$PY" -c "import sys, zarr, numpy as np; a=zarr.open('$TMP/dl/v2.zarr')[:]; b=zarr.open('$L/v2.zarr')[:];
sys.exit(0 if np.array_equal(a,b) else 1)" || fail "zarr-python reads zcube's s3 copy differently"
ZCUBE_S3_MULTIPART_THRESHOLD=10000 ZCUBE_S3_PART_SIZE=4096 \
    expect_ok copy "$L/v2.zarr" "$S/out/v3s.zarr" --zarr-format 3 --chunks 8,8 --shards 48,48 --codec none
expect_ok copy "$L/v2.zarr" "$L/v3s.zarr" --zarr-format 3 --chunks 8,8 --shards 48,48 --codec none
$C download bk out/v3s.zarr "$TMP/dl/v3s.zarr" || fail "boto3 download"
for f in $(cd "$L/v3s.zarr" && find . -type f -name 'c*' -o -type f -path '*/c/*'); do
    cmp -s "$L/v3s.zarr/$f" "$TMP/dl/v3s.zarr/$f" || fail "shard $f uploaded differs from the local copy's"
done
# s3rver keeps an upload's parts in <bucket>/.../uploads/<id> until it completes
[ -z "$(find "$TMP/s3data" -path '*uploads*' -type f)" ] || fail "unfinished multipart uploads left on the server"
for r in "" "1:2,3:4" "10:80:7,5:45" "47:49,47:49" "-1"; do
    a=(); [ -n "$r" ] && a=(-r "$r")
    expect_ok get "$S/out/v3s.zarr" "${a[@]}" -o "$TMP/s.npy" && expect_ok get "$L/v3s.zarr" "${a[@]}" -o "$TMP/l.npy" &&
        { cmp -s "$TMP/s.npy" "$TMP/l.npy" || fail "sharded s3 read of '$r' differs"; }
done

# 3. eval: inputs, work dir and output on S3 (a rechunk forces intermediates)
expect_ok eval 'sum(rechunk(u, (90, 5)) * 2, axis=0)' --in "u=$S/$P/v2.zarr" -o "$S/out/e.zarr" \
    --work-dir "$S/work" --allowed-mem 64MB
expect_ok eval 'sum(rechunk(u, (90, 5)) * 2, axis=0)' --in "u=$L/v2.zarr" -o "$L/e.zarr" --allowed-mem 64MB
expect_ok get "$S/out/e.zarr" -o "$TMP/e1.npy" && expect_ok get "$L/e.zarr" -o "$TMP/e2.npy" &&
    { cmp -s "$TMP/e1.npy" "$TMP/e2.npy" || fail "eval on s3 differs from eval on files"; }
# intermediates too big to stay in memory go to the S3 work dir, and are removed at the end
expect_ok eval 'sum(rechunk(ones((400, 300), chunks=(16, 300)), (400, 8)) * 2, axis=0)' -o "$S/out/big.zarr" \
    --work-dir "$S/work2" --allowed-mem 2MB --json
grep -q '"intermediates_in_memory": false' "$TMP/out" || fail "the intermediates did not go to the S3 work dir"
left=$($C keys bk work2) || fail "boto3 listing"
[ -z "$left" ] || fail "intermediates left in the S3 work dir: $(echo "$left" | head -3)"

# 4. session token (signed as x-amz-security-token), anonymous, wrong secret, missing bucket
AWS_SESSION_TOKEN=tok/en+1 expect_ok get "$S/out/v2.zarr" -o "$TMP/t.npy"
cmp -s "$TMP/t.npy" "$TMP/a.npy" || fail "read with a session token differs"
AWS_SECRET_ACCESS_KEY=wrong expect_fail 1 "403 SignatureDoesNotMatch" get "$S/out/v2.zarr" -o "$TMP/w.npy"
grep -q "wrong" "$TMP/err" && fail "the secret appears in the error: $(cat "$TMP/err")"
expect_fail 1 "NoSuchBucket" get "s3://nobucket/x.zarr" -o "$TMP/w.npy"
grep -q "http://127.0.0.1:$S3_PORT/nobucket/x.zarr" "$TMP/err" || fail "no URL in: $(cat "$TMP/err")"
(FAILS=0; unset AWS_ACCESS_KEY_ID; expect_fail 1 "AWS_ACCESS_KEY_ID" get "$S/out/v2.zarr" -o "$TMP/w.npy"; exit $FAILS) || FAILS=$((FAILS+1))
ZCUBE_S3_ANONYMOUS=1 expect_ok get "$S/out/v2.zarr" -o "$TMP/an.npy"  # s3rver accepts unsigned requests
cmp -s "$TMP/an.npy" "$TMP/a.npy" || fail "anonymous read differs"
(FAILS=0; unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY; ZCUBE_S3_ANONYMOUS=1 expect_ok info "$S/out/v2.zarr"; exit $FAILS) ||
    FAILS=$((FAILS+1))
# credentials, region and endpoint from the AWS shared files, as the AWS CLI reads them
cat >"$TMP/aws-creds" <<CREDS
[default]
aws_access_key_id = $AWS_ACCESS_KEY_ID
aws_secret_access_key = nothing
[zc]
aws_access_key_id = $AWS_ACCESS_KEY_ID
aws_secret_access_key = $AWS_SECRET_ACCESS_KEY
aws_session_token = tok/en+2
[half]
aws_access_key_id = $AWS_ACCESS_KEY_ID
CREDS
printf '[profile zc]\nregion = us-east-1\nendpoint_url = %s\n' "$AWS_ENDPOINT_URL" >"$TMP/aws-config"
(
    FAILS=0
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
    export AWS_SHARED_CREDENTIALS_FILE=$TMP/aws-creds AWS_CONFIG_FILE=$TMP/aws-config
    expect_fail 1 "403 SignatureDoesNotMatch" get "$S/out/v2.zarr" -o "$TMP/w.npy" # [default]'s keys
    grep -q "nothing" "$TMP/err" && fail "the profile's secret appears in the error: $(cat "$TMP/err")"
    AWS_PROFILE=half expect_fail 1 "has aws_access_key_id but not aws_secret_access_key" get "$S/out/v2.zarr" -o "$TMP/w.npy"
    AWS_PROFILE=missing expect_fail 1 "AWS profile 'missing'" get "$S/out/v2.zarr" -o "$TMP/w.npy"
    unset AWS_ENDPOINT_URL # [profile zc] in the config file names it
    AWS_PROFILE=zc expect_ok get "$S/out/v2.zarr" -o "$TMP/p.npy" &&
        { cmp -s "$TMP/p.npy" "$TMP/a.npy" || fail "read with profile zc differs"; }
    exit $FAILS
) || FAILS=$((FAILS + 1))

# 5. every other command with S3 URLs gives what it gives on files
same_npy() { # same_npy A.npy B.npy WHAT
    "$PY" -c "import sys, numpy as np; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]);
sys.exit(0 if a.dtype == b.dtype and np.array_equal(a, b) else 1)" "$1" "$2" || fail "$3 differs"
}
"$PY" -c "import numpy as np; np.save('$TMP/p.npy', np.arange(600, dtype='<i4').reshape(20, 30))"
for d in "$S/out/c.zarr" "$L/c.zarr"; do
    expect_ok create "$d" --shape 40,30 --chunks 16,16 --dtype int32
    expect_ok put "$d" "$TMP/p.npy" --region 10:30,0:30
done
expect_ok get "$S/out/c.zarr" -o "$TMP/c1.npy" && expect_ok get "$L/c.zarr" -o "$TMP/c2.npy" &&
    same_npy "$TMP/c1.npy" "$TMP/c2.npy" "create + put on s3"
expect_ok rechunk "$S/$P/v2.zarr" "$S/out/r.zarr" --chunks 90,5 --allowed-mem 16MB --work-dir "$S/rwork" -q
expect_ok get "$S/out/r.zarr" -o "$TMP/r.npy" && same_npy "$TMP/r.npy" "$TMP/a.npy" "rechunk on s3"
for src in "$S/$P/v2.zarr" "$L/v2.zarr"; do
    n=$((SEQN += 1))
    expect_ok sample "$src" --window 8,8 --batch 4 --batches 3 --seed 7 -o "$TMP/smp$n"
done
for f in batch_0 batch_2 origins_1; do
    same_npy "$TMP/smp$((n - 1))/$f.npy" "$TMP/smp$n/$f.npy" "sample from s3 ($f)"
done
# a saved plan run by `zcube worker` by hand, inputs, work dir and output on S3
E='sum(rechunk(u, (90, 5)) * 2, axis=0)'
expect_ok eval "$E" --in "u=$S/$P/v2.zarr" -o "$S/out/w.zarr" --work-dir "$S/wwork" --allowed-mem 64MB \
    --save-plan "$TMP/plan.json"
nops=$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['stages']))" "$TMP/plan.json") ||
    fail "plan.json has no stages: $(head -c 300 "$TMP/plan.json")"
[ "${nops:-0}" -ge 2 ] || fail "the plan has ${nops:-0} operations, expected a rechunk and a sum"
for ((op = 0; op < ${nops:-0}; op++)); do expect_ok worker "$TMP/plan.json" --op $op; done
expect_ok get "$S/out/w.zarr" -o "$TMP/w.npy" && same_npy "$TMP/w.npy" "$TMP/e2.npy" "eval by zcube worker on s3"
# on local worker processes (S3 inputs and output; they coordinate through a local work dir), with the report
expect_ok eval "$E" --in "u=$S/$P/v2.zarr" -o "$S/out/x.zarr" --work-dir "$TMP/xwork" --allowed-mem 64MB \
    --executor processes --workers 2 --json
cp "$TMP/out" "$TMP/report.json"
expect_ok get "$S/out/x.zarr" -o "$TMP/x.npy" && same_npy "$TMP/x.npy" "$TMP/e2.npy" "eval on worker processes on s3"
expect_fail 2 "needs a --work-dir on a (shared) filesystem" eval "$E" --in "u=$S/$P/v2.zarr" -o "$S/out/y.zarr" \
    --work-dir "$S/ywork" --executor processes --workers 2
for f in "$TMP/plan.json" "$TMP/report.json"; do
    grep -q "$AWS_SECRET_ACCESS_KEY\|$AWS_ACCESS_KEY_ID" "$f" && fail "credentials in $f"
done
finish
