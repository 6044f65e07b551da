/* tests/test_compute_manip.c — manipulation, indexing, cumulative and data
 * type functions of the lazy engine (zcube.h sections 4 and 9), checked
 * against direct C loops on small arrays with ragged chunks, through
 * zc_compute_buffer: each function on a generated source, on a stored
 * (materialized, rechunked) source, under strided pulls from a consumer;
 * measured ≤ projected memory for every operation; plans saved for workers;
 * argument errors. */
#include <jansson.h>
#include <math.h>
#include <unistd.h>

#include "harness.h"

static size_t isz_of(zc_dtype t)
{
    zc_dtype x;
    size_t n = 0;
    zc_dtype_parse(zc_dtype_name(t), &x, &n);
    return n;
}

static int64_t nelem(int nd, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    return n;
}

/* Values of a (in its dtype) in a new buffer; *n elements. */
/* Values of a computed with zc_compute_buffer; the report must keep the memory
 * contract (check_contract: every task within its projection, no slack). */
static void *calc(zc_array *a, int64_t *n)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS];
    zc_dtype dt;
    CHECK_OK(zc_array_info(a, &nd, shape, NULL, &dt));
    *n = nelem(nd, shape);
    size_t bytes = (size_t)*n * isz_of(dt);
    void *buf = calloc(1, bytes + 16);
    zc_spec s = spec_mem(256);
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&s, a, buf, bytes, &rep));
    if (rep) json_decref(report_checked(rep));
    return buf;
}

static void unravel(int64_t lin, int nd, const int64_t *shape, int64_t *c)
{
    for (int d = nd - 1; d >= 0; d--) {
        c[d] = shape[d] ? lin % shape[d] : 0;
        lin = shape[d] ? lin / shape[d] : 0;
    }
}

static int64_t ravel(const int64_t *c, int nd, const int64_t *shape)
{
    int64_t l = 0;
    for (int d = 0; d < nd; d++) l = l * shape[d] + c[d];
    return l;
}

static void check_shape(zc_array *a, int nd, const int64_t *shape)
{
    int got;
    int64_t s[ZC_MAX_DIMS];
    CHECK_OK(zc_array_info(a, &got, s, NULL, NULL));
    CHECK(got == nd);
    for (int d = 0; d < nd && d < got; d++) CHECK(s[d] == shape[d]);
}

/* A float64 source: random values, and the same values stored with other chunks. */
static zc_array *source(int variant, int nd, const int64_t *shape, const int64_t *chunks, const int64_t *chunks2,
                        uint64_t seed)
{
    zc_array *x, *r;
    CHECK_OK(zc_random_uniform(seed, nd, shape, chunks, ZC_FLOAT64, -5, 5, &x));
    if (!variant) return x;
    CHECK_OK(zc_rechunk(x, chunks2, &r));
    zc_array_release(x);
    return r;
}

/* x[start::step] on every dim (a consumer pulling strided regions). */
static zc_array *strided(zc_array *x, const int64_t *start, const int64_t *step)
{
    int nd;
    CHECK_OK(zc_array_info(x, &nd, NULL, NULL, NULL));
    zc_index idx[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) idx[d] = (zc_index){ZC_IDX_SLICE, start[d], 0, step[d], 1, 0, 0};
    zc_array *s;
    CHECK_OK(zc_getitem(x, idx, nd, &s));
    return s;
}

/* An int64 array 0, 1, 2, ... (C order) from a buffer. */
static zc_array *iota(int nd, const int64_t *shape, const int64_t *chunks)
{
    int64_t n = nelem(nd, shape);
    int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = i;
    zc_array *a;
    CHECK_OK(zc_asarray(v, ZC_INT64, nd, shape, chunks, &a));
    free(v);
    return a;
}

TEST(reshape_matches_c_order)
{
    int64_t shape[3] = {6, 10, 4}, chunks[3] = {4, 3, 4};
    zc_array *x = iota(3, shape, chunks);
    int64_t targets[][5] = {{2, 60, 4}, {2, 6, 40}, {1, 240}, {3, 4, 6, 10}, {4, 2, 3, 5, 8},
                            {2, 3, -1}, {2, 24, 10}, {3, 1, 240, 1}, {3, 6, 5, 8}, {2, -1, 16}};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        int nd = (int)targets[t][0];
        zc_array *r;
        CHECK_OK(zc_reshape(x, nd, targets[t] + 1, &r));
        int64_t n, *v = calc(r, &n);
        CHECK(n == 240);
        for (int64_t i = 0; i < n; i++) CHECK(v[i] == i);
        /* strided pulls through the reshape */
        int64_t rs[ZC_MAX_DIMS], st[ZC_MAX_DIMS] = {0}, sp[ZC_MAX_DIMS], os[ZC_MAX_DIMS], c[ZC_MAX_DIMS];
        CHECK_OK(zc_array_info(r, &nd, rs, NULL, NULL));
        for (int d = 0; d < nd; d++) {
            st[d] = rs[d] > 2 ? 1 : 0;
            sp[d] = rs[d] > 4 ? 3 : 1;
        }
        zc_array *s = strided(r, st, sp);
        int64_t m, *w = calc(s, &m);
        for (int d = 0; d < nd; d++) os[d] = (rs[d] - st[d] + sp[d] - 1) / sp[d];
        CHECK(m == nelem(nd, os));
        for (int64_t i = 0; i < m; i++) {
            unravel(i, nd, os, c);
            for (int d = 0; d < nd; d++) c[d] = st[d] + c[d] * sp[d];
            CHECK(w[i] == ravel(c, nd, rs));
        }
        free(v);
        free(w);
        zc_array_release(s);
        zc_array_release(r);
    }
    /* the same shape gives the array back; errors name the sizes */
    zc_array *same;
    CHECK_OK(zc_reshape(x, 3, shape, &same));
    CHECK(same == x);
    zc_array_release(same);
    zc_array *bad;
    int64_t b1[2] = {7, -1}, b2[2] = {-1, -1}, b3[2] = {5, 50}, b4[2] = {-3, 80};
    CHECK_ERR(zc_reshape(x, 2, b1, &bad), ZC_EINVAL, "size 240");
    CHECK_ERR(zc_reshape(x, 2, b2, &bad), ZC_EINVAL, "at most one -1");
    CHECK_ERR(zc_reshape(x, 2, b3, &bad), ZC_EINVAL, "into shape (5, 50)");
    CHECK_ERR(zc_reshape(x, 2, b4, &bad), ZC_EINVAL, "reshape");
    CHECK_ERR(zc_reshape(x, ZC_MAX_DIMS + 1, b1, &bad), ZC_EINVAL, "dimensions");
    zc_array_release(x);
}

TEST(reshape_from_stored_and_regions_across_rows)
{
    /* (3, 5000) → (5000, 3): one group; regions pulled by a consumer with small
     * chunks straddle input rows, so the reshape cuts them (its bounding box would
     * be two whole rows) — exercised on a generated and a stored input */
    int64_t shape[2] = {3, 5000}, chunks[2] = {2, 700}, chunks2[2] = {3, 333};
    int64_t to[2] = {5000, 3};
    for (int variant = 0; variant < 2; variant++) {
        zc_array *x = source(variant, 2, shape, chunks, chunks2, 7), *r, *y, *sum;
        CHECK_OK(zc_reshape(x, 2, to, &r));
        int64_t yc[2] = {7, 2};
        CHECK_OK(zc_random_uniform(8, 2, to, yc, ZC_FLOAT64, 0, 1, &y));
        CHECK_OK(zc_elementwise("add", 2, (zc_array *[]){r, y}, &sum)); /* chunks of y: (7, 2) */
        int64_t chk[2];
        CHECK_OK(zc_array_info(sum, NULL, NULL, chk, NULL));
        CHECK(chk[0] == 7 && chk[1] == 2);
        int64_t n;
        double *X = calc(x, &n), *Y = calc(y, &n), *S = calc(sum, &n), *R = calc(r, &n);
        for (int64_t i = 0; i < n; i++) {
            CHECK(S[i] == X[i] + Y[i]);
            CHECK(R[i] == X[i]);
        }
        free(X); free(Y); free(S); free(R);
        zc_array_release(sum); zc_array_release(y); zc_array_release(r); zc_array_release(x);
    }
}

