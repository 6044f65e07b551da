/* tests/test_compute_unique.c — zc_unique (ops/unique.c): values, first
 * indices, inverse and counts against a reference made here by a stable sort
 * (NaNs last, each NaN distinct, -0 equal to +0), over awkward data and
 * chunkings: one element per chunk, ragged edges, ties, all NaN, empty arrays,
 * a 0-d array, bool and integer dtypes, 2-D inputs (inverse in x's shape), an
 * external sort forced by a small bound; measured <= projected memory for every
 * computation; unique_counts of an array 16x the bound within 2 x bound + 64 MiB
 * of peak RSS; argument errors. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>

#include "core/rss.h"
#include "harness.h"

static const double *g_v;

/* NaNs last; ties by index (stable). */
static int ref_cmp(const void *pa, const void *pb)
{
    int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
    double a = g_v[i], b = g_v[j];
    bool na = a != a, nb = b != b;
    int c = na || nb ? (na && nb ? 0 : na ? 1 : -1) : (a < b ? -1 : a > b ? 1 : 0);
    return c ? c : (i > j) - (i < j);
}

typedef struct {
    int64_t k;                        /* distinct values */
    double *values;                   /* k */
    int64_t *indices, *counts, *inv;  /* k, k, n */
} uref;

static uref reference(const double *v, int64_t n)
{
    uref r = {0};
    int64_t *p = malloc(sizeof *p * (size_t)(n + 1));
    r.values = malloc(sizeof(double) * (size_t)(n + 1));
    r.indices = malloc(8 * (size_t)(n + 1));
    r.counts = malloc(8 * (size_t)(n + 1));
    r.inv = malloc(8 * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) p[i] = i;
    g_v = v;
    qsort(p, (size_t)n, sizeof *p, ref_cmp);
    for (int64_t i = 0; i < n; i++) {
        double x = v[p[i]];
        if (i == 0 || x != v[p[i - 1]]) { /* NaN != NaN: each its own */
            r.values[r.k] = x;
            r.indices[r.k] = p[i];
            r.counts[r.k++] = 0;
        }
        r.counts[r.k - 1]++;
        r.inv[p[i]] = r.k - 1;
    }
    free(p);
    return r;
}

static void ref_free(uref *r)
{
    free(r->values);
    free(r->indices);
    free(r->counts);
    free(r->inv);
}

/* a (1-D of k, or of shape nd/shape for the inverse) computed under spec, its
 * contract checked, into a malloc'd buffer of elements of esz bytes. */
static void *computed(const zc_spec *s, zc_array *a, int64_t count, size_t esz, const char *what)
{
    void *buf = malloc(esz * (size_t)(count ? count : 1));
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(s, a, buf, esz * (size_t)count, &rep));
    if (rep) json_decref(report_checked(rep));
    (void)what;
    return buf;
}

static int64_t length_of(zc_array *a)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS], n = 1;
    CHECK_OK(zc_array_info(a, &nd, shape, NULL, NULL));
    for (int d = 0; d < nd; d++) n *= shape[d];
    return n;
}

/* Every result of zc_unique of x (values v as doubles, n of them) against the
 * reference; values compared through float64 (the inputs here are exact). */
