/* ops/decomp_stack.h — a decomposition applied to every matrix of a stack
 * (..., M, N), or to every system of two stacks that broadcast (ops/decomp_stack.c). */
#ifndef ZC_OPS_DECOMP_STACK_H
#define ZC_OPS_DECOMP_STACK_H

#include "plan/array.h"

#define DECOMP_MAXIN 2
#define DECOMP_MAXOUT 4

/* The decomposition of one matrix (one slice of each operand, in[k] of its core
 * dims): results in *outs[i] where outs[i] is not NULL. */
typedef int (*decomp_one_fn)(zc_array *const *in, zc_array **const *outs, void *ctx);

/* one() of every slice of the nin operands in[k], each core[k] trailing dims
 * per slice, their leading dims broadcast (right-aligned): *outs[i] has the
 * broadcast leading dims, then the shape of one slice's result i (outs[i]
 * NULL: not wanted). An empty stack gives empty results of the shapes and
 * dtypes one() gives for slices of the core shapes. At most 65,536 slices. */
int decomp_stack(const char *fn, int nin, zc_array *const *in, const int *core, int nout, zc_array **const *outs,
                 decomp_one_fn one, void *ctx);

#endif
