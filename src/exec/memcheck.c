/* exec/memcheck.c — per-stage RSS and counted memory against the bound (see
 * memcheck.h). The reserve's uncounted parts are upper bounds measured on this
 * build (docs/internals/memory.md says how). */
#include "exec/memcheck.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/pool.h"
#include "core/rss.h"
#include "plan/kind.h"
#include "store/fs.h"

/* per thread (the pool's and the caller's): a thread stack's touched pages,
 * an io_uring ring (128 entries: ~16 KiB), c-blosc's temporaries of a
 * decompression (3 blocks: up to a few MiB), glibc's arena slack */
#define RUNTIME_PER_THREAD ((size_t)4 << 20)
/* once: what the first run of the process touches in the libraries (jansson's
 * JSON, the codec registry, lazily bound symbols) */
#define RUNTIME_FIXED ((size_t)8 << 20)
/* OpenBLAS (one thread per task): each calling thread's buffer, of which a
 * gemm touches its packed panels: A's (GEMM_P x GEMM_Q doubles: 1 MiB on
 * Haswell-class kernels) and B's (GEMM_Q = 256 rows by the columns computed,
 * at most GEMM_R = 13824), plus LAPACK's and the kernels' small state;
 * measured ~4 MiB per thread for 100 columns */
#define BLAS_FIXED ((size_t)4 << 20)
#define BLAS_PANEL_ROW ((size_t)256 * 8)
#define BLAS_MAX_COLS 13824

/* FFT and BLAS work in a stage's node and the nodes fused into it (not
 * materialized: a node read by several is a stage of its own, so this is a tree). */
static void scan(const zc_array *a, bool top, mem_reserve *r, bool *blas, int64_t *cols)
{
    if (!top && a->stage >= 0) return;
    if (kind_of(a)->library_mem) r->fft = ck_sat_add(r->fft, kind_of(a)->library_mem(a));
    if (kind_has(a, KIND_BLAS)) {
        *blas = true;
        for (int i = -1; i < a->ninputs; i++) { /* the widest block: its result's or an input's columns */
            const zc_array *b = i < 0 ? a : a->inputs[i];
            if (b->ndim > 0 && b->chunks[b->ndim - 1] > *cols) *cols = b->chunks[b->ndim - 1];
        }
    }
    for (int i = 0; i < a->ninputs; i++) scan(a->inputs[i], false, r, blas, cols);
}

static void reserve_of(const plan *p, int threads, mem_reserve *r)
{
    size_t nt = (size_t)threads + 1;
    *r = (mem_reserve){0};
    r->block_cache = nt * zc__alloc_thread_cache_bytes();
    r->runtime = RUNTIME_FIXED + nt * RUNTIME_PER_THREAD;
    bool blas = false;
    int64_t cols = 0;
    for (int k = 0; k < p->nstages; k++) scan(p->stages[k].node, true, r, &blas, &cols);
    if (cols > BLAS_MAX_COLS) cols = BLAS_MAX_COLS;
    if (blas) r->blas = nt * (BLAS_FIXED + BLAS_PANEL_ROW * (size_t)cols);
    r->uncounted = ck_sat_add(ck_sat_add(r->fft, r->blas), r->runtime);
    r->total = ck_sat_add(r->block_cache, r->uncounted);
}

int memcheck_init(memcheck *m, const plan *p, const zc_spec *spec, size_t extra)
{
    *m = (memcheck){0};
    int threads = spec->nthreads > 0 ? spec->nthreads : (pool_default() ? pool_size(pool_default()) : 1);
    m->threads = threads;
    m->allowed_mem = spec->allowed_mem;
    m->cache_mem = spec->cache_mem;
    m->extra = extra;
    reserve_of(p, threads, &m->reserve);
    m->nstages = p->nstages;
    m->st = zc__calloc((size_t)p->nstages + 1, sizeof *m->st);
    if (!m->st) return ZC_ENOMEM;
    rss_now r;
    rss_read(&r);
    m->rss_base = r.rss;
    m->cur_base = zc__alloc_current();
    return 0;
}

/* VmHWM is the process's: a stage measured while another computation's stage
 * runs in the process (or resets the peak meanwhile) is not measured alone */
static atomic_int active;
static atomic_uint resets;

