/* tools/eval_run.c — options, output target, plan display and computation
 * shared by `zcube eval`, `rechunk` and `copy` (see eval_run.h).
 *
 * The progress callback always runs (not only on a terminal) so that Ctrl-C
 * can cancel: SIGINT sets a flag, the next finished task sees it and the
 * library stops with ZC_ECANCELED. A second Ctrl-C kills as usual. */
#include "eval_run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "plan_svg.h"
#include "progress.h"

int run_prepare(run_opts *o, int out_required)
{
    zc_spec init = ZC_SPEC_INIT;
    o->spec = init;
    if (o->allowed_mem) {
        uint64_t v;
        if (cli_parse_size(o->allowed_mem, "--allowed-mem", &v) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        if (v == 0) return cli_fail(CLI_EXIT_USAGE, "bad --allowed-mem '%s': must be positive", o->allowed_mem);
        o->spec.allowed_mem = (size_t)v; /* reserved_mem stays automatic (the library's default) */
    }
    if (o->reserved_mem) {
        uint64_t v;
        if (cli_parse_size(o->reserved_mem, "--reserved-mem", &v) < 0)
            return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        o->spec.reserved_mem = (size_t)v;
    }
    if (o->spec.reserved_mem && o->spec.reserved_mem >= o->spec.allowed_mem) {
        char r[32], a[32];
        cli_format_bytes(r, sizeof r, o->spec.reserved_mem);
        cli_format_bytes(a, sizeof a, o->spec.allowed_mem);
        return cli_fail(CLI_EXIT_USAGE, "--reserved-mem (%s) must be less than --allowed-mem (%s)", r, a);
    }
    if (o->threads && cli_parse_threads(o->threads, &o->spec.nthreads) < 0)
        return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    if (o->work_dir) {
        if (cz_local_path(o->work_dir)) o->work_dir = cz_local_path(o->work_dir); /* file:// as a path, for every executor */
        if (!*o->work_dir) return cli_fail(CLI_EXIT_USAGE, "empty --work-dir");
        o->spec.work_dir = o->work_dir;
    }
    o->spec.resume = o->resume;
    o->format = 0;
    if (o->zarr_format) {
        if (strcmp(o->zarr_format, "2") && strcmp(o->zarr_format, "3"))
            return cli_fail(CLI_EXIT_USAGE, "bad --zarr-format '%.20s': expected 2 or 3", o->zarr_format);
        o->format = o->zarr_format[0] - '0';
    }
    o->dist = RUN_THREADS;
    if (o->executor && !strcmp(o->executor, "processes")) o->dist = RUN_PROCESSES;
    else if (o->executor && !strcmp(o->executor, "mpi")) o->dist = RUN_MPI;
    else if (o->executor && !strcmp(o->executor, "slurm")) o->dist = RUN_SLURM;
    else if (o->executor && strcmp(o->executor, "threads"))
        return cli_fail(CLI_EXIT_USAGE, "unknown --executor '%.40s' (threads, processes, mpi, slurm)", o->executor);
    o->ntasks_per_job = 16;
    if (o->tasks_per_job) {
        if (cli_parse_i64(o->tasks_per_job, &o->ntasks_per_job) < 0 || o->ntasks_per_job < 1)
            return cli_fail(CLI_EXIT_USAGE, "bad --tasks-per-job '%.40s': expected a positive number", o->tasks_per_job);
    }
    if ((o->tasks_per_job || o->sbatch_args || o->detach) && o->dist != RUN_SLURM)
        return cli_fail(CLI_EXIT_USAGE, "--tasks-per-job, --sbatch-args and --detach go with --executor slurm");
    o->nworkers = 0;
    o->nretries = 2;
    if (o->workers) {
        int64_t v;
        if (cli_parse_i64(o->workers, &v) < 0 || v < 1 || v > 4096)
            return cli_fail(CLI_EXIT_USAGE, "bad --workers '%.40s': expected 1..4096", o->workers);
        if (o->dist != RUN_PROCESSES) return cli_fail(CLI_EXIT_USAGE, "--workers goes with --executor processes");
        o->nworkers = (int)v;
    }
    if (o->retries) {
        int64_t v;
        if (cli_parse_i64(o->retries, &v) < 0 || v < 0 || v > 1000)
            return cli_fail(CLI_EXIT_USAGE, "bad --retries '%.40s': expected 0..1000", o->retries);
        o->nretries = (int)v;
        o->spec.max_retries = (int)v;
    }
    o->task_timeout_s = 0;
    if (o->task_timeout) {
        char *end;
        double v = strtod(o->task_timeout, &end);
        if (end == o->task_timeout || *end || !(v > 0 && v <= 1e9))
            return cli_fail(CLI_EXIT_USAGE, "bad --task-timeout '%.40s': expected seconds > 0", o->task_timeout);
        if (o->dist == RUN_THREADS)
            return cli_fail(CLI_EXIT_USAGE, "--task-timeout goes with --executor processes, mpi or slurm");
        o->task_timeout_s = v;
    }
    if (o->save_plan && (o->dist != RUN_THREADS || o->plan_only))
        return cli_fail(CLI_EXIT_USAGE, "--save-plan runs nothing: give it without --executor and --plan-only");
    if (o->save_plan && !*o->save_plan) return cli_fail(CLI_EXIT_USAGE, "empty --save-plan");
    if (o->dist != RUN_THREADS && o->resume && !o->work_dir)
        return cli_fail(CLI_EXIT_USAGE, "--resume needs the --work-dir of the interrupted run");
    if (o->dist != RUN_THREADS && !o->threads) {
        /* a worker's threads; the plan is made for that many (sliced copies size their tasks by it) */
        long cores = sysconf(_SC_NPROCESSORS_ONLN), local = 1;
        const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); /* mpirun; srun: its tasks on rank 0's node, "N(xM),..." */
        if (!ls) ls = getenv("SLURM_STEP_TASKS_PER_NODE");
        if (o->dist == RUN_MPI && ls && atol(ls) > 0) local = atol(ls);
        o->spec.nthreads = o->dist == RUN_PROCESSES || cores / local < 1 ? 1 : (int)(cores / local);
        if (o->dist == RUN_SLURM) o->spec.nthreads = 1; /* an array element per CPU: sbatch's default -c 1 */
    }
    if (o->dist == RUN_MPI && !o->plan_only) {
        int ec = run_dist_enter(o);
        if (ec >= 0) return ec;
    }
    if (o->resume && o->overwrite) return cli_fail(CLI_EXIT_USAGE, "--resume and --overwrite exclude each other");
    if (out_required && !o->out && !o->plan_only)
        return cli_fail(CLI_EXIT_USAGE, "missing the output: give -o OUT_PATH (or --plan-only)");
    if (o->out && !*o->out) return cli_fail(CLI_EXIT_USAGE, "empty output path");
    return -1;
}

