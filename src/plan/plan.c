/* plan/plan.c — optimizing a computation into stages and projecting memory
 * (see plan.h). Planning costs O(operations), never O(blocks). */
#include "plan/plan.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/pool.h"
#include "plan/elementwise.h"
#include "plan/kind.h"
#include "plan/rechunk_plan.h"
#include "zarr/probe.h"
#include "zarr/stream.h"
#include "zarr/zarr.h"

/* a task's fixed bookkeeping: small allocations (selection plans, chunk keys, request
 * arrays of a batched read) and the growth of a memory store's index when its write
 * adds a chunk (the bucket array doubles: 128 KiB at 16K chunks, measured) */
#define TASK_BOOKKEEPING ((size_t)132 << 10)

typedef struct {
    zc_array **v;
    int *consumers;
    int n, cap;
} node_list;

static int find(const node_list *l, const zc_array *a)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == a) return i;
    return -1;
}

/* Post-order (inputs first); each node once. Iterative to bear deep chains. */
static int collect(node_list *l, zc_array *root)
{
    if (find(l, root) >= 0) return 0;
    for (int i = 0; i < root->ninputs; i++) ZC_TRY(collect(l, root->inputs[i]));
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        zc_array **v = zc__realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return ZC_ENOMEM;
        l->v = v;
        int *c = zc__realloc(l->consumers, sizeof *c * (size_t)cap);
        if (!c) return ZC_ENOMEM;
        l->consumers = c;
        l->cap = cap;
    }
    l->consumers[l->n] = 0;
    l->v[l->n++] = root;
    return 0;
}

/* Where a stored node lives (store_location), or "" when that is not known. */
static void location_of(store *st, const char *path, char *buf, size_t size)
{
    zc__err_kept kept; /* an absent place is no error here */
    zc__err_keep(&kept);
    if (store_location(st, path, buf, size) < 0) buf[0] = 0;
    zc__err_restore(&kept);
}

int plan_check_targets(int n, zc_array *const *arrays, const zc_target *targets)
{
    node_list l = {0};
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = collect(&l, arrays[i]);
    char tl[PATH_MAX + STORE_KEY_MAX], sl[PATH_MAX + STORE_KEY_MAX];
    for (int i = 0; i < n && rc == 0; i++) {
        location_of(targets[i].store, targets[i].path, tl, sizeof tl);
        size_t tn = strlen(tl);
        for (int k = 0; tn && k < l.n && rc == 0; k++) {
            const zc_array *a = l.v[k];
            if (a->kind != NODE_ZARR || !a->p.zarr.z) continue;
            location_of(a->p.zarr.z->st, a->p.zarr.z->path, sl, sizeof sl);
            if (strncmp(sl, tl, tn) || (sl[tn] && sl[tn] != '/')) continue;
            rc = sl[tn] ? zc__err(ZC_EINVAL, "the output '%s' holds an input, '%s': writing the output would erase "
                                  "it before it is read; write to another place", tl, sl)
                        : zc__err(ZC_EINVAL, "the output '%s' is also an input: writing it would erase the input "
                                  "before it is read; write to another place", tl);
        }
    }
    zc__free(l.v);
    zc__free(l.consumers);
    return rc;
}

/* The plan's own copy of the graph under root (node_clone): `from` maps the
 * caller's nodes to their copies in `to` (each node copied once). */
static int clone_graph(node_list *from, node_list *to, zc_array *root, zc_array **out)
{
    int i = find(from, root);
    if (i >= 0) {
        zc_array_retain(to->v[i]);
        *out = to->v[i];
        return 0;
    }
    zc_array *in[NODE_MAX_INPUTS] = {0}, *c = NULL;
    int rc = 0;
    for (int k = 0; k < root->ninputs && rc == 0; k++) rc = clone_graph(from, to, root->inputs[k], &in[k]);
    if (rc == 0) rc = node_clone(root, in, &c);
    for (int k = 0; k < root->ninputs; k++) zc_array_release(in[k]);
    if (rc < 0) return rc;
    /* both lists grow together: `to` holds a reference to every copy until the end */
    if ((rc = collect(from, root)) < 0 || from->n != to->n + 1 || (rc = collect(to, c)) < 0) {
        zc_array_release(c);
        return rc < 0 ? rc : ZC_EINTERNAL;
    }
    zc_array_retain(c);
    *out = c;
    return 0;
}

static const char *kind_name(const zc_array *a) { return kind_of(a)->name(a); }

static bool is_source(const zc_array *a) { return kind_has(a, KIND_SOURCE); }

static size_t copy_projection(const zc_array *a, const int64_t *from, const int64_t *to, const int64_t *block,
                              bool intermediate);

/* A single-pass sliced copy of rechunk r straight from its stored source
 * (rechunk_slice_choose; exec/run.c copy_region reads it): possible when the
 * source's chunks are read by parts (zarr_probe: blosc chunks big enough). A
 * task holds its block (twice if its store keeps the chunks written), one
 * output chunk's write (plan_write_extra), its bookkeeping and its read. */
