/* tests/test_compute_sort.c — sort and argsort (zcube.h; plan/sort.h),
 * checked against a direct stable sort in C over awkward data and chunkings:
 * ties, NaNs, -0, all NaN, empty axes, one element per chunk, ragged edges,
 * both orders, several dtypes and axes; whole lines and the external sort
 * (runs and merge, forced by a small bound), measured <= projected memory for
 * every operation, plans saved and run by parts, argument errors. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>

#include "exec/rmtree.h"
#include "harness.h"

static size_t isz_of(zc_dtype t)
{
    zc_dtype x;
    size_t n = 0;
    zc_dtype_parse(zc_dtype_name(t), &x, &n);
    return n;
}

/* Value i of a buffer of dtype t as a double (the reference compares these;
 * int64 values used here are exact in a double). */
static double val(zc_dtype t, const void *buf, int64_t i)
{
    const unsigned char *p = (const unsigned char *)buf + (size_t)i * isz_of(t);
    switch (t) {
    case ZC_BOOL: case ZC_UINT8: return *p;
    case ZC_INT8: return *(const int8_t *)p;
    case ZC_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ZC_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case ZC_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ZC_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
    case ZC_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
    default: return NAN;
    }
}

typedef struct {
    const double *v;
    int desc;
} ref_ctx;
static ref_ctx g_ref;

/* NaNs last in both orders; ties by index (stable). */
static int ref_cmp(const void *pa, const void *pb)
{
    int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
    double a = g_ref.v[i], b = g_ref.v[j];
    bool na = a != a, nb = b != b;
    int c = 0;
    if (na || nb) c = na && nb ? 0 : na ? 1 : -1;
    else if (a != b) c = (a < b) == !g_ref.desc ? -1 : 1;
    return c ? c : (i > j) - (i < j);
}

/* The reference argsort of x (shape nd/shape, values as doubles) along ax. */
static int64_t *ref_argsort(const double *v, int nd, const int64_t *shape, int ax, int desc)
{
    int64_t total = 1, O = 1, I = 1, n = shape[ax];
    for (int d = 0; d < nd; d++) {
        total *= shape[d];
        if (d < ax) O *= shape[d];
        if (d > ax) I *= shape[d];
    }
    int64_t *out = calloc((size_t)total + 1, 8), *line = calloc((size_t)n + 1, 8);
    double *lv = calloc((size_t)n + 1, sizeof(double));
    for (int64_t o = 0; o < O; o++)
        for (int64_t i = 0; i < I; i++) {
            for (int64_t k = 0; k < n; k++) {
                line[k] = k;
                lv[k] = v[(o * n + k) * I + i];
            }
            g_ref = (ref_ctx){lv, desc};
            qsort(line, (size_t)n, 8, ref_cmp);
            for (int64_t k = 0; k < n; k++) out[(o * n + k) * I + i] = line[k];
        }
    free(line);
    free(lv);
    return out;
}

/* Compute a into a new buffer under allowed_mem (reserved 1/4 of it); checks the
 * memory contract; *plan gets the plan's JSON when asked. */
static void *calc(zc_array *a, size_t allowed, char **plan)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS], n = 1;
    zc_dtype dt;
    CHECK_OK(zc_array_info(a, &nd, shape, NULL, &dt));
    for (int d = 0; d < nd; d++) n *= shape[d];
    size_t bytes = (size_t)n * isz_of(dt);
    void *buf = calloc(1, bytes + 16);
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = allowed;
    s.reserved_mem = allowed / 4;
    if (plan) {
        *plan = NULL;
        CHECK_OK(zc_plan_json(&s, 1, &a, NULL, plan));
    }
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&s, a, buf, bytes, &rep));
    if (rep) json_decref(report_checked(rep));
    return buf;
}

/* sort and argsort of the buffer x (dtype t) along axis, both orders, under
 * `allowed`, against the reference; `external`: the plan must be runs + merge. */
