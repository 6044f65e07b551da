#!/usr/bin/python3
"""fuzz/select_corpus.py — pick the committed corpus of one target: a greedy
edge cover of a (merged) input folder, capped at a number of files.

    select_corpus.py FUZZER INPUT_DIR OUT_DIR MAX_FILES

FUZZER is a libFuzzer binary (build-fuzz/fuzz/fuzz_<target>). Each input's
edge coverage is measured alone (a one-file -merge=1 run with
-merge_control_file; a merge of many files only reports each file's *new*
edges), then inputs are taken in order of most new edges, smallest first on
ties, until MAX_FILES or nothing adds an edge. OUT_DIR gets copies; it must
not exist yet. repro-* files are not special here: copy them in afterwards.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def coverage(fuzzer, path, tmp):
    inp, out, cf = (os.path.join(tmp, x) for x in ("in", "out", "cf"))
    for d in (inp, out):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    if os.path.exists(cf):
        os.remove(cf)
    shutil.copy(path, inp)
    subprocess.run([fuzzer, "-merge=1", "-use_counters=0", "-rss_limit_mb=2048", "-timeout=10",
                    "-merge_control_file=" + cf, out, inp],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    edges = set()
    if os.path.exists(cf):
        for line in open(cf):
            if line.startswith("COV "):
                edges.update(line.split()[2:])
    return edges


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    fuzzer, src, dst, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    names = sorted(n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n)))
    with tempfile.TemporaryDirectory() as tmp:
        cov = {n: coverage(fuzzer, os.path.join(src, n), tmp) for n in names}
    size = {n: os.path.getsize(os.path.join(src, n)) for n in names}
    total = set().union(*cov.values()) if cov else set()
    chosen, got = [], set()
    while len(chosen) < budget and cov:
        best = max(cov, key=lambda n: (len(cov[n] - got), -size[n], n))
        if not cov[best] - got:
            break
        chosen.append(best)
        got |= cov.pop(best)
    os.makedirs(dst)
    for n in chosen:
        shutil.copy(os.path.join(src, n), dst)
    print(f"{len(chosen)} of {len(names)} files, {len(got)} of {len(total)} edges, "
          f"{sum(size[n] for n in chosen)} bytes")


if __name__ == "__main__":
    main()
