/* kernels/reduce.c — reductions in mergeable accumulators (see reduce.h): dtype rules,
 * accumulator records, init/merge/finalize, and red_accum's walk over a block.
 *
 * Walk. The block's axes are merged where possible (adjacent axes both kept or both
 * reduced, contiguous; for argmin/argmax reduced axes merge only when the global flat
 * index stays affine) and axes of length 1 dropped. Then the innermost axis decides:
 *
 *   kept (rows)    for each combination of the outer kept axes, for each tile of up to
 *                  TILE elements of the inner axis, for each combination of the reduced
 *                  axes: acc[tile] op= x[row piece]   (reduce the leading axis: rows of
 *                  contiguous elements, vectorized, the accumulator tile stays in cache)
 *   reduced (runs) for each combination of the outer kept axes (one accumulator), for
 *                  each combination of the outer reduced axes: acc op= x[0..n) (reduce
 *                  the last or all axes: pairwise sums over contiguous runs)
 *
 * mean sums in double per tile then adds to the records; var/std run two passes per tile
 * or per accumulator (block mean, then the sum of squared deviations from it, as NumPy
 * does) and fold the block's (count, mean, M2) into the record by Chan et al.'s formula,
 * which is also the merge. */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "kernels/red_internal.h"

#define RED_MAX_DIMS 32
#define TILE 512 /* inner elements per tile: mean/var keep two double tiles on the stack */

static const char *const op_names[] = {
#define RED_NAME_(name, str) str,
    RED_OPS(RED_NAME_)
#undef RED_NAME_
};

int red_op_from_name(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < RED_END_; i++)
        if (!strcmp(name, op_names[i])) return i;
    return -1;
}

const char *red_op_name(red_op op) { return (unsigned)op < RED_END_ ? op_names[op] : "?"; }

/* RT_* code of a dtype, or -1. */
static int rtype(zc_dtype t)
{
    switch (t) {
    case ZC_BOOL: return RT_B;
    case ZC_INT8: return RT_I8;
    case ZC_INT16: return RT_I16;
    case ZC_INT32: return RT_I32;
    case ZC_INT64: return RT_I64;
    case ZC_UINT8: return RT_U8;
    case ZC_UINT16: return RT_U16;
    case ZC_UINT32: return RT_U32;
    case ZC_UINT64: return RT_U64;
    case ZC_FLOAT16: return RT_F16;
    case ZC_FLOAT32: return RT_F32;
    case ZC_FLOAT64: return RT_F64;
    case ZC_COMPLEX64: return RT_C64;
    case ZC_COMPLEX128: return RT_C128;
    default: return -1;
    }
}

static const size_t rt_size[RT_COUNT_] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};

static bool rt_signed(int r) { return r >= RT_I8 && r <= RT_I64; }
static bool rt_unsigned(int r) { return r >= RT_U8 && r <= RT_U64; }
static bool rt_int(int r) { return r == RT_B || rt_signed(r) || rt_unsigned(r); }
static bool rt_cplx(int r) { return r == RT_C64 || r == RT_C128; }
static bool is_arg(red_op op) { return op == RED_ARGMIN || op == RED_ARGMAX; }

int red_result_dtype(red_op op, zc_dtype in, zc_dtype *out)
{
    int r = rtype(in);
    if ((unsigned)op >= RED_END_) return zc__err(ZC_EINVAL, "reduction: unknown operation %d", (int)op);
    if (r < 0) return zc__err(ZC_EINVAL, "%s of %s is not supported", op_names[op], zc_dtype_name(in));
    zc_dtype o = in;
    switch (op) {
    case RED_SUM:
    case RED_PROD:
        if (r == RT_B || rt_signed(r)) o = ZC_INT64;
        else if (rt_unsigned(r)) o = ZC_UINT64;
        break;
    case RED_MIN:
    case RED_MAX:
    case RED_ARGMIN:
    case RED_ARGMAX:
        if (rt_cplx(r))
            return zc__err(ZC_EINVAL, "%s of %s is not supported (complex numbers have no order)", op_names[op],
                           zc_dtype_name(in));
        if (is_arg(op)) o = ZC_INT64;
        break;
    case RED_MEAN:
        if (rt_int(r)) o = ZC_FLOAT64;
        break;
    case RED_VAR:
    case RED_STD:
        if (rt_int(r)) o = ZC_FLOAT64;
        else if (r == RT_C64) o = ZC_FLOAT32;
        else if (r == RT_C128) o = ZC_FLOAT64;
        break;
    case RED_ANY:
    case RED_ALL: o = ZC_BOOL; break;
    case RED_COUNT_NONZERO: o = ZC_INT64; break;
    default: break;
    }
    *out = o;
    return 0;
}

