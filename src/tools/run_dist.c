/* tools/run_dist.c — `--executor processes|mpi|slurm` of `zcube eval`,
 * `rechunk` and `copy` (see eval_run.h and docs/distributed.md).
 *
 * The plan is saved in the work directory (WORK/zcube-plan.json, with the
 * plan summary beside it); --resume reuses them after checking that the
 * command plans the same computation, so the arrays and completion markers of
 * the interrupted run stay valid. Workers are this program again: `zcube
 * worker PLAN --serve` for processes; under MPI every rank runs the same
 * command and ranks other than 0 become workers in run_dist_enter. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval_run.h"
#include "progress.h"

#include <jansson.h>

#define PLAN_FILE "zcube-plan.json"
#define SUMMARY_FILE "zcube-plan-summary.json"

int run_dist_enter(run_opts *o)
{
    int size, rc = zc_dist_mpi_init(&o->mpi_rank, &size);
    if (rc < 0) return cli_fail_zc(rc, "--executor mpi");
    if (o->mpi_rank == 0) return -1;
    rc = zc_dist_mpi_worker(o->spec.nthreads);
    int ec = rc < 0 ? cli_fail_zc(rc, "MPI rank %d", o->mpi_rank) : CLI_EXIT_OK;
    zc_dist_mpi_finalize();
    return ec;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, k;
    char tmp[65536];
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (len + k + 1 > cap) {
            cap = (len + k + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        memcpy(buf + len, tmp, k);
        len += k;
    }
    fclose(f);
    if (!buf) buf = calloc(1, 1);
    else buf[len] = 0;
    return buf;
}

/* The saved plan in dir: made now, or, with --resume, the one already there if it
 * plans the same computation. Returns -1 to go on, else the exit status. */
static int save_or_reuse(run_opts *o, zc_array *a, zc_target *target, const char *plan_json, const char *dir,
                         const char *plan, const char *summary)
{
    struct stat st;
    if (o->resume && stat(summary, &st) == 0) { /* written after the plan: the plan is whole */
        char *old = slurp(summary);
        int same = old && !strcmp(old, plan_json);
        free(old);
        if (!same)
            return cli_fail(CLI_EXIT_RUNTIME, "--resume: the work directory '%s' holds the plan of another "
                            "computation (or of other options); give the same command or a new --work-dir", dir);
        return -1;
    }
    o->spec.work_dir = dir;
    zc_plan *zp = NULL;
    int rc = zc_plan_create_advanced(&o->spec, 1, &a, target, o->create ? &o->create : NULL, &zp);
    if (rc == 0) rc = zc_plan_write(zp, plan);
    zc_plan_free(zp);
    if (rc < 0) return cli_fail_zc(rc, "saving the plan");
    return -1; /* zc_dist_run writes the summary */
}

