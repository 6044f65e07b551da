/* core/alloc.c — allocation wrapper: counting, failure injection, and a small
 * per-thread cache of large blocks.
 *
 * Each block carries a 16-byte header: the size asked for (so frees can be
 * counted) and the capacity of the underlying block; it keeps 16-byte
 * alignment for SIMD codecs.
 *
 * Why the cache: chunk reads allocate and free buffers of megabytes again and
 * again; glibc hands such blocks back to the kernel, so every reuse pays page
 * faults on fresh memory (up to half the time of a read, measured). Each thread
 * keeps up to CACHE_SLOTS freed blocks of 256 KiB..16 MiB, CACHE_BYTES in all,
 * and reuses one whose capacity is within 2x of a request. Cached blocks count
 * as freed. The cache is off under AddressSanitizer so it cannot hide a
 * use-after-free. */
#include "core/alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define HDR 16
#define CACHE_SLOTS 4
#define CACHE_MIN ((size_t)256 << 10)
#define CACHE_MAX ((size_t)16 << 20)
#define CACHE_BYTES ((size_t)32 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_ON 0
#else
#define CACHE_ON 1
#endif

typedef struct {
    unsigned char *base[CACHE_SLOTS]; /* underlying blocks (header included), NULL = empty */
    size_t cap[CACHE_SLOTS];          /* their capacities */
    size_t total;                     /* sum of cap */
} block_cache;

static _Thread_local block_cache tl_cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_drain(void *unused)
{
    (void)unused;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(tl_cache.base[i]);
        tl_cache.base[i] = NULL;
    }
    tl_cache.total = 0;
}

static void cache_key_make(void) { pthread_key_create(&cache_key, cache_drain); }

static unsigned char *cache_take(size_t size, size_t *cap)
{
    if (!CACHE_ON || size < CACHE_MIN || size > CACHE_MAX) return NULL;
    int best = -1;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (tl_cache.base[i] && tl_cache.cap[i] >= size && tl_cache.cap[i] / 2 <= size &&
            (best < 0 || tl_cache.cap[i] < tl_cache.cap[best]))
            best = i;
    if (best < 0) return NULL;
    unsigned char *b = tl_cache.base[best];
    *cap = tl_cache.cap[best];
    tl_cache.base[best] = NULL;
    tl_cache.total -= *cap;
    return b;
}

static bool cache_put(unsigned char *base, size_t cap)
{
    if (!CACHE_ON || cap < CACHE_MIN || cap > CACHE_MAX || tl_cache.total + cap > CACHE_BYTES) return false;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (!tl_cache.base[i]) {
            pthread_once(&cache_once, cache_key_make);
            pthread_setspecific(cache_key, &tl_cache); /* non-NULL: the destructor runs at thread exit */
            tl_cache.base[i] = base;
            tl_cache.cap[i] = cap;
            tl_cache.total += cap;
            return true;
        }
    return false;
}

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
    size_t cap = size;
    unsigned char *p = cache_take(size, &cap);
    if (!p && !(p = malloc(size + HDR))) {
        zc__err(ZC_ENOMEM, "out of memory allocating %zu bytes", size);
        return NULL;
    }
    memcpy(p, &size, sizeof size);
    memcpy(p + sizeof size, &cap, sizeof cap);
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
    memcpy(p + sizeof size, &size, sizeof size); /* capacity = size */
    count(size, old);
    return p + HDR;
}

void zc__free(void *ptr)
{
    if (!ptr) return;
    unsigned char *base = (unsigned char *)ptr - HDR;
    size_t old;
    size_t cap;
    memcpy(&old, base, sizeof old);
    memcpy(&cap, base + sizeof old, sizeof cap);
    atomic_fetch_sub(&cur_bytes, old);
    tl_cur -= (long long)old;
    if (!cache_put(base, cap)) free(base);
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
