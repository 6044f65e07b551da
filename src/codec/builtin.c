/* codec/builtin.c — registers the built-in codecs, through codec_register like
 * any user codec. */
#include "codec/codec.h"

void codec_register_builtins(void);

/* Weak while the codec files are being written in parallel; a codec whose file is
 * absent is simply not registered. A codec whose file exists must NOT be weak:
 * a weak reference does not pull its object out of libzcube_static.a, so the
 * codec would silently be missing from the CLI and the tests. */
#pragma weak codec_bytes
#pragma weak codec_transpose
#pragma weak codec_delta
#pragma weak codec_shuffle
#pragma weak codec_fixedscaleoffset
#pragma weak codec_bitround
#pragma weak codec_astype
#pragma weak codec_quantize

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
