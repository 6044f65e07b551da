/* plan/sort.h — the SORT node kind (ops/sort.c builds it; the planner
 * chooses its steps).
 *
 * zc_sort and zc_argsort make one node of step WHOLE. When a task holding
 * whole lines along the axis fits the memory bound, it stays so: one stage
 * whose tasks each sort a block of whole lines (a task block: the lines of a
 * block of chunks, written as several chunks). Otherwise its expansion turns it
 * into an external sample sort of two stages:
 *
 *   RUNS   input x; the lines cut into runs of `run` elements, each run
 *          sorted (stable) and stored as records [value | int64 index along
 *          the axis] followed by `samples` records: the run's elements at
 *          positions j·len/s (regular samples, the first being its minimum).
 *          Dims: x's other dims, then runs × (run + samples) along the last;
 *          stored uncompressed, so a merge reads byte ranges of runs.
 *   MERGE  input RUNS; a task makes elements [o0, o1) of the sorted lines:
 *          it walks all the samples of a line (R·s keys) in order, merging
 *          the runs' (each sorted), bounds the rank
 *          of every sample from the positions of the samples before it in
 *          each run, takes the last sample whose rank is surely <= o0 and the
 *          first whose rank is surely >= o1, reads from every run the
 *          positions between the two samples' brackets, sorts what it read,
 *          finds the exact rank of the lower sample in it and keeps
 *          [o0, o1). What it reads is fewer than (o1 - o0) + 2(R + 1)·g
 *          elements, g = ceil(run / samples): the planner chooses the run,
 *          the samples and the task's block along the axis to fit the bound
 *          before any work (no data-dependent memory).
 *
 * Order: the key order of kernels/sort.h (NaNs last; ties by position). */
#ifndef ZC_PLAN_SORT_H
#define ZC_PLAN_SORT_H

#include "plan/array.h"

typedef enum { SORT_WHOLE, SORT_RUNS, SORT_MERGE } sort_step;

/* The kind's row is kind_sort (plan/kind.c): regions, projections, the
 * expansion into runs and merge (expand), the whole-lines / merge-span task
 * blocks (task_block), names and saved parameters. */

#endif
