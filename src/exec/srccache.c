/* exec/srccache.c — decoded source chunks kept for the stages of one
 * computation (see srccache.h). One entry per cached source: an arena of one
 * slot per read chunk (full chunk size, the edge chunks clipped inside it) and
 * a state per chunk (EMPTY → FILLING → READY, back to EMPTY if the fill
 * failed). The arena is one allocation made before the stages run, on the
 * calling thread: tasks allocate nothing for the cache, so their measured
 * memory is what they compute with. */
#include "exec/srccache.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/copy.h"
#include "zarr/read.h"
#include "zarr/zarr.h"

enum { EMPTY, FILLING, READY };

struct srccache_entry {
    node_cache base;          /* the callbacks plan/ reads through (first: a->cache points here) */
    zc_array *a;              /* the source */
    unsigned char *arena;     /* nchunks × slot bytes */
    size_t slot;              /* bytes of one full read chunk */
    int64_t nchunks;
    _Atomic unsigned char *state;
    _Atomic int64_t hits, misses;
};

static int cached_read(node_cache *nc, zc_array *a, const zc_range *sel, void *out);
static bool cached_view(node_cache *nc, zc_array *a, const zc_range *sel, const void **data);

struct srccache {
    struct srccache_entry *e;
    int n;
    size_t bytes;
};

/* ---- choosing the sources ---- */

typedef struct {
    zc_array *a;
    int stages, last; /* stages reading it, the last one counted */
} use;

typedef struct {
    use *u;
    int n, cap;
} uses;

static int note(uses *us, zc_array *a, int k)
{
    for (int i = 0; i < us->n; i++)
        if (us->u[i].a == a) {
            if (us->u[i].last != k) us->u[i].stages++, us->u[i].last = k;
            return 0;
        }
    if (us->n == us->cap) {
        int cap = us->cap ? 2 * us->cap : 16;
        use *nu = zc__realloc(us->u, (size_t)cap * sizeof *nu);
        if (!nu) return ZC_ENOMEM;
        us->u = nu;
        us->cap = cap;
    }
    us->u[us->n++] = (use){a, 1, k};
    return 0;
}

/* Sources stage k reads: its node's inputs, through every node it computes
 * (not materialized by another stage). depth bounds pathological graphs. */
static int walk(uses *us, zc_array *a, int k, bool top, int depth)
{
    if (!top && a->stage >= 0) return 0;
    if (a->kind == NODE_ZARR) return note(us, a, k);
    if (depth > 256) return 0;
    for (int i = 0; i < a->ninputs; i++) ZC_TRY(walk(us, a->inputs[i], k, false, depth + 1));
    return 0;
}

static size_t source_bytes(const zc_array *a, int64_t *nchunks, size_t *slot)
{
    const zc_zarr *z = a->p.zarr.z;
    size_t s = a->itemsize, n = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (z->rchunk[d] < 1) return SIZE_MAX;
        if (ck_mul_sz(s, (size_t)z->rchunk[d], &s) || ck_mul_sz(n, (size_t)ck_ceildiv(a->shape[d], z->rchunk[d]), &n))
            return SIZE_MAX;
    }
    size_t total;
    if (ck_mul_sz(s, n, &total) || n > (size_t)INT64_MAX) return SIZE_MAX;
    *nchunks = (int64_t)n;
    *slot = s;
    return total;
}

