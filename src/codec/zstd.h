/* codec/zstd.h — zstd frames decoded a block at a time (see zstd.c), for a
 * caller that puts decoded bytes in place while they are still in cache. */
#ifndef ZC_CODEC_ZSTD_H
#define ZC_CODEC_ZSTD_H

#include <stddef.h>

/* Called with the number of bytes decoded so far (growing; the last call has
 * them all). */
typedef void (*codec_zstd_step_fn)(void *ctx, size_t done);

/* Decode the zstd frames src[0..n) into dst[0..cap), block by block (zstd
 * blocks are at most 128 KiB), calling step(ctx, done) whenever at least
 * `every` bytes more are decoded, and once at the end. With stop < cap,
 * decoding ends once `stop` bytes are decoded, unless the frame carries a
 * checksum (then it is decoded whole and checked): the bytes after it are
 * not looked at. Frames decoded to their end must hold exactly cap bytes.
 * *written: the bytes decoded. Errors as the zstd codec's decode: ZC_ECORRUPT
 * (not zstd, cut short, more or fewer than cap bytes), ZC_ECHECKSUM,
 * ZC_ENOMEM. */
int codec_zstd_decode_steps(const void *src, size_t n, void *dst, size_t cap, size_t stop, size_t every,
                            codec_zstd_step_fn step, void *ctx, size_t *written);

#endif
