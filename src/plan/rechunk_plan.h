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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECHUNK_MAX_STAGES 8

typedef struct {
    int nstages;                              /* number of copies (1 = direct) */
    int64_t chunks[RECHUNK_MAX_STAGES + 1][32]; /* chunks[0] = src, chunks[nstages] = dst, between: intermediates */
    size_t task_mem[RECHUNK_MAX_STAGES];       /* projected bytes per task of each copy (grouped when it fits) */
    double cost;                              /* the plan's I/O cost in the planner's model (bytes) */
} rechunk_plan;

/* The I/O cost (bytes decoded + written + a fixed cost per chunk operation) of one
 * copy from chunks `from` to `to`, one output chunk per task or grouped. */
double rechunk_copy_cost(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                         bool grouped);

/* Single-pass sliced copies. When a read of a part of a source chunk decodes only
 * the blosc blocks that hold it (blocks of `unit` bytes), a copy may run in one
 * stage whatever the chunks: a task writes a block of whole output chunks,
 * reading from every source chunk it overlaps only its part (see exec/run.c
 * copy_region). How a part is read (slice_read) sets its cost:
 * - local stores: the chunk is mapped and decoded from the part's first byte to
 *   its last (zarr/read.c). The part's bytes count as a whole chunk's read
 *   does in rechunk_copy_cost; the others decoded with them only as decoding,
 *   which costs little for a fast decoder.
 * - remote stores: only the blocks the part's runs lie in are fetched and
 *   decoded (zarr/part.c), every byte of them counted, and a cost per range
 *   fetched (runs closer together than a block share one).
 * Each (source chunk, block) pair also costs a chunk operation. A task's
 * memory is its block (`held`) + `fixed_mem` (writing one output chunk, the
 * read's scratch). rechunk_slice_choose picks a block leaving at least
 * `threads` tasks (or as many as one output chunk per task gives, if fewer): it
 * grows the block from one output chunk, one axis at a time,
 * to the size (the axis cut in q equal pieces, or doubled) that lowers the cost
 * counted as wall time on `threads` threads (rounds of equal blocks) most, while
 * it fits max_mem, the block's bytes counted `held` 1024ths (1024: once; more
 * when the chunks written stay in memory). Returns false when even one output
 * chunk per task does not fit; else fills block (multiples of `to`), *mem and
 * *cost (the total). */
typedef struct {
    size_t unit;  /* bytes a partial read decodes at a time (zarr_probe_info.unit); 0: whole chunks */
    bool fast;    /* the blocks decode near memory speed (zarr_probe_info.fast) */
    double ratio; /* stored / decoded bytes (zarr_probe_info.ratio; 0: unknown) */
    bool remote;  /* parts are fetched by their blocks (zarr_probe_info.remote) */
} slice_read;

bool rechunk_slice_choose(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                          const slice_read *rd, size_t fixed_mem, unsigned held, size_t max_mem, int64_t threads,
                          int64_t *block, size_t *mem, double *cost);
double rechunk_slice_cost(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                          const slice_read *rd, const int64_t *block);

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

/* A planning session's memo of chain-search tables (candidate chunkings, and
 * every copy's memory and cost between them: most of a plan's time; they do
 * not depend on max_mem), so that the same rechunk planned again is not
 * searched again: under the planner's shrinking budgets, in the plans made
 * again for a refusal's figure, and for the copies of one geometry a four-step
 * FFT makes (a 2^40-point fftn refused: 388 searches, 112 distinct). It keeps the
 * MEMO_MAX last used (rechunk_plan.c). rechunk_plan_make_in is
 * rechunk_plan_make with a memo (NULL: none). */
typedef struct rechunk_memo rechunk_memo;
rechunk_memo *rechunk_memo_new(void);
void rechunk_memo_free(rechunk_memo *m);
int rechunk_plan_make_in(rechunk_memo *memo, int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst,
                         size_t itemsize, size_t max_mem, rechunk_plan *out);

/* The smallest max_mem for which rechunk_plan_make succeeds (it succeeds with this
 * value and fails with one byte less); 0 for an empty array, SIZE_MAX on bad
 * arguments or out of memory. Lets callers say what to change. */
size_t rechunk_plan_min_mem(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize);

#endif
