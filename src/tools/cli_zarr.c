/* tools/cli_zarr.c — open stores and arrays named on the command line, with
 * error lines that say what the path is when it is not what the command needs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_util.h"
#include "commands.h"

const char *cz_local_path(const char *path)
{
    if (!strncmp(path, "file://", 7)) return path + 7;
    return strstr(path, "://") ? NULL : path;
}

int cz_args(const cli_command *c, int argc, char **argv, const cli_opt *opts, const char **pos, int minpos,
            int maxpos, int *npos)
{
    int rc = cli_parse(argc, argv, opts, pos, maxpos, npos);
    if (rc == CLI_HELP) {
        fputs(c->usage, stdout);
        return CLI_EXIT_OK;
    }
    if (rc < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    if (*npos < minpos) {
        /* The first line of every usage text is the synopsis. */
        const char *syn = c->usage;
        if (!strncmp(syn, "usage: ", 7)) syn += 7;
        const char *nl = strchr(syn, '\n');
        int len = nl ? (int)(nl - syn) : (int)strlen(syn);
        return cli_fail(CLI_EXIT_USAGE, "missing argument; usage: %.*s", len, syn);
    }
    return -1;
}

/* A failed library call about `path`: name the path unless the library's
 * message already does. */
static int fail_at(int rc, const char *path)
{
    if (strstr(zc_errmsg(), path)) return cli_fail_zc(rc, NULL);
    return cli_fail_zc(rc, "'%s'", path);
}

void cz_parents_missing(const char *path, cz_parents *p)
{
    p->n = 0;
    const char *local = cz_local_path(path);
    if (!local) return;
    char dir[sizeof p->dir[0]];
    snprintf(dir, sizeof dir, "%s", local);
    for (char *slash = strrchr(dir, '/'); slash && slash != dir && p->n < 8; slash = strrchr(dir, '/')) {
        *slash = 0;
        struct stat sb;
        if (!dir[0] || stat(dir, &sb) == 0) break;
        snprintf(p->dir[p->n++], sizeof p->dir[0], "%s", dir);
    }
}

int cz_parents_make_groups(const cz_parents *p, int zarr_format)
{
    /* innermost first: the last, outermost one enters the whole new branch
     * into the consolidated metadata of a group above it, if any */
    for (int i = 0; i < p->n; i++) {
        zc_store *g;
        int rc = zc_store_open(p->dir[i], 0, &g);
        if (rc == 0) rc = zc_group_create(g, "", zarr_format);
        zc_store_close(g);
        if (rc < 0) return cli_fail_zc(rc, "making '%s' a group", p->dir[i]);
    }
    return 0;
}

int cz_open_store(const char *path, unsigned flags, zc_store **out)
{
    *out = NULL;
    if (!*path) return cli_fail(CLI_EXIT_USAGE, "empty path");
    const char *local = cz_local_path(path);
    if (local && !(flags & ZC_STORE_CREATE)) {
        struct stat st;
        if (stat(local, &st) < 0) return cli_fail(CLI_EXIT_RUNTIME, "'%s': %s", path, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return cli_fail(CLI_EXIT_RUNTIME, "'%s' is not a folder (a Zarr array or group is a folder)", path);
    }
    int rc = zc_store_open(path, flags, out);
    if (rc < 0) return fail_at(rc, path);
    return 0;
}

int cz_open_array(const char *path, int writable, zc_store **st, zc_zarr **arr, zc_zarr_info_t *info)
{
    *arr = NULL;
    int ec = cz_open_store(path, writable ? 0 : ZC_STORE_READONLY, st);
    if (ec) return ec;
    zc_node_kind kind;
    int fmt;
    int rc = zc_node_kind_at(*st, "", &kind, &fmt);
    if (rc < 0) {
        ec = fail_at(rc, path);
    } else if (kind == ZC_NODE_GROUP) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "'%s' is a Zarr v%d group, not an array (list it with 'zcube ls')", path, fmt);
    } else if (kind == ZC_NODE_NONE) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "'%s' is not a Zarr array (no .zarray or zarr.json)", path);
    } else if ((rc = zc_zarr_open(*st, "", arr)) < 0) {
        ec = fail_at(rc, path);
    } else if ((rc = zc_zarr_info(*arr, info)) < 0) {
        ec = fail_at(rc, path);
    }
    if (ec) {
        cz_close(*st, *arr);
        *st = NULL;
        *arr = NULL;
    }
    return ec;
}

void cz_close(zc_store *st, zc_zarr *arr)
{
    zc_zarr_close(arr);
    zc_store_close(st);
}

int cz_set_threads(zc_zarr *arr, const char *threads)
{
    if (!threads) return 0;
    int n;
    if (cli_parse_threads(threads, &n) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    int rc = zc_zarr_set_threads(arr, n);
    return rc < 0 ? cli_fail_zc(rc, "--threads %d", n) : 0;
}

void cz_write_unit(const zc_zarr_info_t *info, int64_t *unit)
{
    int sharded = 0;
    for (int d = 0; d < info->ndim; d++) sharded |= info->shards[d] != 0;
    for (int d = 0; d < info->ndim; d++) unit[d] = sharded ? info->shards[d] : info->chunks[d];
}
