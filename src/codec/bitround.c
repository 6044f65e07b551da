/* codec/bitround.c — numcodecs "bitround" {"keepbits"} (v3
 * "numcodecs.bitround"): keep `keepbits` bits of each float's mantissa,
 * rounding to nearest (ties to even) on the integer view of the bits, as
 * numcodecs does:
 *
 *   maskbits = mantissa_bits - keepbits
 *   b += ((b >> maskbits) & 1) + (1 << (maskbits - 1)) - 1;  b &= ~0 << maskbits
 *
 * Decoding is the identity. The float type is the array's (ctx->dtype: in a
 * v2 chain the dtype of the data reaching the filter, with its stored byte
 * order; in v3 the native array). A non-float array can still be decoded (a
 * copy) but not encoded, like numcodecs. */
#include <string.h>

#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define NAME "bitround"

typedef struct {
    dtype_t dt;        /* element type of the data */
    bool is_float;     /* float16/32/64: encoding possible */
    unsigned keepbits; /* mantissa bits kept */
    unsigned maxbits;  /* mantissa bits of the type (10, 23, 52) */
} bitround_state;

static int bitround_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long keep;
    ZC_TRY(codec_filter_int(cfg, NAME, "keepbits", true, 0, 0, 1 << 20, &keep));
    bitround_state t;
    t.dt = ctx->dtype;
    t.is_float = dtype_is_float(ctx->dtype.type);
    t.maxbits = ctx->dtype.type == ZC_FLOAT16 ? 10 : ctx->dtype.type == ZC_FLOAT32 ? 23 : 52;
    t.keepbits = (unsigned)keep;
    if (t.is_float && t.keepbits > t.maxbits)
        return zc__err(ZC_EFORMAT, "%s: 'keepbits' %u is more than the %u mantissa bits of %s",
                       NAME, t.keepbits, t.maxbits, zc_dtype_name(ctx->dtype.type));
    bitround_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    *st = t;
    *state = st;
    return 0;
}

static void bitround_destroy(void *state) { zc__free(state); }

static int bitround_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                           size_t *written)
{
    if (n > cap) return zc__err(ZC_ECORRUPT, "%s: decoded size %zu exceeds %zu", NAME, n, cap);
    if (n && dst != src) memcpy(dst, src, n);
    *written = n;
    return 0;
}

static int bitround_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    *size = n;
    *known = true;
    return 0;
}

static int bitround_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const bitround_state *st = state;
    if (!st->is_float)
        return zc__err(ZC_EUNSUPPORTED, "%s: only float arrays can be bit-rounded (not %s)", NAME,
                       zc_dtype_name(st->dt.type));
    size_t es = st->dt.size;
    if (n % es)
        return zc__err(ZC_EINVAL, "%s: %zu bytes is not a whole number of %zu-byte elements", NAME,
                       n, es);
    if (n == 0) return 0; /* nothing to write (out->data may be NULL) */
    size_t at = out->size;
    ZC_TRY(buf_append(out, src, n));
    unsigned maskbits = st->maxbits - st->keepbits;
    if (maskbits == 0) return 0;
    num_fmt f = num_fmt_of(NUM_UINT, (unsigned)es);
    f.swap = dtype_needs_swap(&st->dt);
    uint64_t mask = ~UINT64_C(0) << maskbits, half1 = (UINT64_C(1) << (maskbits - 1)) - 1;
    unsigned char *p = out->data + at;
    for (size_t i = 0; i < n / es; i++) {
        num_val b = num_load(&f, p + i * es);
        b.u += ((b.u >> maskbits) & 1) + half1;
        b.u &= mask;
        num_store(&f, p + i * es, b); /* stores the low es bytes: wraps like NumPy */
    }
    return 0;
}

static json_t *bitround_to_json(void *state, int zarr_format)
{
    const bitround_state *st = state;
    return codec_filter_json("numcodecs.bitround", NAME, zarr_format,
                             json_pack("{s:I}", "keepbits", (json_int_t)st->keepbits));
}

static int bitround_encoded_ctx(void *state, const codec_ctx *in, codec_ctx *out)
{
    *out = *in;
    return 0;
}

const codec_type codec_bitround = {
    .version = 1,
    .name = "numcodecs.bitround",
    .v2_id = NAME,
    .kind = CODEC_A2A,
    .create = bitround_create,
    .destroy = bitround_destroy,
    .decode = bitround_decode,
    .decoded_size = bitround_decoded_size,
    .encode = bitround_encode,
    .to_json = bitround_to_json,
    .encoded_ctx = bitround_encoded_ctx,
};
