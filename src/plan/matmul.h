/* plan/matmul.h — the MATMUL node kind (built by ops/linalg.c).
 *
 *   MATMUL   inputs A (batch..., M, K) and B (batch..., K, N), both >= 2-D and of
 *            the node's dtype; output (batch..., M, N) with the batch dims
 *            broadcast, or, when `split`, (G, batch..., M, N): group g holds the
 *            partial product over contracted indices [g*kgroup, (g+1)*kgroup),
 *            summed afterwards by the engine's tree reduction (so a product with
 *            few output blocks still spreads over threads).
 *            A region loops over its contracted range in steps of `kstep`:
 *            it pulls A's (rows, kstep) and B's (kstep, cols) regions, one step
 *            at a time, and accumulates into the output with gemm. So a task
 *            holds one step of each operand whatever K is: the memory bound holds
 *            for operands of any size. Always materialized. */
#ifndef ZC_PLAN_MATMUL_H
#define ZC_PLAN_MATMUL_H

#include "plan/array.h"

#endif