size_t red_acc_size(red_op op, zc_dtype in)
{
    int r = rtype(in);
    if (r < 0 || (unsigned)op >= RED_END_) return 0;
    switch (op) {
    case RED_SUM:
    case RED_PROD:
        if (rt_int(r)) return 8;
        if (r == RT_F16) return 4;
        return rt_size[r];
    case RED_MIN:
    case RED_MAX:
        if (rt_cplx(r)) return 0;
        return r == RT_F16 ? 4 : rt_size[r];
    case RED_MEAN: return rt_cplx(r) ? sizeof(red_mean_c) : sizeof(red_mean_r);
    case RED_VAR:
    case RED_STD: return rt_cplx(r) ? sizeof(red_var_c) : sizeof(red_var_r);
    case RED_ARGMIN:
    case RED_ARGMAX: return rt_cplx(r) ? 0 : sizeof(red_arg);
    case RED_ANY:
    case RED_ALL:
    case RED_COUNT_NONZERO: return 8;
    default: return 0;
    }
}

/* ---- init ---- */

static void fill(void *acc, size_t n, const void *rec, size_t size)
{
    unsigned char *p = acc;
    for (size_t i = 0; i < n; i++) memcpy(p + i * size, rec, size);
}

void red_init(red_op op, zc_dtype in, void *acc, size_t n)
{
    int r = rtype(in);
    size_t asz = red_acc_size(op, in);
    if (!asz || !n) return;
    unsigned char rec[32];
    memset(rec, 0, sizeof rec);
    bool mn = op == RED_MIN || op == RED_ARGMIN;
    switch (op) {
    case RED_PROD:
        if (rt_int(r)) *(uint64_t *)rec = 1;
        else if (r == RT_F16 || r == RT_F32 || r == RT_C64) *(float *)rec = 1.0f;
        else *(double *)rec = 1.0;
        break;
    case RED_MIN:
    case RED_MAX:
        switch (r) {
        case RT_B: rec[0] = mn; break;
        case RT_I8: *(int8_t *)rec = mn ? INT8_MAX : INT8_MIN; break;
        case RT_I16: *(int16_t *)rec = mn ? INT16_MAX : INT16_MIN; break;
        case RT_I32: *(int32_t *)rec = mn ? INT32_MAX : INT32_MIN; break;
        case RT_I64: *(int64_t *)rec = mn ? INT64_MAX : INT64_MIN; break;
        case RT_U8: *(uint8_t *)rec = mn ? UINT8_MAX : 0; break;
        case RT_U16: *(uint16_t *)rec = mn ? UINT16_MAX : 0; break;
        case RT_U32: *(uint32_t *)rec = mn ? UINT32_MAX : 0; break;
        case RT_U64: *(uint64_t *)rec = mn ? UINT64_MAX : 0; break;
        case RT_F16:
        case RT_F32: *(float *)rec = mn ? INFINITY : -INFINITY; break;
        default: *(double *)rec = mn ? INFINITY : -INFINITY; break;
        }
        break;
    case RED_ARGMIN:
    case RED_ARGMAX: {
        red_arg a;
        a.idx = INT64_MAX;
        if (r == RT_F16 || r == RT_F32 || r == RT_F64) a.v.d = mn ? INFINITY : -INFINITY;
        else if (rt_unsigned(r)) a.v.u = mn ? UINT64_MAX : 0;
        else a.v.i = mn ? INT64_MAX : INT64_MIN;
        memcpy(rec, &a, sizeof a);
        break;
    }
    default: break; /* sums, counts, mean and var records start at zero */
    }
    fill(acc, n, rec, asz);
}

/* ---- records: merge ---- */

