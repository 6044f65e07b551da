#!/bin/bash
# tests/cli/api_numpy.sh — the library's manipulation, indexing, cumulative and
# data type functions against NumPy (tests/cli/api_numpy.py via ctypes on the
# shared library built beside the zcube binary), several seeds.
. "$(dirname "$0")/common.bash"
LIB="$(dirname "$Z")/libzcube.so"
zc_require_python numpy
if [ ! -e "$LIB" ]; then # built with the zcube binary: its absence is a build error, not a skip
    echo "FAIL: $LIB not built"
    exit 1
fi
# a sanitizer build: Python must load the ASan runtime first (and not report its own leaks)
ASAN_RT=$(ldd "$LIB" | awk '/libasan/ {print $3}')
if [ -n "$ASAN_RT" ]; then
    export LD_PRELOAD="$ASAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # Python itself leaks at exit
fi
for seed in 1 2 3 4 5; do
    CHECKS=$((CHECKS + 1))
    "$PY" "$(dirname "$0")/api_numpy.py" "$LIB" "$seed" 80 >"$TMP/np.out" 2>&1 || fail "$(cat "$TMP/np.out")"
    tail -1 "$TMP/np.out"
done
finish
