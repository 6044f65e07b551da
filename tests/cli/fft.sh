#!/bin/bash
# tests/cli/fft.sh — the fft extension through `zcube eval`: a seeded random
# set of transforms against numpy.fft (fft_numpy.py: every function, norms, n,
# s, axes, dtypes, chunkings, lengths prime/power of two/mixed radix, the
# issue's examples, four-step cases), an FFT along an axis 27× longer than fits
# in --allowed-mem with the peak RSS of the process (/usr/bin/time -v) within
# the report's bound and the values equal to NumPy's, the plan of such an FFT, and bad
# arguments with their messages and exit codes.
# Usage: bash fft.sh <zcube> <tests/data>   (ZC_FFT_SEED=N to change the seed)
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr

# a sanitizer build's shadow memory and quarantine inflate RSS: RSS bounds are not checked there
SAN=0
ldd "$Z" | grep -q libasan && SAN=1

# timed NAME ARGS...: zcube ARGS under /usr/bin/time -v, stdout in $TMP/NAME.json;
# sets RSS_KB (the process's peak RSS); fails as zcube does
timed() {
    local name=$1
    shift
    CHECKS=$((CHECKS + 1))
    /usr/bin/time -v -o "$TMP/$name.time" "$Z" "$@" >"$TMP/$name.json" 2>"$TMP/err" || return 1
    RSS_KB=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/$name.time")
}

# ---- transforms against NumPy
SEED=${ZC_FFT_SEED:-20261122}
CHECKS=$((CHECKS + 1))
if ! "$PY" "$(dirname "$0")/fft_numpy.py" "$Z" "$TMP/np" "$SEED" 60 >"$TMP/np.log" 2>&1; then
    fail "fft_numpy.py (seed $SEED): $(tail -20 "$TMP/np.log")"
else
    echo "fft_numpy: $(tail -1 "$TMP/np.log")"
fi

# ---- an axis 27x longer than one task may hold: 2^23 float64 under --allowed-mem 64MB
# (reserved 8 MB: a task transforms lines of at most ~300K complex128)
"$PY" - "$TMP" <<'EOF' || { echo "FAIL: generating the long input"; exit 1; }
import sys, numpy as np, zarr
x = np.random.default_rng(5).standard_normal(2 ** 23)
zarr.open(f"{sys.argv[1]}/long.zarr", mode="w", shape=x.shape, chunks=(2 ** 18,), dtype=x.dtype)[...] = x
zarr.open(f"{sys.argv[1]}/u.zarr", mode="w", shape=(20, 30), chunks=(7, 8), dtype="f8")[...] = 1.0
zarr.open(f"{sys.argv[1]}/i.zarr", mode="w", shape=(20, 30), chunks=(7, 8), dtype="i4")[...] = 1
EOF
if ! timed long eval 'fft(t)' --in t="$TMP/long.zarr" -o "$TMP/long_fft.zarr" \
        --zarr-format 2 --allowed-mem 64MB --threads 2 --json; then
    fail "fft of the long axis: $(head -c 600 "$TMP/err")"
else
    # the process's peak RSS (time -v) above what it held when the computation
    # began (the report's rss_base) within the report's bound: 2 threads x 64 MB
    # + the reserve (block caches, FFTW, runtime; docs/internals/memory.md), and
    # every stage's peak (VmHWM) explained by the counted memory
    if [ "$SAN" = 1 ]; then
        echo "(sanitizer build: its shadow memory and quarantine inflate RSS, bound not checked)"
    else
        "$PY" - "$TMP/long.json" "$RSS_KB" <<'EOF' || fail "peak RSS of the long fft: $(head -c 600 "$TMP/long.json")"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
peak = int(sys.argv[2]) * 1024
print(f"fft of 2^23 under --allowed-mem 64MB: peak RSS {peak / 1e6:.0f} MB, {(peak - m['rss_base']) / 1e6:.0f} MB "
      f"above the start; bound {m['bound'] / 1e6:.0f} MB (2 x 64 MiB + reserve {m['reserve']['total'] / 1e6:.0f} MB)")
