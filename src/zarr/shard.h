/* zarr/shard.h — shard indexes of the shards a selection touches.
 *
 * Shard object layout (sharding_indexed):
 *   [index if at start] inner chunk bytes … [index if at end]
 *   index = C-order grid of inner chunks × (offset u64, nbytes u64), then its
 *   own codecs (bytes little + crc32c by default); (2^64-1, 2^64-1) = empty. */
#ifndef ZC_ZARR_SHARD_H
#define ZC_ZARR_SHARD_H

#include "zarr/select.h"

typedef struct {
    int ndim;
    int64_t ratio[ZC_MAX_DIMS];     /* inner chunks per shard, per dimension */
    int64_t *ids[ZC_MAX_DIMS];      /* touched shard coordinates per dimension (sorted) */
    int64_t nids[ZC_MAX_DIMS];
    size_t nshards;                 /* product of nids */
    struct shard_ref **refs;        /* per touched shard: its index (shared with the cache), maybe its mapping */
    char (*keys)[1024];             /* key of each touched shard, formatted once */
} shard_set;

/* Fetch and check the indexes of every shard the selection touches; with
 * `map`, shards not in the cache are mapped (store_map) where the store can,
 * their index taken from the mapping (cached shards keep what they have). */
int shard_set_load(shard_set *ss, zc_zarr *a, const zarr_sel *s, pool *p, int width, bool map);
/* Where inner chunk `coord` (inner-grid coordinates) lives: shard key and byte
 * range; *off = UINT64_MAX if it is empty or its shard is absent. *map (if
 * map is not NULL): the whole shard mapped, or NULL (read it from the store);
 * the range lies inside it (checked against the mapped size). */
int shard_set_locate(const shard_set *ss, const zc_zarr *a, const int64_t *coord, const char **key, uint64_t *off,
                     uint64_t *len, const unsigned char **map);
/* ZC_EIO (message naming the file) if a mapped shard of the set was cut short
 * by another program while it was read (store_map_check), else 0. */
int shard_set_check(const shard_set *ss);
void shard_set_free(shard_set *ss);

/* Check a decoded index against the shard's size; names the shard on failure. */
int shard_index_check(const zc_zarr *a, const uint64_t *index, uint64_t shard_size, const char *key);

#endif
