/* zarr/stream.h — one read unit of a stored array decoded in order, a piece
 * at a time (codec_stream): the decoded chunk is never whole in memory.
 * exec/ streams fused chains through it (tile by tile), plan/ projects it. */
#ifndef ZC_ZARR_STREAM_H
#define ZC_ZARR_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

typedef struct zarr_stream zarr_stream;

/* Whether a's read units stream: unsharded, and codecs that stream
 * (codec_chain_streams). If not, *why (may be NULL) says why in a few words
 * ("sharded", "gzip decodes whole chunks only"). */
bool zarr_streams(const zc_zarr *a, const char **why);
/* Bytes an open stream of a unit allocates at most: the stored bytes (the
 * codecs' bound; a store that maps files needs none of it) and the codec
 * stream's own (a block, a window). */
size_t zarr_stream_mem(const zc_zarr *a);
/* Open a stream over read unit `unit` (grid coordinates). An absent chunk
 * streams its fill value. Errors name the array and the chunk; a stored
 * chunk larger than its codecs' bound is ZC_ECORRUPT (never read). */
int zarr_stream_open(zc_zarr *a, const int64_t *unit, zarr_stream **out);
/* The next len decoded bytes of the unit (C order, native byte order). */
int zarr_stream_read(zarr_stream *s, void *dst, size_t len);
/* Close; a mapped chunk file cut short by another program while it was read
 * fails here (ZC_EIO): the bytes read were wrong. */
int zarr_stream_close(zarr_stream *s);

#endif