static void check_sort(const void *x, zc_dtype t, int nd, const int64_t *shape, const int64_t *chunks, int axis,
                       size_t allowed, bool external)
{
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= shape[d];
    double *v = calloc((size_t)total + 1, sizeof(double));
    for (int64_t i = 0; i < total; i++) v[i] = val(t, x, i);
    zc_array *xa;
    CHECK_OK(zc_asarray(x, t, nd, shape, chunks, &xa));
    int ax = axis < 0 ? axis + nd : axis;
    for (int desc = 0; desc <= 1; desc++) {
        int64_t *ref = ref_argsort(v, nd, shape, ax, desc);
        zc_array *s = NULL, *as = NULL;
        CHECK_OK(zc_sort(xa, axis, desc, &s));
        CHECK_OK(zc_argsort(xa, axis, desc, &as));
        char *plan;
        void *sv = calc(s, allowed, &plan);
        if (plan) {
            CHECK((strstr(plan, "sort (merge)") != NULL) == external);
            if ((strstr(plan, "sort (merge)") != NULL) != external || getenv("ZC_SHOW")) fprintf(stderr, "%s\n", plan);
            zc_free(plan);
        }
        int64_t *ai = calc(as, allowed, NULL);
        int64_t I = 1, n = shape[ax], bad = 0;
        for (int d = ax + 1; d < nd; d++) I *= shape[d];
        for (int64_t e = 0; e < total; e++) {
            int64_t o = e / (n * I), i = e % I;
            int64_t src = (o * n + ref[e]) * I + i;
            double want = v[src], got = val(t, sv, e);
            bool same = (want != want && got != got) || (want == got && signbit(want) == signbit(got));
            if (ai[e] != ref[e] || !same) {
                if (bad++ < 5)
                    fprintf(stderr, "desc %d element %lld: argsort %lld (want %lld), sort %g (want %g)\n", desc,
                            (long long)e, (long long)ai[e], (long long)ref[e], got, want);
            }
        }
        CHECK(bad == 0);
        free(sv);
        free(ai);
        free(ref);
        zc_array_release(s);
        zc_array_release(as);
    }
    zc_array_release(xa);
    free(v);
}

/* Doubles with ties (k distinct values), NaNs every `nan_every` (0: none) and -0 / +0. */
static double *awkward(int64_t n, int k, int nan_every, uint64_t seed)
{
    double *x = malloc((size_t)n * sizeof(double) + 8);
    uint64_t h = seed;
    for (int64_t i = 0; i < n; i++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (double)((h >> 33) % (uint64_t)k) - k / 2;
        if (x[i] == 0) x[i] = (h >> 20) & 1 ? -0.0 : 0.0;
        if (nan_every && i % nan_every == 3) x[i] = NAN;
    }
    return x;
}

TEST(sort_whole_lines)
{
    /* 1-D and 2-D, every axis, ragged chunks, one element per chunk */
    int64_t n = 1000;
    double *x = awkward(n, 50, 17, 1);
    int64_t s1[] = {1000}, c1[] = {1};
    check_sort(x, ZC_FLOAT64, 1, s1, c1, 0, (size_t)64 << 20, false);
    int64_t s2[] = {40, 25}, c2[] = {7, 3};
    check_sort(x, ZC_FLOAT64, 2, s2, c2, 0, (size_t)64 << 20, false);
    check_sort(x, ZC_FLOAT64, 2, s2, c2, -1, (size_t)64 << 20, false);
    int64_t s3[] = {5, 8, 25}, c3[] = {2, 3, 4};
    check_sort(x, ZC_FLOAT64, 3, s3, c3, 1, (size_t)64 << 20, false);
    free(x);
}