static bool slice_option(const zc_array *r, size_t limit, int64_t threads, int64_t *block, size_t *mem,
                         double *cost)
{
    const zc_array *in = r->inputs[0];
    if (r->kind != NODE_RECHUNK || in->kind != NODE_ZARR || !in->p.zarr.z) return false;
    zarr_probe_info pi;
    if (zarr_probe(in->p.zarr.z, &pi) < 0) {
        zc__err_clear(); /* nothing known: the usual copies */
        return false;
    }
    if (!pi.unit) return false;
    /* the read: zarr_part's buffers (remote stores), or (locally, or for a
     * chunk it does not handle, after freeing them) the usual read of the
     * block, at most a decoded chunk, two stored ones + 1 MiB (zarr/read.c's
     * partial reads) and a batch's prefixes, or a 12 MiB group of small chunks */
    size_t chunk = in->p.zarr.z->rchunk_nbytes, fixed;
    if (ck_mul_sz(chunk, 3, &fixed) || ck_add_sz(fixed, (size_t)13 << 20, &fixed) ||
        ck_add_sz(fixed, plan_write_extra(r, r->chunks, NULL, false) + TASK_BOOKKEEPING, &fixed))
        return false;
    /* a memory store keeps each chunk written: the block once more, at
     * plan_kept's bound per chunk */
    size_t out = node_chunk_bytes(r);
    unsigned held = 1024;
    if (r->write_kept && out) held += (unsigned)ceil(1024.0 * (double)plan_kept(out, 1) / (double)out);
    slice_read rd = {pi.unit, pi.fast, pi.ratio, pi.remote};
    if (!rechunk_slice_choose(r->ndim, r->shape, in->chunks, r->chunks, r->itemsize, &rd, fixed, held, limit,
                              threads, block, mem, cost))
        return false;
    int64_t cb[ZC_MAX_DIMS]; /* the grouped copy's blocks are read whole (exec/run.c copy_sliced) */
    rechunk_copy_block(r->ndim, r->shape, in->chunks, r->chunks, cb);
    return memcmp(cb, block, sizeof(int64_t) * (size_t)r->ndim) != 0;
}

/* The cost of chain rp as the engine runs it (a copy grouped when its block's
 * projection fits: group_copy), each stage beyond one weighed by the
 * planner's STAGE_PENALTY (1.5); INFINITY when a copy does not fit. *ungrouped:
 * some copy whose group would need at most 4x the bound is not grouped (a
 * smaller budget's chunks may group it). */
static double chain_cost(const zc_array *r, const rechunk_plan *rp, size_t limit, bool *ungrouped)
{
    double cost = 0;
    *ungrouped = false;
    for (int s = 0; s < rp->nstages; s++) {
        const int64_t *from = rp->chunks[s], *to = rp->chunks[s + 1];
        bool inter = s < rp->nstages - 1, bigger = false;
        if (copy_projection(r, from, to, to, inter) > limit) return INFINITY;
        int64_t cb[ZC_MAX_DIMS];
        rechunk_copy_block(r->ndim, r->shape, from, to, cb);
        for (int d = 0; d < r->ndim; d++) bigger |= cb[d] > to[d];
        size_t gm = bigger ? copy_projection(r, from, to, cb, inter) : 0;
        bool grouped = bigger && gm <= limit;
        *ungrouped |= bigger && !grouped && gm / 4 <= limit; /* within reach of smaller chunks */
        cost += rechunk_copy_cost(r->ndim, r->shape, from, to, r->itemsize, grouped);
    }
    for (int s = 1; s < rp->nstages; s++) cost *= 1.5;
    return cost;
}

#define BUDGET_TRIES 12 /* down to 0.8^11: 9% of the bound */
#define BUDGET_MORE 3   /* chains tried from the first that fits on: each costs a rechunk search
                        * (a four-step FFT of 2^40 refused under 64MB: 4.9 s of planning; 13.5 s
                        * with every budget tried, 2.6 s before the search). PLAN_QUICK: 1 */

/* Replace a rechunk that does not fit in one copy by a chain of copies (unless a
 * single-pass sliced copy costs less: then the stage loop makes it one). */
static int expand_rechunk(zc_array *r, size_t limit, int64_t threads, unsigned flags, rechunk_memo *memo)
{
    zc_array *in = r->inputs[0];
    bool same = true;
    for (int d = 0; d < r->ndim; d++) same &= in->chunks[d] == r->chunks[d];
    if (same || in->kind == NODE_RECHUNK) return 0;
    /* the planner's model is simpler than the engine's: its budget is shrunk, and
     * of the chains every copy of which fits the engine's projection, the one
     * the engine runs cheapest is kept (a smaller budget may make chunks small
     * enough for the copies to be grouped) */
    rechunk_plan rp, best;
    int rc = 0;
    size_t budget = limit, smem;
    int64_t sblock[ZC_MAX_DIMS];
    double scost = INFINITY, mcost = INFINITY;
    if (!slice_option(r, limit, threads, sblock, &smem, &scost)) scost = INFINITY;
    int more = flags & PLAN_QUICK ? 1 : BUDGET_MORE;
    for (int tries = 0; tries < BUDGET_TRIES && more > 0; tries++, budget = budget / 5 * 4) {
        if ((rc = rechunk_plan_make_in(memo, r->ndim, r->shape, in->chunks, r->chunks, r->itemsize, budget, &rp)) <
            0) {
            if (tries == 0 && scost == INFINITY) return rc;
            zc__err_clear();
            break;
        }
        bool ungrouped;
        double c = chain_cost(r, &rp, limit, &ungrouped);
        if (c < mcost) {
            mcost = c;
            best = rp;
        }
        if (c < INFINITY && !ungrouped) break; /* every copy that can be grouped is */
        if (mcost < INFINITY) more--;
    }
    if (mcost == INFINITY) {
        if (scost < INFINITY) return 0; /* only the sliced copy fits */
        return zc__err(ZC_EMEMBOUND, "rechunk to the requested chunks does not fit in %.1f MB per task: "
                       "raise allowed_mem or choose larger source/target chunks", (double)limit / 1e6);
    }
    rp = best;
    if (rp.nstages > 1 && scost < mcost) return 0;
    zc_array *cur = in;
    zc_array_retain(cur);
    for (int s = 1; s < rp.nstages; s++) {
        zc_array *next;
        rc = node_rechunk(cur, rp.chunks[s], &next);
        zc_array_release(cur);
        if (rc < 0) return rc;
        cur = next;
    }
    r->inputs[0] = cur; /* takes the reference */
    zc_array_release(in);
    return 0;
}

