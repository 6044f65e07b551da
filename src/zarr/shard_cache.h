/* zarr/shard_cache.h — decoded shard indexes kept per open array.
 *
 * Random windows touch the same shards again and again; fetching and decoding
 * their index each time would cost one extra read per window. Entries are
 * keyed by the shard's linear number in the shard grid, hold the decoded index
 * (or "absent"), and are evicted by a clock sweep when the cache is full.
 * Writes through the same handle drop the entry of the shard they replace.
 * Entries are shared by reference (shard_ref), so readers use an index (and
 * the shard's mapping, if any) in place without copying it. */
#ifndef ZC_ZARR_SHARD_CACHE_H
#define ZC_ZARR_SHARD_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef struct shard_cache shard_cache;
struct zc_store;

/* One shard's cached state, shared by reference: the cache holds one, every
 * reader using it another (taken with shard_cache_acquire); the last release
 * frees it. Never changed once inserted (a write replaces the entry). */
typedef struct shard_ref {
    atomic_int refs;
    bool present;               /* shard object exists */
    uint64_t size;              /* shard object size in bytes */
    const unsigned char *map;   /* the whole shard mapped (mm.addr), or NULL: read through the store */
    struct store_map_t mm;
    uint64_t index[];           /* decoded index words, when present */
} shard_ref;

/* A new reference (count 1) with room for `words` index words; NULL if out of memory. */
shard_ref *shard_ref_new(size_t words);
void shard_ref_release(shard_ref *r);

/* A cache of at most `max_bytes` of indexes of `nentries_u64` words each. */
int shard_cache_create(size_t index_words, size_t max_bytes, shard_cache **out);
void shard_cache_free(shard_cache *c);
/* Copy the cached index of shard `id` into `index` (if present). Returns true on a hit. */
bool shard_cache_get(shard_cache *c, uint64_t id, uint64_t *index, bool *present, uint64_t *size);
void shard_cache_put(shard_cache *c, uint64_t id, const uint64_t *index, bool present, uint64_t size);
void shard_cache_drop(shard_cache *c, uint64_t id);
/* Shard `id`'s entry with a reference taken (release it when done), or NULL
 * on a miss. No copy of the index. */
shard_ref *shard_cache_acquire(shard_cache *c, uint64_t id);
/* Add or replace shard `id`'s entry with r; the cache takes its own reference
 * (r's words must be the cache's index_words). */
void shard_cache_insert(shard_cache *c, uint64_t id, shard_ref *r);

#endif
