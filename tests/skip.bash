# tests/skip.bash — the skip convention of the test scripts, sourced by
# tests/cli/common.bash and tests/interop/common.bash (tests/harness.h has the
# C side: SKIP). A test that cannot run because something it needs is missing
# on this machine says what, and is counted by ctest as "Skipped", never as
# "Passed"; where everything is required (ZC_REQUIRE_ALL=1: scripts/test.sh,
# hence CI) the same situation is a failure.
#
#   zc_skip REASON              exit 77 (ctest SKIP_RETURN_CODE) printing
#                               "SKIP: REASON"; with ZC_REQUIRE_ALL=1 exit 1
#                               printing "FAIL: required but missing: REASON"
#   zc_require_python [MOD...]  zc_skip unless $PY runs and imports every MOD

zc_skip() {
    if [ "${ZC_REQUIRE_ALL:-0}" != 0 ]; then
        echo "FAIL: required but missing: $*"
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}

zc_require_python() {
    local mods
    mods=$(IFS=,; echo "$*")
    [ -x "$PY" ] || zc_skip "$PY missing or not executable (scripts/install-deps.sh installs python3 with numpy and zarr)"
    [ $# -eq 0 ] || "$PY" -c "import $mods" 2>/dev/null ||
        zc_skip "$PY cannot import $mods (scripts/install-deps.sh installs python3-numpy and python3-zarr)"
}
