/* codec/zlib.c — numcodecs' "zlib" compressor (v2 id "zlib", v3 name
 * "numcodecs.zlib").
 *
 * Bytes: one zlib stream (RFC 1950): 2-byte header CMF FLG (CM 8, window
 * CINFO <= 7, (CMF*256+FLG) % 31 == 0, no preset dictionary), raw DEFLATE data,
 * then the Adler-32 of the decoded data, big-endian. Bytes after the stream are
 * ignored, as Python's zlib.decompress (numcodecs) ignores them.
 *
 * Config: {"level": -1..9} (v2 {"id": "zlib", "level"}), default 1 (numcodecs).
 *
 * As for gzip, the container is parsed here and libdeflate inflates into the
 * caller's buffer, bounded by `cap`; an Adler-32 mismatch is ZC_ECHECKSUM. */
#include <libdeflate.h>
#include <stdint.h>

#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

typedef struct {
    int level; /* as configured, -1..9 */
} zlib_state;

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long level;
    ZC_TRY(codec_b2b_cfg_int(cfg, "zlib", "level", 1, -1, 9, &level));
    zlib_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->level = (int)level;
    *state = s;
    return 0;
}

static void destroy(void *state) { zc__free(state); }

static int decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written)
{
    const unsigned char *p = src;
    if (n < 2) return zc__err(ZC_ECORRUPT, "zlib: %zu bytes is too short for a zlib header", n);
    unsigned cmf = p[0], flg = p[1];
    if ((cmf & 0x0f) != 8 || (cmf >> 4) > 7 || (cmf * 256 + flg) % 31)
        return zc__err(ZC_ECORRUPT, "zlib: bad stream header 0x%02x%02x", cmf, flg);
    if (flg & 0x20) return zc__err(ZC_ECORRUPT, "zlib: stream needs a preset dictionary");
    size_t used, len;
    ZC_TRY(codec_b2b_inflate("zlib", p + 2, n - 2, dst, cap, &used, &len));
    size_t pos = 2 + used;
    if (n - pos < 4)
        return zc__err(ZC_ECORRUPT, "zlib: Adler-32 trailer is cut short (%zu of 4 bytes)", n - pos);
    uint32_t want = (uint32_t)p[pos] << 24 | (uint32_t)p[pos + 1] << 16 | (uint32_t)p[pos + 2] << 8 |
                    p[pos + 3];
    uint32_t sum = libdeflate_adler32(1, dst, len);
    if (sum != want)
        return zc__err(ZC_ECHECKSUM, "zlib: Adler-32 mismatch (stored 0x%08x, computed 0x%08x)",
                       (unsigned)want, (unsigned)sum);
    *written = len;
    return 0;
}

static int encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const zlib_state *s = state;
    struct libdeflate_compressor *c = codec_b2b_deflate_compressor(s->level < 0 ? 6 : s->level);
    if (!c) return ZC_ENOMEM;
    size_t need;
    if (n > SIZE_MAX / 2 || ck_add_sz(out->size, libdeflate_zlib_compress_bound(c, n), &need))
        return zc__err(ZC_EOVERFLOW, "zlib: %zu bytes is too large to compress", n);
    ZC_TRY(buf_reserve(out, need));
    size_t r = libdeflate_zlib_compress(c, src, n, out->data + out->size, out->cap - out->size);
    if (r == 0) return zc__err(ZC_EINTERNAL, "zlib: compressed data exceeds its bound");
    out->size += r;
    return 0;
}

static json_t *to_json(void *state, int zarr_format)
{
    const zlib_state *s = state;
    json_t *conf = json_pack("{s:i}", "level", s->level);
    return conf ? codec_b2b_json("numcodecs.zlib", "zlib", zarr_format, conf) : NULL;
}

const codec_type codec_zlib = {
    .version = 1,
    .name = "numcodecs.zlib",
    .v2_id = "zlib",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = destroy,
    .decode = decode,
    .decoded_size = NULL,
    .encode = encode,
    .to_json = to_json,
};
