/* exec/taskset.h — all the distributed executors know of a plan.
 *
 * An executor over processes, MPI ranks or batch jobs needs only: how many
 * operations, how many tasks each has, a way to run tasks [first, last) of one
 * operation in this process, and which tasks are done already (completion
 * markers in the work directory, written after a range's chunks are). This
 * interface is the one place that calls the plan: the saved plan is loaded once
 * (zc_plan_load) and every range is a zc_plan_execute(op, first, last). */
#ifndef ZC_EXEC_TASKSET_H
#define ZC_EXEC_TASKSET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "zcube.h"

typedef struct {
    char plan_path[PATH_MAX]; /* the saved plan (zc_plan_save) */
    char work_dir[PATH_MAX];  /* its work directory (markers, intermediates) */
    zc_plan *plan;            /* loaded once; NULL only in benchmarks (bench_run) */
    int nthreads;             /* threads of this process for a range */
    bool hung;                /* a range was abandoned after its time limit (deadline.h):
                                 close leaves the plan to the thread still using it */
    /* from the plan summary (zc_plan_json); nops == 0 on workers, which need none of it */
    int nops;
    int64_t *tasks;           /* per operation */
    char (*names)[64];        /* per operation */
    bool *output;             /* per operation: written to a target (else an intermediate "op<k>") */
    /* benchmarks of the executors only: run this instead of the plan (no faults, no markers) */
    int (*bench_run)(int op, int64_t first, int64_t last);
} exec_taskset;

/* Open a saved plan; plan_json (the zc_plan_json summary of the same plan) may
 * be NULL in workers. */
int exec_taskset_open(exec_taskset *ts, const char *plan_path, const char *plan_json, int nthreads);
void exec_taskset_close(exec_taskset *ts);

/* Run tasks [first, last) of operation op here (faults injected first, see
 * fault.h), then write the range's completion marker. */
int exec_taskset_run(const exec_taskset *ts, int op, int64_t first, int64_t last);

/* Errors a retry may fix: I/O, memory of the moment (not the memory bound). */
bool exec_retryable(int status);

#endif
