/* exec/exec_slurm.c — the slurm executor: one job array per operation, chained
 * with --dependency=afterok, and a last job that finalizes (see dist.h for the
 * files in the work directory).
 *
 * Array element i of operation k runs the i-th line "first last limit" of
 * WORK/zcube-slurm/op<k>.ranges (the tasks without a completion marker, cut
 * into ranges of tasks_per_job; limit: seconds before the range is abandoned,
 * 0 none, deadline.h) through zc_dist_job. Unless detached, the
 * submitter polls the markers (the progress bar) and squeue: when every job has
 * left the queue and WORK/zcube-complete is absent, a job failed (Slurm cancels
 * the jobs after it: DependencyParameters=kill_invalid_depend); the chain is
 * submitted again for the missing tasks, up to `retries` times. */
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
#include "exec/deadline.h"
#include "exec/dist.h"
#include "exec/markers.h"
#include "exec/spawn.h"
#include "exec/taskqueue.h"

#define SLURM_DIR "zcube-slurm"
#define MAX_ARGS 64

/* 'text' quoted for the shell of --wrap. */
static void shell_quote(char *dst, size_t size, const char *s)
{
    size_t n = 0;
    if (n + 1 < size) dst[n++] = '\'';
    for (; *s && n + 5 < size; s++) {
        if (*s == '\'') {
            memcpy(dst + n, "'\\''", 4);
            n += 4;
        } else {
            dst[n++] = *s;
        }
    }
    if (n + 1 < size) dst[n++] = '\'';
    dst[n] = 0;
}