void memcheck_begin(memcheck *m, int k)
{
    if (!m || !m->st) return;
    mem_stage *s = &m->st[k];
    s->ran = true;
    bool alone = atomic_fetch_add(&active, 1) == 0;
    s->epoch = atomic_fetch_add(&resets, 1) + 1;
    s->measured = rss_reset_peak() && alone;
    rss_now r;
    s->measured &= rss_read(&r);
    s->rss_start = r.rss;
    zc__alloc_reset_held_peak();
    s->held_start = zc__alloc_held();
    store_fs_reset_mapped_peak();
}

void memcheck_end(memcheck *m, int k)
{
    if (!m || !m->st) return;
    mem_stage *s = &m->st[k];
    rss_now r;
    s->measured &= rss_read(&r);
    s->measured &= atomic_fetch_sub(&active, 1) == 1 && atomic_load(&resets) == s->epoch;
    s->rss_peak = r.hwm;
    s->held_peak = zc__alloc_held_peak();
    s->cur_end = zc__alloc_current();
    s->mapped_peak = store_fs_mapped_peak();
}

static size_t above(size_t a, size_t b) { return a > b ? a - b : 0; }

/* The bound on peak RSS above the run's start for a stage that kept `kept` bytes of data in memory. */
static size_t bound_of(const memcheck *m, size_t kept)
{
    size_t b = ck_sat_add(ck_sat_mul((size_t)m->threads, m->allowed_mem), m->cache_mem);
    return ck_sat_add(ck_sat_add(ck_sat_add(b, m->extra), kept), m->reserve.total);
}

void memcheck_annotate(const memcheck *m, char **json)
{
    json_t *doc = json_loads(*json, 0, NULL);
    if (!doc) return;
    const mem_reserve *r = &m->reserve;
    json_t *res = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "block_cache", (json_int_t)r->block_cache, "fft",
                            (json_int_t)r->fft, "blas", (json_int_t)r->blas, "runtime", (json_int_t)r->runtime,
                            "uncounted", (json_int_t)r->uncounted, "total", (json_int_t)r->total);
    json_t *mem = json_pack("{s:i, s:I, s:I, s:I, s:o}", "threads", m->threads, "allowed_mem", (json_int_t)m->allowed_mem,
                            "buffer", (json_int_t)m->extra, "bound", (json_int_t)bound_of(m, 0), "reserve", res);
    bool ran = false, measured = true, agrees = true, within = true;
    size_t peak = 0;
    json_t *ops = json_object_get(doc, "operations");
    for (int k = 0; k < m->nstages && mem; k++) {
        const mem_stage *s = &m->st[k];
        json_t *o = json_array_get(ops, (size_t)k);
        if (!s->ran || !o) continue;
        ran = true;
        size_t growth = above(s->rss_peak, s->rss_start), counted = above(s->held_peak, s->held_start);
        size_t kept = above(s->cur_end, m->cur_base), bound = bound_of(m, kept);
        bool ag = s->measured && growth <= ck_sat_add(ck_sat_add(counted, s->mapped_peak), r->uncounted);
        bool wb = s->measured && above(s->rss_peak, m->rss_base) <= bound;
        measured &= s->measured;
        agrees &= ag;
        within &= wb;
        if (s->rss_peak > peak) peak = s->rss_peak;
        json_object_set_new(o, "memory",
                            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b}", "rss_start", (json_int_t)s->rss_start,
                                      "peak_rss", (json_int_t)s->rss_peak, "counted_growth", (json_int_t)counted,
                                      "mapped_peak", (json_int_t)s->mapped_peak, "kept", (json_int_t)kept, "bound",
                                      (json_int_t)bound, "agrees", ag, "within_bound", wb));
    }
    if (mem && ran) {
        json_object_set_new(mem, "rss_base", json_integer((json_int_t)m->rss_base));
        json_object_set_new(mem, "peak_rss", json_integer((json_int_t)peak));
        json_object_set_new(mem, "measured", json_boolean(measured));
        json_object_set_new(mem, "agrees", json_boolean(agrees));
        json_object_set_new(mem, "within_bound", json_boolean(within));
    }
    char *t = mem && !json_object_set_new(doc, "memory", mem) ? json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(doc);
    if (!t) return;
    free(*json);
    *json = t;
}

void memcheck_free(memcheck *m)
{
    zc__free(m->st);
    m->st = NULL;
}
