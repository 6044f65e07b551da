/* fuzz/fuzz_meta.h — the body shared by fuzz_meta_v2.c and fuzz_meta_v3.c:
 * put the input as the metadata document of an array at the root of a fresh
 * memory store, open it, and if it opens, use it the way a reader would.
 *
 * Input: the document; for v2, bytes after the first NUL (if any) become the
 * .zattrs document (JSON text has no NUL, so plain documents seed both).
 *
 * When the array opens: zc_zarr_info must describe a sane array; if the whole
 * array decodes to at most FUZZ_MAX_BYTES (and one read unit too), it is read
 * whole (all chunks are missing, so every element is the fill value) and
 * through a strided selection; then zc_zarr_metadata_json, zc_zarr_attributes
 * and, for small grids, zc_zarr_stats. Last, the parsed metadata is written
 * to a second store the way zc_zarr_create writes it (zarr_write_meta) and
 * opened again: it must open and describe the same array (equal
 * zc_zarr_metadata_json). Errors are fine; crashes, leaks, undefined
 * behaviour and broken invariants are not. */
#ifndef ZC_FUZZ_META_H
#define ZC_FUZZ_META_H

#include <string.h>

#include "core/json.h"
#include "fuzz.h"
#include "store/store.h"
#include "zarr/zarr.h"

/* zarr/open.c: writes metadata as zc_zarr_create does (not in zarr.h). */
int zarr_write_meta(store *st, const char *path, const zarr_meta *m);

/* Elements of info's array and of one read unit; 0 on overflow. */
static size_t meta_bytes(const zc_zarr_info_t *in, const int64_t *dims)
{
    size_t n = in->itemsize;
    for (int d = 0; d < in->ndim; d++)
        if (dims[d] < 0 || __builtin_mul_overflow(n, (size_t)dims[d], &n)) return SIZE_MAX;
    return n;
}

static void meta_check_info(const zc_zarr_info_t *in)
{
    FUZZ_CHECK(in->zarr_format == 2 || in->zarr_format == 3, "zarr_format %d", in->zarr_format);
    FUZZ_CHECK(in->ndim >= 0 && in->ndim <= ZC_MAX_DIMS, "ndim %d", in->ndim);
    FUZZ_CHECK(in->itemsize > 0, "itemsize 0");
    FUZZ_CHECK(in->dtype > ZC_DTYPE_INVALID && in->dtype <= ZC_RAW, "dtype %d", (int)in->dtype);
    for (int d = 0; d < in->ndim; d++) {
        FUZZ_CHECK(in->shape[d] >= 0, "shape[%d] = %lld", d, (long long)in->shape[d]);
        FUZZ_CHECK(in->chunks[d] > 0, "chunks[%d] = %lld", d, (long long)in->chunks[d]);
        FUZZ_CHECK(in->shards[d] >= 0, "shards[%d] = %lld", d, (long long)in->shards[d]);
    }
}

/* Write a's metadata to a fresh store, open it again, compare. */
static void meta_rewrite(const zc_zarr *a, const char *json)
{
    zc_store *st;
    if (zc_store_open("memory://fuzz-rewrite", 0, &st) != 0) return;
    if (zarr_write_meta(st, "", &a->m) == 0) {
        zc_zarr *b;
        int rc = zc_zarr_open(st, "", &b);
        FUZZ_CHECK(rc == 0, "metadata written from a parsed array does not open: %s\noriginal: %s", zc_errmsg(),
                   json);
        char *again = NULL;
        if (zc_zarr_metadata_json(b, &again) == 0) {
            /* equal as JSON values (object keys may come back sorted) */
            json_t *x = zc_json_load(json, strlen(json), 0, NULL), *y = zc_json_load(again, strlen(again), 0, NULL);
            FUZZ_CHECK(x && y && json_equal(x, y), "metadata changed by a write and read:\nbefore: %s\nafter:  %s",
                       json, again);
            json_decref(x);
            json_decref(y);
        }
        zc_free(again);
        zc_zarr_close(b);
    }
    zc_store_close(st);
}

static void meta_use(zc_zarr *a)
{
    zc_zarr_info_t in;
    if (zc_zarr_info(a, &in) != 0) return;
    meta_check_info(&in);
    zc_zarr_set_threads(a, 1);
    size_t total = meta_bytes(&in, in.shape);
    size_t unit = meta_bytes(&in, in.chunks);
    size_t n;
    int rc = zc_zarr_selection_size(a, NULL, &n);
    if (rc == 0 && total != SIZE_MAX)
        FUZZ_CHECK(n == total, "selection size %zu, info says %zu", n, total);
    if (rc == 0 && n <= FUZZ_MAX_BYTES && unit <= FUZZ_MAX_BYTES) {
        unsigned char *buf = malloc(n ? n : 1);
        if (buf) {
            zc_zarr_read(a, NULL, buf, n);
            /* every other element from 1, every dimension */
            zc_range sel[ZC_MAX_DIMS];
            for (int d = 0; d < in.ndim; d++)
                sel[d] = (zc_range){in.shape[d] > 0 ? 1 : 0, in.shape[d], 2};
            size_t m;
            if (zc_zarr_selection_size(a, sel, &m) == 0 && m <= n) zc_zarr_read(a, sel, buf, m);
            free(buf);
        }
    }
    char *json = NULL;
    if (zc_zarr_metadata_json(a, &json) == 0) {
        FUZZ_CHECK(json != NULL && json[0] == '{', "metadata JSON: %s", json ? json : "(null)");
        meta_rewrite(a, json);
        zc_free(json);
    }
    json = NULL;
    if (zc_zarr_attributes(a, &json) == 0) {
        FUZZ_CHECK(json != NULL, "attributes: NULL");
        zc_free(json);
    }
    /* stats lists the store and walks the grid: only for small grids */
    int64_t grid = 1;
    bool small = true;
    for (int d = 0; d < in.ndim && small; d++) {
        int64_t c = in.shards[d] ? in.shards[d] : in.chunks[d];
        int64_t g = c > 0 ? (in.shape[d] + c - 1) / c : 0;
        small = !__builtin_mul_overflow(grid, g, &grid) && grid <= 4096;
    }
    if (small) {
        zc_zarr_stats_t stats;
        if (zc_zarr_stats(a, &stats) == 0)
            FUZZ_CHECK(stats.chunks_stored == 0 && stats.bytes_stored == 0,
                       "stats of an empty store: %lld chunks, %lld bytes",
                       (long long)stats.chunks_stored, (long long)stats.bytes_stored);
    }
}

/* Put doc (and attrs, if any) under `key`/`attrs_key`, open, use, close. */
static int meta_run(const char *key, const uint8_t *doc, size_t n, const char *attrs_key,
                    const uint8_t *attrs, size_t an)
{
    zc_store *st;
    if (zc_store_open("memory://fuzz", 0, &st) != 0) return 0;
    if (store_put(st, key, doc, n) == 0 && (!attrs_key || store_put(st, attrs_key, attrs, an) == 0)) {
        zc_zarr *a;
        if (zc_zarr_open(st, "", &a) == 0) {
            meta_use(a);
            zc_zarr_close(a);
        }
    }
    zc_store_close(st);
    return 0;
}

#endif
