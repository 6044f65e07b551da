/* tools/region.h — NumPy basic-slice syntax ("0:10,:,5", "::2,3:-1", "...,0")
 * turned into one zc_range per array dimension.
 *
 * Semantics follow NumPy for positive steps: missing start/stop default to the
 * whole dimension, negative values count from the end, slice bounds are
 * clamped to the dimension (an empty slice selects nothing), an integer index
 * selects one element and drops that dimension from the result's shape,
 * "..." stands for as many ":" as needed, and fewer entries than dimensions
 * leave the remaining ones as ":". Optional surrounding [] and a trailing
 * comma are accepted. Refused, with a message naming the dimension: steps of
 * 0 or below, integer indices out of bounds, more entries than dimensions,
 * more than one "...", anything that is not an integer. */
#ifndef ZC_TOOLS_REGION_H
#define ZC_TOOLS_REGION_H

#include <stdint.h>

#include "zcube.h"

typedef struct {
    int ndim;                     /* array dimensions */
    zc_range range[ZC_MAX_DIMS];  /* per array dimension: start, stop (clamped), step > 0 */
    int64_t count[ZC_MAX_DIMS];   /* elements selected per array dimension */
    int dropped[ZC_MAX_DIMS];     /* 1 = integer index: not in the result's shape */
    int out_ndim;                 /* dimensions of the result */
    int64_t out_shape[ZC_MAX_DIMS]; /* result shape (dropped dimensions removed) */
} region_t;

/* The whole array (text NULL or "" also give this through region_parse). */
void region_all(region_t *r, int ndim, const int64_t *shape);
/* Parse `text` for an array of `shape`. @return 0, or -1 with cli_lasterr() set. */
int region_parse(const char *text, int ndim, const int64_t *shape, region_t *r);
/* Total elements selected (saturates at INT64_MAX). */
int64_t region_nelems(const region_t *r);

#endif
