/* exec/dist.h — what the distributed executors share beyond the coordinator:
 * the work directory's files.
 *
 *   WORK/zcube-plan-summary.json  the plan summary (zc_plan_json), written by
 *                                 zc_dist_run when it starts
 *   WORK/zcube-done/              completion markers (markers.h)
 *   WORK/zcube-complete           written once the run finished (slurm's last job)
 *   WORK/zcube-slurm/             ranges of each job array, job logs, job ids */
#ifndef ZC_EXEC_DIST_H
#define ZC_EXEC_DIST_H

#include "exec/taskset.h"

#define EXEC_SUMMARY_FILE "zcube-plan-summary.json"
#define EXEC_COMPLETE_FILE "zcube-complete"

/* The summary in work_dir (zc__free it), or NULL with the error set. */
char *exec_read_summary(const char *work_dir);
/* After success: remove the intermediates "op<k>", the markers, the fault counters and
 * zcube-slurm/. */
int exec_finalize(const exec_taskset *ts);
/* Whether the work dir's run finished (exec_finalize began). */
bool exec_complete(const exec_taskset *ts);
/* The slurm executor: submit (and unless ds->detach wait for) the run. *jobs
 * gets the submitted job ids, comma-separated (zc__free it); *submissions how
 * many times the chain was submitted. */
int exec_slurm_run(const zc_dist_spec *ds, const exec_taskset *ts, char **jobs, int *submissions);

#endif
