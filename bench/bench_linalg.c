/* bench/bench_linalg.c — zcube's side of the linear algebra benchmark
 * (bench/linalg_bench.sh; data from bench/linalg_dask.py gen).
 *
 *   bench_linalg svd DIR [--allowed-mem MB] [--cache-mem MB] [--threads N]
 *   bench_linalg rsvd DIR [--k 10] [--power 2] [--allowed-mem MB] [--cache-mem MB] [--threads N]
 *
 * svd   zc_svd of DIR/tall.zarr (TSQR): U, S, Vt computed together (one zc_compute,
 *       the R stage shared) into DIR/zcube/{u,s,vt}.zarr
 * rsvd  zc_svd_compressed(DIR/wide.zarr, k, oversamples 10, power, seed 0) into
 *       DIR/zcube/r_{u,s,vt}.zarr
 * Outputs are Zarr v2 blosc lz4 shuffle, like Dask's. Prints one JSON line: wall
 * and CPU seconds from building the arrays to the results written, the peak RSS
 * of the process (getrusage) and the engine's report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"
#include "zcube.h"

#define ZC(call, what) BENCH_ZC("bench_linalg", call, what)

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "svd") && strcmp(argv[1], "rsvd"))) {
        fprintf(stderr, "usage: bench_linalg svd|rsvd DIR [--k 10] [--power 2] [--allowed-mem MB] [--cache-mem MB] [--threads N]\n");
        return 2;
    }
    const char *cs = argv[1], *dir = argv[2];
    long k = 10, power = 2, threads = 2;
    double mem = 1024, cache = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--k")) k = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--power")) power = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--allowed-mem")) mem = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--cache-mem")) cache = atof(argv[i + 1]);
        else {
            fprintf(stderr, "bench_linalg: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    double t0 = bench_now(), c0 = bench_cpu_now();
    zc_store *st;
    ZC(zc_store_open(dir, 0, &st), dir);
    int rsvd = !strcmp(cs, "rsvd");
    zc_array *a, *r[3];
    ZC(zc_from_zarr(st, rsvd ? "wide.zarr" : "tall.zarr", &a), "input");
    if (rsvd) ZC(zc_svd_compressed(a, k, 10, (int)power, 0, &r[0], &r[1], &r[2]), "svd_compressed");
    else ZC(zc_svd(a, &r[0], &r[1], &r[2]), "svd");
    zc_spec spec = ZC_SPEC_INIT;
    spec.allowed_mem = (size_t)(mem * 1048576.0);
    spec.reserved_mem = spec.allowed_mem / 8 < ((size_t)64 << 20) ? spec.allowed_mem / 8 : (size_t)64 << 20;
    spec.nthreads = (int)threads;
    spec.cache_mem = (size_t)(cache * 1048576.0);
    const char *codec = "blosc:lz4:5:shuffle";
    zc_target t[3] = {{st, rsvd ? "zcube/r_u.zarr" : "zcube/u.zarr", codec, 2},
                      {st, rsvd ? "zcube/r_s.zarr" : "zcube/s.zarr", codec, 2},
                      {st, rsvd ? "zcube/r_vt.zarr" : "zcube/vt.zarr", codec, 2}};
    zc_report *rep = NULL;
    ZC(zc_compute(&spec, 3, r, t, &rep), "compute");
    double wall = bench_now() - t0, cpu = bench_cpu_now() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char *json = NULL;
    ZC(zc_report_json(rep, &json), "report");
    int nd;
    int64_t shape[2], chunks[2];
    zc_array_info(a, &nd, shape, chunks, NULL);
    printf("{\"peer\": \"zcube\", \"case\": \"%s\", \"seconds\": %.3f, \"cpu_seconds\": %.3f, \"peak_rss_mb\": %.1f, "
           "\"allowed_mem_mb\": %.0f, \"threads\": %ld, \"shape\": [%lld, %lld], \"chunks\": [%lld, %lld], "
           "\"report\": %s}\n",
           cs, wall, cpu, (double)ru.ru_maxrss / 1024.0, mem, threads, (long long)shape[0], (long long)shape[1],
           (long long)chunks[0], (long long)chunks[1], json);
    zc_free(json);
    zc_report_free(rep);
    for (int i = 0; i < 3; i++) zc_array_release(r[i]);
    zc_array_release(a);
    zc_store_close(st);
    return 0;
}
