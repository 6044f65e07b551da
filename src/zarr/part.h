/* zarr/part.h — reading a box of one chunk by its blocks (chunks stored in blocks: codec_blocks) (see part.c). */
#ifndef ZC_ZARR_PART_H
#define ZC_ZARR_PART_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

/* Buffers kept between calls (one reader per task): a decoded chunk and the
 * stored bytes of one (only the needed blocks' are fetched, so only those
 * pages are touched). */
typedef struct {
    unsigned char *scratch; /* rchunk_nbytes */
    unsigned char *cbuf;    /* cbuf_cap */
    size_t cbuf_cap;
    unsigned char *need;    /* per block: the box needs it */
    size_t need_cap;
} zarr_part;

/* Bytes a zarr_part holds for chunks of `chunk_nbytes` decoded bytes, at most
 * (its scratch, its stored-bytes buffer, a flag per block of 16 KiB or more); SIZE_MAX on overflow. */
size_t zarr_part_mem(size_t chunk_nbytes);

/* Copy box [lo, lo + cnt) (element coordinates inside the chunk) of chunk
 * `coord` of array a into dst (byte strides dstride), fetching and decoding
 * only the blocks the box's bytes lie in (the whole chunk when it needs
 * every block). A missing chunk gives the fill value. Returns 0, 1 when the
 * array or chunk is not one this reader handles (not one codec storing
 * blocks apart, sharded, a memcpyed or odd buffer, stored bytes beyond its
 * buffer: read it the usual way), or an error (ZC_ECORRUPT naming the chunk, store errors). */
int zarr_part_read(zc_zarr *a, const int64_t *coord, const int64_t *lo, const int64_t *cnt, void *dst,
                   const int64_t *dstride, zarr_part *p);

void zarr_part_free(zarr_part *p);

#endif