/* sbatch ... --wrap cmd; the new job's id into id. */
static int sbatch(const zc_dist_spec *ds, const char *name, const char *array, const char *log, const char *after,
                  const char *cmd, char *id, size_t idsize)
{
    const char *argv[MAX_ARGS + 16];
    char dep[256], extra[1024];
    int n = 0;
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    argv[n++] = "-J";
    argv[n++] = name;
    argv[n++] = "-o";
    argv[n++] = log;
    if (array) argv[n++] = array;
    if (after && *after) {
        snprintf(dep, sizeof dep, "--dependency=afterok:%s", after);
        argv[n++] = dep;
    }
    snprintf(extra, sizeof extra, "%s", ds->sbatch_args ? ds->sbatch_args : "");
    for (char *tok = strtok(extra, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (n >= MAX_ARGS) return zc__err(ZC_EINVAL, "sbatch_args: too many arguments");
        argv[n++] = tok;
    }
    argv[n++] = "--wrap";
    argv[n++] = cmd;
    argv[n] = NULL;
    char out[2048];
    int st = exec_spawn(argv, out, sizeof out);
    if (st < 0) return st;
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    char *semi = strchr(out, ';'); /* "id;cluster" on federations */
    if (semi) *semi = 0;
    if (st != 0 || !out[0] || strspn(out, "0123456789") != strlen(out))
        return zc__err(ZC_EIO, "sbatch failed (exit %d): %.300s", st, out);
    snprintf(id, idsize, "%s", out);
    return 0;
}

/* Write op's ranges of tasks still missing; returns how many (0: none). */
static int write_ranges(const zc_dist_spec *ds, const exec_taskset *ts, int op, const char *dir)
{
    int64_t n = ts->tasks[op];
    unsigned char *done = zc__calloc((size_t)n + 1, 1);
    if (!done) return ZC_ENOMEM;
    int64_t have = exec_marker_load(ts->work_dir, op, n, done);
    taskqueue q;
    int rc = have < 0 ? (int)have : tq_init(&q, 1, 0, false);
    if (rc == 0) {
        rc = tq_begin(&q, n, done, ds->tasks_per_job);
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/op%d.ranges", dir, op);
        FILE *f = rc == 0 ? fopen(path, "w") : NULL;
        if (rc == 0 && !f) rc = zc__err_sys(errno, "writing '%s'", path);
        for (int i = 0; f && i < q.nu; i++)
            fprintf(f, "%lld %lld %.3f\n", (long long)q.u[i].first, (long long)q.u[i].last,
                    exec_range_limit(ds->task_timeout, q.u[i].last - q.u[i].first, ts->nthreads));
        if (f && fclose(f) != 0) rc = zc__err(ZC_EIO, "writing '%s'", path);
        if (rc == 0) rc = q.nu;
        tq_free(&q);
    }
    zc__free(done);
    return rc;
}

/* Submit the chain for every task still missing; job ids appended to jobs. */
static int submit(const zc_dist_spec *ds, const exec_taskset *ts, char *jobs, size_t jsize)
{
    char dir[PATH_MAX + 32], exe[PATH_MAX * 2], plan[PATH_MAX * 2];
    snprintf(dir, sizeof dir, "%s/" SLURM_DIR, ts->work_dir);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) return zc__err_sys(errno, "creating '%s'", dir);
    shell_quote(exe, sizeof exe, ds->worker_argv[0]);
    shell_quote(plan, sizeof plan, ts->plan_path);
    char prev[64] = "", id[64];
    jobs[0] = 0;
    for (int k = 0; k < ts->nops; k++) {
        if (ts->tasks[k] == 0) continue;
        int m = write_ranges(ds, ts, k, dir);
        if (m < 0) return m;
        if (m == 0) continue;
        char name[48], array[48], log[PATH_MAX + 64], cmd[PATH_MAX * 5];
        snprintf(name, sizeof name, "zcube-op%d", k);
        snprintf(array, sizeof array, "--array=0-%d", m - 1);
        snprintf(log, sizeof log, "%s/op%d-%%a.log", dir, k);
        snprintf(cmd, sizeof cmd, "exec %s worker %s --job-op %d --threads %d", exe, plan, k, ts->nthreads);
        ZC_TRY(sbatch(ds, name, array, log, prev, cmd, id, sizeof id));
        snprintf(prev, sizeof prev, "%s", id);
        size_t l = strlen(jobs);
        snprintf(jobs + l, jsize - l, "%s%s", l ? "," : "", id);
    }
    char log[PATH_MAX + 64], cmd[PATH_MAX * 5];
    snprintf(log, sizeof log, "%s/final.log", dir);
    snprintf(cmd, sizeof cmd, "exec %s worker %s --finalize", exe, plan);
    ZC_TRY(sbatch(ds, "zcube-final", NULL, log, prev, cmd, id, sizeof id));
    size_t l = strlen(jobs);
    snprintf(jobs + l, jsize - l, "%s%s", l ? "," : "", id);
    char ids[PATH_MAX + 64];
    snprintf(ids, sizeof ids, "%s/jobs", dir);
    FILE *f = fopen(ids, "a");
    if (f) {
        fprintf(f, "%s\n", jobs);
        fclose(f);
    }
    return 0;
}


/* Whether any of the jobs is still queued or running. */
static int queued(const char *jobs, bool *any)
{
    const char *argv[] = {"squeue", "-h", "-o", "%i", "-j", jobs, NULL};
    char out[4096];
    int st = exec_spawn(argv, out, sizeof out);
    if (st < 0) return st;
    /* squeue fails with "Invalid job id" once every job has been purged */
    *any = st == 0 && strspn(out, " \n") != strlen(out);
    return 0;
}

/* The first operation not finished, and its done tasks (progress). */
static int progress(const zc_dist_spec *ds, const exec_taskset *ts, int *shown)
{
    for (int k = 0; k < ts->nops; k++) {
        int64_t n = ts->tasks[k];
        if (!n) continue;
        unsigned char *done = zc__calloc((size_t)n, 1);
        if (!done) return ZC_ENOMEM;
        int64_t d = exec_marker_load(ts->work_dir, k, n, done);
        zc__free(done);
        if (d < 0) return (int)d;
        if (ds->progress && (d < n || *shown < k)) {
            zc_progress pr = {k, ts->names[k], d, n};
            if (ds->progress(&pr, ds->progress_ctx)) return zc__err(ZC_ECANCELED, "computation canceled");
            if (d == n) *shown = k;
        }
        if (d < n) return 0;
    }
    return 0;
}