assert m["measured"] and m["agrees"] and m["within_bound"], m
assert peak - m["rss_base"] <= m["bound"], (peak, m)
EOF
    fi
    CHECKS=$((CHECKS + 1))
    "$PY" - "$TMP" <<'EOF' || fail "the long fft differs from NumPy's"
import sys, numpy as np, zarr
d = sys.argv[1]
x = zarr.open(f"{d}/long.zarr", mode="r")[...]
got = zarr.open(f"{d}/long_fft.zarr", mode="r")[...]
exp = np.fft.fft(x)
err = np.abs(got - exp).max() / np.abs(exp).max()
print(f"long fft vs NumPy: rel err {err:.3g}")
sys.exit(0 if got.dtype == np.complex128 and err < 1e-12 else 1)
EOF
fi
# the plan of it: four-step (two FFT stages, the twiddle fused, rechunks between) within the bound
expect_ok eval 'fft(t)' --in t="$TMP/long.zarr" -o "$TMP/p.zarr" --allowed-mem 64MB --plan-only --json &&
    "$PY" - "$TMP/out" <<'EOF' || fail "four-step plan: $(head -c 400 "$TMP/out")"
import json, sys
ops = json.load(open(sys.argv[1]))["operations"]
ffts = [o for o in ops if o["kind"] == "fft"]
assert len(ffts) == 2, ops
assert any(o["kind"] == "rechunk" for o in ops)
assert all(o["projected_mem"] <= 64 << 20 for o in ops)
assert max(f["chunks"][f["chunks"].index(max(f["chunks"]))] for f in ffts) < 2 ** 23
EOF
# a prime length too long for a task: Bluestein (three four-step transforms of 2^24), still within the bound
expect_ok eval 'fft(t, n=8388593)' --in t="$TMP/long.zarr" -o "$TMP/p.zarr" --allowed-mem 64MB --plan-only --json &&
    "$PY" - "$TMP/out" <<'EOF' || fail "Bluestein plan: $(head -c 400 "$TMP/out")"
import json, sys
ops = json.load(open(sys.argv[1]))["operations"]
assert sum(o["kind"] in ("fft", "ifft") for o in ops) == 6, [o["kind"] for o in ops]
assert all(o["projected_mem"] <= 64 << 20 for o in ops)
EOF

# ---- issue 17's example at a quarter of its scale: complex128 along an axis
# 25x longer than --allowed-mem 4MB, stored in chunks of a quarter of it
# (uncompressed, as spectra are): it runs (the reshapes into and out of the
# four-step read their uncompressed chunks in place and are counted at their
# true alignment), every operation measured within its projection, the peak
# RSS within 2 x the bound + 64 MB, the values NumPy's; below the smallest
# bound it is refused, naming that bound
"$PY" - "$TMP" <<'EOF' || { echo "FAIL: generating the quarter-bound input"; exit 1; }
import sys, numpy as np, zarr
rng = np.random.default_rng(17)
n = 2 ** 21 * 3
x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
zarr.open(f"{sys.argv[1]}/q.zarr", mode="w", shape=x.shape, chunks=(2 ** 16,), dtype=x.dtype, compressor=None)[...] = x
EOF
if ! timed q eval 'fft(q)' --in q="$TMP/q.zarr" -o "$TMP/q_fft.zarr" \
        --zarr-format 2 --allowed-mem 4MB --threads 2 --json; then
    fail "fft of 25x the bound with quarter-bound chunks: $(head -c 600 "$TMP/err")"
else
    "$PY" - "$TMP" "$RSS_KB" "$SAN" <<'EOF' || fail "fft of 25x the bound: $(head -c 600 "$TMP/q.json")"
import json, sys, numpy as np, zarr
d, rss, san = sys.argv[1], int(sys.argv[2]) * 1024, sys.argv[3] == "1"
rep = json.load(open(f"{d}/q.json"))
for o in rep["operations"]:
    assert o["measured_mem"] <= o["projected_mem"] <= 4_000_000, o