static int same_file(const char *a, const char *b)
{
    if (!strcmp(a, b)) return 1;
    const char *la = cz_local_path(a), *lb = cz_local_path(b);
    if (!la || !lb) return 0;
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(la, ra) || !realpath(lb, rb)) return 0;
    return !strcmp(ra, rb);
}

int run_check_output(const run_opts *o, const char *const *inputs, int ninputs)
{
    if (!o->out) return -1;
    for (int i = 0; i < ninputs; i++)
        if (same_file(o->out, inputs[i]))
            return cli_fail(CLI_EXIT_USAGE, "the output '%s' is also an input; write to another path", o->out);
    if (cz_local_path(o->out)) {
        struct stat st;
        if (stat(cz_local_path(o->out), &st) < 0) return -1; /* absent: created */
        if (!S_ISDIR(st.st_mode))
            return cli_fail(CLI_EXIT_RUNTIME, "the output '%s' exists and is not a folder", o->out);
    }
    if (o->overwrite || o->resume) return -1;
    zc_store *st;
    if (zc_store_open(o->out, ZC_STORE_READONLY, &st) < 0) return -1; /* e.g. memory:// not created yet */
    zc_node_kind kind = ZC_NODE_NONE;
    int fmt = 0;
    int rc = zc_node_kind_at(st, "", &kind, &fmt);
    zc_store_close(st);
    if (rc == 0 && kind != ZC_NODE_NONE)
        return cli_fail(CLI_EXIT_RUNTIME, "the output '%s' already holds a Zarr v%d %s; give --overwrite to replace "
                        "it (or --resume to finish an interrupted run)", o->out, fmt,
                        kind == ZC_NODE_GROUP ? "group" : "array");
    return -1;
}

/* ------------------------------------------------------------ SIGINT */

volatile sig_atomic_t run_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    run_interrupted = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process */
}

void run_catch_sigint(struct sigaction *old)
{
    run_interrupted = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, old);
}

/* ------------------------------------------------------------ compute */

/* The output's Zarr format: the creation options' (copy keeps its input's), else --zarr-format. */
static int out_format(const run_opts *o)
{
    if (o->create && o->create->zarr_format) return o->create->zarr_format;
    return o->format ? o->format : 3;
}

