/* codec/compress_common.h — internal helpers shared by the bytes→bytes
 * compressor and checksum codecs (zstd, gzip, zlib, blosc, lz4, bz2, crc32c,
 * crc32, adler32): config parsing with named errors, JSON spelling of a
 * codec object in either Zarr format, little-endian loads/stores, per-thread
 * compression contexts, and the shared 32-bit checksum codec.
 *
 * Config readers treat a missing key or a JSON null as "use the default" and
 * fail with ZC_EFORMAT naming the codec and the key for a wrong type or a value
 * outside the accepted range. Unknown keys are ignored (numcodecs adds keys
 * across versions; "id" is always present in v2 objects). */
#ifndef ZC_CODEC_COMPRESS_COMMON_H
#define ZC_CODEC_COMPRESS_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"

/* ---- config ---- */

int codec_b2b_cfg_int(const json_t *cfg, const char *who, const char *key, long long def,
                      long long lo, long long hi, long long *out);
int codec_b2b_cfg_bool(const json_t *cfg, const char *who, const char *key, bool def, bool *out);
/* *out points into cfg (or is `def`); valid while cfg lives. */
int codec_b2b_cfg_str(const json_t *cfg, const char *who, const char *key, const char *def,
                      const char **out);

/* Wrap a configuration object (stolen) as a codec object:
 *   v3 → {"name": v3_name, "configuration": conf}   (conf NULL → no "configuration")
 *   v2 → {"id": v2_id, ...conf}
 * Returns a new reference, or NULL when out of memory. */
json_t *codec_b2b_json(const char *v3_name, const char *v2_id, int zarr_format, json_t *conf);

/* ---- byte order ---- */

static inline uint32_t codec_b2b_load_le32(const void *p)
{
    const unsigned char *b = p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline void codec_b2b_store_le32(void *p, uint32_t v)
{
    unsigned char *b = p;
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
}

/* ---- per-thread contexts ----
 *
 * Compression contexts are costly to create (zstd: ~100 KiB–MiBs, libdeflate:
 * ~10 KiB–1 MiB), and the zarr layer decodes chunks on many threads at once
 * through one shared codec instance. So each thread keeps its own, created on
 * first use and freed when the thread exits. Each returns NULL (with the error
 * message set) when out of memory. */
struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;
struct libdeflate_compressor;
struct libdeflate_decompressor;
struct ZSTD_CCtx_s *codec_b2b_zstd_cctx(void);
struct ZSTD_DCtx_s *codec_b2b_zstd_dctx(void);
/* A new zstd decompression context of the caller's own (a stream's: its
 * window is allocated through zcube's allocator, freed with ZSTD_freeDCtx). */
struct ZSTD_DCtx_s *codec_b2b_zstd_dctx_new(void);
/* Drop this thread's zstd compression context if it grew past a few MiB
 * (high levels on big chunks), so an idle thread does not pin it. */
void codec_b2b_zstd_cctx_trim(void);
/* A compressor for `level` (0..12); reused while the level stays the same. */
struct libdeflate_compressor *codec_b2b_deflate_compressor(int level);
struct libdeflate_decompressor *codec_b2b_deflate_decompressor(void);

/* ---- raw DEFLATE bounded by capacity ----
 * Decompress one DEFLATE stream from src[0..n) into dst[0..cap). Sets *in_used
 * (bytes of src the stream took) and *out_len. `codec` names the codec in
 * errors: ZC_ECORRUPT for bad or truncated data and for output beyond cap. */
int codec_b2b_inflate(const char *who, const void *src, size_t n, void *dst, size_t cap,
                      size_t *in_used, size_t *out_len);

/* ---- 32-bit checksum codecs (crc32c, numcodecs crc32 / adler32) ----
 *
 * Layout: the data with a 4-byte little-endian checksum of it, either after the
 * data (location "end": v3 crc32c, numcodecs crc32c) or before it (location
 * "start": numcodecs crc32 and adler32, their default). */
typedef struct {
    const char *v3_name;                     /* "crc32c", "numcodecs.crc32", … */
    const char *v2_id;                       /* "crc32c", "crc32", … */
    uint32_t (*update)(uint32_t sum, const void *p, size_t n); /* continue a checksum over p[0..n) */
    uint32_t init;                           /* checksum of no bytes */
    bool default_end;                        /* default location is "end" */
    bool v3_plain;                           /* v3 spelling has no configuration (crc32c) */
} codec_b2b_cksum_algo;

int codec_b2b_cksum_create(const codec_b2b_cksum_algo *algo, const json_t *cfg,
                           const codec_ctx *ctx, void **state);
void codec_b2b_cksum_destroy(void *state);
int codec_b2b_cksum_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                           size_t *written);
int codec_b2b_cksum_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known);
int codec_b2b_cksum_encode(void *state, const void *src, size_t n, zc_buf *out);
json_t *codec_b2b_cksum_to_json(void *state, int zarr_format);

/* CRC-32C (Castagnoli) of p[0..n), continuing from `crc` (0 to start);
 * SSE4.2 instructions when the CPU has them (codec/crc32c.c). */
uint32_t codec_crc32c_update(uint32_t crc, const void *p, size_t n);

#endif
