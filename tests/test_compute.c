/* tests/test_compute.c — the lazy-array engine: results against direct C
 * loops, plans (fusion, culling, multistage rechunk), the memory bound
 * (refusal before work; measured ≤ projected; process RSS on an array 16×
 * larger than allowed_mem), resume. NumPy comparisons over random expressions
 * live in tests/cli/eval.sh. */
#include <jansson.h>
#include <math.h>

#include "harness.h"

static double *values(zc_array *a, size_t *n)
{
    int nd;
    int64_t shape[ZC_MAX_DIMS];
    zc_array_info(a, &nd, shape, NULL, NULL);
    *n = 1;
    for (int d = 0; d < nd; d++) *n *= (size_t)shape[d];
    double *v = malloc(*n * sizeof(double) + 8);
    zc_spec s = spec_mem(256);
    zc_array *f;
    CHECK_OK(zc_astype(a, ZC_FLOAT64, &f));
    CHECK_OK(zc_compute_buffer(&s, f, v, *n * sizeof(double), NULL));
    zc_array_release(f);
    return v;
}

TEST(quadratic_mean_matches_loop)
{
    int64_t shape[3] = {40, 30, 20}, chunks[3] = {7, 30, 8};
    zc_array *u, *v;
    CHECK_OK(zc_random_uniform(1, 3, shape, chunks, ZC_FLOAT64, -1, 1, &u));
    CHECK_OK(zc_random_normal(2, 3, shape, chunks, ZC_FLOAT64, 0, 2, &v));
    zc_array *uv = binop("multiply", u, v), *m;
    int axis = 0;
    CHECK_OK(zc_reduce("mean", uv, &axis, 1, 0, 0, &m));
    size_t nu, nv, nm;
    double *U = values(u, &nu), *V = values(v, &nv), *M = values(m, &nm);
    CHECK(nm == 600);
    double err = 0;
    for (size_t j = 0; j < 600; j++) {
        double s = 0;
        for (size_t t = 0; t < 40; t++) s += U[t * 600 + j] * V[t * 600 + j];
        err = fmax(err, fabs(s / 40 - M[j]));
    }
    CHECK(err < 1e-12);
    free(U); free(V); free(M);
    zc_array_release(m); zc_array_release(uv); zc_array_release(u); zc_array_release(v);
}

