/* ops/decomp.c — QR, SVD, randomized SVD, solve, cholesky, inv and lstsq as
 * plans of NODE_DECOMP nodes (plan/decomp.h).
 *
 * TSQR (tall-skinny QR, m ≥ n). The ops make requests (REQ_R for R, REQ_Q for
 * Q or U, plan/decomp.h) whose bands the planner chooses for its bound: A is
 * cut into row bands of whole rows, its own row chunks (rounded up to at least
 * n rows) when they are no larger than BAND_TARGET, else bands of BAND_TARGET;
 * halved (down to n rows) while a task of any stage would exceed the bound
 * (expand_r); bands are read from A as it is or from A rechunked to them.
 * Stage 1 (TSQR_R) factors every
 * band and writes only its R factor; the R factors, stacked, form S (about
 * nbands·n × n). If S is no taller than one band of the level (the rows one task
 * already holds) it is factored in one task (QR_Q and QR_R of S); otherwise S is
 * itself factored by TSQR with bands of that height: recursion, each level
 * dividing the number of rows by at least 2. Q = TSQR_Q(A, Q_S): band i of Q is
 * Q_i · Q_S[rows of R_i], with Q_i recomputed from the same Householder QR of
 * band i. So qr reads A twice and writes Q once; R is n × n.
 *
 * Short-fat (m < n) QR: Q is the QR of A[:, :m] (Householder picks its
 * reflectors from those columns), R = triu(Qᵀ·A) by blocks of columns.
 * SVD (full_matrices = 0): TSQR, then the SVD of R in one task, U = Q·U_R folded
 * into TSQR_Q (no Q is written); short-fat by transposition (svd(Aᵀ)ᵀ).
 * Randomized SVD: see zc_svd_compressed in zcube.h (passes over A: 2·q + 2).
 * Inputs must be float32 or float64; computation and results are float64. */
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "ops/decomp_stack.h"
#include "ops/held.h"
#include "plan/decomp.h"

/* bytes of one row band at most, and of Q's chunks: larger bands gain little
 * and spread over fewer threads (the bound may make them smaller) */
#define BAND_TARGET ((int64_t)64 << 20)
#define ATB_GROUPS 64                /* at most this many partial products of Xᵀ·Y (summed by a reduction) */
#define PARTS_MAX ((int64_t)256 << 20) /* ... holding at most these bytes together */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* a must be a non-empty float32/float64 (or, when cplx, complex64/complex128)
 * array of `ndim` dims (0 = 1 or 2); its float64 (complex128) form is held. */
static int as_f64(held *k, const char *fn, const char *what, zc_array *a, int ndim, bool cplx, zc_array **out)
{
    if (!a) return zc__err(ZC_EINVAL, "%s: %s is NULL", fn, what);
    if (ndim ? a->ndim != ndim : (a->ndim != 1 && a->ndim != 2))
        return zc__err(ZC_EINVAL, "%s: %s must be %s, not %d-D", fn, what,
                       ndim == 2 ? "a 2-D matrix" : ndim == 1 ? "1-D" : "1-D or 2-D", a->ndim);
    bool c = a->dtype == ZC_COMPLEX64 || a->dtype == ZC_COMPLEX128;
    if (a->dtype != ZC_FLOAT64 && a->dtype != ZC_FLOAT32 && !(cplx && c))
        return zc__err(ZC_EINVAL, "%s: %s must be float32 or float64%s, not %s", fn, what,
                       cplx ? " (or complex64, complex128)" : "", zc_dtype_name(a->dtype));
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] < 1) return zc__err(ZC_EINVAL, "%s: %s has an empty dimension %d", fn, what, d);
    zc_dtype to = c ? ZC_COMPLEX128 : ZC_FLOAT64;
    if (a->dtype == to) {
        zc_array_retain(a);
        *out = a;
        return held_add(k, 0, a);
    }
    zc_array *cv = NULL;
    int rc = zc_astype(a, to, &cv);
    ZC_TRY(held_add(k, rc, cv));
    *out = cv;
    return 0;
}

static int node(held *k, la_op op, int ndim, const int64_t *shape, const int64_t *chunks, int nin, zc_array *const *in,
                int64_t band, int64_t group, zc_array **out)
{
    zc_array *a = NULL;
    int rc = decomp_node(op, ndim, shape, chunks, decomp_dtype(op, in[0]->dtype), nin, in, band, group, &a);
    ZC_TRY(held_add(k, rc, a));
    *out = a;
    return 0;
}

/* A node computed in one task from whole inputs. */
static int small(held *k, la_op op, int ndim, const int64_t *shape, int nin, zc_array *const *in, zc_array **out)
{
    return node(k, op, ndim, shape, shape, nin, in, 0, 0, out);
}

