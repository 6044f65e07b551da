/* codec/delta.c — numcodecs "delta" {"dtype", "astype"} (v3
 * "numcodecs.delta"): the first element as is, then differences of adjacent
 * elements, stored as `astype`.
 *
 * As numcodecs (NumPy) does it:
 *   encode: enc[0] = astype(a[0]); enc[i] = astype(a[i] - a[i-1]), the
 *           difference taken in `dtype` (integers wrap; bool: a[i] != a[i-1]);
 *   decode: np.cumsum(enc, out=dec) — every element cast to `dtype`, then
 *           summed in `dtype` (integers wrap; bool: logical or, so a bool delta
 *           does not round-trip in numcodecs either, and we match it).
 * Values are read and written in the byte order of their dtype (see
 * filter_common.h). */
#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define NAME "delta"

typedef struct {
    num_fmt dtype;  /* decoded elements */
    num_fmt astype; /* encoded elements */
} delta_state;

static int delta_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    dtype_t dt, at;
    bool has_at;
    delta_state tmp;
    ZC_TRY(codec_filter_dtype(cfg, NAME, "dtype", true, &dt, NULL));
    ZC_TRY(codec_filter_dtype(cfg, NAME, "astype", false, &at, &has_at));
    if (!has_at) at = dt;
    ZC_TRY(codec_num_fmt(&dt, NAME, "dtype", true, &tmp.dtype));
    ZC_TRY(codec_num_fmt(&at, NAME, "astype", true, &tmp.astype));
    if (ctx->zarr_format == 3 && dt.size != ctx->dtype.size)
        return zc__err(ZC_EFORMAT, "%s: 'dtype' has %zu-byte elements, the array %zu-byte ones",
                       NAME, dt.size, ctx->dtype.size);
    delta_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    *st = tmp;
    *state = st;
    return 0;
}

static void delta_destroy(void *state) { zc__free(state); }

static int delta_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    const delta_state *st = state;
    ZC_TRY(codec_filter_resize(NAME, n, st->astype.size, st->dtype.size, size));
    *known = true;
    return 0;
}

static int delta_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                        size_t *written)
{
    const delta_state *st = state;
    size_t out;
    ZC_TRY(codec_filter_resize(NAME, n, st->astype.size, st->dtype.size, &out));
    if (out > cap) return zc__err(ZC_ECORRUPT, "%s: decoded size %zu exceeds %zu", NAME, out, cap);
    size_t count = n / st->astype.size;
    const unsigned char *s = src;
    unsigned char *d = dst;
    num_val acc = {0};
    for (size_t i = 0; i < count; i++) {
        num_val v = num_cast(st->astype.kind, num_load(&st->astype, s + i * st->astype.size), &st->dtype);
        acc = i ? num_add(&st->dtype, acc, v) : v;
        num_store(&st->dtype, d + i * st->dtype.size, acc);
    }
    *written = out;
    return 0;
}

static int delta_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const delta_state *st = state;
    size_t size;
    if (n % st->dtype.size)
        return zc__err(ZC_EINVAL, "%s: %zu bytes is not a whole number of %u-byte elements", NAME,
                       n, st->dtype.size);
    ZC_TRY(codec_filter_resize(NAME, n, st->dtype.size, st->astype.size, &size));
    if (size > (size_t)-1 - out->size) return zc__err(ZC_EOVERFLOW, "%s: output overflows", NAME);
    if (size == 0) return 0; /* nothing to write (out->data may be NULL) */
    ZC_TRY(buf_reserve(out, out->size + size));
    size_t count = n / st->dtype.size;
    const unsigned char *s = src;
    unsigned char *d = out->data + out->size;
    num_val prev = {0};
    for (size_t i = 0; i < count; i++) {
        num_val v = num_load(&st->dtype, s + i * st->dtype.size);
        num_val diff = i ? num_sub(&st->dtype, v, prev) : v;
        num_store(&st->astype, d + i * st->astype.size, num_cast(st->dtype.kind, diff, &st->astype));
        prev = v;
    }
    out->size += size;
    return 0;
}

static json_t *delta_to_json(void *state, int zarr_format)
{
    const delta_state *st = state;
    json_t *conf = codec_filter_json_dtype(json_object(), "dtype", &st->dtype.dt);
    conf = codec_filter_json_dtype(conf, "astype", &st->astype.dt);
    return codec_filter_json("numcodecs.delta", NAME, zarr_format, conf);
}

static int delta_encoded_ctx(void *state, const codec_ctx *in, codec_ctx *out)
{
    const delta_state *st = state;
    return codec_filter_encoded_ctx("numcodecs.delta", &st->dtype.dt, &st->astype.dt, in, out);
}

const codec_type codec_delta = {
    .version = 1,
    .name = "numcodecs.delta",
    .v2_id = NAME,
    .kind = CODEC_A2A,
    .create = delta_create,
    .destroy = delta_destroy,
    .decode = delta_decode,
    .decoded_size = delta_decoded_size,
    .encode = delta_encode,
    .to_json = delta_to_json,
    .encoded_ctx = delta_encoded_ctx,
};
