/* zarr/group.c — groups: what a node is, creating groups, walking a hierarchy.
 *
 * A walk lists folders through the store and descends only into children that
 * are nodes (so chunk folders are never scanned). A v2 hierarchy with
 * consolidated metadata (.zmetadata at the walked path) is walked from that
 * document instead, without listing. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
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
        json_t *j = json_loadb(doc, n, 0, &jerr);
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

int zc_group_create(zc_store *st, const char *path, int zarr_format)
{
    zc__err_clear();
    if (!st) return zc__err(ZC_EINVAL, "zc_group_create: NULL store");
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

/* ---- walking ---- */

typedef struct {
    char **names;
    size_t n, cap;
} name_list;

static int collect(const char *key, void *ctx)
{
    name_list *l = ctx;
    size_t len = strlen(key);
    if (!len || key[len - 1] != '/') return 0; /* only folders */
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        char **p = zc__realloc(l->names, ncap * sizeof *p);
        if (!p) return ZC_ENOMEM;
        l->names = p;
        l->cap = ncap;
    }
    if (!(l->names[l->n] = zc__strdup(key))) return ZC_ENOMEM;
    l->names[l->n++][len - 1] = 0;
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
    name_list l = {0};
    int rc = store_list_dir(st, path, collect, &l);
    if (rc == 0 && l.n) qsort(l.names, l.n, sizeof *l.names, cmp_str);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        /* list_dir gives keys relative to the root */
        const char *child = l.names[i];
        zc_node_kind ck;
        int cf;
        if ((rc = node_at(st, child, &ck, &cf)) < 0) break;
        if (ck != ZC_NODE_NONE) rc = walk(st, child, ck, cf, fn, ctx, depth + 1);
    }
    for (size_t i = 0; i < l.n; i++) zc__free(l.names[i]);
    zc__free(l.names);
    return rc;
}

/* Walk from consolidated metadata: every ".zarray"/".zgroup" key below path. */
static int walk_consolidated(json_t *meta, const char *path, zc_node_fn fn, void *ctx)
{
    size_t plen = strlen(path), n = 0;
    const char *key;
    json_t *v;
    char **nodes = zc__calloc(json_object_size(meta) + 1, sizeof(char *));
    if (!nodes) return ZC_ENOMEM;
    json_object_foreach(meta, key, v) {
        size_t kl = strlen(key);
        bool arr = kl >= 7 && !strcmp(key + kl - 7, ".zarray"), grp = kl >= 7 && !strcmp(key + kl - 7, ".zgroup");
        if (!arr && !grp) continue;
        if (plen && (strncmp(key, path, plen) || key[plen] != '/')) continue;
        nodes[n++] = (char *)key;
    }
    qsort(nodes, n, sizeof *nodes, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char node[KEY_MAX];
        size_t kl = strlen(nodes[i]) - 7;
        if (kl) kl--; /* drop the '/' before .zarray */
        snprintf(node, sizeof node, "%.*s", (int)kl, nodes[i]);
        rc = fn(node, strstr(nodes[i] + kl, ".zarray") ? ZC_NODE_ARRAY : ZC_NODE_GROUP, 2, ctx);
    }
    zc__free(nodes);
    return rc;
}

int zc_group_walk(zc_store *st, const char *path, zc_node_fn fn, void *ctx)
{
    zc__err_clear();
    if (!st || !fn) return zc__err(ZC_EINVAL, "zc_group_walk: NULL argument");
    char p[KEY_MAX];
    snprintf(p, sizeof p, "%s", strip(path));
    size_t n = strlen(p);
    while (n && p[n - 1] == '/') p[--n] = 0;
    char key[KEY_MAX];
    void *doc = NULL;
    size_t dn;
    ZC_TRY(zarr_meta_key(p, ".zmetadata", key, sizeof key));
    int rc = store_get(st, key, &doc, &dn);
    if (rc == 0) {
        json_error_t jerr;
        json_t *j = json_loadb(doc, dn, 0, &jerr);
        zc__free(doc);
        json_t *meta = json_object_get(j, "metadata");
        if (!json_is_object(meta)) {
            json_decref(j);
            return zc__err(ZC_EFORMAT, "%s: no \"metadata\" object", key);
        }
        rc = walk_consolidated(meta, "", fn, ctx);
        json_decref(j);
        return rc;
    }
    if (rc != ZC_ENOENT) return rc;
    zc_node_kind kind;
    int fmt;
    ZC_TRY(node_at(st, p, &kind, &fmt));
    if (kind == ZC_NODE_NONE && p[0]) return zc__err(ZC_ENOENT, "no Zarr group or array at '%s' in %s", p, st->url);
    return walk(st, p, kind, fmt, fn, ctx, 0);
}
