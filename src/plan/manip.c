/* plan/manip.c — regions, memory projections, names and JSON of the
 * manipulation and cumulative node kinds (see manip.h).
 *
 * A region is always C order of the selection's counts; selections may have
 * steps > 1 (a consumer's strided pull), so every kind maps (start, step,
 * count) per dim rather than assuming whole blocks. */
#include "plan/manip.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "plan/kind.h"
#include "zarr/copy.h"

#define RESHAPE_SLACK 4096  /* elements a reshape leaf may pull beyond 2× its region */
#define RESHAPE_SAMPLES 8   /* translated regions simulated by the reshape projection */

static int64_t cnt_of(const zc_range *r) { return r->stop > r->start ? (r->stop - r->start - 1) / r->step + 1 : 0; }

static int64_t elems_of(int nd, const zc_range *sel)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= cnt_of(&sel[d]);
    return n;
}

/* Counts of the dims before and after `ax` (elements). */
static void lead_inner(int nd, const zc_range *sel, int ax, int64_t *lead, int64_t *inner)
{
    *lead = 1;
    *inner = 1;
    for (int d = 0; d < ax; d++) *lead *= cnt_of(&sel[d]);
    for (int d = ax + 1; d < nd; d++) *inner *= cnt_of(&sel[d]);
}

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* Pull a region of `in` into a new buffer (*buf, freed by the caller). */
static int pull(zc_array *in, const zc_range *sel, unsigned char **buf)
{
    size_t n = node_region_bytes(in, sel);
    if (!(*buf = zc__malloc(n ? n : 1))) return ZC_ENOMEM;
    return n ? node_region(in, sel, *buf) : 0;
}

/* ================================================================ VIEW */

/* The input box of a view region, and per output dim the element stride in
 * that box (0 = broadcast, < 0 = flipped) and the box offset of the region's
 * first element. Returns true when the box's layout differs from the
 * region's (a copy is needed); false when it can be pulled straight into out. */
static bool view_box(const zc_array *a, const zc_range *sel, zc_range *box, int64_t *bstride, int64_t *boff)
{
    const zc_array *in = a->inputs[0];
    const typeof(a->p.view) *v = &a->p.view;
    int64_t bcnt[ZC_MAX_DIMS], ist[ZC_MAX_DIMS];
    for (int i = 0; i < in->ndim; i++) {
        int64_t f = v->fixed[i] >= 0 ? v->fixed[i] : 0;
        box[i] = (zc_range){f, f + 1, 1};
        bcnt[i] = 1;
    }
    for (int d = 0; d < a->ndim; d++) {
        int i = v->in_dim[d];
        int64_t c = cnt_of(&sel[d]);
        if (i < 0) continue;
        if (v->step[d] == 0 || c == 0) {
            box[i] = (zc_range){v->start[d], v->start[d] + 1, 1};
            continue;
        }
        int64_t first = v->start[d] + v->step[d] * sel[d].start, istep = v->step[d] * sel[d].step;
        if (istep > 0) box[i] = (zc_range){first, first + (c - 1) * istep + 1, istep};
        else box[i] = (zc_range){first + (c - 1) * istep, first + 1, -istep};
        bcnt[i] = c;
    }
    int64_t s = 1;
    for (int i = in->ndim - 1; i >= 0; i--) {
        ist[i] = s;
        s *= bcnt[i];
    }
    *boff = 0;
    bool copy = false;
    int prev = -1;
    for (int d = 0; d < a->ndim; d++) {
        int i = v->in_dim[d];
        int64_t c = cnt_of(&sel[d]);
        if (i < 0 || v->step[d] == 0) {
            bstride[d] = 0;
            copy |= c > 1;
            continue;
        }
        if (v->step[d] > 0) {
            bstride[d] = ist[i];
        } else {
            bstride[d] = -ist[i];
            if (c > 0) *boff += (c - 1) * ist[i];
            copy |= c > 1;
        }
        if (c > 1) {
            copy |= i < prev;
            prev = i;
        }
    }
    return copy;
}

/* Strided copy into a C-order region; source strides may be negative or 0
 * (zarr_copy_nd documents positive strides only). */
static void view_copy(unsigned char *out, const unsigned char *src, const int64_t *ss, const int64_t *cnt, int nd,
                      size_t isz)
{
    int64_t idx[ZC_MAX_DIMS] = {0}, rows = 1, last = nd ? cnt[nd - 1] : 1, ls = nd ? ss[nd - 1] : 0;
    for (int d = 0; d < nd - 1; d++) rows *= cnt[d];
    for (int64_t r = 0; r < rows; r++) {
        const unsigned char *p = src;
        for (int d = 0; d < nd - 1; d++) p += idx[d] * ss[d];
        if (ls == (int64_t)isz) {
            memcpy(out, p, (size_t)last * isz);
            out += (size_t)last * isz;
        } else {
            for (int64_t k = 0; k < last; k++, out += isz) memcpy(out, p + k * ls, isz);
        }
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
    }
}

static int view_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    if (elems_of(a->ndim, sel) == 0) return 0;
    zc_range box[ZC_MAX_DIMS];
    int64_t bstride[ZC_MAX_DIMS], boff;
    zc_array *in = a->inputs[0];
    if (!view_box(a, sel, box, bstride, &boff)) return node_region(in, box, out);
    unsigned char *tmp;
    int rc = pull(in, box, &tmp);
    if (rc == 0) {
        int64_t cnt[ZC_MAX_DIMS] = {0}, ss[ZC_MAX_DIMS] = {0};
        for (int d = 0; d < a->ndim; d++) {
            cnt[d] = cnt_of(&sel[d]);
            ss[d] = bstride[d] * (int64_t)a->itemsize;
        }
        view_copy(out, tmp + boff * (int64_t)a->itemsize, ss, cnt, a->ndim, a->itemsize);
    }
    zc__free(tmp);
    return rc;
}