static void var_merge1(int64_t *na, double *ma, double *m2a, int64_t nb, const double *mb, double m2b, int w)
{
    if (nb == 0) return;
    if (*na == 0) {
        *na = nb;
        for (int k = 0; k < w; k++) ma[k] = mb[k];
        *m2a = m2b;
        return;
    }
    double n = (double)*na + (double)nb, fb = (double)nb / n, cross = (double)*na * fb, d2 = 0;
    for (int k = 0; k < w; k++) {
        double d = mb[k] - ma[k];
        ma[k] += d * fb;
        d2 += d * d;
    }
    *m2a += m2b + d2 * cross;
    *na += nb;
}

#define MERGE_CMP(T, CMPX)                                                                             \
    do {                                                                                               \
        T *a = acc;                                                                                    \
        const T *b = other;                                                                            \
        for (size_t i = 0; i < n; i++) a[i] = CMPX(b[i], a[i]) ? b[i] : a[i];                          \
    } while (0)
#define MERGE_CMPF(T, CMPX)                                                                            \
    do {                                                                                               \
        T *a = acc;                                                                                    \
        const T *b = other;                                                                            \
        for (size_t i = 0; i < n; i++) a[i] = (a[i] == a[i] && (CMPX(b[i], a[i]) || b[i] != b[i])) ? b[i] : a[i]; \
    } while (0)
#define LT_(a, b) ((a) < (b))
#define GT_(a, b) ((a) > (b))

static void merge_minmax(int r, bool mn, void *acc, const void *other, size_t n)
{
    switch (r) {
    case RT_B:
        if (mn) MERGE_CMP(uint8_t, LT_); else MERGE_CMP(uint8_t, GT_);
        break;
    case RT_I8:
        if (mn) MERGE_CMP(int8_t, LT_); else MERGE_CMP(int8_t, GT_);
        break;
    case RT_I16:
        if (mn) MERGE_CMP(int16_t, LT_); else MERGE_CMP(int16_t, GT_);
        break;
    case RT_I32:
        if (mn) MERGE_CMP(int32_t, LT_); else MERGE_CMP(int32_t, GT_);
        break;
    case RT_I64:
        if (mn) MERGE_CMP(int64_t, LT_); else MERGE_CMP(int64_t, GT_);
        break;
    case RT_U8:
        if (mn) MERGE_CMP(uint8_t, LT_); else MERGE_CMP(uint8_t, GT_);
        break;
    case RT_U16:
        if (mn) MERGE_CMP(uint16_t, LT_); else MERGE_CMP(uint16_t, GT_);
        break;
    case RT_U32:
        if (mn) MERGE_CMP(uint32_t, LT_); else MERGE_CMP(uint32_t, GT_);
        break;
    case RT_U64:
        if (mn) MERGE_CMP(uint64_t, LT_); else MERGE_CMP(uint64_t, GT_);
        break;
    case RT_F16:
    case RT_F32:
        if (mn) MERGE_CMPF(float, LT_); else MERGE_CMPF(float, GT_);
        break;
    default:
        if (mn) MERGE_CMPF(double, LT_); else MERGE_CMPF(double, GT_);
        break;
    }
}

static void merge_arg(int r, bool mn, red_arg *a, const red_arg *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool take;
        if (b[i].idx == INT64_MAX) continue; /* empty */
        if (r == RT_F16 || r == RT_F32 || r == RT_F64) {
            double x = b[i].v.d, c = a[i].v.d;
            if (x != x) take = c == c || b[i].idx < a[i].idx;
            else take = c == c && ((mn ? x < c : x > c) || (x == c && b[i].idx < a[i].idx));
        } else if (rt_unsigned(r)) {
            uint64_t x = b[i].v.u, c = a[i].v.u;
            take = (mn ? x < c : x > c) || (x == c && b[i].idx < a[i].idx);
        } else {
            int64_t x = b[i].v.i, c = a[i].v.i;
            take = (mn ? x < c : x > c) || (x == c && b[i].idx < a[i].idx);
        }
        if (take) a[i] = b[i];
    }
}

