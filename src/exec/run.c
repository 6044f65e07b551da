/* exec/run.c — running a plan: one stage after another, each as parallel tasks
 * over its output blocks, with the memory of every task measured.
 *
 * A task computes its block (pulling regions through fused nodes, or, for a
 * reduction round, accumulating its group of input blocks one at a time) and
 * writes it to the stage's Zarr array: the target for outputs, the work
 * directory for intermediates. With resume, a task whose chunk is already
 * stored is skipped. Intermediates are removed at the end unless resume is set;
 * an FFT that is the only reader of one erases its chunks as it goes (consumable).
 *
 * A group of first reduction rounds (plan_stage.group) runs as its first
 * stage's tasks: each task reads every distinct input block of the group once
 * and feeds all the reductions from it, evaluating fused inputs tile by tile
 * (reduce_group_block); the other stages of the group run nothing. A grouped
 * copy (plan_stage.copy) runs one task per block of output chunks; when it is the
 * only reader of an intermediate, each task erases the chunks it read once its
 * block is written, so the intermediate's dirty pages need not reach the disk.
 *
 * zc_compute_buffer has no target array: the output stage's tasks put their
 * blocks straight into the caller's C-order buffer (stage_ctx.dst), computing
 * in place where the block is one contiguous run of it (block_run), else into
 * the task's block buffer and a strided copy (put_block). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/pool.h"
#include "exec/executor.h"
#include "exec/memcheck.h"
#include "exec/srccache.h"
#include "exec/work_lock.h"
#include "exec/run.h"
#include "plan/elementwise.h"
#include "plan/kind.h"
#include "plan/plan.h"
#include "plan/rechunk_plan.h"
#include "plan/reduce.h"
#include "store/url.h"
#include "zarr/copy.h"
#include "zarr/part.h"
#include "zarr/probe.h"
#include "zarr/stream.h"
#include "zarr/zarr.h"

typedef struct {
    plan *p;
    plan_stage *s;
    const zc_spec *spec;
    atomic_llong done, skipped;
    atomic_size_t measured;
    atomic_int cancel;
    pthread_mutex_t progress_lock;
    int index;
    int64_t first;     /* task i runs block first + i */
    zc_array *dnode;   /* the output node written into dst instead of its array (zc_compute_buffer) */
    unsigned char *dst;
    /* an FFT stage erasing the intermediate it reads as it goes (consumable):
     * left[c] = its tasks yet to read chunk c of `eat` */
    zc_array *eat;
    atomic_int *left;
} stage_ctx;

/* Byte offset in a C-order buffer of a's shape of block sel when the block is one
 * contiguous run there (dims before the first cut of extent 1, dims after it
 * whole); -1 otherwise. */
static int64_t block_run(const zc_array *a, const zc_range *sel)
{
    int64_t off = 0, stride = (int64_t)a->itemsize;
    bool whole = true; /* every dim after d covers the whole axis */
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t cnt = sel[d].stop - sel[d].start;
        if (!whole && cnt != 1) return -1;
        off += sel[d].start * stride;
        stride *= a->shape[d];
        whole &= cnt == a->shape[d];
    }
    return off;
}

/* Copy block sel of a, computed C-order in buf, into the C-order buffer dst of a's shape. */
static void put_block(const zc_array *a, const zc_range *sel, const unsigned char *buf, unsigned char *dst)
{
    int64_t cnt[ZC_MAX_DIMS], dstride[ZC_MAX_DIMS], bstride[ZC_MAX_DIMS], off = 0;
    int64_t ds = (int64_t)a->itemsize, bs = (int64_t)a->itemsize;
    for (int d = a->ndim - 1; d >= 0; d--) {
        cnt[d] = sel[d].stop > sel[d].start ? sel[d].stop - sel[d].start : 0;
        off += sel[d].start * ds;
        dstride[d] = ds;
        bstride[d] = bs;
        ds *= a->shape[d];
        bs *= cnt[d];
    }
    zarr_copy_nd(dst + off, dstride, buf, bstride, cnt, a->ndim, a->itemsize);
}

