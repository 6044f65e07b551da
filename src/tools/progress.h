/* tools/progress.h — what `zcube eval` and `zcube rechunk` show while and
 * after they compute: a one-line progress bar on a terminal (stderr), the
 * summary of a finished computation and the plan summary of --plan-only.
 *
 * The summaries read the library's JSON (zc_report_json, zc_plan_json):
 *   {"operations": [{"op", "name", "kind", "shape", "chunks", "dtype", "tasks",
 *                    "projected_mem", "fused", "inputs", "output",
 *                    run only: "seconds", "measured_mem", "skipped"}],
 *    "tasks", "intermediate_bytes", "memory_limit", run only: "seconds", "peak_task_mem"}
 * Missing fields are shown as "-", so older or newer libraries still print. */
#ifndef ZC_TOOLS_PROGRESS_H
#define ZC_TOOLS_PROGRESS_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "zcube.h"

typedef struct {
    FILE *out;                        /* where the bar goes (stderr) */
    int draw;                         /* 1 = draw the bar (a terminal) */
    int nops;                         /* operations in the plan, 0 = unknown */
    int width;                        /* terminal columns */
    double t0;                        /* start, seconds (monotonic) */
    double last;                      /* last redraw */
    int64_t last_op;                  /* operation shown last */
    int shown;                        /* a bar is on screen */
    volatile sig_atomic_t *interrupt; /* non-zero: cancel the computation (SIGINT) */
} progress_t;

/* Start: `draw` when the bar should show, nops operations (0 = unknown). */
void progress_init(progress_t *p, FILE *out, int draw, int nops, volatile sig_atomic_t *interrupt);
/* zc_progress_fn: redraws at most 10 times a second and on the last task of an
 * operation; returns 1 (cancel) once *interrupt is set. */
int progress_update(const zc_progress *pr, void *ctx);
/* Erase the bar. */
void progress_finish(progress_t *p);

/* Render one bar line (without "\r"), at most `width` columns, into buf. */
void progress_format(char *buf, size_t size, int width, const zc_progress *pr, int nops, double elapsed);

/* Number of operations in a plan or report JSON (-1 if unreadable). */
int progress_count_ops(const char *json);

/* Print the --plan-only summary: a header line and one line per operation
 * (tasks, projected memory per task, inputs, fused operations), flagging
 * operations whose projection exceeds the plan's memory limit.
 * @return 0, or -1 with cli_lasterr() (unreadable JSON). */
int progress_print_plan(FILE *f, const char *plan_json, const char *out_name);

/* Print the summary of a finished computation: operations, tasks, time,
 * projected and measured peak memory per task, bytes of intermediates, and
 * one line per operation. @return 0, or -1 with cli_lasterr(). */
int progress_print_summary(FILE *f, const char *report_json, const char *out_name);

#endif