void red_merge(red_op op, zc_dtype in, void *acc, const void *other, size_t n)
{
    int r = rtype(in);
    if (!red_acc_size(op, in)) return;
    switch (op) {
    case RED_SUM:
        if (rt_int(r)) {
            uint64_t *a = acc;
            const uint64_t *b = other;
            for (size_t i = 0; i < n; i++) a[i] += b[i];
        } else if (r == RT_F16 || r == RT_F32 || r == RT_C64) {
            float *a = acc;
            const float *b = other;
            size_t m = r == RT_C64 ? 2 * n : n;
            for (size_t i = 0; i < m; i++) a[i] += b[i];
        } else {
            double *a = acc;
            const double *b = other;
            size_t m = r == RT_C128 ? 2 * n : n;
            for (size_t i = 0; i < m; i++) a[i] += b[i];
        }
        break;
    case RED_PROD:
        if (rt_int(r)) {
            uint64_t *a = acc;
            const uint64_t *b = other;
            for (size_t i = 0; i < n; i++) a[i] *= b[i];
        } else if (r == RT_F16 || r == RT_F32) {
            float *a = acc;
            const float *b = other;
            for (size_t i = 0; i < n; i++) a[i] *= b[i];
        } else if (r == RT_F64) {
            double *a = acc;
            const double *b = other;
            for (size_t i = 0; i < n; i++) a[i] *= b[i];
        } else if (r == RT_C64) {
            float *a = acc;
            const float *b = other;
            for (size_t i = 0; i < n; i++) {
                float ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
                a[2 * i] = ar * br - ai * bi;
                a[2 * i + 1] = ar * bi + ai * br;
            }
        } else {
            double *a = acc;
            const double *b = other;
            for (size_t i = 0; i < n; i++) {
                double ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
                a[2 * i] = ar * br - ai * bi;
                a[2 * i + 1] = ar * bi + ai * br;
            }
        }
        break;
    case RED_MIN:
    case RED_MAX: merge_minmax(r, op == RED_MIN, acc, other, n); break;
    case RED_ARGMIN:
    case RED_ARGMAX: merge_arg(r, op == RED_ARGMIN, acc, other, n); break;
    case RED_MEAN:
        if (rt_cplx(r)) {
            red_mean_c *a = acc;
            const red_mean_c *b = other;
            for (size_t i = 0; i < n; i++) {
                a[i].n += b[i].n;
                a[i].s[0] += b[i].s[0];
                a[i].s[1] += b[i].s[1];
            }
        } else {
            red_mean_r *a = acc;
            const red_mean_r *b = other;
            for (size_t i = 0; i < n; i++) {
                a[i].n += b[i].n;
                a[i].s += b[i].s;
            }
        }
        break;
    case RED_VAR:
    case RED_STD:
        if (rt_cplx(r)) {
            red_var_c *a = acc;
            const red_var_c *b = other;
            for (size_t i = 0; i < n; i++) var_merge1(&a[i].n, a[i].mean, &a[i].m2, b[i].n, b[i].mean, b[i].m2, 2);
        } else {
            red_var_r *a = acc;
            const red_var_r *b = other;
            for (size_t i = 0; i < n; i++) var_merge1(&a[i].n, &a[i].mean, &a[i].m2, b[i].n, &b[i].mean, b[i].m2, 1);
        }
        break;
    case RED_ANY:
    case RED_ALL:
    case RED_COUNT_NONZERO: {
        int64_t *a = acc;
        const int64_t *b = other;
        for (size_t i = 0; i < n; i++) a[i] += b[i];
        break;
    }
    default: break;
    }
}

/* ---- finalize ---- */

static void store_real(zc_dtype out, void *dst, size_t i, double v)
{
    if (out == ZC_FLOAT64) ((double *)dst)[i] = v;
    else if (out == ZC_FLOAT32) ((float *)dst)[i] = (float)v;
    else ((uint16_t *)dst)[i] = dtype_float_to_half((float)v);
}

