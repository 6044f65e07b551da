/* zarr/probe.h — what the planner may assume about reading parts of a stored
 * array's chunks (see probe.c). */
#ifndef ZC_ZARR_PROBE_H
#define ZC_ZARR_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "zcube.h"

typedef struct {
    /* bytes a partial read decodes at a time (the blosc block size) when reads
     * of parts of a chunk decode only what they need (zarr/read.c); 0: a read
     * decodes (and fetches) the whole chunk */
    size_t unit;
    /* stored / decoded bytes of the probed chunk; 0 when unknown */
    double ratio;
    /* its blocks decode near memory speed (codec_blocks.fast) */
    bool fast;
    /* the store is remote (HTTP/S3): a sliced copy reads parts of chunks by
     * zarr/part.c, fetching only the blocks they need (exec/run.c copy_region) */
    bool remote;
} zarr_probe_info;

/* Probe the first chunk of a (one 16-byte ranged read); the answer is kept
 * in the handle, so later calls read nothing unless the chunk was absent.
 * Nothing known (zeros) for sharded or non-blosc arrays and absent chunks.
 * 0, or a store error. Thread-safe. */
int zarr_probe(zc_zarr *a, zarr_probe_info *out);

#endif
