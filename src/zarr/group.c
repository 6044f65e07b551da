/* zarr/group.c — groups: what a node is, creating groups, walking a hierarchy.
 *
 * A walk lists folders through the store and descends only into children that
 * are nodes (so chunk folders are never scanned). A v2 hierarchy with
 * consolidated metadata (.zmetadata at the walked path) is walked from that
 * document instead, without listing; so every node written is entered into the
 * indexes of the groups above it. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "store/url.h"
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

/* Read a consolidated index: *j is the whole document, *meta its "metadata". */
static int index_load(const char *key, const void *doc, size_t n, json_t **j, json_t **meta)
{
    json_error_t jerr;
    *j = zc_json_load(doc, n, 0, &jerr);
    if (!*j) return zc__err(ZC_EFORMAT, "%s: invalid JSON at line %d: %s", key, jerr.line, jerr.text);
    *meta = json_object_get(*j, "metadata");
    if (json_is_object(*meta)) return 0;
    json_decref(*j);
    return zc__err(ZC_EFORMAT, "%s: no \"metadata\" object", key);
}


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

/* Walk from the consolidated metadata of the node at `path`: every
 * ".zarray"/".zgroup" key it holds, named from the root as walk() names them. */
static int walk_consolidated(json_t *meta, const char *path, zc_node_fn fn, void *ctx)
{
    size_t n = 0;
    const char *key;
    json_t *v;
    char **nodes = zc__calloc(json_object_size(meta) + 1, sizeof(char *));
    if (!nodes) return ZC_ENOMEM;
    json_object_foreach(meta, key, v) {
        size_t kl = strlen(key);
        bool arr = kl >= 7 && !strcmp(key + kl - 7, ".zarray"), grp = kl >= 7 && !strcmp(key + kl - 7, ".zgroup");
        if (!arr && !grp) continue;
        nodes[n++] = (char *)key;
    }
    qsort(nodes, n, sizeof *nodes, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char node[KEY_MAX];
        size_t kl = strlen(nodes[i]) - 7;
        if (kl) kl--; /* drop the '/' before .zarray */
        snprintf(node, sizeof node, "%s%s%.*s", path, path[0] && kl ? "/" : "", (int)kl, nodes[i]);
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
        json_t *j, *meta;
        rc = index_load(key, doc, dn, &j, &meta);
        zc__free(doc);
        if (rc < 0) return rc;
        rc = walk_consolidated(meta, p, fn, ctx);
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

/* ---- consolidated metadata ---- */

/* Enter the v2 documents the store holds for `node` into an index's metadata,
 * under `rel` (the node's path relative to the index). */
static int enter_docs(store *st, const char *node, const char *rel, json_t *meta)
{
    static const char *const names[] = {".zarray", ".zgroup", ".zattrs"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char key[KEY_MAX], entry[KEY_MAX];
        ZC_TRY(zarr_meta_key(node, names[i], key, sizeof key));
        ZC_TRY(zarr_meta_key(rel, names[i], entry, sizeof entry));
        void *doc;
        size_t n;
        int rc = store_get(st, key, &doc, &n);
        if (rc == ZC_ENOENT) {
            json_object_del(meta, entry);
            continue;
        }
        if (rc < 0) return rc;
        json_error_t jerr;
        json_t *j = zc_json_load(doc, n, 0, &jerr);
        zc__free(doc);
        if (!j) return zc__err(ZC_EFORMAT, "%s: invalid JSON at line %d: %s", key, jerr.line, jerr.text);
        if (json_object_set_new(meta, entry, j)) return ZC_ENOMEM;
    }
    return 0;
}

typedef struct {
    store *st;
    json_t *meta;
    size_t skip; /* the index's folder in the node names walk() gives */
} enter_ctx;

static int enter_node(const char *node, zc_node_kind kind, int fmt, void *ctx)
{
    (void)kind;
    enter_ctx *c = ctx;
    return fmt == 2 ? enter_docs(c->st, node, node + c->skip, c->meta) : 0;
}

/* Bring the index at `dir` up to date with the node at `path` below it. */
static int index_update(store *st, const char *dir, const char *path, const void *doc, size_t n)
{
    char key[KEY_MAX];
    ZC_TRY(zarr_meta_key(dir, ".zmetadata", key, sizeof key));
    json_t *j, *meta;
    ZC_TRY(index_load(key, doc, n, &j, &meta));
    const char *rel = path + strlen(dir) + (dir[0] ? 1 : 0);
    size_t rl = strlen(rel);
    /* entries of whatever was at rel before (an array that was replaced, a
     * group's old members) */
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(meta, tmp, k, v) {
        if (!strncmp(k, rel, rl) && k[rl] == '/') json_object_del(meta, k);
    }
    int rc = 0;
    /* the groups between the index and the node */
    for (size_t i = 1; rc == 0 && i < rl; i++) {
        if (rel[i] != '/') continue;
        char node[KEY_MAX], sub[KEY_MAX];
        snprintf(sub, sizeof sub, "%.*s", (int)i, rel);
        snprintf(node, sizeof node, "%s%s%s", dir, dir[0] ? "/" : "", sub);
        rc = enter_docs(st, node, sub, meta);
    }
    /* then the node and everything below it (a group made around an array
     * written earlier) */
    zc_node_kind kind;
    int fmt;
    if (rc == 0 && (rc = node_at(st, path, &kind, &fmt)) == 0) {
        enter_ctx c = {st, meta, strlen(dir) + (dir[0] ? 1 : 0)};
        rc = walk(st, path, kind, fmt, enter_node, &c, 0);
    }
    char *text = NULL;
    if (rc == 0) {
        /* as zarr-python writes it */
        text = zc_json_dump(j, JSON_INDENT(4) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENSURE_ASCII);
        rc = text ? store_put(st, key, text, strlen(text)) : zc__err(ZC_ENOMEM, "cannot serialize %s", key);
    }
    free(text);
    json_decref(j);
    return rc;
}

/* The index at the root of `st` (when there is one) and those of the groups
 * between it and `path`, innermost last. */
static int update_within(store *st, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < n; i++) {
        if (i && path[i] != '/') continue;
        char dir[KEY_MAX], key[KEY_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)i, path);
        ZC_TRY(zarr_meta_key(dir, ".zmetadata", key, sizeof key));
        void *doc;
        size_t dn;
        int rc = store_get(st, key, &doc, &dn);
        if (rc == ZC_ENOENT) continue;
        if (rc == 0) {
            rc = index_update(st, dir, path, doc, dn);
            zc__free(doc);
        }
        if (rc < 0) return zc__err_wrap(rc, "updating the consolidated metadata %s of %s", key, st->url);
    }
    return 0;
}