/* columns [0, n) of a 2-D array */
static int first_cols(held *k, zc_array *a, int64_t n, zc_array **out)
{
    if (n == a->shape[1]) {
        *out = a;
        return 0;
    }
    zc_index idx[2] = {{.kind = ZC_IDX_SLICE, .step = 1}, {.kind = ZC_IDX_SLICE, .stop = n, .step = 1, .has_stop = 1}};
    zc_array *s = NULL;
    int rc = zc_getitem(a, idx, 2, &s);
    ZC_TRY(held_add(k, rc, s));
    *out = s;
    return 0;
}

static int first_n(held *k, zc_array *a, int64_t n, zc_array **out)
{
    if (n == a->shape[0]) {
        *out = a;
        return 0;
    }
    zc_index idx = {.kind = ZC_IDX_SLICE, .stop = n, .step = 1, .has_stop = 1};
    zc_array *s = NULL;
    int rc = zc_getitem(a, &idx, 1, &s);
    ZC_TRY(held_add(k, rc, s));
    *out = s;
    return 0;
}

/* Rows per band of a tall matrix from its chunks alone: its row chunks (at
 * least n rows), at most BAND_TARGET bytes, at most m. */
static int64_t pref_band(const zc_array *a)
{
    int64_t m = a->shape[0], n = a->shape[1], c0 = a->chunks[0];
    int64_t rb = c0 < n ? c0 * ck_ceildiv(n, c0) : c0;
    int64_t cap = max64(n, BAND_TARGET / ((int64_t)a->itemsize * n));
    if (rb > cap && m > cap) rb = cap;
    return min64(rb, m) < n ? n : min64(rb, m);
}

/* Whether a's chunks give bands of `band` rows. */
static bool chunks_give(const zc_array *a, int64_t band) { return band % a->chunks[0] == 0 || band >= a->shape[0]; }

/* a cut in bands of `band` rows: a itself when its chunks give those bands,
 * else a rechunked to them */
static int banded(held *k, zc_array *a, int64_t band, zc_array **out)
{
    if (chunks_give(a, band)) {
        *out = a;
        return 0;
    }
    int64_t ch[2] = {band, a->shape[1]};
    zc_array *r = NULL;
    int rc = zc_rechunk(a, ch, &r);
    ZC_TRY(held_add(k, rc, r));
    *out = r;
    return 0;
}

/* TSQR factor of a (m×n float64, m ≥ n) with bands of `band` rows: Q_S (the Q of the
 * stacked R factors; NULL if not wanted at any level) and R (n×n). */
static int tsqr_factor(held *k, zc_array *a, int64_t band, zc_array **qs, zc_array **r)
{
    int64_t m = a->shape[0], n = a->shape[1], nb = ck_ceildiv(m, band), last = m - (nb - 1) * band;
    int64_t ns = (nb - 1) * n + min64(last, n);
    int64_t shape[2] = {ns, n}, chunks[2] = {n, n};
    zc_array *s;
    ZC_TRY(node(k, LA_TSQR_R, 2, shape, chunks, 1, &a, band, 0, &s));
    int64_t g = max64(2 * n, band / n * n);
    if (ns <= g) {
        int64_t rs[2] = {n, n};
        if (qs) ZC_TRY(small(k, LA_QR_Q, 2, shape, 1, &s, qs));
        return small(k, LA_QR_R, 2, rs, 1, &s, r);
    }
    zc_array *qss = NULL;
    ZC_TRY(tsqr_factor(k, s, g, qs ? &qss : NULL, r));
    if (!qs) return 0;
    zc_array *in[2] = {s, qss};
    int64_t qc[2] = {g, n};
    return node(k, LA_TSQR_Q, 2, shape, qc, 2, in, g, 0, qs);
}

/* Q (· W) of a tall a: m × (W ? W's columns : n). */
static int tsqr_q(held *k, zc_array *a, int64_t band, zc_array *qs, zc_array *w, zc_array **q)
{
    int64_t wc = w ? w->shape[1] : a->shape[1];
    int64_t shape[2] = {a->shape[0], wc}, chunks[2] = {band, wc};
    zc_array *in[3] = {a, qs, w};
    return node(k, LA_TSQR_Q, 2, shape, chunks, w ? 3 : 2, in, band, 0, q);
}

/* ---- TSQR requests, fitted to the bound at plan time ---- */

typedef size_t (*task_proj_fn)(const zc_array *a, const int64_t *block);

/* REQ_R a made the QR_R of the last stacked R (r) of the TSQR of A read as ab
 * in bands of `band` rows, Q_S (qs, or NULL) kept for its REQ_Q. */
