/* bench/bench_fft.c — zcube's FFT against FFTW called directly, in core, on the
 * same data in the same process (bench/fft_bench.sh runs it). Prints one JSON
 * object per case.
 *
 *   bench_fft incore N ROWS [REPS]   complex128 (ROWS, N), transform along axis 1
 *                                    and along axis 0 (ROWS × N lines of N), and
 *                                    rfft of float64 along axis 1: FFTW's
 *                                    plan_many over the whole array (ESTIMATE and
 *                                    MEASURE, 1 thread, plan time excluded) vs
 *                                    zc_fft_* → zc_compute_buffer (input given by
 *                                    zc_asarray outside the timing), 1 and 2 threads
 *   bench_fft e2e N ROWS CASE [REPS] [THREADS]  zcube end to end only (CASE
 *                                    fft_axis1, fft_axis0 or rfft_axis1), for profilers
 *   bench_fft ooc N MEM_MB WORKDIR [THREADS]  complex128 1-D of length N: FFTW in
 *                                    core (ESTIMATE, 1 thread) vs zcube's four-step
 *                                    with allowed_mem MEM_MB, intermediates in
 *                                    WORKDIR; checked against FFTW's result
 *
 * Throughput is N·ROWS complex elements per second; ratio = FFTW's seconds /
 * zcube's (≥ 1 means zcube is faster), against FFTW ESTIMATE and MEASURE both;
 * cpu_ratio: the same with process CPU seconds (user + system) of the best run,
 * less sensitive to a shared machine. A result further than MAX_REL_DIFF from
 * FFTW's (relative to the largest |value|) is fatal: exit 1. */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/alloc.h"
#include "plan/array.h"
#include "zcube.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Process CPU seconds (user + system): on a shared machine, less noisy than wall time. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Best CPU seconds of the last fftw_time / zcube_time call (the run of the best CPU time). */
static double last_cpu;

static double rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_fft: %s: %s (%s)\n", what, zc_errmsg(), zc_errname(rc));
    exit(1);
}

/* Best of reps: FFTW plan_many over rows lines of length n with strides. */
static double fftw_time(int n, int howmany, int stride, int dist, int real, unsigned flags, void *in, void *out,
                        int reps)
{
    fftw_plan p = real ? fftw_plan_many_dft_r2c(1, &n, howmany, in, NULL, stride, dist, out, NULL, stride,
                                                stride == 1 ? n / 2 + 1 : dist, flags)
                       : fftw_plan_many_dft(1, &n, howmany, in, NULL, stride, dist, out, NULL, stride, dist,
                                            FFTW_FORWARD, flags);
    double best = 1e30;
    last_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now(), c = cpu_now();
        fftw_execute(p);
        t = now() - t;
        c = cpu_now() - c;
        if (t < best) best = t;
        if (c < last_cpu) last_cpu = c;
    }
    fftw_destroy_plan(p);
    return best;
}

static double zcube_time(zc_array *x, int kind, int axis, int threads, void *out, size_t bytes, int reps)
{
    double best = 1e30;
    last_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        zc_array *f;
        int rc = kind ? zc_fft_rfft(x, -1, axis, NULL, &f) : zc_fft_fft(x, -1, axis, NULL, &f);
        if (rc < 0) die("fft", rc);
        zc_spec s = ZC_SPEC_INIT;
        s.nthreads = threads;
        double t = now(), c = cpu_now();
        if ((rc = zc_compute_buffer(&s, f, out, bytes, NULL)) < 0) die("compute", rc);
        t = now() - t;
        c = cpu_now() - c;
        if (t < best) best = t;
        if (c < last_cpu) last_cpu = c;
        zc_array_release(f);
    }
    return best;
}

/* The FFT node's own work, block by block on one thread (input region read from
 * the in-memory array, lines gathered, FFTW, scattered into the block), without
 * the engine's write of each block to a store and the read back. */
