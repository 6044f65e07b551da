/* codec/bytes.c — the Zarr v3 "bytes" array→bytes codec: a C-order array in
 * native byte order ⇄ the same elements in the stored byte order
 * {"endian": "little" | "big"}.
 *
 * "endian" is required when the element has a byte order (swap unit > 1:
 * multi-byte numbers, complex halves, UCS-4 characters) and ignored for 1-byte
 * units. Decoding is a memcpy plus an in-place swap when the stored order is
 * not native; the chain skips the codec entirely when no swap is needed. */
#include <string.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/error.h"

typedef struct {
    dtype_t dt;     /* element type, endian = stored order ('|' when given none) */
    bool swap;      /* stored order differs from native */
    bool given;     /* "endian" was present in the configuration */
    size_t nbytes;  /* the chunk's size */
} bytes_state;

static int bytes_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    const json_t *e = cfg ? json_object_get(cfg, "endian") : NULL;
    dtype_t dt = ctx->dtype;
    bool given = e && !json_is_null(e);
    if (given) {
        const char *s = json_is_string(e) ? json_string_value(e) : "";
        if (!strcmp(s, "little")) dt.endian = '<';
        else if (!strcmp(s, "big")) dt.endian = '>';
        else return zc__err(ZC_EFORMAT, "bytes: 'endian' must be \"little\" or \"big\"");
    } else if (dtype_swap_unit(&ctx->dtype) > 1) {
        return zc__err(ZC_EFORMAT, "bytes: missing 'endian' (required for %s)",
                       zc_dtype_name(ctx->dtype.type));
    } else {
        dt.endian = '|';
    }
    if (dt.size == 0 || ctx->nbytes % dt.size)
        return zc__err(ZC_EFORMAT, "bytes: a chunk of %zu bytes is not a whole number of %zu-byte elements",
                       ctx->nbytes, dt.size);
    bytes_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    st->dt = dt;
    st->swap = dtype_needs_swap(&dt);
    st->given = given;
    st->nbytes = ctx->nbytes;
    *state = st;
    return 0;
}

static void bytes_destroy(void *state) { zc__free(state); }

static int check_size(const bytes_state *st, size_t n)
{
    if (n != st->nbytes)
        return zc__err(ZC_ECORRUPT, "bytes: chunk has %zu bytes, expected %zu", n, st->nbytes);
    return 0;
}

static int bytes_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                        size_t *written)
{
    const bytes_state *st = state;
    ZC_TRY(check_size(st, n));
    if (n > cap) return zc__err(ZC_ECORRUPT, "bytes: %zu bytes do not fit in %zu", n, cap);
    if (n && dst != src) memcpy(dst, src, n);
    if (st->swap) dtype_byteswap(dst, n / st->dt.size, &st->dt);
    *written = n;
    return 0;
}

static int bytes_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    ZC_TRY(check_size(state, n));
    *size = n;
    *known = true;
    return 0;
}

static int bytes_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const bytes_state *st = state;
    if (n != st->nbytes)
        return zc__err(ZC_EINVAL, "bytes: chunk has %zu bytes, expected %zu", n, st->nbytes);
    size_t at = out->size;
    ZC_TRY(buf_append(out, src, n));
    if (st->swap && n) dtype_byteswap(out->data + at, n / st->dt.size, &st->dt); /* data is NULL when n is 0 */
    return 0;
}

static json_t *bytes_to_json(void *state, int zarr_format)
{
    const bytes_state *st = state;
    json_t *conf = json_object();
    if (!conf) return NULL;
    if (st->dt.endian != '|' && (st->given || dtype_swap_unit(&st->dt) > 1) &&
        json_object_set_new(conf, "endian", json_string(st->dt.endian == '<' ? "little" : "big"))) {
        json_decref(conf);
        return NULL;
    }
    return json_pack("{s:s, s:o}", "name", "bytes", "configuration", conf);
}

const codec_type codec_bytes = {
    .version = 1,
    .name = "bytes",
    .v2_id = NULL,
    .kind = CODEC_A2B,
    .create = bytes_create,
    .destroy = bytes_destroy,
    .decode = bytes_decode,
    .decoded_size = bytes_decoded_size,
    .encode = bytes_encode,
    .to_json = bytes_to_json,
    .encoded_ctx = NULL,
};