static void adopt_r(zc_array *a, zc_array *r, zc_array *ab, zc_array *qs, int64_t band)
{
    zc_array *s = r->inputs[0]; /* r is QR_R(s) */
    zc_array_retain(s);
    zc_array_retain(ab);
    zc_array_retain(qs);
    zc_array_release(a->inputs[0]);
    a->inputs[0] = s;
    memset(&a->p, 0, sizeof a->p);
    a->p.decomp.op = LA_QR_R;
    a->p.decomp.fact_a = ab;
    a->p.decomp.fact_qs = qs;
    a->p.decomp.fact_band = band;
}

/* REQ_R a adopts the TSQR of A in bands of `band` rows, read straight from A
 * (direct) or from A rechunked to the bands unless its chunks give them, when
 * every task of it and of the TSQR_Q its REQ_Q will make fits limit (or when
 * forced); *done says whether it did. */
static int try_band(zc_array *a, int64_t band, bool direct, bool force, size_t limit, task_proj_fn task_proj,
                    bool *done)
{
    zc_array *A = a->inputs[0], *ab = A, *qs = NULL, *r = NULL, *q = NULL;
    int want = (int)a->p.decomp.group;
    held k = {.n = 0};
    int rc = direct ? 0 : banded(&k, A, band, &ab);
    if (rc == 0) rc = tsqr_factor(&k, ab, band, want ? &qs : NULL, &r);
    /* Q · W is made with W n×n: r stands in for it */
    if (rc == 0 && want) rc = tsqr_q(&k, ab, band, qs, want == 2 ? r : NULL, &q);
    zc_array *roots[2] = {r, q};
    *done = rc == 0 && (force || decomp_fits(roots, 2, A, limit, task_proj));
    if (*done) adopt_r(a, r, ab, qs, band);
    held_drop(&k);
    return rc;
}

/* Plan time: REQ_R a becomes the TSQR of its input A with the widest bands
 * whose tasks fit `limit`: bands of A's chunks (pref_band), else halved down
 * to n rows, each read from A as it is or, failing that, from A rechunked to
 * them. With none fitting, bands of n rows are kept and the planner names the
 * stage over the bound. */
static int expand_r(zc_array *a, size_t limit, task_proj_fn task_proj)
{
    if (a->p.decomp.op != LA_REQ_R) return 0; /* expanded already, by its REQ_Q */
    int64_t n = a->inputs[0]->shape[1], band = pref_band(a->inputs[0]);
    bool done = false;
    ZC_TRY(try_band(a, band, false, band == n, limit, task_proj, &done));
    while (!done) {
        band = max64(n, band / 2);
        bool same = chunks_give(a->inputs[0], band); /* then rechunking changes nothing */
        ZC_TRY(try_band(a, band, true, same && band == n, limit, task_proj, &done));
        if (!done && !same) ZC_TRY(try_band(a, band, false, band == n, limit, task_proj, &done));
    }
    return 0;
}

/* REQ_Q a (inputs A, its REQ_R, optionally W) becomes the TSQR_Q of the bands
 * its REQ_R chose, copied to a's chunks when those differ. */
static int expand_q(zc_array *a, size_t limit, task_proj_fn task_proj)
{
    zc_array *req = a->inputs[1], *w = a->ninputs > 2 ? a->inputs[2] : NULL, *q = NULL;
    ZC_TRY(expand_r(req, limit, task_proj));
    zc_array *ab = req->p.decomp.fact_a, *qs = req->p.decomp.fact_qs;
    int64_t band = req->p.decomp.fact_band;
    if (!qs) return zc__err(ZC_EINTERNAL, "plan: a TSQR Q request whose R request kept no Q");
    if (band == a->chunks[0]) {
        zc_array_retain(ab);
        zc_array_retain(qs);
        zc_array_release(a->inputs[0]);
        zc_array_release(req);
        a->inputs[0] = ab;
        a->inputs[1] = qs;
        memset(&a->p, 0, sizeof a->p);
        a->p.decomp.op = LA_TSQR_Q;
        a->p.decomp.band = band;
        return 0;
    }
    held k = {.n = 0};
    ZC_TRY(tsqr_q(&k, ab, band, qs, w, &q));
    zc_array_retain(q);
    for (int i = 0; i < a->ninputs; i++) zc_array_release(a->inputs[i]);
    held_drop(&k);
    memset(&a->p, 0, sizeof a->p); /* a rechunk has no parameters */
    a->kind = NODE_RECHUNK;
    a->inputs[0] = q;
    a->ninputs = 1;
    return 0;
}

/* R (n×n) of the TSQR of a tall float64 or complex128 a; want: what of Q a req_q will ask
 * (0 none, 1 Q, 2 Q·W). */
