/* tests/test_compute_buffer.c — zc_compute_buffer writes the output blocks
 * straight into the caller's buffer (in place when a block is a contiguous run
 * of it, else through a strided copy): results byte-identical to computing into
 * a Zarr array and reading it back, for elementwise, reduction (grouped and
 * not), rechunk and FFT outputs, blocks contiguous in the buffer and not, 0-d
 * and empty arrays; a too-small buffer and failing allocations give errors. */
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static size_t nbytes_of(zc_array *a)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS];
    zc_dtype dt;
    zc_array_info(a, &nd, shape, NULL, &dt);
    size_t n = 1;
    for (int d = 0; d < nd; d++) n *= (size_t)shape[d];
    return n * (dt == ZC_COMPLEX128 ? 16 : dt == ZC_COMPLEX64 || dt == ZC_FLOAT64 || dt == ZC_INT64 ? 8 : 4);
}

/* The previous way: compute into a memory Zarr array, read it back. */
static void reference(zc_array *a, void *dst, size_t size)
{
    static int counter;
    char url[64];
    snprintf(url, sizeof url, "memory://test-compute-buffer-%d", counter++);
    zc_store *st;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    zc_target t = {st, "out", "none", 3};
    zc_spec s = spec_mem(64);
    CHECK_OK(zc_compute(&s, 1, &a, &t, NULL));
    zc_zarr *z = NULL;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    if (z) CHECK_OK(zc_zarr_read(z, NULL, dst, size));
    zc_zarr_close(z);
    zc_store_close(st);
}

/* a through zc_compute_buffer (several thread counts) equals the reference, and
 * bytes past the array are untouched. */
static void same(zc_array *a, const char *what)
{
    size_t n = nbytes_of(a);
    unsigned char *want = malloc(n + 1), *got = malloc(n + 16);
    memset(want, 0, n + 1);
    reference(a, want, n);
    for (int threads = 1; threads <= 2; threads++) {
        memset(got, 0xA5, n + 16);
        zc_spec s = spec_mem(64);
        s.nthreads = threads;
        zc_report *rep = NULL;
        CHECK_OK(zc_compute_buffer(&s, a, got, n + 16, &rep));
        if (memcmp(want, got, n)) {
            fprintf(stderr, "%s (%d threads): differs from the stored result\n", what, threads);
            harness_failures++;
        }
        for (size_t i = n; i < n + 16; i++) CHECK(got[i] == 0xA5);
        char *json = NULL;
        CHECK_OK(zc_report_json(rep, &json));
        CHECK(json && strstr(json, "measured_mem"));
        zc_free(json);
        zc_report_free(rep);
    }
    free(want);
    free(got);
}

static zc_array *rnd(int nd, const int64_t *shape, const int64_t *chunks, zc_dtype dt, uint64_t seed)
{
    zc_array *a = NULL;
    CHECK_OK(zc_random_uniform(seed, nd, shape, chunks, dt, -1, 1, &a));
    return a;
}

static zc_array *un(const char *name, zc_array *x)
{
    zc_array *o = NULL;
    CHECK_OK(zc_elementwise(name, 1, &x, &o));
    return o;
}

TEST(buffer_elementwise_contiguous_and_strided)
{
    int64_t shape[3] = {7, 9, 11};
    int64_t chunkings[][3] = {{2, 9, 11}, {1, 1, 11}, {7, 9, 11}, {3, 4, 5}, {7, 9, 2}, {1, 3, 11}, {2, 9, 4}};
    for (size_t i = 0; i < sizeof chunkings / sizeof *chunkings; i++) {
        zc_array *x = rnd(3, shape, chunkings[i], ZC_FLOAT64, 7 + i), *y = un("sin", x);
        char what[64];
        snprintf(what, sizeof what, "sin, chunks %lld,%lld,%lld", (long long)chunkings[i][0],
                 (long long)chunkings[i][1], (long long)chunkings[i][2]);
        same(y, what);
        zc_array *f = NULL;
        CHECK_OK(zc_astype(x, ZC_FLOAT32, &f));
        same(f, "float32");
        zc_array_release(f);
        zc_array_release(y);
        zc_array_release(x);
    }
    int64_t s1[1] = {1000}, c1[1] = {64};
    zc_array *v = rnd(1, s1, c1, ZC_FLOAT64, 3), *e = un("exp", v);
    same(e, "1-d");
    zc_array_release(e);
    zc_array_release(v);
}

