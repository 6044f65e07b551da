/* codec/astype.c — numcodecs "astype" {"encode_dtype", "decode_dtype"} (v3
 * "numcodecs.astype"): encode casts decode_dtype → encode_dtype, decode casts
 * back, both with NumPy's unsafe `astype` (integers wrap, floats round to
 * nearest, floats to integers truncate; see filter_common.h). */
#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define NAME "astype"

typedef struct {
    num_fmt enc; /* encoded elements */
    num_fmt dec; /* decoded elements */
} astype_state;

static int astype_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    dtype_t e, d;
    astype_state t;
    ZC_TRY(codec_filter_dtype(cfg, NAME, "encode_dtype", true, &e, NULL));
    ZC_TRY(codec_filter_dtype(cfg, NAME, "decode_dtype", true, &d, NULL));
    ZC_TRY(codec_num_fmt(&e, NAME, "encode_dtype", true, &t.enc));
    ZC_TRY(codec_num_fmt(&d, NAME, "decode_dtype", true, &t.dec));
    if (ctx->zarr_format == 3 && d.size != ctx->dtype.size)
        return zc__err(ZC_EFORMAT, "%s: 'decode_dtype' has %zu-byte elements, the array %zu-byte ones",
                       NAME, d.size, ctx->dtype.size);
    astype_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    *st = t;
    *state = st;
    return 0;
}

static void astype_destroy(void *state) { zc__free(state); }

static void convert(const num_fmt *from, const num_fmt *to, const unsigned char *s,
                    unsigned char *d, size_t count)
{
    for (size_t i = 0; i < count; i++)
        num_store(to, d + i * to->size, num_cast(from->kind, num_load(from, s + i * from->size), to));
}

static int astype_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    const astype_state *st = state;
    ZC_TRY(codec_filter_resize(NAME, n, st->enc.size, st->dec.size, size));
    *known = true;
    return 0;
}

static int astype_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                         size_t *written)
{
    const astype_state *st = state;
    size_t out;
    ZC_TRY(codec_filter_resize(NAME, n, st->enc.size, st->dec.size, &out));
    if (out > cap) return zc__err(ZC_ECORRUPT, "%s: decoded size %zu exceeds %zu", NAME, out, cap);
    convert(&st->enc, &st->dec, src, dst, n / st->enc.size);
    *written = out;
    return 0;
}

static int astype_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const astype_state *st = state;
    size_t size;
    if (n % st->dec.size)
        return zc__err(ZC_EINVAL, "%s: %zu bytes is not a whole number of %u-byte elements", NAME,
                       n, st->dec.size);
    ZC_TRY(codec_filter_resize(NAME, n, st->dec.size, st->enc.size, &size));
    if (size > (size_t)-1 - out->size) return zc__err(ZC_EOVERFLOW, "%s: output overflows", NAME);
    if (size == 0) return 0; /* nothing to write (out->data may be NULL) */
    ZC_TRY(buf_reserve(out, out->size + size));
    convert(&st->dec, &st->enc, src, out->data + out->size, n / st->dec.size);
    out->size += size;
    return 0;
}

static json_t *astype_to_json(void *state, int zarr_format)
{
    const astype_state *st = state;
    json_t *conf = codec_filter_json_dtype(json_object(), "encode_dtype", &st->enc.dt);
    conf = codec_filter_json_dtype(conf, "decode_dtype", &st->dec.dt);
    return codec_filter_json("numcodecs.astype", NAME, zarr_format, conf);
}

static int astype_encoded_ctx(void *state, const codec_ctx *in, codec_ctx *out)
{
    const astype_state *st = state;
    return codec_filter_encoded_ctx("numcodecs.astype", &st->dec.dt, &st->enc.dt, in, out);
}

const codec_type codec_astype = {
    .version = 1,
    .name = "numcodecs.astype",
    .v2_id = NAME,
    .kind = CODEC_A2A,
    .create = astype_create,
    .destroy = astype_destroy,
    .decode = astype_decode,
    .decoded_size = astype_decoded_size,
    .encode = astype_encode,
    .to_json = astype_to_json,
    .encoded_ctx = astype_encoded_ctx,
};