TEST(sort_dtypes)
{
    int64_t n = 3000, s[] = {3000}, c[] = {333};
    unsigned char *b = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) b[i] = (unsigned char)((i * 7919) % 251);
    check_sort(b, ZC_UINT8, 1, s, c, 0, (size_t)64 << 20, false);
    for (int64_t i = 0; i < n; i++) b[i] = (i * 31) % 7 < 3;
    check_sort(b, ZC_BOOL, 1, s, c, 0, (size_t)64 << 20, false);
    int32_t *i32 = (int32_t *)b;
    for (int64_t i = 0; i < n; i++) i32[i] = i == 5 ? INT32_MIN : (int32_t)((i * 2654435761u) % 2001) - 1000;
    check_sort(i32, ZC_INT32, 1, s, c, 0, (size_t)64 << 20, false);
    int64_t *i64 = (int64_t *)b;
    for (int64_t i = 0; i < n; i++) i64[i] = (int64_t)((i * 40503) % 4099) - 2000;
    check_sort(i64, ZC_INT64, 1, s, c, 0, (size_t)64 << 20, false);
    float *f = (float *)b;
    for (int64_t i = 0; i < n; i++) f[i] = i % 11 == 0 ? NAN : i % 13 == 0 ? -INFINITY : (float)((i * 37) % 101) * 0.5f;
    check_sort(f, ZC_FLOAT32, 1, s, c, 0, (size_t)64 << 20, false);
    free(b);
}

TEST(sort_edge_cases)
{
    double nan3[] = {NAN, NAN, NAN};
    int64_t s3[] = {3}, c1[] = {1};
    check_sort(nan3, ZC_FLOAT64, 1, s3, c1, 0, (size_t)64 << 20, false);
    double one[] = {4.0};
    int64_t s1[] = {1};
    check_sort(one, ZC_FLOAT64, 1, s1, c1, 0, (size_t)64 << 20, false);
    /* empty axis, and lines that are empty */
    double none[1] = {0};
    int64_t s0[] = {0}, s30[] = {3, 0}, c30[] = {2, 1};
    check_sort(none, ZC_FLOAT64, 1, s0, c1, 0, (size_t)64 << 20, false);
    check_sort(none, ZC_FLOAT64, 2, s30, c30, 1, (size_t)64 << 20, false);
    check_sort(none, ZC_FLOAT64, 2, s30, c30, 0, (size_t)64 << 20, false);
}

TEST(sort_external)
{
    /* lines longer than a task: sorted runs, then merges of parts of every run */
    int64_t n = 200000;
    double *x = awkward(n, 1000, 101, 2);
    int64_t s1[] = {n}, c1[] = {1000};
    check_sort(x, ZC_FLOAT64, 1, s1, c1, 0, (size_t)3 << 20, true);
    /* all equal: ties everywhere (positions decide) */
    for (int64_t i = 0; i < n; i++) x[i] = 1.5;
    check_sort(x, ZC_FLOAT64, 1, s1, c1, 0, (size_t)3 << 20, true);
    /* all NaN */
    for (int64_t i = 0; i < n; i++) x[i] = NAN;
    check_sort(x, ZC_FLOAT64, 1, s1, c1, 0, (size_t)3 << 20, true);
    /* already sorted, and reversed */
    for (int64_t i = 0; i < n; i++) x[i] = (double)i;
    check_sort(x, ZC_FLOAT64, 1, s1, c1, 0, (size_t)3 << 20, true);
    for (int64_t i = 0; i < n; i++) x[i] = (double)(n - i);
    check_sort(x, ZC_FLOAT64, 1, s1, c1, 0, (size_t)3 << 20, true);
    free(x);
}

TEST(sort_external_2d)
{
    /* along axis 0 and 1 of 2-D arrays with ragged chunks; int32 with ties */
    int64_t s[] = {60000, 3}, c[] = {7001, 2};
    int32_t *x = malloc(sizeof(int32_t) * 180000);
    for (int64_t i = 0; i < 180000; i++) x[i] = (int32_t)((i * 2654435761u) % 5003) - 2500;
    check_sort(x, ZC_INT32, 2, s, c, 0, (size_t)3 << 20, true);
    int64_t t[] = {3, 60000}, ct[] = {2, 5000};
    check_sort(x, ZC_INT32, 2, t, ct, 1, (size_t)3 << 20, true);
    free(x);
}