void red_finalize(red_op op, zc_dtype in, const void *acc, size_t n, void *out, double ddof)
{
    int r = rtype(in);
    zc_dtype od;
    if (!red_acc_size(op, in) || red_result_dtype(op, in, &od) < 0) return;
    switch (op) {
    case RED_SUM:
    case RED_PROD:
    case RED_MIN:
    case RED_MAX:
        if (r == RT_F16) {
            const float *a = acc;
            uint16_t *o = out;
            for (size_t i = 0; i < n; i++) o[i] = dtype_float_to_half(a[i]);
        } else {
            memcpy(out, acc, n * red_acc_size(op, in)); /* same layout as the result */
        }
        break;
    case RED_MEAN:
        if (rt_cplx(r)) {
            const red_mean_c *a = acc;
            for (size_t i = 0; i < n; i++) {
                /* NumPy divides by n + 0j: a non-finite part makes both parts NaN */
                double scl = 1.0 / (double)a[i].n, re = (a[i].s[0] + a[i].s[1] * 0.0) * scl,
                       im = (a[i].s[1] - a[i].s[0] * 0.0) * scl;
                if (r == RT_C64) {
                    ((float *)out)[2 * i] = (float)re;
                    ((float *)out)[2 * i + 1] = (float)im;
                } else {
                    ((double *)out)[2 * i] = re;
                    ((double *)out)[2 * i + 1] = im;
                }
            }
        } else {
            const red_mean_r *a = acc;
            for (size_t i = 0; i < n; i++) store_real(od, out, i, a[i].s / (double)a[i].n);
        }
        break;
    case RED_VAR:
    case RED_STD:
        for (size_t i = 0; i < n; i++) {
            int64_t cnt;
            double m2;
            if (rt_cplx(r)) {
                cnt = ((const red_var_c *)acc)[i].n;
                m2 = ((const red_var_c *)acc)[i].m2;
            } else {
                cnt = ((const red_var_r *)acc)[i].n;
                m2 = ((const red_var_r *)acc)[i].m2;
            }
            double d = (double)cnt - ddof; /* NumPy: divide by max(n - ddof, 0) */
            if (d < 0) d = 0;
            double v = m2 / d;
            store_real(od, out, i, op == RED_STD ? sqrt(v) : v);
        }
        break;
    case RED_ARGMIN:
    case RED_ARGMAX: {
        const red_arg *a = acc;
        for (size_t i = 0; i < n; i++) ((int64_t *)out)[i] = a[i].idx;
        break;
    }
    case RED_ANY:
    case RED_ALL: {
        const int64_t *a = acc;
        for (size_t i = 0; i < n; i++) ((uint8_t *)out)[i] = op == RED_ANY ? a[i] > 0 : a[i] == 0;
        break;
    }
    case RED_COUNT_NONZERO: memcpy(out, acc, n * 8); break;
    default: break;
    }
}

/* ---- the walk over a block ---- */

typedef struct {
    int n;                         /* axes in this set, outer to inner */
    int64_t size[RED_MAX_DIMS];    /* length */
    int64_t bs[RED_MAX_DIMS];      /* element stride in the block */
    int64_t as[RED_MAX_DIMS];      /* record stride in the accumulator (kept axes) */
    int64_t gs[RED_MAX_DIMS];      /* global flat-index stride (reduced axes, arg ops) */
} axis_set;

/* Odometer over an axis set: advance idx and the three offsets; false after the last. */
static bool odo_next(const axis_set *s, int64_t *idx, int64_t *ob, int64_t *oa, int64_t *og)
{
    for (int d = s->n - 1; d >= 0; d--) {
        *ob += s->bs[d];
        *oa += s->as[d];
        *og += s->gs[d];
        if (++idx[d] < s->size[d]) return true;
        *ob -= s->bs[d] * s->size[d];
        *oa -= s->as[d] * s->size[d];
        *og -= s->gs[d] * s->size[d];
        idx[d] = 0;
    }
    return false;
}

typedef struct {
    red_op op;
    int r;                 /* RT_* of the input */
    size_t isz, asz;       /* input element and accumulator record bytes */
    axis_set kept, red;    /* outer axes (the innermost axis excluded) */
    bool inner_reduced;    /* innermost axis reduced (runs) or kept (rows) */
    int64_t inner;         /* its length */
    int64_t inner_gs;      /* its global index stride (runs, arg ops) */
    int64_t gbase;         /* global flat index of the block's first element (arg ops) */
    int64_t nred;          /* elements reduced into each accumulator by this block */
    const red_kern *k;     /* kernel for this op and dtype (sums for mean/var) */
} walk;

/* Fold a block's (count, mean, M2) for `len` consecutive records of a var accumulator. */
static void var_fold(walk *w, unsigned char *acc, int64_t len, int64_t cnt, const double *mean, const double *m2)
{
    for (int64_t j = 0; j < len; j++) {
        if (rt_cplx(w->r)) {
            red_var_c *a = (red_var_c *)acc + j;
            var_merge1(&a->n, a->mean, &a->m2, cnt, mean + 2 * j, m2[j], 2);
        } else {
            red_var_r *a = (red_var_r *)acc + j;
            var_merge1(&a->n, &a->mean, &a->m2, cnt, mean + j, m2[j], 1);
        }
    }
}