static int req_r(held *k, zc_array *a, int want, zc_array **r)
{
    int64_t n = a->shape[1], sq[2] = {n, n};
    ZC_TRY(node(k, LA_REQ_R, 2, sq, sq, 1, &a, 0, want, r));
    (*r)->p.decomp.expand = expand_r;
    return 0;
}

/* Q (· W, n×w) of the TSQR of a whose R request is r, in chunks of pref_band rows. */
static int req_q(held *k, zc_array *a, zc_array *r, zc_array *w, zc_array **q)
{
    int64_t wc = w ? w->shape[1] : a->shape[1];
    int64_t shape[2] = {a->shape[0], wc}, chunks[2] = {pref_band(a), wc};
    zc_array *in[3] = {a, r, w};
    ZC_TRY(node(k, LA_REQ_Q, 2, shape, chunks, w ? 3 : 2, in, 0, 0, q));
    (*q)->p.decomp.expand = expand_q;
    return 0;
}

/* Orthonormal basis (reduced Q) of a tall matrix. */
static int orth(held *k, zc_array *y, zc_array **q)
{
    zc_array *r;
    ZC_TRY(req_r(k, y, 1, &r));
    return req_q(k, y, r, NULL, q);
}

/* x (m×kk) · w (kk×c), w small. */
static int prod(held *k, zc_array *x, zc_array *w, zc_array **out)
{
    int64_t shape[2] = {x->shape[0], w->shape[1]}, chunks[2] = {x->chunks[0], w->shape[1]};
    zc_array *in[2] = {x, w};
    return node(k, LA_PROD, 2, shape, chunks, 2, in, x->chunks[0], 0, out);
}

/* Groups of row bands for partial products of `part` bytes each: one band per
 * group while the partials stay small (so few bands still spread over threads). */
static void grouping(int64_t nbands, int64_t part, int64_t *group, int64_t *g)
{
    int64_t n = min64(nbands, ATB_GROUPS);
    while (n > 1 && n * part > PARTS_MAX) n--;
    *group = ck_ceildiv(nbands, n);
    *g = ck_ceildiv(nbands, *group);
}

/* Sum of the partial products over axis 0. */
static int sum_parts(held *k, zc_array *part, zc_array **out)
{
    zc_array *res = NULL;
    int axis = 0, rc = part->shape[0] == 1 ? zc_squeeze(part, &axis, 1, &res) : zc_reduce("sum", part, &axis, 1, 0, 0, &res);
    ZC_TRY(held_add(k, rc, res));
    *out = res;
    return 0;
}

/* xᵀ (p×m) · y (m×q): partial products over groups of row bands, summed. */
static int atb(held *k, zc_array *x, zc_array *y, zc_array **out)
{
    int64_t m = x->shape[0], band = x->chunks[0], nbands = ck_ceildiv(m, band), group, g;
    grouping(nbands, x->shape[1] * y->shape[1] * 8, &group, &g);
    int64_t shape[3] = {g, x->shape[1], y->shape[1]}, chunks[3] = {1, x->chunks[1], y->chunks[1]};
    zc_array *in[2] = {x, y}, *part;
    ZC_TRY(node(k, LA_ATB, 3, shape, chunks, 2, in, band, group, &part));
    return sum_parts(k, part, out);
}

/* aᵀ·(a·x) (n×l) in one pass over a (m×n) by bands of its row chunks. */
static int atax(held *k, zc_array *a, zc_array *x, zc_array **out)
{
    int64_t m = a->shape[0], n = a->shape[1], l = x->shape[1], band = a->chunks[0], group, g;
    grouping(ck_ceildiv(m, band), n * l * 8, &group, &g);
    int64_t shape[3] = {g, n, l}, chunks[3] = {1, n, l};
    zc_array *in[2] = {a, x}, *part;
    ZC_TRY(node(k, LA_ATAX, 3, shape, chunks, 2, in, band, group, &part));
    return sum_parts(k, part, out);
}

/* ---- QR ---- */

static int qr_impl(held *k, zc_array *a, zc_array **q, zc_array **r)
{
    zc_array *a64;
    ZC_TRY(as_f64(k, "qr", "a", a, 2, true, &a64));
    int64_t m = a64->shape[0], n = a64->shape[1];
    if (m >= n) {
        zc_array *rr, *qq;
        ZC_TRY(req_r(k, a64, q ? 1 : 0, &rr));
        held_give(rr, r);
        if (!q) return 0;
        ZC_TRY(req_q(k, a64, rr, NULL, &qq));
        held_give(qq, q);
        return 0;
    }
    /* short-fat: Q from the first m columns, R = triu(Qᴴ A) (Qᴴ m×m: a product
     * of the small Qᴴ when complex, partial products by row bands when real) */
    zc_array *lead, *qq, *p, *t = NULL;
    int64_t qshape[2] = {m, m};
    ZC_TRY(first_cols(k, a64, m, &lead));
    ZC_TRY(small(k, LA_QR_Q, 2, qshape, 1, &lead, &qq));
    held_give(qq, q);
    if (!r) return 0;
    int rc;
    if (a64->dtype == ZC_COMPLEX128) {
        zc_array *qh;
        ZC_TRY(held_conj_t(k, qq, &qh));
        rc = zc_matmul(qh, a64, &p);
        ZC_TRY(held_add(k, rc, p));
    } else
        ZC_TRY(atb(k, qq, a64, &p));
    rc = zc_triu(p, 0, &t);
    ZC_TRY(held_add(k, rc, t));
    held_give(t, r);
    return 0;
}