static size_t view_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    if (elems_of(a->ndim, sel) == 0) return 0;
    zc_range box[ZC_MAX_DIMS];
    int64_t bstride[ZC_MAX_DIMS], boff;
    const zc_array *in = a->inputs[0];
    bool copy = view_box(a, sel, box, bstride, &boff);
    return (copy ? node_region_bytes(in, box) : 0) + proj(in, box);
}

/* ================================================================ CONCAT */

static int64_t concat_off(const zc_array *a, int k)
{
    int64_t off = 0;
    for (int j = 0; j < k; j++) off += a->inputs[j]->shape[a->p.concat.axis];
    return off;
}

/* The part of the region that input k supplies: its selection in the input
 * and its first position along the axis in the region; returns its count. */
static int64_t concat_part(const zc_array *a, int k, const zc_range *sel, zc_range *isel, int64_t *pos)
{
    int ax = a->p.concat.axis;
    const zc_range *r = &sel[ax];
    int64_t off = concat_off(a, k), len = a->inputs[k]->shape[ax], c = cnt_of(r);
    if (c == 0) return 0;
    int64_t lo = off > r->start ? off : r->start, hi = off + len < r->stop ? off + len : r->stop;
    int64_t t0 = ck_ceildiv(lo - r->start, r->step), j0 = r->start + t0 * r->step;
    if (t0 >= c || j0 >= hi) return 0;
    int64_t n = (hi - 1 - j0) / r->step + 1;
    if (t0 + n > c) n = c - t0;
    memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
    isel[ax] = (zc_range){j0 - off, j0 - off + (n - 1) * r->step + 1, r->step};
    *pos = t0;
    return n;
}

static int concat_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    int ax = a->p.concat.axis;
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, c = cnt_of(&sel[ax]);
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    size_t row = (size_t)inner * a->itemsize; /* bytes of one index along the axis */
    zc_range isel[NODE_MAX_INPUTS][ZC_MAX_DIMS];
    int64_t pos[NODE_MAX_INPUTS], n[NODE_MAX_INPUTS], most = 0;
    for (int k = 0; k < a->ninputs; k++) {
        n[k] = concat_part(a, k, sel, isel[k], &pos[k]);
        if (n[k] == c) return node_region(a->inputs[k], isel[k], out); /* all from one input */
        if (n[k] > most) most = n[k];
    }
    if (lead == 1) { /* the parts are contiguous in out */
        for (int k = 0; k < a->ninputs; k++)
            if (n[k]) ZC_TRY(node_region(a->inputs[k], isel[k], out + (size_t)pos[k] * row));
        return 0;
    }
    unsigned char *tmp = zc__malloc_array((size_t)(lead * most), row);
    if (!tmp) return ZC_ENOMEM;
    int rc = 0;
    for (int k = 0; k < a->ninputs && rc == 0; k++) {
        if (!n[k]) continue;
        if ((rc = node_region(a->inputs[k], isel[k], tmp)) < 0) break;
        int64_t ds = c * (int64_t)row, ss = n[k] * (int64_t)row;
        zarr_copy_nd(out + (size_t)pos[k] * row, &ds, tmp, &ss, &lead, 1, (size_t)n[k] * row);
    }
    zc__free(tmp);
    return rc;
}

static size_t concat_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    int ax = a->p.concat.axis;
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, c = cnt_of(&sel[ax]), st = sel[ax].step;
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    size_t worst = 0, tmp = 0;
    for (int k = 0; k < a->ninputs; k++) {
        int64_t len = a->inputs[k]->shape[ax], pk = ck_ceildiv(len, st);
        if (pk > c) pk = c;
        if (pk <= 0) continue;
        zc_range isel[ZC_MAX_DIMS];
        memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
        isel[ax] = (zc_range){0, (pk - 1) * st + 1, st};
        worst = max_sz(worst, proj(a->inputs[k], isel));
        if (lead > 1) tmp = max_sz(tmp, (size_t)(lead * pk * inner) * a->itemsize);
    }
    return tmp + worst;
}

/* ================================================================ GATHER */

typedef struct {
    int64_t v, t; /* input index, position in the region */
} gpair;

static int cmp_gpair(const void *x, const void *y)
{
    const gpair *a = x, *b = y;
    if (a->v != b->v) return a->v < b->v ? -1 : 1;
    return a->t < b->t ? -1 : a->t > b->t;
}

static int64_t gather_map(const zc_array *a, int64_t j)
{
    const typeof(a->p.gather) *g = &a->p.gather;
    int64_t n = a->inputs[0]->shape[g->axis];
    switch ((gather_mode)g->mode) {
    case GATHER_TAKE: return g->idx[j];
    case GATHER_REPEAT: return j / g->k;
    case GATHER_TILE: return j % n;
    case GATHER_ROLL: return (j - g->k + n) % n;
    }
    return 0;
}

/* Output indices along the axis are sorted by input index and cut into
 * clusters spanning at most as many input indices as the region has along
 * the axis; each cluster is one pull, then its slabs are copied to their
 * places (runs of consecutive indices as one copy). */
