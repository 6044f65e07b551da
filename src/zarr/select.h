/* zarr/select.h — which chunks a hyperslab touches, and where each lands.
 *
 * Per dimension, a sorted list of spans: chunk index, first output position,
 * first selected index inside the chunk, number of selected elements. The
 * touched chunks are the product of the per-dimension lists; chunk t of that
 * product is found by mixed-radix decomposition, so nothing is stored per chunk. */
#ifndef ZC_ZARR_SELECT_H
#define ZC_ZARR_SELECT_H

#include "zarr/zarr.h"

typedef struct {
    int64_t chunk;    /* chunk index along the dimension (read-unit grid) */
    int64_t out_off;  /* position of its first selected element in the output */
    int64_t in_start; /* first selected index, relative to the chunk start */
    int64_t count;    /* selected elements in this chunk */
} zarr_span;

typedef struct {
    int ndim;
    int64_t start[ZC_MAX_DIMS], step[ZC_MAX_DIMS];
    int64_t count[ZC_MAX_DIMS];      /* selected elements per dimension */
    zarr_span *spans[ZC_MAX_DIMS];   /* per dimension (zc__malloc) */
    int64_t nspans[ZC_MAX_DIMS];
    size_t nchunks;                  /* product of nspans: touched chunks */
    size_t nelems;                   /* product of count */
    int64_t ostride[ZC_MAX_DIMS];    /* byte stride of the output (C order) per selected index */
    int64_t cstride[ZC_MAX_DIMS];    /* byte stride inside a decoded chunk (C order) */
} zarr_sel;

/* Plan a selection over the read-unit grid (a->rchunk). sel NULL = everything. */
int zarr_sel_plan(const zc_zarr *a, const zc_range *sel, zarr_sel *s);
void zarr_sel_free(zarr_sel *s);
/* Span indices (one per dim) of touched chunk t. */
void zarr_sel_unravel(const zarr_sel *s, size_t t, int64_t *j);

#endif
