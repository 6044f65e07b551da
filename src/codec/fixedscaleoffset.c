/* codec/fixedscaleoffset.c — numcodecs "fixedscaleoffset" {"offset",
 * "scale", "dtype", "astype"} (v3 "numcodecs.fixedscaleoffset"):
 *
 *   encode: enc = astype(np.around((a - offset) * scale))
 *   decode: dec = dtype(enc / scale + offset)
 *
 * Each operation runs in the type NumPy 1.x would pick for "array op Python
 * number" (value-based promotion, filter_common.h): e.g. a float32 array
 * with scale 10 is scaled in float32, with scale 100000 in float64; dividing
 * integers gives float64. np.around rounds half to even. */
#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define NAME "fixedscaleoffset"

typedef struct {
    num_fmt dtype;      /* decoded elements */
    num_fmt astype;     /* encoded elements */
    num_scalar offset;  /* as given (int or float) */
    num_scalar scale;   /* as given (int or float) */
    num_fmt enc_sub;    /* type of a - offset */
    num_fmt enc_mul;    /* type of (a - offset) * scale */
    num_fmt dec_div;    /* type of enc / scale (always a float) */
    num_fmt dec_add;    /* type of enc / scale + offset */
} fso_state;

static int fso_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    dtype_t dt, at;
    bool has_at;
    fso_state t;
    ZC_TRY(codec_filter_number(cfg, NAME, "offset", &t.offset));
    ZC_TRY(codec_filter_number(cfg, NAME, "scale", &t.scale));
    ZC_TRY(codec_filter_dtype(cfg, NAME, "dtype", true, &dt, NULL));
    ZC_TRY(codec_filter_dtype(cfg, NAME, "astype", false, &at, &has_at));
    if (!has_at) at = dt;
    ZC_TRY(codec_num_fmt(&dt, NAME, "dtype", true, &t.dtype));
    ZC_TRY(codec_num_fmt(&at, NAME, "astype", true, &t.astype));
    if (ctx->zarr_format == 3 && dt.size != ctx->dtype.size)
        return zc__err(ZC_EFORMAT, "%s: 'dtype' has %zu-byte elements, the array %zu-byte ones",
                       NAME, dt.size, ctx->dtype.size);
    t.enc_sub = num_result_type(&t.dtype, &t.offset);
    t.enc_mul = num_result_type(&t.enc_sub, &t.scale);
    t.dec_div = num_result_type(&t.astype, &t.scale);
    if (t.dec_div.kind != NUM_FLOAT) t.dec_div = num_fmt_of(NUM_FLOAT, 8); /* true division */
    t.dec_add = num_result_type(&t.dec_div, &t.offset);
    fso_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    *st = t;
    *state = st;
    return 0;
}

static void fso_destroy(void *state) { zc__free(state); }

static int fso_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    const fso_state *st = state;
    ZC_TRY(codec_filter_resize(NAME, n, st->astype.size, st->dtype.size, size));
    *known = true;
    return 0;
}

static int fso_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                      size_t *written)
{
    const fso_state *st = state;
    size_t out;
    ZC_TRY(codec_filter_resize(NAME, n, st->astype.size, st->dtype.size, &out));
    if (out > cap) return zc__err(ZC_ECORRUPT, "%s: decoded size %zu exceeds %zu", NAME, out, cap);
    const num_fmt *div = &st->dec_div, *add = &st->dec_add;
    num_val scale = num_scalar_as(&st->scale, div), offset = num_scalar_as(&st->offset, add);
    size_t count = n / st->astype.size;
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < count; i++) {
        num_val v = num_cast(st->astype.kind, num_load(&st->astype, s + i * st->astype.size), div);
        v.d = num_round(div->size, v.d / scale.d);
        v = num_add(add, num_cast(NUM_FLOAT, v, add), offset);
        num_store(&st->dtype, d + i * st->dtype.size, num_cast(add->kind, v, &st->dtype));
    }
    *written = out;
    return 0;
}

static int fso_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const fso_state *st = state;
    size_t size;
    if (n % st->dtype.size)
        return zc__err(ZC_EINVAL, "%s: %zu bytes is not a whole number of %u-byte elements", NAME,
                       n, st->dtype.size);
    ZC_TRY(codec_filter_resize(NAME, n, st->dtype.size, st->astype.size, &size));
    if (size > (size_t)-1 - out->size) return zc__err(ZC_EOVERFLOW, "%s: output overflows", NAME);
    if (size == 0) return 0; /* nothing to write (out->data may be NULL) */
    ZC_TRY(buf_reserve(out, out->size + size));
    const num_fmt *sub = &st->enc_sub, *mul = &st->enc_mul;
    num_val offset = num_scalar_as(&st->offset, sub), scale = num_scalar_as(&st->scale, mul);
    size_t count = n / st->dtype.size;
    const unsigned char *s = src;
    unsigned char *d = out->data + out->size;
    for (size_t i = 0; i < count; i++) {
        num_val v = num_cast(st->dtype.kind, num_load(&st->dtype, s + i * st->dtype.size), sub);
        v = num_sub(sub, v, offset);
        v = num_around(mul, num_mul(mul, num_cast(sub->kind, v, mul), scale));
        num_store(&st->astype, d + i * st->astype.size, num_cast(mul->kind, v, &st->astype));
    }
    out->size += size;
    return 0;
}

static json_t *scalar_json(const num_scalar *s)
{
    return s->is_int ? json_integer(s->i) : json_real(s->d);
}

static json_t *fso_to_json(void *state, int zarr_format)
{
    const fso_state *st = state;
    json_t *conf = json_pack("{s:o, s:o}", "offset", scalar_json(&st->offset), "scale",
                             scalar_json(&st->scale));
    conf = codec_filter_json_dtype(conf, "dtype", &st->dtype.dt);
    conf = codec_filter_json_dtype(conf, "astype", &st->astype.dt);
    return codec_filter_json("numcodecs.fixedscaleoffset", NAME, zarr_format, conf);
}

static int fso_encoded_ctx(void *state, const codec_ctx *in, codec_ctx *out)
{
    const fso_state *st = state;
    return codec_filter_encoded_ctx("numcodecs.fixedscaleoffset", &st->dtype.dt, &st->astype.dt,
                                    in, out);
}

const codec_type codec_fixedscaleoffset = {
    .version = 1,
    .name = "numcodecs.fixedscaleoffset",
    .v2_id = NAME,
    .kind = CODEC_A2A,
    .create = fso_create,
    .destroy = fso_destroy,
    .decode = fso_decode,
    .decoded_size = fso_decoded_size,
    .encode = fso_encode,
    .to_json = fso_to_json,
    .encoded_ctx = fso_encoded_ctx,
};