int run_compute(run_opts *o, zc_array *a)
{
    int ec = CLI_EXIT_OK;
    zc_store *st = NULL;
    char *plan = NULL, *report_json = NULL;
    zc_plan *zp = NULL;
    int draw = !o->quiet && !o->json && !o->plan_only && isatty(fileno(stderr));

    /* the output store. --plan-only writes nothing, but the plan needs a target
     * that holds written chunks as the output's store will (the planner counts a
     * memory store's kept copy): a memory store for a memory:// output, an empty
     * temporary folder for any other, removed after planning */
    char tmpdir[PATH_MAX] = "";
    const char *url = o->out;
    if (o->plan_only && o->out && !strncmp(o->out, "memory://", 9)) {
        url = "memory://zcube-plan-only";
    } else if (o->plan_only) {
        const char *tmp = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/zcube-plan-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(tmpdir)) return cli_fail(CLI_EXIT_RUNTIME, "--plan-only: cannot create '%s': %s", tmpdir, strerror(errno));
        url = tmpdir;
    }
    cz_parents made = {0};
    if (!o->plan_only && !o->save_plan) cz_parents_missing(url, &made);
    int rc = zc_store_open(url, ZC_STORE_CREATE, &st);
    if (rc < 0) {
        if (tmpdir[0]) rmdir(tmpdir);
        return cli_fail_zc(rc, "'%s'", url);
    }
    zc_target target = {st, "", o->codec, o->format};

    /* planned once: described, then executed */
    rc = zc_plan_create_advanced(&o->spec, 1, &a, &target, o->create ? &o->create : NULL, &zp);
    if (rc == 0 && (o->plan_only || o->visualize || draw || o->dist != RUN_THREADS)) rc = zc_plan_to_json(zp, &plan);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "planning");
        goto done;
    }
    if (o->visualize && plan_svg_save(o->visualize, plan, o->out ? cli_basename(o->out) : "plan") < 0) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "--visualize: %s", cli_lasterr());
        goto done;
    }
    if (o->plan_only) {
        if (o->json) {
            fputs(plan, stdout);
            if (plan[0] && plan[strlen(plan) - 1] != '\n') fputc('\n', stdout);
        } else if (progress_print_plan(stdout, plan, o->out) < 0) {
            ec = cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
        }
        goto done;
    }

    if (o->save_plan) {
        rc = zc_plan_write(zp, o->save_plan);
        if (rc < 0) ec = cli_fail_zc(rc, "--save-plan '%s'", o->save_plan);
        else if (!o->quiet) printf("saved the plan to %s\n", o->save_plan);
        goto done;
    }
    if (o->dist != RUN_THREADS) {
        ec = run_dist_compute(o, a, &target, plan);
        if (!ec) ec = cz_parents_make_groups(&made, out_format(o));
        goto done;
    }

    progress_t pg;
    progress_init(&pg, stderr, draw, plan ? progress_count_ops(plan) : 0, &run_interrupted);
    o->spec.progress = progress_update;
    o->spec.progress_ctx = &pg;
    struct sigaction old;
    run_catch_sigint(&old);
    rc = zc_plan_execute(zp, &o->spec, ZC_PLAN_ALL, 0, -1);
    sigaction(SIGINT, &old, NULL);
    progress_finish(&pg);
    o->spec.progress = NULL;
    o->spec.progress_ctx = NULL;
    if (rc == ZC_ECANCELED && run_interrupted) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "interrupted; '%s' is incomplete%s", o->out,
                      o->resume ? " (run again with --resume to finish it)" : "");
        goto done;
    }
    if (rc < 0) {
        ec = cli_fail_zc(rc, NULL);
        goto done;
    }
    if ((ec = cz_parents_make_groups(&made, out_format(o)))) goto done;
    if (o->quiet) goto done;
    if ((rc = zc_plan_report(zp, &report_json)) < 0) {
        ec = cli_fail_zc(rc, "report");
        goto done;
    }
    if (!report_json) goto done;
    if (o->json) {
        fputs(report_json, stdout);
        if (report_json[0] && report_json[strlen(report_json) - 1] != '\n') fputc('\n', stdout);
    } else if (progress_print_summary(stdout, report_json, o->out) < 0) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
    }
done:
    zc_free(report_json);
    zc_plan_free(zp);
    zc_free(plan);
    zc_store_close(st);
    if (tmpdir[0]) rmdir(tmpdir);
    return ec;
}
