/* codec/crc32.c — numcodecs' "crc32" checksum codec (v2 id "crc32", v3 name
 * "numcodecs.crc32").
 *
 * Layout (numcodecs Checksum32): a 4-byte little-endian CRC32 of the data,
 * then the data (location "start", the default; numcodecs >= 0.14 also allows
 * "end", which puts it after the data). CRC32 is zlib's, computed with
 * libdeflate. */
#include <libdeflate.h>

#include "codec/compress_common.h"

static uint32_t update(uint32_t sum, const void *p, size_t n) { return libdeflate_crc32(sum, p, n); }

static const codec_b2b_cksum_algo algo = {
    .v3_name = "numcodecs.crc32", .v2_id = "crc32", .update = update, .init = 0,
    .default_end = false, .v3_plain = false,
};

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    return codec_b2b_cksum_create(&algo, cfg, ctx, state);
}

const codec_type codec_crc32 = {
    .version = 1,
    .name = "numcodecs.crc32",
    .v2_id = "crc32",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = codec_b2b_cksum_destroy,
    .decode = codec_b2b_cksum_decode,
    .decoded_size = codec_b2b_cksum_decoded_size,
    .encode = codec_b2b_cksum_encode,
    .to_json = codec_b2b_cksum_to_json,
};
