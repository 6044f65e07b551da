/* core/alloc.h — the one allocation wrapper every layer uses.
 *
 * All library allocations pass here: the place where tests inject failures
 * (zc_test_fail_alloc) and where memory is counted. A failure sets the
 * thread's error message to "out of memory allocating N bytes". */
#ifndef ZC_CORE_ALLOC_H
#define ZC_CORE_ALLOC_H

#include <stddef.h>

void *zc__malloc(size_t size);
void *zc__calloc(size_t n, size_t size);
void *zc__realloc(void *ptr, size_t size);
void zc__free(void *ptr);
char *zc__strdup(const char *s);
/* malloc with overflow-checked n*size. */
void *zc__malloc_array(size_t n, size_t size);

/* Bytes currently allocated through this wrapper (all threads). */
size_t zc__alloc_current(void);
/* Peak of zc__alloc_current since the last reset. */
size_t zc__alloc_peak(void);
void zc__alloc_reset_peak(void);

/* Bytes the allocator holds: in use plus freed blocks kept in its caches
 * (resident, not counted by zc__alloc_current), its peak since the last reset,
 * and the most one thread's cache of freed blocks may keep. */
size_t zc__alloc_held(void);
size_t zc__alloc_held_peak(void);
void zc__alloc_reset_held_peak(void);
size_t zc__alloc_thread_cache_bytes(void);

/* This thread's allocation peak above its level at the last reset (task
 * memory): blocks it allocated, less those freed since (by any thread). */
void zc__alloc_thread_reset(void);
size_t zc__alloc_thread_peak(void);

/* Reuse of freed blocks above 16 MiB while a computation runs: between begin
 * and end, in-use plus cached bytes are kept within `budget` (budgets of
 * overlapping computations add up); end releases the cache when the last
 * computation ends. */
void zc__alloc_cache_begin(size_t budget);
void zc__alloc_cache_end(size_t budget);
/* Bytes held by that cache now. */
size_t zc__alloc_cached(void);

#endif
