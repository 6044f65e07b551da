/* kernels/fft.c — FFTW3 plan cache and batched execution (see fft.h).
 *
 * The cache is a small table searched linearly (a computation uses a handful of
 * geometries); plans live until the process ends, as FFTW wisdom would. Work
 * buffers are aligned to FFTK_ALIGN so that every task's buffers have the
 * alignment of the planning ones (fftw_alignment_of == 0), which the new-array
 * execute functions require; strided plans, run on arrays of any alignment,
 * have the alignments in their key. */
#include "kernels/fft.h"

#include <fftw3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

#define FFTK_MAX_PLANS 2048 /* strided plans are per geometry and alignment too */
/* batches of at most this many elements would be planned with FFTW_MEASURE: 0,
 * since measuring costs 0.1-0.3 s per shape (more than a small computation) and
 * gained under 10% on the shapes of bench/fft_bench.sh (strided plans are always
 * ESTIMATE: they are planned on the caller's arrays) */
#define FFTK_MEASURE_ELEMS ((int64_t)0)

/* A plan's key: all int64_t (no padding), compared with memcmp. Contiguous
 * plans (fftk_plan) have ain = aout = -1: FFTK_ALIGN-aligned buffers. */
typedef struct {
    int64_t kind, single, preserve, ain, aout;
    int64_t n, howmany, is, id, os, od;
} key;