static int qr_one(zc_array *const *m, zc_array **const *o, void *ctx)
{
    (void)ctx;
    return zc_qr(m[0], o[0], o[1]);
}

int zc_qr(zc_array *a, zc_array **q, zc_array **r)
{
    zc__err_clear();
    if (!q && !r) return zc__err(ZC_EINVAL, "zc_qr: no output asked for (q and r are NULL)");
    if (a && a->ndim > 2) return decomp_stack("qr", 1, &a, (int[]){2}, 2, (zc_array **const[]){q, r}, qr_one, NULL);
    if (q) *q = NULL;
    if (r) *r = NULL;
    held k = {.n = 0};
    int rc = qr_impl(&k, a, q, r);
    if (rc < 0) {
        if (q && *q) zc_array_release(*q), *q = NULL;
        if (r && *r) zc_array_release(*r), *r = NULL;
    }
    held_drop(&k);
    return rc;
}

/* ---- SVD ---- */

/* SVD of a tall float64 or complex128 a (m ≥ n): u (m×n), s (n), vt (n×n); any may be NULL. */
static int svd_tall(held *k, zc_array *a, zc_array **u, zc_array **s, zc_array **vt)
{
    int64_t n = a->shape[1], sq[2] = {n, n};
    zc_array *r, *x;
    ZC_TRY(req_r(k, a, u ? 2 : 0, &r));
    if (s) {
        ZC_TRY(small(k, LA_SVD_S, 1, sq, 1, &r, &x));
        *s = x;
    }
    if (vt) {
        ZC_TRY(small(k, LA_SVD_VT, 2, sq, 1, &r, &x));
        *vt = x;
    }
    if (u) {
        zc_array *ur;
        ZC_TRY(small(k, LA_SVD_U, 2, sq, 1, &r, &ur));
        ZC_TRY(req_q(k, a, r, ur, &x));
        *u = x;
    }
    return 0;
}

/* Held results (not yet given) for any shape. */
static int svd_any(held *k, zc_array *a64, zc_array **u, zc_array **s, zc_array **vt)
{
    if (a64->shape[0] >= a64->shape[1]) return svd_tall(k, a64, u, s, vt);
    /* short-fat: Aᴴ = U' S V'ᴴ, so A = V' S U'ᴴ */
    zc_array *t, *ut = NULL, *vtt = NULL;
    ZC_TRY(held_conj_t(k, a64, &t));
    ZC_TRY(svd_tall(k, t, vt ? &ut : NULL, s, u ? &vtt : NULL));
    if (u) ZC_TRY(held_conj_t(k, vtt, u));
    if (vt) ZC_TRY(held_conj_t(k, ut, vt));
    return 0;
}

static int svd_one(zc_array *const *m, zc_array **const *o, void *ctx)
{
    (void)ctx;
    return zc_svd(m[0], o[0], o[1], o[2]);
}

int zc_svd(zc_array *a, zc_array **u, zc_array **s, zc_array **vt)
{
    zc__err_clear();
    if (!u && !s && !vt) return zc__err(ZC_EINVAL, "zc_svd: no output asked for");
    if (a && a->ndim > 2)
        return decomp_stack("svd", 1, &a, (int[]){2}, 3, (zc_array **const[]){u, s, vt}, svd_one, NULL);
    held k = {.n = 0};
    zc_array *a64, *ru = NULL, *rs = NULL, *rv = NULL;
    int rc = as_f64(&k, "svd", "a", a, 2, true, &a64);
    if (rc == 0) rc = svd_any(&k, a64, u ? &ru : NULL, s ? &rs : NULL, vt ? &rv : NULL);
    if (rc == 0) {
        held_give(ru, u);
        held_give(rs, s);
        held_give(rv, vt);
    }
    held_drop(&k);
    return rc;
}

static int svdvals_one(zc_array *const *m, zc_array **const *o, void *ctx)
{
    (void)ctx;
    return zc_svdvals(m[0], o[0]);
}

