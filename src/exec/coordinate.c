/* exec/coordinate.c — the coordinator loop (coordinate.h). */
#include "exec/coordinate.h"

#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "exec/deadline.h"
#include "exec/markers.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t unit_size(const exec_coord_opts *o, int64_t tasks, int nworkers)
{
    if (o->unit_tasks > 0) return o->unit_tasks;
    int64_t u = tasks / ((int64_t)nworkers * 4);
    return u < 1 ? 1 : u > 64 ? 64 : u;
}

/* Hand units to idle live workers; returns how many workers are busy. */
static int assign(exec_transport *t, const exec_taskset *ts, const exec_coord_opts *o, taskqueue *q, int op, double now)
{
    int busy = 0;
    for (int w = 0; w < q->nw; w++) {
        if (!q->w[w].alive) continue;
        if (q->w[w].unit == -1) {
            int u = tq_pick(q, w, now);
            if (u >= 0) { /* a start that fails is followed by the worker's EXEC_EV_DIED, which retries the unit */
                const tq_unit *x = &q->u[u];
                (void)t->start(t, w, op, x->first, x->last,
                               exec_range_limit(o->task_timeout, x->last - x->first, ts->nthreads));
            }
        }
        busy += q->w[w].unit != -1;
    }
    return busy;
}

/* A worker that abandoned a hung range takes no more: a process ends (its
 * EXEC_EV_DIED follows, then a new one replaces it), a rank is left idle. */
static void retire(const exec_transport *t, taskqueue *q, int w, const exec_event *ev)
{
    if (!ev->retire) return;
    if (t->revive) q->w[w].unit = TQ_ENDING;
    else q->w[w].alive = false;
}

static int run_op(exec_transport *t, const exec_taskset *ts, exec_coord_opts *o, taskqueue *q, int op)
{
    int64_t n = ts->tasks[op], ndone = 0;
    unsigned char *done = NULL;
    if (n == 0) return 0;
    if (o->resume) {
        done = zc__calloc((size_t)n, 1);
        if (!done) return ZC_ENOMEM;
        ndone = exec_marker_load(ts->work_dir, op, n, done);
        if (ndone < 0) {
            zc__free(done);
            return (int)ndone;
        }
    }
    o->op_skipped[op] = ndone;
    o->skipped += ndone;
    int rc = tq_begin(q, n, done, unit_size(o, n, q->nw));
    zc__free(done);
    if (rc < 0) return rc;
    while (rc == 0 && !tq_finished(q)) {
        double t0 = now();
        int busy = assign(t, ts, o, q, op, t0);
        int alive = 0;
        for (int w = 0; w < q->nw; w++) alive += q->w[w].alive;
        if (!alive) return zc__err(ZC_EIO, "no worker left: every one died or timed out (%s, %lld of %lld tasks done)", ts->names[op],
                                   (long long)ndone, (long long)n);
        if (!busy) return zc__err(ZC_EINTERNAL, "%s: units pending but none can start", ts->names[op]);
        exec_event ev;
        if ((rc = t->wait(t, 50, &ev)) < 0) break;
        double t1 = now();
        if (ev.kind == EXEC_EV_NONE) continue;
        int w = ev.worker;
        if (q->w[w].unit == TQ_STALE) tq_stale_end(q, w, t1);
        else if (q->w[w].unit < 0 && ev.kind != EXEC_EV_DIED)
            return zc__err(ZC_EINTERNAL, "worker %d reported a range it was not running", w);
        if (q->w[w].unit < 0 && ev.kind != EXEC_EV_DIED) {
            retire(t, q, w, &ev);
            continue;
        }
        if (ev.kind == EXEC_EV_DONE) {
            int64_t k = tq_done(q, w, t1);
            ndone += k;
            if (k && o->progress) {
                zc_progress pr = {op, ts->names[op], ndone, n};
                if (o->progress(&pr, o->progress_ctx)) rc = zc__err(ZC_ECANCELED, "computation canceled");
            }
            continue;
        }
        const char *first_msg = NULL;
        int st = 0;
        if (q->w[w].unit >= 0) {
            const tq_unit *u = &q->u[q->w[w].unit];
            int64_t a = u->first, b = u->last;
            st = ev.kind == EXEC_EV_DIED
                     ? tq_failed(q, w, ZC_EIO, ev.msg, true, t1, &first_msg)
                     : tq_failed(q, w, ev.status, ev.msg, exec_retryable(ev.status), t1, &first_msg);
            if (st < 0)
                rc = zc__err(st, "%s, tasks %lld..%lld (worker %d): %s", ts->names[op], (long long)a, (long long)b - 1, w,
                             first_msg);
        }
        retire(t, q, w, &ev);
        if (ev.kind == EXEC_EV_DIED) {
            if (q->w[w].unit == TQ_ENDING) q->w[w].unit = -1;
            q->w[w].alive = false;
            if (t->revive && t->revive(t, w) == 0) {
                q->w[w].alive = true;
                o->revived++;
            }
        }
    }
    return rc;
}

int exec_coordinate(exec_transport *t, const exec_taskset *ts, exec_coord_opts *o, taskqueue *q)
{
    for (int k = 0; k < ts->nops; k++) {
        double t0 = now();
        int rc = run_op(t, ts, o, q, k);
        o->op_seconds[k] = now() - t0;
        if (rc < 0) return rc;
    }
    return 0;
}
