/* tests/test_compute_srccache.c — zc_spec.cache_mem (exec/srccache.h): a stored
 * source read by several stages is decoded once (misses = its chunks, the other
 * reads hits), results are bit-identical with and without the cache, the budget
 * is respected (a source that does not fit is not cached, and the process's
 * allocations stay within threads × allowed_mem + cache_mem), sources read by
 * one stage are not cached, strided and sharded reads, a corrupt chunk; what
 * the sources leave of cache_mem holds the intermediates when they fit; big
 * blocks (the arena, compressed chunks) are advised to use huge pages. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "harness.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53 - 0.5;
}

/* A stored m×n float64 source in st at path (chunks c0×c1; shards s0×s1 or 0). */
static zc_array *stored(zc_store *st, const char *path, int64_t m, int64_t n, int64_t c0, int64_t c1, int64_t s0,
                        int64_t s1, double **vals)
{
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = m, o.shape[1] = n;
    o.chunks[0] = c0, o.chunks[1] = c1;
    o.shards[0] = s0, o.shards[1] = s1;
    o.dtype = ZC_FLOAT64;
    o.codec = "zstd:1";
    zc_zarr *z = NULL;
    CHECK_OK(zc_zarr_create(st, path, &o, &z));
    double *v = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < m * n; i++) v[i] = urand();
    zc_range sel[2] = {{0, m, 1}, {0, n, 1}};
    CHECK_OK(zc_zarr_write(z, sel, v, sizeof(double) * (size_t)(m * n)));
    zc_zarr_close(z);
    if (vals) *vals = v;
    else free(v);
    zc_array *a = NULL;
    CHECK_OK(zc_from_zarr(st, path, &a));
    return a;
}

typedef struct {
    int64_t bytes, arrays, hits, misses;
    int le_projected, inter_mem;
} cache_report;

/* Compute arrs[0..n) with spec s into a memory store; values of each (len[i] doubles) and the cache figures. */
static void run(const zc_spec *s, int n, zc_array **arrs, const size_t *len, double **out, cache_report *cr)
{
    static int counter;
    char url[64];
    snprintf(url, sizeof url, "memory://srccache-%d-%d", (int)getpid(), counter++);
    zc_store *st = NULL;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    zc_target t[4];
    char names[4][8];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "o%d", i);
        t[i] = (zc_target){st, names[i], "none", 3};
    }
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(s, n, arrs, t, &rep));
    char *rj = NULL;
    CHECK_OK(zc_report_json(rep, &rj));
    json_t *r = json_loads(rj, 0, NULL);
    CHECK(r != NULL);
    json_t *c = json_object_get(r, "source_cache");
    CHECK(json_is_object(c));
    cr->bytes = json_integer_value(json_object_get(c, "bytes"));
    cr->arrays = json_integer_value(json_object_get(c, "arrays"));
    cr->hits = json_integer_value(json_object_get(c, "hits"));
    cr->misses = json_integer_value(json_object_get(c, "misses"));
    cr->inter_mem = json_is_true(json_object_get(c, "intermediates_in_memory"));
    int before = harness_failures;
    check_contract(r, "source cache run"); /* tasks allocate nothing for the cache */
    cr->le_projected = harness_failures == before;
    json_decref(r);
    zc_free(rj);
    zc_report_free(rep);
    for (int i = 0; i < n; i++) {
        zc_array *a = NULL;
        CHECK_OK(zc_from_zarr(st, names[i], &a));
        out[i] = calloc(len[i] + 1, sizeof(double));
        zc_spec plain = ZC_SPEC_INIT;
        CHECK_OK(zc_compute_buffer(&plain, a, out[i], len[i] * sizeof(double), NULL));
        zc_array_release(a);
    }
    zc_store_close(st);
}

static zc_spec spec_of(size_t allowed_mb, size_t cache_bytes, int threads)
{
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = allowed_mb << 20;
    s.reserved_mem = 1 << 20;
    s.nthreads = threads;
    s.cache_mem = cache_bytes;
    return s;
}

