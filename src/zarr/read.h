/* zarr/read.h — zc_zarr_read with options, for layers that know their access
 * pattern (the loader's random windows). */
#ifndef ZC_ZARR_READ_H
#define ZC_ZARR_READ_H

#include "zarr/zarr.h"

/* Map files (store_map) and decode straight from the page cache: no read
 * call, no copy, and the store keeps recent mappings for the next reads.
 * Meant for reads that come back to the same files again and again (random
 * windows): the mapped pages a process has touched count in its resident
 * size (RSS) while the mappings are kept (shared page-cache pages, not
 * private memory), which is why plain zc_zarr_read does not map (compute
 * bounds its memory by RSS). Shards mapped earlier are used in place by
 * every read. */
#define ZARR_READ_MAP 1u

/* zc_zarr_read with ZARR_READ_* flags. */
int zarr_read_flags(zc_zarr *a, const zc_range *sel, void *dst, size_t dst_size, unsigned flags);

#endif