int zc_svdvals(zc_array *a, zc_array **s)
{
    zc__err_clear();
    if (!s) return zc__err(ZC_EINVAL, "zc_svdvals: NULL output");
    if (a && a->ndim > 2)
        return decomp_stack("svdvals", 1, &a, (int[]){2}, 1, (zc_array **const[]){s}, svdvals_one, NULL);
    held k = {.n = 0};
    zc_array *a64, *rs = NULL;
    int rc = as_f64(&k, "svdvals", "a", a, 2, true, &a64);
    if (rc == 0) rc = svd_any(&k, a64, NULL, &rs, NULL);
    if (rc == 0) held_give(rs, s);
    held_drop(&k);
    return rc;
}

/* ---- randomized SVD (Halko, Martinsson, Tropp 2011, algorithms 4.4 and 5.1) ---- */

/* The small tall matrices of a randomized SVD (Z = Aᵀ·Y, Bᵀ: n × l) held in one
 * block of at most SMALL_MAX bytes are factored in one task: one Householder
 * QR (or one SVD) node instead of the TSQR stages (tsqr_r, the QR of the
 * stacked R, tsqr_q: 3-7 stages of one task each for one band). */
#define SMALL_MAX ((int64_t)16 << 20)

static bool one_block(const zc_array *a)
{
    return a->ndim == 2 && a->shape[0] >= a->shape[1] && a->chunks[0] >= a->shape[0] && a->chunks[1] >= a->shape[1] &&
           a->shape[0] <= SMALL_MAX / 8 / a->shape[1];
}

/* Orthonormal basis of a tall y: one QR node when y is one small block, else TSQR. */
static int orth_any(held *k, zc_array *y, zc_array **q)
{
    if (one_block(y)) return small(k, LA_QR_Q, 2, y->shape, 1, &y, q);
    return orth(k, y, q);
}

/* svd_tall, or one SVD node per factor when a is one small block. */
static int svd_small(held *k, zc_array *a, zc_array **u, zc_array **s, zc_array **vt)
{
    if (!one_block(a)) return svd_tall(k, a, u, s, vt);
    int64_t n = a->shape[1], sq[2] = {n, n};
    if (s) ZC_TRY(small(k, LA_SVD_S, 1, sq, 1, &a, s));
    if (vt) ZC_TRY(small(k, LA_SVD_VT, 2, sq, 1, &a, vt));
    if (u) ZC_TRY(small(k, LA_SVD_U, 2, a->shape, 1, &a, u));
    return 0;
}

static int rsvd_impl(held *k, zc_array *a, int64_t rank, int64_t oversamples, int power_iters, uint64_t seed,
                     zc_array **u, zc_array **s, zc_array **vt)
{
    zc_array *a64;
    ZC_TRY(as_f64(k, "svd_compressed", "a", a, 2, false, &a64));
    int64_t m = a64->shape[0], n = a64->shape[1], mn = min64(m, n);
    if (rank < 1 || rank > mn)
        return zc__err(ZC_EINVAL, "svd_compressed: k = %lld must be in 1..%lld (min of the shape %lld x %lld)",
                       (long long)rank, (long long)mn, (long long)m, (long long)n);
    if (oversamples < 0 || power_iters < 0)
        return zc__err(ZC_EINVAL, "svd_compressed: oversamples (%lld) and power_iters (%d) must be >= 0",
                       (long long)oversamples, power_iters);
    int64_t l = min64(rank + min64(oversamples, mn), mn);
    int64_t oshape[2] = {n, l}, ochunks[2] = {a64->chunks[1], l};
    zc_array *omega = NULL, *y, *q, *z, *qz, *bt;
    int rc = zc_random_normal(seed, 2, oshape, ochunks, ZC_FLOAT64, 0.0, 1.0, &omega);
    ZC_TRY(held_add(k, rc, omega));
    if (power_iters > 0 && a64->chunks[1] == n) {
        /* Z = Aᵀ(A·Q_z) in one pass, re-orthonormalized after every pass: q + 2 passes */
        qz = omega;
        for (int it = 0; it < power_iters; it++) {
            ZC_TRY(atax(k, a64, qz, &z));
            ZC_TRY(orth_any(k, z, &qz));
        }
        ZC_TRY(prod(k, a64, qz, &y));
    } else {
        /* chunks across the columns: A·X and Aᵀ·X by blocks,
         * 2·q + 2 passes */
        ZC_TRY(prod(k, a64, omega, &y));
        for (int it = 0; it < power_iters; it++) {
            ZC_TRY(orth(k, y, &q));
            ZC_TRY(atb(k, a64, q, &z)); /* Aᵀ Q */
            ZC_TRY(orth_any(k, z, &qz));
            ZC_TRY(prod(k, a64, qz, &y)); /* A Q_z */
        }
    }
    ZC_TRY(orth(k, y, &q));
    ZC_TRY(atb(k, a64, q, &bt)); /* Bᵀ = Aᵀ Q (n × l), last pass */
    /* Bᵀ = U' S V'ᵀ: B = V' S U'ᵀ, U = Q V'[:, :k], Vᵀ = U'[:, :k]ᵀ */
    zc_array *ub = NULL, *sb = NULL, *vbt = NULL;
    ZC_TRY(svd_small(k, bt, vt ? &ub : NULL, s ? &sb : NULL, u ? &vbt : NULL));
    if (s) ZC_TRY(first_n(k, sb, rank, s));
    if (vt) {
        zc_array *c;
        ZC_TRY(first_cols(k, ub, rank, &c));
        ZC_TRY(held_conj_t(k, c, vt)); /* real: the transpose */
    }
    if (u) {
        zc_array *v, *c;
        ZC_TRY(held_conj_t(k, vbt, &v));
        ZC_TRY(first_cols(k, v, rank, &c));
        ZC_TRY(prod(k, q, c, u));
    }
    return 0;
}

