/* ops/manipulation.c — the array API's manipulation functions (reshape,
 * permute_dims, moveaxis, matrix_transpose, expand_dims, squeeze,
 * broadcast_to, concat, stack, flip, roll, repeat, tile), take, diff,
 * tril/triu and the *_like creation functions.
 *
 * Each validates its arguments and records nodes (plan/manip.h): VIEW for
 * strided views, RESHAPE, CONCAT (trees of 2–3 inputs), GATHER (take, repeat,
 * tile, roll); diff and tril/triu are elementwise expressions over slices and
 * index ranges, so they fuse with what surrounds them. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/array.h"
#include "plan/manip.h"

#define GROW_TARGET ((size_t)4 << 20) /* bytes a block may grow to along a broadcast/tiled dim */

static void shape_str(int nd, const int64_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < nd && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%lld%s", (long long)shape[d], nd == 1 ? "," : d + 1 < nd ? ", " : "");
    if (k < n) snprintf(buf + k, n - k, ")");
}

static int norm_axis(const char *fn, int axis, int ndim, int *out)
{
    int a = axis < 0 ? axis + ndim : axis;
    if (axis == ZC_AXIS_NONE || a < 0 || a >= ndim)
        return zc__err(ZC_EINVAL, "%s: axis %d is out of range for an array of %d dimension%s", fn, axis, ndim,
                       ndim == 1 ? "" : "s");
    *out = a;
    return 0;
}

/* An axis for a result of ndim + 1 dims (expand_dims, stack). */
static int norm_new_axis(const char *fn, int axis, int ndim, int *out)
{
    int a = axis < 0 ? axis + ndim + 1 : axis;
    if (axis == ZC_AXIS_NONE || a < 0 || a > ndim)
        return zc__err(ZC_EINVAL, "%s: axis %d is out of range for a result of %d dimensions", fn, axis, ndim + 1);
    if (ndim + 1 > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "%s: more than %d dimensions", fn, ZC_MAX_DIMS);
    *out = a;
    return 0;
}

static int64_t size_of(const zc_array *x)
{
    int64_t n = 1;
    for (int d = 0; d < x->ndim; d++) n *= x->shape[d];
    return n;
}

/* A node of `kind` over one input, with the input's dtype and itemsize. */
static int new_node(node_kind kind, zc_array *x, int nd, const int64_t *shape, const int64_t *chunks, zc_array **out)
{
    ZC_TRY(node_new(kind, nd, shape, chunks, x->dtype, 1, &x, out));
    (*out)->itemsize = x->itemsize;
    return 0;
}

/* Let a block grow along dim d (broadcast, tiled) up to GROW_TARGET bytes. */
static void grow_chunk(int nd, const int64_t *shape, int64_t *chunks, size_t isz, int d)
{
    size_t bytes = isz;
    for (int e = 0; e < nd; e++)
        if (e != d) bytes *= (size_t)(chunks[e] > 0 ? chunks[e] : 1);
    int64_t c = bytes < GROW_TARGET ? (int64_t)(GROW_TARGET / bytes) : 1;
    if (c < chunks[d]) c = chunks[d];
    chunks[d] = c < shape[d] ? c : shape[d] > 0 ? shape[d] : 1;
}

/* ---------------------------------------------------------------- views */

typedef struct {
    int nd;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS], start[ZC_MAX_DIMS], step[ZC_MAX_DIMS], fixed[ZC_MAX_DIMS];
    int in_dim[ZC_MAX_DIMS];
} view_spec;

static void view_identity(const zc_array *x, view_spec *v)
{
    v->nd = x->ndim;
    for (int d = 0; d < x->ndim; d++) {
        v->shape[d] = x->shape[d];
        v->chunks[d] = x->chunks[d];
        v->start[d] = 0;
        v->step[d] = 1;
        v->fixed[d] = -1;
        v->in_dim[d] = d;
    }
}

static int make_view(zc_array *x, view_what what, const view_spec *v, zc_array **out)
{
    ZC_TRY(new_node(NODE_VIEW, x, v->nd, v->shape, v->chunks, out));
    zc_array *r = *out;
    r->p.view.what = what;
    for (int d = 0; d < v->nd; d++) {
        r->p.view.in_dim[d] = v->in_dim[d];
        r->p.view.start[d] = v->start[d];
        r->p.view.step[d] = v->step[d];
    }
    for (int i = 0; i < x->ndim; i++) r->p.view.fixed[i] = v->fixed[i];
    return 0;
}

