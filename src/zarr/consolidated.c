/* zarr/consolidated.c — consolidated metadata: one document holding the
 * metadata of a whole hierarchy, so readers need no listing (HTTP has none).
 *
 * Two forms, both read and kept up to date:
 *   v2: ".zmetadata" beside the group's .zgroup, {"metadata": {"a/.zarray":
 *       {...}, "a/.zattrs": {...}, "sub/.zgroup": {...}}, ...} (zarr-python 2,
 *       xarray);
 *   v3: the group's own zarr.json, {"consolidated_metadata": {"kind": "inline",
 *       "metadata": {"a": {array zarr.json}, "sub": {...}}}} (zarr-python 3).
 * A walk of a group with an index is walked from the index. Readers trust it,
 * so every node zcube writes is entered into the index of each group above it,
 * up through parent folders and S3 prefixes that are groups. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "store/url.h"
#include "zarr/zarr.h"

#define KEY_MAX 4096

typedef struct {
    int fmt;           /* 2 or 3 */
    char key[KEY_MAX]; /* the document holding it */
    json_t *doc;       /* that whole document */
    json_t *meta;      /* its "metadata" object */
} cindex;

static int load_json(store *st, const char *key, json_t **j)
{
    void *doc;
    size_t n;
    *j = NULL;
    ZC_TRY(store_get(st, key, &doc, &n));
    json_error_t jerr;
    *j = zc_json_load(doc, n, 0, &jerr);
    zc__free(doc);
    return *j ? 0 : zc__err(ZC_EFORMAT, "%s: invalid JSON at line %d: %s", key, jerr.line, jerr.text);
}

/* The index of the group at `dir`: 1 and *ix filled (free with json_decref(ix->doc)), 0 when it has none. */
static int index_open(store *st, const char *dir, cindex *ix)
{
    ZC_TRY(zarr_meta_key(dir, ".zmetadata", ix->key, sizeof ix->key));
    int rc = load_json(st, ix->key, &ix->doc);
    if (rc == 0) {
        ix->fmt = 2;
        ix->meta = json_object_get(ix->doc, "metadata");
        if (json_is_object(ix->meta)) return 1;
        json_decref(ix->doc);
        return zc__err(ZC_EFORMAT, "%s: no \"metadata\" object", ix->key);
    }
    if (rc != ZC_ENOENT) return rc;
    zc__err_clear();
    ZC_TRY(zarr_meta_key(dir, "zarr.json", ix->key, sizeof ix->key));
    rc = load_json(st, ix->key, &ix->doc);
    if (rc == ZC_ENOENT) {
        zc__err_clear();
        return 0;
    }
    if (rc < 0) return rc;
    ix->fmt = 3;
    const char *nt = json_string_value(json_object_get(ix->doc, "node_type"));
    json_t *cm = json_object_get(ix->doc, "consolidated_metadata");
    ix->meta = json_object_get(cm, "metadata");
    if (nt && !strcmp(nt, "group") && json_is_object(ix->meta)) return 1;
    json_decref(ix->doc);
    return 0;
}

/* ---- walking from an index ---- */

typedef struct {
    char *name;
    zc_node_kind kind;
} node_ref;

/* Paths in walk order: a parent before its children, siblings by name ("a",
 * "a/x", "a-b": '/' sorts first). */
static int cmp_path(const void *x, const void *y)
{
    const unsigned char *a = (const unsigned char *)((const node_ref *)x)->name;
    const unsigned char *b = (const unsigned char *)((const node_ref *)y)->name;
    for (; *a && *a == *b; a++, b++) {}
    int ca = *a == '/' ? 1 : *a ? *a + 1 : 0, cb = *b == '/' ? 1 : *b ? *b + 1 : 0;
    return ca - cb;
}