/* x − mean(x, axis 0): the reduction's stage and the subtraction's stage both read x */
static zc_array *anomaly(zc_array *x)
{
    int axis = 0;
    zc_array *m = NULL, *d = NULL;
    CHECK_OK(zc_reduce("mean", x, &axis, 1, 1, 0, &m));
    zc_array *args[2] = {x, m};
    CHECK_OK(zc_elementwise("subtract", 2, args, &d));
    zc_array_release(m);
    return d;
}

TEST(cache_hits_and_identical_results)
{
    zc_store *st = NULL;
    CHECK_OK(zc_store_open("memory://srccache-src1", ZC_STORE_CREATE, &st));
    int64_t m = 301, n = 37; /* edge chunks clipped in both dims */
    double *v = NULL;
    zc_array *x = stored(st, "x", m, n, 64, 10, 0, 0, &v);
    zc_array *d = anomaly(x);
    size_t len = (size_t)(m * n);
    int64_t nchunks = 5 * 4, slot = 64 * 10 * 8;
    double *off = NULL, *on = NULL, *on2 = NULL;
    cache_report c0, c1, c2;
    zc_spec s = spec_of(64, 0, 1);
    run(&s, 1, &d, &len, &off, &c0);
    CHECK(c0.bytes == 0 && c0.arrays == 0 && c0.hits == 0 && c0.misses == 0);
    s.cache_mem = (size_t)64 << 20;
    run(&s, 1, &d, &len, &on, &c1);
    CHECK(c1.arrays == 1 && c1.bytes == nchunks * slot);
    CHECK(c1.misses == nchunks); /* each chunk decoded once (one thread: no race) */
    CHECK(c1.hits >= nchunks);   /* and read again from memory by the second stage */
    CHECK(c1.le_projected);
    CHECK(memcmp(off, on, len * sizeof(double)) == 0);
    /* the values themselves: x − column means */
    double maxerr = 0;
    for (int64_t j = 0; j < n; j++) {
        double mu = 0;
        for (int64_t i = 0; i < m; i++) mu += v[i * n + j];
        mu /= (double)m;
        for (int64_t i = 0; i < m; i++) maxerr = fmax(maxerr, fabs(on[i * n + j] - (v[i * n + j] - mu)));
    }
    CHECK(maxerr < 1e-12);
    /* several threads: same values, no chunk decoded twice into the cache */
    s.nthreads = 2;
    run(&s, 1, &d, &len, &on2, &c2);
    CHECK(c2.arrays == 1 && c2.misses <= nchunks && c2.misses + c2.hits >= nchunks);
    CHECK(memcmp(off, on2, len * sizeof(double)) == 0);
    free(off), free(on), free(on2), free(v);
    zc_array_release(d);
    zc_array_release(x);
    zc_store_close(st);
}

