/* zarr/shard_cache.h — decoded shard indexes kept per open array.
 *
 * Random windows touch the same shards again and again; fetching and decoding
 * their index each time would cost one extra read per window. Entries are
 * keyed by the shard's linear number in the shard grid, hold the decoded index
 * (or "absent"), and are evicted by a clock sweep when the cache is full.
 * Writes through the same handle drop the entry of the shard they replace. */
#ifndef ZC_ZARR_SHARD_CACHE_H
#define ZC_ZARR_SHARD_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct shard_cache shard_cache;

/* A cache of at most `max_bytes` of indexes of `nentries_u64` words each. */
int shard_cache_create(size_t index_words, size_t max_bytes, shard_cache **out);
void shard_cache_free(shard_cache *c);
/* Copy the cached index of shard `id` into `index` (if present). Returns true on a hit. */
bool shard_cache_get(shard_cache *c, uint64_t id, uint64_t *index, bool *present, uint64_t *size);
void shard_cache_put(shard_cache *c, uint64_t id, const uint64_t *index, bool present, uint64_t size);
void shard_cache_drop(shard_cache *c, uint64_t id);

#endif
