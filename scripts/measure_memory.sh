#!/usr/bin/env bash
# scripts/measure_memory.sh ZCUBE DIR: the memory figures of docs/benchmarks.md ("Memory accounting"):
# Quadratic Means, FFT and SVD on a demo-like dataset (made in DIR once) under --allowed-mem 64MB,
# printing per stage projected and measured task memory, the reserve, peak RSS and the verdicts
# of the report (a zcube without them prints the first two only). T=240 by default.
set -euo pipefail
z=$1; w=$2; mem=64MB; T=${T:-240}
mkdir -p "$w"
lat="linspace(90, -90, 181, dtype=float32)[None, None, :, None]"
lon="linspace(0, 359, 360, dtype=float32)[None, None, None, :]"
hours="arange($T, dtype=float32, chunks=8)[:, None, None, None]"
noise="normal(($T, 1, 181, 360), scale=2, dtype=float32, chunks=(8, 1, 181, 360)"
[ -d "$w/u.zarr" ] || $z eval "10 + 25*exp(-(($lat - 45)/12)**2) + 8*cos($lat*pi/180)*sin(3*$lon*pi/180 - 0.3*$hours) + $noise, seed=1)" -o "$w/u.zarr" --allowed-mem $mem -q
[ -d "$w/v.zarr" ] || $z eval "6*cos($lat*pi/180)*cos(3*$lon*pi/180 - 0.3*$hours) + $noise, seed=2)" -o "$w/v.zarr" --allowed-mem $mem -q
[ -d "$w/a.zarr" ] || $z eval "normal((200000, 100), dtype=float64, chunks=(5000, 100), seed=3)" -o "$w/a.zarr" --allowed-mem $mem -q
run() { name=$1; shift
  rm -rf "$w/out_$name.zarr"
  /usr/bin/python3 -c 'import resource, subprocess, sys, json
p = subprocess.run(sys.argv[2:], capture_output=True, text=True)
if p.returncode: print(p.stderr); sys.exit(1)
d = json.loads(p.stdout)
print("== %s: process peak RSS %.1f MB" % (sys.argv[1], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
m = d.get("memory")
if m: print("   threads %d, reserve %.1f MB (block cache %.1f, uncounted %.1f: fft %.1f blas %.1f runtime %.1f), rss_base %.1f MB, peak_rss %.1f MB, agrees %s, within_bound %s" % (m["threads"], m["reserve"]["total"]/1e6, m["reserve"]["block_cache"]/1e6, m["reserve"]["uncounted"]/1e6, m["reserve"]["fft"]/1e6, m["reserve"]["blas"]/1e6, m["reserve"]["runtime"]/1e6, m["rss_base"]/1e6, m["peak_rss"]/1e6, m["agrees"], m["within_bound"]))
for o in d["operations"]:
    s = "   %-34s proj %7.2f MB  meas %7.2f MB" % (o["name"][:34], o["projected_mem"]/1e6, o["measured_mem"]/1e6)
    mm = o.get("memory")
    if mm: s += "  rss %6.1f->%6.1f MB (growth %6.1f) counted growth %6.1f mapped %6.1f agrees %s within %s" % (mm["rss_start"]/1e6, mm["peak_rss"]/1e6, (mm["peak_rss"]-mm["rss_start"])/1e6, mm["counted_growth"]/1e6, mm["mapped_peak"]/1e6, mm["agrees"], mm["within_bound"])
    print(s)' "$name" "$@"
}
run qm_uu $z eval "mean(u**2, axis=0)" --in u="$w/u.zarr" -o "$w/out_qm_uu.zarr" --allowed-mem $mem --json
run qm_uv $z eval "mean(u*v, axis=0)" --in u="$w/u.zarr" --in v="$w/v.zarr" -o "$w/out_qm_uv.zarr" --allowed-mem $mem --json
run fft $z eval "fft(u, axis=2)" --in u="$w/u.zarr" -o "$w/out_fft.zarr" --allowed-mem $mem --json
run fft_time $z eval "rfft(u, axis=0)" --in u="$w/u.zarr" -o "$w/out_fft_time.zarr" --allowed-mem $mem --json
run svd $z eval "svd(a)[1]" --in a="$w/a.zarr" -o "$w/out_svd.zarr" --allowed-mem $mem --json
run rsvd $z eval "svd_compressed(a, 10)[1]" --in a="$w/a.zarr" -o "$w/out_rsvd.zarr" --allowed-mem $mem --json
