#!/bin/bash
# tests/cli/eval.sh — `zcube eval` and `zcube rechunk`: a seeded random set of
# expressions compared with NumPy (eval_numpy.py), --plan-only and --json
# output, fusion visible in plans, --visualize SVG, summaries, --chunks,
# --codec/--zarr-format of the output, --resume, the progress bar on a
# terminal, rechunk values/chunks/memory, and error cases (syntax, names,
# arity, broadcasting, memory bound, options) with their exit codes.
# Usage: bash eval.sh <zcube> <tests/data>   (ZC_EVAL_SEED=N to change the seed)
source "$(dirname "$0")/common.bash"

zc_require_python numpy zarr numcodecs

# ---- expressions against NumPy
SEED=${ZC_EVAL_SEED:-20261121}
CHECKS=$((CHECKS + 1))
if ! "$PY" "$(dirname "$0")/eval_numpy.py" "$Z" "$TMP/np" "$SEED" 40 >"$TMP/np.log" 2>&1; then
    fail "eval_numpy.py (seed $SEED): $(grep -v '^\[' "$TMP/np.log" | tail -20)"
else
    echo "eval_numpy: $(tail -1 "$TMP/np.log")"
fi

# ---- inputs for the checks below
"$PY" - "$TMP" <<'EOF' || { echo "FAIL: generating inputs"; exit 1; }
import sys, numpy as np, zarr
d = sys.argv[1]
rng = np.random.default_rng(3)
u = rng.standard_normal((20, 30))
zarr.open(f"{d}/u.zarr", mode="w", shape=u.shape, chunks=(7, 8), dtype=u.dtype)[...] = u
w = rng.standard_normal(7)
zarr.open(f"{d}/w.zarr", mode="w", shape=w.shape, chunks=(3,), dtype=w.dtype)[...] = w
m = rng.standard_normal((64, 1024))           # 512 KiB chunks: too big for --allowed-mem 1MB
zarr.open(f"{d}/m.zarr", mode="w", shape=m.shape, chunks=m.shape, dtype=m.dtype)[...] = m
s = rng.standard_normal((300, 400))           # column chunks, to rechunk into row chunks
zarr.open(f"{d}/s.zarr", mode="w", shape=s.shape, chunks=(300, 1), dtype=s.dtype, compressor=None)[...] = s
np.save(f"{d}/u.npy", u)
np.save(f"{d}/s.npy", s)
EOF
U=$TMP/u.zarr

# n_ops EXPR [--in ...]: number of operations in the plan (from --plan-only --json)
n_ops() {
    local expr=$1
    shift
    "$Z" eval "$expr" "$@" --plan-only --json 2>/dev/null |
        "$PY" -c 'import json, sys; print(len(json.load(sys.stdin)["operations"]))' 2>/dev/null || echo -1
}

# same_values OUT.zarr EXPR-ON-u: the zarr (v2) array equals NumPy's value of the expression
same_values() {
    "$PY" - "$1" "$2" "$TMP/u.npy" <<'EOF'
import sys, numpy as np, zarr
got = zarr.open(sys.argv[1], mode="r")[...]
u = np.load(sys.argv[3])
exp = eval(sys.argv[2], {"np": np, "u": u})
sys.exit(0 if got.shape == exp.shape and got.dtype == exp.dtype and np.allclose(got, exp, rtol=1e-12, atol=1e-12) else 1)
EOF
}

# ---- --plan-only: one line per operation, fusion visible
if expect_ok eval 'mean(u**2, axis=0)' --in u=$U --plan-only; then
    n=$(n_ops 'mean(u**2, axis=0)' --in u=$U)
    lines=$(wc -l <"$TMP/out")
    [ "$lines" -eq $((n + 3)) ] || fail "plan-only: $lines lines for $n operations (expected header, titles, one per operation, peak)"
    head -1 "$TMP/out" | grep -q "^plan: $n operation" || fail "plan-only header: $(head -1 "$TMP/out")"
    grep -q "mean" "$TMP/out" || fail "plan-only lacks the mean operation: $(cat "$TMP/out")"
    grep -q -- "-> output" "$TMP/out" || fail "plan-only does not mark the output"
