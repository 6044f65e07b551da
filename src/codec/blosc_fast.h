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
/* The same for block j alone, written at dst (a block's bytes). */
int codec_blosc_fast_block(const void *src, size_t n, size_t j, void *dst);

/* Partial decode of a blosc1 buffer (codec/blosc.c; the codec's decode_range
 * hook): only the blocks that hold bytes [lo, hi) of the decoded data, written
 * at their own positions in dst, whose capacity cap is the whole decoded size
 * (the header must declare exactly that: else ZC_ECORRUPT). Sets [*dlo, *dhi)
 * ⊇ [lo, hi) to what it wrote, or *dhi = 0 (nothing written) when the buffer
 * is better or only decoded whole. */
int codec_blosc_decode_range(const void *src, size_t n, void *dst, size_t cap, size_t lo, size_t hi, size_t *dlo,
                             size_t *dhi);

/* Decode a blosc1 chunk src[0..n) (lz4, byte shuffle of typesize isz,
 * nbytes_want decoded bytes) block by block into tmp (one block's bytes, left
 * shuffled: it stays in cache) and unshuffle only the selected items straight
 * into their places: for k_d < count[d], the item at byte src_off + sum k_d
 * sstride[d] of the decoded chunk goes to dst + sum k_d dstride[d] (strides in
 * bytes, src_off a multiple of isz, every selected item inside the chunk).
 * Blocks holding no selected item are not decoded. Saves the pass that
 * unshuffles the whole chunk into a buffer bigger than the cache and the
 * strided copy after it. Returns 1 when done, 0 when the chunk is not of that
 * kind, the selection's contiguous runs are shorter than 16 items (then the
 * per-run cost exceeds the saved pass; one-block chunks of 4-byte items have
 * a loop for short runs), or the chunk does not add up (tmp may hold garbage;
 * one-block chunks leave dst untouched, others may have put some selected
 * items in place): then decode it the usual way. stream: dst will not be read
 * soon (a read much bigger than the cache): 4-byte items go there with
 * non-temporal stores, which do not read each line of dst before writing it
 * (whole reads of 1 GiB: 20% less CPU). */
int codec_blosc_fast_scatter(const void *src, size_t n, size_t nbytes_want, size_t isz, unsigned char *tmp,
                             unsigned char *dst, const int64_t *dstride, const int64_t *sstride, const int64_t *count,
                             int ndim, int64_t src_off, bool stream);

/* codec_blosc_fast_scatter for the selected items in blocks jb0..jb1 of the
 * chunk only (the others are left alone; jb1 may be past the last block):
 * blocks of one chunk decoded by several threads at once, each with its own
 * tmp of one block's size. Same returns; on 0 only items of those blocks may
 * be in place. */
int codec_blosc_fast_scatter_part(const void *src, size_t n, size_t nbytes_want, size_t isz, unsigned char *tmp,
                                  unsigned char *dst, const int64_t *dstride, const int64_t *sstride,
                                  const int64_t *count, int ndim, int64_t src_off, bool stream, size_t jb0, size_t jb1);

/* An lz4 block src[0..n) decoded into dst[0..cap) until at least `want`
 * bytes are out: the sequence that reaches `want` is copied whole (up to cap
 * bytes may be written, not only want). Returns the bytes decoded (at least
 * want unless the block ends first), -1 when the part decoded is malformed (a
 * length past src or dst, an offset before dst); the rest of the block is not
 * looked at. Never reads outside src or writes outside dst. */
ptrdiff_t codec_lz4_decode_upto(const void *src, size_t n, void *dst, size_t cap, size_t want);

#endif
