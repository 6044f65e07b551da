/* plan/manip.h — the node kinds of the array API's manipulation, indexing and
 * cumulative functions (ops/manipulation.c, ops/cumulative.c build them):
 * computing any region of their values, the memory that costs, names, JSON.
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

#include <jansson.h>
#include <stdbool.h>

#include "plan/array.h"

typedef enum { VIEW_PERMUTE, VIEW_MOVEAXIS, VIEW_MATRIX_TRANSPOSE, VIEW_FLIP, VIEW_BROADCAST, VIEW_EXPAND, VIEW_SQUEEZE } view_what;
typedef enum { GATHER_TAKE, GATHER_REPEAT, GATHER_TILE, GATHER_ROLL } gather_mode;
typedef enum { SCAN_SUM, SCAN_PROD } scan_op;

/* True for the kinds above. */
bool manip_kind(node_kind k);
/* Compute a region of a node of one of these kinds (out: C order of the region). */
int manip_region(zc_array *a, const zc_range *sel, void *out);
/* Bytes a task allocates to compute `sel` of a (not counting out); `proj` projects inputs. */
typedef size_t (*manip_proj_fn)(const zc_array *a, const zc_range *sel);
size_t manip_proj(const zc_array *a, const zc_range *sel, manip_proj_fn proj);
/* Display name ("reshape", "flip", "roll", "cumulative_sum", ...). */
const char *manip_name(const zc_array *a);
/* Free owned parameters (the take list). */
void manip_free(zc_array *a);
/* JSON kind name, and parameters into/out of a plan node object. */
const char *manip_kind_json(node_kind k);
int manip_kind_from_json(const char *name, node_kind *k);
int manip_to_json(const zc_array *a, json_t *o);
int manip_from_json(const json_t *o, zc_array *a);
/* Accumulator storage dtype of a cumulative result dtype (int64, float64, complex128). */
zc_dtype manip_scan_acc_dtype(zc_dtype result);

#endif
