/* exec/dist.c — zc_dist_run: a saved plan on worker processes or MPI ranks,
 * and its report. */
#include <errno.h>
#include <limits.h>
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
#include "exec/dist.h"
#include "exec/exec_mpi.h"
#include "exec/exec_processes.h"
#include "exec/markers.h"
#include "exec/run.h"

bool exec_complete(const exec_taskset *ts)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" EXEC_COMPLETE_FILE, ts->work_dir);
    return access(path, F_OK) == 0;
}

int exec_finalize(const exec_taskset *ts)
{
    /* "complete" first: a run killed while the intermediates and markers below
     * are removed is finished by --resume without running a task (their markers
     * may be half gone while the arrays those tasks write are gone too) */
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" EXEC_COMPLETE_FILE, ts->work_dir);
    FILE *f = fopen(path, "w");
    if (!f || fclose(f) != 0) return zc__err_sys(errno, "writing '%s'", path);
    for (int k = 0; k < ts->nops; k++) {
        if (ts->output[k]) continue;
        char sub[PATH_MAX + 32];
        snprintf(sub, sizeof sub, "%s/op%d", ts->work_dir, k);
        exec_rm_tree(sub);
    }
    exec_marker_clear(ts->work_dir);
    char faults[PATH_MAX + 32];
    snprintf(faults, sizeof faults, "%s/zcube-slurm", ts->work_dir); /* job ranges and logs */
    exec_rm_tree(faults);
    snprintf(faults, sizeof faults, "%s/zcube-fault", ts->work_dir); /* ZCUBE_FAULT's counters */
    exec_rm_tree(faults);
    return 0;
}

char *exec_read_summary(const char *work_dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" EXEC_SUMMARY_FILE, work_dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        zc__err_sys(errno, "'%s' (is this the work directory of a distributed run?)", path);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    for (;;) {
        char *nb = zc__realloc(buf, len + 65537);
        if (!nb) break;
        buf = nb;
        size_t k = fread(buf + len, 1, 65536, f);
        len += k;
        buf[len] = 0;
        if (k < 65536) {
            fclose(f);
            return buf;
        }
    }
    fclose(f);
    zc__free(buf);
    zc__err(ZC_ENOMEM, "reading '%s'", path);
    return NULL;
}

/* The summary into the work directory (atomically: present = whole). */
static int write_summary(const char *work_dir, const char *json)
{
    char path[PATH_MAX + 64], tmp[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/" EXEC_SUMMARY_FILE, work_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return zc__err_sys(errno, "writing '%s'", tmp);
    int ok = fputs(json, f) >= 0;
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
        remove(tmp);
        return zc__err(ZC_EIO, "writing '%s'", path);
    }
    return 0;
}