TEST(permute_moveaxis_transpose)
{
    int64_t shape[3] = {5, 7, 3}, chunks[3] = {2, 3, 2}, chunks2[3] = {3, 7, 1};
    for (int variant = 0; variant < 2; variant++) {
        zc_array *x = source(variant, 3, shape, chunks, chunks2, 3);
        int64_t n;
        double *X = calc(x, &n);
        int perms[][3] = {{2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {-1, -3, 1}, {0, 1, 2}};
        for (int p = 0; p < 5; p++) {
            zc_array *r;
            CHECK_OK(zc_permute_dims(x, perms[p], 3, &r));
            int ax[3];
            for (int d = 0; d < 3; d++) ax[d] = perms[p][d] < 0 ? perms[p][d] + 3 : perms[p][d];
            int64_t os[3] = {shape[ax[0]], shape[ax[1]], shape[ax[2]]}, c[3], ic[3];
            check_shape(r, 3, os);
            int64_t chk[3];
            CHECK_OK(zc_array_info(r, NULL, NULL, chk, NULL));
            CHECK(chk[0] == chunks[ax[0]] || variant);
            int64_t m;
            double *R = calc(r, &m);
            CHECK(m == n);
            for (int64_t i = 0; i < m; i++) {
                unravel(i, 3, os, c);
                for (int d = 0; d < 3; d++) ic[ax[d]] = c[d];
                CHECK(R[i] == X[ravel(ic, 3, shape)]);
            }
            free(R);
            zc_array_release(r);
        }
        /* moveaxis(x, [0, 1], [2, 0]) → axes order (1, 2, 0); moveaxis(x, 0, -1) the same */
        int src[2] = {0, 1}, dst[2] = {2, 0}, s1 = 0, d1 = -1;
        zc_array *m1, *m2, *t;
        CHECK_OK(zc_moveaxis(x, src, dst, 2, &m1));
        CHECK_OK(zc_moveaxis(x, &s1, &d1, 1, &m2));
        CHECK_OK(zc_matrix_transpose(x, &t));
        int64_t sm[3] = {7, 3, 5}, st[3] = {5, 3, 7};
        check_shape(m1, 3, sm);
        check_shape(m2, 3, sm);
        check_shape(t, 3, st);
        int64_t k;
        double *M1 = calc(m1, &k), *M2 = calc(m2, &k), *T = calc(t, &k);
        for (int64_t i = 0; i < 5; i++)
            for (int64_t j = 0; j < 7; j++)
                for (int64_t l = 0; l < 3; l++) {
                    double v = X[(i * 7 + j) * 3 + l];
                    CHECK(M1[(j * 3 + l) * 5 + i] == v);
                    CHECK(M2[(j * 3 + l) * 5 + i] == v);
                    CHECK(T[(i * 3 + l) * 7 + j] == v);
                }
        /* a strided consumer of a transposed view */
        int64_t s0[3] = {1, 0, 2}, sp[3] = {2, 2, 3};
        zc_array *sv = strided(t, s0, sp);
        double *SV = calc(sv, &k);
        int64_t os[3] = {2, 2, 2}, c[3];
        check_shape(sv, 3, os);
        for (int64_t i = 0; i < 8; i++) {
            unravel(i, 3, os, c);
            int64_t a0 = 1 + 2 * c[0], a2 = 2 * c[1], a1 = 2 + 3 * c[2]; /* t[a0, a2, a1] = x[a0, a1, a2] */
            CHECK(SV[i] == X[(a0 * 7 + a1) * 3 + a2]);
        }
        free(M1); free(M2); free(T); free(SV); free(X);
        zc_array_release(sv); zc_array_release(m1); zc_array_release(m2); zc_array_release(t);
        zc_array *bad;
        int rep[3] = {0, 0, 1}, oor[3] = {0, 1, 3}, one[1] = {5};
        CHECK_ERR(zc_permute_dims(x, rep, 3, &bad), ZC_EINVAL, "permute_dims: axis 0 is repeated");
        CHECK_ERR(zc_permute_dims(x, oor, 3, &bad), ZC_EINVAL, "axis 3 is out of range");
        CHECK_ERR(zc_permute_dims(x, rep, 2, &bad), ZC_EINVAL, "2 axes given");
        CHECK_ERR(zc_moveaxis(x, one, &d1, 1, &bad), ZC_EINVAL, "moveaxis: axis 5");
        CHECK_ERR(zc_moveaxis(x, src, (int[]){1, 1}, 2, &bad), ZC_EINVAL, "destination axis 1 is repeated");
        zc_array_release(x);
    }
    zc_array *v, *bad;
    CHECK_OK(zc_arange(0, 5, 1, ZC_INT32, 2, &v));
    CHECK_ERR(zc_matrix_transpose(v, &bad), ZC_EINVAL, "at least 2");
    zc_array_release(v);
}

TEST(expand_dims_squeeze_broadcast_to)
{
    int64_t shape[2] = {3, 1}, chunks[2] = {2, 1};
    zc_array *x = source(0, 2, shape, chunks, NULL, 5), *e, *sq, *b, *bad;
    int64_t n;
    double *X = calc(x, &n);
    CHECK_OK(zc_expand_dims(x, -1, &e));
    int64_t se[3] = {3, 1, 1};
    check_shape(e, 3, se);
    double *E = calc(e, &n);
    for (int i = 0; i < 3; i++) CHECK(E[i] == X[i]);
    CHECK_OK(zc_squeeze(e, NULL, 0, &sq));
    int64_t ss[1] = {3};
    check_shape(sq, 1, ss);
    double *SQ = calc(sq, &n);
    for (int i = 0; i < 3; i++) CHECK(SQ[i] == X[i]);
    int ax1 = 1, ax0 = 0;
    CHECK_ERR(zc_squeeze(x, &ax0, 1, &bad), ZC_EINVAL, "axis 0 has size 3");
    CHECK_ERR(zc_squeeze(x, (int[]){1, -1}, 2, &bad), ZC_EINVAL, "repeated");
    CHECK_ERR(zc_expand_dims(x, 4, &bad), ZC_EINVAL, "expand_dims: axis 4");
    CHECK_ERR(zc_expand_dims(x, -4, &bad), ZC_EINVAL, "expand_dims: axis -4");
    zc_array *s1;
    CHECK_OK(zc_squeeze(x, &ax1, 1, &s1));
    check_shape(s1, 1, ss);
    /* broadcast (3, 1) → (4, 3, 5) */
    int64_t to[3] = {4, 3, 5};
    CHECK_OK(zc_broadcast_to(x, 3, to, &b));
    check_shape(b, 3, to);
    double *B = calc(b, &n);
    CHECK(n == 60);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 5; k++) CHECK(B[(i * 3 + j) * 5 + k] == X[j]);
    /* strided, through a broadcast */
    int64_t st[3] = {1, 0, 1}, sp[3] = {2, 2, 3};
    zc_array *sb = strided(b, st, sp);
    double *SB = calc(sb, &n);
    int64_t os[3] = {2, 2, 2}, c[3];
    check_shape(sb, 3, os);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, 3, os, c);
        CHECK(SB[i] == X[2 * c[1]]);
    }
    int64_t bad1[2] = {3, 2}, bad2[1] = {3}, bad3[2] = {2, 1};
    CHECK_ERR(zc_broadcast_to(x, 2, bad3, &bad), ZC_EINVAL, "(3, 1) does not broadcast to (2, 1)");
    CHECK_ERR(zc_broadcast_to(x, 1, bad2, &bad), ZC_EINVAL, "fewer dimensions");
    zc_array *ok;
    CHECK_OK(zc_broadcast_to(x, 2, bad1, &ok));
    zc_array_release(ok);
    free(X); free(E); free(SQ); free(B); free(SB);
    zc_array_release(sb); zc_array_release(s1); zc_array_release(e); zc_array_release(sq); zc_array_release(b);
    zc_array_release(x);
}

