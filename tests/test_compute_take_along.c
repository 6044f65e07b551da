/* tests/test_compute_take_along.c — zc_take_along_axis (plan/take_along.c)
 * against a direct gather in C: indices from argsort (whole lines and an
 * external sort under a small bound), reversed and repeated indices, negative
 * ones, broadcasting of the other dims, one element per chunk and ragged
 * chunks; measured <= projected memory; indices out of bounds fail the
 * computation; argument errors. */
#include <jansson.h>

#include "harness.h"

/* out[o, k, i] = x[o, idx[o, k, i] (negative from the end), i] for x of
 * (O, n, I) and idx of (O, K, I) (both C order, doubles and int64). */
static void ref_take(const double *x, const int64_t *idx, int64_t O, int64_t n, int64_t K, int64_t I, double *out)
{
    for (int64_t o = 0; o < O; o++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t i = 0; i < I; i++) {
                int64_t v = idx[(o * K + k) * I + i];
                out[(o * K + k) * I + i] = x[(o * n + (v < 0 ? v + n : v)) * I + i];
            }
}

/* take_along_axis(x, idx, axis) computed under spec equals want (count values). */
static void check_take(const zc_spec *s, zc_array *x, zc_array *idx, int axis, const double *want, int64_t count,
                       const char *what)
{
    zc_array *t = NULL;
    CHECK_OK(zc_take_along_axis(x, idx, axis, &t));
    if (!t) return;
    double *got = malloc(sizeof(double) * (size_t)(count + 1));
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(s, t, got, sizeof(double) * (size_t)count, &rep));
    if (rep) json_decref(report_checked(rep));
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++) bad += got[i] != want[i];
    if (bad) {
        fprintf(stderr, "%s: %lld of %lld values differ\n", what, (long long)bad, (long long)count);
        harness_failures++;
    }
    free(got);
    zc_array_release(t);
}

static double *values(int64_t n, int64_t mod)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int64_t i = 0; i < n; i++) {
        h ^= h << 13, h ^= h >> 7, h ^= h << 17;
        v[i] = (double)(h % (uint64_t)mod);
    }
    return v;
}

TEST(take_along_axis_argsort)
{
    int64_t O = 23, n = 301, shape[] = {O, n}, total = O * n;
    double *x = values(total, 50);
    int64_t *idx = malloc(8 * (size_t)total);
    double *want = malloc(sizeof(double) * (size_t)total);
    int64_t chunkings[][2] = {{1, 1}, {5, 37}, {23, 301}};
    zc_spec s = spec_mem(64);
    for (size_t c = 0; c < 3; c++) {
        zc_array *xa, *as;
        CHECK_OK(zc_asarray(x, ZC_FLOAT64, 2, shape, chunkings[c], &xa));
        for (int axis = 0; axis < 2; axis++) {
            CHECK_OK(zc_argsort(xa, axis, 0, &as));
            CHECK_OK(zc_compute_buffer(&s, as, idx, 8 * (size_t)total, NULL));
            if (axis == 1) ref_take(x, idx, O, n, n, 1, want);
            else ref_take(x, idx, 1, O, O, n, want);
            char what[64];
            snprintf(what, sizeof what, "sorted along %d, chunks %lldx%lld", axis, (long long)chunkings[c][0],
                     (long long)chunkings[c][1]);
            check_take(&s, xa, as, axis, want, total, what);
            for (int64_t i = 1; i < total; i++) /* and it is sorted */
                if (axis == 1 && i % n && want[i] < want[i - 1]) harness_failures++;
            zc_array_release(as);
        }
        zc_array_release(xa);
    }
    free(x);
    free(idx);
    free(want);
}

/* A line longer than a task's memory: indices from an external argsort. */
TEST(take_along_axis_long_line)
{
    int64_t n = 300000, shape[] = {n}, chunk = 4999;
    double *x = values(n, 100000), *want = malloc(sizeof(double) * (size_t)n);
    int64_t *idx = malloc(8 * (size_t)n);
    zc_array *xa, *as;
    CHECK_OK(zc_asarray(x, ZC_FLOAT64, 1, shape, &chunk, &xa));
    CHECK_OK(zc_argsort(xa, 0, 1, &as));
    zc_spec s = spec_mem(3);
    CHECK_OK(zc_compute_buffer(&s, as, idx, 8 * (size_t)n, NULL));
    ref_take(x, idx, 1, n, n, 1, want);
    check_take(&s, xa, as, -1, want, n, "external argsort, descending, under 3 MiB");
    zc_array_release(as);
    zc_array_release(xa);
    free(x);
    free(want);
    free(idx);
}

TEST(take_along_axis_broadcast_negative)
{
    /* x (4, 6, 1) along axis 1 by indices (1, 3, 5) of int32: the result is (4, 3, 5) */
    int64_t xs[] = {4, 6, 1}, is[] = {1, 3, 5}, xc[] = {3, 4, 1}, ic[] = {1, 2, 2};
    double *x = values(24, 1000);
    int32_t iv[15];
    for (int k = 0; k < 15; k++) iv[k] = (int32_t)((k * 7) % 12) - 6; /* -6 .. 5 */
    double want[60];
    for (int64_t o = 0; o < 4; o++)
        for (int64_t k = 0; k < 3; k++)
            for (int64_t i = 0; i < 5; i++) {
                int64_t v = iv[k * 5 + i];
                want[(o * 3 + k) * 5 + i] = x[o * 6 + (v < 0 ? v + 6 : v)];
            }
    zc_array *xa, *ia;
    CHECK_OK(zc_asarray(x, ZC_FLOAT64, 3, xs, xc, &xa));
    CHECK_OK(zc_asarray(iv, ZC_INT32, 3, is, ic, &ia));
    zc_spec s = spec_mem(64);
    check_take(&s, xa, ia, 1, want, 60, "broadcast, negative indices");
    /* out of bounds: the computation fails, naming the index */
    int32_t badv[15];
    for (int k = 0; k < 15; k++) badv[k] = k == 9 ? 6 : 0;
    zc_array *ba, *t;
    CHECK_OK(zc_asarray(badv, ZC_INT32, 3, is, ic, &ba));
    CHECK_OK(zc_take_along_axis(xa, ba, 1, &t));
    double out[60];
    CHECK_ERR(zc_compute_buffer(&s, t, out, sizeof out, NULL), ZC_EINVAL, "index 6 is out of bounds for axis 1");
    zc_array_release(t);
    zc_array_release(ba);
    /* argument errors */
    zc_array *f, *two;
    CHECK_OK(zc_astype(ia, ZC_FLOAT64, &f));
    CHECK_ERR(zc_take_along_axis(xa, f, 1, &t), ZC_EINVAL, "integer dtype");
    int64_t s2[] = {4, 6};
    CHECK_OK(zc_asarray(x, ZC_FLOAT64, 2, s2, NULL, &two));
    CHECK_ERR(zc_take_along_axis(two, ia, 1, &t), ZC_EINVAL, "same number of dimensions");
    CHECK_ERR(zc_take_along_axis(xa, ia, 3, &t), ZC_EINVAL, "axis 3 is out of range");
    CHECK_ERR(zc_take_along_axis(xa, ia, 2, &t), ZC_EINVAL, "do not broadcast");
    CHECK_ERR(zc_take_along_axis(NULL, ia, 0, &t), ZC_EINVAL, "NULL");
    zc_array_release(f);
    zc_array_release(two);
    zc_array_release(xa);
    zc_array_release(ia);
    free(x);
}
