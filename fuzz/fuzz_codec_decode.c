/* fuzz/fuzz_codec_decode.c — every built-in codec's decoder on arbitrary
 * bytes, alone and inside codec chains.
 *
 * Input layout:
 *   byte 0   < 0xC0: one codec, fuzz_codec_configs[byte 0 % fuzz_ncodec_configs];
 *            0xC0..0xFE: a chain, fuzz_chains[(byte 0 - 0xC0) % fuzz_nchains];
 *            0xFF: a codec spec string (codec_spec_parse, "blosc:zstd:5:shuffle")
 *   byte 1   one codec: the output capacity (see pick_cap);
 *            a chain: the chunk shape (fuzz_decode_shape);
 *            a spec: bit 0 the Zarr format (2 or 3), bits 1-2 the element size
 *   rest     the encoded bytes (a spec: the spec text, up to a NUL)
 *
 * One codec: decode into a buffer of exactly the chosen capacity (so ASan
 * sees any write past it); it must not claim to have written more than the
 * capacity, and when decoded_size knew the size, a successful decode gives
 * exactly that many bytes. to_json runs in both spellings. A chain decodes
 * into a buffer of exactly the chunk's size. A spec string that parses must
 * give the JSON shape its format uses (v3: a list; v2: {compressor, filters});
 * for v3 the list after a "bytes" codec then makes a chain that must round
 * trip a 1000-element pattern whenever it creates and encodes. */
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

static void spec(uint8_t sel, const uint8_t *src, size_t n)
{
    static const zc_dtype types[4] = {ZC_UINT8, ZC_INT16, ZC_FLOAT32, ZC_INT64};
    int fmt = 2 + (sel & 1);
    zc_dtype type = types[(sel >> 1) & 3];
    char *text = malloc(n + 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, src, n);
    text[n] = 0;
    int64_t shape[1] = {1000};
    codec_ctx ctx;
    FUZZ_CHECK(fuzz_ctx(type, 0, 1, shape, 3, &ctx) == 0, "ctx");
    json_t *j = NULL;
    if (codec_spec_parse(text, fmt, ctx.dtype.size, &j) != 0) {
        free(text);
        return;
    }
    FUZZ_CHECK(fmt == 3 ? json_is_array(j) : json_is_object(j), "spec '%s' gave the wrong JSON type", text);
    if (fmt == 3 && text[0] != '[' && text[0] != '{') {
        /* a short spec: [bytes] + its list must be a working chain */
        json_t *list = json_pack("[{s:s, s:{s:s}}]", "name", "bytes", "configuration", "endian", "little");
        FUZZ_CHECK(list && json_array_extend(list, j) == 0, "out of memory");
        codec_chain *ch;
        int rc = codec_chain_create(list, &ctx, &ch);
        FUZZ_CHECK(rc == 0, "spec '%s' parses but makes no chain: %s", text, zc_errmsg());
        unsigned char *a = malloc(ctx.nbytes), *b = malloc(ctx.nbytes);
        FUZZ_CHECK(a && b, "out of memory");
        for (size_t i = 0; i < ctx.nbytes; i++) a[i] = (unsigned char)((i / 7) ^ (i % 3));
        zc_buf e = {NULL, 0, 0};
        rc = codec_chain_encode(ch, a, ctx.nbytes, &e);
        FUZZ_CHECK(rc == 0, "spec '%s': encode fails: %s", text, zc_errmsg());
        rc = codec_chain_decode(ch, e.data, e.size, b, ctx.nbytes);
        FUZZ_CHECK(rc == 0 && !memcmp(a, b, ctx.nbytes), "spec '%s' does not round trip: %s", text, zc_errmsg());
        buf_free(&e);
        free(a);
        free(b);
        codec_chain_free(ch);
        json_decref(list);
    }
    json_decref(j);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    if (data[0] == 0xFF) spec(data[1], data + 2, size - 2);
    else if (data[0] < 0xC0) one_codec(&fuzz_codec_configs[data[0] % fuzz_ncodec_configs], data[1], data + 2, size - 2);
    else chain(&fuzz_chains[(size_t)(data[0] - 0xC0) % fuzz_nchains], data[1], data + 2, size - 2);
    return 0;
}