TEST(sort_consumers)
{
    /* a sort read by an elementwise consumer and a slice; twice in one graph */
    int64_t n = 50000, s[] = {n}, c[] = {999};
    double *x = awkward(n, 5000, 0, 3);
    zc_array *xa, *so, *two, *sl;
    CHECK_OK(zc_asarray(x, ZC_FLOAT64, 1, s, c, &xa));
    CHECK_OK(zc_sort(xa, 0, 1, &so));
    two = binop("add", so, so);
    int64_t start = 10, stop = n, step = 3;
    zc_index idx = {ZC_IDX_SLICE, start, stop, step, 1, 1, 0};
    CHECK_OK(zc_getitem(two, &idx, 1, &sl));
    double *got = calc(sl, (size_t)2 << 20, NULL);
    int64_t shape[] = {n};
    double *v = x;
    int64_t *ref = ref_argsort(v, 1, shape, 0, 1);
    int64_t bad = 0;
    for (int64_t k = 0, j = start; j < stop; j += step, k++)
        if (got[k] != 2 * v[ref[j]]) bad++;
    CHECK(bad == 0);
    free(got);
    free(ref);
    zc_array_release(sl);
    zc_array_release(two);
    zc_array_release(so);
    zc_array_release(xa);
    free(x);
}

TEST(sort_errors)
{
    double v[4] = {0};
    int64_t s[] = {2}, s0[] = {1};
    zc_array *c, *z, *o;
    CHECK_OK(zc_asarray(v, ZC_COMPLEX128, 1, s, NULL, &c));
    CHECK_ERR(zc_sort(c, 0, 0, &o), ZC_EINVAL, "complex128 arrays cannot be sorted");
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 0, s0, NULL, &z));
    CHECK_ERR(zc_argsort(z, 0, 0, &o), ZC_EINVAL, "0-d");
    zc_array_release(z);
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, s, NULL, &z));
    CHECK_ERR(zc_sort(z, 1, 0, &o), ZC_EINVAL, "axis 1 is out of range");
    CHECK_ERR(zc_sort(z, -2, 0, &o), ZC_EINVAL, "axis -2 is out of range");
    CHECK_ERR(zc_sort(z, 0, 2, &o), ZC_EINVAL, "descending must be 0 or 1");
    CHECK_ERR(zc_sort(NULL, 0, 0, &o), ZC_EINVAL, "NULL");
    zc_array_release(z);
    zc_array_release(c);
}

/* An argsort of 256 MiB of float64 (32M elements, with ties) under allowed_mem
 * 16 MiB (16x): an external sort whose process peak RSS stays within
 * 2 x allowed_mem + 64 MiB (the report's per-stage VmHWM), written to files;
 * the result is a permutation ordering the values, ties by position. */