/* The nodes an index holds, named from the store's root. */
static int index_nodes(const cindex *ix, const char *dir, node_ref **out, size_t *count)
{
    size_t n = 0;
    node_ref *nodes = zc__calloc(json_object_size(ix->meta) + 1, sizeof *nodes);
    if (!nodes) return ZC_ENOMEM;
    int rc = 0;
    const char *key;
    json_t *v;
    if (ix->fmt == 3) /* the group itself is not among its entries */
        nodes[n++] = (node_ref){zc__strdup(dir), ZC_NODE_GROUP};
    json_object_foreach(ix->meta, key, v) {
        size_t kl = strlen(key);
        zc_node_kind kind = ZC_NODE_NONE;
        if (ix->fmt == 2) { /* ".zarray" or ".../.zarray" (not "x.zarray": another document) */
            bool whole = kl == 7 || (kl > 7 && key[kl - 8] == '/');
            if (whole && !strcmp(key + kl - 7, ".zarray")) kind = ZC_NODE_ARRAY;
            if (whole && !strcmp(key + kl - 7, ".zgroup")) kind = ZC_NODE_GROUP;
            if (kind == ZC_NODE_NONE) continue;
            kl -= kl > 7 ? 8 : 7; /* the node: the key without "/.zarray" */
        } else {
            const char *nt = json_string_value(json_object_get(v, "node_type"));
            kind = nt && !strcmp(nt, "array") ? ZC_NODE_ARRAY : nt && !strcmp(nt, "group") ? ZC_NODE_GROUP : ZC_NODE_NONE;
            if (kind == ZC_NODE_NONE) {
                rc = zc__err(ZC_EFORMAT, "%s: consolidated entry '%s' has no node_type", ix->key, key);
                break;
            }
        }
        /* the node's path below the group: the group itself only as v2's
         * ".zgroup"/".zarray", else a valid key, so no node comes twice */
        char rel[KEY_MAX];
        snprintf(rel, sizeof rel, "%.*s", (int)kl, key);
        if ((kl || ix->fmt == 3) && (kl >= sizeof rel || store_key_check(rel) < 0)) {
            rc = zc__err(ZC_EFORMAT, "%s: consolidated entry '%s' does not name a node below the group", ix->key, key);
            break;
        }
        size_t len = strlen(dir) + 1 + kl + 1;
        char *name = zc__malloc(len);
        if (!name) {
            rc = ZC_ENOMEM;
            break;
        }
        snprintf(name, len, "%s%s%.*s", dir, dir[0] && kl ? "/" : "", (int)kl, key);
        nodes[n++] = (node_ref){name, kind};
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!nodes[i].name) rc = ZC_ENOMEM;
    if (rc == 0) {
        qsort(nodes, n, sizeof *nodes, cmp_path);
        for (size_t i = 1; rc == 0 && i < n; i++)
            if (!strcmp(nodes[i - 1].name, nodes[i].name))
                rc = zc__err(ZC_EFORMAT, "%s: '%s' is both an array and a group", ix->key, nodes[i].name);
    }
    if (rc == 0) {
        *out = nodes;
        *count = n;
        return 0;
    }
    for (size_t i = 0; i < n; i++) zc__free(nodes[i].name);
    zc__free(nodes);
    return rc;
}

int zarr_index_walk(store *st, const char *dir, zc_node_fn fn, void *ctx, bool *indexed)
{
    cindex ix;
    int rc = index_open(st, dir, &ix);
    *indexed = rc == 1;
    if (rc <= 0) return rc;
    node_ref *nodes = NULL;
    size_t n = 0;
    rc = index_nodes(&ix, dir, &nodes, &n);
    json_decref(ix.doc);
    for (size_t i = 0; rc == 0 && i < n; i++) rc = fn(nodes[i].name, nodes[i].kind, ix.fmt, ctx);
    for (size_t i = 0; i < n; i++) zc__free(nodes[i].name);
    zc__free(nodes);
    return rc;
}

/* ---- keeping indexes true ---- */

/* Enter what the store holds for the node at `node` into an index, under
 * `rel` (the node's path relative to the index's group); drop what it lacks. */
