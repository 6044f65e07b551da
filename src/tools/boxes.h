/* tools/boxes.h — walk a selection in boxes that fit a memory budget.
 *
 * get and put never hold a whole selection in memory: they visit it box
 * by box. Boxes are aligned to a unit grid (the array's chunks, or the
 * destination's shards) so each chunk is decoded or encoded once, and are
 * grown from the last dimension outwards while they fit the budget:
 *
 *   dims  0   1   2        units per box: 1 along leading dims, m along the
 *        [1] [m] [all]     split dim, the whole extent along trailing dims.
 *
 * If a single unit is larger than the budget, the unit is cut (element
 * granularity along leading dimensions, then a run along the split one), at
 * the price of decoding the same chunk more than once.
 *
 * Coordinates are selection indices: index i of dimension d is array element
 * start[d] + i × step[d]. Boxes are visited in C order of their origins. */
#ifndef ZC_TOOLS_BOXES_H
#define ZC_TOOLS_BOXES_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define BOXES_ALL INT64_MAX /* nunits: the whole extent */

typedef struct {
    int ndim;
    size_t itemsize;
    int64_t count[ZC_MAX_DIMS];  /* selection extent per dimension */
    int64_t start[ZC_MAX_DIMS];  /* array index of selection index 0 */
    int64_t step[ZC_MAX_DIMS];   /* > 0 */
    int64_t unit[ZC_MAX_DIMS];   /* unit size in array elements, > 0 */
    int64_t nunits[ZC_MAX_DIMS]; /* units per box, or BOXES_ALL */
    int64_t pos[ZC_MAX_DIMS];    /* current box: origin (selection index) */
    int64_t end[ZC_MAX_DIMS];    /* current box: end (exclusive) */
    uint64_t max_bytes;          /* upper bound of any box's bytes */
    uint64_t unit_bytes;         /* bytes of one whole unit (inside the selection), before any cut */
    int state;                   /* 0 = not started, 1 = running, 2 = done */
} boxes_t;

/*
 * Prepare a walk over `sel` (ndim ranges in array space, step > 0) whose
 * element counts are `count`, with unit grid `unit` (array elements per unit;
 * NULL = single elements, which makes every box a contiguous run of the
 * selection in C order). `budget` is in bytes (at least one element is always
 * allowed).
 */
void boxes_init(boxes_t *b, int ndim, const zc_range *sel, const int64_t *count, const int64_t *unit,
                size_t itemsize, uint64_t budget);
/* Advance to the next box (the first on the first call). Returns 1, or 0 when done. */
int boxes_next(boxes_t *b);
/* The current box as array-space ranges (for zc_zarr_read/write). */
void boxes_ranges(const boxes_t *b, const zc_range *sel, zc_range *out);
/* Elements in the current box. */
uint64_t boxes_nelems(const boxes_t *b);

/*
 * Contiguous runs of the current box inside the C-order layout of the whole
 * selection: calls fn(sel_offset, box_offset, n) with offsets and lengths in
 * elements, in increasing box_offset. Stops early if fn returns non-zero and
 * returns that value.
 */
typedef int (*boxes_run_fn)(uint64_t sel_offset, uint64_t box_offset, uint64_t n, void *ctx);
int boxes_runs(const boxes_t *b, boxes_run_fn fn, void *ctx);

#endif
