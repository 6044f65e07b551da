/* bench/bench_ew.c — the fused elementwise kernel against a hand-written loop and memcpy.
 *
 *   bench_ew [MiB per array, default 64] [repetitions, default 5]
 *
 * Evaluates (a*a + b*b) * 0.5 - a over float64 (and float32) arrays with
 * ew_eval — as one run, and in runs of 1920 elements (a row of a block) —
 * against the same expression written as one C loop (the reference, compiled
 * with vectorization on, for AVX2 and baseline like the kernels) and against
 * memcpy of one array. Best of N, one
 * JSON line. Ratios are time / reference time (1.0 = as fast as the loop),
 * from wall time and (cpu_*) from this thread's CPU time, which other
 * processes on a shared machine disturb less.
 * The kernel reads two arrays and writes one; memcpy reads one and writes
 * one, so bytes/s are reported beside the times.
 */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/elementwise.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of this thread: on a shared machine, less disturbed by other processes than wall time */
static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* best wall and CPU times of a phase */
typedef struct {
    double wall, cpu;
} best_t;

static void keep(best_t *b, double w0, double w1, double c0, double c1)
{
    if (w1 - w0 < b->wall) b->wall = w1 - w0;
    if (c1 - c0 < b->cpu) b->cpu = c1 - c0;
}

/* built like the kernels: for AVX2 and the baseline, picked at load time */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

CLONES static void ref_f64(size_t n, const double *restrict a, const double *restrict b, double *restrict o)
{
    for (size_t i = 0; i < n; i++) o[i] = (a[i] * a[i] + b[i] * b[i]) * 0.5 - a[i];
}

CLONES static void ref_f32(size_t n, const float *restrict a, const float *restrict b, float *restrict o)
{
    for (size_t i = 0; i < n; i++) o[i] = (a[i] * a[i] + b[i] * b[i]) * 0.5f - a[i];
}

static ew_program *build(zc_dtype t)
{
    ew_program *p;
    if (ew_program_create(&p)) return NULL;
    int a = ew_input(p, 0, t), b = ew_input(p, 1, t), aa, bb, s, h, r;
    if (ew_binary(p, EW_MULTIPLY, a, a, &aa) || ew_binary(p, EW_MULTIPLY, b, b, &bb) ||
        ew_binary(p, EW_ADD, aa, bb, &s) || ew_binary(p, EW_MULTIPLY, s, ew_const_f64(p, 0.5), &h) ||
        ew_binary(p, EW_SUBTRACT, h, a, &r) || ew_set_output(p, r)) {
        fprintf(stderr, "bench_ew: building the program: %s\n", zc_errmsg());
        ew_program_free(p);
        return NULL;
    }
    return p;
}

typedef struct {
    best_t ew, ew_rows, ref, copy;
    int identical;
} result;

static int run(zc_dtype t, size_t bytes, int reps, result *res)
{
    size_t es = t == ZC_FLOAT64 ? 8 : 4, n = bytes / es;
    char *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
    char *o1 = aligned_alloc(64, bytes), *o2 = aligned_alloc(64, bytes);
    ew_program *p = build(t);
    if (!a || !b || !o1 || !o2 || !p) {
        fprintf(stderr, "bench_ew: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        double x = (double)(i % 1000) * 0.01 - 3, y = (double)(i % 777) * 0.02 + 1;
        if (t == ZC_FLOAT64) {
            ((double *)a)[i] = x;
            ((double *)b)[i] = y;
        } else {
            ((float *)a)[i] = (float)x;
            ((float *)b)[i] = (float)y;
        }
    }
    memset(o1, 0, bytes);
    memset(o2, 0, bytes);
    const void *in[2] = {a, b};
    int64_t st[2] = {1, 1};
    best_t init = {1e30, 1e30};
    res->ew = res->ew_rows = res->ref = res->copy = init;
    const size_t row = 1920;
    for (int r = 0; r < reps; r++) {
        double w0 = now(), c0 = cpu();
        if (t == ZC_FLOAT64) ref_f64(n, (const double *)a, (const double *)b, (double *)o2);
        else ref_f32(n, (const float *)a, (const float *)b, (float *)o2);
        double w1 = now(), c1 = cpu();
        keep(&res->ref, w0, w1, c0, c1);
        ew_eval(p, n, in, st, o1);
        double w2 = now(), c2 = cpu();
        keep(&res->ew, w1, w2, c1, c2);
        memcpy(o1, a, bytes);
        double w3 = now(), c3 = cpu();
        keep(&res->copy, w2, w3, c2, c3);
        for (size_t off = 0; off < n; off += row) {
            const void *inr[2] = {a + off * es, b + off * es};
            ew_eval(p, n - off < row ? n - off : row, inr, st, o1 + off * es);
        }
        double w4 = now(), c4 = cpu();
        keep(&res->ew_rows, w3, w4, c3, c4);
    }
    ew_eval(p, n, in, st, o1);
    res->identical = memcmp(o1, o2, bytes) == 0;
    ew_program_free(p);
    free(a);
    free(b);
    free(o1);
    free(o2);
    return 0;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 64;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (mib < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_ew [MiB per array] [repetitions]\n");
        return 2;
    }
    size_t bytes = mib << 20;
    result r64, r32;
    if (run(ZC_FLOAT64, bytes, reps, &r64) || run(ZC_FLOAT32, bytes, reps, &r32)) return 1;
    double load = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = 0;
        fclose(f);
    }
    const double g = 1e9;
    printf("{\"bench\":\"ew\",\"expr\":\"(a*a + b*b) * 0.5 - a\",\"mib_per_array\":%zu,\"reps\":%d,\"load1\":%.2f", mib,
           reps, load);
    const char *names[2] = {"float64", "float32"};
    result *rs[2] = {&r64, &r32};
    for (int k = 0; k < 2; k++) {
        result *r = rs[k];
        printf(",\"%s\":{\"ew_s\":%.5f,\"ew_rows1920_s\":%.5f,\"ref_loop_s\":%.5f,\"memcpy_s\":%.5f,"
               "\"ew_over_ref\":%.3f,\"ew_rows_over_ref\":%.3f,\"ew_over_memcpy\":%.3f,"
               "\"cpu_ew_over_ref\":%.3f,\"cpu_ew_rows_over_ref\":%.3f,\"cpu_ew_over_memcpy\":%.3f,"
               "\"ew_gbs\":%.2f,\"ref_gbs\":%.2f,\"memcpy_gbs\":%.2f,\"identical\":%s}",
               names[k], r->ew.wall, r->ew_rows.wall, r->ref.wall, r->copy.wall, r->ew.wall / r->ref.wall,
               r->ew_rows.wall / r->ref.wall, r->ew.wall / r->copy.wall, r->ew.cpu / r->ref.cpu,
               r->ew_rows.cpu / r->ref.cpu, r->ew.cpu / r->copy.cpu, 3.0 * (double)bytes / r->ew.wall / g,
               3.0 * (double)bytes / r->ref.wall / g, 2.0 * (double)bytes / r->copy.wall / g,
               r->identical ? "true" : "false");
    }
    printf("}\n");
    return r64.identical && r32.identical ? 0 : 1;
}