/* Store block sel of a: into its array, or into dst when a is the output of zc_compute_buffer. */
static int store_block(stage_ctx *c, zc_array *a, const zc_range *sel, const void *buf, size_t nbytes)
{
    if (a == c->dnode) {
        put_block(a, sel, buf, c->dst);
        return 0;
    }
    return zc_zarr_write(a->mat, sel, buf, nbytes);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- grouped first rounds (plan_stage.group) ---- */

#define GROUP_TILE ((size_t)256 << 10) /* elements of a fused input evaluated at once (plan.c counts it) */

typedef struct {
    zc_array *a, *in;        /* the reduction round and its input */
    const ew_program *prog;  /* the fused input's program; NULL: the input is read as is */
    int nleaf, leaf[64];     /* group leaf of each program input */
    unsigned char *out, *acc, *tile;
    size_t out_bytes;
    zc_range osel[ZC_MAX_DIMS];
} gmember;

static int group_leaf(zc_array **lv, int *n, zc_array *l)
{
    for (int i = 0; i < *n; i++)
        if (lv[i] == l) return i;
    if (*n == 64) return zc__err(ZC_EUNSUPPORTED, "a group of reductions reads more than 64 arrays");
    lv[*n] = l;
    return (*n)++;
}

/* Accumulate one input block into member m, a tile of at most GROUP_TILE bytes at
 * a time: the fused input is evaluated per tile from the group's leaf blocks (no
 * block-sized temporary) and accumulated while it is in cache. */
static void group_accum(gmember *m, int nd, const int64_t *cnt, const int64_t *base, unsigned char *const *gbuf,
                        zc_array *const *glv, int64_t (*lstride)[ZC_MAX_DIMS])
{
    const typeof(m->a->p.reduce) *r = &m->a->p.reduce;
    zc_array *in = m->in;
    if (!m->prog) {
        red_accum(r->op, r->in_dtype, m->acc, nd, cnt, r->axes, gbuf[m->leaf[0]], base, in->shape);
        return;
    }
    size_t isz = in->itemsize, asz = red_acc_size(r->op, r->in_dtype);
    /* Tile extents te: with the reduced dims whole when they fit (several values per
     * accumulator, as in a whole block), the kept dims cut from the outside in;
     * otherwise dims cut in C order. */
    int64_t te[ZC_MAX_DIMS], red = 1, bs[ZC_MAX_DIMS], as[ZC_MAX_DIMS], b = 1, a = 1;
    bool kept_any = false;
    for (int d = 0; d < nd; d++) {
        if ((r->axes >> d) & 1) red *= cnt[d];
        else kept_any |= cnt[d] > 1;
    }
    size_t room = GROUP_TILE / isz, have = 1;
    if (kept_any && (size_t)red * 4 <= room) {
        have = (size_t)red;
        for (int d = nd - 1; d >= 0; d--) {
            if ((r->axes >> d) & 1) {
                te[d] = cnt[d];
                continue;
            }
            size_t fit = room / have;
            te[d] = (size_t)cnt[d] <= fit ? cnt[d] : (fit ? (int64_t)fit : 1);
            have *= (size_t)te[d];
        }
    } else {
        for (int d = nd - 1; d >= 0; d--) {
            size_t fit = room / have;
            te[d] = (size_t)cnt[d] <= fit ? cnt[d] : (fit ? (int64_t)fit : 1);
            have *= (size_t)te[d];
        }
    }
    bool plain = true; /* leaf blocks laid out like the input block (no broadcast) */
    for (int d = nd - 1; d >= 0; d--) {
        bs[d] = b;
        b *= cnt[d];
        as[d] = ((r->axes >> d) & 1) ? 0 : a;
        if (!((r->axes >> d) & 1)) a *= cnt[d];
        for (int k = 0; k < m->nleaf; k++) plain &= lstride[m->leaf[k]][d] == bs[d] || cnt[d] == 1;
    }
    int64_t org[ZC_MAX_DIMS] = {0}, start[ZC_MAX_DIMS], tcnt[ZC_MAX_DIMS], tbase[ZC_MAX_DIMS];
    const void *ptr[64];
    int64_t st[64];
    for (;;) {
        int64_t accoff = 0, off = 0;
        bool contig = plain, cut = false; /* contiguous: whole dims after the first extent > 1 */
        for (int d = 0; d < nd; d++) {
            start[d] = org[d];
            tcnt[d] = org[d] + te[d] < cnt[d] ? te[d] : cnt[d] - org[d];
            tbase[d] = base[d] + start[d];
            accoff += start[d] * as[d];
            off += start[d] * bs[d];
            if (cut && tcnt[d] != cnt[d]) contig = false;
            if (tcnt[d] > 1) cut = true;
        }
        int64_t tn = 1;
        for (int d = 0; d < nd; d++) tn *= tcnt[d];
        if (contig) {
            for (int k = 0; k < m->nleaf; k++) {
                int q = m->leaf[k];
                ptr[k] = gbuf[q] + (size_t)off * glv[q]->itemsize;
                st[k] = 1;
            }
            ew_eval(m->prog, (size_t)tn, ptr, st, m->tile);
        } else {
            int64_t L = tcnt[nd - 1], j[ZC_MAX_DIMS];
            size_t nrows = 1;
            for (int d = 0; d < nd - 1; d++) nrows *= (size_t)tcnt[d];
            for (int d = 0; d < nd; d++) j[d] = start[d];
            for (int k = 0; k < m->nleaf; k++) st[k] = lstride[m->leaf[k]][nd - 1];
            for (size_t row = 0; row < nrows; row++) {
                for (int k = 0; k < m->nleaf; k++) {
                    int q = m->leaf[k];
                    int64_t e = 0;
                    for (int d = 0; d < nd; d++) e += j[d] * lstride[q][d];
                    ptr[k] = gbuf[q] + e * (int64_t)glv[q]->itemsize;
                }
                ew_eval(m->prog, (size_t)L, ptr, st, m->tile + row * (size_t)L * isz);
                for (int d = nd - 2; d >= 0; d--) {
                    if (++j[d] < start[d] + tcnt[d]) break;
                    j[d] = start[d];
                }
            }
        }
        red_accum(r->op, r->in_dtype, m->acc + (size_t)accoff * asz, nd, tcnt, r->axes, m->tile, tbase,
                  in->shape);
        int d = nd - 1;
        for (; d >= 0; d--) {
            if ((org[d] += te[d]) < cnt[d]) break;
            org[d] = 0;
        }
        if (d < 0) break;
    }
}

/* ---- streamed leaves (plan_stream_leaf): a stored input chunk decoded in
 * order into a tile, never whole ---- */

/* A leaf's region in its read unit (at the unit's origin; smaller than it at
 * the array's edges) read as runs of `run` elements, one per index of the
 * dims before k, with what lies between skipped. */
typedef struct {
    zarr_stream *zs;
    size_t isz;
    int nd, k;
    int64_t ustride[ZC_MAX_DIMS], ext[ZC_MAX_DIMS], idx[ZC_MAX_DIMS];
    int64_t run, left, pos; /* run length, its elements not read yet, elements of the unit passed */
    bool done;
    unsigned char *tile, *skip; /* the next elements; a tile to skip through (edge blocks only) */
    size_t tile_n;
} sleaf;

static int sleaf_open(sleaf *l, zc_array *leaf, const int64_t *unit, const int64_t *cnt, size_t tile_n)
{
    zc_zarr *z = leaf->p.zarr.z;
    memset(l, 0, sizeof *l);
    l->isz = leaf->itemsize;
    l->nd = leaf->ndim;
    l->tile_n = tile_n;
    int64_t st = 1;
    for (int d = l->nd - 1; d >= 0; d--) {
        l->ustride[d] = st;
        st *= z->rchunk[d];
        l->ext[d] = cnt[d];
    }
    int k = l->nd - 1;
    while (k > 0 && l->ext[k] == z->rchunk[k]) k--;
    l->k = k < 0 ? 0 : k;
    l->run = l->nd ? l->ext[l->k] * l->ustride[l->k] : 1;
    if (!(l->tile = zc__malloc(tile_n * l->isz))) return ZC_ENOMEM;
    return zarr_stream_open(z, unit, &l->zs);
}

static int sleaf_close(sleaf *l)
{
    int rc = zarr_stream_close(l->zs);
    zc__free(l->tile);
    zc__free(l->skip);
    memset(l, 0, sizeof *l);
    return rc;
}

/* Pass n elements of the unit (decoded and dropped). */
static int sleaf_skip(sleaf *l, int64_t n)
{
    if (n > 0 && !l->skip && !(l->skip = zc__malloc(l->tile_n * l->isz))) return ZC_ENOMEM;
    while (n > 0) {
        int64_t t = n < (int64_t)l->tile_n ? n : (int64_t)l->tile_n;
        ZC_TRY(zarr_stream_read(l->zs, l->skip, (size_t)t * l->isz));
        n -= t;
        l->pos += t;
    }
    return 0;
}

/* The next n (<= tile_n) elements of the region into l->tile. */
static int sleaf_next(sleaf *l, int64_t n)
{
    int64_t got = 0;
    while (got < n) {
        if (l->left == 0) {
            if (l->done) return zc__err(ZC_EINTERNAL, "streamed leaf: read past its region");
            int64_t at = 0;
            for (int d = 0; d < l->k; d++) at += l->idx[d] * l->ustride[d];
            ZC_TRY(sleaf_skip(l, at - l->pos));
            l->left = l->run;
            int d = l->k - 1; /* the next run's index */
            for (; d >= 0; d--) {
                if (++l->idx[d] < l->ext[d]) break;
                l->idx[d] = 0;
            }
            if (d < 0) l->done = true;
        }
        int64_t t = l->left < n - got ? l->left : n - got;
        ZC_TRY(zarr_stream_read(l->zs, l->tile + (size_t)got * l->isz, (size_t)t * l->isz));
        got += t;
        l->left -= t;
        l->pos += t;
    }
    return 0;
}

/* Accumulate elements [a, a + n) (C order) of the input block into member m:
 * cut into boxes contiguous in C order (at most 2 per dim), each evaluated
 * from the streamed leaves' tiles (element e at tile + (e - a)) and the
 * other leaves' blocks (gbuf, by their strides), then accumulated. */
static void stream_accum(gmember *m, int nd, const int64_t *cnt, const int64_t *base, int64_t a, int64_t n,
                         unsigned char *const *gbuf, sleaf *const *sl, zc_array *const *glv,
                         int64_t (*lstride)[ZC_MAX_DIMS])
{
    const typeof(m->a->p.reduce) *r = &m->a->p.reduce;
    size_t isz = m->in->itemsize, asz = red_acc_size(r->op, r->in_dtype);
    int64_t bs[ZC_MAX_DIMS], as[ZC_MAX_DIMS], b = 1, acc_n = 1;
    for (int d = nd - 1; d >= 0; d--) {
        bs[d] = b;
        b *= cnt[d];
        as[d] = ((r->axes >> d) & 1) ? 0 : acc_n;
        if (!((r->axes >> d) & 1)) acc_n *= cnt[d];
    }
    const void *ptr[64];
    int64_t st[64];
    for (int64_t e = a, end = a + n; e < end;) {
        /* the box starting at e: whole in the dims after k, up to the end along k */
        int64_t c[ZC_MAX_DIMS], rem = e, ext[ZC_MAX_DIMS], tbase[ZC_MAX_DIMS], accoff = 0;
        for (int d = 0; d < nd; d++) {
            c[d] = rem / bs[d];
            rem %= bs[d];
        }
        int k = nd - 1;
        while (k > 0 && c[k] == 0 && end - e >= bs[k - 1]) k--;
        for (int d = 0; d < nd; d++) {
            ext[d] = d < k ? 1 : d > k ? cnt[d] : 0;
            tbase[d] = base[d] + c[d];
            accoff += c[d] * as[d];
        }
        int64_t along = (end - e) / bs[k], room = cnt[k] - c[k];
        ext[k] = along < room ? along : room;
        int64_t boxn = ext[k] * bs[k];
        unsigned char *vals;
        if (!m->prog) {
            int q = m->leaf[0];
            vals = sl[q] ? sl[q]->tile + (size_t)(e - a) * isz : gbuf[q] + (size_t)e * isz;
        } else {
            vals = m->tile + (size_t)(e - a) * isz;
            bool flat = true;
            for (int i = 0; i < m->nleaf && flat; i++) {
                int q = m->leaf[i];
                for (int d = 0; d < nd && !sl[q]; d++) flat &= lstride[q][d] == bs[d] || ext[d] == 1;
            }
            int64_t L = flat ? boxn : ext[nd - 1], rows = boxn / L, j[ZC_MAX_DIMS];
            memcpy(j, c, sizeof(int64_t) * (size_t)nd);
            for (int64_t row = 0; row < rows; row++) {
                int64_t rowflat = 0;
                for (int d = 0; d < nd; d++) rowflat += j[d] * bs[d];
                for (int i = 0; i < m->nleaf; i++) {
                    int q = m->leaf[i];
                    if (sl[q]) {
                        ptr[i] = sl[q]->tile + (size_t)(rowflat - a) * glv[q]->itemsize;
                        st[i] = 1;
                    } else {
                        int64_t o = 0;
                        for (int d = 0; d < nd; d++) o += j[d] * lstride[q][d];
                        ptr[i] = gbuf[q] + o * (int64_t)glv[q]->itemsize;
                        st[i] = flat ? 1 : lstride[q][nd - 1];
                    }
                }
                ew_eval(m->prog, (size_t)L, ptr, st, vals + (size_t)(rowflat - e) * isz);
                for (int d = nd - 2; d >= 0; d--) {
                    if (++j[d] < c[d] + ext[d]) break;
                    j[d] = c[d];
                }
            }
        }
        red_accum(r->op, r->in_dtype, m->acc + (size_t)accoff * asz, nd, ext, r->axes, vals, tbase, m->in->shape);
        e += boxn;
    }
}

/* The input block at ic of a group task whose leaves include streamed ones
 * (sl[q] set): tile by tile, every member accumulating each tile while it is
 * in cache. The other leaves' blocks are in gbuf. */
static int stream_block(gmember *m, int n, int nd, const int64_t *cnt, const int64_t *base, unsigned char *const *gbuf,
                        sleaf *const *sl, int ng, zc_array *const *glv, int64_t (*lstride)[ZC_MAX_DIMS], size_t tile_n)
{
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= cnt[d];
    for (int64_t a = 0; a < total;) {
        int64_t t = total - a < (int64_t)tile_n ? total - a : (int64_t)tile_n;
        for (int q = 0; q < ng; q++)
            if (sl[q]) ZC_TRY(sleaf_next(sl[q], t));
        for (int i = 0; i < n; i++) stream_accum(&m[i], nd, cnt, base, a, t, gbuf, sl, glv, lstride);
        a += t;
    }
    return 0;
}

/* One task of a group: output block b of every reduction whose stage has group ==
 * lead, reading each distinct input block once. */
static int reduce_group_block(stage_ctx *c, int64_t b)
{
    plan *p = c->p;
    int lead = c->index, n = 0, ng = 0, rc = 0;
    for (int k = lead; k < p->nstages; k++) n += p->stages[k].group == lead;
    gmember *m = zc__calloc((size_t)n, sizeof *m);
    zc_array *glv[64];
    unsigned char *gbuf[64] = {0};
    int64_t(*lstride)[ZC_MAX_DIMS] = zc__malloc(sizeof(int64_t[64][ZC_MAX_DIMS]));
    if (!m || !lstride) {
        rc = ZC_ENOMEM;
        goto out;
    }
    bool all_there = c->spec->resume;
    for (int k = lead, i = 0; k < p->nstages; k++) {
        if (p->stages[k].group != lead) continue;
        gmember *g = &m[i++];
        g->a = p->stages[k].node;
        g->in = g->a->inputs[0];
        int64_t oc[ZC_MAX_DIMS];
        node_block_coords(g->a, b, oc);
        node_block_region(g->a, oc, g->osel);
        if (all_there) {
            char key[1024];
            uint64_t size;
            all_there = g->a != c->dnode && !g->a->mat->m.sharded && /* dnode: no array, always computed */
                        zarr_chunk_key(g->a->mat, oc, key, sizeof key) == 0 && store_size(g->a->mat->st, key, &size) == 0;
        }
        if (g->in->kind == NODE_EW && g->in->stage < 0) {
            if ((rc = node_fuse_ew(g->in)) < 0) goto out;
            g->prog = g->in->p.ew.prog;
            g->nleaf = g->in->p.ew.nleaves;
            for (int k2 = 0; k2 < g->nleaf && rc >= 0; k2++) rc = g->leaf[k2] = group_leaf(glv, &ng, g->in->p.ew.leaves[k2]);
        } else {
            g->nleaf = 1;
            rc = g->leaf[0] = group_leaf(glv, &ng, g->in);
        }
        if (rc < 0) goto out;
        rc = 0;
    }
    if (all_there) {
        atomic_fetch_add(&c->skipped, 1);
        goto out;
    }
    /* the input blocks of output block b (the same for every member) */
    zc_array *in0 = m[0].in;
    int nd = in0->ndim;
    size_t tile_n = plan_stream_tile(in0);
    bool streams = false; /* some leaf streams (plan_stream_leaf): the members' tiles are streamed tiles */
    for (int q = 0; q < ng; q++) {
        const char *why;
        streams |= plan_stream_leaf(in0, glv[q], &why);
    }
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS];
    size_t nacc;
    bool empty = !reduce_range(m[0].a, b, lo, hi, &nacc);
    memcpy(ic, lo, (size_t)nd * sizeof *ic);
    for (int i = 0; i < n; i++) {
        gmember *g = &m[i];
        const typeof(g->a->p.reduce) *r = &g->a->p.reduce;
        g->out_bytes = node_region_bytes(g->a, g->osel);
        g->out = zc__malloc(g->out_bytes ? g->out_bytes : 1);
        g->acc = (r->flags & ROUND_LAST) ? zc__malloc_array(nacc ? nacc : 1, red_acc_size(r->op, r->in_dtype)) : g->out;
        size_t tb = streams ? tile_n * g->in->itemsize : GROUP_TILE > g->in->itemsize ? GROUP_TILE : g->in->itemsize;
        g->tile = g->prog ? zc__malloc(tb) : NULL;
        if (!g->out || !g->acc || (g->prog && !g->tile)) {
            rc = ZC_ENOMEM;
            goto out;
        }
        red_init(r->op, r->in_dtype, g->acc, nacc);
    }
    sleaf *sl[64] = {0};
    while (!empty) {
        zc_range sel[ZC_MAX_DIMS];
        int64_t cnt[ZC_MAX_DIMS], base[ZC_MAX_DIMS];
        bool streamed = false;
        reduce_input_block(in0, ic, sel, cnt, base);
        for (int q = 0; q < ng && rc == 0; q++) {
            zc_array *l = glv[q];
            zc_range lsel[ZC_MAX_DIMS];
            node_leaf_sel(in0, l, sel, lsel, lstride[q]);
            const char *why;
            if (plan_stream_leaf(in0, l, &why)) {
                streamed = true;
                if (!(sl[q] = zc__calloc(1, sizeof *sl[q]))) rc = ZC_ENOMEM;
                else rc = sleaf_open(sl[q], l, ic, cnt, tile_n);
                continue;
            }
            size_t nb = node_region_bytes(l, lsel);
            if (!(gbuf[q] = zc__malloc(nb ? nb : 1))) rc = ZC_ENOMEM;
            else rc = node_region(l, lsel, gbuf[q]);
        }
        if (rc == 0 && streamed) rc = stream_block(m, n, nd, cnt, base, gbuf, sl, ng, glv, lstride, tile_n);
        else if (rc == 0)
            for (int i = 0; i < n; i++) group_accum(&m[i], nd, cnt, base, gbuf, glv, lstride);
        for (int q = 0; q < ng; q++) {
            zc__free(gbuf[q]);
            gbuf[q] = NULL;
            if (sl[q]) {
                int crc = sleaf_close(sl[q]);
                if (rc == 0) rc = crc;
                zc__free(sl[q]);
                sl[q] = NULL;
            }
        }
        if (rc < 0) goto out;
        if (!reduce_next_block(nd, lo, hi, ic)) break;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        gmember *g = &m[i];
        const typeof(g->a->p.reduce) *r = &g->a->p.reduce;
        if (r->flags & ROUND_LAST) red_finalize(r->op, r->in_dtype, g->acc, nacc, g->out, r->ddof);
        rc = store_block(c, g->a, g->osel, g->out, g->out_bytes);
        if (rc < 0) zc__err_wrap(rc, "writing %s", p->stages[g->a->stage].name);
    }
out:
    for (int i = 0; m && i < n; i++) {
        if (m[i].acc != m[i].out) zc__free(m[i].acc);
        zc__free(m[i].out);
        zc__free(m[i].tile);
    }
    zc__free(m);
    zc__free(lstride);
    return rc;
}