/* ---- memory projection (bytes a task allocates, not counting the output buffer) ---- */

static size_t proj(const zc_array *a, const zc_range *sel);

/* a + b + c + d + e, SIZE_MAX if it overflows (a projection that does is too big) */
static size_t sum5(size_t a, size_t b, size_t c, size_t d, size_t e)
{
    return ck_sat_add(ck_sat_add(ck_sat_add(a, b), ck_sat_add(c, d)), e);
}

/* Projected bytes of one copy task from chunks `from` to `to` writing `block`
 * (a block of `to` chunks; `to` itself: one chunk) in the engine's model: the
 * block, one chunk's write (as an intermediate's, or as a's) and the source
 * read. */
static size_t copy_projection(const zc_array *a, const int64_t *from, const int64_t *to, const int64_t *block,
                              bool intermediate)
{
    zc_range sel[ZC_MAX_DIMS];
    size_t out = a->itemsize, n = 1;
    for (int d = 0; d < a->ndim; d++) {
        int64_t e = block[d] < a->shape[d] ? block[d] : a->shape[d];
        sel[d] = (zc_range){0, e, 1};
        out *= (size_t)e;
        n *= (size_t)ck_ceildiv(e, to[d]);
    }
    size_t kept = intermediate ? 0 : plan_write_kept(a, out, n);
    return sum5(out, plan_write_extra(a, to, block, intermediate), kept, TASK_BOOKKEEPING,
                node_proj_read_tiled(a, from, sel));
}

/* Bytes to compute a region of a from its inputs (a's own materialization aside:
 * the stage that fills a computes it). */
static size_t proj_compute(const zc_array *a, const zc_range *sel) { return kind_of(a)->proj(a, sel, proj); }

static size_t proj(const zc_array *a, const zc_range *sel)
{
    return a->stage >= 0 ? node_proj_read(a, a->chunks, sel) : proj_compute(a, sel);
}

/* The chunks a is read in when it is stored (a zarr source, as plan/source.c
 * projects it, or a stage's intermediate); NULL: computed where it is read. */
static const int64_t *stored_chunks(const zc_array *a)
{
    if (a->kind == NODE_ZARR && a->p.zarr.z) return a->p.zarr.z->rchunk;
    return a->stage >= 0 ? a->chunks : NULL;
}

/* The same, each read at its true alignment: sel is the very region one task
 * computes. Below a kind that projects a representative block (a reduction's
 * first input block, say) the worst alignment holds again. */
static size_t proj_exact(const zc_array *a, const zc_range *sel)
{
    const int64_t *c = stored_chunks(a);
    if (c) return node_proj_read_exact(a, c, sel);
    return kind_of(a)->proj(a, sel, kind_has(a, KIND_PROJ_EXACT) ? proj_exact : proj);
}

/* Bytes a task of stage a needs to compute its block sel (a tile of a's grid
 * of blocks; exact: that very block): a copy reads the block straight from
 * its stored input. */
static size_t proj_block(const zc_array *a, const zc_range *sel, bool exact)
{
    const zc_array *in = a->inputs[0];
    const int64_t *from = a->kind == NODE_RECHUNK ? stored_chunks(in) : NULL;
    if (from) return exact ? node_proj_read_exact(in, from, sel) : node_proj_read_tiled(in, from, sel);
    return exact ? kind_of(a)->proj(a, sel, proj_exact) : proj_compute(a, sel);
}

/* Stages of at most this many blocks, of kinds that project regions as they
 * are (KIND_PROJ_EXACT), are projected block by block, each read at its true
 * alignment; others by block 0 at the worst alignment. */
#define EXACT_BLOCKS 4096

/* The largest block's projection: the maximum over the blocks, or block 0's
 * at the worst alignment (edge blocks are never larger than block 0). */
static size_t stage_projection(const zc_array *a)
{
    int64_t c[ZC_MAX_DIMS] = {0}, n = node_nblocks(a);
    zc_range sel[ZC_MAX_DIMS];
    size_t read = 0;
    if (n > EXACT_BLOCKS || !kind_has(a, KIND_PROJ_EXACT)) {
        n = 0;
        node_block_region(a, c, sel);
        read = proj_block(a, sel, false);
    }
    for (int64_t b = 0; b < n; b++) {
        node_block_coords(a, b, c);
        node_block_region(a, c, sel);
        size_t r = proj_block(a, sel, true);
        if (r > read) read = r;
    }
    size_t out = node_chunk_bytes(a);
    /* the block and its write, plus the task's bookkeeping: selection plans,
     * chunk keys and request arrays of a batched read (independent of data size) */
    return sum5(out, plan_write_extra(a, a->chunks, a->chunks, false), plan_write_kept(a, out, 1), TASK_BOOKKEEPING,
                read);
}

/* One task writing `block` (a block of a's chunks; NULL: one chunk): it holds the
 * block, one chunk's write at a time and what computing the block needs. */