typedef struct {
    key k;
    void *plan;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry cache[FFTK_MAX_PLANS];
static int ncache;
static atomic_int direct_on = 1;
static atomic_llong direct_batches, direct_in_place;

int64_t fftk_in_len(fftk_kind k, int64_t n) { return k == FFTK_C2R ? n / 2 + 1 : n; }
int64_t fftk_out_len(fftk_kind k, int64_t n) { return k == FFTK_R2C ? n / 2 + 1 : n; }

void *fftk_alloc(size_t bytes)
{
    unsigned char *raw = zc__malloc(bytes + FFTK_ALIGN + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t p = ((uintptr_t)raw + sizeof(void *) + FFTK_ALIGN - 1) & ~(uintptr_t)(FFTK_ALIGN - 1);
    memcpy((unsigned char *)p - sizeof(void *), &raw, sizeof raw);
    return (void *)p;
}

void fftk_free(void *p)
{
    if (!p) return;
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
    zc__free(raw);
}

/* One FFTW plan (guru64 interface: one transform dim, one vector dim). */
static void *make_plan(const key *k, void *in, void *out)
{
    fftw_iodim64 dim = {k->n, k->is, k->os}, hm = {k->howmany, k->id, k->od};
    unsigned flags = k->ain < 0 && k->howmany * k->n <= FFTK_MEASURE_ELEMS ? FFTW_MEASURE : FFTW_ESTIMATE;
    if (k->preserve) flags |= FFTW_PRESERVE_INPUT;
    fftk_kind kind = (fftk_kind)k->kind;
    if (k->single) {
        switch (kind) {
        case FFTK_C2C_FWD: case FFTK_C2C_BWD:
            return fftwf_plan_guru64_dft(1, &dim, 1, &hm, in, out, kind == FFTK_C2C_FWD ? FFTW_FORWARD : FFTW_BACKWARD,
                                         flags);
        case FFTK_R2C: return fftwf_plan_guru64_dft_r2c(1, &dim, 1, &hm, in, out, flags);
        case FFTK_C2R: return fftwf_plan_guru64_dft_c2r(1, &dim, 1, &hm, in, out, flags);
        default: return NULL;
        }
    }
    switch (kind) {
    case FFTK_C2C_FWD: case FFTK_C2C_BWD:
        return fftw_plan_guru64_dft(1, &dim, 1, &hm, in, out, kind == FFTK_C2C_FWD ? FFTW_FORWARD : FFTW_BACKWARD,
                                    flags);
    case FFTK_R2C: return fftw_plan_guru64_dft_r2c(1, &dim, 1, &hm, in, out, flags);
    case FFTK_C2R: return fftw_plan_guru64_dft_c2r(1, &dim, 1, &hm, in, out, flags);
    default: return NULL;
    }
}

/* The cached plan of key k, made on (in, out) when missing. */
static int get_plan(const key *k, void *in, void *out, void **plan)
{
    pthread_mutex_lock(&lock);
    int rc = 0;
    *plan = NULL;
    for (int i = 0; i < ncache; i++)
        if (!memcmp(&cache[i].k, k, sizeof *k)) {
            *plan = cache[i].plan;
            break;
        }
    if (!*plan) {
        if (ncache == FFTK_MAX_PLANS) {
            rc = zc__err(ZC_EUNSUPPORTED, "fft kernel: more than %d distinct transform shapes in one process",
                         FFTK_MAX_PLANS);
        } else if (!(*plan = make_plan(k, in, out))) {
            rc = zc__err(ZC_EINTERNAL, "FFTW could not plan a transform of length %lld (%lld lines, strides %lld/%lld)",
                         (long long)k->n, (long long)k->howmany, (long long)k->is, (long long)k->os);
        } else {
            cache[ncache].k = *k;
            cache[ncache++].plan = *plan;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int fftk_plan(fftk_kind k, int single, int64_t n, int howmany, void *in, void *out, void **plan)
{
    if (k == FFTK_NONE || n < 1 || n > INT32_MAX || howmany < 1)
        return zc__err(ZC_EINVAL, "fft kernel: no plan for kind %d, length %lld, %d lines", (int)k, (long long)n,
                       howmany);
    key kk = (key){k, single != 0, 0, -1, -1, n, howmany, 1, fftk_in_len(k, n), 1, fftk_out_len(k, n)};
    return get_plan(&kk, in, out, plan);
}

int fftk_alignment(const void *p, int single)
{
    void *q = (void *)(uintptr_t)p;
    return single ? fftwf_alignment_of(q) : fftw_alignment_of(q);
}

int fftk_plan_strided(fftk_kind k, int single, int64_t n, int64_t howmany, int64_t istride, int64_t idist,
                      int64_t ostride, int64_t odist, int preserve, const void *in, void *out, void **plan)
{
    if (k == FFTK_NONE || n < 1 || n > INT32_MAX || howmany < 1 || howmany > INT32_MAX)
        return zc__err(ZC_EINVAL, "fft kernel: no plan for kind %d, length %lld, %lld lines", (int)k, (long long)n,
                       (long long)howmany);
    key kk = (key){k, single != 0, k == FFTK_C2R && preserve, fftk_alignment(in, single), fftk_alignment(out, single), n, howmany,
               istride, idist, ostride, odist};
    return get_plan(&kk, (void *)(uintptr_t)in, out, plan);
}

void fftk_execute(fftk_kind k, int single, void *plan, void *in, void *out)
{
    if (single) {
        switch (k) {
        case FFTK_C2C_FWD: case FFTK_C2C_BWD: fftwf_execute_dft(plan, in, out); break;
        case FFTK_R2C: fftwf_execute_dft_r2c(plan, in, out); break;
        case FFTK_C2R: fftwf_execute_dft_c2r(plan, in, out); break;
        default: break;
        }
        return;
    }
    switch (k) {
    case FFTK_C2C_FWD: case FFTK_C2C_BWD: fftw_execute_dft(plan, in, out); break;
    case FFTK_R2C: fftw_execute_dft_r2c(plan, in, out); break;
    case FFTK_C2R: fftw_execute_dft_c2r(plan, in, out); break;
    default: break;
    }
}

int fftk_aligned(const void *p)
{
    return ((uintptr_t)p % FFTK_ALIGN) == 0 && fftw_alignment_of((double *)(uintptr_t)p) == 0;
}

int fftk_plan_count(void)
{
    pthread_mutex_lock(&lock);
    int n = ncache;
    pthread_mutex_unlock(&lock);
    return n;
}

void fftk_set_direct(int on) { atomic_store(&direct_on, on != 0); }
int fftk_direct_enabled(void) { return atomic_load(&direct_on); }
void fftk_count_direct(int64_t batches, int in_place)
{
    atomic_fetch_add(in_place ? &direct_in_place : &direct_batches, (long long)batches);
}
int64_t fftk_direct_count(int in_place)
{
    return (int64_t)(in_place ? atomic_load(&direct_in_place) : atomic_load(&direct_batches) + atomic_load(&direct_in_place));
}
