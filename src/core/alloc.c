/* core/alloc.c — allocation wrapper: counting, failure injection, and a small
 * per-thread cache of large blocks.
 *
 * Each block carries a 16-byte header: the size asked for (so frees can be
 * counted) and the capacity of the underlying block, whose top 16 bits hold
 * the counter slot of the thread that allocated it; it keeps 16-byte
 * alignment for SIMD codecs.
 *
 * Counting: every thread counts its allocations in its own cache-line-padded
 * slot (one of SLOTS, taken at its first allocation, in turn); a free is taken
 * off the slot of the block's allocating thread, whichever thread frees it, so
 * a block handed to another thread (a decoded chunk, a task's output) does not
 * make either count drift. A task's memory is its thread's slot peak above
 * the slot's level when the task began. Slots are reused only after SLOTS
 * threads have been started (then a slot's blocks left by an exited thread
 * are charged to the new one until freed).
 *
 * Why the cache: chunk reads allocate and free buffers of megabytes again and
 * again; glibc hands such blocks back to the kernel, so every reuse pays page
 * faults on fresh memory (up to half the time of a read, measured). Each thread
 * keeps up to CACHE_SLOTS freed blocks of 256 KiB..16 MiB, CACHE_BYTES in all,
 * and reuses one whose capacity is within 2x of a request. Cached blocks count
 * as freed for tasks, but as held for the process (zc__alloc_held): they stay
 * resident.
 *
 * Blocks above 16 MiB (whole chunks, task buffers: 150 MB each in the compute
 * benchmark) go to a process-wide cache instead, active only while a
 * computation says how much memory it may hold (zc__alloc_cache_begin): a
 * block is kept for reuse only while the bytes in use (all threads) plus the
 * cached bytes stay within that budget, and cached blocks are released before
 * a fresh block would take the total above it. So the memory bound still
 * holds, and a stage stops paying ~37,000 page faults (and an munmap) for
 * every 150 MB buffer. New big blocks get 1/16 spare capacity (untouched, so
 * not resident) so that buffers whose size varies a little (compressed
 * chunks) still fit a cached one. The caches are off under AddressSanitizer
 * so they cannot hide a use-after-free. */
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
#define BIG_SLOTS 8
#define SLOTS 256
#define SLOT_SHIFT 48 /* capacities stay below 2^48 (x86-64 and arm64 address spaces) */

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
static atomic_size_t small_cached; /* sum of every thread's tl_cache.total */
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_drain(void *unused)
{
    (void)unused;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(tl_cache.base[i]);
        tl_cache.base[i] = NULL;
    }
    atomic_fetch_sub(&small_cached, tl_cache.total);
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
    atomic_fetch_sub(&small_cached, *cap);
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
            atomic_fetch_add(&small_cached, cap);
            return true;
        }
    return false;
}

/* process-wide cache of blocks above CACHE_MAX (see the top) */
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned char *base[BIG_SLOTS];
    size_t cap[BIG_SLOTS];
    atomic_size_t total; /* sum of cap (read without the lock by zc__alloc_held) */
    size_t budget; /* bytes in use + cached may not exceed this; 0 = cache off */
    int users;
} big;
static atomic_size_t cur_bytes;

/* Release cached big blocks (largest first) until in_use + cached + extra fits
 * the budget; with keep == false release all. Called with big_lock held; the
 * blocks are returned in out (n of them) to be freed after unlocking. */
static int big_evict(size_t extra, bool keep, unsigned char **out)
{
    int n = 0;
    for (;;) {
        size_t in_use = atomic_load(&cur_bytes);
        if (keep && in_use + big.total + extra <= big.budget) break;
        int worst = -1;
        for (int i = 0; i < BIG_SLOTS; i++)
            if (big.base[i] && (worst < 0 || big.cap[i] > big.cap[worst])) worst = i;
        if (worst < 0) break;
        out[n++] = big.base[worst];
        big.total -= big.cap[worst];
        big.base[worst] = NULL;
    }
    return n;
}