fi
CHECKS=$((CHECKS + 3))
n_sum=$(n_ops 'sum(u)' --in u=$U)
n_chain=$(n_ops 'sum(sin(u) * 2 + abs(u) - 1)' --in u=$U)
[ "$n_sum" -ge 1 ] && [ "$n_sum" -eq "$n_chain" ] ||
    fail "elementwise chain not fused into the reduction: sum(u) has $n_sum operations, the chain $n_chain"
n_ew=$(n_ops 'exp(u) * 2 + u / 3 - 1' --in u=$U)
[ "$n_ew" -eq 1 ] || fail "elementwise chain: $n_ew operations, expected 1 (fused)"
if expect_ok eval 'sum(sin(u) * 2 + 1)' --in u=$U --plan-only --json; then
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert "sin" in json.dumps(d["operations"])' "$TMP/out" ||
        fail "plan JSON does not name the fused sin: $(head -c 400 "$TMP/out")"
fi
# the plan needs no output path and writes nothing
expect_ok eval 'u + 1' --in u=$U --plan-only -o "$TMP/never.zarr"
[ -e "$TMP/never.zarr" ] && fail "--plan-only created the output"

# ---- --visualize: well-formed SVG, one box per operation
CHECKS=$((CHECKS + 1))
if expect_ok eval 'mean(u, axis=0) - u[3]' --in u=$U --plan-only --visualize "$TMP/plan.svg"; then
    n=$(n_ops 'mean(u, axis=0) - u[3]' --in u=$U)
    "$PY" - "$TMP/plan.svg" "$n" <<'EOF' || fail "plan.svg: not an SVG with one box per operation"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
rects = root.findall(f".//{ns}rect")
assert len(rects) == int(sys.argv[2]) + 1, (len(rects), sys.argv[2])
EOF
fi
expect_ok eval 'u * 2' --in u=$U -o "$TMP/vis.zarr" --visualize "$TMP/vis.svg" -q &&
    { [ -s "$TMP/vis.svg" ] || fail "--visualize with a computation wrote no SVG"; }
expect_fail 1 "--visualize" eval 'u * 2' --in u=$U --plan-only --visualize /nonexistent-dir/p.svg

# ---- summaries: text, --quiet, --json
if expect_ok eval 'mean(u**2, axis=0)' --in u=$U -o "$TMP/mean.zarr" --zarr-format 2; then
    grep -q "^wrote $TMP/mean.zarr$" "$TMP/out" || fail "summary lacks 'wrote': $(head -3 "$TMP/out")"
    grep -q "operation.*task.* in .* s$" "$TMP/out" || fail "summary lacks operations/tasks/time: $(cat "$TMP/out")"
    grep -q "^peak memory per task: .* measured, .* projected, .* allowed$" "$TMP/out" ||
        fail "summary lacks the memory line: $(cat "$TMP/out")"
    grep -q "^intermediates written: " "$TMP/out" || fail "summary lacks intermediates"
    [ -s "$TMP/err" ] && fail "stderr not empty without a terminal: $(cat "$TMP/err")"
    same_values "$TMP/mean.zarr" "np.mean(u**2, axis=0)" || fail "mean(u**2, axis=0) differs from NumPy"
fi
expect_ok eval 'u - 1' --in u=$U -o "$TMP/q.zarr" -q && { [ -s "$TMP/out" ] && fail "--quiet printed: $(cat "$TMP/out")"; }
if expect_ok eval 'sum(u, axis=1)' --in u=$U -o "$TMP/j.zarr" --json; then
    "$PY" - "$TMP/out" <<'EOF' || fail "--json report: $(head -c 300 "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tasks"] >= 1 and d["operations"], d
# measured <= projected <= allowed_mem (compressor state comes from reserved_mem)
for o in d["operations"]:
    assert o["measured_mem"] <= o["projected_mem"] <= d["memory"]["allowed_mem"], o
assert d["peak_task_mem"] <= d["memory"]["allowed_mem"]
EOF
fi

