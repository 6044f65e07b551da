# tests/cli/dist_common.bash — the computations every distributed executor must
# run exactly like `threads` (sourced by dist_*.sh after common.bash; not a test).
#
#   dist_inputs                 make the small input arrays in $TMP
#   dist_same NAME ARGS...      run `zcube ARGS... -o $TMP/NAME.t` with threads and
#                               `$DIST_RUN zcube ARGS... -o $TMP/NAME.d $DIST_OPTS`, and
#                               compare the two outputs' files byte for byte
#   dist_cases                  dist_same over Quadratic Means, a multistage rechunk,
#                               an rfft along a chunked axis, a TSQR SVD and a copy
#                               into a sharded array
#   report_sum FILE KEY         sum of KEY over the workers of a --json report
# DIST_RUN (e.g. "mpirun -np 3") and DIST_OPTS (e.g. "--executor processes --workers 3")
# come from the test.

dist_inputs() {
    expect_ok eval 'uniform(size=(64,40,30), chunks=(8,20,15), seed=1, dtype=float32)' -o "$TMP/u.zarr" -q
    expect_ok eval 'normal(size=(64,40,30), chunks=(8,20,15), seed=2, dtype=float32)' -o "$TMP/v.zarr" -q
    expect_ok eval 'uniform(size=(256,64,64), chunks=(256,4,4), seed=3, dtype=float32)' -o "$TMP/r.zarr" -q
    expect_ok eval 'normal(size=(4000,6), chunks=(250,6), seed=4)' -o "$TMP/a.zarr" -q
}

# Output files without the hidden temporary files a killed writer may leave.
same_tree() {
    diff -r -x '.*' "$1" "$2" >/dev/null
}

dist_same() {
    local name=$1
    shift
    CHECKS=$((CHECKS + 1))
    rm -rf "$TMP/$name.t" "$TMP/$name.d"
    if ! "$Z" "$@" -o "$TMP/$name.t" -q 2>"$TMP/err"; then
        fail "$name: threads run failed: $(head -c 600 "$TMP/err")"
        return 1
    fi
    # shellcheck disable=SC2086
    if ! $DIST_RUN "$Z" "$@" -o "$TMP/$name.d" $DIST_OPTS --json >"$TMP/$name.json" 2>"$TMP/err"; then
        fail "$name: $DIST_OPTS run failed: $(head -c 600 "$TMP/err")"
        return 1
    fi
    same_tree "$TMP/$name.t" "$TMP/$name.d" || fail "$name: $DIST_OPTS output differs from threads"
}

dist_cases() {
    dist_same qm_uu eval 'mean(u**2, axis=0)' --in u="$TMP/u.zarr"
    dist_same qm_vv eval 'mean(v**2, axis=0)' --in v="$TMP/v.zarr"
    dist_same qm_uv eval 'mean(u*v, axis=0)' --in u="$TMP/u.zarr" --in v="$TMP/v.zarr"
    dist_same rechunk rechunk "$TMP/r.zarr" --chunks 4,64,64 --allowed-mem 500KB --codec none
    dist_same rfft eval 'rfft(u, axis=0)' --in u="$TMP/u.zarr" --allowed-mem 4MB
    dist_same tsqr eval 'svd(a)[1]' --in a="$TMP/a.zarr"
    dist_same copy copy "$TMP/r.zarr" --chunks 16,32,32 --zarr-format 2 --max-mem 2MB
    dist_same copy3 copy "$TMP/r.zarr" --chunks 4,32,32 --shards 8,64,64 --codec zstd:1,crc32c --max-mem 4MB
}

report_sum() {
    "$PY" -c 'import json,sys; print(sum(w[sys.argv[2]] for w in json.load(open(sys.argv[1]))["workers"]))' "$1" "$2"
}
