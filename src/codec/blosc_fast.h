/* codec/blosc_fast.h — decoding blosc1 blocks in place, without libblosc's
 * per-call setup (see blosc_fast.c for the layout and what it handles). */
#ifndef ZC_CODEC_BLOSC_FAST_H
#define ZC_CODEC_BLOSC_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decode blocks j0..j1 of the blosc1 buffer src[0..n) (n = its cbytes) into
 * dst, block j at dst + j × blocksize (dst holds the decoded size). Returns 1
 * when done, 0 when the buffer is not of the handled kind (lz4, byte shuffle
 * or none, format 2) or does not add up: then libblosc must decode it (dst
 * may hold garbage). Never reads outside src or writes outside the blocks. */
int codec_blosc_fast_blocks(const void *src, size_t n, void *dst, size_t j0, size_t j1);

/* Decode a one-block blosc1 chunk src[0..n) (lz4, byte shuffle of typesize
 * isz, nbytes_want decoded bytes) into tmp (nbytes_want bytes; left shuffled)
 * and unshuffle only the selected items straight into their places: for
 * k_d < count[d], the item at byte src_off + sum k_d sstride[d] of the decoded
 * chunk goes to dst + sum k_d dstride[d] (strides in bytes, src_off a multiple
 * of isz, every selected item inside the chunk). Saves the pass that unshuffles
 * the whole chunk before a strided copy. Returns 1 when done, 0 when the chunk
 * is not of that kind, the selection's contiguous runs are shorter than 16
 * items (then the per-run cost exceeds the saved pass), or the chunk does not
 * add up (dst untouched, tmp may hold garbage): then decode it the usual way. */
int codec_blosc_fast_scatter(const void *src, size_t n, size_t nbytes_want, size_t isz, unsigned char *tmp,
                             unsigned char *dst, const int64_t *dstride, const int64_t *sstride, const int64_t *count,
                             int ndim, int64_t src_off);

#endif