TEST(random_is_chunk_independent)
{
    int64_t shape[2] = {33, 17}, c1[2] = {4, 5}, c2[2] = {33, 17};
    zc_array *a, *b;
    CHECK_OK(zc_random_normal(9, 2, shape, c1, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_random_normal(9, 2, shape, c2, ZC_FLOAT64, 0, 1, &b));
    size_t n;
    double *A = values(a, &n), *B = values(b, &n), mean = 0;
    CHECK(!memcmp(A, B, n * sizeof(double)));
    for (size_t i = 0; i < n; i++) mean += A[i];
    CHECK(fabs(mean / (double)n) < 0.2);
    free(A); free(B);
    zc_array_release(a); zc_array_release(b);
}

TEST(reductions_over_axes)
{
    int64_t shape[3] = {13, 9, 11}, chunks[3] = {2, 4, 3};
    zc_array *a;
    CHECK_OK(zc_random_uniform(5, 3, shape, chunks, ZC_FLOAT64, 0, 10, &a));
    size_t n;
    double *A = values(a, &n);
    const char *ops[] = {"sum", "min", "max", "mean", "var"};
    for (int o = 0; o < 5; o++) {
        for (int mask = 1; mask < 8; mask++) {
            int axes[3], na = 0;
            for (int d = 0; d < 3; d++)
                if (mask >> d & 1) axes[na++] = d;
            zc_array *r;
            CHECK_OK(zc_reduce(ops[o], a, axes, na, 1, 0, &r));
            size_t nr;
            double *R = values(r, &nr);
            /* reference: loop over output positions */
            int64_t os[3];
            for (int d = 0; d < 3; d++) os[d] = mask >> d & 1 ? 1 : shape[d];
            double worst = 0;
            for (int64_t i = 0; i < os[0]; i++)
                for (int64_t j = 0; j < os[1]; j++)
                    for (int64_t k = 0; k < os[2]; k++) {
                        double s = 0, mn = INFINITY, mx = -INFINITY, cnt = 0, s2 = 0;
                        for (int64_t x = 0; x < shape[0]; x++)
                            for (int64_t y = 0; y < shape[1]; y++)
                                for (int64_t z = 0; z < shape[2]; z++) {
                                    if ((!(mask & 1) && x != i) || (!(mask & 2) && y != j) || (!(mask & 4) && z != k))
                                        continue;
                                    double v = A[(x * shape[1] + y) * shape[2] + z];
                                    s += v; s2 += v * v; cnt++;
                                    mn = fmin(mn, v); mx = fmax(mx, v);
                                }
                        double want = o == 0 ? s : o == 1 ? mn : o == 2 ? mx : o == 3 ? s / cnt : s2 / cnt - (s / cnt) * (s / cnt);
                        double got = R[(i * os[1] + j) * os[2] + k];
                        worst = fmax(worst, fabs(got - want) / fmax(1, fabs(want)));
                    }
            if (worst > 1e-10) fprintf(stderr, "%s mask %d: error %g\n", ops[o], mask, worst);
            CHECK(worst < 1e-10);
            free(R);
            zc_array_release(r);
        }
    }
    free(A);
    zc_array_release(a);
}

TEST(getitem_and_broadcast)
{
    int64_t shape[2] = {20, 12}, chunks[2] = {6, 5};
    zc_array *a;
    CHECK_OK(zc_random_uniform(3, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    zc_index idx[3] = {{ZC_IDX_SLICE, 1, 20, 3, 1, 0, 0}, {ZC_IDX_NEWAXIS, 0, 0, 0, 0, 0, 0}, {ZC_IDX_INT, 0, 0, 0, 0, 0, -2}};
    zc_array *s;
    CHECK_OK(zc_getitem(a, idx, 3, &s));
    int nd;
    int64_t sh[ZC_MAX_DIMS];
    zc_array_info(s, &nd, sh, NULL, NULL);
    CHECK(nd == 2 && sh[0] == 7 && sh[1] == 1);
    size_t n, ns, nd2;
    double *A = values(a, &n), *S = values(s, &ns);
    for (int i = 0; i < 7; i++) CHECK(S[i] == A[(1 + 3 * i) * 12 + 10]);
    zc_index col[2] = {{ZC_IDX_SLICE, 0, 0, 1, 0, 0, 0}, {ZC_IDX_SLICE, 0, 0, 1, 0, 0, 0}};
    col[1] = (zc_index){ZC_IDX_SLICE, 10, 11, 1, 1, 1, 0};
    zc_array *c; /* a - a[:, 10:11] broadcasts over columns */
    CHECK_OK(zc_getitem(a, col, 2, &c));
    zc_array *d = binop("subtract", a, c);
    double *D = values(d, &nd2);
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 12; j++) CHECK(D[i * 12 + j] == A[i * 12 + j] - A[i * 12 + 10]);
    free(A); free(S); free(D);
    zc_array_release(c); zc_array_release(d); zc_array_release(s); zc_array_release(a);
}

TEST(plan_fuses_and_culls)
{
    int64_t shape[2] = {100, 100}, chunks[2] = {10, 100};
    zc_array *a, *b;
    CHECK_OK(zc_random_uniform(1, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_full(2, shape, chunks, ZC_FLOAT64, 2.0, &b));
    zc_array *x = binop("multiply", a, b), *y = binop("add", x, a), *z = binop("subtract", y, b);
    zc_array *unused = binop("divide", z, a); /* never computed: culled */
    zc_spec s = spec_mem(64);
    char *json;
    CHECK_OK(zc_plan_json(&s, 1, &z, NULL, &json));
    CHECK(strstr(json, "\"tasks\": 10") != NULL);         /* one stage of 10 blocks */
    CHECK(strstr(json, "subtract+add+multiply") != NULL);  /* fused into one pass */
    CHECK(strstr(json, "divide") == NULL);
    CHECK(strstr(json, "\"intermediate_bytes\": 0") != NULL);
    zc_free(json);
    /* a value used twice is materialized once */
    zc_array *m;
    CHECK_OK(zc_reduce("sum", y, NULL, 0, 0, 0, &m));
    zc_array *outs[2] = {z, m};
    CHECK_OK(zc_plan_json(&s, 2, outs, NULL, &json));
    CHECK(strstr(json, "\"op\": 2") != NULL); /* y, z, sum */
    zc_free(json);
    zc_array_release(m); zc_array_release(unused); zc_array_release(z); zc_array_release(y);
    zc_array_release(x); zc_array_release(a); zc_array_release(b);
}

TEST(memory_bound_refuses_before_work)
{
    int64_t shape[2] = {4000, 4000}, chunks[2] = {4000, 4000}; /* 128 MB blocks */
    zc_array *a;
    CHECK_OK(zc_random_uniform(1, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    zc_array *m;
    CHECK_OK(zc_reduce("sum", a, NULL, 0, 0, 0, &m));
    zc_spec s = spec_mem(100);
    zc_store *st;
    CHECK_OK(zc_store_open("memory://refuse", 0, &st));
    zc_target t = {st, "out", NULL, 3};
    CHECK_ERR(zc_compute(&s, 1, &m, &t, NULL), ZC_EMEMBOUND, "smaller chunks");
    /* the refusal's figures, exact: a block (128 MB) and more projected, the part of
     * allowed_mem tasks may use allowed; the message states them rounded */
    size_t projected = 0, allowed = 0;
    CHECK(zc_errmem(&projected, &allowed) == 1);
    CHECK(projected >= (size_t)128000000 && allowed == s.allowed_mem - s.reserved_mem);
    char figs[96];
    snprintf(figs, sizeof figs, "needs %.1f MB per task, more than the %.1f MB allowed", (double)projected / 1e6,
             (double)allowed / 1e6);
    CHECK(strstr(zc_errmsg(), figs) != NULL);
    CHECK(zc_errmem(NULL, NULL) == 1);
    /* the smallest allowed_mem that fits, said and given: planned again, it fits;
     * 2% less (beyond the search's 1%) does not */
    size_t fit = 0;
    CHECK(zc_errmem_fit(&fit) == 1);
    CHECK(fit > s.allowed_mem && fit % 100000 == 0);
    snprintf(figs, sizeof figs, "the smallest allowed_mem this plan fits is %.1f MB", (double)fit / 1e6);
    CHECK(strstr(zc_errmsg(), figs) != NULL);
    zc_spec s2 = spec_mem(100);
    s2.allowed_mem = fit; /* the same fixed reserve as the search had */
    zc_plan *zp;
    CHECK_OK(zc_plan_create(&s2, 1, &m, &t, &zp));
    zc_plan_free(zp);
    s2.allowed_mem = fit / 100 * 98;
    CHECK_ERR(zc_plan_create(&s2, 1, &m, &t, &zp), ZC_EMEMBOUND, "smallest allowed_mem");
    size_t fit2 = 0;
    CHECK(zc_errmem_fit(&fit2) == 1 && fit2 >= fit / 100 * 98);
    zc_node_kind kind;
    CHECK_OK(zc_node_kind_at(st, "out", &kind, NULL));
    CHECK(zc_errmem(&projected, NULL) == 0); /* the next call cleared them */
    CHECK(kind == ZC_NODE_NONE); /* nothing was written */
    zc_store_close(st);
    zc_array_release(m); zc_array_release(a);
}

TEST(multistage_rechunk)
{
    int64_t shape[3] = {60, 50, 40}, src[3] = {1, 50, 40}, dst[3] = {60, 5, 5};
    zc_array *a, *r;
    CHECK_OK(zc_random_uniform(4, 3, shape, src, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_rechunk(a, dst, &r));
    zc_spec s = spec_mem(1);
    s.allowed_mem = 700000; /* below one direct task: 60 source chunks of 16 KB per output chunk + bookkeeping */
    s.reserved_mem = 1; /* none (0 is automatic) */
    char *json = NULL;
    CHECK_OK(zc_plan_json(&s, 1, &r, NULL, &json));
    int stages = 0;
    for (char *p = json; p && (p = strstr(p, "\"rechunk\"")); p++) stages++;
    CHECK(stages >= 2);
    zc_free(json);
    size_t n;
    double *A = values(a, &n);
    zc_store *st;
    CHECK_OK(zc_store_open("memory://rechunk", 0, &st));
    zc_target t = {st, "out", "none", 3};
    zc_report *rep;
    CHECK_OK(zc_compute(&s, 1, &r, &t, &rep));
    char *rj;
    CHECK_OK(zc_report_json(rep, &rj));
    zc_free(rj);
    zc_report_free(rep);
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    zc_zarr_info_t info;
    zc_zarr_info(z, &info);
    CHECK(info.chunks[0] == 60 && info.chunks[1] == 5);
    double *B = malloc(n * sizeof(double));
    CHECK_OK(zc_zarr_read(z, NULL, B, n * sizeof(double)));
    CHECK(!memcmp(A, B, n * sizeof(double)));
    free(A); free(B);
    zc_zarr_close(z);
    zc_store_close(st);
    zc_array_release(r); zc_array_release(a);
}

/* The compute path: per stage, the peak RSS (VmHWM) grows by no more than the
 * allocator counted plus the uncounted reserve, and stays within 2 threads x
 * allowed_mem + the reserve. Blocks of 16 MiB, so the RSS growth is well above
 * the reserve (check_rss_matters): if the tasks' buffers went uncounted, the
 * agreement would fail. */
TEST(rss_agrees_with_counted_memory_compute)
{
    int64_t shape[2] = {8192, 2048}, chunks[2] = {1024, 2048};
    zc_array *a, *sq, *m;
    CHECK_OK(zc_random_uniform(12, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    sq = binop("multiply", a, a);
    int axis = 0;
    CHECK_OK(zc_reduce("mean", sq, &axis, 1, 0, 0, &m));
    zc_spec s = spec_mem(128);
    s.nthreads = 2;
    double out[2048];
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&s, m, out, sizeof out, &rep));
    json_t *doc = report_checked(rep);
    check_rss_matters(doc, "mean(x*x)");
    json_decref(doc);
    CHECK(fabs(out[0] - 1.0 / 3) < 0.02);
    zc_array_release(m); zc_array_release(sq); zc_array_release(a);
}

TEST(memory_contract_on_array_16x_allowed)
{
    /* 512 MB of float64 (4 MB blocks) reduced under allowed_mem = 32 MB: every
     * task within its projection, and the process's peak RSS (per stage, from
     * VmHWM) within 2 threads x 32 MB + the reserve and explained by the counted
     * memory (check_contract) */
    int64_t shape[2] = {8192, 8192}, chunks[2] = {256, 2048};
    zc_array *a, *sq, *m;
    CHECK_OK(zc_random_uniform(11, 2, shape, chunks, ZC_FLOAT64, 0, 1, &a));
    sq = binop("multiply", a, a);
    int axis = 0;
    CHECK_OK(zc_reduce("mean", sq, &axis, 1, 0, 0, &m));
    zc_spec s = spec_mem(32);
    s.nthreads = 2;
    zc_store *st;
    CHECK_OK(zc_store_open("memory://contract", 0, &st));
    zc_target t = {st, "out", "none", 3};
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(&s, 1, &m, &t, &rep));
    json_t *doc = report_checked(rep);
    json_t *mem = json_object_get(doc, "memory");
    CHECK(json_integer_value(json_object_get(mem, "threads")) == 2);
    CHECK(json_integer_value(json_object_get(mem, "bound")) ==
          2 * (32 << 20) + json_integer_value(json_object_get(json_object_get(mem, "reserve"), "total")));
    json_decref(doc);
    /* spot-check the result: mean of u² over uniform(0,1) ≈ 1/3 */
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    double r[8];
    zc_range sel = {0, 8, 1};
    CHECK_OK(zc_zarr_read(z, &sel, r, sizeof r));
    for (int k = 0; k < 8; k++) CHECK(fabs(r[k] - 1.0 / 3) < 0.02);
    zc_zarr_close(z);
    zc_store_close(st);
    zc_array_release(m); zc_array_release(sq); zc_array_release(a);
}

TEST(resume_skips_written_chunks)
{
    char dir[] = "/tmp/zc_resume_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int64_t shape[1] = {1000}, chunks[1] = {100};
    zc_array *a, *b;
    CHECK_OK(zc_arange(0, 1000, 1, ZC_INT64, 100, &a));
    zc_array *two;
    CHECK_OK(zc_scalar(2, 1, &two));
    b = binop("multiply", a, two);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_target t = {st, "out", NULL, 2};
    zc_spec s = spec_mem(64);
    CHECK_OK(zc_compute(&s, 1, &b, &t, NULL));
    s.resume = 1;
    zc_report *rep;
    CHECK_OK(zc_compute(&s, 1, &b, &t, &rep));
    char *json;
    CHECK_OK(zc_report_json(rep, &json));
    CHECK(strstr(json, "\"skipped\": 10") != NULL);
    zc_free(json);
    zc_report_free(rep);
    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    int64_t v[1000];
    CHECK_OK(zc_zarr_read(z, NULL, v, sizeof v));
    for (int i = 0; i < 1000; i++) CHECK(v[i] == 2 * i);
    zc_zarr_close(z);
    zc_store_close(st);
    (void)shape; (void)chunks;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    zc_array_release(b); zc_array_release(two); zc_array_release(a);
}

/* An integer scalar must be a whole number in int64's range (it was cast to
 * int64 with undefined behaviour; fuzz_plan_json found it through a saved
 * plan, see fuzz/corpus/plan_json/repro-integer-scalar-out-of-int64). 2^63 is
 * the double nearest to INT64_MAX and stands for it. */
TEST(integer_scalars_in_int64_range)
{
    zc_array *s = NULL, *a, *b;
    CHECK_ERR(zc_scalar(8.9e92, 1, &s), ZC_EINVAL, "int64");
    CHECK_ERR(zc_scalar(1.5, 1, &s), ZC_EINVAL, "whole number");
    CHECK_ERR(zc_scalar(-0x1p64, 1, &s), ZC_EINVAL, NULL);
    CHECK(s == NULL);
    CHECK_OK(zc_scalar(8.9e92, 0, &s)); /* a float is fine */
    zc_array_release(s);
    CHECK_OK(zc_scalar(0x1p63, 1, &s));
    CHECK_OK(zc_arange(-3, 0, 1, ZC_INT64, 3, &a));
    b = binop("add", a, s);
    int64_t v[3];
    zc_spec sp = spec_mem(64);
    CHECK_OK(zc_compute_buffer(&sp, b, v, sizeof v, NULL));
    CHECK(v[0] == INT64_MAX - 3 && v[2] == INT64_MAX - 1);
    zc_array_release(b); zc_array_release(a); zc_array_release(s);
}
