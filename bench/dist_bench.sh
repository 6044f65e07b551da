#!/bin/bash
# bench/dist_bench.sh — the mpi executor against threads on the same cores, in the
# same run: Quadratic Means (mean(u*v, axis=0)) and a time->space rechunk (to chunks of
# up to 2048 steps by 30x30), wall
# seconds of `zcube ... --threads C` against `mpirun -np R zcube ... --executor mpi`
# (C/R threads per rank, at least 1), alternating, best of BENCH_REPS. Outputs are
# compared byte for byte (fatal on mismatch). One JSON line per case and rank count.
# Each alternation also times the MPI start-up alone (the same mpirun of a
# one-element sum: launching the ranks, MPI_Init, planning, the broadcast,
# MPI_Finalize), reported as mpi_startup_seconds (best of the runs).
#
#   usage: bash bench/dist_bench.sh [BUILD_DIR]     (default build)
#   BENCH_T      time steps of u, v: float32 (T, 1, 181, 360), 8 steps a chunk (default 256)
#   BENCH_MEM    --allowed-mem (default 64MB)
#   BENCH_CORES  threads of the threads run = cores shared by the ranks (default 2)
#   BENCH_RANKS  rank counts (default "2 4")
#   BENCH_REPS   runs of each side (default 3)
#   BENCH_NICE   run both sides under `nice -n BENCH_NICE` (e.g. -10 as root on a shared machine)
# MPI is configured for one node as its experts would: the ob1 transport over shared
# memory (OMPI_MCA_pml=ob1, OMPI_MCA_btl=self,vader, unless set already). Open MPI's
# default tries UCX first, whose device probing alone adds 0.2 s to every MPI_Init here.
# Each alternation also times a bare MPI program (MPI_Init, a barrier, MPI_Finalize:
# bench_dist hello) as mpi_bare_seconds: the part of the start-up that is Open MPI's own.
set -euo pipefail
B=$(realpath "${1:-build}")
Z=$B/zcube
T=${BENCH_T:-256}
MEM=${BENCH_MEM:-64MB}
C=${BENCH_CORES:-2}
REPS=${BENCH_REPS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
D=$(mktemp -d "${TMPDIR:-/tmp}/zcube-dist-bench.XXXXXX")
trap 'rm -rf "$D"' EXIT
"$Z" eval "uniform(size=($T,1,181,360), chunks=(8,1,181,360), seed=1, dtype=float32)" -o "$D/u.zarr" -q
"$Z" eval "normal(size=($T,1,181,360), chunks=(8,1,181,360), seed=2, dtype=float32)" -o "$D/v.zarr" -q

PY=/usr/bin/python3
run=()
[[ -n ${BENCH_NICE:-} ]] && run=(nice -n "$BENCH_NICE")
wall() { # wall seconds of a command
    local t0 t1
    t0=$(date +%s.%N)
    "${run[@]}" "$@" >/dev/null || { echo "dist_bench: failed: $*" >&2; exit 1; }
    t1=$(date +%s.%N)
    "$PY" -c "print($t1 - $t0)"
}
min() { "$PY" -c "print(min($1, $2))"; }

run_case() { # name, then the zcube arguments after which -o OUT goes
    local name=$1
    shift
    for R in ${BENCH_RANKS:-2 4}; do
        local per=$((C / R))
        [ "$per" -ge 1 ] || per=1
        local best_t=1e9 best_m=1e9 best_s=1e9 best_h=1e9
        for _ in $(seq "$REPS"); do
            rm -rf "$D/t.zarr" "$D/m.zarr" "$D/s.zarr" "$D/wt" "$D/w" "$D/ws"
            local t m s h
            t=$(wall "$Z" "$@" -o "$D/t.zarr" --allowed-mem "$MEM" --threads "$C" \
                --work-dir "$D/wt" -q)
            m=$(wall mpirun -np "$R" "$Z" "$@" -o "$D/m.zarr" --allowed-mem "$MEM" --executor mpi --threads "$per" \
                --work-dir "$D/w" -q)
            s=$(wall mpirun -np "$R" "$Z" eval 'sum(ones((4,)))' -o "$D/s.zarr" --executor mpi --threads "$per" \
                --work-dir "$D/ws" -q)
            h=$(wall mpirun -np "$R" "$B/bench/bench_dist" hello)
            diff -r "$D/t.zarr" "$D/m.zarr" >/dev/null || { echo "dist_bench: $name: mpi output differs" >&2; exit 1; }
            best_t=$(min "$t" "$best_t")
            best_m=$(min "$m" "$best_m")
            best_s=$(min "$s" "$best_s")
            best_h=$(min "$h" "$best_h")
        done
        printf '{"case": "%s", "ranks": %d, "threads_per_rank": %d, "threads_seconds": %.3f, "mpi_seconds": %.3f, "threads_over_mpi": %.3f, "mpi_startup_seconds": %.3f, "mpi_bare_seconds": %.3f, "threads_over_mpi_after_bare": %.3f, "load": "%s"}\n' \
            "$name" "$R" "$per" "$best_t" "$best_m" "$("$PY" -c "print($best_t / $best_m)")" "$best_s" "$best_h" \
            "$("$PY" -c "print($best_t / ($best_m - $best_h))")" "$(cut -d' ' -f1-3 /proc/loadavg)"
    done
}
run_case qm eval 'mean(u*v, axis=0)' --in u="$D/u.zarr" --in v="$D/v.zarr"
run_case rechunk rechunk "$D/u.zarr" --chunks "$((T < 2048 ? T : 2048)),1,30,30"