/* A copy task's block read straight from a stored blosc source (a single-pass
 * sliced copy, rechunk_slice_choose). From a remote store, chunk by chunk, each
 * by parts: zarr_part_read fetches and decodes only the blosc blocks that hold
 * the block's part of the chunk, where one zc_zarr_read of the whole block
 * would fetch and decode each chunk from its first selected byte to its last.
 * Chunks it does not handle make the whole block be read the usual way (its
 * buffers freed first). Locally the usual read is the faster: it maps the
 * chunk, and lz4+shuffle blocks unshuffle only the selected items, where
 * zarr_part copies the needed blocks' stored bytes and decodes them whole
 * (2.3-3.3x the wall time on the fft benchmark's rechunk). Other copies (and
 * sources kept decoded by srccache) read as usual. */

/* Whether copy stage s is a sliced copy: the planner gave it blocks other than
 * the grouped copy's (plan.c slice_copy; its projection counts these reads). */
static bool copy_sliced(const plan_stage *s)
{
    const zc_array *a = s->node, *in = a->ninputs ? a->inputs[0] : NULL;
    if (s->copy[0] <= 0 || a->kind != NODE_RECHUNK || !in || in->kind != NODE_ZARR) return false;
    int64_t cb[ZC_MAX_DIMS];
    rechunk_copy_block(a->ndim, a->shape, in->chunks, a->chunks, cb);
    return memcmp(cb, s->copy, sizeof(int64_t) * (size_t)a->ndim) != 0;
}

