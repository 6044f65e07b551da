/* kernels/reduce.h — reductions over blocks, in mergeable accumulators.
 *
 * A reduction over large arrays runs in rounds (a tree): each task reduces a few
 * blocks of its input into an accumulator block (the reduced axes have length 1),
 * later rounds merge accumulator blocks, and the last one finalizes. So an
 * accumulator is a fixed-size record per output element:
 *   sum/prod: the running value in the result dtype (float16: in float32, as NumPy's
 *   inner loop does; integers wrap like NumPy's);  min/max: the value, starting from
 *   the identity (+inf / the type's max for min; no seen flag: an empty min reads as
 *   the identity, callers never finalize one; float16 kept as float32);
 *   mean: (count, sum) in float64 or complex128;  var/std: (count, mean, M2) merged
 *   by Chan et al.'s formula;  argmin/argmax: (value, global index), index INT64_MAX
 *   while empty;  any/all/count_nonzero: a count (all: of zeros).
 * Layouts are in kernels/red_internal.h. Intermediate rounds store accumulators as
 * raw bytes (Zarr dtype r<8*acc_size>), native byte order.
 *
 * None of these allocates. red_accum may be called several times on one accumulator
 * block, with blocks in any order; red_merge in any order and tree shape: integer
 * results are exact whatever the order, float ones equal to rounding, argmin/argmax
 * keep the first occurrence (smallest global index; NaN is the extreme, first NaN
 * wins), min/max propagate NaN. Sums over contiguous runs are pairwise like NumPy's.
 *
 *   red_init(op, in, acc, nout);
 *   red_accum(op, in, acc, ndim, shape, axes, block, index_base);   // per input block
 *   red_merge(op, in, acc, other, nout);                            // per partial block
 *   red_finalize(op, in, acc, nout, out, ddof);                     // out in red_result_dtype
 */
#ifndef ZC_KERNELS_REDUCE_H
#define ZC_KERNELS_REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define RED_OPS(X)                                                                                 \
    X(SUM, "sum") X(PROD, "prod") X(MIN, "min") X(MAX, "max") X(MEAN, "mean") X(VAR, "var")       \
    X(STD, "std") X(ARGMIN, "argmin") X(ARGMAX, "argmax") X(ANY, "any") X(ALL, "all")             \
    X(COUNT_NONZERO, "count_nonzero")

typedef enum {
#define RED_ENUM_(name, str) RED_##name,
    RED_OPS(RED_ENUM_)
#undef RED_ENUM_
    RED_END_
} red_op;

int red_op_from_name(const char *name);          /* -1 if unknown */
const char *red_op_name(red_op op);
/* dtype of the result for input dtype `in` (array API: sum/prod of signed ints → int64,
 * unsigned → uint64, bool → int64; floats keep their dtype; mean/var/std of ints → float64;
 * argmin/argmax/count_nonzero → int64; any/all → bool). ZC_EINVAL for unsupported pairs
 * (e.g. mean of bool is allowed as float64? follow NumPy; min of complex: refuse). */
int red_result_dtype(red_op op, zc_dtype in, zc_dtype *out);
/* Bytes of one accumulator record. */
size_t red_acc_size(red_op op, zc_dtype in);
/* Set n accumulators to the identity (empty). */
void red_init(red_op op, zc_dtype in, void *acc, size_t n);
/*
 * Accumulate one C-contiguous input block of `shape` (ndim dims, dtype `in`) into the
 * accumulator block: acc has the block's shape with every axis in `axes` (bit mask)
 * set to 1, C order. For argmin/argmax exactly one axis is reduced (or all: flattened)
 * and index_base[d] is the global index of the block's first element along each dim d,
 * global_shape the full array's shape (to compute flattened indices).
 */
void red_accum(red_op op, zc_dtype in, void *acc, int ndim, const int64_t *shape, uint64_t axes,
               const void *block, const int64_t *index_base, const int64_t *global_shape);
/* Merge n accumulators of `other` into `acc`, element by element. */
void red_merge(red_op op, zc_dtype in, void *acc, const void *other, size_t n);
/* Turn n accumulators into results of red_result_dtype (ddof: correction for var/std). */
void red_finalize(red_op op, zc_dtype in, const void *acc, size_t n, void *out, double ddof);

#endif
