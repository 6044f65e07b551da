/* bench/bench_compute.c — the compute engine's side of the compute benchmark
 * (bench/compute_bench.sh runs it against Dask, bench/compute_dask.py).
 *
 *   bench_compute gen DIR [--T N] [--codec SPEC] [--threads N] [--chunks A,B,C,D]
 *   bench_compute qm DIR [--allowed-mem MB] [--threads N] [--codec SPEC]
 *   bench_compute rechunk DIR [--chunks A,B,C,D] [--allowed-mem MB] [--threads N] [--codec SPEC]
 *   bench_compute tasks [--n N] [--threads N] [--allowed-mem MB] [--unfused]
 *   add --plan-only to qm, rechunk or tasks to print the optimized plan's JSON and stop.
 *
 * gen writes DIR/u.zarr and DIR/v.zarr: float64 (T, 1, 987, 1920), chunks
 * (10, 1, 987, 1920) (152 MB; or --chunks), Zarr v2, uniform random numbers in [0, 1) (u seed 1, v
 * seed 2), through zc_random_uniform + zc_compute (default codec
 * blosc:lz4:5:shuffle). The array shape is Cubed's Quadratic Means example.
 *
 * qm computes mean(u*u, axis=0), mean(v*v, axis=0), mean(u*v, axis=0) in ONE
 * zc_compute (the plan shares what it can) into DIR/zcube/{uu,vv,uv}.zarr.
 * rechunk writes u with chunks (T, 1, 100, 100) (or --chunks) to
 * DIR/zcube/rechunk.zarr via zc_rechunk + zc_compute. tasks computes
 * sum(ones((N, 8), chunks=(1, 8))) (N blocks, default 10^6) into a memory store
 * and checks the result is 8N; the engine fuses up to 64 blocks into a task
 * (the report's "tasks" says how many it dispatched). tasks --unfused computes
 * sum(ones((N, 8), chunks=(1, 8)), axis=1) instead: the reduced axis has one
 * block, so every task reads exactly one block and writes one output chunk (N
 * tasks: the per-task cost with no fusion), every value checked to be 8.
 *
 * Each case prints one JSON line: wall seconds (arrays built → computed),
 * plan seconds (zc_plan_json on the same arrays: planning + JSON), CPU seconds of
 * the process, peak RSS of the process (getrusage, KiB → MB) measured after the
 * data and library are loaded, RSS before the compute, allowed_mem, threads, and
 * the library's report (operations: tasks, seconds, projected and measured memory).
 * The memory contract: peak RSS ≤ threads × allowed_mem + a small fixed overhead.
 * Uses the public API only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"
#include "zcube.h"

#define MB (1024.0 * 1024.0)

static double rss_peak_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* current RSS from /proc/self/statm (pages) */
static double rss_now_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
        fclose(f);
    }
    return (double)res * 4096.0 / MB;
}

#define ZC(call, what) BENCH_ZC("bench_compute", call, what)

typedef struct {
    const char *dir, *codec, *chunks;
    int64_t T, n;
    double allowed_mb;
    int threads, plan_only, unfused;
} opts;

static int64_t parse_i64(const char *s, const char *what)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || v <= 0) {
        fprintf(stderr, "bench_compute: %s must be a positive integer, not '%s'\n", what, s);
        exit(2);
    }
    return v;
}

static void parse_chunks(const char *s, int64_t T, int64_t out[4])
{
    if (!s) {
        out[0] = T; out[1] = 1; out[2] = 100; out[3] = 100;
        return;
    }
    char *end;
    for (int d = 0; d < 4; d++) {
        out[d] = strtoll(s, &end, 10);
        if (out[d] <= 0 || (d < 3 && *end != ',') || (d == 3 && *end)) {
            fprintf(stderr, "bench_compute: --chunks wants 4 positive integers A,B,C,D, not '%s'\n", s);
            exit(2);
        }
        s = end + 1;
    }
    if (out[0] > T) out[0] = T;
}