static int permute(view_what what, zc_array *x, const int *axes, zc_array **out)
{
    view_spec v;
    view_identity(x, &v);
    for (int d = 0; d < x->ndim; d++) {
        v.in_dim[d] = axes[d];
        v.shape[d] = x->shape[axes[d]];
        v.chunks[d] = x->chunks[axes[d]];
    }
    return make_view(x, what, &v, out);
}

int zc_permute_dims(zc_array *x, const int *axes, int naxes, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (naxes && !axes)) return zc__err(ZC_EINVAL, "permute_dims: NULL argument");
    if (naxes != x->ndim)
        return zc__err(ZC_EINVAL, "permute_dims: %d axes given for an array of %d dimensions", naxes, x->ndim);
    int ax[ZC_MAX_DIMS];
    uint64_t seen = 0;
    for (int d = 0; d < naxes; d++) {
        ZC_TRY(norm_axis("permute_dims", axes[d], x->ndim, &ax[d]));
        if ((seen >> ax[d]) & 1) return zc__err(ZC_EINVAL, "permute_dims: axis %d is repeated", axes[d]);
        seen |= 1ull << ax[d];
    }
    return permute(VIEW_PERMUTE, x, ax, out);
}

int zc_moveaxis(zc_array *x, const int *source, const int *destination, int n, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (n && (!source || !destination))) return zc__err(ZC_EINVAL, "moveaxis: NULL argument");
    if (n < 0 || n > x->ndim) return zc__err(ZC_EINVAL, "moveaxis: %d axes for an array of %d dimensions", n, x->ndim);
    int src[ZC_MAX_DIMS], dst[ZC_MAX_DIMS], order[ZC_MAX_DIMS];
    uint64_t ss = 0, ds = 0;
    for (int i = 0; i < n; i++) {
        ZC_TRY(norm_axis("moveaxis", source[i], x->ndim, &src[i]));
        ZC_TRY(norm_axis("moveaxis", destination[i], x->ndim, &dst[i]));
        if ((ss >> src[i]) & 1) return zc__err(ZC_EINVAL, "moveaxis: source axis %d is repeated", source[i]);
        if ((ds >> dst[i]) & 1) return zc__err(ZC_EINVAL, "moveaxis: destination axis %d is repeated", destination[i]);
        ss |= 1ull << src[i];
        ds |= 1ull << dst[i];
    }
    /* destinations take their sources; the other positions take the other axes in order */
    for (int d = 0; d < x->ndim; d++) order[d] = -1;
    for (int i = 0; i < n; i++) order[dst[i]] = src[i];
    int next = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (order[d] >= 0) continue;
        while ((ss >> next) & 1) next++;
        order[d] = next++;
    }
    return permute(VIEW_MOVEAXIS, x, order, out);
}

int zc_matrix_transpose(zc_array *x, zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "matrix_transpose: NULL argument");
    if (x->ndim < 2)
        return zc__err(ZC_EINVAL, "matrix_transpose: the array has %d dimension%s, at least 2 are needed", x->ndim,
                       x->ndim == 1 ? "" : "s");
    int ax[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) ax[d] = d;
    ax[x->ndim - 2] = x->ndim - 1;
    ax[x->ndim - 1] = x->ndim - 2;
    return permute(VIEW_MATRIX_TRANSPOSE, x, ax, out);
}

int zc_expand_dims_axes(zc_array *x, const int *axes, int naxes, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (naxes && !axes)) return zc__err(ZC_EINVAL, "expand_dims: NULL argument");
    int nd = x->ndim + naxes;
    if (naxes < 0 || nd > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "expand_dims: more than %d dimensions", ZC_MAX_DIMS);
    uint64_t added = 0;
    for (int k = 0; k < naxes; k++) { /* each axis counts in the result's dims */
        int a = axes[k] < 0 ? axes[k] + nd : axes[k];
        if (axes[k] == ZC_AXIS_NONE || a < 0 || a >= nd)
            return zc__err(ZC_EINVAL, "expand_dims: axis %d is out of range for a result of %d dimensions", axes[k], nd);
        if ((added >> a) & 1) return zc__err(ZC_EINVAL, "expand_dims: axis %d is repeated", axes[k]);
        added |= 1ull << a;
    }
    view_spec v;
    view_identity(x, &v);
    v.nd = nd;
    for (int d = 0, i = 0; d < nd; d++) {
        bool add = (added >> d) & 1;
        v.in_dim[d] = add ? -1 : i;
        v.shape[d] = add ? 1 : x->shape[i];
        v.chunks[d] = add ? 1 : x->chunks[i];
        v.start[d] = 0;
        v.step[d] = 1;
        i += !add;
    }
    return make_view(x, VIEW_EXPAND, &v, out);
}