# ---- output options: --chunks, --codec, --zarr-format
if expect_ok eval 'u + 1' --in u=$U -o "$TMP/c.zarr" --chunks 4,30 --zarr-format 2 --codec gzip:1 -q; then
    "$PY" - "$TMP/c.zarr" <<'EOF' || fail "--chunks/--codec/--zarr-format not applied: $(cat "$TMP/c.zarr/.zarray")"
import json, sys
m = json.load(open(sys.argv[1] + "/.zarray"))
assert m["chunks"] == [4, 30] and m["compressor"]["id"] == "gzip", m
EOF
    same_values "$TMP/c.zarr" "u + 1" || fail "u + 1 with --chunks differs from NumPy"
fi
if expect_ok eval 'u[::2] * 3' --in u=$U -o "$TMP/v3.zarr" -q; then
    [ -f "$TMP/v3.zarr/zarr.json" ] || fail "default output format is not Zarr v3"
    expect_ok get "$TMP/v3.zarr" -o "$TMP/v3.npy" &&
        { "$PY" -c 'import numpy as np, sys; a = np.load(sys.argv[1]); b = np.load(sys.argv[2])[::2] * 3; sys.exit(0 if np.allclose(a, b, rtol=1e-12) else 1)' "$TMP/v3.npy" "$TMP/u.npy" ||
            fail "u[::2] * 3 read back by zcube get differs"; }
fi
# -1 in --chunks is a whole dimension (as in chunks= and Dask), in every command that takes --chunks
chunks_of() { expect_ok info "$1" && grep -q "^chunks: *($2)" "$TMP/out" || fail "$1: chunks not ($2): $(grep chunks "$TMP/out")"; }
expect_ok create "$TMP/w1.zarr" --shape 6,10 --chunks -1,5 --dtype f4 && chunks_of "$TMP/w1.zarr" "6, 5"
expect_ok rechunk "$TMP/w1.zarr" "$TMP/w2.zarr" --chunks 2,-1 -q && chunks_of "$TMP/w2.zarr" "2, 10"
expect_ok copy "$TMP/w1.zarr" "$TMP/w3.zarr" --chunks -1,-1 && chunks_of "$TMP/w3.zarr" "6, 10"
expect_ok eval 'ones((4, 6))' --chunks -1,2 -o "$TMP/w4.zarr" -q && chunks_of "$TMP/w4.zarr" "4, 2"
expect_fail 2 "-2 must be positive (or -1 for a whole dimension)" rechunk "$TMP/w1.zarr" "$TMP/w5.zarr" --chunks -2,5
expect_fail 2 "-1 must be positive" create "$TMP/w6.zarr" --shape -1,5 --dtype f4 # a shape has no such thing
# the expression may start with '-' after "--"
expect_ok eval -o "$TMP/neg.zarr" --in u=$U -q --zarr-format 2 -- '-u' && { same_values "$TMP/neg.zarr" "-u" || fail "-u differs"; }

# ---- existing outputs, --overwrite, --resume
expect_fail 1 "already holds a Zarr v2 array; give --overwrite" eval 'u' --in u=$U -o "$TMP/mean.zarr"
expect_ok eval 'u * 0 + 5' --in u=$U -o "$TMP/mean.zarr" --overwrite --zarr-format 2 -q &&
    { same_values "$TMP/mean.zarr" "u * 0 + 5" || fail "--overwrite did not replace the values"; }
if expect_ok eval 'u * 2 + 1' --in u=$U -o "$TMP/r.zarr" --work-dir "$TMP/work" --resume --zarr-format 2; then
    expect_ok eval 'u * 2 + 1' --in u=$U -o "$TMP/r.zarr" --work-dir "$TMP/work" --resume --zarr-format 2 &&
        { grep -q "skipped: already written" "$TMP/out" || fail "--resume re-ran finished tasks: $(cat "$TMP/out")"; }
    same_values "$TMP/r.zarr" "u * 2 + 1" || fail "--resume result differs"
