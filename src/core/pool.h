/* core/pool.h — a fixed thread pool running parallel loops.
 *
 *   int work(void *ctx, size_t i) { ... return 0 or ZC_E*; }
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
typedef int (*pool_fn)(void *ctx, size_t index);

/* A pool with `nthreads` threads in all, counting the caller (so nthreads-1 workers). */
int pool_create(int nthreads, pool **out);
void pool_free(pool *p);
/* Run fn(ctx, i) for i in [0, n) on at most `width` threads (0 = all). */
int pool_for(pool *p, size_t n, int width, pool_fn fn, void *ctx);
/* Threads in the pool, counting the caller. */
int pool_size(const pool *p);
/* The process-wide pool: ZC_NUM_THREADS or the number of online CPUs. Never NULL
 * unless thread creation fails (then NULL: callers run inline). */
pool *pool_default(void);
/* Number of online CPUs (>= 1). */
int pool_ncpu(void);

#endif