int zc_expand_dims(zc_array *x, int axis, zc_array **out)
{
    return zc_expand_dims_axes(x, &axis, 1, out); /* one axis counts in x.ndim + 1 dims either way */
}

int zc_squeeze(zc_array *x, const int *axes, int naxes, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (naxes && !axes)) return zc__err(ZC_EINVAL, "squeeze: NULL argument");
    uint64_t drop = 0;
    if (naxes == 0)
        for (int d = 0; d < x->ndim; d++)
            if (x->shape[d] == 1) drop |= 1ull << d;
    for (int k = 0; k < naxes; k++) {
        int a;
        ZC_TRY(norm_axis("squeeze", axes[k], x->ndim, &a));
        if ((drop >> a) & 1) return zc__err(ZC_EINVAL, "squeeze: axis %d is repeated", axes[k]);
        if (x->shape[a] != 1)
            return zc__err(ZC_EINVAL, "squeeze: axis %d has size %lld; only axes of size 1 can be removed", axes[k],
                           (long long)x->shape[a]);
        drop |= 1ull << a;
    }
    view_spec v;
    view_identity(x, &v);
    v.nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if ((drop >> i) & 1) {
            v.fixed[i] = 0;
            continue;
        }
        v.in_dim[v.nd] = i;
        v.shape[v.nd] = x->shape[i];
        v.chunks[v.nd] = x->chunks[i];
        v.start[v.nd] = 0;
        v.step[v.nd++] = 1;
    }
    return make_view(x, VIEW_SQUEEZE, &v, out);
}

int zc_broadcast_to(zc_array *x, int ndim, const int64_t *shape, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (ndim && !shape)) return zc__err(ZC_EINVAL, "broadcast_to: NULL argument");
    char xs[512], ts[512];
    shape_str(x->ndim, x->shape, xs, sizeof xs);
    if (ndim < 0 || ndim > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "broadcast_to: %d dimensions", ndim);
    shape_str(ndim, shape, ts, sizeof ts);
    if (ndim < x->ndim) return zc__err(ZC_EINVAL, "broadcast_to: cannot broadcast shape %s to fewer dimensions %s", xs, ts);
    int64_t total = 1;
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0 || ck_mul_i64(total, shape[d], &total))
            return zc__err(ZC_EINVAL, "broadcast_to: bad target shape %s", ts);
    int off = ndim - x->ndim;
    view_spec v;
    view_identity(x, &v);
    v.nd = ndim;
    uint64_t grown = 0;
    for (int d = 0; d < ndim; d++) {
        v.shape[d] = shape[d];
        v.start[d] = 0;
        if (d < off) {
            v.in_dim[d] = -1;
            v.step[d] = 0;
            v.chunks[d] = 1;
            grown |= 1ull << d;
            continue;
        }
        int i = d - off;
        int64_t s = x->shape[i];
        if (s != shape[d] && s != 1)
            return zc__err(ZC_EINVAL, "broadcast_to: shape %s does not broadcast to %s (dimension %d: %lld vs %lld)", xs,
                           ts, d, (long long)s, (long long)shape[d]);
        v.in_dim[d] = i;
        v.step[d] = s == shape[d] ? 1 : 0;
        v.chunks[d] = s == shape[d] ? x->chunks[i] : 1;
        if (s != shape[d]) grown |= 1ull << d;
    }
    for (int d = ndim - 1; d >= 0; d--)
        if ((grown >> d) & 1) grow_chunk(ndim, v.shape, v.chunks, x->itemsize, d);
    return make_view(x, VIEW_BROADCAST, &v, out);
}

int zc_flip(zc_array *x, const int *axes, int naxes, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (naxes && !axes)) return zc__err(ZC_EINVAL, "flip: NULL argument");
    uint64_t mask = 0;
    if (naxes == 0) mask = x->ndim ? ~0ull >> (64 - x->ndim) : 0;
    for (int k = 0; k < naxes; k++) {
        int a;
        ZC_TRY(norm_axis("flip", axes[k], x->ndim, &a));
        if ((mask >> a) & 1) return zc__err(ZC_EINVAL, "flip: axis %d is repeated", axes[k]);
        mask |= 1ull << a;
    }
    view_spec v;
    view_identity(x, &v);
    for (int d = 0; d < x->ndim; d++)
        if ((mask >> d) & 1) {
            v.start[d] = x->shape[d] > 0 ? x->shape[d] - 1 : 0;
            v.step[d] = -1;
        }
    return make_view(x, VIEW_FLIP, &v, out);
}