static void check_unique(const zc_spec *s, zc_array *x, const double *v, int64_t n, const char *what)
{
    uref r = reference(v, n);
    zc_array *val = NULL, *idx = NULL, *inv = NULL, *cnt = NULL, *vd = NULL;
    CHECK_OK(zc_unique(s, x, &val, &idx, &inv, &cnt));
    if (!val || !idx || !inv || !cnt) {
        fprintf(stderr, "%s: zc_unique gave no arrays\n", what);
        harness_failures++;
        ref_free(&r);
        return;
    }
    int nd, xnd;
    int64_t shape[ZC_MAX_DIMS], xshape[ZC_MAX_DIMS];
    zc_dtype dt, xdt;
    CHECK_OK(zc_array_info(x, &xnd, xshape, NULL, &xdt));
    CHECK_OK(zc_array_info(val, &nd, shape, NULL, &dt));
    CHECK(nd == 1 && dt == xdt);
    int64_t k = length_of(val);
    if (k != r.k) {
        fprintf(stderr, "%s: %lld distinct values, expected %lld\n", what, (long long)k, (long long)r.k);
        harness_failures++;
    } else {
        CHECK_OK(zc_astype(val, ZC_FLOAT64, &vd));
        double *gv = computed(s, vd, k, 8, what);
        int64_t *gi = computed(s, idx, k, 8, what), *gc = computed(s, cnt, k, 8, what);
        int64_t bad = 0;
        for (int64_t i = 0; i < k; i++)
            bad += !(gv[i] == r.values[i] || (gv[i] != gv[i] && r.values[i] != r.values[i])) ||
                   gi[i] != r.indices[i] || gc[i] != r.counts[i];
        if (bad) {
            fprintf(stderr, "%s: %lld of %lld values/indices/counts differ\n", what, (long long)bad, (long long)k);
            harness_failures++;
        }
        free(gv);
        free(gi);
        free(gc);
    }
    CHECK_OK(zc_array_info(inv, &nd, shape, NULL, &dt));
    CHECK(nd == xnd && dt == ZC_INT64 && !memcmp(shape, xshape, sizeof(int64_t) * (size_t)nd));
    int64_t *gn = computed(s, inv, n, 8, what), bad = 0;
    for (int64_t i = 0; i < n; i++) bad += gn[i] != r.inv[i];
    if (bad) {
        fprintf(stderr, "%s: %lld of %lld inverse indices differ\n", what, (long long)bad, (long long)n);
        harness_failures++;
    }
    free(gn);
    zc_array *arrs[] = {val, idx, inv, cnt, vd};
    for (int i = 0; i < 5; i++) zc_array_release(arrs[i]);
    ref_free(&r);
}

/* Small integers with NaNs, and -0 beside +0: many ties. */
static double *tie_data(int64_t n, int mod, double nan_every)
{
    double *v = malloc(sizeof(double) * (size_t)(n + 1));
    uint64_t h = 88172645463325252ull;
    for (int64_t i = 0; i < n; i++) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        v[i] = (double)(int)(h % (uint64_t)mod) - mod / 2;
        if (v[i] == 0 && (h >> 20) % 2) v[i] = -0.0;
        if (nan_every > 0 && (double)((h >> 32) % 1000) < 1000 / nan_every) v[i] = NAN;
    }
    return v;
}

TEST(unique_float_chunkings)
{
    int64_t n = 1000, shape[] = {n};
    double *v = tie_data(n, 40, 10);
    zc_spec s = spec_mem(64);
    int64_t chunkings[] = {1, 7, 999, 1000};
    for (size_t c = 0; c < sizeof chunkings / sizeof *chunkings; c++) {
        zc_array *x;
        CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, shape, &chunkings[c], &x));
        char what[64];
        snprintf(what, sizeof what, "float64, chunks %lld", (long long)chunkings[c]);
        check_unique(&s, x, v, n, what);
        zc_array_release(x);
    }
    free(v);
}

TEST(unique_2d_int32_ragged)
{
    int64_t shape[] = {13, 17}, chunks[] = {4, 5}, n = 13 * 17;
    double *v = tie_data(n, 9, 0);
    int32_t *iv = malloc(4 * (size_t)n);
    for (int64_t i = 0; i < n; i++) iv[i] = (int32_t)v[i], v[i] = iv[i]; /* -0 is 0 in integers */
    zc_array *x;
    CHECK_OK(zc_asarray(iv, ZC_INT32, 2, shape, chunks, &x));
    zc_spec s = spec_mem(64);
    check_unique(&s, x, v, n, "int32 13x17, chunks 4x5");
    zc_array_release(x);
    free(iv);
    free(v);
}

TEST(unique_edge_cases)
{
    zc_spec s = spec_mem(64);
    zc_array *x;
    /* all NaN: every one distinct */
    int64_t n = 100, shape[] = {n}, c9 = 9;
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = NAN;
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, shape, &c9, &x));
    check_unique(&s, x, v, n, "all NaN");
    zc_array_release(x);
    /* one value everywhere */
    for (int64_t i = 0; i < n; i++) v[i] = 3;
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, shape, &c9, &x));
    check_unique(&s, x, v, n, "all equal");
    zc_array_release(x);
    /* empty, 1-D and 2-D */
    int64_t e1[] = {0}, e2[] = {3, 0}, ch2[] = {2, 1};
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, e1, NULL, &x));
    check_unique(&s, x, v, 0, "empty (0,)");
    zc_array_release(x);
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 2, e2, ch2, &x));
    check_unique(&s, x, v, 0, "empty (3, 0)");
    zc_array_release(x);
    /* 0-d */
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 0, NULL, NULL, &x));
    check_unique(&s, x, v, 1, "0-d");
    zc_array_release(x);
    /* bool, one element per chunk */
    bool b[11];
    double bv[11];
    for (int i = 0; i < 11; i++) b[i] = (i % 3) == 1, bv[i] = b[i];
    int64_t bs[] = {11}, one = 1;
    CHECK_OK(zc_asarray(b, ZC_BOOL, 1, bs, &one, &x));
    check_unique(&s, x, bv, 11, "bool");
    zc_array_release(x);
    free(v);
}

