#!/usr/bin/env bash
# The Python module on S3: starts @20minutes/s3rver on loopback (stopped by its
# PID on exit) and runs tests/python/s3_cases.py against it.
# Usage: bash s3.sh   (ctest sets PYTHONPATH=build/python and PY)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../net/servers.bash"
net_need node boto3 zarr
TMP=$(mktemp -d "${TMPDIR:-/tmp}/zc-pys3.XXXXXX")
trap 'net_stop_all; rm -rf "$TMP"' EXIT
s3_start "$TMP/s3data" pyb
ZC_S3_BUCKET=pyb "$PY" -m pytest -q -p no:cacheprovider "$HERE/s3_cases.py"
