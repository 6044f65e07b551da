#!/usr/bin/env bash
# tests/check_header.sh HEADER — the public header stays the manual.
#
#   - the overview lists the sections "N. Title [stable|experimental]" numbered
#     1, 2, 3 ... and the header's section headings are exactly those, in order;
#   - every ZC_API function that returns a value (not void) states it: "@return"
#     in the comment right above it, or a "@return (every function below)" earlier
#     in its section.
# Prints every breach (HEADER:LINE) and exits 1; exits 0 when there is none.
set -euo pipefail
h=${1:?usage: check_header.sh HEADER}
awk -v file="$h" '
function fail(line, msg) { printf "%s:%d: %s\n", file, line, msg; bad = 1 }
# the overview: " *   N. Title   [mark] ..." before the first section heading
!started && match($0, /^ \*  *[0-9]+\. [^[]*\[(stable|experimental)\]/) {
    s = substr($0, RSTART, RLENGTH)
    sub(/^ \*  */, "", s)
    num = s; sub(/\..*/, "", num)
    t = s; sub(/^[0-9]+\. */, "", t); mark = t; sub(/ *\[.*/, "", t)
    sub(/.*\[/, "", mark); sub(/\].*/, "", mark)
    n_over++
    if (num + 0 != n_over) fail(NR, "overview lists section " num " where " n_over " was due")
    over_title[n_over] = t; over_mark[n_over] = mark
    next
}
/^\/\* =+ / {
    started = 1
    heading = $0; sub(/^\/\* =+ /, "", heading); sub(/ \*\/$/, "", heading)
    n_body++
    every = 0
    if (!match(heading, /^[0-9]+\. /)) { fail(NR, "section \"" heading "\" has no number"); next }
    num = heading; sub(/\..*/, "", num)
    if (num + 0 != n_body) fail(NR, "section " num " comes where section " n_body " was due")
    if (!match(heading, /\[(stable|experimental)\]$/)) fail(NR, "section " num " is not marked [stable] or [experimental]")
    t = heading; sub(/^[0-9]+\. /, "", t)
    if (n_body > n_over) fail(NR, "section " num " is not in the overview")
    else {
        if (index(t, over_title[n_body]) != 1) fail(NR, "section " num " is \"" t "\"; the overview says \"" over_title[n_body] "\"")
        if (index(t, "[" over_mark[n_body] "]") == 0) fail(NR, "section " num " is marked otherwise in the overview")
    }
    next
}
/@return \(every function below\)/ { every = 1 }
# a comment ending right above a declaration: remember whether it states a return
/^\/\*/ { incomment = 1; has_return = 0 }
incomment && /@return/ { has_return = 1 }
incomment && /\*\// { incomment = 0; comment_end = NR; comment_return = has_return; next }
/^ZC_API / {
    decl = $0
    if (decl ~ /^ZC_API void /) next
    name = decl; sub(/\(.*/, "", name); sub(/.* \**/, "", name)
    if (!(comment_end == NR - 1 && comment_return) && !every)
        fail(NR, name " does not say what it returns (@return)")
    checked++
}
END {
    if (n_over < 2 || n_body != n_over) { printf "%s: %d sections in the overview, %d in the header\n", file, n_over, n_body; bad = 1 }
    if (checked < 100) { printf "%s: only %d functions checked\n", file, checked; bad = 1 }
    if (!bad) printf "header: %d sections, %d functions with their return values stated\n", n_body, checked
    exit bad
}' "$h"