int zc_svd_compressed(zc_array *a, int64_t k, int64_t oversamples, int power_iters, uint64_t seed, zc_array **u,
                      zc_array **s, zc_array **vt)
{
    zc__err_clear();
    if (!u && !s && !vt) return zc__err(ZC_EINVAL, "zc_svd_compressed: no output asked for");
    held kp = {.n = 0};
    zc_array *ru = NULL, *rs = NULL, *rv = NULL;
    int rc = rsvd_impl(&kp, a, k, oversamples, power_iters, seed, u ? &ru : NULL, s ? &rs : NULL, vt ? &rv : NULL);
    if (rc == 0) {
        held_give(ru, u);
        held_give(rs, s);
        held_give(rv, vt);
    }
    held_drop(&kp);
    return rc;
}

/* ---- matrices that fit in one task ---- */

static int square(const char *fn, const zc_array *a)
{
    if (a->shape[0] != a->shape[1])
        return zc__err(ZC_EINVAL, "%s: the matrix must be square, not %lld x %lld", fn, (long long)a->shape[0],
                       (long long)a->shape[1]);
    return 0;
}

static int solve_one(zc_array *const *m, zc_array **const *o, void *ctx)
{
    (void)ctx;
    return zc_solve(m[0], m[1], o[0]);
}

int zc_solve(zc_array *a, zc_array *b, zc_array **x)
{
    zc__err_clear();
    if (!x) return zc__err(ZC_EINVAL, "zc_solve: NULL output");
    if (a && b && (a->ndim > 2 || b->ndim > 2)) /* stacks of systems: b is (M,) for every one, or (..., M, K) */
        return decomp_stack("solve", 2, (zc_array *[]){a, b}, (int[]){2, b->ndim == 1 ? 1 : 2}, 1,
                            (zc_array **const[]){x}, solve_one, NULL);
    held k = {.n = 0};
    zc_array *a64 = NULL, *b64 = NULL, *r = NULL;
    int rc = as_f64(&k, "solve", "a", a, 2, true, &a64);
    if (rc == 0) rc = square("solve", a64);
    if (rc == 0) rc = as_f64(&k, "solve", "b", b, 0, true, &b64);
    /* a complex a or b: both complex128 */
    zc_array **both[2] = {&a64, &b64};
    for (int i = 0; rc == 0 && i < 2; i++)
        if ((*both[1 - i])->dtype == ZC_COMPLEX128 && (*both[i])->dtype != ZC_COMPLEX128)
            rc = held_take(&k, zc_astype(*both[i], ZC_COMPLEX128, both[i]), both[i], both[i]);
    if (rc == 0 && b64->shape[0] != a64->shape[0])
        rc = zc__err(ZC_EINVAL, "solve: b has %lld rows, a is %lld x %lld", (long long)b64->shape[0],
                     (long long)a64->shape[0], (long long)a64->shape[1]);
    zc_array *in[2] = {a64, b64};
    if (rc == 0) rc = small(&k, LA_SOLVE, b64->ndim, b64->shape, 2, in, &r);
    if (rc == 0) held_give(r, x);
    held_drop(&k);
    return rc;
}

typedef struct {
    const char *fn;
    int n;
    const la_op *ops;
    const int *nd;
} square_ctx;

static int square_results(const char *fn, zc_array *a, int n, const la_op *ops, const int *nd, zc_array **const *outs);

static int square_one(zc_array *const *m, zc_array **const *o, void *ctx)
{
    const square_ctx *c = ctx;
    return square_results(c->fn, m[0], c->n, c->ops, c->nd, o);
}

