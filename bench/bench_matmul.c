/* bench/bench_matmul.c — zcube's side of the matmul benchmark (bench/matmul_bench.sh).
 *
 *   bench_matmul incore N CHUNK [--threads T] [--reps R]
 *       C = A @ B for N×N float64 A, B in memory (zc_asarray, CHUNK×CHUNK blocks),
 *       computed into a buffer by the engine, then the same product by one
 *       cblas_dgemm call with OpenBLAS on T threads on the same data (what NumPy's
 *       A @ B does); results compared. Best of R runs each.
 *   bench_matmul zarr DIR [--allowed-mem MB] [--threads T]
 *       DIR/c.zarr = DIR/a.zarr @ DIR/b.zarr through the engine (the out-of-core
 *       case: operands read chunk by chunk under allowed_mem).
 * Prints one JSON line: seconds (wall), CPU seconds, peak RSS, the engine's
 * report figures (tasks, projected and measured peak per task). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"
#include "zcube.h"

#define ZC(call, what) BENCH_ZC("bench_matmul", call, what)

static long peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* "peak_task_mem" and the matmul stage's "projected_mem" from a report */
static void report_figures(zc_report *rep, long long *peak, long long *proj, long long *tasks)
{
    char *json = NULL;
    *peak = *proj = *tasks = -1;
    if (zc_report_json(rep, &json) < 0 || !json) return;
    const char *p = strstr(json, "\"peak_task_mem\":");
    if (p) *peak = atoll(p + 16);
    p = strstr(json, "\"kind\": \"matmul\"");
    const char *q = p ? strstr(p, "\"projected_mem\":") : NULL;
    if (q) *proj = atoll(q + 16);
    const char *t = strrchr(json, '}');
    (void)t;
    p = strstr(json, "\n \"tasks\":");
    if (p) *tasks = atoll(p + 10);
    zc_free(json);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "incore") && strcmp(argv[1], "zarr"))) {
        fprintf(stderr, "usage: bench_matmul incore N CHUNK [--threads T] [--reps R] | zarr DIR [--allowed-mem MB] "
                        "[--threads T]\n");
        return 2;
    }
    int incore = !strcmp(argv[1], "incore");
    long threads = 2, reps = 3;
    double mem = 1024;
    int first = incore ? 4 : 3;
    if (incore && argc < 4) return 2;
    for (int i = first; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) threads = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--allowed-mem")) mem = atof(argv[i + 1]);
    }
    zc_spec spec = ZC_SPEC_INIT;
    spec.nthreads = (int)threads;
    spec.allowed_mem = (size_t)(mem * 1048576.0);
    spec.reserved_mem = spec.allowed_mem / 16;
    if (!incore) {
        const char *dir = argv[2];
        zc_store *st;
        ZC(zc_store_open(dir, 0, &st), dir);
        zc_array *a, *b, *c;
        ZC(zc_from_zarr(st, "a.zarr", &a), "a.zarr");
        ZC(zc_from_zarr(st, "b.zarr", &b), "b.zarr");
        double w0 = bench_now(), c0 = bench_cpu_now();
        ZC(zc_matmul(a, b, &c), "matmul");
        zc_target t = {st, "c.zarr", "blosc:lz4:5:shuffle", 2};
        zc_report *rep = NULL;
        ZC(zc_compute(&spec, 1, &c, &t, &rep), "compute");
        double w = bench_now() - w0, cpu = bench_cpu_now() - c0;
        long long peak, proj, tasks;
        report_figures(rep, &peak, &proj, &tasks);
        printf("{\"case\": \"zarr\", \"seconds\": %.3f, \"cpu_seconds\": %.3f, \"peak_rss_mb\": %ld, "
               "\"allowed_mem_mb\": %.0f, \"tasks\": %lld, \"projected_task_mb\": %.1f, \"peak_task_mb\": %.1f}\n",
               w, cpu, peak_rss_mb(), mem, tasks, (double)proj / 1048576.0, (double)peak / 1048576.0);
        zc_report_free(rep);
        zc_array_release(a);
        zc_array_release(b);
        zc_array_release(c);
        zc_store_close(st);
        return 0;
    }
    long n = atol(argv[2]), ch = atol(argv[3]);
    if (n < 1 || ch < 1) return 2;
    size_t nn = (size_t)n * (size_t)n;
    double *A = malloc(nn * sizeof *A), *B = malloc(nn * sizeof *B), *C = malloc(nn * sizeof *C),
           *R = malloc(nn * sizeof *R);
    if (!A || !B || !C || !R) return 1;
    uint64_t s = 12345;
    for (size_t i = 0; i < nn; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        A[i] = (double)(s >> 11) * 0x1.0p-53 - 0.5;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        B[i] = (double)(s >> 11) * 0x1.0p-53 - 0.5;
    }
    int64_t shape[2] = {n, n}, chunks[2] = {ch, ch};
    zc_array *a, *b, *c;
    ZC(zc_asarray(A, ZC_FLOAT64, 2, shape, chunks, &a), "asarray");
    ZC(zc_asarray(B, ZC_FLOAT64, 2, shape, chunks, &b), "asarray");
    double best = 1e30, best_cpu = 0;
    long long peak = 0, proj = 0, tasks = 0;
    for (long r = 0; r < reps; r++) {
        double w0 = bench_now(), c0 = bench_cpu_now();
        ZC(zc_matmul(a, b, &c), "matmul");
        zc_report *rep = NULL;
        ZC(zc_compute_buffer(&spec, c, C, nn * sizeof *C, &rep), "compute");
        double w = bench_now() - w0, cpu = bench_cpu_now() - c0;
        if (w < best) {
            best = w;
            best_cpu = cpu;
            report_figures(rep, &peak, &proj, &tasks);
        }
        zc_report_free(rep);
        zc_array_release(c);
    }
    /* the reference: one dgemm over the whole matrices on `threads` OpenBLAS threads */
    openblas_set_num_threads((int)threads);
    double ref = 1e30;
    for (long r = 0; r < reps; r++) {
        double w0 = bench_now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, A, (int)n, B, (int)n, 0.0,
                    R, (int)n);
        double w = bench_now() - w0;
        if (w < ref) ref = w;
    }
    double worst = 0, scale = 0;
    for (size_t i = 0; i < nn; i++) {
        worst = fmax(worst, fabs(C[i] - R[i]));
        scale = fmax(scale, fabs(R[i]));
    }
    printf("{\"case\": \"incore\", \"n\": %ld, \"chunk\": %ld, \"threads\": %ld, \"zcube_seconds\": %.3f, "
           "\"zcube_cpu_seconds\": %.3f, \"openblas_seconds\": %.3f, \"ratio\": %.2f, \"gflops_zcube\": %.1f, "
           "\"gflops_openblas\": %.1f, \"tasks\": %lld, \"peak_task_mb\": %.1f, \"max_rel_diff\": %.2e}\n",
           n, ch, threads, best, best_cpu, ref, best / ref, 2.0 * (double)n * (double)n * (double)n / best / 1e9,
           2.0 * (double)n * (double)n * (double)n / ref / 1e9, tasks, (double)peak / 1048576.0, worst / scale);
    zc_array_release(a);
    zc_array_release(b);
    free(A);
    free(B);
    free(C);
    free(R);
    return worst / scale < 1e-12 ? 0 : 1;
}