static size_t block_projection(const zc_array *a, const int64_t *block)
{
    if (!block) return stage_projection(a);
    zc_range sel[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) sel[d] = (zc_range){0, block[d] < a->shape[d] ? block[d] : a->shape[d], 1};
    size_t region = node_region_bytes(a, sel), n = 1;
    for (int d = 0; d < a->ndim; d++) n *= (size_t)ck_ceildiv(sel[d].stop, a->chunks[d]);
    return sum5(region, plan_write_extra(a, a->chunks, block, false), plan_write_kept(a, region, n),
                TASK_BOOKKEEPING, proj_block(a, sel, false));
}

/* A stage whose tasks each write a block of chunks: tasks and projection. */
static void set_block(plan *p, plan_stage *s, const int64_t *block, size_t mem)
{
    zc_array *a = s->node;
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++) n *= ck_ceildiv(a->shape[d], block[d]);
    memcpy(s->copy, block, sizeof(int64_t) * (size_t)a->ndim);
    p->tasks += n - s->tasks;
    s->tasks = n;
    s->projected = mem;
}

/* A copy stage (rechunk) whose tasks each write a block of output chunks covering
 * whole source chunks, when that fits: each source chunk is then decoded once
 * instead of once per output chunk it feeds. The task holds the block, one output
 * chunk's write at a time and the read of the block's region. */
static void group_copy(plan *p, plan_stage *s)
{
    zc_array *a = s->node, *in = a->inputs[0];
    if (a->kind != NODE_RECHUNK || !(in->kind == NODE_ZARR || in->stage >= 0)) return;
    int64_t cb[ZC_MAX_DIMS];
    rechunk_copy_block(a->ndim, a->shape, in->chunks, a->chunks, cb);
    bool bigger = false;
    for (int d = 0; d < a->ndim; d++) bigger |= cb[d] > a->chunks[d];
    if (!bigger) return;
    size_t mem = block_projection(a, cb);
    if (mem <= p->limit) set_block(p, s, cb, mem);
}

/* A copy stage straight from a stored source run as a single-pass sliced copy
 * (slice_option) when that costs less than the copy as planned so far (grouped,
 * one output chunk per task, or not fitting at all). */
static void slice_copy(plan *p, plan_stage *s, int64_t threads)
{
    zc_array *a = s->node, *in = a->inputs[0];
    int64_t block[ZC_MAX_DIMS];
    size_t mem;
    double cost, now = INFINITY;
    if (!slice_option(a, p->limit, threads, block, &mem, &cost)) return;
    if (s->projected <= p->limit)
        now = rechunk_copy_cost(a->ndim, a->shape, in->chunks, a->chunks, a->itemsize, s->copy[0] > 0);
    if (cost >= now) return;
    set_block(p, s, block, mem);
}

/* ---- grouped first rounds of reductions (plan_stage.group) ---- */

#define GROUP_MAX 16
/* a group of one is run when it needs no more than the stage alone, give or
 * take 1/GROUP_SLACK of it: tiles (and streams) instead of a block-sized
 * temporary are worth a stream's state against small chunks (0.4-3% measured
 * on 512 KB chunks: blosc's two blocks, zstd's window) */
#define GROUP_SLACK 16
#define GROUP_TILE ((size_t)256 << 10) /* the run's tile of a fused input (exec/run.c) */

/* What a first reduction round reads per input block: the distinct leaves of its
 * fused elementwise input, or the input itself. */
static int round_leaves(const zc_array *a, const zc_array **lv)
{
    const zc_array *in = a->inputs[0];
    if (in->kind == NODE_EW && in->stage < 0) return ew_node_leaves(in, lv, 0);
    lv[0] = in;
    return 1;
}

/* A first round whose reads are all of sources or of stages before `leader`. */
static bool groupable(const plan *p, int k, int leader)
{
    const zc_array *a = p->stages[k].node, *lv[64];
    if (a->kind != NODE_REDUCE || !(a->p.reduce.flags & ROUND_FIRST)) return false;
    int n = round_leaves(a, lv);
    if (n >= 64) return false;
    for (int i = 0; i < n; i++)
        if (!is_source(lv[i]) && !(lv[i]->stage >= 0 && lv[i]->stage < leader)) return false;
    return true;
}

/* Same input blocks, same tasks. */
bool plan_same_grid(const zc_array *a, const zc_array *b)
{
    const zc_array *x = a->inputs[0], *y = b->inputs[0];
    if (x->ndim != y->ndim || a->p.reduce.axes != b->p.reduce.axes || a->p.reduce.flags != b->p.reduce.flags ||
        node_nblocks(a) != node_nblocks(b))
        return false;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != y->shape[d] || x->chunks[d] != y->chunks[d] || a->p.reduce.split[d] != b->p.reduce.split[d])
            return false;
    return true;
}

bool plan_stream_leaf(const zc_array *in, const zc_array *l, const char **why)
{
    *why = NULL;
    if (l->kind != NODE_ZARR || !l->p.zarr.z) return false;
    const zc_zarr *z = l->p.zarr.z;
    bool same = l->ndim == in->ndim;
    for (int d = 0; d < l->ndim && same; d++)
        same = l->shape[d] == in->shape[d] && l->chunks[d] == in->chunks[d] && z->rchunk[d] == in->chunks[d];
    if (!same) {
        *why = "broadcast or chunks other than the blocks";
        return false;
    }
    return zarr_streams(z, why);
}