/* Rows: the innermost axis is kept. */
static void walk_rows(walk *w, unsigned char *acc, const unsigned char *x)
{
    int64_t ki[RED_MAX_DIMS] = {0}, kb = 0, ka = 0, kg = 0;
    int cw = rt_cplx(w->r) ? 2 : 1;
    double tmp[2 * TILE], tmp2[TILE];
    red_aux aux = {0, 1, tmp, w->op == RED_ALL};
    do {
        for (int64_t t = 0; t < w->inner; t += TILE) {
            int64_t len = w->inner - t < TILE ? w->inner - t : TILE;
            unsigned char *a = acc + (size_t)(ka + t) * w->asz;
            const unsigned char *xb = x + (size_t)(kb + t) * w->isz;
            int64_t ri[RED_MAX_DIMS] = {0}, rb = 0, ra = 0, rg = 0;
            if (w->op == RED_MEAN || w->op == RED_VAR || w->op == RED_STD) {
                memset(tmp, 0, (size_t)(cw * len) * sizeof(double));
                do {
                    red_k_sumd[w->r].row(tmp, xb + (size_t)rb * w->isz, len, &aux);
                } while (odo_next(&w->red, ri, &rb, &ra, &rg));
                if (w->op == RED_MEAN) {
                    for (int64_t j = 0; j < len; j++) {
                        if (cw == 2) {
                            red_mean_c *m = (red_mean_c *)a + j;
                            m->n += w->nred;
                            m->s[0] += tmp[2 * j];
                            m->s[1] += tmp[2 * j + 1];
                        } else {
                            red_mean_r *m = (red_mean_r *)a + j;
                            m->n += w->nred;
                            m->s += tmp[j];
                        }
                    }
                    continue;
                }
                for (int64_t j = 0; j < cw * len; j++) tmp[j] /= (double)w->nred;
                memset(tmp2, 0, (size_t)len * sizeof(double));
                rb = 0;
                do {
                    red_k_sqdev[w->r].row(tmp2, xb + (size_t)rb * w->isz, len, &aux);
                } while (odo_next(&w->red, ri, &rb, &ra, &rg));
                var_fold(w, a, len, w->nred, tmp, tmp2);
                continue;
            }
            do {
                aux.gidx = w->gbase + rg; /* kept axes do not move the global index */
                w->k->row(a, xb + (size_t)rb * w->isz, len, &aux);
            } while (odo_next(&w->red, ri, &rb, &ra, &rg));
        }
    } while (odo_next(&w->kept, ki, &kb, &ka, &kg));
}

/* Runs: the innermost axis is reduced. */
static void walk_runs(walk *w, unsigned char *acc, const unsigned char *x)
{
    int64_t ki[RED_MAX_DIMS] = {0}, kb = 0, ka = 0, kg = 0;
    int cw = rt_cplx(w->r) ? 2 : 1;
    double s[2], m2;
    red_aux aux = {0, w->inner_gs, s, w->op == RED_ALL};
    do {
        unsigned char *a = acc + (size_t)ka * w->asz;
        const unsigned char *xb = x + (size_t)kb * w->isz;
        int64_t ri[RED_MAX_DIMS] = {0}, rb = 0, ra = 0, rg = 0;
        if (w->op == RED_MEAN || w->op == RED_VAR || w->op == RED_STD) {
            s[0] = s[1] = 0;
            do {
                red_k_sumd[w->r].run(s, xb + (size_t)rb * w->isz, w->inner, &aux);
            } while (odo_next(&w->red, ri, &rb, &ra, &rg));
            if (w->op == RED_MEAN) {
                if (cw == 2) {
                    red_mean_c *m = (red_mean_c *)a;
                    m->n += w->nred;
                    m->s[0] += s[0];
                    m->s[1] += s[1];
                } else {
                    red_mean_r *m = (red_mean_r *)a;
                    m->n += w->nred;
                    m->s += s[0];
                }
                continue;
            }
            s[0] /= (double)w->nred;
            s[1] /= (double)w->nred;
            m2 = 0;
            rb = 0;
            do {
                red_k_sqdev[w->r].run(&m2, xb + (size_t)rb * w->isz, w->inner, &aux);
            } while (odo_next(&w->red, ri, &rb, &ra, &rg));
            var_fold(w, a, 1, w->nred, s, &m2);
            continue;
        }
        do {
            aux.gidx = w->gbase + rg;
            w->k->run(a, xb + (size_t)rb * w->isz, w->inner, &aux);
        } while (odo_next(&w->red, ri, &rb, &ra, &rg));
    } while (odo_next(&w->kept, ki, &kb, &ka, &kg));
}

