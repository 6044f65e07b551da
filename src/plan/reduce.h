/* plan/reduce.h — the REDUCE kind: one round of a tree reduction (ops/reduce.c
 * builds the rounds). Round 1 accumulates up to `split` input blocks along the
 * reduced axes per output block, one block at a time; later rounds merge
 * accumulator blocks; the last finalizes. Always materialized: its values are
 * computed block by block (node_kind_def.block), never as a region. */
#ifndef ZC_PLAN_REDUCE_H
#define ZC_PLAN_REDUCE_H

#include <stdbool.h>

#include "plan/array.h"

/* The input blocks [lo, hi) (block coordinates) round a merges into its output
 * block b, and the values of that output block (*nacc); false when the range
 * is empty. */
bool reduce_range(const zc_array *a, int64_t b, int64_t *lo, int64_t *hi, size_t *nacc);
/* Region sel of block ic of a round's input `in`, with its counts and first
 * indices per dim (what red_accum takes). */
void reduce_input_block(const zc_array *in, const int64_t *ic, zc_range *sel, int64_t *cnt, int64_t *base);
/* Move ic to the next block of [lo, hi) in C order; false after the last. */
bool reduce_next_block(int nd, const int64_t *lo, const int64_t *hi, int64_t *ic);

#endif