/* ---------------------------------------------------------------- reshape */

int zc_reshape(zc_array *x, int ndim, const int64_t *shape, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (ndim && !shape)) return zc__err(ZC_EINVAL, "reshape: NULL argument");
    if (ndim < 0 || ndim > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "reshape: %d dimensions (0..%d)", ndim, ZC_MAX_DIMS);
    char xs[512], ts[512];
    shape_str(x->ndim, x->shape, xs, sizeof xs);
    shape_str(ndim, shape, ts, sizeof ts);
    int64_t sh[ZC_MAX_DIMS], known = 1, size = size_of(x);
    int infer = -1;
    for (int d = 0; d < ndim; d++) {
        sh[d] = shape[d];
        if (shape[d] == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (shape[d] < 0)
            return zc__err(ZC_EINVAL, "reshape: bad shape %s (sizes >= 0, at most one -1)", ts);
        if (ck_mul_i64(known, shape[d], &known)) return zc__err(ZC_EINVAL, "reshape: shape %s overflows", ts);
    }
    if (infer >= 0) {
        if (known == 0 || size % known)
            return zc__err(ZC_EINVAL, "reshape: cannot reshape an array of size %lld (shape %s) into shape %s",
                           (long long)size, xs, ts);
        sh[infer] = size / known;
    } else if (known != size) {
        return zc__err(ZC_EINVAL, "reshape: cannot reshape an array of size %lld (shape %s) into shape %s",
                       (long long)size, xs, ts);
    }
    bool same = ndim == x->ndim;
    for (int d = 0; same && d < ndim; d++) same = sh[d] == x->shape[d];
    if (same) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    int64_t ch[ZC_MAX_DIMS];
    for (int d = 0; d < ndim; d++) ch[d] = sh[d] > 0 ? sh[d] : 1;
    if (size > 0) {
        /* per group of dims with equal products: blocks of about the input's
         * block elements, as whole rows of the group when the input's are */
        int i = 0, o = 0;
        while (i < x->ndim || o < ndim) {
            int i0 = i, o0 = o;
            int64_t pi = 1, po = 1;
            if (i < x->ndim) pi *= x->shape[i++];
            if (o < ndim) po *= sh[o++];
            while (pi != po) {
                if (pi < po && i < x->ndim) pi *= x->shape[i++];
                else if (po < pi && o < ndim) po *= sh[o++];
                else break;
            }
            int64_t e = 1, rows = i > i0 ? x->chunks[i0] : 1;
            for (int k = i0; k < i; k++) e *= x->chunks[k];
            for (int k = i0 + 1; k < i; k++) rows *= x->shape[k];
            if (rows <= 4 * e) e = rows; /* whole rows of the group: each input block read once */
            for (int k = o - 1; k >= o0; k--) {
                if (e >= sh[k]) {
                    ch[k] = sh[k];
                    e /= sh[k];
                } else {
                    ch[k] = e > 1 ? e : 1;
                    e = 1;
                }
            }
        }
    }
    return new_node(NODE_RESHAPE, x, ndim, sh, ch, out);
}

/* x as 1-D (C order). */
static int flatten(zc_array *x, zc_array **out)
{
    int64_t m1 = -1;
    return zc_reshape(x, 1, &m1, out);
}

/* ---------------------------------------------------------------- concat, stack */

static int concat_node(int n, zc_array **in, int ax, zc_array **out)
{
    zc_array *x = in[0];
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = x->shape[d];
        chunks[d] = x->chunks[d];
    }
    for (int k = 1; k < n; k++) {
        shape[ax] += in[k]->shape[ax];
        if (in[k]->chunks[ax] > chunks[ax]) chunks[ax] = in[k]->chunks[ax];
    }
    ZC_TRY(node_new(NODE_CONCAT, x->ndim, shape, chunks, x->dtype, n, in, out));
    (*out)->itemsize = x->itemsize;
    (*out)->p.concat.axis = ax;
    return 0;
}