static int enter_node_docs(store *st, const cindex *ix, const char *node, const char *rel)
{
    static const char *const v2[] = {".zarray", ".zgroup", ".zattrs"}, *const v3[] = {"zarr.json"};
    const char *const *names = ix->fmt == 2 ? v2 : v3;
    size_t count = ix->fmt == 2 ? 3 : 1;
    for (size_t i = 0; i < count; i++) {
        char key[KEY_MAX], entry[KEY_MAX];
        ZC_TRY(zarr_meta_key(node, names[i], key, sizeof key));
        if (ix->fmt == 2)
            ZC_TRY(zarr_meta_key(rel, names[i], entry, sizeof entry));
        else
            snprintf(entry, sizeof entry, "%s", rel);
        json_t *j;
        int rc = load_json(st, key, &j);
        if (rc == ZC_ENOENT) {
            zc__err_clear();
            json_object_del(ix->meta, entry);
            continue;
        }
        if (rc < 0) return rc;
        if (json_object_set_new(ix->meta, entry, j)) return ZC_ENOMEM;
    }
    return 0;
}

typedef struct {
    store *st;
    const cindex *ix;
    size_t skip; /* the index's group in the node names a walk gives */
} enter_ctx;

static int enter_walked(const char *node, zc_node_kind kind, int fmt, void *ctx)
{
    (void)kind;
    enter_ctx *c = ctx;
    return fmt == c->ix->fmt ? enter_node_docs(c->st, c->ix, node, node + c->skip) : 0;
}

/* Bring the index of the group at `dir` (when it has one) up to date with the
 * node at `path` below it. */
static int update_index(store *st, const char *dir, const char *path)
{
    cindex ix;
    int rc = index_open(st, dir, &ix);
    if (rc <= 0) return rc;
    size_t skip = strlen(dir) + (dir[0] ? 1 : 0);
    const char *rel = path + skip;
    size_t rl = strlen(rel);
    /* entries of whatever was at rel before (an array that was replaced, a
     * group's old members) */
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(ix.meta, tmp, k, v) {
        if (!strncmp(k, rel, rl) && (k[rl] == '/' || (ix.fmt == 3 && !k[rl]))) json_object_del(ix.meta, k);
    }
    /* the groups between the index and the node */
    for (size_t i = 1; rc >= 0 && i < rl; i++) {
        if (rel[i] != '/') continue;
        char node[KEY_MAX], sub[KEY_MAX];
        snprintf(sub, sizeof sub, "%.*s", (int)i, rel);
        snprintf(node, sizeof node, "%s%s%s", dir, dir[0] ? "/" : "", sub);
        rc = enter_node_docs(st, &ix, node, sub);
    }
    /* then the node and everything below it (a group made around an array
     * written earlier) */
    if (rc >= 0) {
        enter_ctx c = {st, &ix, skip};
        rc = zarr_walk_listing(st, path, enter_walked, &c);
    }
    char *text = NULL;
    if (rc >= 0) {
        /* v2 as zarr-python writes it; v3 as zcube writes zarr.json */
        size_t flags = JSON_INDENT(ix.fmt == 2 ? 4 : 2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17);
        text = zc_json_dump(ix.doc, flags | (ix.fmt == 2 ? JSON_ENSURE_ASCII : 0));
        rc = text ? store_put(st, ix.key, text, strlen(text)) : zc__err(ZC_ENOMEM, "cannot serialize %s", ix.key);
    }
    free(text);
    if (rc < 0) zc__err_wrap(rc, "updating the consolidated metadata %s of %s", ix.key, st->url);
    json_decref(ix.doc);
    return rc < 0 ? rc : 0;
}

/* The indexes of the store's root group and of the groups between it and `path`. */
static int update_within(store *st, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < n; i++) {
        if (i && path[i] != '/') continue;
        char dir[KEY_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)i, path);
        ZC_TRY(update_index(st, dir, path));
    }
    return 0;
}

/* A node at the root of its store may be a member of groups above it (a
 * folder or an S3 prefix of a hierarchy, opened at the node's own URL): walk up
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
        int rc = zc_node_kind_at(up, "", &kind, &fmt);
        if (rc == 0 && kind == ZC_NODE_GROUP) rc = update_index(up, "", rel);
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
