/* tools/main.c — the zcube command: main, dispatch to subcommands, help.
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage error. Every failure
 * prints exactly one line on stderr, "zcube: <cmd>: <what failed and where>". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "zcube.h"

static const cli_command *const COMMANDS[] = {&cmd_info, &cmd_ls, &cmd_get, &cmd_create, &cmd_put, &cmd_copy,
                                              &cmd_sample, &cmd_eval, &cmd_rechunk, &cmd_worker, &cmd_status};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static const cli_command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(COMMANDS[i]->name, name)) return COMMANDS[i];
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: zcube <command> [options] [args]\n"
            "\n"
            "Inspect, read, write and convert Zarr v2/v3 arrays; sample windows of them\n"
            "in batches for ML training.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-8s %s\n", COMMANDS[i]->name, COMMANDS[i]->summary);
    fprintf(f,
            "\n"
            "  zcube help <command>   details of one command (or: zcube <command> --help)\n"
            "  zcube --version        versions of the tool and library\n"
            "  --fsync                (any command) make every write durable: file, rename, folder synced\n"
            "\n"
            "Every command also takes --io-concurrency N: HTTP/S3 transfers in flight\n"
            "per batch (default 64; same as ZCUBE_IO_CONCURRENCY). Paths may be URLs:\n"
            "file://, s3://BUCKET/PREFIX, http(s)://... (see docs/stores.md).\n"
            "\n"
            "Exit status: 0 success, 1 failure, 2 bad command line.\n");
}

static int help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    const cli_command *c = find(argv[1]);
    if (!c) {
        cli_set_command("help");
        return cli_fail(CLI_EXIT_USAGE, "unknown command '%.100s' (see 'zcube help')", argv[1]);
    }
    fputs(c->usage, stdout);
    return CLI_EXIT_OK;
}

/* --fsync, accepted by every command (before a lone "--"): the stores it
 * opens make each write durable before going on (file, then rename, then
 * folder: docs/cli.md). The library reads ZC_FSYNC when a store is opened.
 * Returns argc without the option. */
static int take_fsync(int argc, char **argv)
{
    int k = 2;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            while (i < argc) argv[k++] = argv[i++];
            break;
        }
        if (!strcmp(argv[i], "--fsync")) setenv("ZC_FSYNC", "1", 1);
        else argv[k++] = argv[i];
    }
    argv[k] = NULL;
    return k;
}

/* Take "--io-concurrency N" (or "=N") out of the command's arguments: it is
 * every command's, and reaches the stores as ZCUBE_IO_CONCURRENCY. */
static int io_concurrency(int *argc, char **argv)
{
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        int take = 0;
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--io-concurrency")) {
            if (i + 1 >= *argc) return cli_fail(CLI_EXIT_USAGE, "--io-concurrency needs a value");
            v = argv[i + 1];
            take = 2;
        } else if (!strncmp(argv[i], "--io-concurrency=", 17)) {
            v = argv[i] + 17;
            take = 1;
        }
        if (!take) continue;
        char *end;
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 1 || n > 1024)
            return cli_fail(CLI_EXIT_USAGE, "--io-concurrency '%.40s': expected an integer from 1 to 1024", v);
        setenv("ZCUBE_IO_CONCURRENCY", v, 1);
        memmove(argv + i, argv + i + take, (size_t)(*argc - i - take + 1) * sizeof *argv);
        *argc -= take;
        i--;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* A closed pipe on stdout (`zcube get -o - | head -c 10`) becomes an EPIPE
     * error line and exit 1, not death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        cli_set_command("usage");
        return cli_fail(CLI_EXIT_USAGE, "missing command (see 'zcube help')");
    }
    const char *name = argv[1];
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("zcube %s (library %s)\n", ZC_VERSION_STRING, zc_version_string());
        return CLI_EXIT_OK;
    }
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) return help(argc - 1, argv + 1);
    const cli_command *c = find(name);
    if (!c) {
        cli_set_command(name);
        return cli_fail(CLI_EXIT_USAGE, "unknown %s (see 'zcube help')", name[0] == '-' ? "option" : "command");
    }
    cli_set_command(c->name);
    argc = take_fsync(argc, argv);
    int nargs = argc - 1;
    int rc = io_concurrency(&nargs, argv + 1);
    if (rc) return rc;
    rc = c->run(nargs, argv + 1);
    if (fflush(stdout) != 0 && rc == 0) rc = cli_fail(CLI_EXIT_RUNTIME, "writing to standard output failed");
    return rc;
}