static int copy_region(zc_array *a, const zc_range *sel, unsigned char *buf, bool sliced)
{
    zc_array *in = a->ninputs ? a->inputs[0] : NULL;
    if (!sliced || a->kind != NODE_RECHUNK || !in || in->kind != NODE_ZARR || in->cache || !in->p.zarr.z ||
        !in->p.zarr.z->st->io_depth)
        return node_compute_region(a, sel, buf);
    zc_zarr *z = in->p.zarr.z;
    int nd = a->ndim;
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS], bstride[ZC_MAX_DIMS], s = (int64_t)a->itemsize;
    for (int d = nd - 1; d >= 0; d--) {
        if (sel[d].stop <= sel[d].start) return 0;
        bstride[d] = s;
        s *= sel[d].stop - sel[d].start;
        lo[d] = ic[d] = sel[d].start / z->rchunk[d];
        hi[d] = ck_ceildiv(sel[d].stop, z->rchunk[d]);
    }
    zarr_part part = {0};
    int rc = 0;
    for (;;) {
        int64_t blo[ZC_MAX_DIMS], cnt[ZC_MAX_DIMS], off = 0;
        for (int d = 0; d < nd; d++) {
            int64_t c0 = ic[d] * z->rchunk[d], st = sel[d].start > c0 ? sel[d].start : c0;
            int64_t en = c0 + z->rchunk[d] < sel[d].stop ? c0 + z->rchunk[d] : sel[d].stop;
            blo[d] = st - c0;
            cnt[d] = en - st;
            off += (st - sel[d].start) * bstride[d];
        }
        if ((rc = zarr_part_read(z, ic, blo, cnt, buf + off, bstride, &part)) != 0) break;
        int d = nd - 1;
        for (; d >= 0; d--) {
            if (++ic[d] < hi[d]) break;
            ic[d] = lo[d];
        }
        if (d < 0) break;
    }
    zarr_part_free(&part);
    if (rc == 1) return node_compute_region(a, sel, buf); /* a chunk it does not handle */
    return rc;
}