static int gather_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    int ax = a->p.gather.axis;
    zc_array *in = a->inputs[0];
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, c = cnt_of(&sel[ax]), n = in->shape[ax];
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    size_t row = (size_t)inner * a->itemsize;
    gpair *pr = zc__malloc_array((size_t)c, sizeof *pr);
    if (!pr) return ZC_ENOMEM;
    bool sorted = true;
    for (int64_t t = 0; t < c; t++) {
        pr[t] = (gpair){gather_map(a, sel[ax].start + t * sel[ax].step), t};
        if (t && pr[t].v < pr[t - 1].v) sorted = false;
    }
    if (!sorted) qsort(pr, (size_t)c, sizeof *pr, cmp_gpair);
    int64_t w = c < n ? c : n, widest = 1; /* cluster span limit, and the widest cluster */
    for (int64_t p = 0; p < c;) {
        int64_t v0 = pr[p].v, q = p;
        while (q < c && pr[q].v - v0 < w) q++;
        if (pr[q - 1].v - v0 + 1 > widest) widest = pr[q - 1].v - v0 + 1;
        p = q;
    }
    unsigned char *tmp = zc__malloc_array((size_t)(lead * widest), row);
    int rc = tmp ? 0 : ZC_ENOMEM;
    for (int64_t p = 0; p < c && rc == 0;) {
        int64_t v0 = pr[p].v, q = p;
        while (q < c && pr[q].v - v0 < w) q++;
        int64_t span = pr[q - 1].v - v0 + 1;
        zc_range isel[ZC_MAX_DIMS];
        memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
        isel[ax] = (zc_range){v0, v0 + span, 1};
        if ((rc = node_region(in, isel, tmp)) < 0) break;
        int64_t ds = c * (int64_t)row, ss = span * (int64_t)row;
        for (int64_t r = p; r < q;) {
            int64_t e = r + 1;
            while (e < q && pr[e].t == pr[e - 1].t + 1 && pr[e].v == pr[e - 1].v + 1) e++;
            zarr_copy_nd(out + (size_t)pr[r].t * row, &ds, tmp + (size_t)(pr[r].v - v0) * row, &ss, &lead, 1,
                         (size_t)(e - r) * row);
            r = e;
        }
        p = q;
    }
    zc__free(tmp);
    zc__free(pr);
    return rc;
}

static size_t gather_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    int ax = a->p.gather.axis;
    const zc_array *in = a->inputs[0];
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, c = cnt_of(&sel[ax]), n = in->shape[ax];
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    int64_t w = c < n ? c : n;
    if (a->p.gather.mode == GATHER_REPEAT && a->p.gather.k > 0) { /* c indices j/k span at most this */
        int64_t rw = (c - 1) * sel[ax].step / a->p.gather.k + 2;
        if (rw < w) w = rw;
    }
    zc_range isel[ZC_MAX_DIMS];
    memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
    isel[ax] = (zc_range){0, w, 1};
    return (size_t)c * sizeof(gpair) + (size_t)(lead * w * inner) * a->itemsize + proj(in, isel);
}

/* ================================================================ RESHAPE */

/* Groups of consecutive input and output dims with equal products: within a
 * group the reshape only merges and splits, and groups are independent. */
typedef struct {
    int n;
    int i0[2 * ZC_MAX_DIMS + 1], i1[2 * ZC_MAX_DIMS + 1], o0[2 * ZC_MAX_DIMS + 1], o1[2 * ZC_MAX_DIMS + 1];
} rgroups;

static void reshape_groups(const zc_array *a, rgroups *g)
{
    const zc_array *in = a->inputs[0];
    int i = 0, o = 0;
    g->n = 0;
    while (i < in->ndim || o < a->ndim) {
        int k = g->n++;
        g->i0[k] = i;
        g->o0[k] = o;
        int64_t pi = 1, po = 1;
        if (i < in->ndim) pi *= in->shape[i++];
        if (o < a->ndim) po *= a->shape[o++];
        while (pi != po) {
            if (pi < po && i < in->ndim) pi *= in->shape[i++];
            else if (po < pi && o < a->ndim) po *= a->shape[o++];
            else break; /* sizes differ: cannot happen for a valid node */
        }
        g->i1[k] = i;
        g->o1[k] = o;
    }
}

/* The input bounding box of a non-empty region. */
static void reshape_box(const zc_array *a, const rgroups *g, const zc_range *sel, zc_range *box)
{
    const zc_array *in = a->inputs[0];
    for (int k = 0; k < g->n; k++) {
        int64_t lmin = 0, lmax = 0, s = 1;
        for (int d = g->o1[k] - 1; d >= g->o0[k]; d--) {
            int64_t first = sel[d].start, last = first + (cnt_of(&sel[d]) - 1) * sel[d].step;
            lmin += first * s;
            lmax += last * s;
            s *= a->shape[d];
        }
        int64_t cmin[ZC_MAX_DIMS], cmax[ZC_MAX_DIMS];
        for (int i = g->i1[k] - 1; i >= g->i0[k]; i--) {
            cmin[i] = lmin % in->shape[i];
            lmin /= in->shape[i];
            cmax[i] = lmax % in->shape[i];
            lmax /= in->shape[i];
        }
        bool differ = false;
        for (int i = g->i0[k]; i < g->i1[k]; i++) {
            if (differ) box[i] = (zc_range){0, in->shape[i], 1};
            else box[i] = (zc_range){cmin[i], cmax[i] + 1, 1};
            differ |= cmin[i] != cmax[i];
        }
    }
}