static void scancel(const char *jobs)
{
    const char *argv[] = {"scancel", jobs, NULL};
    char out[512];
    exec_spawn(argv, out, sizeof out);
}

int exec_slurm_run(const zc_dist_spec *ds, const exec_taskset *ts, char **jobs_out, int *submissions)
{
    size_t jsize = 64 * ((size_t)ts->nops + 2);
    char *jobs = zc__calloc(jsize, 1);
    if (!jobs) return ZC_ENOMEM;
    *jobs_out = jobs;
    *submissions = 0;
    int rc = submit(ds, ts, jobs, jsize);
    if (rc < 0 || ds->detach) return rc;
    *submissions = 1;
    int shown = -1;
    while (!exec_complete(ts)) {
        struct timespec pause = {0, 300000000};
        nanosleep(&pause, NULL);
        if ((rc = progress(ds, ts, &shown)) < 0) {
            scancel(jobs);
            return rc;
        }
        bool any;
        if ((rc = queued(jobs, &any)) < 0) return rc;
        if (any || exec_complete(ts)) continue;
        if (*submissions > ds->retries)
            return zc__err(ZC_EIO, "the Slurm jobs %s ended without finishing the run (submitted %d times); "
                           "see the logs in %s/" SLURM_DIR, jobs, *submissions, ts->work_dir);
        (*submissions)++;
        if ((rc = submit(ds, ts, jobs, jsize)) < 0) return rc;
    }
    return 0;
}

int zc_dist_job(const char *plan_path, int op, int64_t index, int nthreads)
{
    zc__err_clear();
    if (!plan_path || op < 0) return zc__err(ZC_EINVAL, "zc_dist_job: bad argument");
    if (index < 0) {
        const char *e = getenv("SLURM_ARRAY_TASK_ID");
        if (!e || !*e) return zc__err(ZC_EINVAL, "no range index: give one or run as a Slurm array job");
        index = atoll(e);
    }
    exec_taskset ts;
    ZC_TRY(exec_taskset_open(&ts, plan_path, NULL, nthreads));
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" SLURM_DIR "/op%d.ranges", ts.work_dir, op);
    FILE *f = fopen(path, "r");
    int rc = f ? 0 : zc__err_sys(errno, "ranges of operation %d", op);
    long long a = -1, b = -1;
    double limit = 0;
    for (int64_t i = 0; rc == 0 && i <= index; i++)
        if (fscanf(f, "%lld %lld %lf", &a, &b, &limit) != 3 || a < 0 || b < a || !(limit >= 0))
            rc = zc__err(ZC_EFORMAT, "'%s' has no range %lld", path, (long long)index);
    if (f) fclose(f);
    if (rc == 0) rc = exec_run_range(&ts, op, a, b, limit);
    exec_taskset_close(&ts);
    return rc;
}

int zc_dist_finalize(const char *plan_path)
{
    zc__err_clear();
    if (!plan_path) return zc__err(ZC_EINVAL, "zc_dist_finalize: NULL plan");
    exec_taskset ts;
    ZC_TRY(exec_taskset_open(&ts, plan_path, NULL, 1));
    char *summary = exec_read_summary(ts.work_dir);
    exec_taskset_close(&ts);
    if (!summary) return ZC_ENOENT;
    int rc = exec_taskset_open(&ts, plan_path, summary, 1);
    zc__free(summary);
    if (rc < 0) return rc;
    /* every operation's tasks must be done: a last job started by hand too early refuses */
    for (int k = 0; k < ts.nops && rc == 0; k++) {
        unsigned char *done = zc__calloc((size_t)ts.tasks[k] + 1, 1);
        int64_t d = done ? exec_marker_load(ts.work_dir, k, ts.tasks[k], done) : ZC_ENOMEM;
        zc__free(done);
        if (d < 0) rc = (int)d;
        else if (d < ts.tasks[k])
            rc = zc__err(ZC_EINVAL, "%s has %lld of %lld tasks done: not finished", ts.names[k], (long long)d,
                         (long long)ts.tasks[k]);
    }
    if (rc == 0) rc = exec_finalize(&ts);
    exec_taskset_close(&ts);
    return rc;
}
