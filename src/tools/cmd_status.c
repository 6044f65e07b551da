/* tools/cmd_status.c — `zcube status WORK_DIR`: how far a distributed run got,
 * from the completion markers in its work directory (any executor; what
 * `--executor slurm --detach` points to). */
#include <jansson.h>
#include <stdio.h>

#include "cli_util.h"
#include "commands.h"

static const char USAGE[] =
    "usage: zcube status WORK_DIR [--json]\n"
    "\n"
    "Show the progress of a run of --executor processes, mpi or slurm in WORK_DIR\n"
    "(its --work-dir): tasks done per operation, from the workers' completion\n"
    "markers, and whether the run is complete. Exit status 0 also while it runs.\n"
    "\n"
    "Options:\n"
    "  --json          print the JSON (operations: op, name, tasks, done; tasks, done, complete)\n"
    "  -h, --help      this text\n";

static int run(int argc, char **argv)
{
    int json = 0;
    cli_opt opts[] = {{"json", 0, NULL, &json}, {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    int ec = cz_args(&cmd_status, argc, argv, opts, pos, 1, 1, &npos);
    if (ec >= 0) return ec;
    char *text = NULL;
    int rc = zc_dist_status(pos[0], &text);
    if (rc < 0) return cli_fail_zc(rc, "'%s'", pos[0]);
    if (json) {
        printf("%s\n", text);
        zc_free(text);
        return 0;
    }
    json_t *doc = json_loads(text, 0, NULL);
    zc_free(text);
    long long all = json_integer_value(json_object_get(doc, "tasks")), done = json_integer_value(json_object_get(doc, "done"));
    printf("%s: %s, %lld of %lld tasks done (%.0f%%)\n", pos[0],
           json_is_true(json_object_get(doc, "complete")) ? "complete" : "not complete", done, all,
           all ? 100.0 * (double)done / (double)all : 100.0);
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(doc, "operations"), i, o) {
        long long n = json_integer_value(json_object_get(o, "tasks")), d = json_integer_value(json_object_get(o, "done"));
        if (!n) continue;
        printf("  %-32s %10lld / %-10lld %s\n", json_string_value(json_object_get(o, "name")) ?: "?", d, n,
               d == n ? "done" : d ? "running" : "waiting");
    }
    json_decref(doc);
    return 0;
}

const cli_command cmd_status = {"status", "progress of a distributed run, from its work directory", USAGE, run};