TEST(concat_and_stack)
{
    /* five arrays (a tree of concat nodes), ragged chunks, along axis 0 and 1 */
    int64_t rows[5] = {4, 2, 3, 1, 5}, ch[5][2] = {{3, 2}, {1, 5}, {2, 3}, {1, 1}, {4, 4}};
    for (int variant = 0; variant < 2; variant++) {
        zc_array *p[5];
        double *P[5];
        int64_t n;
        for (int k = 0; k < 5; k++) {
            int64_t sh[2] = {rows[k], 5}, c2[2] = {2, 2};
            p[k] = source(variant, 2, sh, ch[k], c2, 20 + (uint64_t)k);
            P[k] = calc(p[k], &n);
        }
        zc_array *c0, *ct[5], *c1;
        CHECK_OK(zc_concat(5, p, 0, &c0));
        int64_t s0[2] = {15, 5};
        check_shape(c0, 2, s0);
        double *C0 = calc(c0, &n);
        for (int k = 0, r0 = 0; k < 5; r0 += (int)rows[k], k++)
            for (int i = 0; i < rows[k]; i++)
                for (int j = 0; j < 5; j++) CHECK(C0[(r0 + i) * 5 + j] == P[k][i * 5 + j]);
        /* along axis 1 (of the transposes): parts are not contiguous in a region */
        for (int k = 0; k < 5; k++) CHECK_OK(zc_matrix_transpose(p[k], &ct[k]));
        CHECK_OK(zc_concat(5, ct, -1, &c1));
        int64_t s1[2] = {5, 15};
        check_shape(c1, 2, s1);
        double *C1 = calc(c1, &n);
        for (int i = 0; i < 15; i++)
            for (int j = 0; j < 5; j++) CHECK(C1[j * 15 + i] == C0[i * 5 + j]);
        /* strided pulls across the joins */
        int64_t st[2] = {1, 2}, sp[2] = {2, 3};
        zc_array *sc = strided(c1, st, sp);
        double *SC = calc(sc, &n);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 5; j++) CHECK(SC[i * 5 + j] == C1[(1 + 2 * i) * 15 + 2 + 3 * j]);
        /* stack of three 4x5 arrays along each new axis */
        zc_array *three[3] = {p[0], p[0], p[4]}, *bad;
        int64_t s5[2] = {4, 5};
        zc_array *p4;
        CHECK_OK(zc_getitem(p[4], (zc_index[]){{ZC_IDX_SLICE, 1, 0, 1, 1, 0, 0}}, 1, &p4)); /* rows 1..4 */
        three[2] = p4;
        check_shape(p4, 2, s5);
        for (int axis = -3; axis < 3; axis++) {
            zc_array *s;
            CHECK_OK(zc_stack(3, three, axis, &s));
            int a = axis < 0 ? axis + 3 : axis;
            int64_t ss[3], c[3], cc[2];
            for (int d = 0, e = 0; d < 3; d++) ss[d] = d == a ? 3 : s5[e++];
            check_shape(s, 3, ss);
            double *S = calc(s, &n);
            for (int64_t i = 0; i < n; i++) {
                unravel(i, 3, ss, c);
                for (int d = 0, e = 0; d < 3; d++)
                    if (d != a) cc[e++] = c[d];
                double want = c[a] < 2 ? P[0][cc[0] * 5 + cc[1]] : P[4][(cc[0] + 1) * 5 + cc[1]];
                CHECK(S[i] == want);
            }
            free(S);
            zc_array_release(s);
        }
        CHECK_ERR(zc_stack(2, (zc_array *[]){p[0], p[1]}, 0, &bad), ZC_EINVAL, "array 1 has shape (2, 5)");
        CHECK_ERR(zc_stack(2, three, 3, &bad), ZC_EINVAL, "stack: axis 3");
        CHECK_ERR(zc_concat(2, (zc_array *[]){p[0], ct[1]}, 0, &bad), ZC_EINVAL, "must agree except along axis 0");
        CHECK_ERR(zc_concat(2, p, 2, &bad), ZC_EINVAL, "concat: axis 2 is out of range");
        free(C0); free(C1); free(SC);
        zc_array_release(sc); zc_array_release(p4); zc_array_release(c0); zc_array_release(c1);
        for (int k = 0; k < 5; k++) {
            free(P[k]);
            zc_array_release(p[k]);
            zc_array_release(ct[k]);
        }
    }
}

TEST(concat_promotes_and_flattens)
{
    int32_t a[6] = {1, -2, 3, -4, 5, -6};
    float b[3] = {0.5f, 1.5f, -2.5f};
    int64_t sa[2] = {2, 3}, sb[1] = {3}, c1 = 2;
    zc_array *x, *y, *c, *bad, *s;
    CHECK_OK(zc_asarray(a, ZC_INT32, 2, sa, (int64_t[]){1, 2}, &x));
    CHECK_OK(zc_asarray(b, ZC_FLOAT32, 1, sb, &c1, &y));
    CHECK_OK(zc_concat(2, (zc_array *[]){x, y}, ZC_AXIS_NONE, &c));
    zc_dtype dt;
    int64_t sc[1] = {9};
    check_shape(c, 1, sc);
    CHECK_OK(zc_array_info(c, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_FLOAT64); /* int32 with float32: float64, like NumPy */
    int64_t n;
    double *C = calc(c, &n);
    for (int i = 0; i < 6; i++) CHECK(C[i] == a[i]);
    for (int i = 0; i < 3; i++) CHECK(C[6 + i] == b[i]);
    CHECK_OK(zc_scalar(1, 1, &s));
    CHECK_ERR(zc_concat(2, (zc_array *[]){s, s}, 0, &bad), ZC_EINVAL, "0-d");
    CHECK_ERR(zc_concat(0, NULL, 0, &bad), ZC_EINVAL, "concat");
    /* one array: itself */
    zc_array *one;
    CHECK_OK(zc_concat(1, &x, 1, &one));
    int32_t *O = calc(one, &n);
    CHECK(n == 6 && !memcmp(O, a, sizeof a));
    free(O);
    free(C);
    zc_array_release(one); zc_array_release(s); zc_array_release(c); zc_array_release(x); zc_array_release(y);
}

TEST(flip_and_roll)
{
    int64_t shape[2] = {7, 9}, chunks[2] = {3, 4}, chunks2[2] = {2, 9};
    for (int variant = 0; variant < 2; variant++) {
        zc_array *x = source(variant, 2, shape, chunks, chunks2, 11);
        int64_t n;
        double *X = calc(x, &n);
        zc_array *f0, *fa, *r;
        int ax0 = 0, ax1 = -1;
        CHECK_OK(zc_flip(x, &ax0, 1, &f0));
        CHECK_OK(zc_flip(x, NULL, 0, &fa));
        double *F0 = calc(f0, &n), *FA = calc(fa, &n);
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 9; j++) {
                CHECK(F0[i * 9 + j] == X[(6 - i) * 9 + j]);
                CHECK(FA[i * 9 + j] == X[(6 - i) * 9 + 8 - j]);
            }
        int64_t st[2] = {1, 2}, sp[2] = {3, 2};
        zc_array *sf = strided(fa, st, sp);
        double *SF = calc(sf, &n);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++) CHECK(SF[i * 4 + j] == X[(6 - 1 - 3 * i) * 9 + 8 - 2 - 2 * j]);
        /* roll: one axis, both axes, flattened, repeated axes, shifts beyond the length */
        int64_t shifts[][2] = {{2, 0}, {-3, 0}, {25, 0}, {0, 0}};
        for (int k = 0; k < 4; k++) {
            CHECK_OK(zc_roll(x, shifts[k], 1, &ax1, 1, &r));
            double *R = calc(r, &n);
            int64_t s = ((shifts[k][0] % 9) + 9) % 9;
            for (int i = 0; i < 7; i++)
                for (int j = 0; j < 9; j++) CHECK(R[i * 9 + (j + s) % 9] == X[i * 9 + j]);
            free(R);
            zc_array_release(r);
        }
        int64_t sh2[2] = {-1, 4};
        int axes2[2] = {0, 1};
        CHECK_OK(zc_roll(x, sh2, 2, axes2, 2, &r));
        double *R2 = calc(r, &n);
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 9; j++) CHECK(R2[((i + 6) % 7) * 9 + (j + 4) % 9] == X[i * 9 + j]);
        zc_array_release(r);
        int64_t sh1 = 10;
        CHECK_OK(zc_roll(x, &sh1, 1, NULL, 0, &r));
        double *R3 = calc(r, &n);
        for (int i = 0; i < 63; i++) CHECK(R3[(i + 10) % 63] == X[i]);
        zc_array_release(r);
        int64_t sh3[2] = {2, 3};
        CHECK_OK(zc_roll(x, sh3, 2, (int[]){1, 1}, 2, &r)); /* repeated axes add up */
        double *R4 = calc(r, &n);
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 9; j++) CHECK(R4[i * 9 + (j + 5) % 9] == X[i * 9 + j]);
        zc_array_release(r);
        zc_array *bad;
        CHECK_ERR(zc_roll(x, sh3, 2, NULL, 0, &bad), ZC_EINVAL, "2 shifts without axes");
        CHECK_ERR(zc_roll(x, sh3, 2, (int[]){0, 1, 1}, 3, &bad), ZC_EINVAL, "2 shifts for 3 axes");
        CHECK_ERR(zc_roll(x, sh3, 1, (int[]){2}, 1, &bad), ZC_EINVAL, "roll: axis 2");
        CHECK_ERR(zc_flip(x, (int[]){0, -2}, 2, &bad), ZC_EINVAL, "flip: axis -2 is repeated");
        free(X); free(F0); free(FA); free(SF); free(R2); free(R3); free(R4);
        zc_array_release(sf); zc_array_release(f0); zc_array_release(fa); zc_array_release(x);
    }
}