TEST(cache_budget_respected)
{
    zc_store *st = NULL;
    CHECK_OK(zc_store_open("memory://srccache-src2", ZC_STORE_CREATE, &st));
    int64_t m = 400, n = 50;
    zc_array *x = stored(st, "x", m, n, 100, 50, 0, 0, NULL), *y = stored(st, "y", m, n, 100, 25, 0, 0, NULL);
    zc_array *dx = anomaly(x), *dy = anomaly(y), *arr[2] = {dx, dy};
    size_t len[2] = {(size_t)(m * n), (size_t)(m * n)}, one = (size_t)(m * n * 8);
    double *ref[2], *got[2];
    cache_report c;
    zc_spec s = spec_of(64, 0, 2);
    run(&s, 2, arr, len, ref, &c);
    /* a budget one byte short of one source: nothing cached */
    s.cache_mem = one - 1;
    run(&s, 2, arr, len, got, &c);
    CHECK(c.arrays == 0 && c.bytes == 0 && c.hits == 0);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(ref[i], got[i], len[i] * sizeof(double)) == 0);
        free(got[i]);
    }
    /* room for one of the two: one cached, within the budget */
    s.cache_mem = one + one / 2;
    run(&s, 2, arr, len, got, &c);
    CHECK(c.arrays == 1 && c.bytes == (int64_t)one && c.hits > 0);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(ref[i], got[i], len[i] * sizeof(double)) == 0);
        free(got[i]);
    }
    /* room for both; the library's allocations stay within threads × allowed_mem + cache_mem */
    s.cache_mem = 2 * one;
    s.allowed_mem = (size_t)4 << 20;
    zc__alloc_reset_peak();
    size_t base = zc__alloc_current();
    run(&s, 2, arr, len, got, &c);
    CHECK(c.arrays == 2 && c.bytes == 2 * (int64_t)one);
    CHECK(zc__alloc_peak() - base <= 2 * s.allowed_mem + s.cache_mem);
    CHECK(c.le_projected);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(ref[i], got[i], len[i] * sizeof(double)) == 0);
        free(got[i]);
        free(ref[i]);
    }
    zc_array_release(dx), zc_array_release(dy), zc_array_release(x), zc_array_release(y);
    zc_store_close(st);
}

TEST(cache_only_for_sources_read_twice)
{
    zc_store *st = NULL;
    CHECK_OK(zc_store_open("memory://srccache-src3", ZC_STORE_CREATE, &st));
    zc_array *x = stored(st, "x", 200, 30, 50, 30, 0, 0, NULL), *two = NULL, *y = NULL;
    CHECK_OK(zc_scalar(2, 0, &two));
    zc_array *args[2] = {x, two};
    CHECK_OK(zc_elementwise("multiply", 2, args, &y)); /* one stage reads x */
    size_t len = 200 * 30;
    double *out[1];
    cache_report c;
    zc_spec s = spec_of(64, (size_t)64 << 20, 2);
    run(&s, 1, &y, &len, out, &c);
    CHECK(c.arrays == 0 && c.bytes == 0);
    free(out[0]);
    zc_array_release(y), zc_array_release(two), zc_array_release(x);
    zc_store_close(st);
}

TEST(cache_strided_and_sharded)
{
    zc_store *st = NULL;
    CHECK_OK(zc_store_open("memory://srccache-src4", ZC_STORE_CREATE, &st));
    int64_t m = 256, n = 40;
    zc_array *x = stored(st, "x", m, n, 16, 20, 64, 40, NULL); /* sharded: the cache holds inner chunks */
    /* every other row of x (a strided read of the source) minus its column means */
    zc_index idx[2] = {{.kind = ZC_IDX_SLICE, .start = 0, .stop = m, .step = 2, .has_start = 1, .has_stop = 1},
                       {.kind = ZC_IDX_SLICE, .start = 0, .stop = n, .step = 1, .has_start = 1, .has_stop = 1}};
    zc_array *xs = NULL;
    CHECK_OK(zc_getitem(x, idx, 2, &xs));
    zc_array *d = anomaly(xs), *e = anomaly(x), *arr[2] = {d, e};
    size_t len[2] = {(size_t)(m / 2 * n), (size_t)(m * n)};
    double *off[2], *on[2];
    cache_report c;
    zc_spec s = spec_of(64, 0, 2);
    run(&s, 2, arr, len, off, &c);
    s.cache_mem = (size_t)64 << 20;
    run(&s, 2, arr, len, on, &c);
    CHECK(c.arrays == 1 && c.bytes == (m / 16) * (n / 20) * 16 * 20 * 8 && c.hits > 0);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(off[i], on[i], len[i] * sizeof(double)) == 0);
        free(off[i]);
        free(on[i]);
    }
    zc_array_release(d), zc_array_release(e), zc_array_release(xs), zc_array_release(x);
    zc_store_close(st);
}