/* The n results of one square matrix a: outs[i] (skipped when NULL, at least one
 * given) of operation ops[i], shaped as a's first nd[i] dims (0-d, n or n×n);
 * of each matrix of a stack (..., n, n), stacked. */
static int square_results(const char *fn, zc_array *a, int n, const la_op *ops, const int *nd, zc_array **const *outs)
{
    zc__err_clear();
    bool any = false;
    for (int i = 0; i < n; i++) any |= outs[i] != NULL;
    if (!any) return zc__err(ZC_EINVAL, "zc_%s: no output asked for", fn);
    if (a && a->ndim > 2) {
        square_ctx c = {fn, n, ops, nd};
        return decomp_stack(fn, 1, &a, (int[]){2}, n, outs, square_one, &c);
    }
    held k = {.n = 0};
    zc_array *a64, *r[2] = {NULL, NULL};
    bool cplx = true;
    for (int i = 0; i < n; i++) cplx &= decomp_complex_ok(ops[i]);
    int rc = as_f64(&k, fn, "a", a, 2, cplx, &a64);
    if (rc == 0) rc = square(fn, a64);
    for (int i = 0; rc == 0 && i < n; i++)
        if (outs[i]) rc = small(&k, ops[i], nd[i], a64->shape, 1, &a64, &r[i]);
    for (int i = 0; rc == 0 && i < n; i++) held_give(r[i], outs[i]);
    held_drop(&k);
    return rc;
}

static int one_square(const char *fn, la_op op, int nd, zc_array *a, zc_array **out)
{
    if (!out) return zc__err(ZC_EINVAL, "zc_%s: NULL output", fn);
    return square_results(fn, a, 1, &op, &nd, &out);
}

int zc_cholesky(zc_array *a, zc_array **l) { return one_square("cholesky", LA_CHOLESKY, 2, a, l); }
int zc_inv(zc_array *a, zc_array **x) { return one_square("inv", LA_INV, 2, a, x); }
int zc_det(zc_array *a, zc_array **det) { return one_square("det", LA_DET, 0, a, det); }

int zc_slogdet(zc_array *a, zc_array **sign, zc_array **logabsdet)
{
    static const la_op ops[2] = {LA_SLOGDET_SIGN, LA_SLOGDET_LOG};
    static const int nd[2] = {0, 0};
    zc_array **outs[2] = {sign, logabsdet};
    return square_results("slogdet", a, 2, ops, nd, outs);
}

int zc_eigh(zc_array *a, zc_array **w, zc_array **v)
{
    static const la_op ops[2] = {LA_EIGH_W, LA_EIGH_V};
    static const int nd[2] = {1, 2};
    zc_array **outs[2] = {w, v};
    return square_results("eigh", a, 2, ops, nd, outs);
}

int zc_lstsq(zc_array *a, zc_array *b, zc_array **x, zc_array **residuals, zc_array **rank, zc_array **s)
{
    zc__err_clear();
    if (!x && !residuals && !rank && !s) return zc__err(ZC_EINVAL, "zc_lstsq: no output asked for");
    held k = {.n = 0};
    zc_array *a64 = NULL, *b64 = NULL, *o[4] = {NULL, NULL, NULL, NULL};
    int rc = as_f64(&k, "lstsq", "a", a, 2, false, &a64);
    if (rc == 0) rc = as_f64(&k, "lstsq", "b", b, 0, false, &b64);
    if (rc == 0 && b64->shape[0] != a64->shape[0])
        rc = zc__err(ZC_EINVAL, "lstsq: b has %lld rows, a is %lld x %lld", (long long)b64->shape[0],
                     (long long)a64->shape[0], (long long)a64->shape[1]);
    if (rc == 0) {
        zc_array *in[2] = {a64, b64};
        int64_t n = a64->shape[1], nrhs = b64->ndim == 2 ? b64->shape[1] : 1;
        int64_t xs[2] = {n, nrhs}, rs[1] = {nrhs}, ss[1] = {min64(a64->shape[0], n)};
        if (rc == 0 && x) rc = small(&k, LA_LSTSQ_X, b64->ndim, xs, 2, in, &o[0]);
        if (rc == 0 && residuals) rc = small(&k, LA_LSTSQ_RES, 1, rs, 2, in, &o[1]);
        if (rc == 0 && rank) rc = small(&k, LA_LSTSQ_RANK, 0, NULL, 2, in, &o[2]);
        if (rc == 0 && s) rc = small(&k, LA_LSTSQ_S, 1, ss, 2, in, &o[3]);
    }
    if (rc == 0) {
        held_give(o[0], x);
        held_give(o[1], residuals);
        held_give(o[2], rank);
        held_give(o[3], s);
    }
    held_drop(&k);
    return rc;
}