static unsigned char *big_take(size_t size, size_t *cap)
{
    if (!CACHE_ON || size <= CACHE_MAX) return NULL;
    unsigned char *drop[BIG_SLOTS], *b = NULL;
    int ndrop = 0;
    pthread_mutex_lock(&big_lock);
    if (big.budget) {
        int best = -1;
        for (int i = 0; i < BIG_SLOTS; i++)
            if (big.base[i] && big.cap[i] >= size && big.cap[i] / 2 <= size &&
                (best < 0 || big.cap[i] < big.cap[best]))
                best = i;
        if (best >= 0) {
            b = big.base[best];
            *cap = big.cap[best];
            big.base[best] = NULL;
            big.total -= *cap;
        } else {
            ndrop = big_evict(size, true, drop); /* make room for the fresh block */
        }
    }
    pthread_mutex_unlock(&big_lock);
    for (int i = 0; i < ndrop; i++) free(drop[i]);
    return b;
}

/* Capacity of a fresh big block: size + 1/16, in whole MiB (only the part used
 * is ever touched, so the spare costs address space, not memory). */
static size_t big_capacity(size_t size)
{
    if (!CACHE_ON || size <= CACHE_MAX) return size;
    size_t extra = size / 16, mib = (size_t)1 << 20;
    if (size > SIZE_MAX - HDR - extra - mib) return size;
    return (size + extra + mib - 1) / mib * mib;
}

static bool big_put(unsigned char *base, size_t cap)
{
    if (!CACHE_ON || cap <= CACHE_MAX) return false;
    bool kept = false;
    pthread_mutex_lock(&big_lock);
    if (big.budget && atomic_load(&cur_bytes) + big.total + cap <= big.budget)
        for (int i = 0; i < BIG_SLOTS && !kept; i++)
            if (!big.base[i]) {
                big.base[i] = base;
                big.cap[i] = cap;
                big.total += cap;
                kept = true;
            }
    pthread_mutex_unlock(&big_lock);
    return kept;
}

/* A new underlying block for size bytes (*cap: its capacity). Not advised
 * MADV_HUGEPAGE (it was, from 4cfae3c): where the system compacts memory for
 * advised regions at fault time (THP defrag "madvise", Debian's default), a
 * page cache filled by the data being read makes every 2 MiB fault compact
 * memory. The rechunk of issue 17 within 500MB took 2.9-4.9 s with 2.9-6.7 s
 * of system time advised, 1.8 s with 1.0 s not; the randomized SVD benchmark
 * was no faster advised (0.48 s, and 1.8 s once). */
static unsigned char *fresh_block(size_t size, size_t *cap)
{
    *cap = big_capacity(size);
    if (*cap > (size_t)PTRDIFF_MAX - HDR) return NULL;
    return malloc(*cap + HDR);
}

void zc__alloc_cache_begin(size_t budget)
{
    pthread_mutex_lock(&big_lock);
    big.users++;
    big.budget = big.budget > SIZE_MAX - budget ? SIZE_MAX : big.budget + budget;
    pthread_mutex_unlock(&big_lock);
}

void zc__alloc_cache_end(size_t budget)
{
    unsigned char *drop[BIG_SLOTS];
    pthread_mutex_lock(&big_lock);
    if (big.users > 0) big.users--;
    big.budget = big.users && big.budget > budget ? big.budget - budget : 0;
    int n = big_evict(0, big.users > 0, drop);
    pthread_mutex_unlock(&big_lock);
    for (int i = 0; i < n; i++) free(drop[i]);
}

size_t zc__alloc_cached(void)
{
    pthread_mutex_lock(&big_lock);
    size_t t = big.total;
    pthread_mutex_unlock(&big_lock);
    return t;
}

static atomic_long fail_countdown; /* 0 = off; k>0: the k-th next allocation fails */
static atomic_int fail_repeat;
static atomic_int fail_active;      /* set once the countdown has hit */
static atomic_int fail_count;
static atomic_size_t peak_bytes, held_peak;

/* per-thread counters (see the top) */
typedef struct {
    _Alignas(64) atomic_llong cur; /* bytes allocated by the slot's thread, not yet freed by anyone */
} count_slot;
static count_slot slots[SLOTS];
static atomic_uint next_slot;
static _Thread_local int tl_slot = -1;
static _Thread_local long long tl_peak, tl_base;

static unsigned my_slot(void)
{
    if (tl_slot < 0) tl_slot = (int)(atomic_fetch_add(&next_slot, 1) % SLOTS);
    return (unsigned)tl_slot;
}

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

