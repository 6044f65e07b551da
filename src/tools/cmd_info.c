/* tools/cmd_info.c — `zcube info PATH [--json]`: an array's metadata and
 * storage statistics, or a group's members.
 *
 * The metadata comes from zc_zarr_metadata_json (already normalized by the
 * library) and zc_zarr_stats; the human form renders it as aligned
 * "key: value" lines, codecs as name(key=value, ...). */
#define _GNU_SOURCE /* vasprintf */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "npy.h"

static const char USAGE[] =
    "usage: zcube info PATH [--json]\n"
    "\n"
    "Show what is at PATH, a local folder holding a Zarr v2 or v3 array or group.\n"
    "\n"
    "For an array: format, shape, dtype, chunks, shards, codecs, fill value,\n"
    "order, dimension names, attributes, how many chunks (shards when sharded)\n"
    "are stored, and bytes stored against bytes when decoded.\n"
    "For a group: its format and its direct members (kind, dtype, shape).\n"
    "\n"
    "Options:\n"
    "  --json      print one JSON object instead of \"key: value\" lines; for an\n"
    "              array it is the normalized metadata plus \"path\", \"node\" and\n"
    "              \"stored\": {chunks_total, chunks_stored, bytes_stored, bytes_decoded}\n"
    "  -h, --help  this text\n";

/* ------------------------------------------------------------ text building */

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *t, size_t len)
{
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + len + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, t, len);
    b->n += len;
    b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *t) { sb_add(b, t, strlen(t)); }

static void sb_json(sbuf *b, const json_t *v)
{
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    if (!t) {
        b->oom = 1;
        return;
    }
    /* compact jansson output still has ", " and ": "; keep it */
    sb_str(b, t);
    free(t);
}

static void render_codecs(sbuf *b, const json_t *list);

/* A value inside a codec's configuration. */
static void render_value(sbuf *b, const json_t *v)
{
    if (json_is_string(v)) {
        sb_str(b, json_string_value(v));
    } else if (json_is_array(v) && json_array_size(v) > 0 && json_is_object(json_array_get(v, 0)) &&
               (json_object_get(json_array_get(v, 0), "name") || json_object_get(json_array_get(v, 0), "id"))) {
        render_codecs(b, v);
    } else {
        sb_json(b, v);
    }
}

static void render_pairs(sbuf *b, const json_t *obj, const char *skip)
{
    const char *k;
    const json_t *v;
    int first = 1;
    json_object_foreach((json_t *)obj, k, v) {
        if (skip && !strcmp(k, skip)) continue;
        if (!first) sb_str(b, ", ");
        first = 0;
        sb_str(b, k);
        sb_str(b, "=");
        render_value(b, v);
    }
}

/* {"name": n, "configuration": {...}} → n(k=v, ...); v2 {"id": n, ...} likewise. */
static void render_codec(sbuf *b, const json_t *c)
{
    const json_t *name = json_object_get(c, "name");
    if (json_is_string(name)) {
        sb_str(b, json_string_value(name));
        const json_t *conf = json_object_get(c, "configuration");
        if (json_is_object(conf) && json_object_size(conf)) {
            sb_str(b, "(");
            render_pairs(b, conf, NULL);
            sb_str(b, ")");
        }
        return;
    }
    const json_t *id = json_object_get(c, "id");
    if (json_is_string(id)) {
        sb_str(b, json_string_value(id));
        if (json_object_size(c) > 1) {
            sb_str(b, "(");
            render_pairs(b, c, "id");
            sb_str(b, ")");
        }
        return;
    }
    sb_json(b, c);
}

static void render_codecs(sbuf *b, const json_t *list)
{
    if (!json_is_array(list)) {
        sb_json(b, list);
        return;
    }
    sb_str(b, "[");
    for (size_t i = 0; i < json_array_size(list); i++) {
        if (i) sb_str(b, ", ");
        render_codec(b, json_array_get(list, i));
    }
    sb_str(b, "]");
}

/* ------------------------------------------------------------ key: value lines */

#define MAX_LINES 32

typedef struct {
    const char *key[MAX_LINES];
    char *val[MAX_LINES];
    int n;
    int oom;
} lines_t;