/* Resume of a grouped copy task: every output chunk of its block is stored. */
static bool copy_done(zc_array *a, const zc_range *sel)
{
    if (a->mat->m.sharded) return false;
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        lo[d] = ic[d] = sel[d].start / a->chunks[d];
        hi[d] = ck_ceildiv(sel[d].stop, a->chunks[d]);
        if (hi[d] <= lo[d]) return false;
    }
    for (;;) {
        char key[1024];
        uint64_t size;
        if (zarr_chunk_key(a->mat, ic, key, sizeof key) < 0 || store_size(a->mat->st, key, &size) < 0) return false;
        int d = a->ndim - 1;
        for (; d >= 0; d--) {
            if (++ic[d] < hi[d]) break;
            ic[d] = lo[d];
        }
        if (d < 0) return true;
    }
}

/* Erase the chunks of intermediate `in` that lie in sel (best effort: the work
 * directory is removed at the end anyway). */
static void erase_read(zc_array *in, const zc_range *sel)
{
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++) {
        lo[d] = ic[d] = sel[d].start / in->chunks[d];
        hi[d] = ck_ceildiv(sel[d].stop, in->chunks[d]);
        if (hi[d] <= lo[d]) return;
    }
    for (;;) {
        char key[1024];
        if (zarr_chunk_key(in->mat, ic, key, sizeof key) == 0) store_erase(in->mat->st, key);
        int d = in->ndim - 1;
        for (; d >= 0; d--) {
            if (++ic[d] < hi[d]) break;
            ic[d] = lo[d];
        }
        if (d < 0) return;
    }
}

/* Whether node n's computation (through fused nodes) reads x. */
static bool reads(const zc_array *n, const zc_array *x)
{
    for (int i = 0; i < n->ninputs; i++) {
        const zc_array *c = n->inputs[i];
        if (c == x || (c->stage < 0 && reads(c, x))) return true;
    }
    return false;
}

/* plan_stage.erase_input: stage k is a grouped copy of an intermediate that no other
 * stage reads, and each chunk of that intermediate lies in one block of k. */
static bool may_erase_input(const plan *p, int k)
{
    const plan_stage *s = &p->stages[k];
    const zc_array *a = s->node, *in = a->ninputs ? a->inputs[0] : NULL;
    if (s->copy[0] <= 0 || !in || in->stage < 0 || p->stages[in->stage].target >= 0 || !in->mat ||
        in->mat->m.sharded)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (s->copy[d] % in->chunks[d]) return false;
    for (int j = 0; j < p->nstages; j++)
        if (j != k && reads(p->stages[j].node, in)) return false;
    return true;
}

/* An FFT stage k that is the only reader of an intermediate (read through
 * unmaterialized rechunks, which keep coordinates) may erase each of its
 * chunks once every task that reads it is done: the intermediate then never
 * takes the whole array's space, and the output's writes reuse its pages
 * (rfft along time of the FFT benchmark writes 2 GB of each). The intermediate
 * read by stage k's node, or NULL. */
static zc_array *consumable(const plan *p, int k)
{
    const zc_array *a = p->stages[k].node;
    if (a->kind != NODE_FFT || a->ninputs != 1) return NULL;
    zc_array *in = a->inputs[0];
    while (in->kind == NODE_RECHUNK && in->stage < 0 && in->ninputs == 1) in = in->inputs[0];
    if (in->stage < 0 || !in->mat || in->mat->m.sharded || p->stages[in->stage].target >= 0 || in->ndim != a->ndim)
        return NULL;
    for (int j = 0; j < p->nstages; j++)
        if (j != k && reads(p->stages[j].node, in)) return NULL;
    return in;
}

/* The chunks of c->eat a task of block sel reads: sel, along the FFT axis all
 * of it (a superset of what it reads: counted and released alike). */
static void eaten_box(const stage_ctx *c, const zc_range *sel, int64_t *lo, int64_t *hi)
{
    const zc_array *in = c->eat;
    for (int d = 0; d < in->ndim; d++) {
        bool all = d == c->s->node->p.fft.axis;
        int64_t start = all ? 0 : sel[d].start, stop = all ? in->shape[d] : sel[d].stop;
        lo[d] = start / in->chunks[d];
        hi[d] = stop > start ? ck_ceildiv(stop, in->chunks[d]) : lo[d];
    }
}

/* Chunk index (C order) of chunk coordinates ic of c->eat. */
static int64_t eaten_index(const zc_array *in, const int64_t *ic)
{
    int64_t idx = 0;
    for (int d = 0; d < in->ndim; d++) idx = idx * ck_ceildiv(in->shape[d], in->chunks[d]) + ic[d];
    return idx;
}

/* c->left: for every chunk of c->eat, the tasks of the stage whose box holds
 * it. Off (c->eat NULL) when the chunks are too many to count. */
static int count_readers(stage_ctx *c)
{
    const zc_array *in = c->eat, *a = c->s->node;
    int64_t nch = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (in->chunks[d] < 1 || a->chunks[d] < 1) return 0;
        nch *= ck_ceildiv(in->shape[d], in->chunks[d]);
        if (nch > (1 << 24)) {
            c->eat = NULL;
            return 0;
        }
    }
    if (!(c->left = zc__calloc((size_t)(nch ? nch : 1), sizeof *c->left))) return ZC_ENOMEM;
    int64_t ic[ZC_MAX_DIMS];
    for (int64_t i = 0; i < nch; i++) {
        int64_t r = i, readers = 1;
        for (int d = in->ndim - 1; d >= 0; d--) {
            int64_t n = ck_ceildiv(in->shape[d], in->chunks[d]);
            ic[d] = r % n;
            r /= n;
        }
        for (int d = 0; d < in->ndim; d++) {
            int64_t nb = ck_ceildiv(a->shape[d], a->chunks[d]), lo = ic[d] * in->chunks[d];
            int64_t hi = (ic[d] + 1) * in->chunks[d] < in->shape[d] ? (ic[d] + 1) * in->chunks[d] : in->shape[d];
            /* along the axis every block reads every chunk; else the blocks overlapping it */
            readers *= d == a->p.fft.axis ? nb : (hi - 1) / a->chunks[d] - lo / a->chunks[d] + 1;
        }
        atomic_init(&c->left[i], (int)(readers < INT32_MAX ? readers : INT32_MAX));
    }
    return 0;
}

