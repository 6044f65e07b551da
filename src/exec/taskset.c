/* exec/taskset.c — the plan as the distributed executors see it (taskset.h). */
#include "exec/taskset.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "exec/fault.h"
#include "exec/markers.h"

static int read_summary(exec_taskset *ts, const char *plan_json)
{
    json_error_t jerr;
    json_t *doc = json_loads(plan_json, 0, &jerr);
    json_t *ops = doc ? json_object_get(doc, "operations") : NULL;
    if (!json_is_array(ops) || json_array_size(ops) == 0 || json_array_size(ops) > 100000) {
        json_decref(doc);
        return zc__err(ZC_EFORMAT, "plan summary: no operations");
    }
    ts->nops = (int)json_array_size(ops);
    ts->tasks = zc__calloc((size_t)ts->nops, sizeof *ts->tasks);
    ts->names = zc__calloc((size_t)ts->nops, sizeof *ts->names);
    ts->output = zc__calloc((size_t)ts->nops, sizeof *ts->output);
    if (!ts->tasks || !ts->names || !ts->output) {
        json_decref(doc);
        return ZC_ENOMEM;
    }
    for (int k = 0; k < ts->nops; k++) {
        json_t *o = json_array_get(ops, (size_t)k), *g = json_object_get(o, "group");
        json_int_t n = json_integer_value(json_object_get(o, "tasks"));
        if (n < 0) n = 0;
        /* a grouped stage's tasks are its group leader's: it runs none of its own */
        ts->tasks[k] = g && json_integer_value(g) != k ? 0 : n;
        snprintf(ts->names[k], sizeof ts->names[k], "%s", json_string_value(json_object_get(o, "name")) ?: "?");
        ts->output[k] = json_is_true(json_object_get(o, "output"));
    }
    json_decref(doc);
    return 0;
}

int exec_taskset_open(exec_taskset *ts, const char *plan_path, const char *plan_json, int nthreads)
{
    memset(ts, 0, sizeof *ts);
    ts->nthreads = nthreads;
    if (snprintf(ts->plan_path, sizeof ts->plan_path, "%s", plan_path) >= (int)sizeof ts->plan_path)
        return zc__err(ZC_EINVAL, "plan path too long");
    json_error_t jerr;
    json_t *doc = json_load_file(plan_path, 0, &jerr);
    if (!doc) return zc__err(ZC_EFORMAT, "plan '%s': line %d: %s", plan_path, jerr.line, jerr.text);
    const char *wd = json_string_value(json_object_get(doc, "work_dir"));
    int rc = 0;
    if (!wd || !*wd) rc = zc__err(ZC_EFORMAT, "plan '%s' has no work_dir", plan_path);
    else snprintf(ts->work_dir, sizeof ts->work_dir, "%s", wd);
    json_decref(doc);
    if (rc == 0) rc = zc_plan_load(plan_path, &ts->plan);
    if (rc == 0 && plan_json) rc = read_summary(ts, plan_json);
    if (rc < 0) exec_taskset_close(ts);
    return rc;
}

void exec_taskset_close(exec_taskset *ts)
{
    if (!ts->hung) zc_plan_free(ts->plan);
    ts->plan = NULL;
    zc__free(ts->tasks);
    zc__free(ts->names);
    zc__free(ts->output);
    ts->tasks = NULL;
    ts->names = NULL;
    ts->output = NULL;
    ts->nops = 0;
}

int exec_taskset_run(const exec_taskset *ts, int op, int64_t first, int64_t last)
{
    if (ts->bench_run) return ts->bench_run(op, first, last);
    ZC_TRY(exec_fault_inject(ts->work_dir, op, first, last));
    zc_spec run = ZC_SPEC_INIT; /* the execution's settings; memory figures are the plan's */
    run.nthreads = ts->nthreads;
    ZC_TRY(zc_plan_execute(ts->plan, &run, op, first, last));
    return exec_marker_put(ts->work_dir, op, first, last);
}

bool exec_retryable(int status)
{
    return status == ZC_EIO || status == ZC_ENOMEM;
}
