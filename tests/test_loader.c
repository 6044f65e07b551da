/* tests/test_loader.c — the sampler through the public API (zcube.h §8):
 * windows equal the array at their origins (chunks and shards crossed),
 * zc_sampler_read and zc_sampler_next agree, seek/resume, determinism across
 * thread and prefetch settings, concurrent reads, coverage of an epoch
 * (random and grid), alignment with offsets/jitter/dimension names, NaN and
 * fill rejection, statistics, bad options and allocation failures.
 *
 * Arrays live in memory stores; element value = C-order linear index, so a
 * window's first value says where it was cut. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "harness.h"

typedef struct {
    zc_store *st;
    zc_zarr *arr;
    int ndim;
    int64_t shape[4];
} tarr;

/* An int32 array at memory://NAME, value = linear index (+ bias). */
static int make_array(tarr *t, const char *name, int fmt, int ndim, const int64_t *shape, const int64_t *chunks,
                      const int64_t *shards, const char *dimnames)
{
    char url[128];
    snprintf(url, sizeof url, "memory://%s", name);
    int rc = zc_store_open(url, 0, &t->st);
    if (rc < 0) return rc;
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.zarr_format = fmt;
    o.ndim = ndim;
    o.dtype = ZC_INT32;
    o.codec = fmt == 2 ? "blosc:lz4:5:shuffle" : "zstd:1";
    o.dimension_names = dimnames;
    size_t n = 1;
    for (int d = 0; d < ndim; d++) {
        o.shape[d] = t->shape[d] = shape[d];
        o.chunks[d] = chunks[d];
        o.shards[d] = shards ? shards[d] : 0;
        n *= (size_t)shape[d];
    }
    t->ndim = ndim;
    if ((rc = zc_zarr_create(t->st, "", &o, &t->arr)) < 0) return rc;
    int32_t *v = malloc(n * sizeof *v);
    if (!v) return ZC_ENOMEM;
    for (size_t i = 0; i < n; i++) v[i] = (int32_t)i;
    rc = zc_zarr_write(t->arr, NULL, v, n * sizeof *v);
    free(v);
    return rc;
}

static void close_array(tarr *t)
{
    zc_zarr_close(t->arr);
    zc_store_close(t->st);
}

/* Does window `w` (C order, shape win) equal the array at origin `o`? */
static int window_ok(const tarr *t, const int64_t *win, const int64_t *o, const int32_t *w)
{
    int64_t k[4] = {0};
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (o[d] < 0 || o[d] + win[d] > t->shape[d]) return 0;
        n *= (size_t)win[d];
    }
    for (size_t i = 0; i < n; i++) {
        int64_t lin = 0;
        for (int d = 0; d < t->ndim; d++) lin = lin * t->shape[d] + o[d] + k[d];
        if (w[i] != (int32_t)lin) return 0;
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++k[d] < win[d]) break;
            k[d] = 0;
        }
    }
    return 1;
}

static size_t win_elems(int ndim, const int64_t *win)
{
    size_t n = 1;
    for (int d = 0; d < ndim; d++) n *= (size_t)win[d];
    return n;
}

static zc_sampler *make_sampler(uint64_t seed, int batch, zc_sample_mode mode, int threads, int prefetch)
{
    zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;
    o.seed = seed;
    o.batch_size = batch;
    o.mode = mode;
    o.nthreads = threads;
    o.prefetch = prefetch;
    zc_sampler *s = NULL;
    CHECK_OK(zc_sampler_create(&o, &s));
    return s;
}

static int add(zc_sampler *s, zc_zarr *arr, int ndim, const int64_t *win)
{
    zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
    src.array = arr;
    for (int d = 0; d < ndim; d++) src.window[d] = win[d];
    return zc_sampler_add_source(s, &src);
}

/* ------------------------------------------------------------ windows */