TEST(repeat_tile_take)
{
    int64_t shape[2] = {5, 4}, chunks[2] = {2, 3}, chunks2[2] = {5, 1};
    for (int variant = 0; variant < 2; variant++) {
        zc_array *x = source(variant, 2, shape, chunks, chunks2, 13), *r, *bad;
        int64_t n;
        double *X = calc(x, &n);
        /* repeat */
        for (int axis = 0; axis < 2; axis++) {
            CHECK_OK(zc_repeat(x, 3, axis, &r));
            int64_t rs[2] = {axis == 0 ? 15 : 5, axis == 1 ? 12 : 4};
            check_shape(r, 2, rs);
            double *R = calc(r, &n);
            for (int i = 0; i < rs[0]; i++)
                for (int j = 0; j < rs[1]; j++)
                    CHECK(R[i * rs[1] + j] == X[(axis == 0 ? i / 3 : i) * 4 + (axis == 1 ? j / 3 : j)]);
            free(R);
            zc_array_release(r);
        }
        CHECK_OK(zc_repeat(x, 2, ZC_AXIS_NONE, &r));
        double *RF = calc(r, &n);
        CHECK(n == 40);
        for (int i = 0; i < 40; i++) CHECK(RF[i] == X[i / 2]);
        zc_array_release(r);
        CHECK_OK(zc_repeat(x, 0, 1, &r));
        int64_t z[2] = {5, 0};
        check_shape(r, 2, z);
        free(calc(r, &n));
        CHECK(n == 0);
        zc_array_release(r);
        CHECK_ERR(zc_repeat(x, -1, 0, &bad), ZC_EINVAL, "repeats must be >= 0 (got -1)");
        /* tile: shorter reps, longer reps (x gains leading dims), zeros */
        int64_t reps[][4] = {{1, 3}, {2, 2, 3}, {3, 3, 1, 2}, {2, 0, 2}}; /* {count, reps...} */
        for (int k = 0; k < 4; k++) {
            int nr = (int)reps[k][0];
            CHECK_OK(zc_tile(x, reps[k] + 1, nr, &r));
            int nd = nr > 2 ? nr : 2;
            int64_t rr[3], ts[3], c[3];
            for (int d = 0; d < nd; d++) {
                int kk = d - (nd - nr), ii = d - (nd - 2);
                rr[d] = kk >= 0 ? reps[k][1 + kk] : 1;
                ts[d] = (ii >= 0 ? shape[ii] : 1) * rr[d];
            }
            check_shape(r, nd, ts);
            double *T = calc(r, &n);
            CHECK(n == nelem(nd, ts));
            for (int64_t i = 0; i < n; i++) {
                unravel(i, nd, ts, c);
                CHECK(T[i] == X[(c[nd - 2] % 5) * 4 + c[nd - 1] % 4]);
            }
            free(T);
            zc_array_release(r);
        }
        CHECK_ERR(zc_tile(x, (int64_t[]){2, -1}, 2, &bad), ZC_EINVAL, "reps[1] is -1");
        /* take: unsorted, repeated and negative indices, along each axis and flattened */
        int64_t idx[7] = {4, 0, -1, 2, 2, 1, -5};
        CHECK_OK(zc_take(x, idx, 7, 0, &r));
        int64_t ts0[2] = {7, 4};
        check_shape(r, 2, ts0);
        double *T0 = calc(r, &n);
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 4; j++) CHECK(T0[i * 4 + j] == X[((idx[i] + 5) % 5) * 4 + j]);
        zc_array_release(r);
        int64_t idx1[5] = {3, -4, 3, 2, 0};
        CHECK_OK(zc_take(x, idx1, 5, -1, &r));
        double *T1 = calc(r, &n);
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++) CHECK(T1[i * 5 + j] == X[i * 4 + (idx1[j] + 4) % 4]);
        zc_array_release(r);
        int64_t idxf[4] = {19, 0, 7, -2};
        CHECK_OK(zc_take(x, idxf, 4, ZC_AXIS_NONE, &r));
        double *TF = calc(r, &n);
        CHECK(TF[0] == X[19] && TF[1] == X[0] && TF[2] == X[7] && TF[3] == X[18]);
        zc_array_release(r);
        CHECK_ERR(zc_take(x, (int64_t[]){1, 5}, 2, 0, &bad), ZC_EINVAL, "index 5 (position 1) is out of bounds for axis 0 of size 5");
        CHECK_ERR(zc_take(x, idx, 1, 2, &bad), ZC_EINVAL, "take: axis 2");
        free(X); free(RF); free(T0); free(T1); free(TF);
        zc_array_release(x);
    }
}

TEST(take_scattered_indices_pull_in_clusters)
{
    /* indices far apart along a long axis: each region pulls clusters no wider
     * than itself, so memory follows the region, not the spread of indices */
    int64_t shape[1] = {200000}, chunks[1] = {4096};
    zc_array *x = iota(1, shape, chunks), *t;
    int64_t idx[64];
    for (int i = 0; i < 64; i++) idx[i] = (int64_t)((i * 7919) % 64) * 3121 + (i % 3);
    CHECK_OK(zc_take(x, idx, 64, 0, &t));
    int64_t n, *T = calc(t, &n);
    for (int i = 0; i < 64; i++) CHECK(T[i] == idx[i]);
    free(T);
    /* projected like a plain 64-element slice (plus the pairs and the clusters), not 200000 × 8 */
    zc_array *sl;
    zc_index ix = {ZC_IDX_SLICE, 0, 64, 1, 1, 1, 0};
    CHECK_OK(zc_getitem(x, &ix, 1, &sl));
    json_int_t proj[2];
    zc_array *both[2] = {t, sl};
    for (int k = 0; k < 2; k++) {
        zc_spec s = spec_mem(64);
        char *json;
        CHECK_OK(zc_plan_json(&s, 1, &both[k], NULL, &json));
        json_error_t err;
        json_t *doc = json_loads(json, 0, &err);
        json_t *op = json_array_get(json_object_get(doc, "operations"), 0);
        proj[k] = json_integer_value(json_object_get(op, "projected_mem"));
        CHECK(strstr(json_string_value(json_object_get(op, "name")), k ? "getitem" : "take") != NULL);
        json_decref(doc);
        zc_free(json);
    }
    CHECK(proj[0] <= proj[1] + 64 * 24);
    zc_array_release(sl);
    zc_array_release(t);
    zc_array_release(x);
}

