/* fuzz/fuzz_chunk_read.c — reading arrays whose stored chunks or shards are
 * hostile.
 *
 * The arrays are the fixed ones of fuzz_common.c (v2 blosc; v2 F order with
 * a filter; v3 zstd+crc32c; v3 sharded with the index at the start, without
 * a checksum; v3 sharded with the index at the end, crc32c, ragged edges; v3
 * transpose+delta+blosc with v2 keys), each filled once with a pattern.
 *
 * Input layout:
 *   byte 0   the array (fixture byte 0 % fuzz_nfixtures)
 *   byte 1   which of its objects (chunk or shard) to replace (% count)
 *   rest     the new bytes of that object
 *
 * A fresh memory store gets the metadata, every original object, then the
 * replaced one; the whole array and a few regions are read. Errors are fine
 * (corrupt data, checksum); a crash, leak, UB or an overrun of the caller's
 * buffer (ASan sees it: buffers are exactly the selection's size) is a bug.
 * A read that succeeds must leave elements outside the replaced object as
 * they were written: the whole-array read is compared with the pristine
 * array, and only the replaced object's elements may differ. */
#include <string.h>

#include "fuzz.h"
#include "store/store.h"

/* Regions read after the whole array: {start, stop, step} per dimension,
 * given as fractions of the shape so they fit every fixture (all 2-D). */
static const struct {
    int num[2][3]; /* start, stop in 1/8ths of the shape; step */
} REGIONS[] = {
    {{{1, 7, 2}, {3, 8, 1}}},
    {{{0, 8, 3}, {0, 8, 5}}},
    {{{4, 5, 1}, {2, 3, 1}}},
    {{{8, 8, 1}, {0, 8, 1}}}, /* empty */
};

static zc_store *load(const fuzz_fixture *fx, size_t replace, const uint8_t *data, size_t size)
{
    zc_store *st;
    if (zc_store_open("memory://fuzz", 0, &st) != 0) return NULL;
    const fuzz_fixture_spec *spec = fx->spec;
    int rc = store_put(st, spec->meta_key, spec->meta, strlen(spec->meta));
    for (size_t k = 0; rc == 0 && k < fx->nobj; k++) {
        if (k == replace) rc = store_put(st, fx->obj[k].key, data, size);
        else rc = store_put(st, fx->obj[k].key, fx->obj[k].data, fx->obj[k].size);
    }
    if (rc != 0) {
        zc_store_close(st);
        return NULL;
    }
    return st;
}

static void read_all(zc_zarr *a, unsigned char **out, size_t *n)
{
    *out = NULL;
    if (zc_zarr_selection_size(a, NULL, n) != 0) return;
    unsigned char *buf = malloc(*n ? *n : 1);
    FUZZ_CHECK(buf != NULL, "out of memory");
    if (zc_zarr_read(a, NULL, buf, *n) != 0) {
        free(buf);
        return;
    }
    *out = buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const fuzz_fixture *fx = fuzz_fixture_get(data[0] % fuzz_nfixtures);
    size_t replace = data[1] % fx->nobj;
    zc_store *st = load(fx, replace, data + 2, size - 2);
    if (!st) return 0;
    zc_zarr *a;
    int rc = zc_zarr_open(st, "", &a);
    FUZZ_CHECK(rc == 0, "fixture '%s' does not open: %s", fx->spec->name, zc_errmsg());
    zc_zarr_set_threads(a, 1);
    zc_zarr_info_t in;
    FUZZ_CHECK(zc_zarr_info(a, &in) == 0 && in.ndim == 2, "fixture '%s': info", fx->spec->name);

    unsigned char *got;
    size_t n;
    read_all(a, &got, &n);
    for (size_t r = 0; r < sizeof REGIONS / sizeof REGIONS[0]; r++) {
        zc_range sel[2];
        for (int d = 0; d < 2; d++)
            sel[d] = (zc_range){in.shape[d] * REGIONS[r].num[d][0] / 8, in.shape[d] * REGIONS[r].num[d][1] / 8,
                                REGIONS[r].num[d][2]};
        size_t m;
        FUZZ_CHECK(zc_zarr_selection_size(a, sel, &m) == 0, "region %zu: %s", r, zc_errmsg());
        unsigned char *buf = malloc(m ? m : 1);
        FUZZ_CHECK(buf != NULL, "out of memory");
        zc_zarr_read(a, sel, buf, m);
        free(buf);
    }
    zc_zarr_close(a);
    zc_store_close(st);

    if (got) {
        /* compare with the pristine array outside the replaced object's
         * elements: only the object's own box may change */
        const unsigned char *want = fx->whole;
        FUZZ_CHECK(fx->whole_size == n, "whole array: %zu bytes, fixture has %zu", n, fx->whole_size);
        /* the replaced object's box: its key's grid coordinates × the
         * object's extent (shard shape if sharded, else chunk shape) */
        int64_t ext[2], lo[2] = {0, 0};
        for (int d = 0; d < 2; d++) ext[d] = in.shards[d] ? in.shards[d] : in.chunks[d];
        const char *key = fx->obj[replace].key, *p = key;
        if (*p == 'c' && (p[1] == '/' || p[1] == '.')) p += 2;
        for (int d = 0; d < 2; d++) {
            char *end;
            lo[d] = strtoll(p, &end, 10) * ext[d];
            p = *end ? end + 1 : end;
        }
        for (int64_t i = 0; i < in.shape[0]; i++)
            for (int64_t k = 0; k < in.shape[1]; k++) {
                if (i >= lo[0] && i < lo[0] + ext[0] && k >= lo[1] && k < lo[1] + ext[1]) continue;
                size_t off = (size_t)(i * in.shape[1] + k) * in.itemsize;
                FUZZ_CHECK(!memcmp(got + off, want + off, in.itemsize),
                           "fixture '%s', object %s replaced: element (%lld, %lld) outside it changed",
                           fx->spec->name, key, (long long)i, (long long)k);
            }
        free(got);
    }
    return 0;
}