static void check_windows(int fmt, const int64_t *shards, const char *name)
{
    tarr t;
    const int64_t shape[3] = {13, 11, 9}, chunks[3] = {4, 3, 5}, win[3] = {5, 4, 3};
    CHECK_OK(make_array(&t, name, fmt, 3, shape, chunks, shards, NULL));
    zc_sampler *s = make_sampler(5, 7, ZC_SAMPLE_RANDOM, 2, 0);
    CHECK_OK(add(s, t.arr, 3, win));
    size_t nbytes = 0;
    CHECK_OK(zc_sampler_batch_bytes(s, 0, &nbytes));
    CHECK(nbytes == 7 * win_elems(3, win) * 4);
    int32_t *buf = malloc(nbytes);
    int64_t org[7 * 3];
    int bad = 0;
    for (int64_t step = 0; step < 12; step++) {
        void *data[1] = {buf};
        int64_t *origins[1] = {org};
        CHECK_OK(zc_sampler_read(s, step, data, origins));
        for (int i = 0; i < 7; i++) bad += !window_ok(&t, win, org + 3 * i, buf + (size_t)i * win_elems(3, win));
    }
    CHECK(bad == 0);
    free(buf);
    zc_sampler_free(s);
    close_array(&t);
}

TEST(windows_v2_chunks_crossed) { check_windows(2, NULL, "w_v2"); }

TEST(windows_v3_sharded_partial_edges)
{
    const int64_t shards[3] = {8, 6, 5};
    check_windows(3, shards, "w_v3s");
}

/* ------------------------------------------------------------ next, read, seek */

TEST(next_equals_read_and_seek)
{
    tarr t;
    const int64_t shape[2] = {40, 30}, chunks[2] = {7, 6}, win[2] = {6, 5};
    CHECK_OK(make_array(&t, "ner", 3, 2, shape, chunks, NULL, NULL));
    zc_sampler *a = make_sampler(99, 8, ZC_SAMPLE_RANDOM, 2, 3);
    zc_sampler *b = make_sampler(99, 8, ZC_SAMPLE_RANDOM, 1, 0);
    CHECK_OK(add(a, t.arr, 2, win));
    CHECK_OK(add(b, t.arr, 2, win));
    int64_t nwin = 0, nbat = 0;
    CHECK_OK(zc_sampler_epoch_size(a, &nwin, &nbat));
    CHECK(nwin == 35 * 26 && nbat == 35 * 26 / 8);
    size_t nbytes = 8 * 30 * 4;
    int32_t *buf = malloc(nbytes);
    int64_t org[16];
    int32_t *saved3 = malloc(nbytes);
    for (int64_t step = 0; step < 6; step++) {
        const zc_batch *bt = NULL;
        CHECK_OK(zc_sampler_next(a, &bt));
        if (!bt) break;
        CHECK(bt->step == step && bt->epoch == step / nbat && bt->nsources == 1 && bt->nbytes[0] == nbytes);
        void *data[1] = {buf};
        int64_t *origins[1] = {org};
        CHECK_OK(zc_sampler_read(b, step, data, origins));
        CHECK(!memcmp(bt->data[0], buf, nbytes));
        CHECK(!memcmp(bt->origins[0], org, sizeof org));
        if (step == 3) memcpy(saved3, buf, nbytes);
    }
    /* jump ahead, then back */
    const zc_batch *bt = NULL;
    CHECK_OK(zc_sampler_seek(a, 500));
    CHECK_OK(zc_sampler_next(a, &bt));
    CHECK(bt && bt->step == 500 && bt->epoch == 500 / nbat);
    CHECK_OK(zc_sampler_next(a, &bt));
    CHECK(bt && bt->step == 501);
    CHECK_OK(zc_sampler_seek(a, 3));
    CHECK_OK(zc_sampler_next(a, &bt));
    CHECK(bt && bt->step == 3 && !memcmp(bt->data[0], saved3, nbytes));
    CHECK_ERR(zc_sampler_seek(a, -1), ZC_EINVAL, NULL);
    free(buf);
    free(saved3);
    zc_sampler_free(a);
    zc_sampler_free(b);
    close_array(&t);
}

