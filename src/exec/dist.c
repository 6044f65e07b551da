/* exec/dist.c — zc_dist_run: a saved plan on worker processes or MPI ranks,
 * and its report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "exec/rmtree.h"
#include "core/json.h"
#include "exec/coordinate.h"
#include "exec/exec_mpi.h"
#include "exec/exec_processes.h"
#include "exec/markers.h"
#include "exec/run.h"

/* After success: the intermediates "op<k>" and the markers go. */
static void finalize(const exec_taskset *ts)
{
    for (int k = 0; k < ts->nops; k++) {
        if (ts->output[k]) continue;
        char sub[PATH_MAX + 32];
        snprintf(sub, sizeof sub, "%s/op%d", ts->work_dir, k);
        exec_rm_tree(sub);
    }
    exec_marker_clear(ts->work_dir);
    char faults[PATH_MAX + 32];
    snprintf(faults, sizeof faults, "%s/zcube-fault", ts->work_dir); /* ZCUBE_FAULT's counters */
    exec_rm_tree(faults);
}

static int report(const zc_dist_spec *ds, const exec_taskset *ts, const exec_coord_opts *o, const taskqueue *q,
                  double seconds, zc_report **out)
{
    json_error_t jerr;
    json_t *doc = json_loads(ds->plan_json, 0, &jerr), *ops = json_object_get(doc, "operations");
    if (!doc) return zc__err(ZC_EFORMAT, "plan summary: %s", jerr.text);
    for (int k = 0; k < ts->nops; k++) {
        json_t *op = json_array_get(ops, (size_t)k);
        json_object_set_new(op, "seconds", json_real(o->op_seconds[k]));
        json_object_set_new(op, "skipped", json_integer(o->op_skipped[k]));
    }
    json_t *ws = json_array();
    for (int w = 0; w < q->nw; w++) {
        const tq_worker *k = &q->w[w];
        json_array_append_new(ws, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:f}", "worker", w, "tasks",
                                            (json_int_t)k->tasks, "units", (json_int_t)k->units, "retried",
                                            (json_int_t)k->retried, "backups", (json_int_t)k->backups, "failures",
                                            (json_int_t)k->failures, "seconds_busy", k->busy));
    }
    json_object_set_new(doc, "workers", ws);
    json_object_set_new(doc, "executor", json_string(ds->executor));
    json_object_set_new(doc, "seconds", json_real(seconds));
    json_object_set_new(doc, "skipped", json_integer(o->skipped));
    json_object_set_new(doc, "revived", json_integer(o->revived));
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (!text) return ZC_ENOMEM;
    int rc = exec_report_new(text, out);
    free(text);
    return rc;
}

int zc_dist_run(const zc_dist_spec *ds, const char *plan_path, zc_report **out)
{
    zc__err_clear();
    if (out) *out = NULL;
    if (!ds || !plan_path || !ds->plan_json) return zc__err(ZC_EINVAL, "zc_dist_run: NULL argument");
    if (ds->struct_size != sizeof *ds) return zc__err(ZC_EINVAL, "zc_dist_run: struct_size %u is not a known version", ds->struct_size);
    if (ds->retries < 0 || ds->retries > 1000) return zc__err(ZC_EINVAL, "retries %d: expected 0..1000", ds->retries);
    const char *ex = ds->executor ? ds->executor : "processes";
    bool mpi = !strcmp(ex, "mpi");
    if (!mpi && strcmp(ex, "processes")) return zc__err(ZC_EINVAL, "unknown distributed executor '%s' (processes, mpi)", ex);
    int workers = ds->workers > 0 ? ds->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers < 1) workers = 1;
    if (!mpi && (!ds->worker_argv || !ds->worker_argv[0]))
        return zc__err(ZC_EINVAL, "the processes executor needs the worker command (worker_argv)");
    exec_taskset ts;
    ZC_TRY(exec_taskset_open(&ts, plan_path, ds->plan_json, ds->nthreads));
    if (!ds->resume) exec_marker_clear(ts.work_dir); /* a fresh run: markers of an earlier one mean nothing */
    exec_transport t = {0};
    int rc = mpi ? exec_mpi_open(&t, &ts) : exec_processes_open(&t, workers, ds->worker_argv);
    if (rc < 0) {
        exec_taskset_close(&ts);
        return rc;
    }
    taskqueue q;
    exec_coord_opts o = {.retries = ds->retries, .backups = ds->backups != 0, .resume = ds->resume != 0,
                         .progress = ds->progress, .progress_ctx = ds->progress_ctx};
    o.op_seconds = zc__calloc((size_t)ts.nops, sizeof *o.op_seconds);
    o.op_skipped = zc__calloc((size_t)ts.nops, sizeof *o.op_skipped);
    rc = o.op_seconds && o.op_skipped ? tq_init(&q, t.nworkers, ds->retries, ds->backups != 0) : ZC_ENOMEM;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == 0) {
        rc = exec_coordinate(&t, &ts, &o, &q);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        char msg[1024];
        zc_errmsg_r(msg, sizeof msg); /* closing the transport may overwrite it */
        if (mpi) exec_mpi_close(&t, rc);
        else exec_processes_close(&t);
        zc__err_set_text(msg);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (rc == 0) finalize(&ts);
        if (rc == 0 && out) rc = report(ds, &ts, &o, &q, secs, out);
        tq_free(&q);
    } else if (mpi) {
        exec_mpi_close(&t, rc);
    } else {
        exec_processes_close(&t);
    }
    zc__free(o.op_seconds);
    zc__free(o.op_skipped);
    exec_taskset_close(&ts);
    return rc;
}
