/* zarr/read.h — zc_zarr_read with options, for layers that know their access
 * pattern (the loader's random windows). */
#ifndef ZC_ZARR_READ_H
#define ZC_ZARR_READ_H

#include "zarr/zarr.h"

/* Chunk files (unsharded arrays, not uncompressed; for plain reads chunks of
 * 256 KiB or more decoded) are mapped (store_map)
 * and decoded straight from the page cache: no read call, no copy into a
 * buffer. A plain zc_zarr_read drops the pages of its mappings as soon as the
 * group of chunks they hold is decoded (store_map_drop), so the pages it
 * touched do not stay in its resident size (RSS, which compute bounds).
 * ZARR_READ_MAP keeps them: meant for reads that come back to the same files
 * again and again (random windows), which then find them mapped; the store
 * keeps recent mappings. Shards mapped earlier (ZARR_READ_MAP) are used in
 * place by every read. */
#define ZARR_READ_MAP 1u

/* zc_zarr_read with ZARR_READ_* flags. */
int zarr_read_flags(zc_zarr *a, const zc_range *sel, void *dst, size_t dst_size, unsigned flags);

/* Tests: reads of at least n bytes write their destination with
 * non-temporal stores (by default reads bigger than a quarter of the
 * last-level cache, at least 16 MiB); 0 restores the default. */
void zarr_read_set_stream_min(size_t n);

#endif