static zc_spec make_spec(const opts *o, const char *work)
{
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = (size_t)(o->allowed_mb * MB);
    s.reserved_mem = s.allowed_mem / 8 < ((size_t)64 << 20) ? s.allowed_mem / 8 : (size_t)64 << 20;
    s.nthreads = o->threads;
    s.work_dir = work;
    return s;
}

/* print the common fields and the report, then close the line */
static void emit(const char *name, const opts *o, double wall, double cpu, double plan_s, double rss0,
                 zc_report *rep, const char *extra)
{
    char *json = NULL;
    if (rep) ZC(zc_report_json(rep, &json), "report");
    printf("{\"case\": \"%s\", \"peer\": \"zcube\", \"T\": %lld, \"threads\": %d, \"allowed_mem_mb\": %.0f, "
           "\"seconds\": %.6f, \"cpu_seconds\": %.4f, \"plan_seconds\": %.6f, \"rss_before_mb\": %.1f, "
           "\"peak_rss_mb\": %.1f%s, \"report\": %s}\n",
           name, (long long)o->T, o->threads, o->allowed_mb, wall, cpu, plan_s, rss0, rss_peak_mb(),
           extra ? extra : "", json ? json : "null");
    fflush(stdout);
    zc_free(json);
}

static void gen(const opts *o)
{
    zc_store *st;
    ZC(zc_store_open(o->dir, ZC_STORE_CREATE, &st), o->dir);
    int64_t shape[4] = {o->T, 1, 987, 1920}, chunks[4] = {10, 1, 987, 1920};
    if (o->chunks) parse_chunks(o->chunks, o->T, chunks);
    zc_array *u, *v;
    ZC(zc_random_uniform(1, 4, shape, chunks, ZC_FLOAT64, 0, 1, &u), "uniform u");
    ZC(zc_random_uniform(2, 4, shape, chunks, ZC_FLOAT64, 0, 1, &v), "uniform v");
    zc_array *arrs[2] = {u, v};
    zc_target t[2] = {{st, "u.zarr", o->codec, 2}, {st, "v.zarr", o->codec, 2}};
    opts g = *o;
    g.allowed_mb = 2048;
    zc_spec s = make_spec(&g, NULL);
    double t0 = bench_now(), c0 = bench_cpu_now();
    ZC(zc_compute(&s, 2, arrs, t, NULL), "writing u and v");
    double wall = bench_now() - t0, cpu = bench_cpu_now() - c0;
    fprintf(stderr, "bench_compute: wrote u, v (%lld, 1, 987, 1920) float64, chunks (%lld, %lld, %lld, %lld), in %.1f s "
            "(%.1f s CPU)\n", (long long)o->T, (long long)chunks[0], (long long)chunks[1], (long long)chunks[2],
            (long long)chunks[3], wall, cpu);
    zc_array_release(u);
    zc_array_release(v);
    zc_store_close(st);
}

static zc_array *open_in(zc_store *st, const char *path)
{
    zc_array *a;
    ZC(zc_from_zarr(st, path, &a), path);
    return a;
}

static zc_array *mul(zc_array *a, zc_array *b)
{
    zc_array *args[2] = {a, b}, *r;
    ZC(zc_elementwise("multiply", 2, args, &r), "multiply");
    return r;
}