TEST(argsort_16x_allowed_mem)
{
    int64_t n = (int64_t)32 << 20, shape[] = {n}, chunks[] = {(int64_t)1 << 15};
    size_t allowed = (size_t)16 << 20;
    zc_array *u, *k, *x, *as;
    CHECK_OK(zc_random_uniform(18, 1, shape, chunks, ZC_FLOAT64, 0, 1000, &u));
    CHECK_OK(zc_elementwise("floor", 1, &u, &k)); /* 1000 distinct values: many ties */
    x = k;
    CHECK_OK(zc_argsort(x, 0, 0, &as));
    big_run b;
    big_run_init(&b, "sort", allowed);
    zc_store *st = b.st;
    zc_target t = {st, "idx", "none", 3};
    char *plan = NULL;
    CHECK_OK(zc_plan_json(&b.spec, 1, &as, NULL, &plan));
    CHECK(plan && strstr(plan, "argsort (merge)"));
    zc_free(plan);
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(&b.spec, 1, &as, &t, &rep));
    json_t *doc = report_json_doc(rep);
    check_contract(doc, "argsort 16x");
    check_big_peak((size_t)json_integer_value(json_object_get(json_object_get(doc, "memory"), "peak_rss")), allowed,
                   "argsort 16x");
    json_decref(doc);
    /* check it: a permutation, values non-decreasing, ties by position */
    double *v = malloc((size_t)n * sizeof(double));
    int64_t *idx = malloc((size_t)n * 8);
    unsigned char *seen = calloc((size_t)n / 8 + 1, 1);
    zc_spec big = ZC_SPEC_INIT;
    CHECK_OK(zc_compute_buffer(&big, x, v, (size_t)n * sizeof(double), NULL));
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "idx", &z));
    CHECK_OK(zc_zarr_read(z, NULL, idx, (size_t)n * 8));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = idx[i];
        if (j < 0 || j >= n || (seen[j / 8] >> (j % 8)) & 1) {
            bad++;
            continue;
        }
        seen[j / 8] |= (unsigned char)(1u << (j % 8));
        if (i && idx[i - 1] >= 0 && idx[i - 1] < n &&
            (v[idx[i - 1]] > v[j] || (v[idx[i - 1]] == v[j] && idx[i - 1] > j)))
            bad++;
    }
    CHECK(bad == 0);
    zc_zarr_close(z);
    free(v);
    free(idx);
    free(seen);
    zc_array_release(as);
    zc_array_release(k);
    zc_array_release(u);
    big_run_end(&b);
}

/* The external sort as a saved plan run operation by operation, in parts (as
 * workers run it): the same result; a forged run length is refused on load. */
TEST(sort_saved_plan_in_parts)
{
    int64_t n = 100000, shape[] = {n}, chunks[] = {4096};
    zc_array *u, *s;
    CHECK_OK(zc_random_uniform(5, 1, shape, chunks, ZC_FLOAT64, -1, 1, &u));
    CHECK_OK(zc_argsort(u, 0, 1, &s));
    char dir[] = "/tmp/zcube-sortplan-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_target t = {st, "out", "none", 3};
    zc_spec sp = ZC_SPEC_INIT;
    sp.allowed_mem = (size_t)3 << 20;
    sp.reserved_mem = (size_t)1 << 20;
    char wd[64], path[64];
    snprintf(wd, sizeof wd, "%s/work", dir);
    snprintf(path, sizeof path, "%s/plan.json", dir);
    sp.work_dir = wd;
    CHECK_OK(zc_plan_save(&sp, 1, &s, &t, path));
    zc_plan *p;
    CHECK_OK(zc_plan_load(path, &p));
    int nops = 0;
    CHECK_OK(zc_plan_ops(p, &nops));
    CHECK(nops == 2);
    for (int op = 0; op < nops; op++) {
        int64_t tasks = 0;
        CHECK_OK(zc_plan_op_tasks(p, op, &tasks));
        CHECK(tasks > 1);
        CHECK_OK(zc_plan_run(path, op, 0, tasks / 2, 1));
        CHECK_OK(zc_plan_run(path, op, tasks / 2, -1, 2));
    }
    zc_plan_free(p);
    double *v = malloc((size_t)n * 8);
    int64_t *idx = malloc((size_t)n * 8);
    zc_spec big = ZC_SPEC_INIT;
    CHECK_OK(zc_compute_buffer(&big, u, v, (size_t)n * 8, NULL));
    int64_t *ref = ref_argsort(v, 1, shape, 0, 1);
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    CHECK_OK(zc_zarr_read(z, NULL, idx, (size_t)n * 8));
    CHECK(!memcmp(idx, ref, (size_t)n * 8));
    zc_zarr_close(z);
    /* a run length that does not fit the runs' shape */
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 1 << 20);
    size_t len = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    char *r = strstr(text, "\"run\": ");
    CHECK(r != NULL && len > 0);
    if (r) {
        r[7] = r[7] == '1' ? '2' : '1';
        f = fopen(path, "w");
        fwrite(text, 1, len, f);
        fclose(f);
        CHECK(plan_resign(path) == 0);
        CHECK_ERR(zc_plan_load(path, &p), ZC_EFORMAT, "sort");
    }
    free(text);
    free(ref);
    free(v);
    free(idx);
    zc_store_close(st);
    zc_array_release(s);
    zc_array_release(u);
    exec_rm_tree(dir);
}