/* A node at the root of its store may be a member of groups above it (a
 * folder or an S3 prefix of a hierarchy opened at the node's own URL): walk up
 * the parent URLs while they are groups, updating each one's index. */
static int update_above(store *st)
{
    char url[KEY_MAX], rel[KEY_MAX] = "";
    snprintf(url, sizeof url, "%s", st->url);
    for (int level = 0; level < 64; level++) {
        char parent[KEY_MAX], name[KEY_MAX], longer[KEY_MAX];
        if (!store_parent_url(url, parent, sizeof parent, name, sizeof name)) return 0;
        int len = snprintf(longer, sizeof longer, "%s%s%s", name, rel[0] ? "/" : "", rel);
        if (len < 0 || (size_t)len >= sizeof longer) return 0;
        memcpy(rel, longer, (size_t)len + 1);
        store *up;
        if (zc_store_open(parent, 0, &up) < 0) { /* not a folder we may open: no hierarchy */
            zc__err_clear();
            return 0;
        }
        zc_node_kind kind;
        int fmt;
        int rc = node_at(up, "", &kind, &fmt);
        if (rc == 0 && kind == ZC_NODE_GROUP) rc = update_within(up, rel);
        zc_store_close(up);
        if (rc < 0) return rc;
        if (kind != ZC_NODE_GROUP) return 0;
        snprintf(url, sizeof url, "%s", parent);
    }
    return 0;
}

int zarr_consolidated_update(store *st, const char *path)
{
    ZC_TRY(update_within(st, path));
    return path[0] ? 0 : update_above(st);
}
