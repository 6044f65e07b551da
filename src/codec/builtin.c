/* codec/builtin.c — registers the built-in codecs, through codec_register like
 * any user codec. */
#include "codec/codec.h"

void codec_register_builtins(void);

void codec_register_builtins(void)
{
    const codec_type *all[] = {
        &codec_bytes, &codec_transpose, &codec_crc32c, &codec_zstd, &codec_gzip, &codec_zlib,
        &codec_blosc, &codec_lz4, &codec_bz2, &codec_delta, &codec_shuffle,
        &codec_fixedscaleoffset, &codec_bitround, &codec_astype, &codec_quantize,
        &codec_adler32, &codec_crc32,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        codec_register(all[i]);
}
