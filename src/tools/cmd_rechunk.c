/* tools/cmd_rechunk.c — `zcube rechunk SRC DST --chunks ...`: the same values
 * with other chunks, through the compute engine, so any chunking goes to any
 * other under --allowed-mem (multistage through intermediates when needed). */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "eval_run.h"

static const char USAGE[] =
    "usage: zcube rechunk SRC DST --chunks N,... [options]   (or SRC -o DST)\n"
    "\n"
    "Write the array at SRC to a new array DST with other chunks, never using\n"
    "more than --allowed-mem per task: when one step cannot hold whole source\n"
    "and destination chunks, the library goes through intermediate chunkings in\n"
    "--work-dir. DST has SRC's shape and dtype; its codec and format are the\n"
    "options below (use 'zcube copy' to also carry attributes and fill value).\n"
    "\n"
    "Options:\n"
    "  --chunks N,...      chunk shape of DST (required; -1: a whole dimension)\n" RUN_CLI_HELP
    "  -h, --help          this text\n";

static int run(int argc, char **argv)
{
    run_opts o;
    memset(&o, 0, sizeof o);
    const char *chunks_s = NULL;
    cli_opt opts[] = {{"chunks", 0, &chunks_s, NULL}, {"out", 'o', &o.out, NULL}, RUN_CLI_OPTS(o),
                      {NULL, 0, NULL, NULL}};
    const char *pos[2];
    int npos;
    int ec = cz_args(&cmd_rechunk, argc, argv, opts, pos, 1, 2, &npos);
    if (ec >= 0) return ec;
    const char *src = pos[0];
    if (npos > 1 && o.out) return cli_fail(CLI_EXIT_USAGE, "give DST or -o DST, not both");
    if (npos > 1) o.out = pos[1];
    if ((ec = run_prepare(&o, 1)) >= 0) return ec;
    if (!chunks_s) return cli_fail(CLI_EXIT_USAGE, "missing --chunks N,... (the chunk shape of DST)");
    int64_t chunks[ZC_MAX_DIMS];
    int n;
    if (cli_parse_chunks(chunks_s, "--chunks", chunks, ZC_MAX_DIMS, &n) < 0)
        return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    if ((ec = run_check_output(&o, &src, 1)) >= 0) return ec;

    zc_store *st;
    zc_zarr *z;
    zc_zarr_info_t info;
    if ((ec = cz_open_array(src, 0, &st, &z, &info))) return ec;
    zc_zarr_close(z);
    if (n != info.ndim) {
        zc_store_close(st);
        return cli_fail(CLI_EXIT_USAGE, "--chunks has %d entr%s but '%s' has %d dimension%s", n, n == 1 ? "y" : "ies",
                        src, info.ndim, info.ndim == 1 ? "" : "s");
    }
    cli_whole_chunks(chunks, n, info.shape);
    zc_array *a = NULL, *r = NULL;
    int rc = zc_from_zarr(st, "", &a);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "'%s'", src);
    } else if ((rc = zc_rechunk(a, chunks, &r)) < 0) {
        ec = cli_fail_zc(rc, "--chunks");
    } else {
        ec = run_compute(&o, r);
    }
    zc_array_release(r);
    zc_array_release(a);
    zc_store_close(st);
    return ec;
}

const cli_command cmd_rechunk = {"rechunk", "change the chunks of an array under a memory bound", USAGE, run};