static double node_time(zc_array *x, int kind, int axis, int reps)
{
    zc_array *f;
    int rc = kind ? zc_fft_rfft(x, -1, axis, NULL, &f) : zc_fft_fft(x, -1, axis, NULL, &f);
    if (rc < 0) die("fft", rc);
    if (f->kind != NODE_FFT) die("not an FFT node", 0);
    /* as inside a stage of a computation: big blocks come from the engine's cache */
    size_t budget = (size_t)1 << 30;
    zc__alloc_cache_begin(budget);
    void *blk = zc__malloc(node_chunk_bytes(f));
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now();
        for (int64_t b = 0; b < node_nblocks(f); b++) {
            int64_t c[ZC_MAX_DIMS];
            zc_range sel[ZC_MAX_DIMS];
            node_block_coords(f, b, c);
            node_block_region(f, c, sel);
            if ((rc = node_compute_region(f, sel, blk)) < 0) die("region", rc);
        }
        t = now() - t;
        if (t < best) best = t;
    }
    zc__free(blk);
    zc__alloc_cache_end(budget);
    zc_array_release(f);
    return best;
}

static double max_rel(const double complex *a, const double complex *b, size_t n)
{
    double num = 0, den = 1e-300;
    for (size_t i = 0; i < n; i++) {
        num = fmax(num, cabs(a[i] - b[i]));
        den = fmax(den, cabs(b[i]));
    }
    return num / den;
}

#define MAX_REL_DIFF 1e-10

/* print the JSON first (it says what was compared), then fail on a mismatch */
static void check_rel(const char *what, double err)
{
    if (err <= MAX_REL_DIFF) return;
    fprintf(stderr, "bench_fft: %s: zcube's result differs from FFTW's by %.3g (relative), more than %g\n", what, err,
            MAX_REL_DIFF);
    exit(1);
}