fi
# a file:// work dir is its folder: made, used and removed as a path's, on threads and on worker processes
for ex in threads processes; do
    expect_ok eval 'sum(rechunk(ones((400, 300), chunks=(16, 300)), (400, 8)) * 2, axis=0)' -o "$TMP/fw_$ex.zarr" \
        --work-dir "file://$TMP/fw_$ex" --allowed-mem 2MB --executor $ex --zarr-format 2 -q &&
        { same_values "$TMP/fw_$ex.zarr" "np.full((300,), 800.0)" || fail "eval with a file:// work dir ($ex) differs"; }
    [ ! -e "$TMP/fw_$ex" ] || fail "the file:// work dir ($ex) was left: $(ls -A "$TMP/fw_$ex")"
done

# ---- progress bar on a terminal (script gives the command a pty)
if command -v script >/dev/null 2>&1; then
    CHECKS=$((CHECKS + 1))
    script -qec "$Z eval 'sum(ones((4000, 8), chunks=(1, 8)))' -o $TMP/pb.zarr" /dev/null >"$TMP/pty" 2>&1 </dev/null
    grep -q $'\r\[1/[0-9]*\] op0' "$TMP/pty" && grep -q "tasks" "$TMP/pty" ||
        fail "no progress bar on a terminal: $(head -c 300 "$TMP/pty" | tr '\r' '|')"
    grep -q "^wrote $TMP/pb.zarr" <(tr '\r' '\n' <"$TMP/pty" | sed 's/\x1b\[K//g') || fail "no summary after the bar"
fi

# ---- Ctrl-C cancels at the next task: one error line, exit 1
CHECKS=$((CHECKS + 1))
# (--resume keeps intermediates on disk, where this takes seconds; small ones otherwise stay in memory)
"$Z" eval 'sum(ones((4000000, 8), chunks=(1, 8)))' -o "$TMP/int.zarr" -q --work-dir "$TMP/intwork" --resume \
    >"$TMP/int.out" 2>"$TMP/int.err" &
ipid=$!
for _ in $(seq 200); do # interrupt once tasks run (the first intermediate exists), not while planning
    [ -e "$TMP/intwork/op0" ] && break
    sleep 0.1
done
sleep 0.2
kill -INT $ipid 2>/dev/null
( sleep 30; kill -9 $ipid 2>/dev/null ) &
guard=$!
wait $ipid
irc=$?
kill $guard 2>/dev/null
[ "$irc" -eq 1 ] && grep -q "^zcube: eval: interrupted; '$TMP/int.zarr' is incomplete" "$TMP/int.err" ||
    fail "SIGINT: exit $irc, stderr: $(cat "$TMP/int.err")"

# ---- rechunk: values, chunks, memory contract, multistage under a small bound
if expect_ok rechunk "$TMP/s.zarr" "$TMP/s_rows.zarr" --chunks 1,400 --allowed-mem 4MB --zarr-format 2 --json; then
    "$PY" - "$TMP/s_rows.zarr" "$TMP/s.npy" "$TMP/out" <<'EOF' || fail "rechunk: values, chunks or memory wrong"
import json, sys, numpy as np, zarr
z = zarr.open(sys.argv[1], mode="r")
assert z.chunks == (1, 400), z.chunks
assert np.array_equal(z[...], np.load(sys.argv[2]))
rep = json.load(open(sys.argv[3]))
assert rep["peak_task_mem"] <= rep["memory"]["allowed_mem"], rep
for o in rep["operations"]:
    assert o["measured_mem"] <= o["projected_mem"] <= rep["memory"]["allowed_mem"], o
EOF
fi
expect_ok rechunk "$TMP/s.zarr" --chunks 30,40 --plan-only && { grep -q "^plan: " "$TMP/out" || fail "rechunk --plan-only"; }
if expect_ok rechunk "$TMP/s.zarr" "$TMP/s_sq.zarr" --chunks 30,40 -q; then
    expect_ok get "$TMP/s_sq.zarr" -o "$TMP/s_sq.npy" &&
        { cmp -s <("$PY" -c 'import numpy as np, sys; print(np.load(sys.argv[1]).tobytes().hex())' "$TMP/s_sq.npy") \
              <("$PY" -c 'import numpy as np, sys; print(np.load(sys.argv[1]).tobytes().hex())' "$TMP/s.npy") ||
            fail "rechunk to v3 (30,40) changed values"; }
