/* ops/decomp_stack.h — a decomposition applied to every matrix of a stack
 * (..., M, N) (ops/decomp_stack.c). */
#ifndef ZC_OPS_DECOMP_STACK_H
#define ZC_OPS_DECOMP_STACK_H

#include "plan/array.h"

#define DECOMP_MAXOUT 4

/* The decomposition of one 2-D matrix m: results in *outs[i] where outs[i] is
 * not NULL. */
typedef int (*decomp_one_fn)(zc_array *m, zc_array **const *outs, void *ctx);

/* one() of every matrix of a (ndim > 2), its nout results stacked: *outs[i]
 * has a's leading dims then the shape of one matrix's result i (outs[i] NULL:
 * not wanted). An empty stack gives empty results of the shapes one() gives
 * for an M×N matrix. At most 65,536 matrices. */
int decomp_stack(const char *fn, zc_array *a, int nout, zc_array **const *outs, decomp_one_fn one, void *ctx);

/* zc_solve of a (..., M, M) and b (M,) or (..., M, K), at least one a stack:
 * the stacks broadcast, one solve per system (at most 65,536), stacked. */
int decomp_solve_stack(zc_array *a, zc_array *b, zc_array **x);

#endif