static int incore(int n, int rows, int reps)
{
    size_t total = (size_t)n * (size_t)rows;
    double complex *x = fftw_malloc(total * sizeof *x), *y = fftw_malloc(total * sizeof *y),
                   *z = fftw_malloc(total * sizeof *z);
    double *xr = fftw_malloc(total * sizeof *xr);
    srand(1);
    for (size_t i = 0; i < total; i++) {
        x[i] = (double)rand() / RAND_MAX - 0.5 + I * ((double)rand() / RAND_MAX - 0.5);
        xr[i] = creal(x[i]);
    }
    const struct { const char *name; int axis, real; } cases[] = {
        {"fft_axis1", 1, 0}, {"fft_axis0", 0, 0}, {"rfft_axis1", 1, 1}};
    for (int c = 0; c < 3; c++) {
        int axis = cases[c].axis, real = cases[c].real;
        int len = axis == 1 ? n : rows, howmany = axis == 1 ? rows : n;
        int stride = axis == 1 ? 1 : n, dist = axis == 1 ? n : 1;
        if (real && axis == 1) dist = n; /* r2c: input dist n, output dist n/2+1 */
        /* FFTW needs a copy of the input for MEASURE (it overwrites); plan on scratch */
        double t_est = fftw_time(len, howmany, stride, dist, real, FFTW_ESTIMATE, real ? (void *)xr : (void *)x, y, reps);
        double c_est = last_cpu;
        double complex *scratch_in = fftw_malloc(total * sizeof *x);
        double t_meas = fftw_time(len, howmany, stride, dist, real, FFTW_MEASURE, scratch_in, z, reps);
        fftw_free(scratch_in);
        /* reference values with ESTIMATE again (MEASURE clobbered z, not y) */
        fftw_time(len, howmany, stride, dist, real, FFTW_ESTIMATE, real ? (void *)xr : (void *)x, y, 1);
        int64_t shape[2] = {rows, n}, chunks[2] = {rows, n};
        zc_array *a;
        int rc = real ? zc_asarray(xr, ZC_FLOAT64, 2, shape, chunks, &a) : zc_asarray(x, ZC_COMPLEX128, 2, shape, chunks, &a);
        if (rc < 0) die("asarray", rc);
        size_t obytes = (size_t)rows * (size_t)(real ? n / 2 + 1 : n) * sizeof(double complex);
        double tn = node_time(a, real, axis, reps);
        double t1 = zcube_time(a, real, axis, 1, z, obytes, reps), c1 = last_cpu;
        double t2 = zcube_time(a, real, axis, 2, z, obytes, reps);
        double err = max_rel(z, y, obytes / sizeof(double complex));
        /* the engine's own cost on the same data: an elementwise pass (conj / copy) through the same path */
        double t_copy = 1e30;
        for (int r = 0; r < reps; r++) {
            zc_array *cj;
            if ((rc = zc_elementwise(real ? "positive" : "conj", 1, &a, &cj)) < 0) die("conj", rc);
            zc_spec s1 = ZC_SPEC_INIT;
            s1.nthreads = 1;
            double t0 = now();
            if ((rc = zc_compute_buffer(&s1, cj, z, total * (real ? 8 : 16), NULL)) < 0) die("compute", rc);
            t0 = now() - t0;
            if (t0 < t_copy) t_copy = t0;
            zc_array_release(cj);
        }
        zc_array_release(a);
        double elems = (double)total;
        printf("{\"case\": \"incore_%s\", \"n\": %d, \"rows\": %d, \"fftw_estimate_s\": %.5f, \"fftw_measure_s\": %.5f, "
               "\"zcube_1thread_s\": %.5f, \"zcube_2threads_s\": %.5f, \"fftw_melem_per_s\": %.1f, "
               "\"zcube_1thread_melem_per_s\": %.1f, \"ratio_1thread_vs_fftw_estimate\": %.3f, "
               "\"ratio_1thread_vs_fftw_measure\": %.3f, \"ratio_2threads_vs_fftw_estimate\": %.3f, "
               "\"ratio_2threads_vs_fftw_measure\": %.3f, "
               "\"zcube_elementwise_pass_1thread_s\": %.5f, \"fft_node_1thread_s\": %.5f, \"ratio_fft_node_vs_fftw_estimate\": %.3f, "
               "\"ratio_fft_node_vs_fftw_measure\": %.3f, \"fftw_estimate_cpu_s\": %.5f, \"zcube_1thread_cpu_s\": %.5f, "
               "\"cpu_ratio_1thread_vs_fftw_estimate\": %.3f, \"max_rel_diff\": %.2g, \"rss_mb\": %.0f}\n",
               cases[c].name, n, rows, t_est, t_meas, t1, t2, elems / t_est / 1e6, elems / t1 / 1e6, t_est / t1,
               t_meas / t1, t_est / t2, t_meas / t2, t_copy, tn, t_est / tn, t_meas / tn, c_est, c1, c_est / c1, err, rss_mb());
        fflush(stdout);
        check_rel(cases[c].name, err);
    }
    fftw_free(x);
    fftw_free(y);
    fftw_free(z);
    fftw_free(xr);
    return 0;
}