int srccache_setup(plan *p, const zc_spec *spec, srccache **out)
{
    *out = NULL;
    if (spec->struct_size < offsetof(zc_spec, cache_mem) + sizeof spec->cache_mem || spec->cache_mem == 0 ||
        spec->resume)
        return 0;
    uses us = {0};
    int rc = 0;
    for (int k = 0; k < p->nstages && rc == 0; k++) {
        plan_stage *s = &p->stages[k];
        if (s->group >= 0 && s->group != k) continue; /* its leader's tasks read for it */
        rc = walk(&us, s->node, k, true, 0);
        for (int j = k + 1; j < p->nstages && rc == 0; j++) /* a group's tasks read for all its members */
            if (p->stages[j].group == k) rc = walk(&us, p->stages[j].node, k, true, 0);
    }
    srccache *c = NULL;
    size_t left = spec->cache_mem;
    /* most-read first, then in plan order */
    for (int want = p->nstages; want >= 2 && rc == 0; want--)
        for (int i = 0; i < us.n && rc == 0; i++) {
            zc_array *a = us.u[i].a;
            int64_t nchunks = 0;
            size_t slot = 0, bytes = us.u[i].stages == want && !a->cache ? source_bytes(a, &nchunks, &slot) : SIZE_MAX;
            if (bytes > left || bytes == 0) continue;
            /* entries never move (sources point at theirs): room for every candidate at once */
            if (!c && (!(c = zc__calloc(1, sizeof *c)) || !(c->e = zc__calloc((size_t)us.n, sizeof *c->e)))) {
                rc = ZC_ENOMEM;
                break;
            }
            struct srccache_entry *e = &c->e[c->n];
            memset(e, 0, sizeof *e);
            /* not advised MADV_HUGEPAGE (core/alloc.c fresh_block says why): the
             * randomized SVD benchmark took 0.58-1.56 s advised (system 0.14-1.98 s),
             * 0.61-0.70 s not (system 0.4 s) */
            e->arena = zc__malloc(bytes);
            e->state = zc__calloc((size_t)nchunks, 1);
            if (!e->arena || !e->state) {
                zc__free(e->arena);
                zc__free((void *)e->state);
                rc = ZC_ENOMEM;
                break;
            }
            e->a = a;
            e->slot = slot;
            e->nchunks = nchunks;
            e->base = (node_cache){cached_read, cached_view};
            a->cache = &e->base;
            c->n++;
            c->bytes += bytes;
            left -= bytes;
        }
    zc__free(us.u);
    if (rc < 0) {
        srccache_free(c);
        return zc__err_wrap(rc, "source cache (cache_mem %zu bytes)", spec->cache_mem);
    }
    *out = c;
    return 0;
}

void srccache_free(srccache *c)
{
    if (!c) return;
    for (int i = 0; i < c->n; i++) {
        c->e[i].a->cache = NULL;
        zc__free(c->e[i].arena);
        zc__free((void *)c->e[i].state);
    }
    zc__free(c->e);
    zc__free(c);
}

void srccache_stats(const srccache *c, size_t *bytes, int64_t *hits, int64_t *misses, int *arrays)
{
    *bytes = c ? c->bytes : 0;
    *hits = *misses = 0;
    *arrays = c ? c->n : 0;
    for (int i = 0; c && i < c->n; i++) {
        *hits += atomic_load(&c->e[i].hits);
        *misses += atomic_load(&c->e[i].misses);
    }
}

size_t srccache_bytes(const srccache *c) { return c ? c->bytes : 0; }

void srccache_annotate(const srccache *c, bool intermediates_in_memory, char **json)
{
    json_t *o = json_loads(*json, 0, NULL);
    if (!o) return;
    size_t bytes;
    int64_t hits, misses;
    int arrays;
    srccache_stats(c, &bytes, &hits, &misses, &arrays);
    json_t *sc = json_pack("{s:I, s:i, s:I, s:I, s:b}", "bytes", (json_int_t)bytes, "arrays", arrays, "hits",
                           (json_int_t)hits, "misses", (json_int_t)misses, "intermediates_in_memory",
                           intermediates_in_memory);
    char *t = sc && !json_object_set_new(o, "source_cache", sc) ? json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(o);
    if (!t) return;
    free(*json);
    *json = t;
}

/* ---- reading ---- */

/* Block box of chunk ic (clipped), its linear number. */
static int64_t chunk_box(const zc_array *a, const int64_t *ic, zc_range *box)
{
    const zc_zarr *z = a->p.zarr.z;
    int64_t id = 0;
    for (int d = 0; d < a->ndim; d++) {
        int64_t s = ic[d] * z->rchunk[d], e = s + z->rchunk[d];
        box[d] = (zc_range){s, e < a->shape[d] ? e : a->shape[d], 1};
        id = id * ck_ceildiv(a->shape[d], z->rchunk[d]) + ic[d];
    }
    return id;
}

/* The slot of chunk ic (its box in box), filled now if empty: NULL when another
 * task is filling it (the caller reads from storage), or on error (*rc < 0). */