int run_dist_compute(run_opts *o, zc_array *a, zc_target *target, const char *plan_json)
{
    char dir[PATH_MAX], plan[PATH_MAX + 32], summary[PATH_MAX + 32], exe[PATH_MAX], threads[16];
    int made = 0, ec = -1, rc;
    if (o->work_dir && strstr(o->work_dir, "://")) { /* file:// was taken off by run_prepare */
        /* the executors coordinate through files in the work dir (claims, results): a shared filesystem */
        ec = cli_fail(CLI_EXIT_USAGE, "--executor %s needs a --work-dir on a (shared) filesystem, not '%s'; "
                      "inputs and output may be URLs, and the threads executor takes a URL work dir",
                      o->dist == RUN_MPI ? "mpi" : o->dist == RUN_SLURM ? "slurm" : "processes", o->work_dir);
    } else if (o->work_dir) {
        snprintf(dir, sizeof dir, "%s", o->work_dir);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            ec = cli_fail(CLI_EXIT_RUNTIME, "cannot create --work-dir '%s': %s", dir, strerror(errno));
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/zcube-work-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) ec = cli_fail(CLI_EXIT_RUNTIME, "cannot create a work directory: %s", strerror(errno));
        made = 1;
    }
    if (ec < 0 && !realpath(dir, plan)) ec = cli_fail(CLI_EXIT_RUNTIME, "'%s': %s", dir, strerror(errno));
    if (ec < 0) {
        snprintf(dir, sizeof dir, "%s", plan);
        snprintf(plan, sizeof plan, "%s/" PLAN_FILE, dir);
        snprintf(summary, sizeof summary, "%s/" SUMMARY_FILE, dir);
        ec = save_or_reuse(o, a, target, plan_json, dir, plan, summary);
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (ec < 0 && n <= 0) ec = cli_fail(CLI_EXIT_RUNTIME, "cannot find this program (/proc/self/exe)");
    if (ec >= 0) {
        if (o->dist == RUN_MPI) zc_dist_mpi_finalize(); /* releases the waiting ranks */
        return ec;
    }
    exe[n] = 0;
    snprintf(threads, sizeof threads, "%d", o->spec.nthreads);
    const char *argv[] = {exe, "worker", plan, "--serve", "--threads", threads, NULL};
    zc_dist_spec ds = ZC_DIST_SPEC_INIT;
    ds.executor = o->dist == RUN_MPI ? "mpi" : o->dist == RUN_SLURM ? "slurm" : "processes";
    ds.sbatch_args = o->sbatch_args;
    ds.tasks_per_job = o->ntasks_per_job;
    ds.detach = o->detach;
    ds.plan_json = plan_json;
    ds.workers = o->nworkers;
    ds.nthreads = o->spec.nthreads;
    ds.retries = o->nretries;
    ds.task_timeout = o->task_timeout_s;
    ds.backups = !o->no_backups;
    ds.resume = o->resume;
    ds.worker_argv = argv;
    int draw = !o->quiet && !o->json && isatty(fileno(stderr));
    progress_t pg;
    progress_init(&pg, stderr, draw, progress_count_ops(plan_json), &run_interrupted);
    ds.progress = progress_update;
    ds.progress_ctx = &pg;
    struct sigaction old;
    run_catch_sigint(&old);
    zc_report *report = NULL;
    rc = zc_dist_run(&ds, plan, &report);
    sigaction(SIGINT, &old, NULL);
    progress_finish(&pg);
    if (o->dist == RUN_MPI) zc_dist_mpi_finalize();
    char *json = NULL;
    if (rc == ZC_ECANCELED && run_interrupted)
        ec = cli_fail(CLI_EXIT_RUNTIME, "interrupted; '%s' is incomplete (run again with --resume --work-dir %s)",
                      o->out, dir);
    else if (rc < 0)
        ec = cli_fail_zc(rc, "%s executor (finish with --resume --work-dir %s)", ds.executor, dir);
    else if (report && (rc = zc_report_json(report, &json)) < 0)
        ec = cli_fail_zc(rc, "report");
    if (ec < 0 && o->detach) {
        ec = CLI_EXIT_OK;
        json_t *doc = json_loads(json ? json : "", 0, NULL);
        printf("submitted Slurm jobs %s\nfollow with: zcube status %s\n",
               json_string_value(json_object_get(doc, "jobs")) ?: "?", dir);
        json_decref(doc);
    } else if (ec < 0) {
        ec = CLI_EXIT_OK;
        remove(plan);
        remove(summary);
        char meta[PATH_MAX + 32];
        snprintf(meta, sizeof meta, "%s/zarr.json", dir); /* the root group of the intermediates */
        remove(meta);
        snprintf(meta, sizeof meta, "%s/zcube-complete", dir);
        remove(meta);
        if (made || !o->resume) rmdir(dir); /* only if empty */
        if (o->json && json) {
            fputs(json, stdout);
            fputc('\n', stdout);
        } else if (!o->quiet && json) {
            if (progress_print_summary(stdout, json, o->out) < 0) ec = cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
            else run_dist_summary(stdout, json);
        }
    }
    zc_free(json);
    zc_report_free(report);
    return ec;
}

void run_dist_summary(FILE *f, const char *report_json)
{
    json_t *doc = json_loads(report_json, 0, NULL);
    json_t *ws = json_object_get(doc, "workers");
    if (!json_is_array(ws)) {
        json_decref(doc);
        return;
    }
    long long revived = json_integer_value(json_object_get(doc, "revived"));
    const char *jobs = json_string_value(json_object_get(doc, "jobs"));
    if (jobs) {
        fprintf(f, "executor slurm, jobs %s (chain submitted %lld time%s)\n", jobs,
                (long long)json_integer_value(json_object_get(doc, "submissions")),
                json_integer_value(json_object_get(doc, "submissions")) == 1 ? "" : "s");
        json_decref(doc);
        return;
    }
    fprintf(f, "executor %s, %zu worker%s", json_string_value(json_object_get(doc, "executor")) ?: "?",
            json_array_size(ws), json_array_size(ws) == 1 ? "" : "s");
    if (revived) fprintf(f, " (%lld replaced after dying)", revived);
    fprintf(f, "\n  %-8s %10s %8s %8s %8s %8s %13s\n", "worker", "tasks", "ranges", "retried", "backups", "failed",
            "seconds busy");
    size_t i;
    json_t *w;
    json_array_foreach(ws, i, w) {
#define I(k) (long long)json_integer_value(json_object_get(w, k))
        fprintf(f, "  %-8lld %10lld %8lld %8lld %8lld %8lld %13.2f\n", I("worker"), I("tasks"), I("units"), I("retried"),
                I("backups"), I("failures"), json_real_value(json_object_get(w, "seconds_busy")));
#undef I
    }
    json_decref(doc);
}