static int ooc(int64_t n, int mem_mb, const char *work, int threads)
{
    double complex *x = fftw_malloc((size_t)n * sizeof *x), *y = fftw_malloc((size_t)n * sizeof *y);
    srand(2);
    for (int64_t i = 0; i < n; i++) x[i] = (double)rand() / RAND_MAX - 0.5 + I * ((double)rand() / RAND_MAX - 0.5);
    int ni = (int)n;
    fftw_plan p = fftw_plan_dft_1d(ni, x, y, FFTW_FORWARD, FFTW_ESTIMATE);
    double t = now();
    fftw_execute(p);
    double t_fftw = now() - t;
    fftw_destroy_plan(p);
    /* zcube: the input as an in-memory array (zc_asarray, chunks of 2^18), the result into a buffer */
    int64_t chunk = (int64_t)1 << 18;
    zc_array *a, *f;
    int rc = zc_asarray(x, ZC_COMPLEX128, 1, &n, &chunk, &a);
    if (rc < 0) die("asarray", rc);
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = (size_t)mem_mb << 20;
    s.reserved_mem = s.allowed_mem / 8;
    s.nthreads = threads;
    s.work_dir = work;
    if ((rc = zc_fft_fft(a, -1, 0, NULL, &f)) < 0) die("fft", rc);
    double complex *z = fftw_malloc((size_t)n * sizeof *z);
    zc_report *rep = NULL;
    t = now();
    if ((rc = zc_compute_buffer(&s, f, z, (size_t)n * sizeof *z, &rep)) < 0) die("compute", rc);
    double t_z = now() - t;
    double err = max_rel(z, y, (size_t)n);
    char *json = NULL;
    zc_report_json(rep, &json);
    int nops = 0;
    for (char *q = json; q && (q = strstr(q, "\"op\":")); q++) nops++;
    printf("{\"case\": \"out_of_core_fft\", \"n\": %lld, \"allowed_mem_mb\": %d, \"threads\": %d, "
           "\"operations\": %d, \"fftw_incore_s\": %.4f, \"zcube_s\": %.4f, \"ratio_vs_fftw_incore\": %.4f, "
           "\"zcube_melem_per_s\": %.2f, \"max_rel_diff\": %.2g}\n",
           (long long)n, mem_mb, threads, nops, t_fftw, t_z, t_fftw / t_z,
           (double)n / t_z / 1e6, err);
    fflush(stdout);
    check_rel("out_of_core_fft", err);
    zc_free(json);
    zc_report_free(rep);
    zc_array_release(f);
    zc_array_release(a);
    fftw_free(x);
    fftw_free(y);
    fftw_free(z);
    return 0;
}

/* Only zcube end to end on one case, REPS times (for profilers: perf record). */
static int e2e(int n, int rows, const char *what, int reps, int threads)
{
    int axis = strstr(what, "axis0") ? 0 : 1, real = !strncmp(what, "rfft", 4);
    size_t total = (size_t)n * (size_t)rows;
    double complex *x = fftw_malloc(total * sizeof *x), *z = fftw_malloc(total * sizeof *z);
    double *xr = (double *)(void *)x;
    srand(1);
    for (size_t i = 0; i < total; i++) x[i] = (double)rand() / RAND_MAX - 0.5 + I * ((double)rand() / RAND_MAX - 0.5);
    int64_t shape[2] = {rows, n}, chunks[2] = {rows, n};
    zc_array *a;
    int rc = zc_asarray(x, real ? ZC_FLOAT64 : ZC_COMPLEX128, 2, shape, chunks, &a);
    if (rc < 0) die("asarray", rc);
    (void)xr;
    size_t obytes = (size_t)rows * (size_t)(real ? n / 2 + 1 : n) * sizeof(double complex);
    zcube_time(a, real, axis, threads, z, obytes, 1); /* plans, page faults of the first run */
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t = zcube_time(a, real, axis, threads, z, obytes, reps);
    getrusage(RUSAGE_SELF, &r1);
    double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
                 (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6;
    printf("{\"case\": \"e2e_%s\", \"n\": %d, \"rows\": %d, \"threads\": %d, \"zcube_best_s\": %.5f, "
           "\"cpu_per_run_s\": %.5f}\n", what, n, rows, threads, t, cpu / reps);
    zc_array_release(a);
    fftw_free(x);
    fftw_free(z);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "e2e"))
        return e2e(atoi(argv[2]), atoi(argv[3]), argv[4], argc > 5 ? atoi(argv[5]) : 10, argc > 6 ? atoi(argv[6]) : 1);
    if (argc >= 4 && !strcmp(argv[1], "incore")) return incore(atoi(argv[2]), atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 3);
    if (argc >= 5 && !strcmp(argv[1], "ooc")) return ooc(atoll(argv[2]), atoi(argv[3]), argv[4], argc > 5 ? atoi(argv[5]) : 2);
    fprintf(stderr, "usage: bench_fft incore N ROWS [REPS] | ooc N MEM_MB WORKDIR [THREADS] | e2e N ROWS "
                    "fft_axis1|fft_axis0|rfft_axis1 [REPS] [THREADS]\n");
    return 2;
}
