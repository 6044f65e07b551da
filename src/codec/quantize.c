/* codec/quantize.c — numcodecs "quantize" {"digits", "dtype", "astype"} (v3
 * "numcodecs.quantize"), a lossy filter keeping `digits` decimal digits:
 *
 *   encode: precision = 10**-digits, exp = floor/ceil(log(precision, 10)),
 *           bits = ceil(log2(10**-exp)), scale = 2**bits,
 *           enc = astype(np.around(scale * a) / scale)
 *   decode: dec = dtype(enc)   (a cast; the precision is already lost)
 *
 * The scale is computed with the same double operations as Python's math
 * module; scale * a runs in the NumPy 1.x type of "float array * Python float"
 * (filter_common.h). Both dtypes must be floats, as numcodecs requires. */
#include <math.h>

#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define NAME "quantize"

typedef struct {
    num_fmt dtype;     /* decoded elements (float) */
    num_fmt astype;    /* encoded elements (float) */
    long long digits;  /* decimal digits kept */
    num_scalar scale;  /* 2**bits, a Python float */
    num_fmt work;      /* type of scale * a */
} quantize_state;

static int quantize_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    dtype_t dt, at;
    bool has_at;
    quantize_state t;
    ZC_TRY(codec_filter_int(cfg, NAME, "digits", true, 0, -300, 300, &t.digits));
    ZC_TRY(codec_filter_dtype(cfg, NAME, "dtype", true, &dt, NULL));
    ZC_TRY(codec_filter_dtype(cfg, NAME, "astype", false, &at, &has_at));
    if (!has_at) at = dt;
    ZC_TRY(codec_num_fmt(&dt, NAME, "dtype", false, &t.dtype));
    ZC_TRY(codec_num_fmt(&at, NAME, "astype", false, &t.astype));
    if (t.dtype.kind != NUM_FLOAT || t.astype.kind != NUM_FLOAT)
        return zc__err(ZC_EFORMAT, "%s: 'dtype' and 'astype' must be floating-point types", NAME);
    if (ctx->zarr_format == 3 && dt.size != ctx->dtype.size)
        return zc__err(ZC_EFORMAT, "%s: 'dtype' has %zu-byte elements, the array %zu-byte ones",
                       NAME, dt.size, ctx->dtype.size);
    /* math.log(x, 10) is log(x) / log(10) in CPython */
    double precision = pow(10.0, (double)-t.digits);
    double e = log(precision) / log(10.0);
    e = e < 0 ? floor(e) : ceil(e);
    double bits = ceil(log(pow(10.0, -e)) / log(2.0));
    t.scale.is_int = false;
    t.scale.i = 0;
    t.scale.d = pow(2.0, bits);
    t.work = num_result_type(&t.dtype, &t.scale);
    quantize_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    *st = t;
    *state = st;
    return 0;
}

static void quantize_destroy(void *state) { zc__free(state); }

static int quantize_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    const quantize_state *st = state;
    ZC_TRY(codec_filter_resize(NAME, n, st->astype.size, st->dtype.size, size));
    *known = true;
    return 0;
}

static int quantize_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                           size_t *written)
{
    const quantize_state *st = state;
    size_t out;
    ZC_TRY(codec_filter_resize(NAME, n, st->astype.size, st->dtype.size, &out));
    if (out > cap) return zc__err(ZC_ECORRUPT, "%s: decoded size %zu exceeds %zu", NAME, out, cap);
    size_t count = n / st->astype.size;
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < count; i++) {
        num_val v = num_load(&st->astype, s + i * st->astype.size);
        num_store(&st->dtype, d + i * st->dtype.size, num_cast(NUM_FLOAT, v, &st->dtype));
    }
    *written = out;
    return 0;
}

static int quantize_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const quantize_state *st = state;
    size_t size;
    if (n % st->dtype.size)
        return zc__err(ZC_EINVAL, "%s: %zu bytes is not a whole number of %u-byte elements", NAME,
                       n, st->dtype.size);
    ZC_TRY(codec_filter_resize(NAME, n, st->dtype.size, st->astype.size, &size));
    if (size > (size_t)-1 - out->size) return zc__err(ZC_EOVERFLOW, "%s: output overflows", NAME);
    if (size == 0) return 0; /* nothing to write (out->data may be NULL) */
    ZC_TRY(buf_reserve(out, out->size + size));
    const num_fmt *w = &st->work;
    num_val scale = num_scalar_as(&st->scale, w);
    size_t count = n / st->dtype.size;
    const unsigned char *s = src;
    unsigned char *d = out->data + out->size;
    for (size_t i = 0; i < count; i++) {
        num_val v = num_cast(NUM_FLOAT, num_load(&st->dtype, s + i * st->dtype.size), w);
        v = num_around(w, num_mul(w, scale, v));
        v.d = num_round(w->size, v.d / scale.d);
        num_store(&st->astype, d + i * st->astype.size, num_cast(NUM_FLOAT, v, &st->astype));
    }
    out->size += size;
    return 0;
}

static json_t *quantize_to_json(void *state, int zarr_format)
{
    const quantize_state *st = state;
    json_t *conf = json_pack("{s:I}", "digits", (json_int_t)st->digits);
    conf = codec_filter_json_dtype(conf, "dtype", &st->dtype.dt);
    conf = codec_filter_json_dtype(conf, "astype", &st->astype.dt);
    return codec_filter_json("numcodecs.quantize", NAME, zarr_format, conf);
}

static int quantize_encoded_ctx(void *state, const codec_ctx *in, codec_ctx *out)
{
    const quantize_state *st = state;
    return codec_filter_encoded_ctx("numcodecs.quantize", &st->dtype.dt, &st->astype.dt, in, out);
}

const codec_type codec_quantize = {
    .version = 1,
    .name = "numcodecs.quantize",
    .v2_id = NAME,
    .kind = CODEC_A2A,
    .create = quantize_create,
    .destroy = quantize_destroy,
    .decode = quantize_decode,
    .decoded_size = quantize_decoded_size,
    .encode = quantize_encode,
    .to_json = quantize_to_json,
    .encoded_ctx = quantize_encoded_ctx,
};