/* Task of block sel done: the chunks no other task will read are erased. */
static void consumed(stage_ctx *c, const zc_range *sel)
{
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS];
    eaten_box(c, sel, lo, hi);
    for (int d = 0; d < c->eat->ndim; d++) {
        if (hi[d] <= lo[d]) return;
        ic[d] = lo[d];
    }
    for (;;) {
        char key[1024];
        if (atomic_fetch_sub(&c->left[eaten_index(c->eat, ic)], 1) == 1 &&
            zarr_chunk_key(c->eat->mat, ic, key, sizeof key) == 0)
            store_erase(c->eat->mat->st, key);
        int d = c->eat->ndim - 1;
        for (; d >= 0; d--) {
            if (++ic[d] < hi[d]) break;
            ic[d] = lo[d];
        }
        if (d < 0) return;
    }
}

/* The values of a task's block sel of stage c: block b of the node's grid
 * computed by its kind's block function (reduction rounds), else the region
 * (b < 0: a copy's block of output chunks, perhaps a sliced copy). */
static int block_values(stage_ctx *c, zc_array *a, const zc_range *sel, int64_t b, void *out)
{
    if (kind_of(a)->block && b >= 0) return kind_of(a)->block(a, b, out);
    return copy_region(a, sel, out, b < 0 && copy_sliced(c->s));
}

/* A task's block of the output of zc_compute_buffer (kind REDUCE: output block b),
 * computed in place in dst when it is a contiguous run of it. */
static int direct_block(stage_ctx *c, zc_array *a, const zc_range *sel, int64_t b)
{
    size_t nbytes = node_region_bytes(a, sel);
    int64_t off = nbytes ? block_run(a, sel) : -1;
    if (off >= 0)
        return block_values(c, a, sel, b, c->dst + off);
    void *buf = zc__malloc(nbytes ? nbytes : 1);
    if (!buf) return ZC_ENOMEM;
    int rc = block_values(c, a, sel, b, buf);
    if (rc == 0) put_block(a, sel, buf, c->dst);
    zc__free(buf);
    return rc;
}

static int run_task(stage_ctx *c, int64_t b)
{
    zc_array *a = c->s->node;
    int64_t coords[ZC_MAX_DIMS];
    zc_range sel[ZC_MAX_DIMS];
    if (c->s->copy[0] > 0) { /* a grouped copy: the block of output chunks b (plan_stage.copy) */
        for (int d = a->ndim - 1; d >= 0; d--) {
            int64_t g = ck_ceildiv(a->shape[d], c->s->copy[d]), i = g ? b % g : 0, e = (i + 1) * c->s->copy[d];
            b = g ? b / g : 0;
            sel[d] = (zc_range){i * c->s->copy[d], e < a->shape[d] ? e : a->shape[d], 1};
        }
        if (a == c->dnode) return direct_block(c, a, sel, -1);
        if (c->spec->resume && copy_done(a, sel)) {
            atomic_fetch_add(&c->skipped, 1);
            return 0;
        }
        size_t nbytes = node_region_bytes(a, sel);
        void *buf = zc__malloc(nbytes ? nbytes : 1);
        if (!buf) return ZC_ENOMEM;
        int rc = copy_region(a, sel, buf, copy_sliced(c->s));
        if (rc == 0) rc = zc_zarr_write(a->mat, sel, buf, nbytes);
        zc__free(buf);
        if (rc == 0 && c->s->erase_input) erase_read(a->inputs[0], sel);
        return rc;
    }
    node_block_coords(a, b, coords);
    node_block_region(a, coords, sel);
    if (c->spec->resume && a != c->dnode) {
        char key[1024];
        uint64_t size;
        if (!a->mat->m.sharded && zarr_chunk_key(a->mat, coords, key, sizeof key) == 0 &&
            store_size(a->mat->st, key, &size) == 0) {
            atomic_fetch_add(&c->skipped, 1);
            return 0;
        }
    }
    if (c->s->group == c->index) return reduce_group_block(c, b);
    int rc;
    if (a == c->dnode) {
        rc = direct_block(c, a, sel, b);
    } else {
        size_t nbytes = node_region_bytes(a, sel);
        void *buf = zc__malloc(nbytes ? nbytes : 1);
        if (!buf) return ZC_ENOMEM;
        rc = block_values(c, a, sel, b, buf);
        if (rc == 0) rc = zc_zarr_write(a->mat, sel, buf, nbytes);
        zc__free(buf);
    }
    if (rc == 0 && c->eat) consumed(c, sel);
    return rc;
}

static int task(void *vctx, size_t i, int slot)
{
    stage_ctx *c = vctx;
    if (atomic_load(&c->cancel)) return zc__err(ZC_ECANCELED, "computation canceled");
    int rc;
    for (int attempt = 0;; attempt++) {
        zc__alloc_thread_reset();
        rc = run_task(c, c->first + (int64_t)i);
        size_t peak = zc__alloc_thread_peak();
        size_t m = atomic_load(&c->measured);
        while (peak > m && !atomic_compare_exchange_weak(&c->measured, &m, peak)) {}
        if (rc != ZC_EIO || attempt >= c->spec->max_retries) break;
    }
    if (rc < 0) return zc__err_wrap(rc, "%s, task %lld", c->s->name, (long long)(c->first + (int64_t)i));
    long long done = atomic_fetch_add(&c->done, 1) + 1;
    if (c->spec->progress) {
        pthread_mutex_lock(&c->progress_lock);
        zc_progress pr = {c->index, c->s->name, done, c->s->tasks};
        if (c->spec->progress(&pr, c->spec->progress_ctx)) atomic_store(&c->cancel, 1);
        pthread_mutex_unlock(&c->progress_lock);
    }
    return 0;
}

/* The codec of an intermediate: "lz4", or "none" when it holds a rechunked copy
 * of a stored array whose chunks do not compress to less than INCOMPRESSIBLE of
 * their size (random doubles: blosc with shuffle 0.76, plain LZ4 ~1.0): LZ4
 * would spend its time on both ends (encode 9% of the rechunk's CPU, measured)
 * for nothing. Kinds whose consumers read parts of chunks (a sort's runs) are
 * stored uncompressed. */
