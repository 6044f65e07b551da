/* exec/coordinate.h — running a saved plan's operations through a transport.
 *
 * Operations run in order; each one's tasks (those without a completion marker
 * when resuming) are handed out dynamically in units of a few tasks
 * (taskqueue.h), with retries and backup copies. A worker that dies has its
 * unit retried elsewhere and is replaced when the transport can. */
#ifndef ZC_EXEC_COORDINATE_H
#define ZC_EXEC_COORDINATE_H

#include "exec/taskqueue.h"
#include "exec/transport.h"
#include "zcube.h"

typedef struct {
    int retries;
    bool backups, resume;
    int64_t unit_tasks;        /* tasks per unit, 0 = about 4 units per worker, at most 64 tasks */
    double task_timeout;       /* seconds a task may take (a unit's limit: exec_range_limit), 0 = none */
    zc_progress_fn progress;
    void *progress_ctx;
    /* filled */
    double *op_seconds;        /* per operation (caller-allocated, nops entries) */
    int64_t *op_skipped;
    int64_t skipped;
    int revived;               /* workers replaced after dying */
} exec_coord_opts;

/* Run every operation; per-worker statistics stay in q (initialized by the caller
 * with tq_init for t->nworkers). Returns 0 or the first failure (message set). */
int exec_coordinate(exec_transport *t, const exec_taskset *ts, exec_coord_opts *o, taskqueue *q);

#endif
