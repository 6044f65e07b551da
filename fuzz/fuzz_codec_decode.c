/* fuzz/fuzz_codec_decode.c — every built-in codec's decoder on arbitrary
 * bytes, alone and inside codec chains.
 *
 * Input layout:
 *   byte 0   < 0xC0: one codec, fuzz_codec_configs[byte 0 % fuzz_ncodec_configs];
 *            >= 0xC0: a chain, fuzz_chains[(byte 0 - 0xC0) % fuzz_nchains]
 *   byte 1   one codec: the output capacity (see pick_cap);
 *            a chain: the chunk shape (fuzz_decode_shape)
 *   rest     the encoded bytes
 *
 * One codec: decode into a buffer of exactly the chosen capacity (so ASan
 * sees any write past it); it must not claim to have written more than the
 * capacity, and when decoded_size knew the size, a successful decode gives
 * exactly that many bytes. to_json runs in both spellings. A chain decodes
 * into a buffer of exactly the chunk's size. */
#include <string.h>

#include "fuzz.h"

/* Output capacity for a bytes→bytes decode: the decoded size when the codec
 * knows it, or a size chosen by `sel` (small ones test the bounds). */
static size_t pick_cap(uint8_t sel, size_t n, bool known, size_t ds)
{
    switch (sel & 7) {
    case 0: return known && ds <= FUZZ_MAX_BYTES ? ds : 65536;
    case 1: return 0;
    case 2: return 1;
    case 3: return 100;
    case 4: return 4096;
    case 5: return 65536;
    case 6: return n;
    default: return 2 * n + 64;
    }
}

static void one_codec(const fuzz_codec_config *cf, uint8_t sel, const uint8_t *src, size_t n)
{
    json_error_t e;
    json_t *j = json_loads(cf->json, 0, &e);
    FUZZ_CHECK(j != NULL, "bad JSON in the table: %s", cf->json);
    codec_ctx ctx;
    int fmt = json_object_get(j, "id") ? 2 : 3;
    FUZZ_CHECK(fuzz_ctx(cf->dtype, cf->itemsize, cf->ndim, cf->shape, fmt, &ctx) == 0, "shape");
    codec c;
    int rc = codec_create(j, &ctx, &c);
    json_decref(j);
    FUZZ_CHECK(rc == 0, "config %s does not create: %s", cf->json, zc_errmsg());

    bool known = false;
    size_t ds = 0;
    if (c.type->decoded_size && c.type->decoded_size(c.state, src, n, &ds, &known) != 0) known = false;
    size_t cap;
    if (fmt == 3 && c.type->kind != CODEC_B2B) cap = (sel & 8) ? ctx.nbytes / 2 : ctx.nbytes;
    else cap = pick_cap(sel, n, known, ds);
    unsigned char *dst = malloc(cap ? cap : 1);
    FUZZ_CHECK(dst != NULL, "out of memory");
    size_t w = (size_t)-1;
    rc = c.type->decode(c.state, n ? src : (const uint8_t *)"", n, dst, cap, &w);
    if (rc == 0) {
        FUZZ_CHECK(w <= cap, "%s wrote %zu bytes into %zu", cf->json, w, cap);
        FUZZ_CHECK(!known || w == ds, "%s: decoded_size said %zu, decode wrote %zu", cf->json, ds, w);
    }
    free(dst);
    for (int f = 2; f <= 3; f++) {
        json_t *o = c.type->to_json ? c.type->to_json(c.state, f) : NULL;
        FUZZ_CHECK(!c.type->to_json || o != NULL, "%s: to_json(%d) failed", cf->json, f);
        json_decref(o);
    }
    codec_destroy(&c);
}

static void chain(const fuzz_chain_spec *spec, uint8_t sel, const uint8_t *src, size_t n)
{
    codec_ctx ctx;
    int64_t shape[3];
    int ndim = fuzz_decode_shape(sel, shape);
    if (fuzz_ctx(spec->dtype, spec->itemsize, ndim, shape, 3, &ctx) != 0) return;
    json_t *j = fuzz_chain_json(spec);
    codec_chain *ch;
    int rc = codec_chain_create(j, &ctx, &ch);
    json_decref(j);
    if (rc != 0) return; /* e.g. a 3-D transpose on a 2-D shape */
    unsigned char *dst = malloc(ctx.nbytes ? ctx.nbytes : 1);
    FUZZ_CHECK(dst != NULL, "out of memory");
    codec_chain_decode(ch, n ? src : (const uint8_t *)"", n, dst, ctx.nbytes);
    free(dst);
    json_t *list = codec_chain_json(ch);
    FUZZ_CHECK(list != NULL, "codec_chain_json failed: %s", zc_errmsg());
    json_decref(list);
    codec_chain_free(ch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    if (data[0] < 0xC0) one_codec(&fuzz_codec_configs[data[0] % fuzz_ncodec_configs], data[1], data + 2, size - 2);
    else chain(&fuzz_chains[(size_t)(data[0] - 0xC0) % fuzz_nchains], data[1], data + 2, size - 2);
    return 0;
}
