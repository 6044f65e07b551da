/* zarr/copy.h — strided N-d copy (see copy.c). */
#ifndef ZC_ZARR_COPY_H
#define ZC_ZARR_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

/* Copy count[0]×…×count[ndim-1] elements of isz bytes; strides in bytes. */
void zarr_copy_nd(void *dst, const int64_t *dstride, const void *src, const int64_t *sstride,
                  const int64_t *count, int ndim, size_t isz);
/* Set every element of a strided region to *elem. */
void zarr_fill_nd(void *dst, const int64_t *dstride, const int64_t *count, int ndim, const void *elem, size_t isz);

#endif
