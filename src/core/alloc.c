/* core/alloc.c — allocation wrapper: counting and failure injection.
 *
 * Each block carries a 16-byte header holding its size, so frees can be
 * counted; the header keeps 16-byte alignment for SIMD codecs. */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define HDR 16

static atomic_long fail_countdown; /* 0 = off; k>0: the k-th next allocation fails */
static atomic_int fail_repeat;
static atomic_int fail_active;      /* set once the countdown has hit */
static atomic_int fail_count;
static atomic_size_t cur_bytes, peak_bytes;
/* per thread: bytes allocated minus freed by this thread, and its peak since the
 * last reset (a task's memory; frees of another thread's blocks make it drift
 * low, never high) */
static _Thread_local long long tl_cur, tl_peak, tl_base;

int zc_test_fail_alloc(long n, int repeat)
{
    int failed = atomic_exchange(&fail_count, 0);
    atomic_store(&fail_countdown, n > 0 ? n : 0);
    atomic_store(&fail_repeat, repeat);
    atomic_store(&fail_active, 0);
    return failed;
}

static int should_fail(void)
{
    if (atomic_load_explicit(&fail_active, memory_order_relaxed)) {
        atomic_fetch_add(&fail_count, 1);
        return 1;
    }
    if (atomic_load_explicit(&fail_countdown, memory_order_relaxed) == 0) return 0;
    long left = atomic_fetch_sub(&fail_countdown, 1);
    if (left == 1) {
        if (atomic_load(&fail_repeat)) atomic_store(&fail_active, 1);
        atomic_fetch_add(&fail_count, 1);
        return 1;
    }
    if (left <= 0) atomic_store(&fail_countdown, 0);
    return 0;
}

static void count(size_t add, size_t sub)
{
    tl_cur += (long long)add - (long long)sub;
    if (tl_cur > tl_peak) tl_peak = tl_cur;
    size_t now = atomic_fetch_add(&cur_bytes, add) + add;
    if (sub) now = atomic_fetch_sub(&cur_bytes, sub) - sub;
    size_t peak = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {}
}

void *zc__malloc(size_t size)
{
    if (size > SIZE_MAX - HDR || should_fail()) {
        zc__err(ZC_ENOMEM, "out of memory allocating %zu bytes", size);
        return NULL;
    }
    unsigned char *p = malloc(size + HDR);
    if (!p) {
        zc__err(ZC_ENOMEM, "out of memory allocating %zu bytes", size);
        return NULL;
    }
    memcpy(p, &size, sizeof size);
    count(size, 0);
    return p + HDR;
}

void *zc__calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        zc__err(ZC_ENOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    void *p = zc__malloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

void *zc__malloc_array(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        zc__err(ZC_ENOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    return zc__malloc(n * size);
}

void *zc__realloc(void *ptr, size_t size)
{
    if (!ptr) return zc__malloc(size);
    unsigned char *base = (unsigned char *)ptr - HDR;
    size_t old;
    memcpy(&old, base, sizeof old);
    if (size > SIZE_MAX - HDR || should_fail()) {
        zc__err(ZC_ENOMEM, "out of memory reallocating %zu bytes", size);
        return NULL;
    }
    unsigned char *p = realloc(base, size + HDR);
    if (!p) {
        zc__err(ZC_ENOMEM, "out of memory reallocating %zu bytes", size);
        return NULL;
    }
    memcpy(p, &size, sizeof size);
    count(size, old);
    return p + HDR;
}

void zc__free(void *ptr)
{
    if (!ptr) return;
    unsigned char *base = (unsigned char *)ptr - HDR;
    size_t old;
    memcpy(&old, base, sizeof old);
    atomic_fetch_sub(&cur_bytes, old);
    tl_cur -= (long long)old;
    free(base);
}

void zc_free(void *ptr) { zc__free(ptr); }

char *zc__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = zc__malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

size_t zc__alloc_current(void) { return atomic_load(&cur_bytes); }
size_t zc__alloc_peak(void) { return atomic_load(&peak_bytes); }
void zc__alloc_reset_peak(void) { atomic_store(&peak_bytes, atomic_load(&cur_bytes)); }

void zc__alloc_thread_reset(void) { tl_base = tl_peak = tl_cur; }
size_t zc__alloc_thread_peak(void) { return tl_peak > tl_base ? (size_t)(tl_peak - tl_base) : 0; }