static const unsigned char *chunk(zc_array *a, const int64_t *ic, zc_range *box, int *rc)
{
    struct srccache_entry *e = (struct srccache_entry *)a->cache;
    int64_t id = chunk_box(a, ic, box);
    unsigned char *slot = e->arena + (size_t)id * e->slot;
    *rc = 0;
    unsigned char st = atomic_load_explicit(&e->state[id], memory_order_acquire);
    if (st == READY) {
        atomic_fetch_add(&e->hits, 1);
        return slot;
    }
    unsigned char empty = EMPTY;
    if (st != EMPTY || !atomic_compare_exchange_strong(&e->state[id], &empty, FILLING)) return NULL;
    size_t n = a->itemsize;
    for (int d = 0; d < a->ndim; d++) n *= (size_t)(box[d].stop - box[d].start);
    /* big chunk files: decoded from a mapping, its pages dropped after (zarr/read.h) */
    *rc = zarr_read_flags(a->p.zarr.z, box, slot, n, ZARR_READ_DROP);
    atomic_store_explicit(&e->state[id], *rc < 0 ? EMPTY : READY, memory_order_release);
    if (*rc < 0) return NULL;
    atomic_fetch_add(&e->misses, 1);
    return slot;
}

static bool cached_view(node_cache *nc, zc_array *a, const zc_range *sel, const void **data)
{
    (void)nc;
    if (a->ndim < 1) return false;
    const zc_zarr *z = a->p.zarr.z;
    int64_t ic[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        ic[d] = sel[d].start / z->rchunk[d];
        int64_t e = (ic[d] + 1) * z->rchunk[d];
        if (sel[d].step != 1 || sel[d].start % z->rchunk[d] || sel[d].stop != (e < a->shape[d] ? e : a->shape[d]))
            return false;
    }
    int rc;
    zc_range box[ZC_MAX_DIMS];
    const unsigned char *p = chunk(a, ic, box, &rc);
    zc__err_clear(); /* a failed fill is reported by the read that follows */
    if (!p) return false;
    *data = p;
    return true;
}

/* Copy the part of chunk box cb (values at src) inside sel into out (sel's C-order buffer). */
static void copy_part(const zc_array *a, const zc_range *sel, const zc_range *cb, const unsigned char *src,
                      unsigned char *out)
{
    int64_t cnt[ZC_MAX_DIMS], cst[ZC_MAX_DIMS], ost[ZC_MAX_DIMS], so = 0, oo = 0;
    int64_t cs = (int64_t)a->itemsize, os = (int64_t)a->itemsize;
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t lo = sel[d].start > cb[d].start ? sel[d].start : cb[d].start;
        int64_t hi = sel[d].stop < cb[d].stop ? sel[d].stop : cb[d].stop;
        cnt[d] = hi - lo;
        cst[d] = cs;
        ost[d] = os;
        so += (lo - cb[d].start) * cs;
        oo += (lo - sel[d].start) * os;
        cs *= cb[d].stop - cb[d].start;
        os *= sel[d].stop - sel[d].start;
    }
    zarr_copy_nd(out + oo, ost, src + so, cst, cnt, a->ndim, a->itemsize);
}

static int cached_read(node_cache *nc, zc_array *a, const zc_range *sel, void *out)
{
    (void)nc;
    const zc_zarr *z = a->p.zarr.z;
    size_t nbytes = a->itemsize;
    int64_t lo[ZC_MAX_DIMS], hi[ZC_MAX_DIMS], ic[ZC_MAX_DIMS];
    bool ok = a->ndim >= 1;
    for (int d = 0; d < a->ndim; d++) {
        if (sel[d].step != 1 || sel[d].stop <= sel[d].start) ok = false;
        nbytes *= (size_t)(sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start) : 0);
        lo[d] = ic[d] = sel[d].start / z->rchunk[d];
        hi[d] = ok ? ck_ceildiv(sel[d].stop, z->rchunk[d]) : lo[d];
    }
    if (!ok) return zarr_read_flags(a->p.zarr.z, sel, out, nbytes, ZARR_READ_DROP);
    /* every chunk from the cache (filling the empty ones), else all from storage */
    for (;;) {
        int rc;
        zc_range cb[ZC_MAX_DIMS];
        const unsigned char *src = chunk(a, ic, cb, &rc);
        if (rc < 0) return rc;
        if (!src) return zarr_read_flags(a->p.zarr.z, sel, out, nbytes, ZARR_READ_DROP);
        copy_part(a, sel, cb, src, out);
        int d = a->ndim - 1;
        for (; d >= 0; d--) {
            if (++ic[d] < hi[d]) break;
            ic[d] = lo[d];
        }
        if (d < 0) return 0;
    }
}