/* Same seed, any threads/prefetch → same bytes; another seed → other windows. */
TEST(deterministic_across_settings)
{
    tarr t;
    const int64_t shape[3] = {20, 25, 6}, chunks[3] = {3, 4, 6}, win[3] = {4, 7, 6};
    CHECK_OK(make_array(&t, "det", 2, 3, shape, chunks, NULL, NULL));
    const int settings[4][2] = {{1, 0}, {2, 1}, {4, 5}, {0, 2}};
    size_t nbytes = 10 * win_elems(3, win) * 4;
    unsigned char *first = malloc(nbytes * 5);
    for (int k = 0; k < 4; k++) {
        zc_sampler *s = make_sampler(7, 10, ZC_SAMPLE_RANDOM, settings[k][0], settings[k][1]);
        CHECK_OK(add(s, t.arr, 3, win));
        for (int step = 0; step < 5; step++) {
            const zc_batch *b = NULL;
            CHECK_OK(zc_sampler_next(s, &b));
            if (!b) break;
            if (k == 0)
                memcpy(first + (size_t)step * nbytes, b->data[0], nbytes);
            else
                CHECK(!memcmp(first + (size_t)step * nbytes, b->data[0], nbytes));
        }
        zc_sampler_free(s);
    }
    zc_sampler *s = make_sampler(8, 10, ZC_SAMPLE_RANDOM, 1, 0);
    CHECK_OK(add(s, t.arr, 3, win));
    const zc_batch *b = NULL;
    CHECK_OK(zc_sampler_next(s, &b));
    CHECK(b && memcmp(first, b->data[0], nbytes) != 0);
    zc_sampler_free(s);
    free(first);
    close_array(&t);
}

typedef struct {
    zc_sampler *s;
    int64_t first, count;
    unsigned char *out; /* count × nbytes */
    size_t nbytes;
    int rc;
} reader_job;

static void *reader(void *arg)
{
    reader_job *j = arg;
    for (int64_t k = 0; k < j->count && j->rc == 0; k++) {
        void *data[1] = {j->out + (size_t)k * j->nbytes};
        j->rc = zc_sampler_read(j->s, j->first + 2 * k, data, NULL);
    }
    return NULL;
}

