#!/usr/bin/env bash
# tests/check_layers.sh SRC_DIR — layers only point down.
#
#   core <- codec, store <- zarr <- kernels, loader <- plan <- exec <- ops <- tools
#
# A file under src/<layer>/ may include headers of its own folder and of
# layers below it; never of a layer above it or of another folder on its own
# level (codec and store, kernels and loader). tools/ is the command: it uses
# the public header (zcube.h) and its own headers only. Prints every include
# that breaks this (file:line) and exits 1; exits 0 when there is none.
set -euo pipefail
src=${1:?usage: check_layers.sh SRC_DIR}
declare -A rank=([core]=0 [codec]=1 [store]=1 [zarr]=2 [kernels]=3 [loader]=3 [plan]=4 [exec]=5 [ops]=6 [tools]=7)
bad=0 files=0
for layer in "${!rank[@]}"; do
    [ -d "$src/$layer" ] || { echo "missing layer folder $src/$layer"; exit 1; }
    for f in "$src/$layer"/*.[ch]; do files=$((files + 1)); done
done
while IFS= read -r hit; do # FILE:LINE:#include "dir/name.h"
    f=${hit%%:*} rest=${hit#*:}
    line=${rest%%:*} inc=${rest#*\"}
    inc=${inc%%\"*}
    layer=${f#"$src"/} layer=${layer%%/*}
    dir=${inc%%/*}
    [ -n "${rank[$layer]+x}" ] || continue
    [ "$dir" = "$inc" ] && continue # a header of its own folder, or zcube.h
    if [ -z "${rank[$dir]+x}" ]; then
        echo "$f:$line: includes \"$inc\" (not a layer)"; bad=1
    elif [ "$layer" = tools ]; then
        echo "$f:$line: tools/ includes \"$inc\" (the command uses zcube.h and its own headers only)"; bad=1
    elif [ "$dir" != "$layer" ] && [ "${rank[$dir]}" -ge "${rank[$layer]}" ]; then
        echo "$f:$line: $layer/ includes \"$inc\" ($dir/ is not below $layer/)"; bad=1
    fi
done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$src"/*/*.[ch] || true)
[ "$files" -gt 50 ] || { echo "only $files source files found under $src"; exit 1; }
[ "$bad" = 0 ] && echo "layers: $files files, every include points down"
exit "$bad"