TEST(cache_corrupt_chunk)
{
    char dir[] = "/tmp/zc_srccache_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st = NULL;
    CHECK_OK(zc_store_open(dir, ZC_STORE_CREATE, &st));
    zc_array *x = stored(st, "x", 100, 10, 25, 10, 0, 0, NULL);
    char path[400], cmd[900];
    snprintf(path, sizeof path, "%s/x/c/2/0", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    fputs("not zstd at all", f);
    fclose(f);
    zc_array *d = anomaly(x);
    zc_store *out = NULL;
    CHECK_OK(zc_store_open("memory://srccache-out5", ZC_STORE_CREATE, &out));
    zc_target t = {out, "d", "none", 3};
    zc_spec s = spec_of(64, (size_t)64 << 20, 2);
    int rc = zc_compute(&s, 1, &d, &t, NULL);
    CHECK(rc < 0 && rc != ZC_EINTERNAL);
    /* the same error without the cache */
    s.cache_mem = 0;
    CHECK(zc_compute(&s, 1, &d, &t, NULL) == rc);
    zc_array_release(d), zc_array_release(x);
    zc_store_close(out);
    zc_store_close(st);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(cache_left_holds_intermediates)
{
    zc_store *st = NULL;
    CHECK_OK(zc_store_open("memory://srccache-src6", ZC_STORE_CREATE, &st));
    int64_t m = 400, n = 50;
    zc_array *x = stored(st, "x", m, n, 100, 50, 0, 0, NULL), *d = anomaly(x);
    size_t len = (size_t)(m * n), one = (size_t)(m * n * 8);
    double *ref, *got;
    cache_report c;
    /* reserved_mem 1: intermediates never stay in memory on its account; the work
     * directory cannot be created, so only a run keeping them in memory succeeds */
    zc_spec s = spec_of(64, 0, 2);
    s.reserved_mem = 1; /* none (0 is automatic) */
    run(&s, 1, &d, &len, &ref, &c);
    CHECK(!c.inter_mem);
    s.work_dir = "/proc/zcube-no-such-dir/work";
    zc_store *out = NULL;
    CHECK_OK(zc_store_open("memory://srccache-out6", ZC_STORE_CREATE, &out));
    zc_target t = {out, "d", "none", 3};
    CHECK(zc_compute(&s, 1, &d, &t, NULL) < 0);
    /* room for the source only: the intermediates go to the work directory (refused) */
    s.cache_mem = one;
    CHECK(zc_compute(&s, 1, &d, &t, NULL) < 0);
    /* room for both */
    s.cache_mem = one + ((size_t)1 << 20);
    run(&s, 1, &d, &len, &got, &c);
    CHECK(c.inter_mem && c.arrays == 1 && c.bytes == (int64_t)one);
    CHECK(memcmp(ref, got, len * sizeof(double)) == 0);
    free(ref), free(got);
    zc_array_release(d), zc_array_release(x);
    zc_store_close(out);
    zc_store_close(st);
}

/* VmFlags of the mapping holding address p (/proc/self/smaps), "" if not found. */
static void vm_flags(const void *p, char *flags, size_t n)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool in = false;
    flags[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            snprintf(flags, n, "%s", line + 8);
            break;
        }
    }
    if (f) fclose(f);
}

/* a fresh big block (> 16 MiB: a task's buffer, a compressed chunk) is not
 * advised MADV_HUGEPAGE (VmFlags "hg"): with THP defrag "madvise" every 2 MiB
 * fault of an advised block compacts memory, 2-5 s of system time in a 2 GB
 * rechunk (core/alloc.c fresh_block) */
TEST(big_blocks_not_advised_huge_pages)
{
    size_t n = (size_t)48 << 20;
    unsigned char *p = zc__malloc(n);
    CHECK(p != NULL);
    memset(p, 1, 4096); /* one page touched */
    char flags[256];
    vm_flags(p + n / 2, flags, sizeof flags);
    CHECK(flags[0] != 0); /* the block's mapping was found */
    CHECK(strstr(flags, " hg") == NULL);
    zc__free(p);
}