size_t plan_stream_tile(const zc_array *in)
{
    size_t isz = in->itemsize;
    for (int i = 0; i < in->ninputs; i++)
        if (in->inputs[i]->itemsize > isz) isz = in->inputs[i]->itemsize;
    if (in->kind == NODE_EW && in->stage < 0) { /* the leaves' items may be wider than the fused result's */
        const zc_array *lv[64];
        int k = ew_node_leaves(in, lv, 0);
        for (int i = 0; i < k; i++)
            if (lv[i]->itemsize > isz) isz = lv[i]->itemsize;
    }
    size_t n = GROUP_TILE / (isz ? isz : 1), block = 1;
    for (int d = 0; d < in->ndim; d++) block *= (size_t)in->chunks[d];
    if (block < n) n = block;
    return n ? n : 1;
}

/* Whether a group task streams some leaf (then every member's tile is a
 * streamed tile: plan_stream_tile). */
static bool group_streams(const plan *p, const int *m, int n)
{
    const zc_array *lv[64];
    for (int i = 0; i < n; i++) {
        const zc_array *a = p->stages[m[i]].node;
        int k = round_leaves(a, lv);
        for (int j = 0; j < k; j++) {
            const char *why;
            if (plan_stream_leaf(a->inputs[0], lv[j], &why)) return true;
        }
    }
    return false;
}

/* One group task holds: every member's output block (and accumulators apart in a
 * last round), a tile per member, each distinct leaf's block, the scratch of one
 * read at a time, and the writes, one after another. A streamed leaf holds its
 * stream (the stored chunk, a block or window: zarr_stream_mem) and a tile (and
 * one more to skip what an edge block leaves out) instead of its block; when a
 * leaf streams, the leaves are closed before the writes begin, so the reads and
 * the writes are not held at once. */
static size_t group_projection(const plan *p, const int *m, int n, int *shared)
{
    const zc_array *lv[64], *all[64];
    const zc_array *root[64];
    int nall = 0;
    size_t outs = 0, write = 0, kept = 0, acc = 0, leaves = 0, scratch = 0;
    *shared = 0;
    for (int i = 0; i < n; i++) {
        const zc_array *a = p->stages[m[i]].node, *in = a->inputs[0];
        size_t out = node_chunk_bytes(a);
        outs = ck_sat_add(outs, ck_sat_add(out, group_streams(p, m, n) ? ck_sat_mul(plan_stream_tile(in), in->itemsize)
                                                                       : GROUP_TILE));
        size_t w = plan_write_extra(a, a->chunks, NULL, false); /* one write at a time; a memory store keeps each */
        if (w > write) write = w;
        kept = ck_sat_add(kept, plan_write_kept(a, out, 1));
        if (a->p.reduce.flags & ROUND_LAST) {
            size_t nacc = 1;
            for (int d = 0; d < in->ndim; d++)
                if (!((a->p.reduce.axes >> d) & 1)) nacc *= (size_t)in->chunks[d];
            acc = ck_sat_add(acc, ck_sat_mul(nacc, red_acc_size(a->p.reduce.op, a->p.reduce.in_dtype)));
        }
        int k = round_leaves(a, lv);
        for (int j = 0; j < k; j++) {
            bool seen = false;
            for (int q = 0; q < nall && !seen; q++) seen = all[q] == lv[j];
            if (seen) ++*shared;
            else if (nall < 64) {
                root[nall] = in;
                all[nall++] = lv[j];
            }
        }
    }
    bool streamed = false;
    for (int q = 0; q < nall; q++) {
        const char *why;
        if (plan_stream_leaf(root[q], all[q], &why)) {
            streamed = true;
            leaves = ck_sat_add(leaves, ck_sat_add(zarr_stream_mem(all[q]->p.zarr.z),
                                                   ck_sat_mul(2 * plan_stream_tile(root[q]), all[q]->itemsize)));
            continue;
        }
        int64_t c0[ZC_MAX_DIMS] = {0};
        zc_range sel[ZC_MAX_DIMS], ls[ZC_MAX_DIMS];
        node_block_region(root[q], c0, sel);
        node_leaf_sel(root[q], all[q], sel, ls, NULL);
        leaves = ck_sat_add(leaves, node_region_bytes(all[q], ls));
        size_t s = proj(all[q], ls);
        if (s > scratch) scratch = s;
    }
    size_t reads = ck_sat_add(leaves, scratch);
    if (streamed) return sum5(TASK_BOOKKEEPING, outs, kept, acc, reads > write ? reads : write);
    return sum5(TASK_BOOKKEEPING, outs, kept, acc, ck_sat_add(write, reads));
}

/* plan_stage.stream of a group's leader: whether its stored sources stream. */
static void stream_note(plan *p, const int *m, int n)
{
    const zc_array *lv[64];
    plan_stage *s = &p->stages[m[0]];
    bool any = false;
    const char *not = NULL;
    for (int i = 0; i < n; i++) {
        const zc_array *in = p->stages[m[i]].node->inputs[0];
        int k = round_leaves(p->stages[m[i]].node, lv);
        for (int j = 0; j < k; j++) {
            const char *why;
            if (plan_stream_leaf(in, lv[j], &why)) any = true;
            else if (why && !not) not = why;
        }
    }
    if (not) snprintf(s->stream, sizeof s->stream, "%swhole chunks: %s", any ? "streamed, some " : "", not);
    else if (any) snprintf(s->stream, sizeof s->stream, "streamed");
}