/* Copy the region's elements out of the pulled box, by runs along the last dims. */
static void reshape_gather(const zc_array *a, const zc_range *sel, const zc_range *box, const unsigned char *tmp,
                           unsigned char *out)
{
    const zc_array *in = a->inputs[0];
    int nd = a->ndim, ni = in->ndim;
    size_t isz = a->itemsize;
    int64_t os[ZC_MAX_DIMS], bs[ZC_MAX_DIMS], cnt[ZC_MAX_DIMS] = {0}, idx[ZC_MAX_DIMS] = {0}, s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        os[d] = s;
        s *= a->shape[d];
        cnt[d] = cnt_of(&sel[d]);
    }
    s = 1;
    for (int i = ni - 1; i >= 0; i--) {
        bs[i] = s;
        s *= box[i].stop - box[i].start;
    }
    int64_t last = nd ? cnt[nd - 1] : 1, lstep = nd ? sel[nd - 1].step : 1;
    int64_t rows = 1;
    for (int d = 0; d < nd - 1; d++) rows *= cnt[d];
    for (int64_t r = 0; r < rows; r++) {
        int64_t lin = 0;
        for (int d = 0; d < nd; d++) lin += (sel[d].start + (d < nd - 1 ? idx[d] * sel[d].step : 0)) * os[d];
        for (int64_t k = 0; k < last;) {
            int64_t rem = lin, off = 0, run = 1;
            for (int i = ni - 1; i >= 0; i--) {
                int64_t ci = rem % in->shape[i];
                rem /= in->shape[i];
                off += (ci - box[i].start) * bs[i];
                if (i == ni - 1 && lstep == 1) run = in->shape[i] - ci;
            }
            if (ni == 0 || lstep != 1) run = 1;
            if (run > last - k) run = last - k;
            memcpy(out + (size_t)(r * last + k) * isz, tmp + (size_t)off * isz, (size_t)run * isz);
            k += run;
            lin += run * lstep;
        }
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
    }
}

typedef struct {
    node_proj_fn proj; /* NULL: compute; else simulate and record the peak */
    size_t peak;
} rs_walk;

/* A region: one pull of its bounding box when that is at most about twice the
 * region, else the two halves along its first dim of count > 1 (contiguous in out). */
static int reshape_walk(zc_array *a, const rgroups *g, const zc_range *sel, unsigned char *out, rs_walk *w)
{
    int nd = a->ndim;
    int64_t r = elems_of(nd, sel);
    if (r == 0) return 0;
    zc_array *in = a->inputs[0];
    zc_range box[ZC_MAX_DIMS];
    reshape_box(a, g, sel, box);
    int64_t b = elems_of(in->ndim, box);
    if (r > 1 && b > 2 * r + RESHAPE_SLACK) {
        int d = 0;
        while (cnt_of(&sel[d]) == 1) d++;
        int64_t c = cnt_of(&sel[d]), h = c / 2, row = (int64_t)a->itemsize;
        for (int e = d + 1; e < nd; e++) row *= cnt_of(&sel[e]);
        zc_range s1[ZC_MAX_DIMS], s2[ZC_MAX_DIMS];
        memcpy(s1, sel, sizeof *sel * (size_t)nd);
        memcpy(s2, sel, sizeof *sel * (size_t)nd);
        s1[d].stop = sel[d].start + (h - 1) * sel[d].step + 1;
        s2[d].start = sel[d].start + h * sel[d].step;
        ZC_TRY(reshape_walk(a, g, s1, out, w));
        return reshape_walk(a, g, s2, out ? out + h * row : NULL, w);
    }
    if (w->proj) {
        w->peak = max_sz(w->peak, (b == r ? 0 : (size_t)b * a->itemsize) + w->proj(in, box));
        return 0;
    }
    if (b == r) return node_region(in, box, out); /* same elements, same (linear) order */
    unsigned char *tmp;
    int rc = pull(in, box, &tmp);
    if (rc == 0) reshape_gather(a, sel, box, tmp, out);
    zc__free(tmp);
    return rc;
}

static int reshape_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    rgroups g;
    reshape_groups(a, &g);
    rs_walk w = {NULL, 0};
    return reshape_walk(a, &g, sel, out, &w);
}

/* The region itself and translated copies of it spread over the array: the
 * pulls depend on where a region lies, not only on its counts. */
static size_t reshape_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    int nd = a->ndim;
    if (elems_of(nd, sel) == 0) return 0;
    rgroups g;
    reshape_groups(a, &g);
    rs_walk w = {proj, 0};
    reshape_walk((zc_array *)a, &g, sel, NULL, &w);
    int64_t ext[ZC_MAX_DIMS], grid[ZC_MAX_DIMS], blocks = 1;
    for (int d = 0; d < nd; d++) {
        ext[d] = (cnt_of(&sel[d]) - 1) * sel[d].step + 1;
        grid[d] = ck_ceildiv(a->shape[d], ext[d]);
        blocks *= grid[d];
    }
    for (int s = 1; s <= RESHAPE_SAMPLES && blocks > 1; s++) {
        int64_t m = (int64_t)((double)(blocks - 1) * s / RESHAPE_SAMPLES);
        if (m > blocks - 1) m = blocks - 1;
        zc_range t[ZC_MAX_DIMS];
        for (int d = nd - 1; d >= 0; d--) {
            int64_t cd = m % grid[d];
            m /= grid[d];
            int64_t st = cd * ext[d], sp = st + ext[d] < a->shape[d] ? st + ext[d] : a->shape[d];
            t[d] = (zc_range){st, sp, sel[d].step};
        }
        reshape_walk((zc_array *)a, &g, t, NULL, &w);
    }
    return w.peak;
}

/* ================================================================ TOTALS and SCAN */

typedef union {
    uint64_t i;  /* integers: two's complement, wrapping */
    double f;
    double c[2];
} acc_v;

enum { K_INT, K_FLT, K_CPX };

static int acc_kind_of(zc_dtype t)
{
    if (t == ZC_COMPLEX64 || t == ZC_COMPLEX128) return K_CPX;
    if (t == ZC_FLOAT16 || t == ZC_FLOAT32 || t == ZC_FLOAT64) return K_FLT;
    return K_INT;
}

zc_dtype manip_scan_acc_dtype(zc_dtype result)
{
    int k = acc_kind_of(result);
    return k == K_CPX ? ZC_COMPLEX128 : k == K_FLT ? ZC_FLOAT64 : ZC_INT64;
}