TEST(buffer_reductions_rechunk_getitem)
{
    int64_t shape[3] = {12, 10, 9}, chunks[3] = {5, 3, 4};
    zc_array *x = rnd(3, shape, chunks, ZC_FLOAT64, 11);
    int axes[][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 2}};
    int nax[] = {1, 1, 1, 2};
    for (int i = 0; i < 4; i++) {
        zc_array *r = NULL;
        CHECK_OK(zc_reduce(i == 3 ? "var" : "sum", x, axes[i], nax[i], i == 1, 0, &r));
        same(r, "reduction");
        zc_array_release(r);
    }
    /* several reductions of one input, grouped, feeding the output */
    int ax = 0;
    zc_array *s = NULL, *m = NULL, *sum = NULL;
    CHECK_OK(zc_reduce("sum", x, &ax, 1, 0, 0, &s));
    CHECK_OK(zc_reduce("max", x, &ax, 1, 0, 0, &m));
    zc_array *args[2] = {s, m};
    CHECK_OK(zc_elementwise("add", 2, args, &sum));
    same(sum, "sum + max");
    /* a grouped reduction as the output itself: mean of all after std as an input */
    zc_array *all = NULL;
    CHECK_OK(zc_reduce("mean", x, NULL, 0, 0, 0, &all));
    same(all, "0-d mean");
    int64_t rc1[3] = {12, 1, 9}, rc2[3] = {2, 10, 2};
    zc_array *r1 = NULL, *r2 = NULL;
    CHECK_OK(zc_rechunk(x, rc1, &r1));
    CHECK_OK(zc_rechunk(x, rc2, &r2));
    same(r1, "rechunk to 12,1,9");
    same(r2, "rechunk to 2,10,2");
    zc_index idx[3] = {{.kind = ZC_IDX_SLICE, .start = 1, .stop = 11, .step = 3, .has_start = 1, .has_stop = 1},
                       {.kind = ZC_IDX_INT, .index = -2},
                       {.kind = ZC_IDX_SLICE, .step = 1}};
    zc_array *g = NULL;
    CHECK_OK(zc_getitem(x, idx, 3, &g));
    same(g, "getitem");
    zc_array *t = NULL;
    CHECK_OK(zc_matrix_transpose(x, &t));
    same(t, "transpose");
    zc_array *list[] = {s, m, sum, all, r1, r2, g, t, x};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) zc_array_release(list[i]);
}

/* With resume the intermediates in the work directory are kept and reused; the
 * output, having no array, is computed again into the buffer. */
