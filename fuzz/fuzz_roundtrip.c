/* fuzz/fuzz_roundtrip.c — arbitrary array data through a codec chain and back
 * must come out bit for bit (for the lossless chains of fuzz_chains).
 *
 * Input layout:
 *   byte 0   the chain: the lossless entries of fuzz_chains, byte 0 % count
 *   byte 1   the chunk shape (fuzz_shape_for: 1-3 dims whose product is the
 *            number of elements)
 *   rest     the chunk's bytes (cut to a whole number of elements, at most
 *            256 KiB)
 *
 * Encoding may refuse a shape a codec cannot take (a 3-D transpose on a 2-D
 * chunk fails at chain creation; shuffle with elementsize 3 on a size that is
 * not a multiple of 3), but never with ZC_EINTERNAL; whatever it encodes must
 * decode to the input, and the decoder must reject the encoded bytes cut
 * short by one (every chain here either checks sizes or a checksum, or fails
 * the size check of the final decode). */
#include <string.h>

#include "fuzz.h"

#define MAX_CHUNK ((size_t)256 << 10)

static const fuzz_chain_spec *lossless(uint8_t sel)
{
    size_t count = 0;
    for (size_t i = 0; i < fuzz_nchains; i++) count += fuzz_chains[i].lossless != 0;
    size_t want = sel % count;
    for (size_t i = 0; i < fuzz_nchains; i++)
        if (fuzz_chains[i].lossless && want-- == 0) return &fuzz_chains[i];
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const fuzz_chain_spec *spec = lossless(data[0]);
    const uint8_t *src = data + 2;
    size_t n = size - 2;
    if (n > MAX_CHUNK) n = MAX_CHUNK;

    codec_ctx ctx;
    int64_t one = 1;
    FUZZ_CHECK(fuzz_ctx(spec->dtype, spec->itemsize, 1, &one, 3, &ctx) == 0, "ctx");
    size_t nelem = n / ctx.dtype.size;
    int64_t shape[3];
    int ndim = fuzz_shape_for(nelem, data[1], shape);
    FUZZ_CHECK(fuzz_ctx(spec->dtype, spec->itemsize, ndim, shape, 3, &ctx) == 0, "ctx");
    FUZZ_CHECK(ctx.nbytes == nelem * ctx.dtype.size, "shape %d-D does not hold %zu elements", ndim, nelem);
    n = ctx.nbytes;

    json_t *j = fuzz_chain_json(spec);
    codec_chain *ch;
    int rc = codec_chain_create(j, &ctx, &ch);
    json_decref(j);
    if (rc != 0) return 0;

    zc_buf enc = {NULL, 0, 0};
    rc = codec_chain_encode(ch, n ? src : (const uint8_t *)"", n, &enc);
    FUZZ_CHECK(rc != ZC_EINTERNAL, "%s: encode: %s", spec->json, zc_errmsg());
    if (rc == 0) {
        unsigned char *dec = malloc(n ? n : 1);
        FUZZ_CHECK(dec != NULL, "out of memory");
        rc = codec_chain_decode(ch, enc.size ? enc.data : (const unsigned char *)"", enc.size, dec, n);
        FUZZ_CHECK(rc == 0, "%s (%d-D, %zu bytes): decoding what it encoded fails: %s", spec->json, ndim, n,
                   zc_errmsg());
        FUZZ_CHECK(!memcmp(dec, n ? src : dec, n), "%s (%d-D, %zu bytes): round trip differs", spec->json, ndim,
                   n);
        if (enc.size > 0) {
            /* the same bytes cut short by one (in an exact-size copy) */
            unsigned char *cut = malloc(enc.size - 1 ? enc.size - 1 : 1);
            FUZZ_CHECK(cut != NULL, "out of memory");
            memcpy(cut, enc.data, enc.size - 1);
            rc = codec_chain_decode(ch, cut, enc.size - 1, dec, n);
            FUZZ_CHECK(rc != 0, "%s (%zu bytes): a stored chunk cut short by one byte decodes", spec->json, n);
            free(cut);
        }
        free(dec);
    }
    buf_free(&enc);
    codec_chain_free(ch);
    return 0;
}