/* Group first rounds that share a read (greedily, within the memory limit). */
static void group_reductions(plan *p)
{
    for (int k = 0; k < p->nstages; k++) p->stages[k].group = -1;
    for (int k = 0; k < p->nstages; k++) {
        if (p->stages[k].group >= 0 || !groupable(p, k, k)) continue;
        int m[GROUP_MAX] = {k}, n = 1, shared = 0;
        for (bool grew = true; grew && n < GROUP_MAX;) {
            grew = false;
            for (int j = k + 1; j < p->nstages && n < GROUP_MAX; j++) {
                bool in = false;
                for (int i = 0; i < n && !in; i++) in = m[i] == j;
                if (in || p->stages[j].group >= 0 || !plan_same_grid(p->stages[k].node, p->stages[j].node) ||
                    !groupable(p, j, k))
                    continue;
                m[n] = j;
                int before, now;
                group_projection(p, m, n, &before);
                if (group_projection(p, m, n + 1, &now) > p->limit || now == before) continue; /* no shared read */
                n++;
                grew = true;
            }
        }
        /* alone, a first round over a fused input still gains: tiles instead of a
         * block-sized temporary; and so does one streaming its input */
        const zc_array *in = p->stages[k].node->inputs[0];
        const char *why;
        if (n == 1 && !(in->kind == NODE_EW && in->stage < 0) && !plan_stream_leaf(in, in, &why)) continue;
        size_t gp = group_projection(p, m, n, &shared);
        if (n == 1 && gp > p->stages[k].projected + p->stages[k].projected / GROUP_SLACK) continue; /* never worse */
        for (int i = 0; i < n; i++) {
            p->stages[m[i]].group = k;
            p->stages[m[i]].projected = gp; /* the task that computes it */
        }
        stream_note(p, m, n);
    }
}

static void describe_fused(const zc_array *n, char *buf, size_t size, bool top)
{
    if (!kind_has(n, KIND_FUSED) && !(top && kind_has(n, KIND_STORED))) return;
    if (!top && n->stage >= 0) return;
    size_t k = strlen(buf);
    if (k + 24 < size) snprintf(buf + k, size - k, "%s%s", k ? "+" : "", kind_name(n));
    for (int i = 0; i < n->ninputs; i++) describe_fused(n->inputs[i], buf, size, false);
}

/* What of l is materialized (a new array of l->n flags; NULL: no memory):
 * stored kinds, fused kinds read by several (l->consumers counted here), and
 * the inputs of kinds that read stored inputs, unless they are sources. */
static bool *materialized(node_list *l)
{
    bool *mat = zc__calloc((size_t)l->n + 1, sizeof(bool));
    if (!mat) return NULL;
    for (int i = 0; i < l->n; i++) l->consumers[i] = 0;
    for (int i = 0; i < l->n; i++)
        for (int k = 0; k < l->v[i]->ninputs; k++) {
            int j = find(l, l->v[i]->inputs[k]);
            bool dup = false;
            for (int m = 0; m < k; m++) dup |= l->v[i]->inputs[m] == l->v[i]->inputs[k];
            if (j >= 0 && !dup) l->consumers[j]++;
        }
    for (int i = 0; i < l->n; i++) {
        zc_array *a = l->v[i];
        if (kind_has(a, KIND_STORED) || (kind_has(a, KIND_FUSED) && l->consumers[i] > 1)) mat[i] = true;
        for (int k = 0; k < a->ninputs; k++)
            if (kind_has(a, KIND_STORED_INPUT) && !is_source(a->inputs[k])) mat[find(l, a->inputs[k])] = true;
    }
    return mat;
}

/* What one task of stage k leaves in a memory store that keeps the
 * intermediates: the intermediate chunks it writes (a group's members' too). */
static size_t kept_by(const plan *p, int k)
{
    size_t sum = 0;
    for (int m = 0; m < p->nstages; m++) {
        const plan_stage *s = &p->stages[m];
        if (s->target >= 0 || !(m == k || s->group == k)) continue;
        const zc_array *a = s->node;
        size_t bytes = node_chunk_bytes(a), n = 1;
        if (s->copy[0] > 0) {
            bytes = a->itemsize;
            for (int d = 0; d < a->ndim; d++) {
                int64_t e = s->copy[d] < a->shape[d] ? s->copy[d] : a->shape[d];
                bytes *= (size_t)e;
                n *= (size_t)ck_ceildiv(e, a->chunks[d]);
            }
        }
        sum = ck_sat_add(sum, plan_kept(bytes, n));
    }
    return sum;
}

/* Small intermediates (against reserved_mem, or cache_mem) may be kept in a
 * memory store (exec/run.c decides with what the source cache leaves): the
 * plan allows it only when every stage still fits with the chunks its tasks
 * leave there, and then counts them in its projection. */
static void work_in_memory(plan *p, const zc_spec *spec)
{
    size_t ib = (size_t)p->intermediate_bytes;
    if (!ib || (ib > plan_work_reserve(spec) && ib > spec->cache_mem)) return;
    for (int k = 0; k < p->nstages; k++) {
        const plan_stage *s = &p->stages[k];
        if ((s->group < 0 || s->group == k) && s->projected + kept_by(p, k) > p->limit) return;
    }
    for (int k = 0; k < p->nstages; k++)
        if (p->stages[k].group < 0 || p->stages[k].group == k) p->stages[k].projected += kept_by(p, k);
    p->work_in_memory = true;
}

/* fuse_fft: let an FFT read through the last copy of a multistage rechunk;
 * *fused says whether it did. */