assert san or (rep["memory"]["agrees"] and rep["memory"]["within_bound"]), rep["memory"]
ffts = [o for o in rep["operations"] if o["kind"] == "fft"]
assert len(ffts) == 2, [o["kind"] for o in rep["operations"]]
print(f"fft of 2^21*3 complex128 under --allowed-mem 4MB: {len(rep['operations'])} ops, "
      f"peak RSS {rss / 1e6:.0f} MB{' (sanitizer build: not checked)' if san else ''}")
assert san or rss <= 2 * 4_000_000 + 64_000_000, rss
x = zarr.open(f"{d}/q.zarr", mode="r")[...]
got = zarr.open(f"{d}/q_fft.zarr", mode="r")[...]
exp = np.fft.fft(x)
err = np.abs(got - exp).max() / np.abs(exp).max()
print(f"  vs NumPy: rel err {err:.3g}")
assert err < 1e-10, err
EOF
fi
expect_fail 1 "the smallest allowed_mem this plan fits is 3.9 MB" eval 'fft(q)' --in q="$TMP/q.zarr" -o "$TMP/p.zarr" \
    --allowed-mem 3MB --plan-only
rm -rf "$TMP/q.zarr" "$TMP/q_fft.zarr"

# ---- bad arguments
U=$TMP/u.zarr
O=$TMP/o.zarr
expect_fail 1 "axis 2 is out of range for an array of 2 dimensions" eval 'fft(u, axis=2)' --in u=$U -o $O
expect_fail 1 "axis -3 is out of range" eval 'rfft(u, axis=-3)' --in u=$U -o $O
expect_fail any "n must be >= 1 (got 0)" eval 'fft(u, n=0)' --in u=$U -o $O
expect_fail any "n must be >= 1 (got -4)" eval 'irfft(u, n=-4)' --in u=$U -o $O
expect_fail 1 'norm must be "backward", "ortho" or "forward" (got "sideways")' eval 'fft(u, norm="sideways")' --in u=$U -o $O
expect_fail any "norm must be a string" eval 'fft(u, norm=1)' --in u=$U -o $O
expect_fail 1 "irfft: needs a floating-point or complex array (got int32)" eval 'irfft(i)' --in i=$TMP/i.zarr -o $O
expect_fail 1 "hfft: needs a floating-point or complex array (got int32)" eval 'hfft(i, axis=0)' --in i=$TMP/i.zarr -o $O
expect_fail 1 "rfft: needs a real array (got complex128)" eval 'rfft(fft(u))' --in u=$U -o $O
expect_fail 1 "repeated" eval 'fftn(u, axes=(0, 0))' --in u=$U -o $O
expect_fail 1 "s has 1 entries but axes has 2" eval 'fftn(u, s=(4,), axes=(0, 1))' --in u=$U -o $O
expect_fail 1 "fftfreq: n must be >= 1" eval 'fftfreq(0)' -o $O
expect_fail 1 "d must be finite and non-zero" eval 'fftfreq(8, d=0)' -o $O
expect_fail any "n must be an integer" eval 'fft(u, n=2.5)' --in u=$U -o $O
expect_fail any "axis must be an integer" eval 'fft(u, axis="x")' --in u=$U -o $O
# the names also under fft.
expect_ok eval 'fft.rfft(u, axis=1)' --in u=$U -o $O --quiet --zarr-format 2 &&
    "$PY" - "$O" <<'EOF' || fail "fft.rfft(u, axis=1) of ones is not 30 at frequency 0 and 0 elsewhere"
import sys, numpy as np, zarr
got = zarr.open(sys.argv[1], mode="r")[...]
exp = np.fft.rfft(np.ones((20, 30)), axis=1)
sys.exit(0 if got.shape == (20, 16) and got.dtype == np.complex128 and np.abs(got - exp).max() < 1e-12 else 1)
EOF

finish