#define INCOMPRESSIBLE 0.6
static const char *intermediate_codec(const zc_array *a)
{
    if (plan_stores_uncompressed(a)) return "none";
    while (a->kind == NODE_RECHUNK && a->ninputs == 1) a = a->inputs[0];
    if (a->kind != NODE_ZARR || !a->p.zarr.z) return "lz4";
    zarr_probe_info pi;
    if (zarr_probe(a->p.zarr.z, &pi) < 0) {
        zc__err_clear();
        return "lz4";
    }
    return pi.ratio >= INCOMPRESSIBLE ? "none" : "lz4";
}

/* A target created with the caller's options: they must describe the node's
 * array, and its write unit (shards, else chunks) must be the node's chunks. */
static int target_opts(const zc_zarr_create_opts *create, const zc_target *t, const zc_array *a, const char *name,
                       zc_zarr_create_opts *o)
{
    *o = *create;
    bool same = o->ndim == a->ndim && o->dtype == a->dtype && (!o->itemsize || o->itemsize == a->itemsize);
    for (int d = 0; same && d < a->ndim; d++) {
        int64_t unit = o->shards[d] ? o->shards[d] : o->chunks[d];
        same = o->shape[d] == a->shape[d] && (unit == a->chunks[d] || (unit >= a->shape[d] && a->chunks[d] == a->shape[d]));
    }
    if (!same)
        return zc__err(ZC_EINVAL, "%s: the target's creation options do not describe the computed array (its ndim, "
                       "shape, dtype, and shards or chunks as the computed chunks)", name);
    if (!o->codec) o->codec = t->codec ? t->codec : "zstd:1";
    o->overwrite = 1;
    return 0;
}

/* The write unit of an open array along d: its shards when sharded, else its
 * chunks, cut at the shape (as a node's chunks are). */
static int64_t write_unit(const zc_zarr *z, int d)
{
    int64_t u = z->m.chunks[d], s = z->m.shape[d];
    return u > s && s > 0 ? s : u;
}

static int create_stage_array(const zc_plan *z, plan_stage *s, zc_store *work, int k, int resume)
{
    const zc_target *t = s->target >= 0 ? &z->targets[s->target] : NULL;
    const zc_zarr_create_opts *create = t && z->creates ? z->creates[s->target] : NULL;
    zc_array *a = s->node;
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.zarr_format = t && t->zarr_format ? t->zarr_format : 3;
    o.ndim = a->ndim;
    for (int d = 0; d < a->ndim; d++) {
        o.shape[d] = a->shape[d];
        o.chunks[d] = a->chunks[d];
    }
    o.dtype = a->dtype;
    o.itemsize = a->itemsize;
    o.codec = t ? (t->codec ? t->codec : "zstd:1") : intermediate_codec(a);
    o.write_empty_chunks = !t; /* intermediates: every chunk stored, so resume can trust presence */
    o.overwrite = 1;
    if (create) ZC_TRY(target_opts(create, t, a, s->name, &o));
    zc_store *st = t ? t->store : work;
    char path[64];
    snprintf(path, sizeof path, "op%d", k);
    const char *where = t ? t->path : path;
    if (resume) {
        /* keep what a previous run wrote when its metadata matches */
        if (zc_zarr_open(st, where, &a->mat) == 0) {
            bool same = a->mat->m.ndim == a->ndim && a->mat->m.dtype.type == a->dtype;
            for (int d = 0; same && d < a->ndim; d++)
                same = a->mat->m.shape[d] == a->shape[d] && write_unit(a->mat, d) == a->chunks[d];
            if (same) return 0;
            zc_zarr_close(a->mat);
            a->mat = NULL;
        }
    }
    int rc = zc_zarr_create(st, where, &o, &a->mat);
    if (rc < 0) return zc__err_wrap(rc, "creating the array of %s", s->name);
    return 0;
}