static int build(const zc_spec *spec, int n, zc_array *const *arrays, const plan_write *writes, unsigned flags,
                 rechunk_memo *memo, plan *p, bool fuse_fft, bool *fused)
{
    memset(p, 0, sizeof *p);
    *fused = false;
    p->limit = spec->allowed_mem > spec->reserved_mem ? spec->allowed_mem - spec->reserved_mem : 0;
    node_list l = {0};
    int rc = 0;
    p->outputs = zc__calloc((size_t)n, sizeof(zc_array *));
    if (!p->outputs) return ZC_ENOMEM;
    p->noutputs = n;
    /* the plan works on its own copy of the graph: the caller's nodes are never
     * changed (expanded rechunks, fitted steps, materializations are the copy's) */
    node_list from = {0}, to = {0};
    for (int i = 0; i < n && rc == 0; i++) {
        zc_array *o = arrays[i];
        if (!o) {
            rc = zc__err(ZC_EINVAL, "array %d to compute is NULL", i);
            break;
        }
        if ((rc = clone_graph(&from, &to, o, &o)) < 0) break;
        /* an output that is stored already (a source) is written through a copy */
        if (kind_has(o, KIND_NO_STAGE)) {
            rc = node_rechunk(o, o->chunks, &p->outputs[i]);
            zc_array_release(o);
        } else
            p->outputs[i] = o;
        if (writes && p->outputs[i]) { /* an array given twice is written the costlier way */
            zc_array *out = p->outputs[i];
            out->write_in_block = (!out->write_copies || out->write_in_block) && writes[i].in_block;
            if (writes[i].copies > out->write_copies) out->write_copies = writes[i].copies;
            out->write_kept |= writes[i].kept;
        }
    }
    for (int i = 0; i < to.n; i++) zc_array_release(to.v[i]);
    zc__free(from.v);
    zc__free(from.consumers);
    zc__free(to.v);
    zc__free(to.consumers);
    for (int i = 0; i < n && rc == 0; i++) rc = collect(&l, p->outputs[i]);
    /* kinds fitted to the bound: a transform becomes its algorithm (an FFT's lines
     * in one task, or four-step), a sort too long for a task its runs and merge;
     * projecting their inputs as they will be read: the nodes that will be
     * materialized are marked (stage 0) while they fit */
    bool *marks = NULL;
    if (rc == 0 && !(marks = materialized(&l))) rc = ZC_ENOMEM;
    for (int i = 0; i < l.n && marks; i++)
        if (marks[i]) l.v[i]->stage = 0;
    /* held while expanding: an expansion may drop another node of the list
     * (a TSQR Q request lets go of its R request once it has its factors) */
    for (int i = 0; i < l.n; i++) zc_array_retain(l.v[i]);
    for (int i = 0; i < l.n && rc == 0; i++)
        if (kind_of(l.v[i])->expand) rc = kind_of(l.v[i])->expand(l.v[i], p->limit, block_projection);
    for (int i = 0; i < l.n; i++) {
        l.v[i]->stage = -1;
        zc_array_release(l.v[i]);
    }
    zc__free(marks);
    l.n = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = collect(&l, p->outputs[i]);
    /* multistage rechunks (those the expansions made among them), then collect again */
    /* sliced copies size their blocks for this many threads (rechunk_slice_choose) */
    int64_t threads = spec->nthreads > 0 ? spec->nthreads : (pool_default() ? pool_size(pool_default()) : 1);
    p->threads = threads;
    for (int i = 0; i < l.n && rc == 0; i++)
        if (l.v[i]->kind == NODE_RECHUNK) rc = expand_rechunk(l.v[i], p->limit, threads, flags, memo);
    bool *mat = NULL;
    l.n = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = collect(&l, p->outputs[i]);
    if (rc < 0) goto out;
    /* what is materialized */
    if (!(mat = materialized(&l))) { rc = ZC_ENOMEM; goto out; }
    /* the last copy of a multistage rechunk read only by an FFT is not written:
     * the FFT's tasks read their lines straight from the copy before (a write and
     * a read of the whole array less: rfft along time of the FFT benchmark,
     * 13.6 -> 10.1 s CPU; the memory check counts that read) */
    for (int i = 0; i < l.n && fuse_fft; i++) {
        zc_array *a = l.v[i];
        if (a->kind != NODE_RECHUNK || l.consumers[i] != 1 || a->inputs[0]->kind != NODE_RECHUNK) continue;
        for (int j = 0; j < l.n; j++)
            if (l.v[j]->kind == NODE_FFT && l.v[j]->inputs[0] == a) mat[i] = false;
        *fused |= !mat[i];
    }
    for (int i = 0; i < n; i++) mat[find(&l, p->outputs[i])] = true;
    int nst = 0;
    for (int i = 0; i < l.n; i++) nst += mat[i];
    p->stages = zc__calloc((size_t)nst + 1, sizeof(plan_stage));
    if (!p->stages) { zc__free(mat); rc = ZC_ENOMEM; goto out; }
    for (int i = 0; i < l.n; i++) {
        if (!mat[i]) continue;
        plan_stage *s = &p->stages[p->nstages];
        s->node = l.v[i];
        zc_array_retain(s->node);
        s->node->stage = p->nstages;
        s->target = -1;
        for (int t = 0; t < n; t++)
            if (p->outputs[t] == s->node && s->target < 0) s->target = t;
        s->node->stored_plain = s->target < 0 && plan_stores_uncompressed(s->node);
        s->tasks = node_nblocks(s->node);
        p->tasks += s->tasks;
        p->nstages++;
    }
    zc__free(mat);
    /* names, fusion and projections (stage flags are all set now) */
    for (int k = 0; k < p->nstages; k++) {
        plan_stage *s = &p->stages[k];
        zc_array *a = s->node;
        const char *note = kind_of(a)->stage_note ? kind_of(a)->stage_note(a) : "";
        snprintf(s->name, sizeof s->name, "op%d %s%s", k, kind_name(a), note);
        describe_fused(a, s->fused, sizeof s->fused, true);
        if (kind_of(a)->fit) kind_of(a)->fit(a, p->limit, stage_projection);
        s->projected = stage_projection(a);
        int64_t tb[ZC_MAX_DIMS];
        if (kind_of(a)->task_block && kind_of(a)->task_block(a, tb)) set_block(p, s, tb, block_projection(a, tb));
        if (s->projected <= p->limit) group_copy(p, s);
        if (a->kind == NODE_RECHUNK) slice_copy(p, s, threads);
        if (s->target < 0) p->intermediate_bytes += (int64_t)(node_chunk_bytes(a) * (size_t)node_nblocks(a)); /* tasks may be groups */
    }
    /* a grouped reduction runs in its group's tasks: the group's projection is what counts */
    group_reductions(p);
    work_in_memory(p, spec);
    for (int k = 0; k < p->nstages; k++) {
        plan_stage *s = &p->stages[k];
        zc_array *a = s->node;
        if (s->projected > p->limit) {
            rc = zc__err_mem(s->projected, p->limit,
                         "%s [%s] needs %.1f MB per task, more than the %.1f MB allowed (allowed_mem %.1f MB - "
                         "reserved %.1f MB): use smaller chunks (block %.1f MB now) or raise allowed_mem",
                         s->name, s->fused, (double)s->projected / 1e6, (double)p->limit / 1e6,
                         (double)spec->allowed_mem / 1e6, (double)spec->reserved_mem / 1e6,
                         (double)node_chunk_bytes(a) / 1e6);
            goto out;
        }
    }
out:
    zc__free(l.v);
    zc__free(l.consumers);
    if (rc < 0) plan_free(p);
    return rc;
}

