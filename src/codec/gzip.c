/* codec/gzip.c — the "gzip" compressor (Zarr v3 "gzip", numcodecs id "gzip").
 *
 * Bytes: one or more gzip members (RFC 1952), optionally followed by zero
 * padding, as Python's gzip module (which numcodecs uses) reads them. Each
 * member: 10-byte header (1f 8b 08 FLG MTIME[4] XFL OS), the optional FEXTRA,
 * FNAME, FCOMMENT and FHCRC fields FLG announces, raw DEFLATE data, then CRC-32
 * and ISIZE (decoded length mod 2^32), both little-endian.
 *
 * Config: {"level": -1..9} in both spellings (v2 {"id": "gzip", "level"}).
 * Defaults: 1 for v2 (numcodecs), 5 for v3 (zarr-python 3).
 *
 * The header and trailer are parsed here and the DEFLATE data is inflated by
 * libdeflate straight into the caller's buffer, bounded by `cap`; doing the
 * container here tells a CRC mismatch (ZC_ECHECKSUM) from bad data
 * (ZC_ECORRUPT). Encoding uses libdeflate (level -1 means 6). */
#include <libdeflate.h>
#include <stdint.h>

#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

typedef struct {
    int level; /* as configured, -1..9 */
} gzip_state;

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long level;
    ZC_TRY(codec_b2b_cfg_int(cfg, "gzip", "level", ctx->zarr_format == 2 ? 1 : 5, -1, 9, &level));
    gzip_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->level = (int)level;
    *state = s;
    return 0;
}

static void destroy(void *state) { zc__free(state); }

/* Length of the member header at p[0..n), or an error. */
static int parse_header(const unsigned char *p, size_t n, size_t at, size_t *len)
{
    if ((n >= 1 && p[0] != 0x1f) || (n >= 2 && p[1] != 0x8b))
        return zc__err(ZC_ECORRUPT, "gzip: no gzip magic at byte %zu", at);
    if (n < 10)
        return zc__err(ZC_ECORRUPT, "gzip: member at byte %zu is cut short (%zu bytes)", at, n);
    if (p[2] != 8)
        return zc__err(ZC_ECORRUPT, "gzip: unknown compression method %u at byte %zu", p[2], at);
    unsigned flg = p[3];
    if (flg & 0xe0) return zc__err(ZC_ECORRUPT, "gzip: reserved header flags set at byte %zu", at);
    size_t h = 10;
    if (flg & 4) { /* FEXTRA */
        if (n - h < 2) goto short_header;
        size_t xlen = p[h] | (size_t)p[h + 1] << 8;
        h += 2;
        if (n - h < xlen) goto short_header;
        h += xlen;
    }
    for (unsigned bit = 8; bit <= 16; bit <<= 1) { /* FNAME, FCOMMENT: zero-terminated */
        if (!(flg & bit)) continue;
        while (h < n && p[h]) h++;
        if (h == n) goto short_header;
        h++;
    }
    if (flg & 2) { /* FHCRC */
        if (n - h < 2) goto short_header;
        h += 2;
    }
    *len = h;
    return 0;
short_header:
    return zc__err(ZC_ECORRUPT, "gzip: member header at byte %zu is cut short", at);
}

static int decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written)
{
    const unsigned char *p = src;
    unsigned char *o = dst;
    size_t pos = 0, total = 0;
    if (n == 0) return zc__err(ZC_ECORRUPT, "gzip: empty input");
    while (pos < n) {
        size_t h = 0, used = 0, len = 0;
        ZC_TRY(parse_header(p + pos, n - pos, pos, &h));
        ZC_TRY(codec_b2b_inflate("gzip", p + pos + h, n - pos - h, o + total, cap - total, &used, &len));
        pos += h + used;
        if (n - pos < 8)
            return zc__err(ZC_ECORRUPT, "gzip: member trailer is cut short (%zu of 8 bytes)", n - pos);
        uint32_t crc = libdeflate_crc32(0, o + total, len);
        uint32_t want = codec_b2b_load_le32(p + pos);
        if (crc != want)
            return zc__err(ZC_ECHECKSUM, "gzip: CRC-32 mismatch (stored 0x%08x, computed 0x%08x)",
                           (unsigned)want, (unsigned)crc);
        uint32_t isize = codec_b2b_load_le32(p + pos + 4);
        if (isize != (uint32_t)len)
            return zc__err(ZC_ECORRUPT, "gzip: trailer length %u does not match the %zu bytes decoded",
                           (unsigned)isize, len);
        total += len;
        pos += 8;
        while (pos < n && p[pos] == 0) pos++; /* zero padding between/after members */
    }
    *written = total;
    return 0;
}

static int encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const gzip_state *s = state;
    struct libdeflate_compressor *c = codec_b2b_deflate_compressor(s->level < 0 ? 6 : s->level);
    if (!c) return ZC_ENOMEM;
    size_t need;
    if (n > SIZE_MAX / 2 || ck_add_sz(out->size, libdeflate_gzip_compress_bound(c, n), &need))
        return zc__err(ZC_EOVERFLOW, "gzip: %zu bytes is too large to compress", n);
    ZC_TRY(buf_reserve(out, need));
    size_t r = libdeflate_gzip_compress(c, src, n, out->data + out->size, out->cap - out->size);
    if (r == 0) return zc__err(ZC_EINTERNAL, "gzip: compressed data exceeds its bound");
    out->size += r;
    return 0;
}

static json_t *to_json(void *state, int zarr_format)
{
    const gzip_state *s = state;
    json_t *conf = json_pack("{s:i}", "level", s->level);
    return conf ? codec_b2b_json("gzip", "gzip", zarr_format, conf) : NULL;
}

const codec_type codec_gzip = {
    .version = 1,
    .name = "gzip",
    .v2_id = "gzip",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = destroy,
    .decode = decode,
    .decoded_size = NULL,
    .encode = encode,
    .to_json = to_json,
};
