/* zarr/read.h — zc_zarr_read with options, for layers that know their access
 * pattern (the loader's random windows). */
#ifndef ZC_ZARR_READ_H
#define ZC_ZARR_READ_H

#include "zarr/zarr.h"

/* Chunk files of unsharded arrays (for plain reads: chunks of 256 KiB or
 * more decoded) are mapped (store_map) and decoded or copied straight from
 * the page cache: no read call, no copy into a buffer. The store keeps recent
 * mappings (fs: a bounded number and size), so reads that come back to the
 * same files find their pages mapped, with no page fault; those pages are the
 * page cache's, shared, but they count in the process's resident size.
 *
 * A plain read keeps the pages of chunks it read in part (the rest of such a
 * chunk is likely read soon: crops, windows) and drops those of chunks it read
 * whole as soon as they are decoded (store_map_drop: a read streaming through
 * an array does not leave it resident). ZARR_READ_DROP drops them all, for
 * reads whose RSS is bounded (compute). ZARR_READ_MAP keeps them all and maps
 * small chunks and shards too (random windows: the loader); shards mapped
 * earlier are used in place by every read. Uncompressed chunks are mapped
 * only by reads without ZARR_READ_MAP; with ZARR_READ_DROP only whole ones not
 * contiguous in dst (parts are read by byte ranges). */
#define ZARR_READ_MAP 1u
#define ZARR_READ_DROP 2u

/* zc_zarr_read with ZARR_READ_* flags (zc_zarr_read: none). */
int zarr_read_flags(zc_zarr *a, const zc_range *sel, void *dst, size_t dst_size, unsigned flags);

/* Tests: reads of at least n bytes write their destination with
 * non-temporal stores (by default reads bigger than a quarter of the
 * last-level cache, at least 16 MiB); 0 restores the default. */
void zarr_read_set_stream_min(size_t n);

#endif