static void acc_load(zc_dtype t, const unsigned char *p, int k, acc_v *v)
{
    double re = 0, im = 0;
    uint64_t iv = 0;
    int real = 0, sgn = 0; /* real: re/im hold the value */
    switch (t) {
    case ZC_BOOL: iv = p[0] != 0; break;
    case ZC_INT8: { int8_t x; memcpy(&x, p, 1); iv = (uint64_t)(int64_t)x; sgn = 1; break; }
    case ZC_INT16: { int16_t x; memcpy(&x, p, 2); iv = (uint64_t)(int64_t)x; sgn = 1; break; }
    case ZC_INT32: { int32_t x; memcpy(&x, p, 4); iv = (uint64_t)(int64_t)x; sgn = 1; break; }
    case ZC_INT64: { int64_t x; memcpy(&x, p, 8); iv = (uint64_t)x; sgn = 1; break; }
    case ZC_UINT8: iv = p[0]; break;
    case ZC_UINT16: { uint16_t x; memcpy(&x, p, 2); iv = x; break; }
    case ZC_UINT32: { uint32_t x; memcpy(&x, p, 4); iv = x; break; }
    case ZC_UINT64: memcpy(&iv, p, 8); break;
    case ZC_FLOAT16: { uint16_t h; memcpy(&h, p, 2); re = dtype_half_to_float(h); real = 1; break; }
    case ZC_FLOAT32: { float x; memcpy(&x, p, 4); re = x; real = 1; break; }
    case ZC_FLOAT64: memcpy(&re, p, 8); real = 1; break;
    case ZC_COMPLEX64: { float x[2]; memcpy(x, p, 8); re = x[0]; im = x[1]; real = 1; break; }
    case ZC_COMPLEX128: { double x[2]; memcpy(x, p, 16); re = x[0]; im = x[1]; real = 1; break; }
    default: break;
    }
    if (!real) re = sgn ? (double)(int64_t)iv : (double)iv;
    if (k == K_INT) v->i = real ? dtype_f2u(re) : iv;
    else if (k == K_FLT) v->f = re;
    else {
        v->c[0] = re;
        v->c[1] = im;
    }
}

static void acc_store(zc_dtype t, const acc_v *v, unsigned char *p)
{
    switch (t) {
    case ZC_INT8: case ZC_UINT8: { uint8_t x = (uint8_t)v->i; memcpy(p, &x, 1); break; }
    case ZC_INT16: case ZC_UINT16: { uint16_t x = (uint16_t)v->i; memcpy(p, &x, 2); break; }
    case ZC_INT32: case ZC_UINT32: { uint32_t x = (uint32_t)v->i; memcpy(p, &x, 4); break; }
    case ZC_INT64: case ZC_UINT64: memcpy(p, &v->i, 8); break;
    case ZC_FLOAT16: { uint16_t h = dtype_float_to_half((float)v->f); memcpy(p, &h, 2); break; }
    case ZC_FLOAT32: { float x = (float)v->f; memcpy(p, &x, 4); break; }
    case ZC_FLOAT64: memcpy(p, &v->f, 8); break;
    case ZC_COMPLEX64: { float x[2] = {(float)v->c[0], (float)v->c[1]}; memcpy(p, x, 8); break; }
    case ZC_COMPLEX128: memcpy(p, v->c, 16); break;
    default: break;
    }
}

static void acc_identity_k(int op, int k, acc_v *v)
{
    memset(v, 0, sizeof *v);
    if (op != SCAN_PROD) return;
    if (k == K_INT) v->i = 1;
    else if (k == K_FLT) v->f = 1;
    else v->c[0] = 1;
}

static inline void acc_op(int op, int k, acc_v *a, const acc_v *b)
{
    if (op == SCAN_SUM) {
        if (k == K_INT) a->i += b->i;
        else if (k == K_FLT) a->f += b->f;
        else {
            a->c[0] += b->c[0];
            a->c[1] += b->c[1];
        }
    } else {
        if (k == K_INT) a->i *= b->i;
        else if (k == K_FLT) a->f *= b->f;
        else {
            double re = a->c[0] * b->c[0] - a->c[1] * b->c[1], im = a->c[0] * b->c[1] + a->c[1] * b->c[0];
            a->c[0] = re;
            a->c[1] = im;
        }
    }
}

/* Segment totals: out[.., t, ..] = op over input segment sel[ax].start + t*step. */
static int totals_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    const typeof(a->p.scan) *s = &a->p.scan;
    zc_array *x = a->inputs[0];
    int ax = s->axis, k = acc_kind_of(a->dtype);
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, cb = cnt_of(&sel[ax]), n = x->shape[ax], seg = s->seg < n ? s->seg : n;
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    acc_v *acc = zc__malloc_array((size_t)(lead * inner), sizeof *acc);
    unsigned char *tmp = zc__malloc_array((size_t)(lead * seg * inner), x->itemsize);
    int rc = acc && tmp ? 0 : ZC_ENOMEM;
    for (int64_t t = 0; t < cb && rc == 0; t++) {
        int64_t b = sel[ax].start + t * sel[ax].step, i0 = b * s->seg, i1 = i0 + s->seg < n ? i0 + s->seg : n;
        zc_range isel[ZC_MAX_DIMS];
        memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
        isel[ax] = (zc_range){i0, i1, 1};
        if ((rc = node_region(x, isel, tmp)) < 0) break;
        int64_t len = i1 - i0;
        for (int64_t e = 0; e < lead * inner; e++) acc_identity_k(s->op, k, &acc[e]);
        for (int64_t l = 0; l < lead; l++)
            for (int64_t i = 0; i < len; i++) {
                const unsigned char *p = tmp + (size_t)((l * len + i) * inner) * x->itemsize;
                acc_v *ar = acc + l * inner;
                for (int64_t e = 0; e < inner; e++) {
                    acc_v v;
                    acc_load(x->dtype, p + (size_t)e * x->itemsize, k, &v);
                    acc_op(s->op, k, &ar[e], &v);
                }
            }
        for (int64_t l = 0; l < lead; l++)
            for (int64_t e = 0; e < inner; e++)
                acc_store(a->dtype, &acc[l * inner + e], out + (size_t)((l * cb + t) * inner + e) * a->itemsize);
    }
    zc__free(acc);
    zc__free(tmp);
    return rc;
}

