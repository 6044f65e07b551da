/* tools/commands.h — the zcube subcommands (one cmd_<name>.c each) and the
 * helpers they share for opening stores and arrays given on the command line. */
#ifndef ZC_TOOLS_COMMANDS_H
#define ZC_TOOLS_COMMANDS_H

#include <stdint.h>

#include "cli_util.h"
#include "zcube.h"

typedef struct {
    const char *name;    /* "get" */
    const char *summary; /* one line for `zcube help` */
    const char *usage;   /* full help text (`zcube help get`, `zcube get --help`) */
    int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit status */
} cli_command;

extern const cli_command cmd_info;
extern const cli_command cmd_ls;
extern const cli_command cmd_get;
extern const cli_command cmd_create;
extern const cli_command cmd_put;
extern const cli_command cmd_copy;
extern const cli_command cmd_sample;
extern const cli_command cmd_eval;
extern const cli_command cmd_rechunk;
extern const cli_command cmd_worker;
extern const cli_command cmd_status;

/* Parse a command's arguments (cli_parse) and handle --help and usage errors.
 * Returns -1 when the command should go on, else the exit status to return. */
int cz_args(const cli_command *c, int argc, char **argv, const cli_opt *opts, const char **pos, int minpos,
            int maxpos, int *npos);

/* ---- shared by the commands (cli_zarr.c); each prints its own error line and
 * returns an exit status (0 on success). */

/* The folder `path` names (a path, or a file:// URL's path), or NULL for
 * another URL (memory://, s3://, http(s)://). */
const char *cz_local_path(const char *path);
/* The folders a new output at the local `path` will need made (its missing
 * ancestors, innermost first). Once the output is written they become groups,
 * as zarr-python makes every parent a group, so the hierarchy opens from its
 * top (other URLs have no folders to make: none). */
typedef struct {
    char dir[8][1024];
    int n;
} cz_parents;
void cz_parents_missing(const char *path, cz_parents *p);
int cz_parents_make_groups(const cz_parents *p, int zarr_format);
/* Open the store whose root is `path` (a local folder, file://, memory://). */
int cz_open_store(const char *path, unsigned flags, zc_store **out);
/* Open the array at `path` (the store root is the array folder); refuses
 * groups and folders without metadata with a message saying so. */
int cz_open_array(const char *path, int writable, zc_store **st, zc_zarr **arr, zc_zarr_info_t *info);
/* Close both (either may be NULL). */
void cz_close(zc_store *st, zc_zarr *arr);
/* Apply --threads (NULL = leave the library default). */
int cz_set_threads(zc_zarr *arr, const char *threads);
/* The unit grid of writes (shards if sharded, else chunks) or of reads (chunks). */
void cz_write_unit(const zc_zarr_info_t *info, int64_t *unit);

#endif