TEST(buffer_resume_reuses_intermediates)
{
    int64_t shape[2] = {40, 30}, chunks[2] = {7, 30};
    zc_array *x = rnd(2, shape, chunks, ZC_FLOAT64, 9), *r = NULL, *s0 = NULL, *m = NULL;
    int ax = 0;
    CHECK_OK(zc_reduce("sum", x, &ax, 1, 0, 0, &s0));
    CHECK_OK(zc_reduce("max", x, &ax, 1, 0, 0, &m));
    zc_array *args[2] = {s0, m};
    CHECK_OK(zc_elementwise("add", 2, args, &r));
    double want[30], got[30];
    reference(r, want, sizeof want);
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/zc-test-cbuf-resume-%d", (int)getpid());
    for (int run = 0; run < 2; run++) {
        zc_spec sp = spec_mem(64);
        sp.resume = 1;
        sp.work_dir = dir;
        memset(got, 0, sizeof got);
        zc_report *rep = NULL;
        CHECK_OK(zc_compute_buffer(&sp, r, got, sizeof got, &rep));
        CHECK(!memcmp(want, got, sizeof got));
        char *json = NULL;
        CHECK_OK(zc_report_json(rep, &json));
        json_t *j = json ? json_loads(json, 0, NULL) : NULL;
        json_t *ops = json_object_get(j, "operations");
        long long skipped = 0, last_skipped = -1;
        for (size_t i = 0; i < json_array_size(ops); i++) {
            json_t *o = json_array_get(ops, i);
            long long k = json_integer_value(json_object_get(o, "skipped"));
            skipped += k;
            if (json_is_true(json_object_get(o, "output"))) last_skipped = k;
        }
        CHECK(run == 0 ? skipped == 0 : skipped > 0); /* the second run resumes the reductions */
        CHECK(last_skipped == 0);
        json_decref(j);
        zc_free(json);
        zc_report_free(rep);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    zc_array *list[] = {r, s0, m, x};
    for (size_t i = 0; i < 4; i++) zc_array_release(list[i]);
}

TEST(buffer_fft_outputs)
{
    int64_t shape[2] = {6, 64};
    int64_t chunkings[][2] = {{2, 64}, {6, 16}, {1, 64}, {4, 32}};
    for (int i = 0; i < 4; i++) {
        zc_array *x = rnd(2, shape, chunkings[i], ZC_FLOAT64, 21 + (uint64_t)i), *c = NULL;
        CHECK_OK(zc_astype(x, ZC_COMPLEX128, &c));
        for (int axis = 0; axis < 2; axis++) {
            zc_array *f = NULL, *r = NULL;
            CHECK_OK(zc_fft_fft(c, -1, axis, "backward", &f));
            CHECK_OK(zc_fft_rfft(x, -1, axis, "ortho", &r));
            same(f, "fft");
            same(r, "rfft");
            zc_array_release(f);
            zc_array_release(r);
        }
        zc_array_release(c);
        zc_array_release(x);
    }
}

TEST(buffer_zero_d_and_empty)
{
    zc_array *z = NULL;
    CHECK_OK(zc_full(0, NULL, NULL, ZC_FLOAT64, 2.5, &z));
    double v = 0;
    zc_spec s = spec_mem(64);
    CHECK_OK(zc_compute_buffer(&s, z, &v, sizeof v, NULL));
    CHECK(v == 2.5);
    CHECK_ERR(zc_compute_buffer(&s, z, &v, sizeof v - 1, NULL), ZC_EINVAL, "too small");
    zc_array_release(z);
    int64_t shapes[][2] = {{0, 5}, {3, 0}, {0, 0}}, chunks[2] = {2, 2};
    for (int i = 0; i < 3; i++) {
        zc_array *e = NULL, *e2 = NULL;
        CHECK_OK(zc_full(2, shapes[i], chunks, ZC_FLOAT64, 1, &e));
        e2 = un("cos", e);
        zc_report *rep = NULL;
        CHECK_OK(zc_compute_buffer(&s, e2, NULL, 0, &rep));
        CHECK(rep != NULL);
        zc_report_free(rep);
        unsigned char b[4] = {7, 7, 7, 7};
        CHECK_OK(zc_compute_buffer(&s, e2, b, sizeof b, NULL));
        CHECK(b[0] == 7 && b[3] == 7);
        zc_array_release(e2);
        zc_array_release(e);
    }
}

TEST(buffer_too_small_and_bad_arguments)
{
    int64_t shape[2] = {4, 5}, chunks[2] = {2, 5};
    zc_array *x = rnd(2, shape, chunks, ZC_FLOAT64, 1);
    double out[20];
    zc_spec s = spec_mem(64);
    CHECK_ERR(zc_compute_buffer(&s, x, out, sizeof out - 8, NULL), ZC_EINVAL, "too small");
    CHECK_ERR(zc_compute_buffer(&s, x, NULL, sizeof out, NULL), ZC_EINVAL, "NULL");
    CHECK_ERR(zc_compute_buffer(NULL, x, out, sizeof out, NULL), ZC_EINVAL, "NULL");
    zc_spec bad = s;
    bad.struct_size = 3;
    CHECK_ERR(zc_compute_buffer(&bad, x, out, sizeof out, NULL), ZC_EINVAL, "struct_size");
    /* over the memory bound: refused before any work, with the usual message */
    int64_t big[2] = {512, 512};
    zc_array *y = rnd(2, big, big, ZC_FLOAT64, 2);
    double *whole = malloc(512 * 512 * sizeof *whole);
    zc_spec tiny = spec_mem(2);
    CHECK_ERR(zc_compute_buffer(&tiny, y, whole, 512 * 512 * sizeof *whole, NULL), ZC_EMEMBOUND, "allowed_mem");
    free(whole);
    zc_array_release(y);
    zc_array_release(x);
}

/* Failing allocations: each either fails with ZC_ENOMEM and a message naming the
 * task, or succeeds with the right values. */
TEST(buffer_failing_allocations)
{
    int64_t shape[2] = {9, 10}, chunks[2] = {4, 3};
    zc_array *x = rnd(2, shape, chunks, ZC_FLOAT64, 5), *y = un("sqrt", x), *r = NULL;
    int ax = 1;
    CHECK_OK(zc_reduce("sum", y, &ax, 1, 0, 0, &r));
    zc_array *outs[2] = {y, r};
    for (int o = 0; o < 2; o++) {
        size_t n = nbytes_of(outs[o]);
        double *want = malloc(n), *got = malloc(n);
        reference(outs[o], want, n);
        int ok = 0, failed_task = 0;
        for (long k = 1; k < 400 && !ok; k++) {
            zc_spec s = spec_mem(64);
            s.nthreads = 1;
            memset(got, 0, n);
            zc_test_fail_alloc(k, 0);
            int rc = zc_compute_buffer(&s, outs[o], got, n, NULL);
            long hit = zc_test_fail_alloc(0, 0);
            if (rc == 0) {
                CHECK(hit == 0);
                CHECK(!memcmp(want, got, n));
                ok = 1;
            } else {
                CHECK(rc == ZC_ENOMEM);
                CHECK(zc_errmsg()[0] != 0);
                failed_task |= strstr(zc_errmsg(), ", task ") != NULL;
            }
        }
        CHECK(ok);
        CHECK(failed_task); /* some failure hit a task, and the message says which */
        free(want);
        free(got);
    }
    zc_array_release(r);
    zc_array_release(y);
    zc_array_release(x);
}