int exec_work_dir(const zc_spec *spec, char *buf, size_t size)
{
    static atomic_int counter;
    if (spec->work_dir) { /* file:// as its path: the folder is then made, locked and removed as a path's */
        const char *local = store_local_path(spec->work_dir);
        snprintf(buf, size, "%s", local ? local : spec->work_dir);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, size, "%s/zcube-work-%d-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid(), atomic_fetch_add(&counter, 1));
    return 0;
}

int exec_prepare(zc_plan *z, zc_store *work, int resume)
{
    plan *p = &z->p;
    for (int k = 0; k < p->nstages; k++) {
        plan_stage *s = &p->stages[k];
        ZC_TRY(create_stage_array(z, s, work, k, resume));
    }
    return 0;
}

int exec_open(plan *p, const zc_target *targets, zc_store *work)
{
    for (int k = 0; k < p->nstages; k++) {
        plan_stage *s = &p->stages[k];
        const zc_target *t = s->target >= 0 ? &targets[s->target] : NULL;
        char path[64];
        snprintf(path, sizeof path, "op%d", k);
        zc_array *a = s->node;
        int rc = zc_zarr_open(t ? t->store : work, t ? t->path : path, &a->mat);
        if (rc == ZC_ENOENT) return zc__err_wrap(rc, "%s: its array is missing (was the plan saved?)", s->name);
        if (rc < 0) return zc__err_wrap(rc, "%s: opening its array", s->name);
        /* a saved plan and the arrays it made must still agree: tasks write whole
         * chunks of the node's grid (a finer grid would have tasks share chunks) */
        bool same = a->mat->m.ndim == a->ndim && a->mat->m.dtype.type == a->dtype && a->mat->m.dtype.size == a->itemsize;
        for (int d = 0; same && d < a->ndim; d++)
            same = a->mat->m.shape[d] == a->shape[d] && write_unit(a->mat, d) == a->chunks[d];
        if (!same)
            return zc__err(ZC_EFORMAT, "%s: its array '%s' does not have the shape, chunks and dtype of the plan's operation",
                           s->name, t ? t->path : path);
    }
    return 0;
}

/* Tasks first..last-1 of stage k; dnode, if not NULL, is written into dst (zc_compute_buffer). */
static int run_stage(plan *p, int k, int64_t first, int64_t last, const zc_spec *spec, zc_array *dnode, void *dst,
                     zc_array *eat)
{
    const exec_backend *ex;
    ZC_TRY(exec_find(spec->executor, &ex));
    plan_stage *s = &p->stages[k];
    if (s->group >= 0 && s->group != k) return 0; /* its tasks are those of its group's first stage */
    if (first < 0) first = 0;
    if (last > s->tasks || last < 0) last = s->tasks;
    stage_ctx c = {.p = p, .s = s, .spec = spec, .index = k, .first = first, .dnode = dnode, .dst = dst,
                   .eat = first == 0 && last == s->tasks ? eat : NULL}; /* a slice of tasks cannot count readers */
    if (c.eat) ZC_TRY(count_readers(&c));
    atomic_init(&c.done, 0);
    atomic_init(&c.skipped, 0);
    atomic_init(&c.measured, 0);
    atomic_init(&c.cancel, 0);
    pthread_mutex_init(&c.progress_lock, NULL);
    /* big buffers are reused between tasks, within what the stage's tasks may hold at once */
    int64_t width = spec->nthreads > 0 ? spec->nthreads : (pool_default() ? pool_size(pool_default()) : 1);
    if (width > last - first) width = last - first;
    size_t budget = width > 0 && p->limit <= SIZE_MAX / (size_t)width ? p->limit * (size_t)width : 0;
    zc__alloc_cache_begin(budget);
    double ts = now();
    int rc = last > first ? ex->run((size_t)(last - first), spec->nthreads, task, &c) : 0;
    s->seconds += now() - ts;
    zc__alloc_cache_end(budget);
    if (atomic_load(&c.measured) > s->measured) s->measured = atomic_load(&c.measured);
    s->skipped += atomic_load(&c.skipped);
    pthread_mutex_destroy(&c.progress_lock);
    zc__free(c.left);
    return rc;
}

int exec_run_stage(plan *p, int k, int64_t first, int64_t last, const zc_spec *spec)
{
    return run_stage(p, k, first, last, spec, NULL, NULL, NULL);
}

void exec_close(plan *p)
{
    for (int k = 0; k < p->nstages; k++) {
        zc_zarr_close(p->stages[k].node->mat);
        p->stages[k].node->mat = NULL;
        if (p->stages[k].node->kind == NODE_EW) node_unfuse_ew(p->stages[k].node);
    }
}

int exec_whole(zc_plan *z, const zc_spec *spec, void *dst)
{
    plan *p = &z->p;
    if (!dst && z->ntargets < p->noutputs)
        return zc__err(ZC_EINVAL, "the plan was made without targets: there is nowhere to write its results");
    const exec_backend *ex;
    ZC_TRY(exec_find(spec->executor, &ex));
    for (int k = 0; k < p->nstages; k++) { /* this execution's figures */
        p->stages[k].seconds = 0;
        p->stages[k].measured = 0;
        p->stages[k].skipped = 0;
        p->stages[k].erase_input = false;
    }
    srccache *cache = NULL; /* sources read by several stages, decoded once (spec->cache_mem) */
    int rc = srccache_setup(p, spec, &cache);
    if (rc < 0) return rc;
    memcheck mc; /* every stage's RSS and counted memory (the output buffer is not working memory) */
    size_t out_bytes = dst ? p->outputs[0]->itemsize : 0;
    for (int d = 0; dst && d < p->outputs[0]->ndim; d++) out_bytes *= (size_t)p->outputs[0]->shape[d];
    if ((rc = memcheck_init(&mc, p, spec, out_bytes)) < 0) {
        srccache_free(cache);
        return rc;
    }
    char work_dir[1024];
    exec_work_dir(spec, work_dir, sizeof work_dir);
    zc_store *work = NULL;
    bool need_work = false;
    for (int k = 0; k < p->nstages; k++) need_work |= p->stages[k].target < 0;
    /* Small intermediates (reduction partials, mostly) stay in memory, inside
     * reserved_mem: a file per tiny chunk costs far more than computing it. The
     * plan says whether its projections allow it (plan.c work_in_memory). */
    bool in_memory = p->work_in_memory && !spec->resume && (size_t)p->intermediate_bytes <= plan_work_reserve(spec);
    size_t cached = srccache_bytes(cache); /* what cache_mem has left holds the intermediates if they all fit */
    if (p->work_in_memory && !spec->resume && spec->cache_mem > cached &&
        (size_t)p->intermediate_bytes <= spec->cache_mem - cached)
        in_memory = true;
    if (need_work && in_memory) {
        static atomic_int mem_counter;
        snprintf(work_dir, sizeof work_dir, "memory://zcube-work-%d-%d", (int)getpid(), atomic_fetch_add(&mem_counter, 1));
    }
    struct stat wsb;
    bool made_dir = need_work && !in_memory && store_local_path(work_dir) && stat(work_dir, &wsb) != 0; /* removed at the end */
    int lock = -1;
    if (need_work && ((rc = zc_store_open(work_dir, ZC_STORE_CREATE, &work)) < 0 ||
                      (!in_memory && (rc = work_lock(work_dir, &lock)) < 0))) {
        zc__err_wrap(rc, "work directory");
        zc_store_close(work);
        srccache_free(cache);
        memcheck_free(&mc);
        return rc;
    }
    uint64_t root_size;
    zc__err_kept before; /* a missing root group is no error */
    zc__err_keep(&before);
    bool had_root = need_work && !in_memory && store_size(work, "zarr.json", &root_size) == 0;
    zc__err_restore(&before);
    zc_array *dnode = NULL; /* the node of the output stage, written into dst */
    for (int k = 0; k < p->nstages; k++)
        if (p->stages[k].target == 0) dnode = p->stages[k].node;
    double t0 = now();
    for (int k = 0; k < p->nstages && rc == 0; k++) {
        plan_stage *s = &p->stages[k];
        if (s->group >= 0 && s->group != k) continue; /* created and computed with its group's first stage */
        for (int j = k; j < p->nstages && rc == 0; j++) /* the stage, and the others of its group */
            if ((j == k || p->stages[j].group == k) && !(dst && p->stages[j].target >= 0))
                rc = create_stage_array(z, &p->stages[j], work, j, spec->resume);
        if (rc == 0) {
            s->erase_input = !spec->resume && may_erase_input(p, k);
            memcheck_begin(&mc, k);
            rc = run_stage(p, k, 0, s->tasks, spec, dst ? dnode : NULL, dst, spec->resume ? NULL : consumable(p, k));
            memcheck_end(&mc, k);
        }
    }
    double total = now() - t0;
    if (rc == 0) {
        char *j = plan_to_json(p, true, total);
        if (j) srccache_annotate(cache, need_work && in_memory, &j);
        if (j) memcheck_annotate(&mc, &j);
        zc__free(z->report);
        z->report = j ? zc__strdup(j) : NULL;
        free(j);
        if (!z->report) rc = zc__err(ZC_ENOMEM, "the report of the computation");
    }
    /* remove only what this run wrote, through the store (a work dir may be a
     * URL): the intermediates op<k>, the root group written with them if there
     * was none, and the folder if it made it. Best effort: the result is made
     * (or the run's own error stands). */
    zc__err_kept kept;
    zc__err_keep(&kept);
    bool clean = need_work && !spec->resume && !in_memory;
    for (int k = 0; clean && k < p->nstages; k++) {
        char sub[32];
        snprintf(sub, sizeof sub, "op%d/", k);
        if (p->stages[k].target < 0) store_erase_prefix(work, sub);
    }
    if (clean && !had_root) store_erase(work, "zarr.json");
    if (clean && made_dir) rmdir(work_dir);
    zc__err_restore(&kept);
    for (int k = 0; k < p->nstages; k++) p->stages[k].erase_input = false;
    srccache_free(cache);
    memcheck_free(&mc);
    exec_close(p);
    zc_store_close(work);
    work_unlock(lock);
    return rc;
}
