/* exec/taskqueue.h — the coordinator's work queue over one operation.
 *
 * The operation's tasks still to do are cut into units (task ranges); idle
 * workers take the next pending unit; a failed unit goes back to the front of
 * the queue, for another worker when there is one, until it failed retries + 1
 * times; when nothing is pending, an idle worker may take a backup copy of a
 * straggler (backup.h). The first copy of a unit to finish counts; later copies
 * only free their worker. Messages per unit are O(1): one to start it, one back. */
#ifndef ZC_EXEC_TASKQUEUE_H
#define ZC_EXEC_TASKQUEUE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    int64_t first, last;
    int running;          /* copies running */
    int failures;         /* copies that failed */
    bool done, backed_up;
    int failed_on;        /* worker of the last failure, -1 none */
    double started;       /* start of the oldest running copy */
    int first_status;     /* the first failure's status and message */
    char *first_msg;
} tq_unit;

typedef struct {
    int64_t tasks, units, retried, backups, failures;
    double busy;          /* seconds running units */
    int unit;             /* running unit, -1 idle, TQ_STALE: a copy of an earlier operation's unit,
                             TQ_ENDING: retired, its end awaited (coordinate.c) */
    bool backup, retry;   /* what the running copy is */
    double since;
    bool alive;
} tq_worker;

typedef struct {
    tq_unit *u;
    int nu, ndone;
    int *pending;         /* unit indices, a deque: [head, tail) */
    int head, tail;
    tq_worker *w;
    int nw;
    int retries;
    bool backups;
    double *durations;    /* of finished units (the backup policy's median) */
    int ndur;
    double median;        /* of durations[0..median_n) (backup.c) */
    int median_n;
} taskqueue;

#define TQ_STALE (-2)
#define TQ_ENDING (-3)

int tq_init(taskqueue *q, int nworkers, int retries, bool backups);
void tq_free(taskqueue *q);
/* Start an operation: units over the tasks with done[i] == 0, at most `unit_tasks` tasks each. */
int tq_begin(taskqueue *q, int64_t ntasks, const unsigned char *done, int64_t unit_tasks);
bool tq_finished(const taskqueue *q);
/* The unit idle worker w should run now, or -1 (then nothing for it). */
int tq_pick(taskqueue *q, int w, double now);
/* Worker w finished its unit. Returns the number of tasks newly done (0 for a losing copy). */
int64_t tq_done(taskqueue *q, int w, double now);
/* Worker w (unit TQ_STALE) finished or failed: it is idle. */
void tq_stale_end(taskqueue *q, int w, double now);
/* Worker w's unit failed with status and msg. Returns 0 when the unit will be
 * retried (or another copy of it still runs or finished), else the status that
 * ends the run: the unit's first failure, whose message goes to *first_msg. */
int tq_failed(taskqueue *q, int w, int status, const char *msg, bool retryable, double now, const char **first_msg);

#endif
