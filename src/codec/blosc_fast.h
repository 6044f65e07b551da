/* codec/blosc_fast.h — decoding blosc1 blocks in place, without libblosc's
 * per-call setup (see blosc_fast.c for the layout and what it handles). */
#ifndef ZC_CODEC_BLOSC_FAST_H
#define ZC_CODEC_BLOSC_FAST_H

#include <stdbool.h>
#include <stddef.h>

/* Decode blocks j0..j1 of the blosc1 buffer src[0..n) (n = its cbytes) into
 * dst, block j at dst + j × blocksize (dst holds the decoded size). Returns 1
 * when done, 0 when the buffer is not of the handled kind (lz4, byte shuffle
 * or none, format 2) or does not add up: then libblosc must decode it (dst
 * may hold garbage). Never reads outside src or writes outside the blocks. */
int codec_blosc_fast_blocks(const void *src, size_t n, void *dst, size_t j0, size_t j1);

#endif
