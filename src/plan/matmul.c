/* plan/matmul.c — computing regions of MATMUL nodes, their memory
 * projection and their JSON form (see matmul.h). */
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "kernels/matmul.h"
#include "plan/kind.h"
#include "plan/matmul.h"

static int64_t count_of(const zc_range *s) { return s->stop > s->start ? (s->stop - s->start - 1) / s->step + 1 : 0; }

/* The selection of operand x (A: which = 0, B: 1) for output region sel and the
 * contracted range [k0, k1); mstride[d] = matrices to skip in x's buffer per step
 * of output batch dim d (0 where x is broadcast or lacks the dim). */
static size_t operand_sel(const zc_array *a, int which, const zc_range *sel, int64_t k0, int64_t k1, zc_range *xs,
                          int64_t *mstride)
{
    const zc_array *x = a->inputs[which];
    int off = a->p.matmul.split ? 1 : 0, nb = a->ndim - off - 2, nbx = x->ndim - 2;
    for (int d = 0; d < a->ndim; d++) mstride[d] = 0;
    int64_t s = 1;
    for (int j = nbx - 1; j >= 0; j--) {
        int d = off + nb - nbx + j;
        if (x->shape[j] == 1 && a->shape[d] != 1) {
            xs[j] = (zc_range){0, 1, 1};
        } else {
            xs[j] = sel[d];
            mstride[d] = s;
            s *= count_of(&sel[d]);
        }
    }
    zc_range k = {k0, k1, 1};
    xs[nbx] = which == 0 ? sel[a->ndim - 2] : k;
    xs[nbx + 1] = which == 0 ? k : sel[a->ndim - 1];
    return node_region_bytes(x, xs);
}

static int matmul_region(zc_array *a, const zc_range *sel, void *out)
{
    const typeof(a->p.matmul) *mm = &a->p.matmul;
    zc_array *A = a->inputs[0], *B = a->inputs[1];
    int nd = a->ndim, off = mm->split ? 1 : 0;
    int64_t K = A->shape[A->ndim - 1], rows = count_of(&sel[nd - 2]), cols = count_of(&sel[nd - 1]);
    int64_t cnt[ZC_MAX_DIMS];
    size_t nbat = 1, isz = a->itemsize;
    for (int d = 0; d < nd; d++) cnt[d] = count_of(&sel[d]);
    for (int d = off; d < nd - 2; d++) nbat *= (size_t)cnt[d];
    size_t mat = (size_t)rows * (size_t)cols * isz, gbytes = nbat * mat;
    int64_t ngroups = off ? cnt[0] : 1;
    memset(out, 0, gbytes * (size_t)ngroups);
    if (!gbytes) return 0;
    /* scratch for one step of each operand (the largest step) */
    zc_range as[ZC_MAX_DIMS], bs[ZC_MAX_DIMS];
    int64_t ams[ZC_MAX_DIMS], bms[ZC_MAX_DIMS];
    int64_t kmax = mm->kstep < K ? mm->kstep : K;
    size_t abytes = operand_sel(a, 0, sel, 0, kmax, as, ams), bbytes = operand_sel(a, 1, sel, 0, kmax, bs, bms);
    unsigned char *abuf = zc__malloc(abytes ? abytes : 1), *bbuf = zc__malloc(bbytes ? bbytes : 1);
    int rc = 0;
    if (!abuf || !bbuf) {
        rc = ZC_ENOMEM;
        goto out;
    }
    for (int64_t gi = 0; gi < ngroups && rc == 0; gi++) {
        int64_t g = off ? sel[0].start + gi * sel[0].step : 0;
        int64_t kbeg = off ? g * mm->kgroup : 0, kend = off ? kbeg + mm->kgroup : K;
        if (kend > K) kend = K;
        unsigned char *og = (unsigned char *)out + (size_t)gi * gbytes;
        for (int64_t k0 = kbeg; k0 < kend && rc == 0; k0 += mm->kstep) {
            int64_t k1 = k0 + mm->kstep < kend ? k0 + mm->kstep : kend, kc = k1 - k0;
            operand_sel(a, 0, sel, k0, k1, as, ams);
            operand_sel(a, 1, sel, k0, k1, bs, bms);
            if ((rc = node_region(A, as, abuf)) < 0 || (rc = node_region(B, bs, bbuf)) < 0) break;
            int64_t idx[ZC_MAX_DIMS] = {0};
            for (size_t m = 0; m < nbat && rc == 0; m++) {
                int64_t ai = 0, bi = 0;
                for (int d = off; d < nd - 2; d++) {
                    ai += idx[d] * ams[d];
                    bi += idx[d] * bms[d];
                }
                rc = kern_matmul(a->dtype, rows, cols, kc, abuf + (size_t)ai * (size_t)(rows * kc) * isz, kc,
                                 bbuf + (size_t)bi * (size_t)(kc * cols) * isz, cols, og + m * mat, cols);
                for (int d = nd - 3; d >= off; d--) {
                    if (++idx[d] < cnt[d]) break;
                    idx[d] = 0;
                }
            }
        }
    }
out:
    zc__free(abuf);
    zc__free(bbuf);
    return rc;
}