/* The plan summary with what the run did (q NULL: slurm, no per-worker rows). */
static int report(const zc_dist_spec *ds, const exec_taskset *ts, const exec_coord_opts *o, const taskqueue *q,
                  double seconds, const char *jobs, int submissions, zc_report **out)
{
    json_error_t jerr;
    json_t *doc = json_loads(ds->plan_json, 0, &jerr), *ops = json_object_get(doc, "operations");
    if (!doc) return zc__err(ZC_EFORMAT, "plan summary: %s", jerr.text);
    for (int k = 0; k < ts->nops && q; k++) {
        json_t *op = json_array_get(ops, (size_t)k);
        json_object_set_new(op, "seconds", json_real(o->op_seconds[k]));
        json_object_set_new(op, "skipped", json_integer(o->op_skipped[k]));
    }
    json_t *ws = json_array();
    for (int w = 0; q && w < q->nw; w++) {
        const tq_worker *k = &q->w[w];
        json_array_append_new(ws, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:f}", "worker", w, "tasks",
                                            (json_int_t)k->tasks, "units", (json_int_t)k->units, "retried",
                                            (json_int_t)k->retried, "backups", (json_int_t)k->backups, "failures",
                                            (json_int_t)k->failures, "seconds_busy", k->busy));
    }
    json_object_set_new(doc, "workers", ws);
    json_object_set_new(doc, "executor", json_string(ds->executor ? ds->executor : "processes"));
    json_object_set_new(doc, "seconds", json_real(seconds));
    if (q) {
        json_object_set_new(doc, "skipped", json_integer(o->skipped));
        json_object_set_new(doc, "revived", json_integer(o->revived));
    } else {
        json_object_set_new(doc, "jobs", json_string(jobs ? jobs : ""));
        json_object_set_new(doc, "submissions", json_integer(submissions));
        json_object_set_new(doc, "detached", json_boolean(ds->detach));
    }
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (!text) return ZC_ENOMEM;
    int rc = exec_report_new(text, out);
    free(text);
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* processes or mpi: the coordinator over a transport */
static int run_coordinated(const zc_dist_spec *ds, exec_taskset *ts, bool mpi, zc_report **out)
{
    int workers = ds->workers > 0 ? ds->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers < 1) workers = 1;
    exec_transport t = {0};
    ZC_TRY(mpi ? exec_mpi_open(&t, ts) : exec_processes_open(&t, workers, ds->worker_argv));
    taskqueue q = {0};
    exec_coord_opts o = {.retries = ds->retries, .backups = ds->backups != 0, .resume = ds->resume != 0,
                         .task_timeout = ds->task_timeout, .progress = ds->progress, .progress_ctx = ds->progress_ctx};
    o.op_seconds = zc__calloc((size_t)ts->nops, sizeof *o.op_seconds);
    o.op_skipped = zc__calloc((size_t)ts->nops, sizeof *o.op_skipped);
    int rc = o.op_seconds && o.op_skipped ? tq_init(&q, t.nworkers, ds->retries, ds->backups != 0) : ZC_ENOMEM;
    double t0 = now();
    if (rc == 0 && !(o.resume && exec_complete(ts))) rc = exec_coordinate(&t, ts, &o, &q);
    double secs = now() - t0;
    zc__err_kept kept; /* closing the transport may overwrite it */
    zc__err_keep(&kept);
    if (mpi) exec_mpi_close(&t, rc);
    else exec_processes_close(&t);
    zc__err_restore(&kept);
    if (rc == 0) rc = exec_finalize(ts);
    if (rc == 0 && out) rc = report(ds, ts, &o, &q, secs, NULL, 0, out);
    tq_free(&q);
    zc__free(o.op_seconds);
    zc__free(o.op_skipped);
    return rc;
}

int zc_dist_run(const zc_dist_spec *ds, const char *plan_path, zc_report **out)
{
    zc__err_clear();
    if (out) *out = NULL;
    if (!ds || !plan_path || !ds->plan_json) return zc__err(ZC_EINVAL, "zc_dist_run: NULL argument");
    if (ds->struct_size != sizeof *ds)
        return zc__err(ZC_EINVAL, "zc_dist_run: struct_size %u is not a known version", ds->struct_size);
    if (ds->retries < 0 || ds->retries > 1000) return zc__err(ZC_EINVAL, "retries %d: expected 0..1000", ds->retries);
    if (!(ds->task_timeout >= 0 && ds->task_timeout <= 1e9))
        return zc__err(ZC_EINVAL, "task_timeout %g: expected 0 (none) or up to 1e9 seconds", ds->task_timeout);
    const char *ex = ds->executor ? ds->executor : "processes";
    bool mpi = !strcmp(ex, "mpi"), slurm = !strcmp(ex, "slurm");
    if (!mpi && !slurm && strcmp(ex, "processes"))
        return zc__err(ZC_EINVAL, "unknown distributed executor '%s' (processes, mpi, slurm)", ex);
    if (!mpi && (!ds->worker_argv || !ds->worker_argv[0]))
        return zc__err(ZC_EINVAL, "the %s executor needs the worker command (worker_argv)", ex);
    if (slurm && ds->tasks_per_job < 1) return zc__err(ZC_EINVAL, "tasks_per_job %lld: expected >= 1", (long long)ds->tasks_per_job);
    exec_taskset ts;
    ZC_TRY(exec_taskset_open(&ts, plan_path, ds->plan_json, ds->nthreads));
    int rc = write_summary(ts.work_dir, ds->plan_json);
    if (rc == 0 && !ds->resume) { /* a fresh run: markers of an earlier one mean nothing */
        exec_marker_clear(ts.work_dir);
        char done[PATH_MAX + 32];
        snprintf(done, sizeof done, "%s/" EXEC_COMPLETE_FILE, ts.work_dir);
        remove(done);
    }
    if (rc == 0 && slurm) {
        char *jobs = NULL;
        int subs = 0;
        double t0 = now();
        rc = exec_slurm_run(ds, &ts, &jobs, &subs);
        if (rc == 0 && out) rc = report(ds, &ts, NULL, NULL, now() - t0, jobs, subs, out);
        zc__free(jobs);
    } else if (rc == 0) {
        rc = run_coordinated(ds, &ts, mpi, out);
    }
    exec_taskset_close(&ts);
    return rc;
}
