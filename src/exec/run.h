/* exec/run.h — running a plan's stages, whole or in slices (for workers). */
#ifndef ZC_EXEC_RUN_H
#define ZC_EXEC_RUN_H

#include "plan/plan.h"

/* spec->work_dir, or a fresh $TMPDIR/zcube-work-<pid>-<n>. */
int exec_work_dir(const zc_spec *spec, char *buf, size_t size);
/* Create every stage's array (targets, and work_dir intermediates "op<k>"). */
int exec_prepare(plan *p, const zc_target *targets, zc_store *work, int resume);
/* Open every stage's array, created before by exec_prepare (a worker). */
int exec_open(plan *p, const zc_target *targets, zc_store *work);
/* Run tasks [first, last) of stage k. */
int exec_run_stage(plan *p, int k, int64_t first, int64_t last, const zc_spec *spec);
/* Close the stage arrays and free the plan. */
void exec_finish(plan *p);

#endif