static size_t totals_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *x = a->inputs[0];
    int ax = a->p.scan.axis;
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, n = x->shape[ax], seg = a->p.scan.seg < n ? a->p.scan.seg : n;
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    zc_range isel[ZC_MAX_DIMS];
    memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
    isel[ax] = (zc_range){0, seg, 1};
    return (size_t)(lead * inner) * sizeof(acc_v) + (size_t)(lead * seg * inner) * x->itemsize + proj(x, isel);
}

/* Output j along the axis = op over input [0, j - initial]. The region scans
 * its input from the start of the segment holding its first index, from that
 * segment's carry (input 1 at the segment's index; none = identity). */
static int scan_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    const typeof(a->p.scan) *s = &a->p.scan;
    zc_array *x = a->inputs[0], *carry = a->ninputs > 1 ? a->inputs[1] : NULL;
    int ax = s->axis, k = acc_kind_of(a->dtype);
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, c = cnt_of(&sel[ax]), o0 = sel[ax].start, ost = sel[ax].step;
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    int64_t ifirst = o0 - s->initial, ilast = o0 + (c - 1) * ost - s->initial;
    int64_t b = (ifirst > 0 ? ifirst : 0) / s->seg, x0 = b * s->seg, xlen = ilast + 1 - x0;
    if (xlen < 0) xlen = 0;
    zc_range isel[ZC_MAX_DIMS];
    memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
    acc_v *acc = zc__malloc_array((size_t)(lead * inner), sizeof *acc);
    if (!acc) return ZC_ENOMEM;
    unsigned char *tmp = NULL;
    int rc = 0;
    if (carry && b > 0) {
        isel[ax] = (zc_range){b, b + 1, 1};
        if ((rc = pull(carry, isel, &tmp)) == 0)
            for (int64_t e = 0; e < lead * inner; e++)
                acc_load(carry->dtype, tmp + (size_t)e * carry->itemsize, k, &acc[e]);
        zc__free(tmp);
        tmp = NULL;
    } else {
        for (int64_t e = 0; e < lead * inner; e++) acc_identity_k(s->op, k, &acc[e]);
    }
    if (rc == 0) {
        isel[ax] = (zc_range){x0, x0 + xlen, 1};
        rc = pull(x, isel, &tmp);
    }
    for (int64_t l = 0; l < lead && rc == 0; l++) {
        acc_v *ar = acc + l * inner;
        for (int64_t i = x0 - 1; i <= ilast; i++) {
            if (i >= x0) {
                const unsigned char *p = tmp + (size_t)((l * xlen + (i - x0)) * inner) * x->itemsize;
                for (int64_t e = 0; e < inner; e++) {
                    acc_v v;
                    acc_load(x->dtype, p + (size_t)e * x->itemsize, k, &v);
                    acc_op(s->op, k, &ar[e], &v);
                }
            }
            int64_t j = i + s->initial;
            if (j < o0 || (j - o0) % ost) continue;
            int64_t t = (j - o0) / ost;
            unsigned char *q = out + (size_t)((l * c + t) * inner) * a->itemsize;
            for (int64_t e = 0; e < inner; e++) acc_store(a->dtype, &ar[e], q + (size_t)e * a->itemsize);
        }
    }
    zc__free(tmp);
    zc__free(acc);
    return rc;
}

static size_t scan_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *x = a->inputs[0], *carry = a->ninputs > 1 ? a->inputs[1] : NULL;
    int ax = a->p.scan.axis;
    if (elems_of(a->ndim, sel) == 0) return 0;
    int64_t lead, inner, c = cnt_of(&sel[ax]), n = x->shape[ax];
    lead_inner(a->ndim, sel, ax, &lead, &inner);
    int64_t xl = (c - 1) * sel[ax].step + a->p.scan.seg;
    if (xl > n) xl = n;
    zc_range isel[ZC_MAX_DIMS];
    memcpy(isel, sel, sizeof *sel * (size_t)a->ndim);
    size_t acc = (size_t)(lead * inner) * sizeof(acc_v), with_carry = 0;
    if (carry) {
        isel[ax] = (zc_range){0, 1, 1};
        with_carry = node_region_bytes(carry, isel) + proj(carry, isel);
    }
    isel[ax] = (zc_range){0, xl, 1};
    size_t with_x = node_region_bytes(x, isel) + proj(x, isel);
    return acc + max_sz(with_carry, with_x);
}

/* ================================================================ the kinds */

static const char *const VIEW_NAMES[] = {"permute_dims", "moveaxis", "matrix_transpose", "flip",
                                         "broadcast_to", "expand_dims", "squeeze"};
static const char *const GATHER_NAMES[] = {"take", "repeat", "tile", "roll"};

