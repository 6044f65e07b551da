#!/bin/bash
# tests/cli/copy.sh — zcube copy between formats, codecs, chunkings and
# shardings must keep every value: each copy is read back with zcube get and
# compared byte for byte with the source's read (both .npy files are written
# by zcube, so equal arrays give identical files).
# Usage: bash copy.sh <zcube> <tests/data>
source "$(dirname "$0")/common.bash"

zc_require_python numpy

# same_data SRC DST [REGION]: get both and compare the files
same_data() {
    local r=${3:-}
    expect_ok get "$1" --region "$r" -o "$TMP/s.npy" || return 1
    expect_ok get "$2" --region "$r" -o "$TMP/d.npy" || return 1
    cmp -s "$TMP/s.npy" "$TMP/d.npy" || { fail "copy $1 -> $2 changed the data (region '$r')"; return 1; }
}

# field DST KEY: a top-level field of `zcube info --json` as compact JSON
field() {
    "$Z" info --json "$1" | "$PY" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[sys.argv[1]], separators=(",", ":")))' "$2"
}

# ---- every zarrita fixture with a supported dtype, v2 -> v3 and v3 -> v2
for v in v2 v3; do
    root="$DATA/zarrita/$v/data.zarr"
    other=$([ $v = v2 ] && echo 3 || echo 2)
    "$PY" -c '
import json, sys
for k, e in json.load(open(sys.argv[1])).items():
    if e["dtype"] not in ("v2:object", "string"):
        print(k)' "$DATA/zarrita/$v/expected.json" >"$TMP/keys"
    while IFS= read -r key; do
        dst="$TMP/fx_${v}_$(echo "$key" | tr '/ ' '__')"
        expect_ok copy "$root/$key" "$dst" --zarr-format $other && same_data "$root/$key" "$dst"
    done <"$TMP/keys"
done

# ---- the default codec follows the source's compressor
B="$DATA/zarrita/v2/data.zarr/1d.contiguous.blosc.i2"
expect_ok copy "$B" "$TMP/blosc_v3" --zarr-format 3 && same_data "$B" "$TMP/blosc_v3" &&
    { field "$TMP/blosc_v3" codecs | grep -q '"name":"blosc"' || fail "copy: blosc not kept: $(field "$TMP/blosc_v3" codecs)"; }
G="$DATA/zarrita/v3/data.zarr/1d.contiguous.gzip.i2"
expect_ok copy "$G" "$TMP/gzip_v2" --zarr-format 2 && same_data "$G" "$TMP/gzip_v2" &&
    { field "$TMP/gzip_v2" codecs | grep -q '"id":"gzip"' || fail "copy: gzip not kept: $(field "$TMP/gzip_v2" codecs)"; }

# ---- v2 -> v3 with sharding and another codec, and back to v2
SRC="$TMP/src"
expect_ok create "$SRC" --shape 37,29,11 --chunks 8,7,5 --dtype float64 --zarr-format 2 --codec blosc:lz4:5:shuffle \
    --fill-value NaN --attrs '{"title": "copy test", "scale": 0.5}' || finish
"$PY" -c "
import numpy as np
a = np.random.default_rng(3).standard_normal((37, 29, 11))
a[:8, :7, :5] = np.nan   # one chunk entirely fill value
np.save('$TMP/src.npy', a)"
expect_ok put "$SRC" "$TMP/src.npy"
V3="$TMP/v3"
expect_ok copy "$SRC" "$V3" --zarr-format 3 --shards 16,14,10 --codec zstd:5,crc32c --max-mem 1MB --threads 2 &&
    same_data "$SRC" "$V3" && same_data "$SRC" "$V3" "3:30:4,5,..."
if [ -d "$V3" ]; then
    [ "$(field "$V3" zarr_format)" = 3 ] || fail "copy: DST is not v3"
    [ "$(field "$V3" shards)" = "[16,14,10]" ] || fail "copy: DST shards are $(field "$V3" shards)"
    [ "$(field "$V3" chunks)" = "[8,7,5]" ] || fail "copy: DST chunks are $(field "$V3" chunks)"
    field "$V3" codecs | grep -q sharding_indexed || fail "copy: no sharding codec"
    field "$V3" codecs | grep -q crc32c || fail "copy: no crc32c"
    [ "$(field "$V3" attributes)" = "$(field "$SRC" attributes)" ] || fail "copy: attributes differ"
    [ "$(field "$V3" fill_value)" = '"NaN"' ] || fail "copy: fill value $(field "$V3" fill_value)"
fi
V2="$TMP/v2"
expect_ok copy "$V3" "$V2" --zarr-format 2 && same_data "$SRC" "$V2"
if [ -d "$V2" ]; then
    [ "$(field "$V2" zarr_format)" = 2 ] || fail "copy back: DST is not v2"
    [ "$(field "$V2" shards)" = null ] || fail "copy back: DST still sharded"
    # the default codec follows the source's compressor (zstd level 5)
    field "$V2" codecs | grep -q '"level":5' || fail "copy back: zstd level not kept: $(field "$V2" codecs)"
fi

# ---- rechunk within v3 under a small bound (a task's memory counts everything: its
# chunks, the codecs' contexts); then shard with a memory bound too small for a shard
R="$TMP/rechunked"
expect_ok copy "$SRC" "$R" --chunks 5,5,11 --codec gzip:1 --max-mem 1MB && same_data "$SRC" "$R" &&
    [ "$(field "$R" chunks)" = "[5,5,11]" ] || fail "rechunk"
expect_fail 1 "raise --max-mem" copy "$SRC" "$TMP/toosmall" --zarr-format 3 --shards 16,14,10 --max-mem 10KB
expect_ok copy "$SRC" "$TMP/nocodec" --codec none --zarr-format 3 --chunks 37,29,11 && same_data "$SRC" "$TMP/nocodec"
expect_ok copy "$SRC" "$TMP/blosc3" --zarr-format 3 --codec blosc:zstd:3:bitshuffle && same_data "$SRC" "$TMP/blosc3"

# ---- errors
expect_fail 2 "same array" copy "$SRC" "$SRC"
expect_fail 1 "already exists" copy "$SRC" "$V3" # no --overwrite
expect_ok copy "$SRC" "$V3" --overwrite --zarr-format 3 && same_data "$SRC" "$V3"
expect_fail 2 "--chunks has 2 entries" copy "$SRC" "$TMP/bad" --chunks 5,5
expect_fail 2 "bad --zarr-format" copy "$SRC" "$TMP/bad" --zarr-format 1
expect_fail 1 "No such file or directory" copy "$TMP/none" "$TMP/bad"
expect_fail 1 "not supported" copy "$DATA/zarrita/v2/data.zarr/1d.contiguous.json2.O" "$TMP/bad"
expect_fail 1 "sharding" copy "$SRC" "$TMP/bad2" --zarr-format 2 --shards 16,14,10
expect_fail 1 "raise allowed_mem" copy "$SRC" "$TMP/bad3" --chunks 5,5,11 --max-mem 16KB
expect_fail 2 "not both" copy "$SRC" "$TMP/bad3" --max-mem 1MB --allowed-mem 1MB

finish
