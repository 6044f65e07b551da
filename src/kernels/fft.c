/* kernels/fft.c — FFTW3 plan cache and batched execution (see fft.h).
 *
 * The cache is a small table searched linearly (a computation uses a handful of
 * (kind, n, howmany) combinations); plans live until the process ends, as FFTW
 * wisdom would. Buffers are aligned to FFTK_ALIGN so that every task's buffers
 * have the alignment of the planning ones (fftw_alignment_of == 0), which the
 * new-array execute functions require. */
#include "kernels/fft.h"

#include <fftw3.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

#define FFTK_MAX_PLANS 512
/* batches of at most this many elements would be planned with FFTW_MEASURE: 0,
 * since measuring costs 0.1-0.3 s per shape (more than a small computation) and
 * gained under 10% on the shapes of bench/fft_bench.sh */
#define FFTK_MEASURE_ELEMS ((int64_t)0)

typedef struct {
    fftk_kind kind;
    int single, howmany;
    int64_t n;
    void *plan;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry cache[FFTK_MAX_PLANS];
static int ncache;

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

static void *make_plan(fftk_kind k, int single, int64_t n64, int howmany, void *in, void *out)
{
    int n = (int)n64, il = (int)fftk_in_len(k, n64), ol = (int)fftk_out_len(k, n64);
    unsigned flags = (int64_t)howmany * n64 <= FFTK_MEASURE_ELEMS ? FFTW_MEASURE : FFTW_ESTIMATE;
    if (single) {
        switch (k) {
        case FFTK_C2C_FWD: case FFTK_C2C_BWD:
            return fftwf_plan_many_dft(1, &n, howmany, in, NULL, 1, il, out, NULL, 1, ol,
                                       k == FFTK_C2C_FWD ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        case FFTK_R2C: return fftwf_plan_many_dft_r2c(1, &n, howmany, in, NULL, 1, il, out, NULL, 1, ol, flags);
        case FFTK_C2R: return fftwf_plan_many_dft_c2r(1, &n, howmany, in, NULL, 1, il, out, NULL, 1, ol, flags);
        default: return NULL;
        }
    }
    switch (k) {
    case FFTK_C2C_FWD: case FFTK_C2C_BWD:
        return fftw_plan_many_dft(1, &n, howmany, in, NULL, 1, il, out, NULL, 1, ol,
                                  k == FFTK_C2C_FWD ? FFTW_FORWARD : FFTW_BACKWARD, flags);
    case FFTK_R2C: return fftw_plan_many_dft_r2c(1, &n, howmany, in, NULL, 1, il, out, NULL, 1, ol, flags);
    case FFTK_C2R: return fftw_plan_many_dft_c2r(1, &n, howmany, in, NULL, 1, il, out, NULL, 1, ol, flags);
    default: return NULL;
    }
}

int fftk_plan(fftk_kind k, int single, int64_t n, int howmany, void *in, void *out, void **plan)
{
    if (k == FFTK_NONE || n < 1 || n > INT32_MAX || howmany < 1)
        return zc__err(ZC_EINVAL, "fft kernel: no plan for kind %d, length %lld, %d lines", (int)k, (long long)n,
                       howmany);
    pthread_mutex_lock(&lock);
    int rc = 0;
    *plan = NULL;
    for (int i = 0; i < ncache; i++)
        if (cache[i].kind == k && cache[i].single == single && cache[i].n == n && cache[i].howmany == howmany) {
            *plan = cache[i].plan;
            break;
        }
    if (!*plan) {
        if (ncache == FFTK_MAX_PLANS) {
            rc = zc__err(ZC_EUNSUPPORTED, "fft kernel: more than %d distinct transform shapes in one process",
                         FFTK_MAX_PLANS);
        } else if (!(*plan = make_plan(k, single, n, howmany, in, out))) {
            rc = zc__err(ZC_EINTERNAL, "FFTW could not plan a transform of length %lld (%d lines)", (long long)n,
                         howmany);
        } else {
            cache[ncache++] = (entry){k, single, howmany, n, *plan};
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
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