/* Sorts longer than a task's memory: the external sort (runs, merge) under
 * the selection. */
TEST(unique_external_sort)
{
    int64_t n = 300000, shape[] = {n}, chunk = 4999;
    double *v = tie_data(n, 20000, 50);
    zc_array *x, *val;
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, shape, &chunk, &x));
    zc_spec s = spec_mem(3);
    CHECK_OK(zc_unique(&s, x, &val, NULL, NULL, NULL));
    char *plan = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &val, NULL, &plan));
    CHECK(plan && strstr(plan, "sort (merge)") && strstr(plan, "mask_select"));
    zc_free(plan);
    zc_array_release(val);
    check_unique(&s, x, v, n, "external sort under 3 MiB");
    zc_array_release(x);
    free(v);
}

/* unique_counts of 256 MiB of float64 (32M elements, 1000 distinct values)
 * under allowed_mem 16 MiB (16x): the count pass and the computation, each an
 * external sort, stay within 2 x allowed_mem + 64 MiB of peak RSS (the
 * report's per-stage VmHWM); values and counts checked against a histogram. */
TEST(unique_counts_16x_allowed_mem)
{
#if defined(__SANITIZE_ADDRESS__) /* an eighth: two external sorts within the test's timeout (RSS is not checked) */
    int64_t n = (int64_t)4 << 20, shape[] = {n}, chunks[] = {(int64_t)1 << 15};
#else
    int64_t n = (int64_t)32 << 20, shape[] = {n}, chunks[] = {(int64_t)1 << 15};
#endif
    size_t allowed = (size_t)16 << 20;
    zc_array *u, *x, *val, *cnt;
    CHECK_OK(zc_random_uniform(18, 1, shape, chunks, ZC_FLOAT64, 0, 1000, &u));
    CHECK_OK(zc_elementwise("floor", 1, &u, &x));
    big_run b;
    big_run_init(&b, "unique", allowed);
    rss_now r;
    rss_reset_peak();
    CHECK_OK(zc_unique(&b.spec, x, &val, NULL, NULL, &cnt)); /* the count pass: a sort */
    CHECK(rss_read(&r));
    check_big_peak(r.hwm, allowed, "unique_counts 16x (count pass)");
    CHECK(length_of(val) == 1000 && length_of(cnt) == 1000);
    zc_array *outs[2] = {val, cnt};
    zc_target t[2] = {{b.st, "values", "none", 3}, {b.st, "counts", "none", 3}};
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(&b.spec, 2, outs, t, &rep));
    json_t *doc = report_json_doc(rep);
    check_contract(doc, "unique_counts 16x");
    check_big_peak((size_t)json_integer_value(json_object_get(json_object_get(doc, "memory"), "peak_rss")), allowed,
                   "unique_counts 16x");
    json_decref(doc);
    /* the histogram of x, computed by parts */
    int64_t hist[1000] = {0}, part = (int64_t)1 << 22; /* n is a multiple */
    double *v = malloc(sizeof(double) * (size_t)part);
    zc_spec big = ZC_SPEC_INIT;
    for (int64_t o = 0; o < n; o += part) {
        zc_array *sl;
        zc_index ix = {ZC_IDX_SLICE, o, o + part, 1, 1, 1, 0};
        CHECK_OK(zc_getitem(x, &ix, 1, &sl));
        CHECK_OK(zc_compute_buffer(&big, sl, v, sizeof(double) * (size_t)part, NULL));
        for (int64_t i = 0; i < part; i++) hist[(int)v[i]]++;
        zc_array_release(sl);
    }
    free(v);
    double gv[1000];
    int64_t gc[1000], bad = 0;
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(b.st, "values", &z));
    CHECK_OK(zc_zarr_read(z, NULL, gv, sizeof gv));
    zc_zarr_close(z);
    CHECK_OK(zc_zarr_open(b.st, "counts", &z));
    CHECK_OK(zc_zarr_read(z, NULL, gc, sizeof gc));
    zc_zarr_close(z);
    for (int i = 0; i < 1000; i++) bad += gv[i] != i || gc[i] != hist[i];
    CHECK(bad == 0);
    zc_array_release(val);
    zc_array_release(cnt);
    zc_array_release(x);
    zc_array_release(u);
    big_run_end(&b);
}

