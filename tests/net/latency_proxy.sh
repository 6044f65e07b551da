#!/usr/bin/env bash
# bench/latency_proxy.c, the benchmark's slow network: every request is
# delayed by the set time (once per request, also on a kept connection),
# bodies pass unchanged both ways (whole, ranged, a request body that keeps
# the connection in step), and zcube reads through it what it reads without.
# Usage: bash latency_proxy.sh PATH-TO-ZCUBE TESTS-DATA-DIR
set -u
source "$(dirname "$0")/../cli/common.bash"
source "$(dirname "$0")/servers.bash"
net_need nginx zarr
LP=$(dirname "$Z")/bench/latency_proxy
[ -x "$LP" ] || net_missing "bench/latency_proxy is not built (ZC_BUILD_BENCH=OFF?)"
trap 'net_stop_all; rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
W=$TMP/www
mkdir -p "$W"
head -c 3000000 /dev/urandom >"$W/blob"
"$PY" - "$W" <<'PY'
import sys, zarr, numpy as np
a = zarr.open(sys.argv[1] + "/a.zarr", mode="w", shape=(100, 80), chunks=(32, 32), dtype="f4")
a[:] = np.random.default_rng(5).standard_normal((100, 80)).astype("f4")
PY
chmod -R a+rX "$W"
nginx_start "$W"
latency_proxy_start "$LP" "$NGINX_PORT" 150
U=http://127.0.0.1:$PROXY_PORT
took() { # seconds of curl ARGS... (its output discarded)
    local t0 t1
    t0=$(date +%s.%N)
    curl -s --fail "$@" >/dev/null || { fail "curl $*"; echo 0; return; }
    t1=$(date +%s.%N)
    "$PY" -c "print($t1 - $t0)"
}
at_least() { "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }

curl -s --fail "$U/blob" -o "$TMP/b1" && cmp -s "$W/blob" "$TMP/b1" || fail "the body through the proxy differs"
curl -s --fail -r 1000-250999 "$U/blob" -o "$TMP/b2" && cmp -s "$TMP/b2" <(tail -c +1001 "$W/blob" | head -c 250000) ||
    fail "a ranged body through the proxy differs"
t=$(took "$U/blob")
at_least "$t" 0.15 || fail "one request took $t s, less than the 0.15 s delay"
t=$(took "$U/blob" "$U/blob" "$U/blob") # one kept connection, one request after the other
at_least "$t" 0.45 || fail "three requests on one connection took $t s, less than 3 x 0.15 s"
# a request body (nginx answers 405 to a POST of a file) streams through; the
# next request on the same connection is still answered right
curl -s -o /dev/null -w '%{http_code}\n' -X POST --data-binary "@$W/blob" "$U/blob" --next -o "$TMP/b3" "$U/blob" \
    >"$TMP/codes" || fail "POST then GET on one connection failed"
cmp -s "$W/blob" "$TMP/b3" || fail "the GET after a POST body differs"
# zcube through the proxy reads what it reads from nginx
expect_ok get "http://127.0.0.1:$NGINX_PORT/a.zarr" -o "$TMP/d.npy" && expect_ok get "$U/a.zarr" -o "$TMP/p.npy" &&
    { cmp -s "$TMP/d.npy" "$TMP/p.npy" || fail "zcube reads differently through the proxy"; }
finish