static size_t matmul_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    zc_range as[ZC_MAX_DIMS], bs[ZC_MAX_DIMS];
    int64_t ams[ZC_MAX_DIMS], bms[ZC_MAX_DIMS];
    int64_t K = a->inputs[0]->shape[a->inputs[0]->ndim - 1];
    int64_t kmax = a->p.matmul.kstep < K ? a->p.matmul.kstep : K;
    size_t abytes = operand_sel(a, 0, sel, 0, kmax, as, ams), bbytes = operand_sel(a, 1, sel, 0, kmax, bs, bms);
    return abytes + bbytes + proj(a->inputs[0], as) + proj(a->inputs[1], bs);
}

/* Shrink the contracted step (to multiples of x1's chunk while it can) until a
 * task's projection fits `limit` (it may still not, if the output block alone
 * is too large: then the plan refuses). */
static void matmul_fit(zc_array *a, size_t limit, size_t (*stage_projection)(const zc_array *a))
{
    int64_t base = a->inputs[0]->chunks[a->inputs[0]->ndim - 1], k0 = a->p.matmul.kstep0;
    if (k0 >= 1) a->p.matmul.kstep = k0; /* from the step chosen when made, whatever an earlier plan fitted */
    while (a->p.matmul.kstep > 1 && stage_projection(a) > limit) {
        int64_t k = a->p.matmul.kstep;
        k = k > base ? (k / 2 + base - 1) / base * base : k / 2;
        if (k >= a->p.matmul.kstep) k = a->p.matmul.kstep - (a->p.matmul.kstep > base ? base : 1);
        a->p.matmul.kstep = k < 1 ? 1 : k;
    }
    if (stage_projection(a) > limit && k0 >= 1) a->p.matmul.kstep = k0; /* refused anyway: keep the fast step */
}

static int matmul_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "kstep", json_integer(a->p.matmul.kstep));
    json_object_set_new(o, "kstep0", json_integer(a->p.matmul.kstep0));
    json_object_set_new(o, "kgroup", json_integer(a->p.matmul.kgroup));
    json_object_set_new(o, "split", json_integer(a->p.matmul.split));
    return 0;
}

static int matmul_from_json(const json_t *o, zc_array *a, int node)
{
    (void)node; /* its messages name the kind */
    a->p.matmul.kstep = json_integer_value(json_object_get(o, "kstep"));
    a->p.matmul.kstep0 = json_integer_value(json_object_get(o, "kstep0"));
    a->p.matmul.kgroup = json_integer_value(json_object_get(o, "kgroup"));
    a->p.matmul.split = (int)json_integer_value(json_object_get(o, "split"));
    if (a->ninputs != 2 || a->p.matmul.kstep < 1 || a->p.matmul.kstep0 < 1 ||
        (a->p.matmul.split && a->p.matmul.kgroup < 1) || a->inputs[0]->ndim < 2 || a->inputs[1]->ndim < 2 || a->inputs[0]->dtype != a->dtype ||
        a->inputs[1]->dtype != a->dtype || !kern_matmul_supported(a->dtype))
        return zc__err(ZC_EFORMAT, "plan: matmul node is malformed");
    const zc_array *A = a->inputs[0], *B = a->inputs[1];
    int nba = A->ndim - 2, nbb = B->ndim - 2, off = a->p.matmul.split ? 1 : 0;
    if (a->ndim != off + (nba > nbb ? nba : nbb) + 2 || A->shape[nba + 1] != B->shape[nbb] ||
        a->shape[a->ndim - 2] != A->shape[nba] || a->shape[a->ndim - 1] != B->shape[nbb + 1])
        return zc__err(ZC_EFORMAT, "plan: matmul node's shapes do not agree with its inputs");
    /* the steps zc_matmul chooses (kstep <= max(K, 1), kgroup < K + kstep0, ceil(K / kgroup)
     * groups): larger ones would overflow k0 + kstep and g * kgroup in matmul_region */
    int64_t K = A->shape[nba + 1], kmax = K > 1 ? K : 1;
    if (a->p.matmul.kstep > kmax || a->p.matmul.kstep0 > kmax ||
        (off && (a->p.matmul.kgroup > K + a->p.matmul.kstep0 || a->shape[0] != ck_ceildiv(K, a->p.matmul.kgroup))))
        return zc__err(ZC_EFORMAT, "plan: matmul node is malformed (steps out of range for K = %lld)", (long long)K);
    return 0;
}

static const char *matmul_name(const zc_array *a) { (void)a; return "matmul"; }

const node_kind_def kind_matmul = {
    .json = "matmul", .flags = KIND_STORED | KIND_BLAS, .min_inputs = 1, .max_inputs = NODE_MAX_INPUTS,
    .name = matmul_name, .region = matmul_region, .proj = matmul_proj, .fit = matmul_fit, .to_json = matmul_to_json,
    .from_json = matmul_from_json,
};
