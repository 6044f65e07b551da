# Sourced by the interop test scripts (not itself a test: CMake registers *.sh only).
# Usage in a script:  source "$(dirname "$0")/common.bash"; interop_init "$@"
# Sets ZCUBE (absolute path of the binary), DATA_DIR, HERE, PY. A missing
# dependency skips the test (zc_skip, tests/skip.bash).
. "$(dirname "${BASH_SOURCE[0]}")/../skip.bash"

interop_init() {
    HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    PY=${ZC_PYTHON:-/usr/bin/python3}
    if [ $# -lt 1 ]; then
        echo "usage: bash $0 PATH-TO-ZCUBE [TESTS-DATA-DIR]" >&2
        exit 2
    fi
    case "$1" in
        /*) ZCUBE=$1 ;;
        *) ZCUBE=$(pwd)/$1 ;;
    esac
    DATA_DIR=${2:-$HERE/../data}
    if [ ! -x "$ZCUBE" ]; then
        echo "FAIL: zcube binary not found or not executable: $ZCUBE"
        exit 1
    fi
}

# zc_skip (tests/skip.bash) unless $PY can import zarr, numcodecs and numpy.
require_zarr_python() {
    zc_require_python zarr numcodecs numpy
}

# zc_skip unless node runs, zarrita is installed in tests/interop/node_modules
# (scripts/install-deps.sh: npm ci there, from package-lock.json) and $PY can
# import what the drivers use (numpy; zarr-python writes the copy cases' sources).
require_zarrita() {
    node --version >/dev/null 2>&1 || zc_skip "node does not run (scripts/install-deps.sh installs nodejs)"
    [ -f "$HERE/node_modules/zarrita/package.json" ] ||
        zc_skip "zarrita not installed in $HERE/node_modules (scripts/install-deps.sh runs npm ci there)"
    zc_require_python zarr numcodecs numpy
    echo "node $(node --version), zarrita $(node -p "require('$HERE/node_modules/zarrita/package.json').version")"
}