/* zc_sampler_read from two threads at once (even and odd steps). */
TEST(read_concurrent_threads)
{
    tarr t;
    const int64_t shape[2] = {64, 48}, chunks[2] = {8, 8}, shards[2] = {16, 24}, win[2] = {9, 10};
    CHECK_OK(make_array(&t, "conc", 3, 2, shape, chunks, shards, NULL));
    zc_sampler *s = make_sampler(3, 6, ZC_SAMPLE_RANDOM, 2, 0);
    CHECK_OK(add(s, t.arr, 2, win));
    size_t nbytes = 6 * 90 * 4;
    reader_job j[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        j[i] = (reader_job){s, i, 20, malloc(20 * nbytes), nbytes, 0};
        pthread_create(&th[i], NULL, reader, &j[i]);
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(j[0].rc == 0 && j[1].rc == 0);
    unsigned char *one = malloc(nbytes);
    for (int64_t step = 0; step < 40; step++) {
        void *data[1] = {one};
        CHECK_OK(zc_sampler_read(s, step, data, NULL));
        CHECK(!memcmp(one, j[step % 2].out + (size_t)(step / 2) * nbytes, nbytes));
    }
    free(one);
    free(j[0].out);
    free(j[1].out);
    zc_sampler_free(s);
    close_array(&t);
}

/* ------------------------------------------------------------ coverage */

/* Steps [first, first + nbat) deliver each of the `want` origins once. */
static void check_epoch(zc_sampler *s, int batch, int64_t first, int64_t nbat, int ndim, const int64_t *stride,
                        const int64_t *count, int64_t *order)
{
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= count[d];
    CHECK(total == nbat * batch);
    unsigned char *seen = calloc((size_t)total, 1);
    int64_t *org = malloc((size_t)batch * (size_t)ndim * sizeof *org);
    int32_t *buf = malloc((size_t)batch * 64 * 4);
    int bad = 0;
    for (int64_t step = first; step < first + nbat; step++) {
        void *data[1] = {buf};
        int64_t *origins[1] = {org};
        CHECK_OK(zc_sampler_read(s, step, data, origins));
        for (int i = 0; i < batch; i++) {
            int64_t idx = 0;
            for (int d = 0; d < ndim; d++) {
                int64_t o = org[i * ndim + d];
                if (o % stride[d] || o / stride[d] >= count[d] || o < 0) bad++;
                idx = idx * count[d] + o / stride[d];
            }
            if (idx >= 0 && idx < total) {
                seen[idx]++;
                order[(step - first) * batch + i] = idx;
            }
        }
    }
    CHECK(bad == 0);
    for (int64_t i = 0; i < total; i++) bad += seen[i] != 1;
    CHECK(bad == 0);
    free(seen);
    free(org);
    free(buf);
}

TEST(epoch_coverage_random)
{
    tarr t;
    const int64_t shape[2] = {6, 5}, chunks[2] = {4, 2}, win[2] = {2, 2};
    CHECK_OK(make_array(&t, "covr", 2, 2, shape, chunks, NULL, NULL));
    zc_sampler *s = make_sampler(11, 4, ZC_SAMPLE_RANDOM, 2, 0);
    CHECK_OK(add(s, t.arr, 2, win));
    int64_t nwin = 0, nbat = 0;
    CHECK_OK(zc_sampler_epoch_size(s, &nwin, &nbat));
    CHECK(nwin == 20 && nbat == 5);
    const int64_t stride[2] = {1, 1}, count[2] = {5, 4};
    int64_t o0[20], o1[20], o2[20];
    check_epoch(s, 4, 0, 5, 2, stride, count, o0);
    check_epoch(s, 4, 5, 5, 2, stride, count, o1);
    check_epoch(s, 4, 1000 * 5, 5, 2, stride, count, o2);
    CHECK(memcmp(o0, o1, sizeof o0) || memcmp(o0, o2, sizeof o0)); /* epochs reshuffle */
    zc_sampler_free(s);
    close_array(&t);
}

TEST(epoch_coverage_grid_with_overlap)
{
    tarr t;
    const int64_t shape[2] = {11, 9}, chunks[2] = {4, 4}, win[2] = {3, 3};
    CHECK_OK(make_array(&t, "covg", 3, 2, shape, chunks, NULL, NULL));
    zc_sampler *s = make_sampler(4, 5, ZC_SAMPLE_GRID, 1, 0);
    zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
    src.array = t.arr;
    src.window[0] = src.window[1] = 3;
    src.overlap[0] = 1; /* stride 2 along dim 0, 3 along dim 1 */
    CHECK_OK(zc_sampler_add_source(s, &src));
    int64_t nwin = 0, nbat = 0;
    CHECK_OK(zc_sampler_epoch_size(s, &nwin, &nbat));
    CHECK(nwin == 15 && nbat == 3);
    const int64_t stride[2] = {2, 3}, count[2] = {5, 3};
    int64_t o0[15], o1[15];
    check_epoch(s, 5, 0, 3, 2, stride, count, o0);
    check_epoch(s, 5, 3, 3, 2, stride, count, o1);
    (void)win;
    zc_sampler_free(s);
    close_array(&t);
}

/* ------------------------------------------------------------ several sources */

TEST(sources_aligned_by_name_offset_jitter)
{
    tarr a, b, c;
    const int64_t sa[3] = {12, 20, 16}, ca[3] = {5, 6, 7};
    const int64_t sb[2] = {30, 18}, cb[2] = {8, 8}; /* dims (y, t) — another order */
    const int64_t sc[1] = {14}, cc[1] = {4};
    CHECK_OK(make_array(&a, "al_a", 3, 3, sa, ca, NULL, "[\"t\", \"y\", \"x\"]"));
    CHECK_OK(make_array(&b, "al_b", 2, 2, sb, cb, NULL, NULL));
    CHECK_OK(make_array(&c, "al_c", 3, 1, sc, cc, NULL, "[\"t\"]"));
    zc_sampler *s = make_sampler(21, 9, ZC_SAMPLE_RANDOM, 2, 2);
    const int64_t wa[3] = {3, 5, 4}, wb[2] = {7, 2}, wc[1] = {3};
    CHECK_OK(add(s, a.arr, 3, wa));
    zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
    src.name = "b";
    src.array = b.arr;
    src.window[0] = 7;
    src.window[1] = 2;
    src.dims[0] = "y";
    src.dims[1] = "t";
    src.offset[0] = 4;
    src.offset[1] = 1;
    src.jitter[0] = 2;
    CHECK_OK(zc_sampler_add_source(s, &src));
    zc_sampler_source sc_src = ZC_SAMPLER_SOURCE_INIT;
    sc_src.array = c.arr;
    sc_src.window[0] = 3;
    sc_src.offset[0] = 1; /* C index = t + 1 */
    CHECK_OK(zc_sampler_add_source(s, &sc_src));
    int bad = 0, jit_seen[5] = {0};
    for (int step = 0; step < 8; step++) {
        const zc_batch *bt = NULL;
        CHECK_OK(zc_sampler_next(s, &bt));
        if (!bt) break;
        CHECK(bt->nsources == 3);
        for (int i = 0; i < 9; i++) {
            const int64_t *oa = bt->origins[0] + 3 * i, *ob = bt->origins[1] + 2 * i, *oc = bt->origins[2] + i;
            bad += !window_ok(&a, wa, oa, (const int32_t *)bt->data[0] + (size_t)i * 60);
            bad += !window_ok(&b, wb, ob, (const int32_t *)bt->data[1] + (size_t)i * 14);
            bad += !window_ok(&c, wc, oc, (const int32_t *)bt->data[2] + (size_t)i * 3);
            bad += ob[1] != oa[0] + 1;             /* t, no jitter */
            int64_t j = ob[0] - oa[1] - 4;         /* y, jitter 2 */
            if (j < -2 || j > 2) bad++;
            else jit_seen[j + 2]++;
            bad += oc[0] != oa[0] + 1;
        }
    }
    CHECK(bad == 0);
    int distinct = 0;
    for (int k = 0; k < 5; k++) distinct += jit_seen[k] > 0;
    CHECK(distinct >= 3);
    zc_sampler_free(s);
    close_array(&a);
    close_array(&b);
    close_array(&c);
}

/* ------------------------------------------------------------ rejection */

static int make_float(tarr *t, const char *name, int64_t n0, int64_t n1, float fill_all_nan, int nan_at)
{
    char url[64];
    snprintf(url, sizeof url, "memory://%s", name);
    int rc = zc_store_open(url, 0, &t->st);
    if (rc < 0) return rc;
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = t->shape[0] = n0;
    o.shape[1] = t->shape[1] = n1;
    o.chunks[0] = o.chunks[1] = 4;
    o.dtype = ZC_FLOAT32;
    o.fill_value = "-1";
    t->ndim = 2;
    if ((rc = zc_zarr_create(t->st, "", &o, &t->arr)) < 0) return rc;
    size_t n = (size_t)(n0 * n1);
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = fill_all_nan ? NAN : (float)i;
    if (nan_at >= 0) v[nan_at] = NAN;
    rc = zc_zarr_write(t->arr, NULL, v, n * sizeof *v);
    free(v);
    return rc;
}

TEST(reject_nan_counts_and_never_delivers)
{
    tarr t;
    CHECK_OK(make_float(&t, "rn", 10, 10, 0, 4 * 10 + 5)); /* NaN at (4, 5) */
    zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;
    o.seed = 1;
    o.batch_size = 7;
    o.reject_nan = 1;
    zc_sampler *s = NULL;
    CHECK_OK(zc_sampler_create(&o, &s));
    const int64_t win[2] = {3, 3};
    CHECK_OK(add(s, t.arr, 2, win));
    int64_t rejected = 0;
    int nan_windows = 0;
    for (int step = 0; step < 10; step++) { /* 64 windows per epoch, 9 batches: > 1 epoch */
        const zc_batch *b = NULL;
        CHECK_OK(zc_sampler_next(s, &b));
        if (!b) break;
        rejected += b->rejected;
        const float *f = b->data[0];
        for (int i = 0; i < 7 * 9; i++) nan_windows += isnan(f[i]);
    }
    CHECK(nan_windows == 0);
    CHECK(rejected > 0);
    zc_sampler_stats_t st;
    CHECK_OK(zc_sampler_stats(s, &st));
    CHECK(st.rejected >= rejected);
    zc_sampler_free(s);
    close_array(&t);
}

TEST(reject_fill_and_all_rejected)
{
    tarr t;
    CHECK_OK(make_float(&t, "rf", 8, 8, 0, -1));
    float m1 = -1.0f; /* the fill value, written at (2, 2) */
    zc_range one[2] = {{2, 3, 1}, {2, 3, 1}};
    CHECK_OK(zc_zarr_write(t.arr, one, &m1, sizeof m1));
    zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;
    o.seed = 2;
    o.batch_size = 6;
    o.reject_fill = 1;
    o.prefetch = 0;
    zc_sampler *s = NULL;
    CHECK_OK(zc_sampler_create(&o, &s));
    const int64_t win[2] = {2, 2};
    CHECK_OK(add(s, t.arr, 2, win));
    int fills = 0;
    int64_t rejected = 0;
    for (int step = 0; step < 16; step++) {
        const zc_batch *b = NULL;
        CHECK_OK(zc_sampler_next(s, &b));
        if (!b) break;
        rejected += b->rejected;
        const float *f = b->data[0];
        for (int i = 0; i < 6 * 4; i++) fills += f[i] == -1.0f;
    }
    CHECK(fills == 0 && rejected > 0);
    zc_sampler_free(s);
    close_array(&t);

    /* nothing acceptable: an error after max_redraws, not a hang */
    CHECK_OK(make_float(&t, "rall", 6, 6, 1, -1));
    o.reject_fill = 0;
    o.reject_nan = 1;
    o.max_redraws = 20;
    CHECK_OK(zc_sampler_create(&o, &s));
    CHECK_OK(add(s, t.arr, 2, win));
    const zc_batch *b = NULL;
    CHECK_ERR(zc_sampler_next(s, &b), ZC_ERANGE, NULL);
    void *data[1] = {malloc(6 * 16)};
    CHECK_ERR(zc_sampler_read(s, 0, data, NULL), ZC_ERANGE, NULL);
    free(data[0]);
    zc_sampler_free(s);
    close_array(&t);
}

/* ------------------------------------------------------------ statistics */

TEST(stats_and_io_counters)
{
    tarr t;
    const int64_t shape[2] = {50, 40}, chunks[2] = {10, 10}, win[2] = {10, 10};
    CHECK_OK(make_array(&t, "stats", 3, 2, shape, chunks, NULL, NULL));
    zc_zarr_io_stats_t io0, io1;
    CHECK_OK(zc_zarr_io_stats(t.arr, &io0));
    zc_sampler *s = make_sampler(5, 4, ZC_SAMPLE_RANDOM, 1, 0);
    CHECK_OK(add(s, t.arr, 2, win));
    int32_t buf[4 * 100];
    for (int step = 0; step < 5; step++) {
        void *data[1] = {buf};
        CHECK_OK(zc_sampler_read(s, step, data, NULL));
    }
    zc_sampler_stats_t st;
    CHECK_OK(zc_sampler_stats(s, &st));
    CHECK(st.windows == 20 && st.rejected == 0);
    CHECK(st.bytes_used == 20 * 100 * 4);
    /* a 10x10 window touches 1, 2 or 4 chunks of 10x10 */
    CHECK(st.chunks_read >= 20 && st.chunks_read <= 80);
    CHECK(st.bytes_read > 0);
    CHECK_OK(zc_zarr_io_stats(t.arr, &io1));
    CHECK(io1.chunks_read - io0.chunks_read == st.chunks_read);
    CHECK(io1.bytes_read - io0.bytes_read == st.bytes_read);
    zc_sampler_free(s);
    close_array(&t);
}

/* ------------------------------------------------------------ bad input */

TEST(bad_options)
{
    zc_sampler *s = NULL;
    zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;
    CHECK_ERR(zc_sampler_create(NULL, &s), ZC_EINVAL, NULL);
    CHECK_ERR(zc_sampler_create(&o, NULL), ZC_EINVAL, NULL);
    o.batch_size = 0;
    CHECK_ERR(zc_sampler_create(&o, &s), ZC_EINVAL, "batch");
    o.batch_size = 4;
    o.mode = (zc_sample_mode)9;
    CHECK_ERR(zc_sampler_create(&o, &s), ZC_EINVAL, NULL);
    o.mode = ZC_SAMPLE_RANDOM;
    o.nthreads = -1;
    CHECK_ERR(zc_sampler_create(&o, &s), ZC_EINVAL, NULL);
    o.nthreads = 0;
    o.prefetch = -1;
    CHECK_ERR(zc_sampler_create(&o, &s), ZC_EINVAL, NULL);
    o.prefetch = 2;
    o.struct_size = 3;
    CHECK_ERR(zc_sampler_create(&o, &s), ZC_EINVAL, "struct_size");
    zc_sampler_free(NULL);

    tarr t;
    const int64_t shape[2] = {10, 8}, chunks[2] = {4, 4};
    CHECK_OK(make_array(&t, "bad", 3, 2, shape, chunks, NULL, NULL));
    s = make_sampler(1, 4, ZC_SAMPLE_RANDOM, 1, 0);
    /* no source yet */
    int64_t w = 0, nb = 0;
    CHECK_ERR(zc_sampler_epoch_size(s, &w, &nb), ZC_EINVAL, "source");
    zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
    src.name = "era5";
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, NULL); /* no array */
    src.array = t.arr;
    src.window[0] = 11;
    src.window[1] = 2;
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, "era5");
    src.window[0] = 0;
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, "era5");
    src.window[0] = 3;
    src.jitter[1] = -1;
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, "era5");
    src.jitter[1] = 0;
    src.overlap[0] = 3;
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, "era5");
    src.overlap[0] = 0;
    src.dims[0] = src.dims[1] = "y";
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, "y");
    src.dims[0] = src.dims[1] = NULL;
    src.struct_size = 1;
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, NULL);
    src.struct_size = sizeof src;
    /* jitter so wide no origin fits */
    src.jitter[0] = 4;
    CHECK_OK(zc_sampler_add_source(s, &src));
    CHECK_ERR(zc_sampler_epoch_size(s, &w, &nb), ZC_EINVAL, "era5");
    zc_sampler_free(s);

    /* a good sampler: batch larger than the epoch; sources after the first batch */
    s = make_sampler(1, 500, ZC_SAMPLE_RANDOM, 1, 0);
    src.jitter[0] = 0;
    CHECK_OK(zc_sampler_add_source(s, &src));
    CHECK_ERR(zc_sampler_epoch_size(s, &w, &nb), ZC_EINVAL, "fewer than one batch");
    zc_sampler_free(s);
    s = make_sampler(1, 4, ZC_SAMPLE_RANDOM, 1, 1);
    CHECK_OK(zc_sampler_add_source(s, &src));
    const zc_batch *b = NULL;
    CHECK_OK(zc_sampler_next(s, &b));
    CHECK_ERR(zc_sampler_add_source(s, &src), ZC_EINVAL, NULL);
    size_t nbytes = 0;
    CHECK_ERR(zc_sampler_batch_bytes(s, 1, &nbytes), ZC_EINVAL, NULL);
    CHECK_ERR(zc_sampler_read(s, 0, NULL, NULL), ZC_EINVAL, NULL);
    zc_sampler_free(s);
    close_array(&t);
}