static void release_all(int n, zc_array **v)
{
    for (int i = 0; i < n; i++) zc_array_release(v[i]);
}

int zc_concat(int n, zc_array *const *arrays, int axis, zc_array **out)
{
    zc__err_clear();
    if (!arrays || !out || n < 1) return zc__err(ZC_EINVAL, "concat: NULL argument or no arrays");
    for (int k = 0; k < n; k++)
        if (!arrays[k]) return zc__err(ZC_EINVAL, "concat: array %d is NULL", k);
    if (axis == ZC_AXIS_NONE) {
        zc_array **flat = zc__calloc((size_t)n, sizeof *flat);
        if (!flat) return ZC_ENOMEM;
        int rc = 0;
        for (int k = 0; k < n && rc == 0; k++) rc = flatten(arrays[k], &flat[k]);
        if (rc == 0) rc = zc_concat(n, flat, 0, out);
        release_all(n, flat);
        zc__free(flat);
        return rc;
    }
    zc_array *x = arrays[0];
    if (x->ndim == 0) return zc__err(ZC_EINVAL, "concat: 0-d arrays cannot be joined along an axis (use axis None)");
    int ax;
    ZC_TRY(norm_axis("concat", axis, x->ndim, &ax));
    zc_dtype *dts = zc__malloc_array((size_t)n, sizeof *dts);
    if (!dts) return ZC_ENOMEM;
    int64_t total = 0;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        const zc_array *a = arrays[k];
        dts[k] = a->dtype;
        bool ok = a->ndim == x->ndim;
        for (int d = 0; ok && d < x->ndim; d++) ok = d == ax || a->shape[d] == x->shape[d];
        if (!ok) {
            char s0[512], sk[512];
            shape_str(x->ndim, x->shape, s0, sizeof s0);
            shape_str(a->ndim, a->shape, sk, sizeof sk);
            rc = zc__err(ZC_EINVAL, "concat: array %d has shape %s, array 0 %s: they must agree except along axis %d", k,
                         sk, s0, axis);
        } else if (ck_add_i64(total, a->shape[ax], &total)) {
            rc = zc__err(ZC_EINVAL, "concat: the result is too large");
        }
    }
    zc_dtype dt = x->dtype;
    bool mixed = false;
    for (int k = 1; k < n; k++) mixed |= dts[k] != dt;
    if (rc == 0 && mixed && (rc = zc_result_type(n, dts, &dt)) < 0) zc__err_wrap(rc, "concat");
    zc__free(dts);
    if (rc < 0) return rc;
    zc_array **cur = zc__calloc((size_t)n, sizeof *cur);
    if (!cur) return ZC_ENOMEM;
    for (int k = 0; k < n && rc == 0; k++) {
        if (arrays[k]->dtype == dt) {
            zc_array_retain(arrays[k]);
            cur[k] = arrays[k];
        } else {
            rc = zc_astype(arrays[k], dt, &cur[k]);
        }
    }
    /* a tree of nodes of up to NODE_MAX_INPUTS inputs */
    int m = n;
    while (rc == 0 && m > 1) {
        int w = 0;
        for (int k = 0; k < m && rc == 0; k += NODE_MAX_INPUTS) {
            int g = m - k < NODE_MAX_INPUTS ? m - k : NODE_MAX_INPUTS;
            zc_array *j = NULL;
            if (g == 1) {
                j = cur[k];
                cur[k] = NULL;
            } else {
                rc = concat_node(g, cur + k, ax, &j);
                for (int t = 0; t < g; t++) {
                    zc_array_release(cur[k + t]);
                    cur[k + t] = NULL;
                }
            }
            cur[w++] = j;
        }
        m = w;
    }
    if (rc == 0) {
        *out = cur[0];
        cur[0] = NULL;
    }
    release_all(n, cur);
    zc__free(cur);
    return rc;
}

