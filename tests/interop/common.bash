# Sourced by the interop test scripts (not itself a test: CMake registers *.sh only).
# Usage in a script:  source "$(dirname "$0")/common.bash"; interop_init "$@"
# Sets ZCUBE (absolute path of the binary), DATA_DIR, HERE, PY.

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

# Exit 0 with "SKIP: ..." unless /usr/bin/python3 can import zarr and numpy.
require_zarr_python() {
    if [ ! -x "$PY" ]; then
        echo "SKIP: $PY not found (install python3-zarr: scripts/install-deps.sh)"
        exit 0
    fi
    if ! "$PY" -c 'import zarr, numcodecs, numpy' 2>/dev/null; then
        echo "SKIP: python3-zarr/numpy not importable by $PY (scripts/install-deps.sh installs them)"
        exit 0
    fi
}

# Exit 0 with "SKIP: ..." unless node and npm exist; make sure zarrita is
# installed in tests/interop/node_modules (npm ci from package-lock.json).
require_zarrita() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "SKIP: node/npm not installed (scripts/install-deps.sh installs nodejs)"
        exit 0
    fi
    if ! "$PY" -c 'import numpy' 2>/dev/null; then
        echo "SKIP: numpy not importable by $PY"
        exit 0
    fi
    if [ ! -f "$HERE/node_modules/zarrita/package.json" ]; then
        echo "installing zarrita into $HERE/node_modules (npm ci)"
        # A lock shared by the zarrita tests, which ctest may run in parallel.
        (
            flock 9
            if [ ! -f "$HERE/node_modules/zarrita/package.json" ]; then
                cd "$HERE" && { npm ci --silent --no-audit --no-fund >/dev/null 2>&1 ||
                                npm install --silent --no-audit --no-fund; }
            fi
        ) 9>"${TMPDIR:-/tmp}/zcube-interop-npm.lock"
        if [ ! -f "$HERE/node_modules/zarrita/package.json" ]; then
            echo "FAIL: could not install zarrita with npm in $HERE"
            exit 1
        fi
    fi
    echo "node $(node --version), zarrita $(node -p "require('$HERE/node_modules/zarrita/package.json').version")"
}
