/* codec/lz4_steps.h — numcodecs lz4 chunks (one LZ4 block after a size
 * prefix) decoded in order with 64 KiB of history (lz4_steps.c): the
 * step-wise hooks of codec_lz4 (codec.h). */
#ifndef ZC_CODEC_LZ4_STEPS_H
#define ZC_CODEC_LZ4_STEPS_H

#include <stddef.h>

int codec_lz4_steps_open(void *state, const void *src, size_t n, size_t nbytes, void **it);
int codec_lz4_steps_read(void *it, void *dst, size_t len);
void codec_lz4_steps_close(void *it);
size_t codec_lz4_steps_mem(void *state, size_t nbytes);

#endif
