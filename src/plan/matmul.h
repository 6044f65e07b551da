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

#include <jansson.h>

#include "plan/array.h"

int matmul_region(zc_array *a, const zc_range *sel, void *out);
typedef size_t (*matmul_proj_fn)(const zc_array *a, const zc_range *sel);
size_t matmul_proj(const zc_array *a, const zc_range *sel, matmul_proj_fn proj);
/* At plan time: shrink the contracted step (to multiples of x1's chunk while it
 * can) until a task's projection fits `limit` (it may still not, if the output
 * block alone is too large: then the plan refuses). */
typedef size_t (*matmul_stage_fn)(const zc_array *a);
void matmul_fit(zc_array *a, size_t limit, matmul_stage_fn stage_projection);
int matmul_to_json(const zc_array *a, json_t *o);
int matmul_from_json(const json_t *o, zc_array *a);

#endif
