/* fuzz/fuzz_consolidated.c — consolidated metadata (zarr/consolidated.c): a
 * group walked from its index, and the index kept up to date by a write.
 *
 * Input layout:
 *   byte 0   mode: 0-3 the rest is a v2 ".zmetadata" (beside a root .zgroup),
 *            4-7 the rest is the root "zarr.json" (v3, an index when it is a
 *            group with "consolidated_metadata")
 *   rest     the document
 *
 * In a fresh memory store: zc_group_walk of the root must succeed or fail
 * with a message, and give names in walk order (a parent before its
 * children, siblings by name; '/' sorts first). Then an array is created at
 * "g/x" in the document's format: success, or a failure with a message. When
 * the first walk and the creation both succeeded, a second walk must succeed
 * and list "g/x" as an array: the write entered it into the index. */
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "store/store.h"

typedef struct {
    char last[4096];
    int count;
    bool saw_x;
} walk_ctx;

/* strcmp with '/' below every other byte: walk order. */
static int cmp_walk(const char *a, const char *b)
{
    for (; *a && *a == *b; a++, b++) {}
    int ca = *a == '/' ? 1 : *a ? (unsigned char)*a + 1 : 0, cb = *b == '/' ? 1 : *b ? (unsigned char)*b + 1 : 0;
    return ca - cb;
}

static int on_node(const char *path, zc_node_kind kind, int fmt, void *vctx)
{
    walk_ctx *c = vctx;
    FUZZ_CHECK(path != NULL, "a node without a path");
    FUZZ_CHECK(kind == ZC_NODE_ARRAY || kind == ZC_NODE_GROUP, "node '%s' of kind %d", path, (int)kind);
    FUZZ_CHECK(fmt == 2 || fmt == 3, "node '%s' of format %d", path, fmt);
    if (c->count) FUZZ_CHECK(cmp_walk(c->last, path) < 0, "'%s' walked after '%s'", path, c->last);
    snprintf(c->last, sizeof c->last, "%s", path);
    c->count++;
    if (!strcmp(path, "g/x") && kind == ZC_NODE_ARRAY) c->saw_x = true;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_BYTES) return 0;
    bool v3 = data[0] % 8 >= 4;
    zc_store *st;
    if (zc_store_open("memory://fuzz-consolidated", 0, &st) != 0) return 0;
    int rc = store_put(st, v3 ? "zarr.json" : ".zmetadata", data + 1, size - 1);
    if (rc == 0 && !v3) rc = store_put(st, ".zgroup", "{\"zarr_format\": 2}", 18);
    FUZZ_CHECK(rc == 0, "store_put: %s", zc_errmsg());
    walk_ctx first = {0};
    int walked = zc_group_walk(st, "", on_node, &first);
    FUZZ_CHECK(walked <= 0, "the callback did not stop the walk, yet it returned %d", walked);
    if (walked < 0) FUZZ_CHECK(zc_errmsg()[0], "walk failed (%d) without a message", walked);
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.zarr_format = v3 ? 3 : 2;
    o.ndim = 1;
    o.shape[0] = 4;
    o.chunks[0] = 2;
    o.dtype = ZC_FLOAT32;
    zc_zarr *a = NULL;
    int created = zc_zarr_create(st, "g/x", &o, &a);
    if (created < 0) FUZZ_CHECK(zc_errmsg()[0], "create failed (%d) without a message", created);
    zc_zarr_close(a);
    if (walked == 0 && created == 0) {
        walk_ctx second = {0};
        rc = zc_group_walk(st, "", on_node, &second);
        FUZZ_CHECK(rc == 0, "the walk failed after a write: %s", zc_errmsg());
        FUZZ_CHECK(second.saw_x, "g/x was written but not walked (%d nodes)", second.count);
    }
    zc_store_close(st);
    return 0;
}
