/* exec/run.h — running a plan's stages, whole or in slices (for workers). */
#ifndef ZC_EXEC_RUN_H
#define ZC_EXEC_RUN_H

#include "plan/plan.h"

/* spec->work_dir (a file:// URL as its path), or a fresh $TMPDIR/zcube-work-<pid>-<n>. */
int exec_work_dir(const zc_spec *spec, char *buf, size_t size);
/* Create every stage's array (targets, and work_dir intermediates "op<k>"). */
int exec_prepare(zc_plan *z, zc_store *work, int resume);
/* Open every stage's array, created before by exec_prepare (a worker). */
int exec_open(plan *p, const zc_target *targets, zc_store *work);
/* Run tasks [first, last) of stage k. */
int exec_run_stage(plan *p, int k, int64_t first, int64_t last, const zc_spec *spec);
/* A report holding a copy of json (the distributed executors' reports). */
int exec_report_new(const char *json, zc_report **out);
/* Close the stage arrays (opened by exec_prepare, exec_open or exec_whole). */
void exec_close(plan *p);
/* Execute every stage of z (spec: the execution's settings, complete), each
 * stage's array created just before it runs; intermediates removed at the end
 * unless spec->resume. With dst, the first output goes into that C-order
 * buffer instead of a target (zc_compute_buffer). The report goes to z->report. */
int exec_whole(zc_plan *z, const zc_spec *spec, void *dst);

#endif
