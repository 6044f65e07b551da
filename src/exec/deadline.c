/* exec/deadline.c — exec_run_range (deadline.h). */
#include "exec/deadline.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"

typedef struct {
    exec_taskset ts;   /* a copy: an abandoned range may outlive the caller's (the plan it points to is kept) */
    int op;
    int64_t first, last;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int finished, abandoned, status;
    char msg[ZC_ERRMSG_MAX];
} range_job;

static void job_free(range_job *j)
{
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->cv);
    zc__free(j);
}

static void *run(void *arg)
{
    range_job *j = arg;
    int st = exec_taskset_run(&j->ts, j->op, j->first, j->last);
    char msg[ZC_ERRMSG_MAX] = "";
    if (st < 0) zc_errmsg_r(msg, sizeof msg);
    pthread_mutex_lock(&j->lock);
    j->status = st;
    snprintf(j->msg, sizeof j->msg, "%s", msg);
    j->finished = 1;
    int abandoned = j->abandoned;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->lock);
    if (abandoned) job_free(j); /* the caller gave up on it: nobody else holds it */
    return NULL;
}

double exec_range_limit(double task_timeout, int64_t n, int nthreads)
{
    if (task_timeout <= 0) return 0;
    int64_t t = nthreads > 0 ? nthreads : 1;
    return task_timeout * (double)((n + t - 1) / t);
}

int exec_run_range(exec_taskset *ts, int op, int64_t first, int64_t last, double limit)
{
    if (limit <= 0) return exec_taskset_run(ts, op, first, last);
    range_job *j = zc__calloc(1, sizeof *j);
    if (!j) return ZC_ENOMEM;
    j->ts = *ts;
    j->op = op;
    j->first = first;
    j->last = last;
    pthread_mutex_init(&j->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&th, &attr, run, j);
    pthread_attr_destroy(&attr);
    if (e) {
        job_free(j);
        return zc__err_sys(e, "starting a range's thread");
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double whole = (double)(long long)limit;
    end.tv_sec += (time_t)whole;
    end.tv_nsec += (long)((limit - whole) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&j->lock);
    while (!j->finished)
        if (pthread_cond_timedwait(&j->cv, &j->lock, &end) == ETIMEDOUT) break;
    if (!j->finished) {
        j->abandoned = 1;
        pthread_mutex_unlock(&j->lock);
        ts->hung = true;
        return zc__err(ZC_EIO, "operation %d tasks %lld..%lld timed out after %.3g s (--task-timeout)", op,
                       (long long)first, (long long)last - 1, limit);
    }
    pthread_mutex_unlock(&j->lock);
    int st = j->status;
    if (st < 0) zc__err_set_text(j->msg);
    job_free(j);
    return st;
}
