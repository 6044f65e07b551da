/* codec/shuffle.c — numcodecs "shuffle" {"elementsize"} (v3
 * "numcodecs.shuffle", bytes→bytes): the byte shuffle of numcodecs, byte j of
 * element i goes to position j*count + i, where count = n / elementsize.
 *
 * elementsize <= 1 is a plain copy; otherwise the data must be a whole number
 * of elements (numcodecs raises ValueError, we give ZC_ECORRUPT). The default
 * elementsize is 4 in the v2 spelling (numcodecs' default) and the array's
 * element size in v3 (as numcodecs' zarr3 wrapper derives it). The loops work
 * on blocks of BLOCK elements so each of the elementsize streams is read (or
 * written) sequentially while the block's elements stay in cache. */
#include <string.h>

#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define NAME "shuffle"
#define BLOCK 256

typedef struct {
    size_t elementsize; /* bytes per element; <= 1 means no shuffling */
} shuffle_state;

static int shuffle_create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long es;
    long long def = ctx->zarr_format == 2 ? 4 : (long long)ctx->dtype.size;
    ZC_TRY(codec_filter_int(cfg, NAME, "elementsize", false, def, 0, 1 << 20, &es));
    shuffle_state *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    st->elementsize = (size_t)es;
    *state = st;
    return 0;
}

static void shuffle_destroy(void *state) { zc__free(state); }

static int check(const shuffle_state *st, size_t n, int code)
{
    if (st->elementsize > 1 && n % st->elementsize)
        return zc__err(code, "%s: %zu bytes is not a whole number of %zu-byte elements", NAME, n,
                       st->elementsize);
    return 0;
}

/* dst[i*es + j] = src[j*count + i] */
static void unshuffle(unsigned char *restrict dst, const unsigned char *restrict src, size_t n,
                      size_t es)
{
    size_t count = n / es;
    for (size_t i0 = 0; i0 < count; i0 += BLOCK) {
        size_t i1 = i0 + BLOCK < count ? i0 + BLOCK : count;
        for (size_t j = 0; j < es; j++) {
            const unsigned char *s = src + j * count;
            for (size_t i = i0; i < i1; i++) dst[i * es + j] = s[i];
        }
    }
}

/* dst[j*count + i] = src[i*es + j] */
static void shuffle(unsigned char *restrict dst, const unsigned char *restrict src, size_t n,
                    size_t es)
{
    size_t count = n / es;
    for (size_t i0 = 0; i0 < count; i0 += BLOCK) {
        size_t i1 = i0 + BLOCK < count ? i0 + BLOCK : count;
        for (size_t j = 0; j < es; j++) {
            unsigned char *d = dst + j * count;
            for (size_t i = i0; i < i1; i++) d[i] = src[i * es + j];
        }
    }
}

static int shuffle_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                          size_t *written)
{
    const shuffle_state *st = state;
    ZC_TRY(check(st, n, ZC_ECORRUPT));
    if (n > cap) return zc__err(ZC_ECORRUPT, "%s: decoded size %zu exceeds %zu", NAME, n, cap);
    if (st->elementsize <= 1) memcpy(dst, src, n);
    else unshuffle(dst, src, n, st->elementsize);
    *written = n;
    return 0;
}

static int shuffle_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    ZC_TRY(check(state, n, ZC_ECORRUPT));
    *size = n;
    *known = true;
    return 0;
}

static int shuffle_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const shuffle_state *st = state;
    ZC_TRY(check(st, n, ZC_EINVAL));
    if (n > (size_t)-1 - out->size) return zc__err(ZC_EOVERFLOW, "%s: output overflows", NAME);
    if (n == 0) return 0; /* nothing to write (out->data may be NULL) */
    ZC_TRY(buf_reserve(out, out->size + n));
    if (st->elementsize <= 1) memcpy(out->data + out->size, src, n);
    else shuffle(out->data + out->size, src, n, st->elementsize);
    out->size += n;
    return 0;
}

static json_t *shuffle_to_json(void *state, int zarr_format)
{
    const shuffle_state *st = state;
    return codec_filter_json("numcodecs.shuffle", NAME, zarr_format,
                             json_pack("{s:I}", "elementsize", (json_int_t)st->elementsize));
}

/* Same size out as in: lets the chain know the sizes around it. */
static int shuffle_encoded_ctx(void *state, const codec_ctx *in, codec_ctx *out)
{
    *out = *in;
    return 0;
}

const codec_type codec_shuffle = {
    .version = 1,
    .name = "numcodecs.shuffle",
    .v2_id = NAME,
    .kind = CODEC_B2B,
    .create = shuffle_create,
    .destroy = shuffle_destroy,
    .decode = shuffle_decode,
    .decoded_size = shuffle_decoded_size,
    .encode = shuffle_encode,
    .to_json = shuffle_to_json,
    .encoded_ctx = shuffle_encoded_ctx,
};
