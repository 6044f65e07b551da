/* tools/cmd_worker.c — `zcube worker PLAN.json --op N --blocks A:B`: run one
 * slice of a saved plan in this process (what processes, MPI ranks and batch
 * jobs call). The plan comes from zc_plan_save or `zcube eval --save-plan`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

static const char USAGE[] =
    "usage: zcube worker PLAN.json --op N [--blocks A:B] [--threads T]\n"
    "       zcube worker PLAN.json --serve [--threads T]\n"
    "       zcube worker PLAN.json --job-op N [--job-index I] [--threads T]\n"
    "       zcube worker PLAN.json --finalize\n"
    "\n"
    "Run tasks A..B-1 of operation N of a saved plan (zcube eval --save-plan).\n"
    "The operations before N must have finished (in any processes). Each task\n"
    "writes its own output chunk atomically, so slices of one operation may run\n"
    "in parallel in different processes, and a slice can be run again after a failure.\n"
    "\n"
    "Options:\n"
    "  --op N          operation number (see 'zcube eval --plan-only')\n"
    "  --blocks A:B    task range (default: all tasks of the operation; A: or :B allowed)\n"
    "  --threads T     threads in this process (default: all cores)\n"
    "  --serve         serve ranges requested on stdin (\"R op first last\" lines, answered\n"
    "                  \"D\" or \"E status message\" on stdout): a worker of --executor processes\n"
    "  --job-op N      run range I (--job-index, default $SLURM_ARRAY_TASK_ID) of operation N\n"
    "                  as listed by --executor slurm in WORK/zcube-slurm/opN.ranges\n"
    "  --finalize      after every operation: remove the intermediates, mark the run complete\n"
    "  -h, --help      this text\n";

static int parse_i64(const char *s, long long *v)
{
    char *end;
    *v = strtoll(s, &end, 10);
    return end != s && !*end;
}

static int run(int argc, char **argv)
{
    const char *op_s = NULL, *blocks_s = NULL, *threads_s = NULL;
    const char *job_op_s = NULL, *job_index_s = NULL;
    int serve = 0, finalize = 0;
    cli_opt opts[] = {{"op", 0, &op_s, NULL}, {"blocks", 0, &blocks_s, NULL}, {"threads", 0, &threads_s, NULL},
                      {"serve", 0, NULL, &serve}, {"job-op", 0, &job_op_s, NULL}, {"job-index", 0, &job_index_s, NULL},
                      {"finalize", 0, NULL, &finalize}, {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    int ec = cz_args(&cmd_worker, argc, argv, opts, pos, 1, 1, &npos);
    if (ec >= 0) return ec;
    long long op, first = 0, last = -1, threads = 0;
    if (threads_s && (!parse_i64(threads_s, &threads) || threads < 0 || threads > 4096))
        return cli_fail(CLI_EXIT_USAGE, "bad --threads '%s'", threads_s);
    if (serve + finalize + (job_op_s != NULL) > 1 || ((serve || finalize || job_op_s) && (op_s || blocks_s)))
        return cli_fail(CLI_EXIT_USAGE, "give one of --op, --serve, --job-op, --finalize");
    if (finalize) {
        int rc = zc_dist_finalize(pos[0]);
        return rc < 0 ? cli_fail_zc(rc, "'%s'", pos[0]) : 0;
    }
    if (job_op_s) {
        long long jop, idx = -1;
        if (!parse_i64(job_op_s, &jop) || jop < 0 || jop > 1000000)
            return cli_fail(CLI_EXIT_USAGE, "bad --job-op '%s'", job_op_s);
        if (job_index_s && (!parse_i64(job_index_s, &idx) || idx < 0))
            return cli_fail(CLI_EXIT_USAGE, "bad --job-index '%s'", job_index_s);
        int rc = zc_dist_job(pos[0], (int)jop, idx, (int)threads);
        return rc < 0 ? cli_fail_zc(rc, "'%s' operation %lld", pos[0], jop) : 0;
    }
    if (serve) {
        int rc = zc_dist_serve(pos[0], (int)threads, 0, 1);
        return rc < 0 ? cli_fail_zc(rc, "'%s'", pos[0]) : 0;
    }
    if (!op_s || !parse_i64(op_s, &op) || op < 0 || op > 1000000)
        return cli_fail(CLI_EXIT_USAGE, "--op N is required (an operation number >= 0)");
    if (blocks_s) {
        const char *colon = strchr(blocks_s, ':');
        char a[32] = "", b[32] = "";
        if (!colon || (size_t)(colon - blocks_s) >= sizeof a || strlen(colon + 1) >= sizeof b)
            return cli_fail(CLI_EXIT_USAGE, "bad --blocks '%s': expected A:B", blocks_s);
        memcpy(a, blocks_s, (size_t)(colon - blocks_s));
        strcpy(b, colon + 1);
        if ((a[0] && (!parse_i64(a, &first) || first < 0)) || (b[0] && (!parse_i64(b, &last) || last < first)))
            return cli_fail(CLI_EXIT_USAGE, "bad --blocks '%s': expected A:B with 0 <= A <= B", blocks_s);
    }
    int rc = zc_plan_run(pos[0], (int)op, first, last, (int)threads);
    if (rc < 0) return cli_fail_zc(rc, "'%s' operation %lld", pos[0], op);
    return 0;
}

const cli_command cmd_worker = {"worker", "run a slice (operation, task range) of a saved plan", USAGE, run};
