/* exec/executor.h — where a stage's tasks run.
 *
 * An executor runs tasks 0..n-1 of a stage and returns the first failure.
 * "sequential" runs them one after another on the calling thread; "threads"
 * on the process's thread pool. Processes and MPI ranks will be executors too:
 * they receive the plan as JSON and run (stage, block range) slices of it
 * (`zcube worker`). */
#ifndef ZC_EXEC_EXECUTOR_H
#define ZC_EXEC_EXECUTOR_H

#include <stddef.h>

#include "core/pool.h"

typedef struct exec_backend {
    const char *name;
    /* Run fn(ctx, i, slot) for i in [0, n) on at most `width` threads (0 = all). */
    int (*run)(size_t n, int width, pool_fn fn, void *ctx);
} exec_backend;

/* By name ("threads", "sequential"); NULL name = threads. ZC_EINVAL if unknown. */
int exec_find(const char *name, const exec_backend **out);

#endif
