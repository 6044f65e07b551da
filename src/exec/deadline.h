/* exec/deadline.h — a task range under a time limit (--task-timeout).
 *
 * A worker runs each range it is handed through exec_run_range. With a limit,
 * the range runs on a thread of its own while the caller waits at most `limit`
 * seconds: a range still running then (a hung task: a stuck read, a deadlock)
 * is abandoned, the call fails with ZC_EIO "timed out", and ts->hung is set: the
 * worker must take no more ranges and end (the abandoned thread may hold the
 * plan, so exec_taskset_close leaves it; the process ending frees it). */
#ifndef ZC_EXEC_DEADLINE_H
#define ZC_EXEC_DEADLINE_H

#include "exec/taskset.h"

/* Run tasks [first, last) of op (exec_taskset_run), limit seconds at most (<= 0: no limit). */
int exec_run_range(exec_taskset *ts, int op, int64_t first, int64_t last, double limit);

/* The limit of a range of n tasks on nthreads threads when each task may take
 * task_timeout seconds: task_timeout × ceil(n / nthreads); 0 when task_timeout is 0. */
double exec_range_limit(double task_timeout, int64_t n, int nthreads);

#endif
