/* tools/eval_run.h — the part of `zcube eval`, `rechunk` and `copy` after the
 * lazy array is built: memory and thread options into a zc_spec, the output
 * target, --plan-only and --visualize, computing with a progress bar and the
 * summary. Every function prints its own error line and returns an exit
 * status (see cli_util.h), or -1 where it says "go on". */
#ifndef ZC_TOOLS_EVAL_RUN_H
#define ZC_TOOLS_EVAL_RUN_H

#include <signal.h>
#include <stdio.h>

#include "cli_util.h"
#include "zcube.h"

typedef struct {
    const char *out;          /* -o / DST */
    const char *allowed_mem;  /* --allowed-mem SIZE */
    const char *reserved_mem; /* --reserved-mem SIZE */
    const char *threads;      /* --threads N */
    const char *work_dir;     /* --work-dir DIR */
    const char *codec;        /* --codec SPEC */
    const char *zarr_format;  /* --zarr-format 2|3 */
    const char *visualize;    /* --visualize FILE.svg */
    const char *executor;     /* --executor threads|processes|mpi */
    const char *workers;      /* --workers N */
    const char *save_plan;    /* --save-plan PLAN.json */
    const char *retries;      /* --retries N */
    const char *task_timeout; /* --task-timeout SECONDS */
    int no_backups;           /* --no-backups */
    const char *sbatch_args;  /* --sbatch-args "..." */
    const char *tasks_per_job; /* --tasks-per-job N */
    int detach;               /* --detach */
    int resume;               /* --resume */
    int overwrite;            /* --overwrite */
    int plan_only;            /* --plan-only */
    int json;                 /* --json: print the library's JSON instead of the text summaries */
    int quiet;                /* --quiet: no summary, no progress bar */
    const zc_zarr_create_opts *create; /* the output's creation options (copy), or NULL */
    /* filled by run_prepare */
    zc_spec spec;
    int format;               /* 0 = library default */
    int dist;                 /* 0 threads, else RUN_PROCESSES or RUN_MPI */
    int nworkers, nretries;
    double task_timeout_s;    /* 0 = none */
    int64_t ntasks_per_job;
    int mpi_rank;             /* RUN_MPI: this process's rank */
} run_opts;

enum { RUN_THREADS, RUN_PROCESSES, RUN_MPI, RUN_SLURM };

/* The options every computing command shares, for cli_parse tables. */
#define RUN_CLI_OPTS(o)                                                                          \
    {"allowed-mem", 0, &(o).allowed_mem, NULL}, {"reserved-mem", 0, &(o).reserved_mem, NULL},    \
    {"threads", 0, &(o).threads, NULL}, {"work-dir", 0, &(o).work_dir, NULL},                   \
    {"codec", 0, &(o).codec, NULL}, {"zarr-format", 0, &(o).zarr_format, NULL},                 \
    {"visualize", 0, &(o).visualize, NULL}, {"resume", 0, NULL, &(o).resume},                   \
    {"overwrite", 0, NULL, &(o).overwrite}, {"plan-only", 0, NULL, &(o).plan_only},             \
    {"json", 0, NULL, &(o).json}, {"quiet", 'q', NULL, &(o).quiet},                            \
    {"executor", 0, &(o).executor, NULL}, {"workers", 0, &(o).workers, NULL},                    \
    {"save-plan", 0, &(o).save_plan, NULL}, {"retries", 0, &(o).retries, NULL},                  \
    {"no-backups", 0, NULL, &(o).no_backups}, {"sbatch-args", 0, &(o).sbatch_args, NULL},          \
    {"tasks-per-job", 0, &(o).tasks_per_job, NULL}, {"detach", 0, NULL, &(o).detach},             \
    {"task-timeout", 0, &(o).task_timeout, NULL}