static const char *reshape_name(const zc_array *a) { (void)a; return "reshape"; }
static const char *view_name(const zc_array *a)
{
    return a->p.view.what >= 0 && a->p.view.what <= VIEW_SQUEEZE ? VIEW_NAMES[a->p.view.what] : "view";
}
static const char *concat_name(const zc_array *a) { (void)a; return "concat"; }
static const char *gather_name(const zc_array *a)
{
    return a->p.gather.mode >= 0 && a->p.gather.mode <= GATHER_ROLL ? GATHER_NAMES[a->p.gather.mode] : "gather";
}
static const char *totals_name(const zc_array *a)
{
    return a->p.scan.op == SCAN_PROD ? "cumulative_prod_totals" : "cumulative_sum_totals";
}
static const char *scan_name(const zc_array *a) { return a->p.scan.op == SCAN_PROD ? "cumulative_prod" : "cumulative_sum"; }

static void gather_release(zc_array *a)
{
    if (a->origin) return; /* the origin's */
    zc__free(a->p.gather.idx);
    a->p.gather.idx = NULL;
}

/* ---- JSON ---- */

static int view_to_json(const zc_array *a, json_t *o)
{
    kind_view_to_json(o, a->p.view.in_dim, a->p.view.start, a->p.view.step, a->p.view.fixed, a->ndim,
                      a->inputs[0]->ndim);
    json_object_set_new(o, "what", json_integer(a->p.view.what));
    return 0;
}

static int concat_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "axis", json_integer(a->p.concat.axis));
    return 0;
}

static int gather_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "axis", json_integer(a->p.gather.axis));
    json_object_set_new(o, "mode", json_integer(a->p.gather.mode));
    json_object_set_new(o, "k", json_integer(a->p.gather.k));
    if (a->p.gather.mode == GATHER_TAKE) {
        json_t *idx = json_array();
        for (int64_t i = 0; i < a->p.gather.nidx; i++) json_array_append_new(idx, json_integer(a->p.gather.idx[i]));
        json_object_set_new(o, "idx", idx);
    }
    return 0;
}

static int scan_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "axis", json_integer(a->p.scan.axis));
    json_object_set_new(o, "op", json_integer(a->p.scan.op));
    json_object_set_new(o, "initial", json_integer(a->p.scan.initial));
    json_object_set_new(o, "seg", json_integer(a->p.scan.seg));
    return 0;
}

static int64_t jint(const json_t *o, const char *key) { return json_integer_value(json_object_get(o, key)); }

/* Read exactly n integers in [lo, hi]. */
static int jints(const json_t *o, const char *key, int64_t *out, int64_t n, int64_t lo, int64_t hi)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_array(v) || (int64_t)json_array_size(v) != n) return -1;
    for (int64_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, (size_t)i);
        if (!json_is_integer(e) || json_integer_value(e) < lo || json_integer_value(e) > hi) return -1;
        out[i] = json_integer_value(e);
    }
    return 0;
}

#define BAD(what) zc__err(ZC_EFORMAT, "plan: %s node: bad %s", kind_of(a)->json, what)

/* The values are moved, not converted (scans convert through their accumulators). */
static int same_dtype(const zc_array *a)
{
    for (int k = 0; k < a->ninputs; k++)
        if (a->inputs[k]->dtype != a->dtype || a->inputs[k]->itemsize != a->itemsize) return BAD("dtype (not its input's)");
    return 0;
}

static int reshape_from_json(const json_t *o, zc_array *a, int i)
{
    (void)o, (void)i;
    ZC_TRY(same_dtype(a));
    const zc_array *in = a->inputs[0];
    int64_t n = 1, m = 1;
    for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
    for (int d = 0; d < in->ndim; d++) m *= in->shape[d];
    if (n != m) return BAD("shape (sizes differ)");
    return 0;
}

static int view_from_json(const json_t *o, zc_array *a, int i)
{
    (void)i;
    ZC_TRY(same_dtype(a));
    const zc_array *in = a->inputs[0];
    int64_t v[ZC_MAX_DIMS];
    if (jints(o, "in_dim", v, a->ndim, -1, in->ndim - 1) < 0) return BAD("in_dim");
    for (int d = 0; d < a->ndim; d++) a->p.view.in_dim[d] = (int)v[d];
    if (jints(o, "start", a->p.view.start, a->ndim, 0, INT64_MAX / 2) < 0 ||
        jints(o, "step", a->p.view.step, a->ndim, -1, 1) < 0 ||
        jints(o, "fixed", a->p.view.fixed, in->ndim, -1, INT64_MAX / 2) < 0)
        return BAD("start, step or fixed");
    a->p.view.what = (int)jint(o, "what");
    /* every element read lies in the input: each input dimension feeds one output
     * dimension (its range inside it) or is fixed at an index inside it */
    bool used[ZC_MAX_DIMS] = {0};
    for (int d = 0; d < a->ndim; d++) {
        int k = a->p.view.in_dim[d];
        if (k < 0) continue;
        if (used[k]) return BAD("in_dim (an input dimension used twice)");
        used[k] = true;
        int64_t first = a->p.view.start[d], last;
        if (a->shape[d] > 0 && (ck_add_i64(first, (a->shape[d] - 1) * a->p.view.step[d], &last) ||
                                first >= in->shape[k] || last < 0 || last >= in->shape[k]))
            return BAD("start or step (outside the input)");
    }
    for (int k = 0; k < in->ndim; k++)
        if (used[k] ? a->p.view.fixed[k] != -1 : a->p.view.fixed[k] < 0 || a->p.view.fixed[k] >= in->shape[k])
            return BAD("fixed");
    return 0;
}