static void quadratic_means(const opts *o, char *work)
{
    zc_store *st;
    ZC(zc_store_open(o->dir, 0, &st), o->dir);
    double rss0 = rss_now_mb();
    double t0 = bench_now(), c0 = bench_cpu_now();
    zc_array *u = open_in(st, "u.zarr"), *v = open_in(st, "v.zarr");
    zc_array *sq[3] = {mul(u, u), mul(v, v), mul(u, v)}, *m[3];
    int axis = 0;
    for (int i = 0; i < 3; i++) ZC(zc_reduce("mean", sq[i], &axis, 1, 0, 0, &m[i]), "mean");
    zc_target t[3] = {{st, "zcube/uu.zarr", o->codec, 2}, {st, "zcube/vv.zarr", o->codec, 2},
                      {st, "zcube/uv.zarr", o->codec, 2}};
    zc_spec s = make_spec(o, work);
    double p0 = bench_now();
    char *plan;
    ZC(zc_plan_json(&s, 3, m, t, &plan), "plan");
    double plan_s = bench_now() - p0;
    if (o->plan_only) {
        printf("%s\n", plan);
        zc_free(plan);
        exit(0);
    }
    zc_free(plan);
    zc_report *rep;
    ZC(zc_compute(&s, 3, m, t, &rep), "quadratic means");
    double wall = bench_now() - t0, cpu = bench_cpu_now() - c0;
    int64_t shape[4];
    ZC(zc_array_info(u, NULL, shape, NULL, NULL), "info");
    char extra[160];
    snprintf(extra, sizeof extra, ", \"bytes_in\": %lld", (long long)(2 * shape[0] * 987 * 1920 * 8));
    opts oo = *o;
    oo.T = shape[0];
    emit("quadratic_means", &oo, wall, cpu, plan_s, rss0, rep, extra);
    zc_report_free(rep);
    for (int i = 0; i < 3; i++) {
        zc_array_release(m[i]);
        zc_array_release(sq[i]);
    }
    zc_array_release(u);
    zc_array_release(v);
    zc_store_close(st);
}

static void rechunk(const opts *o, char *work)
{
    zc_store *st;
    ZC(zc_store_open(o->dir, 0, &st), o->dir);
    double rss0 = rss_now_mb();
    double t0 = bench_now(), c0 = bench_cpu_now();
    zc_array *u = open_in(st, "u.zarr");
    int64_t shape[4], dst[4];
    ZC(zc_array_info(u, NULL, shape, NULL, NULL), "info");
    parse_chunks(o->chunks, shape[0], dst);
    zc_array *r;
    ZC(zc_rechunk(u, dst, &r), "rechunk");
    zc_target t = {st, "zcube/rechunk.zarr", o->codec, 2};
    zc_spec s = make_spec(o, work);
    double p0 = bench_now();
    char *plan;
    ZC(zc_plan_json(&s, 1, &r, &t, &plan), "plan");
    double plan_s = bench_now() - p0;
    if (o->plan_only) {
        printf("%s\n", plan);
        zc_free(plan);
        exit(0);
    }
    zc_free(plan);
    zc_report *rep;
    ZC(zc_compute(&s, 1, &r, &t, &rep), "rechunk");
    double wall = bench_now() - t0, cpu = bench_cpu_now() - c0;
    char extra[200];
    snprintf(extra, sizeof extra, ", \"bytes_in\": %lld, \"chunks\": [%lld, %lld, %lld, %lld]",
             (long long)(shape[0] * 987 * 1920 * 8), (long long)dst[0], (long long)dst[1], (long long)dst[2],
             (long long)dst[3]);
    opts oo = *o;
    oo.T = shape[0];
    emit("rechunk", &oo, wall, cpu, plan_s, rss0, rep, extra);
    zc_report_free(rep);
    zc_array_release(r);
    zc_array_release(u);
    zc_store_close(st);
}