int zc_stack(int n, zc_array *const *arrays, int axis, zc_array **out)
{
    zc__err_clear();
    if (!arrays || !out || n < 1) return zc__err(ZC_EINVAL, "stack: NULL argument or no arrays");
    for (int k = 0; k < n; k++)
        if (!arrays[k]) return zc__err(ZC_EINVAL, "stack: array %d is NULL", k);
    zc_array *x = arrays[0];
    int ax = 0;
    ZC_TRY(norm_new_axis("stack", axis, x->ndim, &ax));
    for (int k = 1; k < n; k++) {
        bool ok = arrays[k]->ndim == x->ndim;
        for (int d = 0; ok && d < x->ndim; d++) ok = arrays[k]->shape[d] == x->shape[d];
        if (!ok) {
            char s0[512], sk[512];
            shape_str(x->ndim, x->shape, s0, sizeof s0);
            shape_str(arrays[k]->ndim, arrays[k]->shape, sk, sizeof sk);
            return zc__err(ZC_EINVAL, "stack: array %d has shape %s, array 0 %s: all must have one shape", k, sk, s0);
        }
    }
    zc_array **ex = zc__calloc((size_t)n, sizeof *ex);
    if (!ex) return ZC_ENOMEM;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) rc = zc_expand_dims(arrays[k], ax, &ex[k]);
    if (rc == 0) rc = zc_concat(n, ex, ax, out);
    release_all(n, ex);
    zc__free(ex);
    return rc;
}

/* ---------------------------------------------------------------- gathers */

static int make_gather(zc_array *x, int ax, gather_mode mode, int64_t k, int64_t outlen, zc_array **out)
{
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = x->shape[d];
        chunks[d] = x->chunks[d];
    }
    shape[ax] = outlen;
    if (mode == GATHER_REPEAT || mode == GATHER_TILE) grow_chunk(x->ndim, shape, chunks, x->itemsize, ax);
    ZC_TRY(new_node(NODE_GATHER, x, x->ndim, shape, chunks, out));
    (*out)->p.gather.axis = ax;
    (*out)->p.gather.mode = mode;
    (*out)->p.gather.k = k;
    return 0;
}

/* Roll along one axis of an array (shift already any integer). */
static int roll_axis(zc_array *x, int ax, int64_t shift, zc_array **out)
{
    int64_t n = x->shape[ax], s = n ? shift % n : 0;
    if (s < 0) s += n;
    if (s == 0) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    return make_gather(x, ax, GATHER_ROLL, s, n, out);
}

int zc_roll(zc_array *x, const int64_t *shifts, int nshifts, const int *axes, int naxes, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || !shifts || (naxes && !axes)) return zc__err(ZC_EINVAL, "roll: NULL argument");
    if (naxes == 0) {
        if (nshifts != 1) return zc__err(ZC_EINVAL, "roll: %d shifts without axes (one shift rolls the flattened array)", nshifts);
        zc_array *f, *r;
        ZC_TRY(flatten(x, &f));
        int rc = roll_axis(f, 0, shifts[0], &r);
        zc_array_release(f);
        if (rc < 0) return rc;
        rc = zc_reshape(r, x->ndim, x->shape, out);
        zc_array_release(r);
        return rc;
    }
    if (nshifts != naxes && nshifts != 1)
        return zc__err(ZC_EINVAL, "roll: %d shifts for %d axes (give one, or one per axis)", nshifts, naxes);
    int64_t total[ZC_MAX_DIMS] = {0};
    for (int k = 0; k < naxes; k++) {
        int a;
        ZC_TRY(norm_axis("roll", axes[k], x->ndim, &a));
        int64_t s = shifts[nshifts == 1 ? 0 : k], n = x->shape[a];
        total[a] = n ? ((total[a] + s % n) % n + n) % n : 0; /* repeated axes add up, like NumPy */
    }
    zc_array *cur = x;
    zc_array_retain(cur);
    for (int a = 0; a < x->ndim; a++) {
        if (!total[a]) continue;
        zc_array *next;
        int rc = roll_axis(cur, a, total[a], &next);
        zc_array_release(cur);
        if (rc < 0) return rc;
        cur = next;
    }
    *out = cur;
    return 0;
}

int zc_repeat(zc_array *x, int64_t repeats, int axis, zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "repeat: NULL argument");
    if (repeats < 0) return zc__err(ZC_EINVAL, "repeat: repeats must be >= 0 (got %lld)", (long long)repeats);
    if (axis == ZC_AXIS_NONE) {
        zc_array *f;
        ZC_TRY(flatten(x, &f));
        int rc = zc_repeat(f, repeats, 0, out);
        zc_array_release(f);
        return rc;
    }
    int ax;
    ZC_TRY(norm_axis("repeat", axis, x->ndim, &ax));
    int64_t len;
    if (ck_mul_i64(x->shape[ax], repeats, &len)) return zc__err(ZC_EINVAL, "repeat: the result is too large");
    if (repeats == 1) {
        zc_array_retain(x);
        *out = x;
        return 0;
    }
    return make_gather(x, ax, GATHER_REPEAT, repeats, len, out);
}

