/* codec/builtin.c — registers the built-in codecs, through codec_register like
 * any user codec. */
#include "codec/codec.h"

void codec_register_builtins(void);

/* Weak while the codec files are being written in parallel; a codec whose file is
 * absent is simply not registered. */
#pragma weak codec_bytes
#pragma weak codec_transpose
#pragma weak codec_crc32c
#pragma weak codec_zstd
#pragma weak codec_gzip
#pragma weak codec_zlib
#pragma weak codec_blosc
#pragma weak codec_lz4
#pragma weak codec_bz2
#pragma weak codec_delta
#pragma weak codec_shuffle
#pragma weak codec_fixedscaleoffset
#pragma weak codec_bitround
#pragma weak codec_astype
#pragma weak codec_quantize
#pragma weak codec_adler32
#pragma weak codec_crc32

void codec_register_builtins(void)
{
    const codec_type *all[] = {
        &codec_bytes, &codec_transpose, &codec_crc32c, &codec_zstd, &codec_gzip, &codec_zlib,
        &codec_blosc, &codec_lz4, &codec_bz2, &codec_delta, &codec_shuffle,
        &codec_fixedscaleoffset, &codec_bitround, &codec_astype, &codec_quantize,
        &codec_adler32, &codec_crc32,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) codec_register(all[i]);
}
