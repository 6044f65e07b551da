/* tools/cmd_ls.c — `zcube ls PATH`: the hierarchy below PATH as an indented
 * tree, one node per line: name, kind, format, and for arrays dtype, shape and
 * chunks. Nodes are collected first (zc_group_walk) so columns can be aligned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "npy.h"

static const char USAGE[] =
    "usage: zcube ls PATH\n"
    "\n"
    "List the Zarr hierarchy below PATH (a local folder holding a group or an\n"
    "array), parents before children, children in name order, one node per line,\n"
    "indented by depth:\n"
    "\n"
    "  NAME  KIND  FORMAT  [DTYPE  SHAPE  chunks CHUNKS]\n"
    "\n"
    "Arrays that cannot be opened (unsupported dtype or codec, bad metadata) are\n"
    "listed with the reason; they do not make ls fail.\n"
    "\n"
    "Options:\n"
    "  -h, --help  this text\n";

typedef struct {
    char *path;
    zc_node_kind kind;
    int fmt;
    char desc[512]; /* dtype, shape, chunks, or the reason it cannot be opened */
} node_t;

typedef struct {
    zc_store *st;
    node_t *nodes;
    size_t n, cap;
} ls_ctx;

static int depth_of(const char *p)
{
    if (!*p) return 0;
    int d = 1;
    for (; *p; p++) d += *p == '/';
    return d;
}

static void describe(zc_store *st, const char *p, char *desc, size_t size)
{
    zc_zarr *a = NULL;
    zc_zarr_info_t info;
    int rc = zc_zarr_open(st, p, &a);
    if (rc == 0) rc = zc_zarr_info(a, &info);
    if (rc < 0) {
        const char *msg = zc_errmsg();
        snprintf(desc, size, "(cannot open: %s)", *msg ? msg : zc_strerror(rc));
        for (char *c = desc; *c; c++)
            if ((unsigned char)*c < 0x20) *c = ' ';
    } else {
        char lab[32], shp[ZC_MAX_DIMS * 24 + 8], chk[ZC_MAX_DIMS * 24 + 8];
        npy_dtype_label(info.dtype, info.itemsize, lab, sizeof lab);
        cli_format_shape(shp, sizeof shp, info.ndim, info.shape);
        cli_format_shape(chk, sizeof chk, info.ndim, info.chunks);
        int sharded = 0;
        for (int d = 0; d < info.ndim; d++) sharded |= info.shards[d] != 0;
        if (sharded) {
            char sh[ZC_MAX_DIMS * 24 + 8];
            cli_format_shape(sh, sizeof sh, info.ndim, info.shards);
            snprintf(desc, size, "%-10s %s  chunks %s  shards %s", lab, shp, chk, sh);
        } else {
            snprintf(desc, size, "%-10s %s  chunks %s", lab, shp, chk);
        }
    }
    zc_zarr_close(a);
}

static int on_node(const char *p, zc_node_kind kind, int fmt, void *vctx)
{
    ls_ctx *c = vctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        node_t *nn = realloc(c->nodes, cap * sizeof *nn);
        if (!nn) return 1;
        c->nodes = nn;
        c->cap = cap;
    }
    node_t *n = &c->nodes[c->n];
    if (!(n->path = strdup(p))) return 1;
    n->kind = kind;
    n->fmt = fmt;
    n->desc[0] = 0;
    if (kind == ZC_NODE_ARRAY) describe(c->st, p, n->desc, sizeof n->desc);
    c->n++;
    return 0;
}

static int run(int argc, char **argv)
{
    cli_opt opts[] = {{NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    int ec = cz_args(&cmd_ls, argc, argv, opts, pos, 1, 1, &npos);
    if (ec >= 0) return ec;
    const char *path = pos[0];
    zc_store *st;
    if ((ec = cz_open_store(path, ZC_STORE_READONLY, &st))) return ec;
    ls_ctx c = {st, NULL, 0, 0};
    zc_node_kind kind;
    int fmt;
    int rc = zc_node_kind_at(st, "", &kind, &fmt);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "'%s'", path);
    } else if (kind == ZC_NODE_NONE) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "'%s' is not a Zarr array or group (no .zarray, .zgroup or zarr.json)", path);
    } else if ((rc = zc_group_walk(st, "", on_node, &c)) != 0) {
        ec = rc < 0 ? cli_fail_zc(rc, "listing '%s'", path) : cli_fail(CLI_EXIT_RUNTIME, "out of memory");
    }
    if (!ec) {
        size_t w = strlen(path);
        for (size_t i = 0; i < c.n; i++) {
            if (!*c.nodes[i].path) continue;
            size_t n = 2 * (size_t)depth_of(c.nodes[i].path) + strlen(cli_basename(c.nodes[i].path));
            if (n > w) w = n;
        }
        for (size_t i = 0; i < c.n; i++) {
            const node_t *n = &c.nodes[i];
            const char *name = *n->path ? cli_basename(n->path) : path;
            int indent = 2 * depth_of(n->path);
            int pad = (int)w - indent - (int)strlen(name);
            printf("%*s%s%*s  %-5s v%d%s%s\n", indent, "", name, pad > 0 ? pad : 0, "",
                   n->kind == ZC_NODE_ARRAY ? "array" : "group", n->fmt, n->desc[0] ? "  " : "", n->desc);
        }
    }
    for (size_t i = 0; i < c.n; i++) free(c.nodes[i].path);
    free(c.nodes);
    zc_store_close(st);
    return ec;
}

const cli_command cmd_ls = {"ls", "list a group's hierarchy as a tree", USAGE, run};