int zc_tile(zc_array *x, const int64_t *reps, int nreps, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (nreps && !reps)) return zc__err(ZC_EINVAL, "tile: NULL argument");
    if (nreps < 0 || nreps > ZC_MAX_DIMS) return zc__err(ZC_EINVAL, "tile: %d repetitions", nreps);
    for (int k = 0; k < nreps; k++)
        if (reps[k] < 0) return zc__err(ZC_EINVAL, "tile: reps[%d] is %lld; repetitions must be >= 0", k, (long long)reps[k]);
    int nd = nreps > x->ndim ? nreps : x->ndim;
    int64_t r[ZC_MAX_DIMS], sh[ZC_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int k = d - (nd - nreps), i = d - (nd - x->ndim);
        r[d] = k >= 0 ? reps[k] : 1;
        sh[d] = i >= 0 ? x->shape[i] : 1;
        int64_t t;
        if (ck_mul_i64(sh[d], r[d], &t)) return zc__err(ZC_EINVAL, "tile: the result is too large");
    }
    zc_array *cur;
    if (nd > x->ndim) ZC_TRY(zc_reshape(x, nd, sh, &cur));
    else {
        zc_array_retain(x);
        cur = x;
    }
    for (int d = 0; d < nd; d++) {
        if (r[d] == 1) continue;
        zc_array *next;
        int rc = make_gather(cur, d, GATHER_TILE, r[d], sh[d] * r[d], &next);
        zc_array_release(cur);
        if (rc < 0) return rc;
        cur = next;
    }
    *out = cur;
    return 0;
}

int zc_take(zc_array *x, const int64_t *indices, int64_t n, int axis, zc_array **out)
{
    zc__err_clear();
    if (!x || !out || (n > 0 && !indices)) return zc__err(ZC_EINVAL, "take: NULL argument");
    if (n < 0) return zc__err(ZC_EINVAL, "take: %lld indices", (long long)n);
    if (axis == ZC_AXIS_NONE) {
        zc_array *f;
        ZC_TRY(flatten(x, &f));
        int rc = zc_take(f, indices, n, 0, out);
        zc_array_release(f);
        return rc;
    }
    int ax;
    ZC_TRY(norm_axis("take", axis, x->ndim, &ax));
    int64_t len = x->shape[ax];
    int64_t *idx = zc__malloc_array((size_t)(n ? n : 1), sizeof *idx);
    if (!idx) return ZC_ENOMEM;
    for (int64_t k = 0; k < n; k++) {
        int64_t v = indices[k] < 0 ? indices[k] + len : indices[k];
        if (v < 0 || v >= len) {
            zc__free(idx);
            return zc__err(ZC_EINVAL, "take: index %lld (position %lld) is out of bounds for axis %d of size %lld",
                           (long long)indices[k], (long long)k, axis, (long long)len);
        }
        idx[k] = v;
    }
    int rc = make_gather(x, ax, GATHER_TAKE, 0, n, out);
    if (rc < 0) {
        zc__free(idx);
        return rc;
    }
    (*out)->p.gather.idx = idx;
    (*out)->p.gather.nidx = n;
    return 0;
}

/* ---------------------------------------------------------------- diff */

/* x[1:] (first = 1) or x[:-1] (first = 0) along ax. */
static int shifted(zc_array *x, int ax, int first, zc_array **out)
{
    zc_index idx[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) idx[d] = (zc_index){ZC_IDX_SLICE, 0, 0, 1, 0, 0, 0};
    if (first) idx[ax] = (zc_index){ZC_IDX_SLICE, 1, 0, 1, 1, 0, 0};
    else idx[ax] = (zc_index){ZC_IDX_SLICE, 0, -1, 1, 0, 1, 0};
    return zc_getitem(x, idx, x->ndim, out);
}

