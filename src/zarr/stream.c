/* zarr/stream.c — a read unit decoded in order, a piece at a time (stream.h).
 *
 * The stored chunk is mapped where the store maps files (store_map: page
 * cache, no copy, its pages dropped from the process at the end), else read
 * whole into memory after its size is checked against the codecs' bound.
 * The decoding is codec_stream's: a block or a window at a time. */
#include "zarr/stream.h"

#include <string.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/error.h"
#include "zarr/zarr.h"

#define KEY_LEN 1024

struct zarr_stream {
    zc_zarr *a;
    store_map_t map;         /* the chunk file, mapped (map.handle != NULL) */
    void *data;              /* or read into memory */
    codec_stream *cs;        /* NULL: the fill value */
    size_t pos;              /* fill value: bytes handed out */
    char key[KEY_LEN];
};

bool zarr_streams(const zc_zarr *a, const char **why)
{
    if (a->m.sharded) {
        if (why) *why = "sharded";
        return false;
    }
    return codec_chain_streams(a->chain, why);
}

size_t zarr_stream_mem(const zc_zarr *a)
{
    size_t stored = codec_chain_stored_max(a->chain);
    if (codec_chain_is_identity(a->chain)) stored = a->rchunk_nbytes;
    return stored + codec_chain_stream_mem(a->chain) + sizeof(zarr_stream);
}

int zarr_stream_open(zc_zarr *a, const int64_t *unit, zarr_stream **out)
{
    *out = NULL;
    const char *why;
    if (!zarr_streams(a, &why)) return zc__err(ZC_EUNSUPPORTED, "array '%s' cannot be streamed: %s", a->path, why);
    zarr_stream *s = zc__calloc(1, sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->a = a;
    int rc = zarr_chunk_key(a, unit, s->key, sizeof s->key);
    const void *src = NULL;
    size_t n = 0, max = codec_chain_is_identity(a->chain) ? a->rchunk_nbytes : codec_chain_stored_max(a->chain);
    if (rc == 0) {
        rc = store_map(a->st, s->key, &s->map);
        if (rc == 0) {
            src = s->map.addr;
            n = (size_t)s->map.size;
        } else if (rc == ZC_EUNSUPPORTED) {
            uint64_t size;
            rc = store_size(a->st, s->key, &size);
            if (rc == 0 && size > max) rc = ZC_ERANGE; /* refused below, before reading it */
            if (rc == 0) rc = store_get(a->st, s->key, &s->data, &n);
            src = s->data;
        }
    }
    if (rc == ZC_ENOENT) {
        zc__err_clear();
        *out = s;
        return 0;
    }
    if (rc == 0 && n > max) rc = ZC_ERANGE;
    if (rc == ZC_ERANGE)
        rc = zc__err(ZC_ECORRUPT, "stored chunk larger than its codecs ever write (%zu bytes at most)", max);
    if (rc == 0) rc = codec_stream_open(a->chain, src, n, &s->cs);
    if (rc < 0) {
        zc__err_wrap(rc, "array '%s': chunk '%s'", a->path, s->key);
        zarr_stream_close(s);
        return rc;
    }
    atomic_fetch_add(&a->chunks_read, 1);
    atomic_fetch_add(&a->bytes_read, (int64_t)n);
    *out = s;
    return 0;
}

int zarr_stream_read(zarr_stream *s, void *dst, size_t len)
{
    if (!s->cs) {
        size_t isz = s->a->m.dtype.size;
        if (len > s->a->rchunk_nbytes - s->pos || len % isz)
            return zc__err(ZC_EINVAL, "array '%s': %zu bytes asked at %zu of a %zu-byte chunk", s->a->path, len,
                           s->pos, s->a->rchunk_nbytes);
        zarr_fill(s->a, dst, len / isz);
        s->pos += len;
        return 0;
    }
    int rc = codec_stream_read(s->cs, dst, len);
    if (rc < 0) zc__err_wrap(rc, "array '%s': chunk '%s'", s->a->path, s->key);
    return rc;
}

int zarr_stream_close(zarr_stream *s)
{
    if (!s) return 0;
    int rc = 0;
    codec_stream_close(s->cs);
    if (s->map.handle) {
        if ((rc = store_map_check(&s->map)) < 0) zc__err_wrap(rc, "array '%s'", s->a->path);
        store_map_drop(&s->map);
        store_unmap(s->a->st, &s->map);
    }
    zc__free(s->data);
    zc__free(s);
    return rc;
}
