# tests/net/servers.bash — start and stop the loopback servers the store
# tests use (sourced, not a test). Every server gets a free port and is
# stopped by its PID; a trap in the caller runs net_stop_all.
#
#   net_need WHAT...     exit 77 (skip) or, with ZC_REQUIRE_ALL=1, 1 unless
#                        each of nginx, node, boto3, zarr, openssl is available
#   nginx_start ROOT [CERT KEY]  serve ROOT (world-readable) -> NGINX_PORT;
#                        over TLS with CERT and KEY (tls_cert makes them)
#   tls_cert DIR         a self-signed certificate for 127.0.0.1 -> DIR/cert.pem, DIR/key.pem
#   s3_start DIR BUCKET  @20minutes/s3rver (checks SigV4) -> S3_PORT, AWS_* set
#   proxy_start UPSTREAM_PORT ARGS...  tests/net/faultproxy.py -> PROXY_PORT
#   latency_proxy_start BIN UPSTREAM_PORT MS  bench/latency_proxy.c built as BIN -> PROXY_PORT
#   net_stop_all         stop everything started here

NET_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NET_PIDS=()
PY=${PY:-/usr/bin/python3}

net_missing() {
    if [ "${ZC_REQUIRE_ALL:-0}" = 1 ]; then
        echo "FAIL: $1 (ZC_REQUIRE_ALL=1: every dependency must be present; scripts/install-deps.sh installs it)"
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}

net_need() {
    for w in "$@"; do
        case $w in
        nginx) command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || net_missing "nginx not installed" ;;
        node) command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || net_missing "node/npm not installed" ;;
        boto3) "$PY" -c 'import boto3' 2>/dev/null || net_missing "python3-boto3 not importable by $PY" ;;
        openssl) command -v openssl >/dev/null 2>&1 || net_missing "openssl not installed" ;;
        zarr) "$PY" -c 'import zarr, numpy' 2>/dev/null || net_missing "python3-zarr not importable by $PY" ;;
        esac
    done
}

# Wait until a server wrote its port into FILE (or died).
net_wait_port() {
    local file=$1 pid=$2
    for _ in $(seq 1 200); do
        if [ -s "$file" ] && grep -q '^[0-9][0-9]*$' "$file"; then cat "$file"; return 0; fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# net_spawn NAME CMD...: run a server that prints its port on its first line,
# remember its PID (in the caller's NET_PIDS via a file) and print the port.
net_spawn() {
    local name=$1 pf
    shift
    pf=$(mktemp "${TMPDIR:-/tmp}/zc-port.XXXXXX")
    "$@" >"$pf" &
    local pid=$!
    echo "$pid:TERM" >>"$NET_PIDFILE"
    if ! net_wait_port "$pf" "$pid"; then
        echo "FAIL: $name did not start" >&2
        rm -f "$pf"
        return 1
    fi
    rm -f "$pf"
}

free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

tls_cert() {
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null
}

nginx_start() {
    local root=$1 d tls=""
    [ $# -ge 3 ] && tls="ssl; ssl_certificate $2; ssl_certificate_key $3"
    d=$(mktemp -d "${TMPDIR:-/tmp}/zc-nginx.XXXXXX")
    chmod 755 "$d"
    local nginx=nginx
    command -v nginx >/dev/null 2>&1 || nginx=/usr/sbin/nginx
    for _ in 1 2 3 4 5; do
        NGINX_PORT=$(free_port)
        cat >"$d/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 512; }
http {
    access_log off;
    client_body_temp_path $d/body; proxy_temp_path $d/proxy; fastcgi_temp_path $d/fcgi;
    uwsgi_temp_path $d/uwsgi; scgi_temp_path $d/scgi;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$NGINX_PORT $tls; root $root;
        location /moved/ { rewrite ^/moved/(.*)\$ /\$1 redirect; }  # 302 to the same file
        location /loop/ { rewrite ^ \$uri redirect; }                # 302 to itself, forever
    }
}
CONF
        "$nginx" -c "$d/nginx.conf" -e "$d/error.log" &
        local pid=$!
        for _ in $(seq 1 100); do
            if "$PY" -c "import socket,sys; socket.create_connection(('127.0.0.1',$NGINX_PORT),0.2)" 2>/dev/null; then
                NET_PIDS+=("$pid:QUIT")
                NET_DIRS+=("$d")
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -QUIT "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    echo "FAIL: nginx did not start: $(tail -3 "$d/error.log")"
    exit 1
}

s3_start() {
    local dir=$1 bucket=$2
    if [ ! -f "$NET_HERE/../s3/node_modules/@20minutes/s3rver/package.json" ]; then
        (
            flock 9
            if [ ! -f "$NET_HERE/../s3/node_modules/@20minutes/s3rver/package.json" ]; then
                cd "$NET_HERE/../s3" && { npm ci --silent --no-audit --no-fund >/dev/null 2>&1 ||
                                          npm install --silent --no-audit --no-fund >/dev/null 2>&1; }
            fi
        ) 9>"${TMPDIR:-/tmp}/zcube-s3-npm.lock"
        [ -f "$NET_HERE/../s3/node_modules/@20minutes/s3rver/package.json" ] ||
            net_missing "could not install @20minutes/s3rver with npm in tests/s3"
    fi
    mkdir -p "$dir"
    S3_PORT=$(NODE_OPTIONS=--openssl-legacy-provider net_spawn s3rver node "$NET_HERE/../s3/s3server.js" "$dir" "$bucket") ||
        exit 1
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
    export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT
    unset AWS_SESSION_TOKEN AWS_DEFAULT_REGION ZCUBE_S3_ANONYMOUS ZCUBE_S3_ADDRESSING AWS_PROFILE AWS_DEFAULT_PROFILE
    # no AWS shared files of the machine's user: only what the tests set
    export AWS_SHARED_CREDENTIALS_FILE=$dir/.no-aws-credentials AWS_CONFIG_FILE=$dir/.no-aws-config
}

proxy_start() {
    local up=$1
    shift
    PROXY_PORT=$(net_spawn "fault proxy" "$PY" "$NET_HERE/faultproxy.py" --upstream "$up" "$@") || exit 1
}

latency_proxy_start() {
    local bin=$1 up=$2 ms=$3
    PROXY_PORT=$(net_spawn "latency proxy" "$bin" --upstream "$up" --latency-ms "$ms") || exit 1
}

net_stop_all() {
    local e
    [ -f "$NET_PIDFILE" ] && mapfile -t -O "${#NET_PIDS[@]}" NET_PIDS <"$NET_PIDFILE"
    rm -f "$NET_PIDFILE"
    for e in "${NET_PIDS[@]}"; do
        kill -"${e#*:}" "${e%%:*}" 2>/dev/null
    done
    for e in "${NET_PIDS[@]}"; do # not all are our children (net_spawn runs in $(...)): poll
        for _ in $(seq 1 100); do kill -0 "${e%%:*}" 2>/dev/null || break; sleep 0.05; done
        wait "${e%%:*}" 2>/dev/null
    done
    NET_PIDS=()
    for e in "${NET_DIRS[@]}"; do rm -rf "$e"; done
    NET_DIRS=()
NET_PIDFILE=$(mktemp "${TMPDIR:-/tmp}/zc-netpids.XXXXXX") # servers started in $(...) subshells
}
NET_DIRS=()
NET_PIDFILE=$(mktemp "${TMPDIR:-/tmp}/zc-netpids.XXXXXX") # servers started in $(...) subshells