TEST(diff_along_axes)
{
    int64_t shape[2] = {6, 8}, chunks[2] = {4, 3};
    zc_array *x = source(0, 2, shape, chunks, NULL, 17), *d, *bad;
    int64_t n;
    double *X = calc(x, &n);
    for (int axis = 0; axis < 2; axis++)
        for (int order = 0; order < 4; order++) {
            CHECK_OK(zc_diff(x, axis == 0 ? 0 : -1, order, NULL, NULL, &d));
            int64_t ds[2] = {6 - (axis == 0 ? order : 0), 8 - (axis == 1 ? order : 0)};
            check_shape(d, 2, ds);
            double *D = calc(d, &n);
            /* reference: repeated differences in a copy */
            double ref[48];
            memcpy(ref, X, sizeof ref);
            int64_t rows = 6, cols = 8;
            for (int o = 0; o < order; o++) {
                double nx[48];
                int64_t r2 = rows - (axis == 0), c2 = cols - (axis == 1);
                for (int i = 0; i < r2; i++)
                    for (int j = 0; j < c2; j++)
                        nx[i * c2 + j] = axis == 0 ? ref[(i + 1) * cols + j] - ref[i * cols + j]
                                                   : ref[i * cols + j + 1] - ref[i * cols + j];
                memcpy(ref, nx, sizeof(double) * (size_t)(r2 * c2));
                rows = r2;
                cols = c2;
            }
            for (int64_t i = 0; i < n; i++) CHECK(fabs(D[i] - ref[i]) < 1e-12);
            free(D);
            zc_array_release(d);
        }
    /* prepend a 0-d value and append a row; bool arrays differ by not_equal */
    zc_array *zero, *last, *b;
    CHECK_OK(zc_full(0, NULL, NULL, ZC_FLOAT64, 0.5, &zero));
    zc_index li[1] = {{ZC_IDX_SLICE, -1, 0, 1, 1, 0, 0}};
    CHECK_OK(zc_getitem(x, li, 1, &last));
    CHECK_OK(zc_diff(x, 0, 1, zero, last, &d));
    int64_t ds[2] = {7, 8};
    check_shape(d, 2, ds);
    double *D = calc(d, &n);
    for (int j = 0; j < 8; j++) {
        CHECK(D[j] == X[j] - 0.5);
        CHECK(D[6 * 8 + j] == 0);
        for (int i = 1; i < 6; i++) CHECK(D[i * 8 + j] == X[i * 8 + j] - X[(i - 1) * 8 + j]);
    }
    uint8_t bv[6] = {1, 1, 0, 1, 0, 0};
    int64_t bs = 6, bc = 4;
    zc_array *bd;
    CHECK_OK(zc_asarray(bv, ZC_BOOL, 1, &bs, &bc, &b));
    CHECK_OK(zc_diff(b, 0, 1, NULL, NULL, &bd));
    zc_dtype dt;
    CHECK_OK(zc_array_info(bd, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_BOOL);
    uint8_t *BD = calc(bd, &n);
    for (int i = 0; i < 5; i++) CHECK(BD[i] == (bv[i + 1] != bv[i]));
    CHECK_ERR(zc_diff(x, 2, 1, NULL, NULL, &bad), ZC_EINVAL, "diff: axis 2");
    CHECK_ERR(zc_diff(x, 0, -1, NULL, NULL, &bad), ZC_EINVAL, "order n must be >= 0 (got -1)");
    CHECK_ERR(zc_diff(zero, 0, 1, NULL, NULL, &bad), ZC_EINVAL, "at least 1 dimension");
    CHECK_ERR(zc_diff(x, 0, 1, b, NULL, &bad), ZC_EINVAL, "diff: concat");
    free(X); free(D); free(BD);
    zc_array_release(bd); zc_array_release(b); zc_array_release(d); zc_array_release(last);
    zc_array_release(zero); zc_array_release(x);
}

TEST(tril_triu_and_like)
{
    int64_t shape[3] = {2, 5, 7}, chunks[3] = {1, 2, 3};
    zc_array *x = source(0, 3, shape, chunks, NULL, 19), *t, *bad;
    int64_t n;
    double *X = calc(x, &n);
    for (int64_t k = -2; k <= 2; k++)
        for (int lower = 0; lower < 2; lower++) {
            CHECK_OK((lower ? zc_tril : zc_triu)(x, k, &t));
            int64_t chk[3];
            CHECK_OK(zc_array_info(t, NULL, NULL, chk, NULL));
            CHECK(chk[0] == 1 && chk[1] == 2 && chk[2] == 3);
            double *T = calc(t, &n);
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 5; i++)
                    for (int j = 0; j < 7; j++) {
                        int keep = lower ? j - i <= k : j - i >= k;
                        double v = X[(b * 5 + i) * 7 + j];
                        CHECK(T[(b * 5 + i) * 7 + j] == (keep ? v : 0));
                    }
            free(T);
            zc_array_release(t);
        }
    int32_t iv[6] = {1, 2, 3, 4, 5, 6};
    zc_array *xi;
    CHECK_OK(zc_asarray(iv, ZC_INT32, 2, (int64_t[]){2, 3}, NULL, &xi));
    CHECK_OK(zc_triu(xi, 1, &t));
    zc_dtype dt;
    CHECK_OK(zc_array_info(t, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_INT32);
    int32_t *TI = calc(t, &n);
    int32_t want[6] = {0, 2, 3, 0, 0, 6};
    CHECK(!memcmp(TI, want, sizeof want));
    free(TI);
    zc_array_release(t);
    zc_array *v;
    CHECK_OK(zc_arange(0, 4, 1, ZC_FLOAT64, 0, &v));
    CHECK_ERR(zc_tril(v, 0, &bad), ZC_EINVAL, "tril: the array has 1 dimension");
    /* *_like: shape, chunks, dtype */
    zc_array *z, *o, *e, *f;
    CHECK_OK(zc_zeros_like(x, ZC_DTYPE_INVALID, &z));
    CHECK_OK(zc_ones_like(x, ZC_INT16, &o));
    CHECK_OK(zc_empty_like(xi, ZC_DTYPE_INVALID, &e));
    CHECK_OK(zc_full_like(xi, 7.5, ZC_FLOAT32, &f));
    int64_t cz[3];
    CHECK_OK(zc_array_info(o, NULL, NULL, cz, &dt));
    CHECK(dt == ZC_INT16 && cz[1] == 2 && cz[2] == 3);
    check_shape(o, 3, shape);
    double *Z = calc(z, &n);
    for (int64_t i = 0; i < n; i++) CHECK(Z[i] == 0);
    int16_t *O = calc(o, &n);
    for (int64_t i = 0; i < n; i++) CHECK(O[i] == 1);
    int32_t *E = calc(e, &n);
    CHECK(n == 6);
    float *F = calc(f, &n);
    for (int64_t i = 0; i < n; i++) CHECK(F[i] == 7.5f);
    free(X); free(Z); free(O); free(E); free(F);
    zc_array_release(z); zc_array_release(o); zc_array_release(e); zc_array_release(f);
    zc_array_release(v); zc_array_release(xi); zc_array_release(x);
}

/* ---- cumulative sum and product ---- */

static int64_t *rand_ints(int64_t n, uint64_t seed, int64_t lo, int64_t hi)
{
    int64_t *v = malloc(sizeof *v * (size_t)n);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        v[i] = lo + (int64_t)(s % (uint64_t)(hi - lo + 1));
    }
    return v;
}

TEST(cumulative_sum_prod_exact_for_ints)
{
    int64_t shape[2] = {37, 23}, n = 37 * 23;
    int64_t *v64 = rand_ints(n, 1, -1000, 1000);
    int32_t v32[37 * 23];
    for (int64_t i = 0; i < n; i++) v32[i] = (int32_t)v64[i];
    int64_t chunkings[][2] = {{5, 4}, {37, 23}, {1, 7}, {12, 1}};
    int64_t *first[2][2][2] = {{{0}}};
    for (int c = 0; c < 4; c++) {
        zc_array *x;
        CHECK_OK(zc_asarray(v32, ZC_INT32, 2, shape, chunkings[c], &x));
        for (int axis = 0; axis < 2; axis++)
            for (int init = 0; init < 2; init++)
                for (int prod = 0; prod < 2; prod++) {
                    zc_array *r;
                    CHECK_OK((prod ? zc_cumulative_prod : zc_cumulative_sum)(x, axis - 2 * (c & 1), ZC_DTYPE_INVALID,
                                                                              init, &r));
                    zc_dtype dt;
                    int64_t rs[2] = {37 + (axis == 0 ? init : 0), 23 + (axis == 1 ? init : 0)}, m;
                    check_shape(r, 2, rs);
                    CHECK_OK(zc_array_info(r, NULL, NULL, NULL, &dt));
                    CHECK(dt == ZC_INT64);
                    int64_t *R = calc(r, &m);
                    /* reference: wrapping 64-bit arithmetic, like NumPy */
                    for (int i = 0; i < rs[0]; i++)
                        for (int j = 0; j < rs[1]; j++) {
                            uint64_t acc = prod ? 1 : 0;
                            int len = axis == 0 ? i - init + 1 : j - init + 1;
                            for (int t = 0; t < len; t++) {
                                int64_t e = axis == 0 ? v32[t * 23 + j] : v32[i * 23 + t];
                                acc = prod ? acc * (uint64_t)e : acc + (uint64_t)e;
                            }
                            CHECK(R[i * rs[1] + j] == (int64_t)acc);
                        }
                    /* the same bytes for every chunking */
                    if (!first[axis][init][prod]) first[axis][init][prod] = R;
                    else {
                        CHECK(!memcmp(first[axis][init][prod], R, sizeof(int64_t) * (size_t)m));
                        free(R);
                    }
                    zc_array_release(r);
                }
        zc_array_release(x);
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int p = 0; p < 2; p++) free(first[a][b][p]);
    free(v64);
}

