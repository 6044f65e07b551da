/* core/pool.h — a fixed thread pool running parallel loops.
 *
 *   int work(void *ctx, size_t i, int slot) { ... return 0 or ZC_E*; }
 *   rc = pool_for(pool_default(), n, 0, work, ctx);
 *
 * pool_for blocks until every index ran (or one failed: then no new index
 * starts, and the failure's code and message come back to the caller's
 * thread). The calling thread works too. A pool_for called from inside a task
 * runs inline, so nested parallel loops cannot deadlock. Several threads may
 * call pool_for on one pool at once. */
#ifndef ZC_CORE_POOL_H
#define ZC_CORE_POOL_H

#include <stddef.h>

typedef struct pool pool;
/* `slot` is in [0, width): no two threads run tasks of one pool_for with the same
 * slot at once, so per-slot scratch buffers need no lock. */
typedef int (*pool_fn)(void *ctx, size_t index, int slot);

/* A pool with `nthreads` threads in all, counting the caller (so nthreads-1 workers). */
int pool_create(int nthreads, pool **out);
void pool_free(pool *p);
/* Run fn(ctx, i, slot) for i in [0, n) on at most `width` threads (0 = all).
 * Callers sizing per-slot state use pool_width(p, width). */
int pool_for(pool *p, size_t n, int width, pool_fn fn, void *ctx);
/* Number of slots pool_for(p, n, width, ...) may use. */
int pool_width(const pool *p, int width);
/* Threads in the pool, counting the caller. */
int pool_size(const pool *p);
/* The process-wide pool: ZC_NUM_THREADS or the number of online CPUs. Never NULL
 * unless thread creation fails (then NULL: callers run inline). */
pool *pool_default(void);
/* 1 if the calling thread is running a pool task (a pool_for from here runs inline). */
int pool_in_task(void);
/* Number of online CPUs (>= 1). */
int pool_ncpu(void);

#endif