fi
# --plan-only shows the plan the run executes: planned against a store that
# keeps no copy of what it writes, as the output's folder (not a memory store)
expect_ok eval 'uniform(size=(256,64,64), chunks=(256,4,4), seed=3, dtype=float32)' -o "$TMP/r3.zarr" -q
RC3=(rechunk "$TMP/r3.zarr" --chunks 4,64,64 --allowed-mem 500KB --codec none --json -o "$TMP/r3b.zarr")
if expect_ok "${RC3[@]}" --plan-only && cp "$TMP/out" "$TMP/r3plan.json" && expect_ok "${RC3[@]}"; then
    "$PY" - "$TMP/r3plan.json" "$TMP/out" <<'EOF' || fail "--plan-only planned otherwise than the run"
import json, sys
plan, run = (json.load(open(f)) for f in sys.argv[1:3])
key = lambda r: [(o["kind"], o["tasks"], o["projected_mem"], o.get("copy_block")) for o in r["operations"]]
assert plan["tasks"] == run["tasks"] and key(plan) == key(run), (key(plan), key(run))
EOF
fi
expect_fail 2 "missing --chunks" rechunk "$TMP/s.zarr" "$TMP/x1.zarr"
expect_fail 2 "--chunks has 1 entry but" rechunk "$TMP/s.zarr" "$TMP/x1.zarr" --chunks 5
expect_fail 1 "already holds" rechunk "$TMP/s.zarr" "$TMP/s_rows.zarr" --chunks 10,10
expect_fail 1 "nonexistent" rechunk "$TMP/nonexistent.zarr" "$TMP/x1.zarr" --chunks 10,10
expect_fail 2 "is also an input" rechunk "$TMP/s.zarr" "$TMP/s.zarr" --chunks 10,10
expect_fail 2 "missing the output" rechunk "$TMP/s.zarr" --chunks 10,10
expect_fail 1 "allowed" rechunk "$TMP/m.zarr" "$TMP/x2.zarr" --chunks 64,1 --allowed-mem 100KB

# ---- errors in expressions: one line, the column, exit 2 (expression) or 1 (library)
O=$TMP/err.zarr
expect_fail 2 "at column 6: unexpected end of expression" eval 'sum(u' --in u=$U -o $O
expect_fail 2 "at column 5: unexpected ')'" eval 'u + )' --in u=$U -o $O
expect_fail 2 "at column 1: unknown name 'foo' (arrays given with --in: u)" eval 'foo + 1' --in u=$U -o $O
expect_fail 2 "at column 1: unknown function 'meen' (did you mean 'mean'?)" eval 'meen(u)' --in u=$U -o $O
expect_fail 2 "at column 8: sin() takes 1 argument, got 2" eval 'sin(u, u)' --in u=$U -o $O
expect_fail 2 "at column 8: sum() got an unexpected keyword argument 'axes'" eval 'sum(u, axes=0)' --in u=$U -o $O
expect_fail 2 "at column 14: mean(): axis 2 is out of bounds for an array of 2 dimensions" eval 'mean(u, axis=2)' --in u=$U -o $O
expect_fail 2 "full() missing required argument 'fill_value'" eval 'full((2, 3))' -o $O
expect_fail 1 "at column 3: matmul: shapes (20, 30) and (20, 30) do not align" eval 'u @ u' --in u=$U -o $O
expect_fail 2 "at column 3: operator '@' needs arrays, not an integer" eval 'u @ 2' --in u=$U -o $O
expect_fail 2 "at column 8: concat(): arrays must be a non-empty tuple or list of arrays" eval 'concat(u)' --in u=$U -o $O
expect_fail 2 "at column 1: function 'einsum' is not available" eval 'einsum(u)' --in u=$U -o $O
expect_fail 2 "the expression gives a tuple of 2 values, not an array" eval 'u, u' --in u=$U -o $O
expect_fail 2 "integer result out of the 64-bit range" eval '2 ** 64 + u' --in u=$U -o $O
expect_fail 2 "at column 3: division by zero" eval '1 / 0' -o $O
expect_fail 2 "unknown data type 'float128'" eval 'astype(u, "float128")' --in u=$U -o $O
expect_fail 2 "chained comparisons" eval '0 < u < 1' --in u=$U -o $O
expect_fail 2 "'u' is an array, not a function" eval 'u(1)' --in u=$U -o $O
expect_fail 1 "do not broadcast" eval 'u + w' --in u=$U --in w=$TMP/w.zarr -o $O
expect_fail 1 "out of bounds" eval 'u[100]' --in u=$U -o $O
expect_fail 2 "array indices of lengths 2 and 3 do not broadcast" eval 'u[[0, 1], [1, 2, 3]]' --in u=$U -o $O
expect_fail 2 "several array indices combine with integers only, not with a slice" eval 'reshape(u, (4, 5, 30))[[0, 1], [1, 2], 0:1]' --in u=$U -o $O
expect_fail 2 "index 20 is out of bounds for dimension 0 of size 20" eval 'u[[20], [0]]' --in u=$U -o $O
expect_fail 1 "uniform" eval 'uniform((3,), dtype=int32)' -o $O
expect_fail 1 "bitwise_and" eval 'u & 1' --in u=$U -o $O
# the memory bound: refused before any work, with the library's figures
expect_fail 1 "allowed" eval 'm * 2' --in m=$TMP/m.zarr -o $O --allowed-mem 1MB
[ -e "$O/.zarray" ] || [ -e "$O/zarr.json" ] && fail "a refused computation wrote its output"
# ... naming the smallest bound that fits, which then runs
FIT=$(sed -n 's/.*the smallest allowed_mem this plan fits is \([0-9.]*\) MB.*/\1MB/p' "$TMP/err")
[ -n "$FIT" ] || fail "the refusal names no smallest bound: $(cat "$TMP/err")"
expect_ok eval 'm * 2' --in m=$TMP/m.zarr -o $O --allowed-mem "$FIT"
rm -rf "$O"