static void peak_max(atomic_size_t *peak, size_t now)
{
    size_t p = atomic_load_explicit(peak, memory_order_relaxed);
    while (now > p && !atomic_compare_exchange_weak(peak, &p, now)) {}
}

/* add bytes allocated by this thread, sub bytes freed of a block of slot `owner` */
static void count(size_t add, size_t sub, unsigned owner)
{
    unsigned me = my_slot();
    long long mine = atomic_fetch_add(&slots[me].cur, (long long)add) + (long long)add;
    if (sub) {
        long long o = atomic_fetch_sub(&slots[owner].cur, (long long)sub) - (long long)sub;
        if (owner == me) mine = o;
    }
    if (mine > tl_peak) tl_peak = mine;
    size_t now = atomic_fetch_add(&cur_bytes, add) + add;
    if (sub) now = atomic_fetch_sub(&cur_bytes, sub) - sub;
    peak_max(&peak_bytes, now);
    if (add) peak_max(&held_peak, now + atomic_load_explicit(&small_cached, memory_order_relaxed) + big.total);
}

/* The header: size, then capacity with the allocating thread's slot on top. */
static void header_put(unsigned char *base, size_t size, size_t cap)
{
    size_t capslot = cap | (size_t)my_slot() << SLOT_SHIFT;
    memcpy(base, &size, sizeof size);
    memcpy(base + sizeof size, &capslot, sizeof capslot);
}

static void header_get(const unsigned char *base, size_t *size, size_t *cap, unsigned *slot)
{
    size_t capslot;
    memcpy(size, base, sizeof *size);
    memcpy(&capslot, base + sizeof *size, sizeof capslot);
    *cap = capslot & (((size_t)1 << SLOT_SHIFT) - 1);
    *slot = (unsigned)(capslot >> SLOT_SHIFT);
}

void *zc__malloc(size_t size)
{
    if (size > SIZE_MAX - HDR || should_fail()) {
        zc__err(ZC_ENOMEM, "out of memory allocating %zu bytes", size);
        return NULL;
    }
    size_t cap = size;
    unsigned char *p = size > CACHE_MAX ? big_take(size, &cap) : cache_take(size, &cap);
    if (!p && !(p = fresh_block(size, &cap))) {
        zc__err(ZC_ENOMEM, "out of memory allocating %zu bytes", size);
        return NULL;
    }
    header_put(p, size, cap);
    count(size, 0, 0);
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
    size_t old, oldcap;
    unsigned owner;
    header_get(base, &old, &oldcap, &owner);
    if (size > SIZE_MAX - HDR || should_fail()) {
        zc__err(ZC_ENOMEM, "out of memory reallocating %zu bytes", size);
        return NULL;
    }
    unsigned char *p = realloc(base, size + HDR);
    if (!p) {
        zc__err(ZC_ENOMEM, "out of memory reallocating %zu bytes", size);
        return NULL;
    }
    header_put(p, size, size); /* capacity = size */
    count(size, old, owner);
    return p + HDR;
}

void zc__free(void *ptr)
{
    if (!ptr) return;
    unsigned char *base = (unsigned char *)ptr - HDR;
    size_t old, cap;
    unsigned owner;
    header_get(base, &old, &cap, &owner);
    atomic_fetch_sub(&slots[owner].cur, (long long)old);
    atomic_fetch_sub(&cur_bytes, old);
    if (!(cap > CACHE_MAX ? big_put(base, cap) : cache_put(base, cap))) free(base);
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

size_t zc__alloc_held(void)
{
    return atomic_load(&cur_bytes) + atomic_load(&small_cached) + big.total;
}
size_t zc__alloc_held_peak(void) { return atomic_load(&held_peak); }
void zc__alloc_reset_held_peak(void) { atomic_store(&held_peak, zc__alloc_held()); }
size_t zc__alloc_thread_cache_bytes(void) { return CACHE_ON ? CACHE_BYTES : 0; }

void zc__alloc_thread_reset(void) { tl_base = tl_peak = atomic_load(&slots[my_slot()].cur); }
size_t zc__alloc_thread_peak(void) { return tl_peak > tl_base ? (size_t)(tl_peak - tl_base) : 0; }