static int concat_from_json(const json_t *o, zc_array *a, int i)
{
    (void)i;
    ZC_TRY(same_dtype(a));
    a->p.concat.axis = (int)jint(o, "axis");
    if (a->p.concat.axis < 0 || a->p.concat.axis >= a->ndim) return BAD("axis");
    int64_t n = 0;
    for (int k = 0; k < a->ninputs; k++) {
        if (a->inputs[k]->ndim != a->ndim || a->inputs[k]->itemsize != a->itemsize) return BAD("inputs");
        for (int d = 0; d < a->ndim; d++)
            if (d != a->p.concat.axis && a->inputs[k]->shape[d] != a->shape[d]) return BAD("inputs (shapes off the axis)");
        n += a->inputs[k]->shape[a->p.concat.axis];
    }
    if (n != a->shape[a->p.concat.axis]) return BAD("shape (inputs do not add up)");
    return 0;
}

static int gather_from_json(const json_t *o, zc_array *a, int i)
{
    (void)i;
    ZC_TRY(same_dtype(a));
    const zc_array *in = a->inputs[0];
    typeof(a->p.gather) *g = &a->p.gather;
    g->axis = (int)jint(o, "axis");
    g->mode = (int)jint(o, "mode");
    g->k = jint(o, "k");
    if (g->axis < 0 || g->axis >= in->ndim || in->ndim != a->ndim) return BAD("axis");
    for (int d = 0; d < a->ndim; d++)
        if (d != g->axis && in->shape[d] != a->shape[d]) return BAD("shape (off the axis)");
    int64_t len = in->shape[g->axis], outn = a->shape[g->axis];
    if (g->mode < GATHER_TAKE || g->mode > GATHER_ROLL) return BAD("mode");
    if (outn > 0 && len == 0) return BAD("shape");
    if (g->mode == GATHER_REPEAT && (g->k < 0 || (g->k == 0 && outn) || g->k > INT64_MAX / (len ? len : 1) || outn > len * g->k))
        return BAD("repeats");
    if (g->mode == GATHER_ROLL && (g->k < 0 || (len && g->k >= len) || outn != len)) return BAD("shift");
    if (g->mode == GATHER_TAKE) {
        g->nidx = outn;
        if (!(g->idx = zc__malloc_array((size_t)(outn ? outn : 1), sizeof(int64_t)))) return ZC_ENOMEM;
        if (jints(o, "idx", g->idx, outn, 0, len - 1) < 0) return BAD("idx");
    }
    return 0;
}

/* TOTALS and SCAN. */
static int scan_from_json(const json_t *o, zc_array *a, int i)
{
    (void)i;
    const zc_array *in = a->inputs[0];
    a->p.scan.axis = (int)jint(o, "axis");
    a->p.scan.op = (int)jint(o, "op");
    a->p.scan.initial = (int)jint(o, "initial");
    a->p.scan.seg = jint(o, "seg");
    if (a->p.scan.axis < 0 || a->p.scan.axis >= in->ndim || in->ndim != a->ndim) return BAD("axis");
    if (a->p.scan.seg < 1 || (a->p.scan.op != SCAN_SUM && a->p.scan.op != SCAN_PROD) ||
        (a->p.scan.initial != 0 && a->p.scan.initial != 1))
        return BAD("op, initial or seg");
    if (a->kind == NODE_SCAN && a->ninputs == 1 && in->shape[a->p.scan.axis] > a->p.scan.seg)
        return BAD("carry (missing)");
    int ax = a->p.scan.axis;
    int64_t segs = ck_ceildiv(in->shape[ax], a->p.scan.seg);
    for (int d = 0; d < a->ndim; d++)
        if (d != ax && in->shape[d] != a->shape[d]) return BAD("shape (off the axis)");
    if (a->shape[ax] != (a->kind == NODE_TOTALS ? segs : in->shape[ax] + a->p.scan.initial))
        return BAD("shape (along the axis)");
    if (a->ninputs > 1) {
        const zc_array *c = a->inputs[1];
        if (c->ndim != a->ndim || c->shape[ax] < segs) return BAD("carry (shape)");
        for (int d = 0; d < a->ndim; d++)
            if (d != ax && c->shape[d] != a->shape[d]) return BAD("carry (shape off the axis)");
    }
    return 0;
}

/* ---- the rows ---- */

const node_kind_def kind_reshape = {
    .json = "reshape", .flags = KIND_FUSED | KIND_PROJ_EXACT, .min_inputs = 1, .max_inputs = 1,
    .name = reshape_name, .region = reshape_region, .proj = reshape_proj, .from_json = reshape_from_json,
};
const node_kind_def kind_view = {
    .json = "view", .flags = KIND_FUSED | KIND_PROJ_EXACT, .min_inputs = 1, .max_inputs = 1,
    .name = view_name, .region = view_region, .proj = view_proj, .to_json = view_to_json, .from_json = view_from_json,
};
const node_kind_def kind_concat = {
    .json = "concat", .flags = KIND_FUSED, .min_inputs = 2, .max_inputs = 3,
    .name = concat_name, .region = concat_region, .proj = concat_proj, .to_json = concat_to_json,
    .from_json = concat_from_json,
};
const node_kind_def kind_gather = {
    .json = "gather", .flags = KIND_FUSED, .min_inputs = 1, .max_inputs = 1,
    .name = gather_name, .region = gather_region, .proj = gather_proj, .to_json = gather_to_json,
    .from_json = gather_from_json, .release = gather_release,
};
const node_kind_def kind_totals = {
    .json = "totals", .flags = KIND_STORED | KIND_STAGE_ONLY, .min_inputs = 1, .max_inputs = 1,
    .name = totals_name, .region = totals_region, .proj = totals_proj, .to_json = scan_to_json,
    .from_json = scan_from_json,
};
const node_kind_def kind_scan = {
    .json = "scan", .flags = KIND_FUSED, .min_inputs = 1, .max_inputs = 2,
    .name = scan_name, .region = scan_region, .proj = scan_proj, .to_json = scan_to_json,
    .from_json = scan_from_json,
};