TEST(cumulative_long_axis_many_blocks)
{
    /* 8197 blocks of 1 along the axis: totals of totals of totals (3 levels) */
    int64_t len = 2 * 64 * 64 + 5, ch = 1;
    int64_t *v = rand_ints(len, 2, -(1ll << 40), 1ll << 40);
    v[17] = INT64_MAX; /* wraps, exactly like NumPy */
    zc_array *x, *r;
    CHECK_OK(zc_asarray(v, ZC_INT64, 1, &len, &ch, &x));
    CHECK_OK(zc_cumulative_sum(x, 0, ZC_DTYPE_INVALID, 1, &r));
    char *json;
    zc_spec s = spec_mem(64);
    CHECK_OK(zc_plan_json(&s, 1, &r, NULL, &json));
    int totals = 0;
    for (char *p = json; (p = strstr(p, "\"kind\": \"cumulative_sum_totals\"")); p++) totals++;
    CHECK(totals == 3);
    zc_free(json);
    int64_t m, *R = calc(r, &m); /* 8198 chunks */
    CHECK(m == len + 1);
    uint64_t acc = 0;
    CHECK(R[0] == 0);
    for (int64_t i = 0; i < len; i++) {
        acc += (uint64_t)v[i];
        CHECK(R[i + 1] == (int64_t)acc);
    }
    free(R);
    zc_array_release(r);
    /* a strided consumer of an unmaterialized scan, and the scan fused into an expression */
    zc_array *c2, *sc, *two, *dbl;
    int64_t big = 700;
    CHECK_OK(zc_rechunk(x, &big, &c2));
    CHECK_OK(zc_cumulative_sum(c2, 0, ZC_DTYPE_INVALID, 0, &r));
    zc_index ix = {ZC_IDX_SLICE, 3, 0, 97, 1, 0, 0};
    CHECK_OK(zc_getitem(r, &ix, 1, &sc));
    CHECK_OK(zc_scalar(2, 1, &two));
    CHECK_OK(zc_elementwise("multiply", 2, (zc_array *[]){sc, two}, &dbl));
    int64_t *D = calc(dbl, &m);
    acc = 0;
    for (int64_t i = 0, t = 0; i < len; i++) {
        acc += (uint64_t)v[i];
        if (i >= 3 && (i - 3) % 97 == 0) CHECK(D[t++] == (int64_t)(2 * acc));
    }
    free(D);
    zc_array_release(dbl); zc_array_release(two); zc_array_release(sc); zc_array_release(r);
    zc_array_release(c2); zc_array_release(x);
    free(v);
}

TEST(cumulative_dtypes)
{
    /* uint8 → uint64 by default; dtype given: int8 wraps at 8 bits; floats; complex */
    uint8_t u[10] = {200, 100, 50, 255, 1, 0, 3, 9, 77, 250};
    int64_t len = 10, ch = 3;
    zc_array *x, *r, *bad;
    CHECK_OK(zc_asarray(u, ZC_UINT8, 1, &len, &ch, &x));
    CHECK_OK(zc_cumulative_sum(x, ZC_AXIS_NONE, ZC_DTYPE_INVALID, 0, &r));
    zc_dtype dt;
    CHECK_OK(zc_array_info(r, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_UINT64);
    int64_t m;
    uint64_t *U = calc(r, &m), a = 0;
    for (int i = 0; i < 10; i++) CHECK(U[i] == (a += u[i]));
    free(U);
    zc_array_release(r);
    CHECK_OK(zc_cumulative_sum(x, 0, ZC_INT8, 0, &r));
    int8_t *I8 = calc(r, &m);
    int8_t s8 = 0;
    for (int i = 0; i < 10; i++) {
        s8 = (int8_t)(uint8_t)((uint8_t)s8 + u[i]);
        CHECK(I8[i] == s8);
    }
    free(I8);
    zc_array_release(r);
    float f[10];
    for (int i = 0; i < 10; i++) f[i] = 0.5f + 0.25f * (float)i;
    zc_array *xf;
    CHECK_OK(zc_asarray(f, ZC_FLOAT32, 1, &len, &ch, &xf));
    CHECK_OK(zc_cumulative_prod(xf, -1, ZC_DTYPE_INVALID, 1, &r));
    CHECK_OK(zc_array_info(r, NULL, NULL, NULL, &dt));
    CHECK(dt == ZC_FLOAT32);
    float *F = calc(r, &m);
    double p = 1;
    CHECK(m == 11 && F[0] == 1.0f);
    for (int i = 0; i < 10; i++) {
        p *= f[i];
        CHECK(fabs(F[i + 1] - p) <= 1e-6 * fabs(p));
    }
    free(F);
    zc_array_release(r);
    double cv[8] = {1, 1, 0, 2, -1, 0.5, 3, -2}; /* 4 complex128 values */
    int64_t cl = 4, cc = 3;
    zc_array *xc;
    CHECK_OK(zc_asarray(cv, ZC_COMPLEX128, 1, &cl, &cc, &xc));
    CHECK_OK(zc_cumulative_prod(xc, 0, ZC_DTYPE_INVALID, 0, &r));
    double *C = calc(r, &m), re = 1, im = 0;
    for (int i = 0; i < 4; i++) {
        double nr = re * cv[2 * i] - im * cv[2 * i + 1], ni = re * cv[2 * i + 1] + im * cv[2 * i];
        re = nr;
        im = ni;
        CHECK(fabs(C[2 * i] - re) < 1e-12 && fabs(C[2 * i + 1] - im) < 1e-12);
    }
    free(C);
    zc_array_release(r);
    CHECK_ERR(zc_cumulative_sum(xc, 0, ZC_FLOAT64, 0, &bad), ZC_EINVAL, "cannot accumulate complex128 values as float64");
    CHECK_ERR(zc_cumulative_sum(x, 0, ZC_BOOL, 0, &bad), ZC_EINVAL, "dtype bool");
    CHECK_ERR(zc_cumulative_sum(x, 1, ZC_DTYPE_INVALID, 0, &bad), ZC_EINVAL, "cumulative_sum: axis 1");
    CHECK_ERR(zc_cumulative_prod(x, 0, ZC_DTYPE_INVALID, 2, &bad), ZC_EINVAL, "include_initial");
    zc_array *x2;
    CHECK_OK(zc_full(2, (int64_t[]){2, 2}, NULL, ZC_INT32, 1, &x2));
    CHECK_ERR(zc_cumulative_sum(x2, ZC_AXIS_NONE, ZC_DTYPE_INVALID, 0, &bad), ZC_EINVAL, "axis is required");
    zc_array_release(x2); zc_array_release(xc); zc_array_release(xf); zc_array_release(x);
}

/* sum(a): a reduction task holds its accumulators and one pulled block of a, so
 * its measured peak is the memory of computing a's regions through the fused
 * nodes (no output block to encode): the projection must cover it (every stage:
 * check_contract), and not be far above it. */
static void check_tight(zc_array *a, const char *what)
{
    zc_array *s;
    CHECK_OK(zc_reduce("sum", a, NULL, 0, 0, 0, &s));
    double v;
    zc_spec sp = spec_mem(256);
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&sp, s, &v, sizeof v, &rep));
    json_t *doc = report_json_doc(rep);
    check_contract(doc, what);
    size_t i;
    json_t *op;
    int reduced = 0;
    json_array_foreach(json_object_get(doc, "operations"), i, op) {
        json_int_t proj = json_integer_value(json_object_get(op, "projected_mem"));
        json_int_t meas = json_integer_value(json_object_get(op, "measured_mem"));
        const char *name = json_string_value(json_object_get(op, "name")), *fused = json_string_value(json_object_get(op, "fused"));
        if (strcmp(json_string_value(json_object_get(op, "kind")), "sum")) continue;
        if (!strstr(name, "(round 1)") && strstr(name, "round")) continue; /* later rounds merge accumulators */
        reduced++;
        if (proj > 2 * meas + (256 << 10))
            fprintf(stderr, "%s: %s [%s] projected %lld, measured %lld\n", what, name, fused, (long long)proj,
                    (long long)meas);
        CHECK(proj <= 2 * meas + (256 << 10));
    }
    CHECK(reduced >= 1);
    json_decref(doc);
    zc_array_release(s);
}