/* Help text of those options (for usage texts). */
#define RUN_CLI_HELP                                                                               \
    "  --allowed-mem SIZE  memory one task may use, all included (default 2GiB); a plan\n"         \
    "                      needing more per task is refused before any work\n"                     \
    "  --reserved-mem SIZE part of --allowed-mem kept for the runtime (default 64MiB,\n"           \
    "                      or 1/8 of --allowed-mem when that is below 512MiB)\n"                   \
    "  --threads N         worker threads (default: all cores)\n"                                  \
    "  --work-dir DIR      intermediates (default: $TMPDIR/zcube-work-PID-N, removed at the end)\n" \
    "  --resume            keep DIR and skip output chunks a previous run already wrote\n"         \
    "                      (give the same --work-dir)\n"                                           \
    "  --overwrite         replace the output if it exists\n"                                      \
    "  --codec SPEC        codec of the output (default zstd:1; see 'zcube create --help')\n"      \
    "  --zarr-format 2|3   format of the output (default 3)\n"                                     \
    "  --plan-only         print the plan (one line per operation: tasks, projected memory,\n"     \
    "                      fused operations) and stop\n"                                           \
    "  --visualize F.svg   draw the plan as an SVG file\n"                                         \
    "  --json              print the library's plan or report JSON instead of the summaries\n"     \
    "  -q, --quiet         no progress bar and no summary\n"                                      \
    "  --executor NAME     threads (default), processes (--workers local worker\n"                 \
    "                      processes), mpi (run under mpirun/srun) or slurm (job arrays);\n"     \
    "                      see docs/distributed.md\n"                                            \
    "  --workers N         processes: how many (default: all cores; --threads each, default 1)\n" \
    "  --retries N         processes/mpi: retries of a failed task range (default 2)\n"          \
    "  --no-backups        processes/mpi: no backup copies of straggling ranges\n"               \
    "  --task-timeout S    processes/mpi/slurm: seconds a task may take (default: no limit);\n"  \
    "                      a range of n tasks on T threads running over S*ceil(n/T) s is\n"     \
    "                      abandoned and retried elsewhere, its worker replaced or retired\n"   \
    "  --sbatch-args \"..\" slurm: more sbatch arguments (partition, account, time, ...)\n"       \
    "  --tasks-per-job N   slurm: tasks one array element runs (default 16)\n"                   \
    "  --detach            slurm: submit and return; follow with 'zcube status WORK_DIR'\n"      \
    "  --save-plan F.json  save the plan (and create its arrays) without running it, for\n"      \
    "                      'zcube worker F.json --op N --blocks A:B' on any batch system\n"

/* Validate the options and fill o->spec and o->format. Returns -1 to go on,
 * else the exit status (usage error printed). `out_required`: -o/DST must be
 * given unless --plan-only. */
int run_prepare(run_opts *o, int out_required);

/* Refuse an output that already holds a Zarr array or group (unless
 * --overwrite or --resume) or that is one of the inputs. Returns -1 or the
 * exit status. */
int run_check_output(const run_opts *o, const char *const *inputs, int ninputs);

/* SIGINT sets run_interrupted (which the progress callback turns into a cancel);
 * a second one ends the process. Restore with sigaction(SIGINT, old, NULL). */
extern volatile sig_atomic_t run_interrupted;
void run_catch_sigint(struct sigaction *old);

/* Plan, draw, compute and summarize `a` into o->out. Returns the exit status. */
int run_compute(run_opts *o, zc_array *a);

/* --executor processes|mpi (run_dist.c). run_dist_enter, from run_prepare: under
 * MPI, ranks other than 0 serve ranges here and return their exit status; -1 =
 * go on. run_dist_compute: save the plan in the work directory (or reuse it with
 * --resume), run it on the workers, summarize. */
int run_dist_enter(run_opts *o);
int run_dist_compute(run_opts *o, zc_array *a, zc_target *target, const char *plan_json);
/* Print the per-worker rows of a distributed report. */
void run_dist_summary(FILE *f, const char *report_json);

#endif