int plan_build(const zc_spec *spec, int n, zc_array *const *arrays, const plan_write *writes, unsigned flags,
               rechunk_memo *memo, plan *p)
{
    /* reading through the fused copy may not fit a task where the copy's
     * blocks did: then the plan is made again with the copy written */
    bool fused;
    int rc = build(spec, n, arrays, writes, flags, memo, p, true, &fused);
    if (rc == ZC_EMEMBOUND && fused) {
        zc__err_clear();
        rc = build(spec, n, arrays, writes, flags, memo, p, false, &fused);
    }
    return rc;
}

void plan_free(plan *p)
{
    for (int k = 0; k < p->nstages; k++) {
        p->stages[k].node->stage = -1;
        zc_array_release(p->stages[k].node);
    }
    for (int i = 0; i < p->noutputs; i++) zc_array_release(p->outputs[i]);
    zc__free(p->stages);
    zc__free(p->outputs);
    memset(p, 0, sizeof *p);
}

char *plan_to_json(const plan *p, bool ran, double seconds)
{
    json_t *ops = json_array();
    size_t peak = 0;
    for (int k = 0; k < p->nstages; k++) {
        const plan_stage *s = &p->stages[k];
        const zc_array *a = s->node;
        json_t *shape = json_array(), *chunks = json_array(), *inputs = json_array();
        for (int d = 0; d < a->ndim; d++) {
            json_array_append_new(shape, json_integer(a->shape[d]));
            json_array_append_new(chunks, json_integer(a->chunks[d]));
        }
        json_t *o = json_pack("{s:i, s:s, s:s, s:o, s:o, s:s, s:I, s:I, s:s, s:b}", "op", k, "name", s->name, "kind",
                              kind_name(a), "shape", shape, "chunks", chunks, "dtype",
                              a->dtype == ZC_RAW ? "accumulator" : zc_dtype_name(a->dtype), "tasks",
                              (json_int_t)s->tasks, "projected_mem", (json_int_t)s->projected, "fused", s->fused,
                              "output", s->target >= 0);
        for (int i = 0; i < a->ninputs; i++) {
            /* the stage that feeds this one through fused nodes is found by walking down */
            const zc_array *in = a->inputs[i];
            while (in->stage < 0 && in->ninputs == 1) in = in->inputs[0];
            if (in->stage >= 0) json_array_append_new(inputs, json_integer(in->stage));
        }
        json_object_set_new(o, "inputs", inputs);
        if (s->group >= 0) json_object_set_new(o, "group", json_integer(s->group)); /* run by that stage's tasks */
        if (s->stream[0]) json_object_set_new(o, "stream", json_string(s->stream));
        if (s->copy[0] > 0) {
            json_t *cb = json_array();
            for (int d = 0; d < a->ndim; d++) json_array_append_new(cb, json_integer(s->copy[d]));
            json_object_set_new(o, "copy_block", cb); /* what one task writes */
        }
        if (ran) {
            json_object_set_new(o, "seconds", json_real(s->seconds));
            json_object_set_new(o, "measured_mem", json_integer((json_int_t)s->measured));
            json_object_set_new(o, "skipped", json_integer(s->skipped));
            if (s->measured > peak) peak = s->measured;
        }
        json_array_append_new(ops, o);
    }
    json_t *doc = json_pack("{s:o, s:I, s:I, s:I}", "operations", ops, "tasks", (json_int_t)p->tasks,
                            "intermediate_bytes", (json_int_t)p->intermediate_bytes, "memory_limit",
                            (json_int_t)p->limit);
    if (ran) {
        json_object_set_new(doc, "seconds", json_real(seconds));
        json_object_set_new(doc, "peak_task_mem", json_integer((json_int_t)peak));
    }
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
    json_decref(doc);
    return text;
}
