/* exec/taskqueue.c — the coordinator's work queue (taskqueue.h). */
#include "exec/taskqueue.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "exec/backup.h"

int tq_init(taskqueue *q, int nworkers, int retries, bool backups)
{
    memset(q, 0, sizeof *q);
    q->w = zc__calloc((size_t)nworkers, sizeof *q->w);
    if (!q->w) return ZC_ENOMEM;
    q->nw = nworkers;
    q->retries = retries;
    q->backups = backups;
    for (int i = 0; i < nworkers; i++) {
        q->w[i].unit = -1;
        q->w[i].alive = true;
    }
    return 0;
}

static void free_units(taskqueue *q)
{
    for (int i = 0; i < q->nu; i++) zc__free(q->u[i].first_msg);
    zc__free(q->u);
    zc__free(q->pending);
    zc__free(q->durations);
    q->u = NULL;
    q->pending = NULL;
    q->durations = NULL;
    q->nu = q->ndone = q->ndur = q->head = q->tail = q->median_n = 0;
}

void tq_free(taskqueue *q)
{
    free_units(q);
    zc__free(q->w);
    q->w = NULL;
}

int tq_begin(taskqueue *q, int64_t ntasks, const unsigned char *done, int64_t unit_tasks)
{
    free_units(q);
    for (int w = 0; w < q->nw; w++) /* a losing copy of the last operation's unit still runs there */
        if (q->w[w].unit >= 0) q->w[w].unit = TQ_STALE;
    int64_t n = 0;
    for (int64_t i = 0; i < ntasks;) { /* count first */
        if (done && done[i]) { i++; continue; }
        int64_t j = i;
        while (j < ntasks && j - i < unit_tasks && !(done && done[j])) j++;
        n++;
        i = j;
    }
    if (n > (1 << 30)) return ZC_EOVERFLOW;
    /* a unit is queued once per try: first try, retries, at most once more after a lost copy */
    size_t cap = (size_t)n * (size_t)(q->retries + 2) + 1;
    q->u = zc__calloc((size_t)n + 1, sizeof *q->u);
    q->pending = zc__calloc(cap, sizeof *q->pending);
    q->durations = zc__calloc((size_t)n + 1, sizeof *q->durations);
    if (!q->u || !q->pending || !q->durations) return ZC_ENOMEM;
    for (int64_t i = 0; i < ntasks;) {
        if (done && done[i]) { i++; continue; }
        int64_t j = i;
        while (j < ntasks && j - i < unit_tasks && !(done && done[j])) j++;
        q->u[q->nu] = (tq_unit){.first = i, .last = j, .failed_on = -1};
        q->pending[q->tail++] = q->nu++;
        i = j;
    }
    return 0;
}

bool tq_finished(const taskqueue *q)
{
    return q->ndone == q->nu;
}

static void start(taskqueue *q, int w, int u, double now, bool backup, bool retry)
{
    tq_worker *k = &q->w[w];
    k->unit = u;
    k->backup = backup;
    k->retry = retry;
    k->since = now;
    if (q->u[u].running++ == 0) q->u[u].started = now;
    if (backup) {
        q->u[u].backed_up = true;
        k->backups++;
    }
    if (retry) k->retried++;
}

int tq_pick(taskqueue *q, int w, double now)
{
    /* pending units, skipping any done meanwhile; a retry avoids the worker it failed on
     * when another live worker could take it */
    int alive = 0;
    for (int i = 0; i < q->nw; i++) alive += q->w[i].alive;
    for (int i = q->head; i < q->tail; i++) {
        int u = q->pending[i];
        if (q->u[u].done) {
            if (i == q->head) q->head++;
            continue;
        }
        if (q->u[u].failed_on == w && alive > 1) continue;
        memmove(q->pending + q->head + 1, q->pending + q->head, (size_t)(i - q->head) * sizeof *q->pending);
        q->head++;
        start(q, w, u, now, false, q->u[u].failures > 0);
        return u;
    }
    if (q->head < q->tail) return -1; /* a retry waits for another worker */
    int u = backup_pick(q, now);
    if (u >= 0) start(q, w, u, now, true, false);
    return u;
}

static void stop(taskqueue *q, int w, double now)
{
    tq_worker *k = &q->w[w];
    k->busy += now - k->since;
    k->units++;
    q->u[k->unit].running--;
    k->unit = -1;
}

void tq_stale_end(taskqueue *q, int w, double now)
{
    q->w[w].busy += now - q->w[w].since;
    q->w[w].unit = -1;
}

int64_t tq_done(taskqueue *q, int w, double now)
{
    tq_worker *k = &q->w[w];
    tq_unit *u = &q->u[k->unit];
    double took = now - k->since;
    stop(q, w, now);
    if (u->done) return 0;
    u->done = true;
    q->ndone++;
    q->durations[q->ndur++] = took;
    k->tasks += u->last - u->first;
    return u->last - u->first;
}

int tq_failed(taskqueue *q, int w, int status, const char *msg, bool retryable, double now, const char **first_msg)
{
    tq_worker *k = &q->w[w];
    tq_unit *u = &q->u[k->unit];
    k->failures++;
    stop(q, w, now);
    if (u->done) return 0;
    if (u->failures++ == 0) {
        u->first_status = status;
        u->first_msg = zc__strdup(msg ? msg : "");
    }
    u->failed_on = w;
    if (retryable && u->failures <= q->retries) {
        /* to the front: a retry should not wait behind the whole queue */
        if (q->head > 0) q->pending[--q->head] = (int)(u - q->u);
        else {
            memmove(q->pending + 1, q->pending, (size_t)q->tail * sizeof *q->pending);
            q->pending[0] = (int)(u - q->u);
            q->tail++;
        }
        return 0;
    }
    if (u->running > 0 && retryable) return 0; /* a backup copy may still finish it */
    *first_msg = u->first_msg;
    return u->first_status;
}
