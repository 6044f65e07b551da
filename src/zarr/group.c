/* zarr/group.c — groups: what a node is, creating groups, walking a hierarchy.
 *
 * A walk lists folders through the store and descends only into children that
 * are nodes (so chunk folders are never scanned). A v2 hierarchy with
 * consolidated metadata (consolidated.c) is walked from that document instead,
 * without listing. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "zarr/zarr.h"

#define KEY_MAX 4096

static int node_at(store *st, const char *path, zc_node_kind *kind, int *fmt)
{
    char key[KEY_MAX];
    void *doc = NULL;
    size_t n;
    *kind = ZC_NODE_NONE;
    *fmt = 0;
    ZC_TRY(zarr_meta_key(path, "zarr.json", key, sizeof key));
    int rc = store_get(st, key, &doc, &n);
    if (rc == 0) {
        json_error_t jerr;
        json_t *j = zc_json_load(doc, n, 0, &jerr);
        zc__free(doc);
        if (!j) return zc__err(ZC_EFORMAT, "%s: invalid JSON at line %d: %s", key, jerr.line, jerr.text);
        const char *nt = json_string_value(json_object_get(j, "node_type"));
        *fmt = 3;
        *kind = nt && !strcmp(nt, "array") ? ZC_NODE_ARRAY : nt && !strcmp(nt, "group") ? ZC_NODE_GROUP : ZC_NODE_NONE;
        json_decref(j);
        if (*kind == ZC_NODE_NONE) return zc__err(ZC_EFORMAT, "%s: unknown node_type", key);
        return 0;
    }
    if (rc != ZC_ENOENT) return rc;
    uint64_t size;
    ZC_TRY(zarr_meta_key(path, ".zarray", key, sizeof key));
    if ((rc = store_size(st, key, &size)) == 0) {
        *kind = ZC_NODE_ARRAY;
        *fmt = 2;
        return 0;
    }
    if (rc != ZC_ENOENT) return rc;
    ZC_TRY(zarr_meta_key(path, ".zgroup", key, sizeof key));
    if ((rc = store_size(st, key, &size)) == 0) {
        *kind = ZC_NODE_GROUP;
        *fmt = 2;
        return 0;
    }
    return rc == ZC_ENOENT ? 0 : rc;
}

static const char *strip(const char *path)
{
    while (path && *path == '/') path++;
    return path ? path : "";
}

int zc_node_kind_at(zc_store *st, const char *path, zc_node_kind *kind, int *zarr_format)
{
    zc__err_clear();
    if (!st || !kind) return zc__err(ZC_EINVAL, "zc_node_kind_at: NULL argument");
    int fmt;
    char p[KEY_MAX];
    snprintf(p, sizeof p, "%s", strip(path));
    size_t n = strlen(p);
    while (n && p[n - 1] == '/') p[--n] = 0;
    ZC_TRY(node_at(st, p, kind, &fmt));
    if (zarr_format) *zarr_format = fmt;
    return 0;
}

int zarr_group_put(store *st, const char *path, int zarr_format)
{
    char key[KEY_MAX];
    const char *p = strip(path);
    if (zarr_format == 2) {
        ZC_TRY(zarr_meta_key(p, ".zgroup", key, sizeof key));
        const char *doc = "{\n    \"zarr_format\": 2\n}";
        return store_put(st, key, doc, strlen(doc));
    }
    if (zarr_format != 3) return zc__err(ZC_EINVAL, "zarr_format must be 2 or 3");
    ZC_TRY(zarr_meta_key(p, "zarr.json", key, sizeof key));
    const char *doc = "{\n  \"zarr_format\": 3,\n  \"node_type\": \"group\",\n  \"attributes\": {}\n}";
    return store_put(st, key, doc, strlen(doc));
}

int zc_group_create(zc_store *st, const char *path, int zarr_format)
{
    zc__err_clear();
    if (!st) return zc__err(ZC_EINVAL, "zc_group_create: NULL store");
    ZC_TRY(zarr_group_put(st, path, zarr_format));
    return zarr_consolidated_update(st, strip(path));
}

/* ---- walking ---- */

/* Folders only, without their trailing '/'. */
static int collect(const char *key, void *ctx)
{
    size_t len = strlen(key);
    if (!len || key[len - 1] != '/') return 0;
    ZC_TRY(store_keys_add(key, ctx));
    store_keys *l = ctx;
    l->keys[l->n - 1][len - 1] = 0;
    return 0;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static int walk(store *st, const char *path, zc_node_kind kind, int fmt, zc_node_fn fn, void *ctx, int depth)
{
    if (kind != ZC_NODE_NONE) {
        int rc = fn(path, kind, fmt, ctx);
        if (rc) return rc;
    }
    if (kind == ZC_NODE_ARRAY || depth > 64) return 0;
    store_keys l = {0};
    int rc = store_list_dir(st, path, collect, &l);
    if (rc == 0 && l.n) qsort(l.keys, l.n, sizeof *l.keys, cmp_str);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        /* list_dir gives keys relative to the root */
        const char *child = l.keys[i];
        zc_node_kind ck;
        int cf;
        if ((rc = node_at(st, child, &ck, &cf)) < 0) break;
        if (ck != ZC_NODE_NONE) rc = walk(st, child, ck, cf, fn, ctx, depth + 1);
    }
    store_keys_free(&l);
    return rc;
}

int zarr_walk_listing(store *st, const char *path, zc_node_fn fn, void *ctx)
{
    zc_node_kind kind;
    int fmt;
    ZC_TRY(node_at(st, path, &kind, &fmt));
    return walk(st, path, kind, fmt, fn, ctx, 0);
}

int zc_group_walk(zc_store *st, const char *path, zc_node_fn fn, void *ctx)
{
    zc__err_clear();
    if (!st || !fn) return zc__err(ZC_EINVAL, "zc_group_walk: NULL argument");
    char p[KEY_MAX];
    snprintf(p, sizeof p, "%s", strip(path));
    size_t n = strlen(p);
    while (n && p[n - 1] == '/') p[--n] = 0;
    bool indexed;
    int rc = zarr_index_walk(st, p, fn, ctx, &indexed);
    if (rc || indexed) return rc;
    zc_node_kind kind;
    int fmt;
    ZC_TRY(node_at(st, p, &kind, &fmt));
    if (kind == ZC_NODE_NONE && p[0]) return zc__err(ZC_ENOENT, "no Zarr group or array at '%s' in %s", p, st->url);
    return walk(st, p, kind, fmt, fn, ctx, 0);
}