TEST(unique_errors)
{
    double re[4] = {1, 2, 3, 4};
    int64_t s2[] = {2};
    zc_array *c, *o;
    CHECK_OK(zc_asarray(re, ZC_COMPLEX128, 1, s2, NULL, &c));
    zc_spec s = spec_mem(64);
    CHECK_OK(zc_unique(&s, c, &o, NULL, NULL, NULL)); /* complex: sorted by parts */
    double got[4];
    CHECK_OK(zc_compute_buffer(&s, o, got, sizeof got, NULL));
    CHECK(got[0] == 1 && got[1] == 2 && got[2] == 3 && got[3] == 4);
    zc_array_release(o);
    zc_array *b;
    CHECK_OK(zc_asarray("ab", ZC_BYTES, 1, s2, NULL, &b));
    CHECK_ERR(zc_unique(&s, b, &o, NULL, NULL, NULL), ZC_EINVAL, "arrays are not supported");
    zc_array_release(b);
    CHECK_ERR(zc_unique(NULL, c, &o, NULL, NULL, NULL), ZC_EINVAL, "NULL");
    CHECK_ERR(zc_unique(&s, NULL, &o, NULL, NULL, NULL), ZC_EINVAL, "NULL");
    zc_array_release(c);
}

/* unique_all's arrays and a take_along_axis of x by its argsort, as one saved
 * plan (the selections' counts and the gather saved with it) run operation by
 * operation, in two parts each: the same values as computed directly. Under
 * 3 MiB x is read by two sorts, so it is materialized: the sorts' runs are
 * fitted to reading it stored (they were fitted to computing it, and the plan
 * was refused). */
TEST(unique_saved_plan_in_parts)
{
    int64_t n = 60000, shape[] = {n}, chunk = 3001;
    zc_array *u, *x, *as, *r[5];
    CHECK_OK(zc_random_uniform(7, 1, shape, &chunk, ZC_FLOAT64, 0, 3000, &u));
    CHECK_OK(zc_elementwise("floor", 1, &u, &x)); /* ties */
    big_run b;
    big_run_init(&b, "uniqueplan", (size_t)3 << 20);
    CHECK_OK(zc_unique(&b.spec, x, &r[0], &r[1], &r[2], &r[3]));
    CHECK_OK(zc_argsort(x, 0, 0, &as));
    CHECK_OK(zc_take_along_axis(x, as, 0, &r[4]));
    const char *names[5] = {"values", "indices", "inverse", "counts", "sorted"};
    zc_target t[5];
    for (int k = 0; k < 5; k++) t[k] = (zc_target){b.st, names[k], "none", 3};
    char path[96];
    snprintf(path, sizeof path, "%s/plan.json", b.dir);
    CHECK_OK(zc_plan_save(&b.spec, 5, r, t, path));
    zc_plan *p = NULL;
    CHECK_OK(zc_plan_load(path, &p));
    int nops = 0;
    if (p) CHECK_OK(zc_plan_ops(p, &nops));
    for (int op = 0; op < nops; op++) {
        int64_t tasks = 0;
        CHECK_OK(zc_plan_op_tasks(p, op, &tasks));
        CHECK_OK(zc_plan_run(path, op, 0, tasks / 2, 1));
        CHECK_OK(zc_plan_run(path, op, tasks / 2, -1, 2));
    }
    zc_plan_free(p);
    zc_spec mem = spec_mem(64);
    for (int k = 0; k < 5; k++) {
        int64_t len = length_of(r[k]);
        size_t bytes = 8 * (size_t)len; /* float64 or int64 */
        unsigned char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
        CHECK_OK(zc_compute_buffer(&mem, r[k], want, bytes, NULL));
        zc_zarr *z = NULL;
        CHECK_OK(zc_zarr_open(b.st, names[k], &z));
        if (z) CHECK_OK(zc_zarr_read(z, NULL, got, bytes));
        zc_zarr_close(z);
        if (memcmp(want, got, bytes)) {
            fprintf(stderr, "saved plan: %s differs from the direct computation\n", names[k]);
            harness_failures++;
        }
        free(want);
        free(got);
        zc_array_release(r[k]);
    }
    zc_array_release(as);
    zc_array_release(x);
    zc_array_release(u);
    big_run_end(&b);
}