int zc_diff(zc_array *x, int axis, int n, zc_array *prepend, zc_array *append, zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "diff: NULL argument");
    if (x->ndim == 0) return zc__err(ZC_EINVAL, "diff: the array must have at least 1 dimension");
    if (n < 0) return zc__err(ZC_EINVAL, "diff: order n must be >= 0 (got %d)", n);
    int ax;
    ZC_TRY(norm_axis("diff", axis, x->ndim, &ax));
    zc_array *parts[3], *cur = NULL;
    int np = 0, rc = 0;
    zc_array *extra[2] = {prepend, append};
    for (int e = 0; e < 2 && rc == 0; e++) {
        zc_array *p = extra[e];
        if (e == 1) {
            zc_array_retain(x);
            parts[np++] = x;
        }
        if (!p) continue;
        if (p->ndim == 0) {
            int64_t sh[ZC_MAX_DIMS];
            memcpy(sh, x->shape, sizeof(int64_t) * (size_t)x->ndim);
            sh[ax] = 1;
            if ((rc = zc_broadcast_to(p, x->ndim, sh, &parts[np])) == 0) np++;
        } else {
            zc_array_retain(p);
            parts[np++] = p;
        }
    }
    if (rc == 0 && np > 1) {
        rc = zc_concat(np, parts, ax, &cur);
    } else if (rc == 0) {
        zc_array_retain(x);
        cur = x;
    }
    release_all(np, parts);
    if (rc < 0) return zc__err_wrap(rc, "diff");
    for (int k = 0; k < n && rc == 0; k++) {
        zc_array *ab[2] = {NULL, NULL}, *next = NULL;
        rc = shifted(cur, ax, 1, &ab[0]);
        if (rc == 0) rc = shifted(cur, ax, 0, &ab[1]);
        if (rc == 0) rc = zc_elementwise(cur->dtype == ZC_BOOL ? "not_equal" : "subtract", 2, ab, &next);
        release_all(2, ab);
        zc_array_release(cur);
        cur = next;
    }
    if (rc < 0) {
        zc_array_release(cur);
        return zc__err_wrap(rc, "diff");
    }
    *out = cur;
    return 0;
}

/* ---------------------------------------------------------------- tril, triu */

static int triangle(const char *fn, zc_array *x, int64_t k, int lower, zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "%s: NULL argument", fn);
    if (x->ndim < 2)
        return zc__err(ZC_EINVAL, "%s: the array has %d dimension%s, at least 2 are needed", fn, x->ndim,
                       x->ndim == 1 ? "" : "s");
    int nd = x->ndim;
    int64_t m = x->shape[nd - 2], n = x->shape[nd - 1], col[2] = {m, 1};
    zc_array *ri = NULL, *rows = NULL, *cols = NULL, *dif = NULL, *kk = NULL, *mask = NULL, *zero = NULL;
    int rc = zc_arange(0, (double)m, 1, ZC_INT64, x->chunks[nd - 2], &ri);
    if (rc == 0) rc = zc_reshape(ri, 2, col, &rows);
    if (rc == 0) rc = zc_arange(0, (double)n, 1, ZC_INT64, x->chunks[nd - 1], &cols);
    if (rc == 0) rc = zc_elementwise("subtract", 2, (zc_array *[]){cols, rows}, &dif);
    if (rc == 0) rc = zc_scalar((double)k, 1, &kk);
    if (rc == 0) rc = zc_elementwise(lower ? "less_equal" : "greater_equal", 2, (zc_array *[]){dif, kk}, &mask);
    if (rc == 0) rc = zc_full(0, NULL, NULL, x->dtype, 0, &zero);
    if (rc == 0) rc = zc_elementwise("where", 3, (zc_array *[]){mask, x, zero}, out);
    zc_array *all[] = {ri, rows, cols, dif, kk, mask, zero};
    release_all(7, all);
    return rc < 0 ? zc__err_wrap(rc, "%s", fn) : 0;
}

int zc_tril(zc_array *x, int64_t k, zc_array **out) { return triangle("tril", x, k, 1, out); }
int zc_triu(zc_array *x, int64_t k, zc_array **out) { return triangle("triu", x, k, 0, out); }

/* ---------------------------------------------------------------- *_like */

int zc_full_like(zc_array *x, double value, zc_dtype dtype, zc_array **out)
{
    zc__err_clear();
    if (!x || !out) return zc__err(ZC_EINVAL, "full_like: NULL argument");
    return zc_full(x->ndim, x->shape, x->chunks, dtype == ZC_DTYPE_INVALID ? x->dtype : dtype, value, out);
}

int zc_zeros_like(zc_array *x, zc_dtype dtype, zc_array **out) { return zc_full_like(x, 0, dtype, out); }
int zc_ones_like(zc_array *x, zc_dtype dtype, zc_array **out) { return zc_full_like(x, 1, dtype, out); }
int zc_empty_like(zc_array *x, zc_dtype dtype, zc_array **out) { return zc_full_like(x, 0, dtype, out); }
