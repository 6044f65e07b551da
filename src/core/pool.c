/* core/pool.c — thread pool with parallel-for jobs.
 *
 * Jobs sit in a list under one mutex; workers pick the oldest job that has
 * indices left and room under its width, and claim indices with an atomic
 * counter, so the lock is taken per job, not per index. */
#include "core/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

typedef struct job {
    pool_fn fn;
    void *ctx;
    size_t n;
    atomic_size_t next;   /* next index to claim */
    atomic_int failed;    /* set on first failure: stop claiming */
    atomic_int joined;    /* threads that joined: the next slot number */
    int width;            /* max threads on this job */
    atomic_int active;    /* threads working on it: changed under the pool lock, read by pool_for's spin */
    int err;              /* first error code (under err_lock) */
    char errmsg[ZC_ERRMSG_MAX];
    pthread_mutex_t err_lock;
    struct job *link;
} job;

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t work_cv;  /* a job was posted */
    pthread_cond_t done_cv;  /* a worker left a job */
    job *jobs;
    bool stop;
    int nworkers;
    pthread_t *threads;
};

static _Thread_local bool in_task;

int pool_in_task(void) { return in_task; }

static void run_indices(job *j)
{
    int slot = atomic_fetch_add(&j->joined, 1);
    bool was = in_task;
    in_task = true;
    for (;;) {
        if (atomic_load_explicit(&j->failed, memory_order_relaxed)) break;
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n) break;
        int rc = j->fn(j->ctx, i, slot);
        if (rc < 0) {
            pthread_mutex_lock(&j->err_lock);
            if (!j->err) {
                j->err = rc;
                zc_errmsg_r(j->errmsg, sizeof j->errmsg);
            }
            pthread_mutex_unlock(&j->err_lock);
            atomic_store(&j->failed, 1);
        }
    }
    in_task = was;
}

static job *pick(pool *p)
{
    for (job *j = p->jobs; j; j = j->link)
        if (atomic_load(&j->next) < j->n && !atomic_load(&j->failed) && atomic_load(&j->active) < j->width) return j;
    return NULL;
}

static void *worker(void *arg)
{
    pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        job *j = NULL;
        while (!p->stop && !(j = pick(p))) pthread_cond_wait(&p->work_cv, &p->lock);
        if (p->stop) break;
        atomic_fetch_add(&j->active, 1);
        pthread_mutex_unlock(&p->lock);
        run_indices(j);
        pthread_mutex_lock(&p->lock);
        atomic_fetch_sub(&j->active, 1);
        pthread_cond_broadcast(&p->done_cv);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int pool_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int pool_create(int nthreads, pool **out)
{
    *out = NULL;
    if (nthreads < 1) nthreads = pool_ncpu();
    pool *p = zc__calloc(1, sizeof *p);
    if (!p) return ZC_ENOMEM;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->threads = zc__calloc((size_t)nthreads, sizeof(pthread_t));
    if (!p->threads) { pool_free(p); return ZC_ENOMEM; }
    for (int i = 0; i < nthreads - 1; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p)) {
            pool_free(p);
            return zc__err(ZC_ENOMEM, "cannot create thread %d of the pool", i);
        }
        p->nworkers++;
    }
    *out = p;
    return 0;
}

void pool_free(pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    zc__free(p->threads);
    zc__free(p);
}

int pool_size(const pool *p) { return p ? p->nworkers + 1 : 1; }

static int run_inline(size_t n, pool_fn fn, void *ctx)
{
    for (size_t i = 0; i < n; i++) ZC_TRY(fn(ctx, i, 0));
    return 0;
}

int pool_width(const pool *p, int width)
{
    int all = pool_size(p);
    return width > 0 && width < all ? width : all;
}

/* The caller, done with its indices, waits a little (SPIN_NS) for the
 * workers still in the job before sleeping on done_cv: a short job's last
 * index usually ends within microseconds, and being woken from the condition
 * variable costs 20-30 us here (a fifth of a 250 us read of a small crop). */
#define SPIN_NS 100000
static void wait_workers(job *j)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned k = 1; atomic_load_explicit(&j->active, memory_order_acquire) > 1; k++) { /* 1: the caller */
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (k % 64) continue;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > SPIN_NS) break;
    }
}

int pool_for(pool *p, size_t n, int width, pool_fn fn, void *ctx)
{
    if (n == 0) return 0;
    if (!p || in_task || n == 1 || width == 1 || p->nworkers == 0) return run_inline(n, fn, ctx);
    job j = {.fn = fn, .ctx = ctx, .n = n, .width = width > 0 ? width : p->nworkers + 1};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    atomic_init(&j.joined, 0);
    atomic_init(&j.active, 1); /* the caller */
    pthread_mutex_init(&j.err_lock, NULL);

    pthread_mutex_lock(&p->lock);
    job **tail = &p->jobs;
    while (*tail) tail = &(*tail)->link;
    *tail = &j;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->lock);

    run_indices(&j);
    wait_workers(&j);

    pthread_mutex_lock(&p->lock);
    atomic_fetch_sub(&j.active, 1);
    while (atomic_load(&j.active) > 0) pthread_cond_wait(&p->done_cv, &p->lock);
    for (job **q = &p->jobs; *q; q = &(*q)->link)
        if (*q == &j) { *q = j.link; break; }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_destroy(&j.err_lock);
    if (j.err) zc__err_set_text(j.errmsg);
    return j.err;
}

static pool *default_pool;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void make_default(void)
{
    int n = pool_ncpu();
    const char *env = getenv("ZC_NUM_THREADS");
    if (env && atoi(env) > 0) n = atoi(env);
    if (pool_create(n, &default_pool) < 0) default_pool = NULL;
}

pool *pool_default(void)
{
    pthread_once(&default_once, make_default);
    return default_pool;
}