/* searchsorted into a sorted x1 longer than a task (an external sort's result
 * under the same bound), both sides, against a direct count; and errors. */
TEST(searchsorted_long_sorted_array)
{
    int64_t n = 200000, m = 3000, s1[] = {n}, c1[] = {4096}, s2[] = {m}, c2[] = {500};
    double *x = awkward(n, 2000, 97, 7), *v = awkward(m, 2500, 50, 8);
    zc_array *xa, *va, *sx, *srt;
    CHECK_OK(zc_asarray(x, ZC_FLOAT64, 1, s1, c1, &xa));
    CHECK_OK(zc_asarray(v, ZC_FLOAT64, 1, s2, c2, &va));
    CHECK_OK(zc_sort(xa, 0, 0, &sx));
    double *sorted = calc(sx, (size_t)3 << 20, NULL);
    for (int right = 0; right <= 1; right++) {
        CHECK_OK(zc_searchsorted(sx, va, right, NULL, &srt));
        char *plan;
        int64_t *got = calc(srt, (size_t)3 << 20, &plan);
        CHECK(plan && strstr(plan, "sort (merge)") && strstr(plan, "searchsorted"));
        zc_free(plan);
        int64_t bad = 0;
        for (int64_t i = 0; i < m; i++) {
            int64_t want = 0; /* values before v[i] in NaN-last order: < (left) or <= (right) */
            for (int64_t j = 0; j < n; j++) {
                double a = sorted[j], b = v[i];
                bool less = b != b ? (a == a || right) : (a == a && (a < b || (right && a == b)));
                want += less;
            }
            if (got[i] != want && bad++ < 5)
                fprintf(stderr, "v[%lld] = %g: %lld, want %lld\n", (long long)i, v[i], (long long)got[i], (long long)want);
        }
        CHECK(bad == 0);
        free(got);
        zc_array_release(srt);
    }
    /* a sorter that is not argsort(x1) of this x1 node (the argsort of an equal
     * copy): the search runs in x1[sorter], a gather, with the same results */
    zc_array *sorter, *other, *direct;
    CHECK_OK(zc_asarray(x, ZC_FLOAT64, 1, s1, c1, &other));
    CHECK_OK(zc_argsort(other, 0, 0, &sorter));
    CHECK_OK(zc_searchsorted(xa, va, 1, sorter, &srt));
    CHECK_OK(zc_searchsorted(sx, va, 1, NULL, &direct));
    char *plan;
    int64_t *g1 = calc(srt, (size_t)3 << 20, &plan), *g2 = calc(direct, (size_t)3 << 20, NULL);
    CHECK(plan && strstr(plan, "take_along"));
    CHECK(memcmp(g1, g2, sizeof *g1 * (size_t)m) == 0);
    zc_free(plan);
    free(g1);
    free(g2);
    zc_array_release(srt);
    zc_array_release(direct);
    CHECK_ERR(zc_searchsorted(va, xa, 0, sorter, &srt), ZC_EINVAL, "sorter must be 1-D with x1's length 3000");
    CHECK_ERR(zc_searchsorted(xa, va, 0, xa, &srt), ZC_EINVAL, "take_along_axis: indices must have an integer dtype");
    CHECK_ERR(zc_searchsorted(xa, va, 2, NULL, &srt), ZC_EINVAL, "side");
    zc_array_release(other);
    zc_array_release(sorter);
    free(sorted);
    zc_array_release(sx);
    zc_array_release(va);
    zc_array_release(xa);
    free(x);
    free(v);
}