static const red_kern *kernel_for(red_op op, int r)
{
    switch (op) {
    case RED_SUM: return &red_k_sum[r];
    case RED_PROD: return &red_k_prod[r];
    case RED_MIN: return &red_k_min[r];
    case RED_MAX: return &red_k_max[r];
    case RED_ARGMIN: return &red_k_argmin[r];
    case RED_ARGMAX: return &red_k_argmax[r];
    case RED_ANY:
    case RED_ALL:
    case RED_COUNT_NONZERO: return &red_k_nz[r];
    default: return &red_k_sumd[r];
    }
}

void red_accum(red_op op, zc_dtype in, void *acc, int ndim, const int64_t *shape, uint64_t axes, const void *block,
               const int64_t *index_base, const int64_t *global_shape)
{
    int r = rtype(in);
    size_t asz = red_acc_size(op, in);
    if (!asz || ndim < 0 || ndim > RED_MAX_DIMS) return;
    for (int d = 0; d < ndim; d++)
        if (shape[d] <= 0) return; /* nothing to accumulate */
    bool arg = is_arg(op) && index_base && global_shape;

    /* strides of every axis: block (C order), accumulator (kept axes), global index */
    int64_t bs[RED_MAX_DIMS], as[RED_MAX_DIMS], gs[RED_MAX_DIMS], b = 1, a = 1, g = 1, gbase = 0, nred = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        bool red = (axes >> d) & 1;
        bs[d] = b;
        b *= shape[d];
        as[d] = red ? 0 : a;
        if (!red) a *= shape[d];
        gs[d] = 0;
        if (red) {
            nred *= shape[d];
            if (arg) {
                gs[d] = g;
                gbase += index_base[d] * g;
                g *= global_shape[d];
            }
        }
    }

    /* merged axes of length > 1, outer to inner */
    int m = 0;
    int64_t msz[RED_MAX_DIMS], mbs[RED_MAX_DIMS], mas[RED_MAX_DIMS], mgs[RED_MAX_DIMS];
    bool mred[RED_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        bool red = (axes >> d) & 1;
        if (m > 0 && mred[m - 1] == red) {
            int p = m - 1; /* merge axis d into the previous merged axis */
            bool ok = mbs[p] == shape[d] * bs[d];
            if (ok && !red) ok = mas[p] == shape[d] * as[d];
            if (ok && red && arg) ok = mgs[p] == shape[d] * gs[d];
            if (ok) {
                msz[p] *= shape[d];
                mbs[p] = bs[d];
                mas[p] = as[d];
                mgs[p] = gs[d];
                continue;
            }
        }
        msz[m] = shape[d];
        mbs[m] = bs[d];
        mas[m] = as[d];
        mgs[m] = gs[d];
        mred[m++] = red;
    }
    if (m == 0) { /* a single element */
        msz[0] = 1;
        mbs[0] = mas[0] = 1;
        mgs[0] = 0;
        mred[0] = false;
        m = 1;
    }

    walk w;
    memset(&w, 0, sizeof w);
    w.op = op;
    w.r = r;
    w.isz = rt_size[r];
    w.asz = asz;
    w.inner_reduced = mred[m - 1];
    w.inner = msz[m - 1];
    w.inner_gs = mgs[m - 1];
    w.gbase = gbase;
    w.k = kernel_for(op, r);
    for (int d = 0; d < m - 1; d++) {
        axis_set *s = mred[d] ? &w.red : &w.kept;
        s->size[s->n] = msz[d];
        s->bs[s->n] = mbs[d];
        s->as[s->n] = mred[d] ? 0 : mas[d];
        s->gs[s->n] = mred[d] ? mgs[d] : 0;
        s->n++;
    }
    w.nred = nred;
    if (w.inner_reduced) walk_runs(&w, acc, block);
    else walk_rows(&w, acc, block);
}
