/* tools/eval_run.h — the part of `zcube eval` and `zcube rechunk` after the
 * lazy array is built: memory and thread options into a zc_spec, the output
 * target, --plan-only and --visualize, computing with a progress bar and the
 * summary. Every function prints its own error line and returns an exit
 * status (see cli_util.h), or -1 where it says "go on". */
#ifndef ZC_TOOLS_EVAL_RUN_H
#define ZC_TOOLS_EVAL_RUN_H

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
    int resume;               /* --resume */
    int overwrite;            /* --overwrite */
    int plan_only;            /* --plan-only */
    int json;                 /* --json: print the library's JSON instead of the text summaries */
    int quiet;                /* --quiet: no summary, no progress bar */
    /* filled by run_prepare */
    zc_spec spec;
    int format;               /* 0 = library default */
} run_opts;

/* The options every computing command shares, for cli_parse tables. */
#define RUN_CLI_OPTS(o)                                                                          \
    {"allowed-mem", 0, &(o).allowed_mem, NULL}, {"reserved-mem", 0, &(o).reserved_mem, NULL},    \
    {"threads", 0, &(o).threads, NULL}, {"work-dir", 0, &(o).work_dir, NULL},                   \
    {"codec", 0, &(o).codec, NULL}, {"zarr-format", 0, &(o).zarr_format, NULL},                 \
    {"visualize", 0, &(o).visualize, NULL}, {"resume", 0, NULL, &(o).resume},                   \
    {"overwrite", 0, NULL, &(o).overwrite}, {"plan-only", 0, NULL, &(o).plan_only},             \
    {"json", 0, NULL, &(o).json}, {"quiet", 'q', NULL, &(o).quiet}

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
    "  -q, --quiet         no progress bar and no summary\n"

/* Validate the options and fill o->spec and o->format. Returns -1 to go on,
 * else the exit status (usage error printed). `out_required`: -o/DST must be
 * given unless --plan-only. */
int run_prepare(run_opts *o, int out_required);

/* Refuse an output that already holds a Zarr array or group (unless
 * --overwrite or --resume) or that is one of the inputs. Returns -1 or the
 * exit status. */
int run_check_output(const run_opts *o, const char *const *inputs, int ninputs);

/* Plan, draw, compute and summarize `a` into o->out. Returns the exit status. */
int run_compute(run_opts *o, zc_array *a);

#endif