static void line_add(lines_t *l, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line_add(lines_t *l, const char *key, const char *fmt, ...)
{
    if (l->n >= MAX_LINES) return;
    va_list ap;
    va_start(ap, fmt);
    char *v = NULL;
    if (vasprintf(&v, fmt, ap) < 0) v = NULL;
    va_end(ap);
    if (!v) {
        l->oom = 1;
        return;
    }
    l->key[l->n] = key;
    l->val[l->n++] = v;
}

static void lines_print(lines_t *l)
{
    size_t w = 0;
    for (int i = 0; i < l->n; i++)
        if (strlen(l->key[i]) > w) w = strlen(l->key[i]);
    for (int i = 0; i < l->n; i++) {
        printf("%s:%*s %s\n", l->key[i], (int)(w - strlen(l->key[i])), "", l->val[i]);
        free(l->val[i]);
    }
    l->n = 0;
}

static void lines_free(lines_t *l)
{
    for (int i = 0; i < l->n; i++) free(l->val[i]);
    l->n = 0;
}

/* "(3, 4)" from a JSON array of integers. */
static void shape_text(const json_t *arr, char *buf, size_t size)
{
    int64_t v[ZC_MAX_DIMS];
    int n = 0;
    for (size_t i = 0; i < json_array_size(arr) && n < ZC_MAX_DIMS; i++)
        v[n++] = json_integer_value(json_array_get(arr, i));
    cli_format_shape(buf, size, n, v);
}

/* ------------------------------------------------------------ arrays */

static int info_array(const char *path, int as_json)
{
    zc_store *st;
    zc_zarr *arr;
    zc_zarr_info_t info;
    int ec = cz_open_array(path, 0, &st, &arr, &info);
    if (ec) return ec;
    char *text = NULL;
    zc_zarr_stats_t stats;
    int rc = zc_zarr_metadata_json(arr, &text);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "'%s': metadata", path);
        goto done;
    }
    rc = zc_zarr_stats(arr, &stats);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "'%s': storage statistics", path);
        goto done;
    }
    json_error_t jerr;
    json_t *meta = json_loads(text, 0, &jerr);
    if (!meta) /* a uint64 fill value above 2^63 is beyond jansson's integers: approximate it for display */
        meta = json_loads(text, JSON_DECODE_INT_AS_REAL, &jerr);
    if (!json_is_object(meta)) {
        json_decref(meta);
        ec = cli_fail(CLI_EXIT_RUNTIME, "'%s': the library returned unreadable metadata JSON: %s", path, jerr.text);
        goto done;
    }
    int sharded = json_is_array(json_object_get(meta, "shards"));
    if (as_json) {
        /* the library's metadata text is spliced in verbatim, so values jansson cannot
         * hold (uint64 fill values above 2^63) come out exact */
        json_t *out = json_object();
        json_object_set_new(out, "path", json_string(path));
        json_object_set_new(out, "node", json_string("array"));
        json_t *stored = json_pack("{s:I, s:I, s:I, s:I, s:s}", "chunks_total", (json_int_t)stats.chunks_total,
                                   "chunks_stored", (json_int_t)stats.chunks_stored, "bytes_stored",
                                   (json_int_t)stats.bytes_stored, "bytes_decoded", (json_int_t)stats.bytes_decoded,
                                   "unit", sharded ? "shard" : "chunk");
        char *head = json_dumps(out, JSON_COMPACT), *tail = json_dumps(stored, JSON_COMPACT);
        json_decref(out);
        json_decref(stored);
        const char *body = strchr(text, '{'), *end = strrchr(text, '}');
        if (!head || !tail || !body || !end) {
            free(head);
            free(tail);
            json_decref(meta);
            ec = cli_fail(CLI_EXIT_RUNTIME, "out of memory");
            goto done;
        }
        /* head is {"path":..,"node":..}: drop its closing brace, add the metadata members and "stored" */
        head[strlen(head) - 1] = 0;
        printf("%s,", head);
        for (const char *c = body + 1; c < end; c++)
            if (*c != '\n') putchar(*c);
        printf(",\"stored\":%s}\n", tail);
        free(head);
        free(tail);
        json_decref(meta);
        goto done;
    }

    lines_t l = {0};
    char buf[ZC_MAX_DIMS * 24 + 8];
    sbuf b = {0};
    line_add(&l, "path", "%s", path);
    line_add(&l, "node", "array");
    line_add(&l, "zarr_format", "%d", info.zarr_format);
    shape_text(json_object_get(meta, "shape"), buf, sizeof buf);
    line_add(&l, "shape", "%s", buf);
    const json_t *dt = json_object_get(meta, "dtype");
    const char *npdt = json_string_value(json_object_get(meta, "numpy_dtype"));
    if (json_is_string(dt)) {
        line_add(&l, "dtype", "%s%s%s%s", json_string_value(dt), npdt ? " (" : "", npdt ? npdt : "", npdt ? ")" : "");
    } else {
        sb_json(&b, dt);
        line_add(&l, "dtype", "%s%s%s%s", b.s ? b.s : "?", npdt ? " (" : "", npdt ? npdt : "", npdt ? ")" : "");
        b.n = 0;
    }
    shape_text(json_object_get(meta, "chunks"), buf, sizeof buf);
    line_add(&l, "chunks", "%s", buf);
    if (sharded) shape_text(json_object_get(meta, "shards"), buf, sizeof buf);
    line_add(&l, "shards", "%s", sharded ? buf : "none");
    render_codecs(&b, json_object_get(meta, "codecs"));
    line_add(&l, "codecs", "%s", b.s ? b.s : "[]");
    b.n = 0;
    sb_json(&b, json_object_get(meta, "fill_value"));
    line_add(&l, "fill_value", "%s", b.s ? b.s : "?");
    b.n = 0;
    const char *order = json_string_value(json_object_get(meta, "order"));
    if (order) line_add(&l, "order", "%s", order);
    const char *sep = json_string_value(json_object_get(meta, "separator"));
    if (sep) line_add(&l, "separator", "%s", sep);
    const json_t *dn = json_object_get(meta, "dimension_names");
    if (dn && !json_is_null(dn)) {
        sb_json(&b, dn);
        line_add(&l, "dimension_names", "%s", b.s ? b.s : "?");
        b.n = 0;
    }
    sb_json(&b, json_object_get(meta, "attributes"));
    line_add(&l, "attributes", "%s", b.s ? b.s : "{}");
    const char *unit = sharded ? "shards" : "chunks";
    double pct = stats.chunks_total ? 100.0 * (double)stats.chunks_stored / (double)stats.chunks_total : 0;
    line_add(&l, sharded ? "shards_stored" : "chunks_stored", "%lld of %lld %s (%.1f%%)",
             (long long)stats.chunks_stored, (long long)stats.chunks_total, unit, pct);
    char h1[32], h2[32];
    cli_format_bytes(h1, sizeof h1, (uint64_t)stats.bytes_stored);
    cli_format_bytes(h2, sizeof h2, (uint64_t)stats.bytes_decoded);
    line_add(&l, "bytes_stored", "%lld (%s)", (long long)stats.bytes_stored, h1);
    line_add(&l, "bytes_decoded", "%lld (%s)", (long long)stats.bytes_decoded, h2);
    if (stats.bytes_stored > 0)
        line_add(&l, "ratio", "%.2f (decoded / stored)", (double)stats.bytes_decoded / (double)stats.bytes_stored);
    free(b.s);
    json_decref(meta);
    if (l.oom || b.oom) {
        lines_free(&l);
        ec = cli_fail(CLI_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    lines_print(&l);
done:
    zc_free(text);
    cz_close(st, arr);
    return ec;
}

/* ------------------------------------------------------------ groups */

typedef struct {
    zc_store *st;
    json_t *members; /* array of {name, kind, zarr_format, dtype?, shape?, error?} */
    int arrays, groups;
} group_ctx;

static int on_member(const char *p, zc_node_kind kind, int fmt, void *vctx)
{
    group_ctx *g = vctx;
    if (!*p || strchr(p, '/')) return 0; /* the group itself, or deeper */
    json_t *m = json_pack("{s:s, s:s, s:i}", "name", p, "kind", kind == ZC_NODE_ARRAY ? "array" : "group",
                          "zarr_format", fmt);
    if (!m) return 1; /* out of memory: stops the walk */
    if (kind == ZC_NODE_ARRAY) {
        g->arrays++;
        zc_zarr *a = NULL;
        zc_zarr_info_t info;
        int rc = zc_zarr_open(g->st, p, &a);
        if (rc == 0) rc = zc_zarr_info(a, &info);
        if (rc == 0) {
            char lab[32];
            npy_dtype_label(info.dtype, info.itemsize, lab, sizeof lab);
            json_t *shape = json_array();
            for (int d = 0; d < info.ndim; d++) json_array_append_new(shape, json_integer(info.shape[d]));
            json_object_set_new(m, "dtype", json_string(lab));
            json_object_set_new(m, "shape", shape);
        } else {
            const char *msg = zc_errmsg();
            json_object_set_new(m, "error", json_string(*msg ? msg : zc_strerror(rc)));
        }
        zc_zarr_close(a);
    } else {
        g->groups++;
    }
    json_array_append_new(g->members, m);
    return 0;
}

static int info_group(const char *path, zc_store *st, int fmt, int as_json)
{
    group_ctx g = {st, json_array(), 0, 0};
    int rc = zc_group_walk(st, "", on_member, &g);
    if (rc != 0) {
        json_decref(g.members);
        return rc < 0 ? cli_fail_zc(rc, "listing '%s'", path) : cli_fail(CLI_EXIT_RUNTIME, "out of memory");
    }
    if (as_json) {
        json_t *out = json_pack("{s:s, s:s, s:i, s:o}", "path", path, "node", "group", "zarr_format", fmt,
                                "members", g.members);
        char *s = out ? json_dumps(out, JSON_COMPACT) : NULL;
        json_decref(out);
        if (!s) return cli_fail(CLI_EXIT_RUNTIME, "out of memory");
        printf("%s\n", s);
        free(s);
        return 0;
    }
    lines_t l = {0};
    line_add(&l, "path", "%s", path);
    line_add(&l, "node", "group");
    line_add(&l, "zarr_format", "%d", fmt);
    line_add(&l, "members", "%d (%d arrays, %d groups)", g.arrays + g.groups, g.arrays, g.groups);
    if (l.oom) {
        lines_free(&l);
        json_decref(g.members);
        return cli_fail(CLI_EXIT_RUNTIME, "out of memory");
    }
    lines_print(&l);
    size_t w = 0;
    for (size_t i = 0; i < json_array_size(g.members); i++) {
        size_t n = strlen(json_string_value(json_object_get(json_array_get(g.members, i), "name")));
        if (n > w) w = n;
    }
    for (size_t i = 0; i < json_array_size(g.members); i++) {
        json_t *m = json_array_get(g.members, i);
        const char *name = json_string_value(json_object_get(m, "name"));
        const char *kind = json_string_value(json_object_get(m, "kind"));
        printf("  %-*s  %-5s v%d", (int)w, name, kind, (int)json_integer_value(json_object_get(m, "zarr_format")));
        if (json_object_get(m, "error")) {
            printf("  (cannot open: %s)", json_string_value(json_object_get(m, "error")));
        } else if (json_object_get(m, "dtype")) {
            char buf[ZC_MAX_DIMS * 24 + 8];
            shape_text(json_object_get(m, "shape"), buf, sizeof buf);
            printf("  %-8s %s", json_string_value(json_object_get(m, "dtype")), buf);
        }
        printf("\n");
    }
    json_decref(g.members);
    return 0;
}

static int run(int argc, char **argv)
{
    int as_json = 0;
    cli_opt opts[] = {{"json", 0, NULL, &as_json}, {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    int ec = cz_args(&cmd_info, argc, argv, opts, pos, 1, 1, &npos);
    if (ec >= 0) return ec;
    const char *path = pos[0];
    zc_store *st;
    if ((ec = cz_open_store(path, ZC_STORE_READONLY, &st))) return ec;
    zc_node_kind kind;
    int fmt;
    int rc = zc_node_kind_at(st, "", &kind, &fmt);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "'%s'", path);
    } else if (kind == ZC_NODE_NONE) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "'%s' is not a Zarr array or group (no .zarray, .zgroup or zarr.json)", path);
    } else if (kind == ZC_NODE_GROUP) {
        ec = info_group(path, st, fmt, as_json);
    }
    if (kind != ZC_NODE_ARRAY || rc < 0) {
        zc_store_close(st);
        return ec;
    }
    zc_store_close(st);
    return info_array(path, as_json);
}

const cli_command cmd_info = {"info", "show an array's metadata and storage statistics, or a group's members",
                              USAGE, run};
