/* exec/srccache.h — decoded blocks of stored sources kept in memory for the
 * stages of one computation (zc_spec.cache_mem).
 *
 * A Zarr source read by two or more stages (the passes of a randomized SVD, a
 * mean then the anomalies against it, ...) is read from storage and decoded
 * by every stage. When the spec allows `cache_mem` bytes, srccache_setup picks
 * such sources (most stages first) whose decoded size fits the budget together
 * and gives each an arena of that size, allocated once (untouched pages cost
 * no memory): the first task that reads a chunk of it decodes the chunk into
 * its slot of the arena, later reads (any stage) copy from there, or use the
 * slot in place (node_cache.view). No extra pass: the cache is filled by the
 * first stage that reads each chunk. Process memory stays within
 * nthreads × allowed_mem + cache_mem (+ the runtime's overhead). What the
 * sources leave of cache_mem holds the computation's intermediates (memory://
 * work store) when they all fit in it (exec/run.c).
 *
 * Chunks are the source's read chunks (its regular chunk grid, or the inner
 * chunks of a sharded array); a slot holds the chunk clipped to the array, in
 * C order. Two tasks asking for the same missing chunk at once: one fills it,
 * the other reads from storage as if there were no cache. */
#ifndef ZC_EXEC_SRCCACHE_H
#define ZC_EXEC_SRCCACHE_H

#include <stdbool.h>

#include "plan/plan.h"

typedef struct srccache srccache;

/* Attach caches to the sources of p read by ≥ 2 stages within spec->cache_mem
 * bytes together (*out = NULL when none is). */
int srccache_setup(plan *p, const zc_spec *spec, srccache **out);
/* Detach and free. */
void srccache_free(srccache *c);
/* Bytes reserved, chunk hits and misses (fills) so far, sources cached. */
void srccache_stats(const srccache *c, size_t *bytes, int64_t *hits, int64_t *misses, int *arrays);

/* Bytes of the arenas (0 for NULL). */
size_t srccache_bytes(const srccache *c);
/* Add "source_cache": {"bytes" (arenas reserved), "arrays", "hits", "misses",
 * "intermediates_in_memory"} to a report's JSON text (*json: malloc'd, replaced;
 * left as is if that fails). */
void srccache_annotate(const srccache *c, bool intermediates_in_memory, char **json);

/* The sources' values are read through their node_cache callbacks (plan/array.h):
 * a region as zc_zarr_read would give it, or one kept chunk in place. */

#endif