/* Every allocation failing in turn: ZC_ENOMEM or success, never a crash or
 * leak (run under ASan), and the sampler works once allocations succeed. */
TEST(alloc_failures)
{
    tarr t;
    const int64_t shape[2] = {20, 16}, chunks[2] = {6, 5}, win[2] = {4, 6};
    CHECK_OK(make_array(&t, "oom", 2, 2, shape, chunks, NULL, NULL));
    int ok = 0, other = 0, enomem = 0;
    for (long n = 1; n < 400 && !ok; n++) {
        zc_test_fail_alloc(n, 0);
        zc_sampler *s = NULL;
        zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;
        o.batch_size = 3;
        o.prefetch = 1;
        int rc = zc_sampler_create(&o, &s);
        if (rc == 0) rc = add(s, t.arr, 2, win);
        const zc_batch *b = NULL;
        if (rc == 0) rc = zc_sampler_next(s, &b);
        enomem += rc == ZC_ENOMEM;
        if (rc != ZC_ENOMEM && rc != 0) {
            other++;
            fprintf(stderr, "allocation %ld failing: %s %s\n", n, zc_errname(rc), zc_errmsg());
        }
        zc_sampler_free(s); /* stops the prefetch thread before injection is changed */
        int failed = zc_test_fail_alloc(0, 0);
        if (rc == 0 && failed == 0) ok = 1;
    }
    CHECK(ok);
    CHECK(enomem > 5);
    CHECK(other == 0);
    close_array(&t);
}