TEST(memory_within_projection_on_large_blocks)
{
    /* blocks of 0.25-1.5 MB, ragged: the temporaries of the new kinds dominate fixed overheads */
    int64_t shape[2] = {512, 1024}, chunks[2] = {96, 1024};
    zc_array *x, *t;
    CHECK_OK(zc_random_uniform(31, 2, shape, chunks, ZC_FLOAT64, 0, 1, &x));
    CHECK_OK(zc_matrix_transpose(x, &t));
    int64_t rs1[2] = {1024, 512}, rs2[3] = {64, 8, 1024}, rs3[2] = {256, 2048}, to[3] = {3, 512, 1024}, reps[2] = {2, 1};
    int64_t shift = 100, idx[300];
    for (int i = 0; i < 300; i++) idx[i] = (i * 337) % 1024;
    int ax0 = 0;
    struct { const char *what; int rc; zc_array *a; } ops[13];
    int n = 0;
#define OP(name, call) do { ops[n].what = name; ops[n].a = NULL; ops[n].rc = (call); n++; } while (0)
    OP("reshape merge/split", zc_reshape(x, 2, rs1, &ops[n].a));
    OP("reshape 3-d", zc_reshape(t, 3, rs2, &ops[n].a));
    OP("reshape of a transpose", zc_reshape(t, 2, rs3, &ops[n].a));
    OP("permute", zc_matrix_transpose(x, &ops[n].a));
    OP("flip", zc_flip(x, NULL, 0, &ops[n].a));
    OP("broadcast", zc_broadcast_to(x, 3, to, &ops[n].a));
    OP("concat", zc_concat(2, (zc_array *[]){t, t}, 1, &ops[n].a));
    OP("take", zc_take(x, idx, 300, 1, &ops[n].a));
    OP("roll", zc_roll(x, &shift, 1, &ax0, 1, &ops[n].a));
    OP("repeat", zc_repeat(x, 3, 0, &ops[n].a));
    OP("tile", zc_tile(x, reps, 2, &ops[n].a));
    OP("cumsum 0", zc_cumulative_sum(x, 0, ZC_DTYPE_INVALID, 0, &ops[n].a));
    OP("cumsum 1", zc_cumulative_sum(t, 1, ZC_DTYPE_INVALID, 1, &ops[n].a));
#undef OP
    for (int k = 0; k < n; k++) {
        CHECK(ops[k].rc == 0);
        if (ops[k].a) check_tight(ops[k].a, ops[k].what);
        zc_array_release(ops[k].a);
    }
    zc_array_release(t);
    zc_array_release(x);
}

