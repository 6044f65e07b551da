/* zarr/zarr.h — internal interface of the Zarr layer.
 *
 * One parsed form (zarr_meta) serves both formats. Zarr v2 metadata is
 * translated on reading into the v3 shape: a codec list
 *   [transpose (order F)] + bytes (typestr byte order) + v2 filters + compressor
 * where the v2 entries keep their numcodecs spelling ({"id": ...}) and run as
 * bytes→bytes codecs (codec/codec.h explains why).
 *
 * Sharding (v3 "sharding_indexed" as the array→bytes codec): the chunk grid of
 * the metadata is the shard grid; reads and writes work on inner chunks, whose
 * byte ranges come from the shard index (nchunks × (offset u64, nbytes u64),
 * all-ones = empty) at the start or end of the shard object. */
#ifndef ZC_ZARR_ZARR_H
#define ZC_ZARR_ZARR_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "codec/codec.h"
#include "core/dtype.h"
#include "core/pool.h"
#include "store/store.h"
#include "zarr/probe.h"
#include "zcube.h"

typedef struct {
    int zarr_format;               /* 2 or 3 */
    int ndim;                      /* 0..ZC_MAX_DIMS */
    int64_t shape[ZC_MAX_DIMS];    /* array shape */
    int64_t chunks[ZC_MAX_DIMS];   /* chunk grid (the shard shape when sharded) */
    dtype_t dtype;                 /* element type; endian = stored order */
    unsigned char *fill;           /* dtype.size bytes, native order (zc__malloc) */
    bool fill_null;                /* v2 "fill_value": null */
    char order;                    /* v2 'C' or 'F'; v3 'C' */
    char separator;                /* chunk key separator */
    bool v2_key_encoding;          /* keys "i.j" without "c" prefix */
    json_t *codecs;                /* v3-shaped codec list (translated for v2) */
    json_t *attributes;            /* object (never NULL once parsed) */
    json_t *dimension_names;       /* v3 array, or NULL */
    /* sharding */
    bool sharded;
    int64_t inner[ZC_MAX_DIMS];    /* inner chunk shape */
    json_t *inner_codecs;          /* codecs of inner chunks */
    json_t *index_codecs;          /* codecs of the shard index */
    bool index_at_end;             /* index_location "end" (default) */
} zarr_meta;

struct zc_zarr {
    store *st;                     /* not owned */
    char *path;                    /* array path in the store, "" = root, no trailing '/' */
    zarr_meta m;
    int64_t grid[ZC_MAX_DIMS];     /* number of chunks (shards) per dimension */
    int64_t rchunk[ZC_MAX_DIMS];   /* read unit: inner chunk if sharded, else chunk */
    int64_t rgrid[ZC_MAX_DIMS];    /* read units per dimension */
    size_t rchunk_nbytes;          /* bytes of one decoded read unit */
    int64_t inner_per_shard;       /* inner chunks in one shard (1 if not sharded) */
    codec_chain *chain;            /* codecs of a read unit */
    codec_chain *index_chain;      /* codecs of the shard index (sharded only) */
    size_t index_nbytes;           /* encoded size of a shard index */
    int nthreads;                  /* 0 = pool default */
    bool write_empty_chunks;       /* store chunks equal to the fill value */
    struct shard_cache *index_cache; /* decoded shard indexes (sharded only) */
    /* IO counters (zc_zarr_io_stats), updated atomically by every thread */
    _Atomic int64_t chunks_read, bytes_read, index_hits, index_misses;
    /* zarr_probe's answer, kept once a stored chunk gave it (probe.c) */
    _Atomic int probe_state;
    zarr_probe_info probe;
};

/* Linear number of a shard (or chunk) in the grid. */
uint64_t zarr_grid_id(const zc_zarr *a, const int64_t *coord);

/* ---- metadata (meta_v2.c, meta_v3.c, meta.c) ---- */
int zarr_meta_parse_v2(const char *zarray_text, size_t n, const char *zattrs_text, size_t an,
                       zarr_meta *m);
int zarr_meta_parse_v3(const char *text, size_t n, zarr_meta *m);
/* Serialize to the document of m->zarr_format (.zarray or zarr.json; new reference). */
json_t *zarr_meta_to_json_v2(const zarr_meta *m);
json_t *zarr_meta_to_json_v3(const zarr_meta *m);
void zarr_meta_free(zarr_meta *m);
/* Parse a JSON array of integers of `*ndim` entries (or any count if *ndim < 0). */
int zarr_parse_dims(const json_t *v, const char *key, int *ndim, int64_t *out);
/* Common checks: shape/chunks positive, products fit in int64/size_t. */
int zarr_meta_validate(const zarr_meta *m);

/* ---- groups (group.c, consolidated.c) ---- */
/* Write the metadata document of a group at `path` (and nothing else). */
int zarr_group_put(store *st, const char *path, int zarr_format);
/* zc_group_walk by listing folders, ignoring consolidated metadata. */
int zarr_walk_listing(store *st, const char *path, zc_node_fn fn, void *ctx);
/* When the group at `dir` has consolidated metadata: walk from it (*indexed
 * true). Returns 0, the callback's non-zero value or an error. */
int zarr_index_walk(store *st, const char *dir, zc_node_fn fn, void *ctx, bool *indexed);
/* After the node at `path` was written or replaced: bring every consolidated
 * index (.zmetadata) of a group above it up to date with what the store holds,
 * so readers that trust the index (ls, xarray, zarr.open_consolidated) see it. */
int zarr_consolidated_update(store *st, const char *path);

/* ---- keys (keys.c) ---- */
/* Key of chunk `idx` (grid coordinates) for array at `path`, into buf. */
int zarr_chunk_key(const zc_zarr *a, const int64_t *idx, char *buf, size_t size);
/* Key of a metadata document ("zarr.json", ".zarray", ...) under `path`. */
int zarr_meta_key(const char *path, const char *name, char *buf, size_t size);

/* ---- io (read.c, write.c, shard.c) ---- */
/* Decode the shard index bytes into offsets/nbytes pairs (2 × inner_per_shard). */
int zarr_shard_index_decode(const zc_zarr *a, const void *src, size_t n, uint64_t *index);
int zarr_shard_index_encode(const zc_zarr *a, const uint64_t *index, zc_buf *out);
/* True if the chunk bytes (native) are all the fill value. */
bool zarr_is_fill(const zc_zarr *a, const void *chunk, size_t nbytes);
/* Fill dst with n copies of the fill value. */
void zarr_fill(const zc_zarr *a, void *dst, size_t n);
pool *zarr_pool(const zc_zarr *a);

#endif
