/* plan/rechunk_plan.h — choosing intermediate chunkings for a rechunk.
 *
 * Copying an array from chunks `src` to chunks `dst` one output chunk per task
 * needs, per task, every source chunk overlapping the output chunk (decoded)
 * plus the output chunk; a grouped copy (a block of output chunks per task, see
 * rechunk_copy_block) needs more per task but decodes each source chunk once. When that exceeds the memory a task may use, the copy
 * goes through intermediate arrays whose chunks are chosen so that each stage
 * fits (the multistage algorithm of rechunker / Cubed: geometric
 * interpolation between source and target chunk shapes, consolidating reads
 * and writes up to the memory limit). */
#ifndef ZC_PLAN_RECHUNK_PLAN_H
#define ZC_PLAN_RECHUNK_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define RECHUNK_MAX_STAGES 8

typedef struct {
    int nstages;                              /* number of copies (1 = direct) */
    int64_t chunks[RECHUNK_MAX_STAGES + 1][32]; /* chunks[0] = src, chunks[nstages] = dst, between: intermediates */
    size_t task_mem[RECHUNK_MAX_STAGES];       /* projected bytes per task of each copy (grouped when it fits) */
} rechunk_plan;

/* Projected bytes for one task copying chunks `from` → `to` (one output chunk per task):
 * the decoded source chunks it overlaps (worst case over positions) + its output chunk. */
size_t rechunk_task_mem(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize);

/* Grouped copies (rechunker's copy chunks): a task covers a block of whole output
 * chunks that holds at least one source chunk along every axis where the output
 * chunks are smaller (`to` times ceil(from / to); `to` elsewhere), so each source
 * chunk is decoded once per stage when the chunkings align, instead of once per
 * output chunk it feeds. rechunk_copy_block gives that block's extents (multiples of
 * `to`, clipped to the shape rounded up to `to`); rechunk_copy_mem its projected
 * bytes per task: the decoded source chunks it overlaps + the block. */
void rechunk_copy_block(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, int64_t *block);
size_t rechunk_copy_mem(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize);

/* Plan a rechunk with each task under max_mem bytes. ZC_EMEMBOUND (with a message
 * naming the figures and what to change) if even the smallest plan does not fit,
 * e.g. because a single source or target chunk is larger than max_mem. */
int rechunk_plan_make(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize,
                      size_t max_mem, rechunk_plan *out);

/* The smallest max_mem for which rechunk_plan_make succeeds (it succeeds with this
 * value and fails with one byte less); 0 for an empty array, SIZE_MAX on bad
 * arguments or out of memory. Lets callers say what to change. */
size_t rechunk_plan_min_mem(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize);

#endif