TEST(reshape_of_huge_stored_chunks_is_refused)
{
    /* a stored array with one 100 MB chunk, reshaped and pulled in small regions:
     * every region decodes the chunk, so the plan is refused before any work */
    zc_store *st;
    CHECK_OK(zc_store_open("memory://manip-refuse", 0, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = 3; o.shape[1] = 1 << 22;
    o.chunks[0] = 3; o.chunks[1] = 1 << 22;
    o.dtype = ZC_FLOAT64;
    zc_zarr *z;
    CHECK_OK(zc_zarr_create(st, "big", &o, &z));
    zc_zarr_close(z);
    zc_array *a, *r, *y, *sum;
    CHECK_OK(zc_from_zarr(st, "big", &a));
    int64_t to[2] = {1 << 22, 3}, yc[2] = {4096, 3};
    CHECK_OK(zc_reshape(a, 2, to, &r));
    CHECK_OK(zc_full(2, to, yc, ZC_FLOAT64, 1, &y));
    CHECK_OK(zc_elementwise("add", 2, (zc_array *[]){r, y}, &sum));
    zc_spec s = spec_mem(64);
    char *json;
    CHECK_ERR(zc_plan_json(&s, 1, &sum, NULL, &json), ZC_EMEMBOUND, "reshape");
    zc_array_release(sum); zc_array_release(y); zc_array_release(r); zc_array_release(a);
    zc_store_close(st);
}

TEST(dtype_functions)
{
    zc_dtype t;
    CHECK_OK(zc_result_type(2, (zc_dtype[]){ZC_INT8, ZC_UINT8}, &t));
    CHECK(t == ZC_INT16);
    CHECK_OK(zc_result_type(3, (zc_dtype[]){ZC_BOOL, ZC_INT32, ZC_FLOAT32}, &t));
    CHECK(t == ZC_FLOAT64);
    CHECK_OK(zc_result_type(2, (zc_dtype[]){ZC_INT64, ZC_UINT64}, &t));
    CHECK(t == ZC_FLOAT64);
    CHECK_OK(zc_result_type(2, (zc_dtype[]){ZC_FLOAT32, ZC_COMPLEX64}, &t));
    CHECK(t == ZC_COMPLEX64);
    CHECK_OK(zc_result_type(1, (zc_dtype[]){ZC_UINT16}, &t));
    CHECK(t == ZC_UINT16);
    CHECK_ERR(zc_result_type(2, (zc_dtype[]){ZC_INT8, ZC_BYTES}, &t), ZC_EINVAL, "result_type");
    CHECK_ERR(zc_result_type(0, NULL, &t), ZC_EINVAL, "no dtypes");
    int ok;
    struct { zc_dtype a, b; int want; } casts[] = {
        {ZC_INT8, ZC_INT16, 1}, {ZC_INT16, ZC_INT8, 0}, {ZC_UINT8, ZC_INT16, 1}, {ZC_UINT64, ZC_INT64, 0},
        {ZC_INT64, ZC_FLOAT64, 1}, {ZC_INT16, ZC_FLOAT16, 0}, {ZC_INT8, ZC_FLOAT16, 1}, {ZC_BOOL, ZC_UINT8, 1},
        {ZC_FLOAT64, ZC_COMPLEX64, 0}, {ZC_FLOAT32, ZC_COMPLEX64, 1}, {ZC_COMPLEX64, ZC_FLOAT64, 0},
        {ZC_FLOAT32, ZC_INT64, 0}};
    for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
        CHECK_OK(zc_can_cast(casts[i].a, casts[i].b, &ok));
        if (ok != casts[i].want) fprintf(stderr, "can_cast(%s, %s) = %d\n", zc_dtype_name(casts[i].a), zc_dtype_name(casts[i].b), ok);
        CHECK(ok == casts[i].want);
    }
    CHECK_ERR(zc_can_cast(ZC_UNICODE, ZC_INT8, &ok), ZC_EINVAL, "can_cast");
    zc_finfo_t fi;
    CHECK_OK(zc_finfo(ZC_FLOAT16, &fi));
    CHECK(fi.bits == 16 && fi.eps == 0.0009765625 && fi.max == 65504 && fi.min == -65504 && fi.smallest_normal == 6.103515625e-05);
    CHECK_OK(zc_finfo(ZC_COMPLEX64, &fi));
    CHECK(fi.bits == 32 && fi.dtype == ZC_FLOAT32 && fi.eps == 0x1p-23);
    CHECK_OK(zc_finfo(ZC_FLOAT64, &fi));
    CHECK(fi.eps == 0x1p-52 && fi.smallest_normal == 0x1p-1022);
    CHECK_ERR(zc_finfo(ZC_INT32, &fi), ZC_EINVAL, "finfo: int32 is not a floating-point dtype");
    zc_iinfo_t ii;
    CHECK_OK(zc_iinfo(ZC_INT8, &ii));
    CHECK(ii.bits == 8 && ii.min == -128 && ii.max == 127);
    CHECK_OK(zc_iinfo(ZC_UINT64, &ii));
    CHECK(ii.min == 0 && ii.max == UINT64_MAX);
    CHECK_OK(zc_iinfo(ZC_INT64, &ii));
    CHECK(ii.min == INT64_MIN && ii.max == (uint64_t)INT64_MAX);
    CHECK_ERR(zc_iinfo(ZC_BOOL, &ii), ZC_EINVAL, "iinfo: bool");
    CHECK_ERR(zc_iinfo(ZC_FLOAT32, &ii), ZC_EINVAL, "not an integer dtype");
}

TEST(plans_with_new_kinds_run_from_json)
{
    /* every new node kind through zc_plan_save / zc_plan_run, against zc_compute_buffer */
    char dir[] = "/tmp/zc_manip_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    int64_t shape[2] = {9, 6}, chunks[2] = {4, 4};
    zc_array *x, *y, *r, *p, *c, *g, *f, *s, *t;
    CHECK_OK(zc_random_uniform(3, 2, shape, chunks, ZC_FLOAT64, 0, 1, &x));
    int64_t to[3] = {3, 3, 6};
    int perm[3] = {2, 0, 1}, ax1 = 1;
    int64_t sh = 2, idx[4] = {0, 5, 5, 1};
    CHECK_OK(zc_reshape(x, 3, to, &r));        /* (3, 3, 6) */
    CHECK_OK(zc_permute_dims(r, perm, 3, &p)); /* (6, 3, 3) */
    CHECK_OK(zc_reshape(p, 2, (int64_t[]){6, 9}, &y));
    CHECK_OK(zc_matrix_transpose(y, &t));      /* (9, 6) */
    CHECK_OK(zc_concat(3, (zc_array *[]){x, t, x}, 1, &c)); /* (9, 18) */
    CHECK_OK(zc_take(c, idx, 4, 0, &g));       /* (4, 18) */
    CHECK_OK(zc_roll(g, &sh, 1, &ax1, 1, &f));
    CHECK_OK(zc_cumulative_sum(f, 1, ZC_DTYPE_INVALID, 1, &s)); /* (4, 19) */
    int64_t n;
    double *want = calc(s, &n);
    zc_spec spec = spec_mem(64);
    char work[600], plan[600];
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    spec.work_dir = work;
    zc_target tg = {st, "out", "none", 3};
    CHECK_OK(zc_plan_save(&spec, 1, &s, &tg, plan));
    FILE *fp = fopen(plan, "r");
    char text[65536] = "";
    size_t len = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
    text[len] = 0;
    if (fp) fclose(fp);
    CHECK(strstr(text, "\"reshape\"") && strstr(text, "\"view\"") && strstr(text, "\"concat\"") &&
          strstr(text, "\"gather\"") && strstr(text, "\"scan\""));
    char *json;
    CHECK_OK(zc_plan_json(&spec, 1, &s, NULL, &json));
    int nops = 0;
    for (char *q = json; (q = strstr(q, "\"op\":")); q++) nops++;
    zc_free(json);
    for (int op = 0; op < nops; op++) CHECK_OK(zc_plan_run(plan, op, 0, -1, 1));
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    double *got = malloc(sizeof(double) * (size_t)n);
    CHECK_OK(zc_zarr_read(z, NULL, got, sizeof(double) * (size_t)n));
    CHECK(n == 4 * 19 && !memcmp(got, want, sizeof(double) * (size_t)n));
    zc_zarr_close(z);
    /* a malformed node is refused, not followed */
    char *k = strstr(text, "\"kind\": \"gather\"");
    if (k) {
        char *m = strstr(k, "\"mode\": ");
        if (m) m[8] = '9';
        fp = fopen(plan, "w");
        fputs(text, fp);
        fclose(fp);
        CHECK_ERR(zc_plan_run(plan, 0, 0, -1, 1), ZC_EFORMAT, "checksum");
        CHECK(plan_resign(plan) == 0);
        CHECK_ERR(zc_plan_run(plan, 0, 0, -1, 1), ZC_EFORMAT, "gather node: bad mode");
    }
    free(got);
    free(want);
    zc_array *all[] = {x, y, r, p, c, g, f, s, t};
    for (int i = 0; i < 9; i++) zc_array_release(all[i]);
    zc_store_close(st);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(empty_and_zero_d_arrays)
{
    /* 0-d: reshape to (1, 1) and back, expand, broadcast, squeeze to 0-d */
    zc_array *s, *r, *b, *e, *q, *z0;
    CHECK_OK(zc_full(0, NULL, NULL, ZC_INT32, 7, &s));
    int64_t one[2] = {1, 1}, to[2] = {2, 3};
    CHECK_OK(zc_reshape(s, 2, one, &r));
    check_shape(r, 2, one);
    CHECK_OK(zc_squeeze(r, NULL, 0, &q));
    check_shape(q, 0, NULL);
    CHECK_OK(zc_reshape(r, 0, NULL, &z0));
    CHECK_OK(zc_expand_dims(s, 0, &e));
    CHECK_OK(zc_broadcast_to(s, 2, to, &b));
    int64_t n;
    int32_t *Q = calc(q, &n), *Z = calc(z0, &n), *E = calc(e, &n), *B = calc(b, &n);
    CHECK(Q[0] == 7 && Z[0] == 7 && E[0] == 7);
    for (int i = 0; i < 6; i++) CHECK(B[i] == 7);
    zc_array *cs, *bad;
    CHECK_OK(zc_cumulative_sum(s, ZC_AXIS_NONE, ZC_DTYPE_INVALID, 1, &cs)); /* flattened: (1,) → (2,) */
    int64_t *CS = calc(cs, &n);
    CHECK(n == 2 && CS[0] == 0 && CS[1] == 7);
    CHECK_ERR(zc_flip(s, (int[]){0}, 1, &bad), ZC_EINVAL, "flip: axis 0 is out of range for an array of 0 dimensions");
    free(Q); free(Z); free(E); free(B); free(CS);
    zc_array_release(cs); zc_array_release(s); zc_array_release(r); zc_array_release(b); zc_array_release(e);
    zc_array_release(q); zc_array_release(z0);
    /* empty axes: every function keeps working and computes nothing */
    int64_t sh[2] = {0, 4}, ch[2] = {3, 2};
    zc_array *x, *outs[10];
    CHECK_OK(zc_full(2, sh, ch, ZC_FLOAT64, 1, &x));
    int64_t rs[2] = {4, 0}, m1 = -1, shift = 3, idx0 = 0, rep[2] = {2, 2};
    int ax = 0;
    CHECK_OK(zc_reshape(x, 2, rs, &outs[0]));
    zc_array *flat;
    CHECK_OK(zc_reshape(x, 1, &m1, &flat)); /* like NumPy: (0,) */
    check_shape(flat, 1, (int64_t[]){0});
    zc_array_release(flat);
    CHECK_ERR(zc_reshape(x, 2, (int64_t[]){0, -1}, &bad), ZC_EINVAL, "size 0"); /* -1 is ambiguous */
    CHECK_OK(zc_flip(x, NULL, 0, &outs[1]));
    CHECK_OK(zc_roll(x, &shift, 1, &ax, 1, &outs[2]));
    CHECK_OK(zc_repeat(x, 3, 0, &outs[3]));
    CHECK_OK(zc_tile(x, rep, 2, &outs[4]));
    CHECK_OK(zc_take(x, &idx0, 0, 0, &outs[5]));
    CHECK_OK(zc_cumulative_sum(x, 0, ZC_DTYPE_INVALID, 1, &outs[6]));
    CHECK_OK(zc_concat(2, (zc_array *[]){x, x}, 0, &outs[7]));
    CHECK_OK(zc_diff(x, 0, 1, NULL, NULL, &outs[8]));
    CHECK_OK(zc_matrix_transpose(x, &outs[9]));
    CHECK_ERR(zc_take(x, &idx0, 1, 0, &bad), ZC_EINVAL, "out of bounds for axis 0 of size 0");
    for (int k = 0; k < 10; k++) {
        int nd;
        int64_t osh[ZC_MAX_DIMS];
        CHECK_OK(zc_array_info(outs[k], &nd, osh, NULL, NULL));
        void *v = calc(outs[k], &n);
        CHECK(n == (k == 6 ? 4 : 0)); /* cumulative_sum with the initial 0: shape (1, 4) */
        if (k == 6) for (int i = 0; i < 4; i++) CHECK(((double *)v)[i] == 0);
        free(v);
        zc_array_release(outs[k]);
    }
    zc_array_release(x);
}

TEST(null_arguments_are_refused)
{
    zc_array *out, *x;
    CHECK_OK(zc_arange(0, 4, 1, ZC_INT64, 2, &x));
    CHECK_ERR(zc_reshape(NULL, 1, (int64_t[]){4}, &out), ZC_EINVAL, "reshape");
    CHECK_ERR(zc_permute_dims(x, NULL, 1, &out), ZC_EINVAL, "permute_dims");
    CHECK_ERR(zc_broadcast_to(x, 1, NULL, &out), ZC_EINVAL, "broadcast_to");
    CHECK_ERR(zc_concat(2, (zc_array *[]){x, NULL}, 0, &out), ZC_EINVAL, "array 1 is NULL");
    CHECK_ERR(zc_stack(1, (zc_array *[]){NULL}, 0, &out), ZC_EINVAL, "stack");
    CHECK_ERR(zc_take(x, NULL, 3, 0, &out), ZC_EINVAL, "take");
    CHECK_ERR(zc_take(x, NULL, -1, 0, &out), ZC_EINVAL, "take");
    CHECK_ERR(zc_tile(x, NULL, 1, &out), ZC_EINVAL, "tile");
    CHECK_ERR(zc_roll(x, NULL, 1, NULL, 0, &out), ZC_EINVAL, "roll");
    CHECK_ERR(zc_cumulative_sum(NULL, 0, ZC_DTYPE_INVALID, 0, &out), ZC_EINVAL, "cumulative_sum");
    CHECK_ERR(zc_full_like(NULL, 0, ZC_DTYPE_INVALID, &out), ZC_EINVAL, "full_like");
    CHECK_ERR(zc_finfo(ZC_FLOAT32, NULL), ZC_EINVAL, "finfo");
    zc_array_release(x);
}