static void tasks(const opts *o)
{
    double rss0 = rss_now_mb();
    double t0 = bench_now(), c0 = bench_cpu_now();
    int64_t shape[2] = {o->n, 8}, chunks[2] = {1, 8};
    zc_array *ones, *s;
    ZC(zc_full(2, shape, chunks, ZC_FLOAT64, 1.0, &ones), "ones");
    int axis = 1;
    ZC(zc_reduce("sum", ones, o->unfused ? &axis : NULL, o->unfused ? 1 : 0, 0, 0, &s), "sum");
    zc_spec sp = make_spec(o, NULL);
    double p0 = bench_now();
    char *plan;
    ZC(zc_plan_json(&sp, 1, &s, NULL, &plan), "plan");
    double plan_s = bench_now() - p0;
    if (o->plan_only) {
        printf("%s\n", plan);
        zc_free(plan);
        exit(0);
    }
    zc_free(plan);
    zc_store *st;
    ZC(zc_store_open("memory://bench-tasks", ZC_STORE_CREATE, &st), "memory store");
    zc_target t = {st, "sum", "none", 3};
    zc_report *rep;
    double c1 = bench_now();
    ZC(zc_compute(&sp, 1, &s, &t, &rep), "sum of ones");
    double compute_s = bench_now() - c1;
    double wall = bench_now() - t0, cpu = bench_cpu_now() - c0;
    zc_zarr *z;
    size_t nv = o->unfused ? (size_t)o->n : 1;
    double *v = calloc(nv, sizeof *v);
    if (!v) {
        fprintf(stderr, "bench_compute: out of memory\n");
        exit(1);
    }
    ZC(zc_zarr_open(st, "sum", &z), "result");
    ZC(zc_zarr_read(z, NULL, v, nv * sizeof *v), "read result");
    zc_zarr_close(z);
    zc_store_close(st);
    double want = o->unfused ? 8.0 : 8.0 * (double)o->n;
    for (size_t i = 0; i < nv; i++)
        if (v[i] != want) {
            fprintf(stderr, "bench_compute: sum [%zu] is %.17g, expected %.17g\n", i, v[i], want);
            exit(1);
        }
    free(v);
    char extra[200];
    snprintf(extra, sizeof extra, ", \"blocks\": %lld, \"unfused\": %s, \"compute_seconds\": %.4f, \"result_ok\": true",
             (long long)o->n, o->unfused ? "true" : "false", compute_s);
    opts oo = *o;
    oo.T = 0;
    emit("tasks", &oo, wall, cpu, plan_s, rss0, rep, extra);
    zc_report_free(rep);
    zc_array_release(s);
    zc_array_release(ones);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_compute gen|qm|rechunk|tasks [DIR] [--T N] [--n N] [--allowed-mem MB] "
                    "[--threads N] [--codec SPEC] [--chunks A,B,C,D] [--work-dir DIR] [--plan-only] [--unfused]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2) usage();
    const char *cmd = argv[1];
    opts o = {NULL, "blosc:lz4:5:shuffle", NULL, 200, 1000000, 1024, 2, 0, 0};
    char *work = NULL;
    int i = 2;
    if (strcmp(cmd, "tasks") != 0) {
        if (argc < 3) usage();
        o.dir = argv[2];
        i = 3;
    }
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--plan-only")) {
            o.plan_only = 1;
            continue;
        }
        if (!strcmp(argv[i], "--unfused")) {
            o.unfused = 1;
            continue;
        }
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val) usage();
        if (!strcmp(a, "--T")) o.T = parse_i64(val, "--T");
        else if (!strcmp(a, "--n")) o.n = parse_i64(val, "--n");
        else if (!strcmp(a, "--allowed-mem")) o.allowed_mb = (double)parse_i64(val, "--allowed-mem");
        else if (!strcmp(a, "--threads")) o.threads = (int)parse_i64(val, "--threads");
        else if (!strcmp(a, "--codec")) o.codec = val;
        else if (!strcmp(a, "--chunks")) o.chunks = val;
        else if (!strcmp(a, "--work-dir")) work = argv[i + 1];
        else usage();
        i++;
    }
    if (!strcmp(cmd, "gen")) gen(&o);
    else if (!strcmp(cmd, "qm")) quadratic_means(&o, work);
    else if (!strcmp(cmd, "rechunk")) rechunk(&o, work);
    else if (!strcmp(cmd, "tasks")) tasks(&o);
    else usage();
    return 0;
}
