/* exec/memcheck.h — a run's memory, measured per stage against its bound.
 *
 * What the allocator counts (zc__alloc_held: blocks in use plus its caches of
 * freed blocks) and what the kernel counts (RSS, with its per-stage peak from
 * VmHWM) are both recorded for every stage, so the report can say whether
 *
 *   RSS growth <= counted growth + file mappings + the uncounted reserve   (agrees)
 *   peak RSS - RSS at the start <= threads x allowed_mem + cache_mem
 *                                  + the caller's buffer + data kept in memory
 *                                  stores + the reserve                    (within_bound)
 *
 * held, rather than assumed. The reserve is what no task's count can include:
 * the allocator's per-thread caches of freed blocks (counted as held, outside
 * the tasks' limits) and what the allocator never sees (FFTW plans, OpenBLAS
 * buffers, io_uring rings, c-blosc temporaries, thread stacks, malloc's slack). */
#ifndef ZC_EXEC_MEMCHECK_H
#define ZC_EXEC_MEMCHECK_H

#include "plan/plan.h"

typedef struct {
    size_t block_cache; /* (threads + 1) x the allocator's per-thread cache of freed blocks */
    size_t fft;         /* FFTW plans (FFT stages) */
    size_t blas;        /* OpenBLAS's buffers (matmul and decomposition stages) */
    size_t runtime;     /* thread stacks, io_uring rings, c-blosc temporaries, malloc slack */
    size_t uncounted;   /* fft + blas + runtime: resident, never seen by the allocator */
    size_t total;       /* block_cache + uncounted */
} mem_reserve;

typedef struct {
    bool ran;
    bool measured;      /* the peak was reset and both reads worked, with no other
                           computation's stage running in the process meanwhile */
    unsigned epoch;     /* peak resets in the process when this stage began */
    size_t rss_start, rss_peak;   /* VmRSS at the start, VmHWM at the end */
    size_t held_start, held_peak; /* the allocator's held bytes (caches included) */
    size_t cur_end;               /* bytes in use at the end (data kept in memory stores) */
    size_t mapped_peak;
} mem_stage;

typedef struct {
    int threads;
    size_t allowed_mem, cache_mem, extra;
    mem_reserve reserve;
    size_t rss_base, cur_base;
    mem_stage *st; /* per plan stage */
    int nstages;
} memcheck;

/* extra: bytes the run writes outside the allocator that are not working memory
 * (zc_compute_buffer's destination). */
int memcheck_init(memcheck *m, const plan *p, const zc_spec *spec, size_t extra);
void memcheck_begin(memcheck *m, int k);
void memcheck_end(memcheck *m, int k);
/* Add "memory" (the reserve, the bound and, after a run, per-stage figures and
 * the verdicts) to a report or plan JSON text (replaced in *json). */
void memcheck_annotate(const memcheck *m, char **json);
void memcheck_free(memcheck *m);

#endif