# ---- errors in options and --in
expect_fail 2 "--in: '1u' is not a name" eval 'u' --in 1u=$U -o $O
expect_fail 2 "--in: 'sum' is the name of a function" eval 'u' --in sum=$U -o $O
expect_fail 2 "--in: 'and' is a Python keyword" eval 'u' --in and=$U -o $O
expect_fail 2 "--in: name 'u' given twice" eval 'u' --in u=$U --in u=$U -o $O
expect_fail 2 "bad --in 'u': expected NAME=PATH" eval 'u' --in u -o $O
expect_fail 2 "option '--in' needs a value" eval 'u' -o $O --in
expect_fail 1 "nonexistent" eval 'u' --in u=$TMP/nonexistent.zarr -o $O
expect_fail 2 "is also an input" eval 'u + 1' --in u=$U -o $U
expect_fail 2 "is also an input" eval 'u + 1' --in u=$U -o "file://$U" --overwrite # the same folder: never erased
expect_fail 1 "holds an input, '$U'" eval 'u + 1' --in u=$U -o "$TMP" --overwrite # the library's check
expect_fail 2 "--chunks has 1 entry but the result has 2 dimensions" eval 'u' --in u=$U -o $O --chunks 5
expect_fail 2 "unknown unit" eval 'u' --in u=$U -o $O --allowed-mem 12XB
expect_fail 2 "must be less than --allowed-mem" eval 'u' --in u=$U -o $O --allowed-mem 1GB --reserved-mem 2GB
expect_fail 2 "bad --zarr-format" eval 'u' --in u=$U -o $O --zarr-format 4
expect_fail 2 "missing the output" eval 'u' --in u=$U
expect_fail 2 "exclude each other" eval 'u' --in u=$U -o $O --resume --overwrite
expect_fail 2 "missing argument" eval --in u=$U -o $O
expect_fail 2 "bad --threads" eval 'u' --in u=$U -o $O --threads -1
expect_fail 2 "unknown option '--bogus'" eval 'u' --in u=$U -o $O --bogus
expect_ok eval --help && { grep -q "^usage: zcube eval EXPR" "$TMP/out" || fail "eval --help"; }
expect_ok help rechunk && { grep -q "^usage: zcube rechunk SRC DST" "$TMP/out" || fail "help rechunk"; }

finish
