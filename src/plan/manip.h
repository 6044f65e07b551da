/* plan/manip.h — the node kinds of the array API's manipulation, indexing and
 * cumulative functions (ops/manipulation.c, ops/cumulative.c build them; their
 * rows of the kind table, plan/kind.h, are in plan/manip.c).
 *
 *   RESHAPE  C-order reshape of the input; a region pulls the bounding box of
 *            its input elements (per group of dims whose products match), cut
 *            in halves while that box is much larger than the region
 *   VIEW     strided view: permutation, flips (negative steps), broadcasting
 *            (step 0 or new axes of any size), dropped size-1 dims
 *   CONCAT   2 or 3 inputs joined along an axis (more inputs: a tree of these)
 *   GATHER   output index j along an axis reads input index map(j): take
 *            (a list), repeat (j / k), tile (j % n), roll ((j - k) mod n)
 *   TOTALS   per segment of `seg` elements along an axis: the sum/product of
 *            the segment (first pass of a cumulative sum/product; always
 *            materialized)
 *   SCAN     cumulative sum/product along an axis: a region scans its input
 *            from the start of its segment, starting from the carry (input 1:
 *            the exclusive scan of the TOTALS, which is itself a SCAN)
 *
 * Every projection here is an upper bound for a region of the given counts
 * and steps wherever it lies (position independent), except RESHAPE, whose
 * leaves depend on the position: it simulates the region's own split and a
 * few translated copies of it. */
#ifndef ZC_PLAN_MANIP_H
#define ZC_PLAN_MANIP_H

#include "plan/array.h"

typedef enum { VIEW_PERMUTE, VIEW_MOVEAXIS, VIEW_MATRIX_TRANSPOSE, VIEW_FLIP, VIEW_BROADCAST, VIEW_EXPAND, VIEW_SQUEEZE } view_what;
typedef enum { GATHER_TAKE, GATHER_REPEAT, GATHER_TILE, GATHER_ROLL } gather_mode;
typedef enum { SCAN_SUM, SCAN_PROD } scan_op;

/* Accumulator storage dtype of a cumulative result dtype (int64, float64, complex128). */
zc_dtype manip_scan_acc_dtype(zc_dtype result);

#endif
