/* zarr/probe.c — what the planner may assume about reading parts of a stored
 * array's chunks: the granularity of a partial decode and how well the chunks
 * compress, from the header of one stored chunk (the first of the grid).
 *
 * zarr/part.c (and zarr/read.c for small selections) decode only the blocks
 * a box needs, fetching only their bytes, for chunks stored in blocks
 * (codec_blocks: blosc1) of at least PART_MIN bytes (read.c's TWO_STEP_MIN) in
 * blocks of at least PART_BLOCK_MIN (part.c's MIN_BLOCK). The chunk's header
 * (codec_chain_blocks) gives the block size and stored size. */
#include "zarr/probe.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "zarr/zarr.h"

#define PART_MIN ((size_t)256 << 10) /* zarr/read.c TWO_STEP_MIN */
#define PART_BLOCK_MIN ((size_t)16 << 10) /* zarr/part.c MIN_BLOCK */
#define KEY_LEN 1024

/* The probe itself; *kept: the answer came from a stored chunk (or needs
 * none), so it holds for the handle's life. */
static int probe_chunk(zc_zarr *a, zarr_probe_info *out, bool *kept)
{
    memset(out, 0, sizeof *out);
    *kept = true;
    if (a->m.sharded || a->rchunk_nbytes == 0 || !codec_chain_has_blocks(a->chain)) return 0;
    *kept = false;
    int64_t c0[ZC_MAX_DIMS] = {0};
    char key[KEY_LEN];
    ZC_TRY(zarr_chunk_key(a, c0, key, sizeof key));
    unsigned char head[CODEC_BLOCKS_HEAD];
    store_req q = {.key = key, .offset = 0, .length = sizeof head, .buf = head, .buf_cap = sizeof head};
    int rc = store_get_many(a->st, &q, 1);
    if (rc < 0) return rc;
    if (q.status != 0 || q.size != sizeof head) return 0; /* absent (fill) or too short: nothing known */
    *kept = true;
    codec_blocks h;
    if (!codec_chain_blocks(a->chain, head, sizeof head, &h) || !h.known || h.nbytes != a->rchunk_nbytes || h.cbytes == 0)
        return 0;
    out->ratio = (double)h.cbytes / (double)h.nbytes;
    out->fast = h.fast;
    out->remote = a->st->io_depth != 0;
    /* a memcpyed buffer is decoded whole; zarr/part.c reads blocks of 16 KiB or
     * more by parts (smaller ones the usual way) */
    if (h.split && h.blocksize >= PART_BLOCK_MIN && h.blocksize <= h.nbytes &&
        h.nbytes >= PART_MIN)
        out->unit = h.blocksize;
    return 0;
}

/* One probe per handle: the planner asks for each sliced-copy option and the
 * executor for each intermediate's codec, and from a remote store each ask
 * was a round trip. The first caller to find no answer kept probes and keeps
 * it (PROBE_BUSY meanwhile: others probe for themselves); an absent first
 * chunk is asked again next time, as it may have been written since. */
enum { PROBE_NONE, PROBE_BUSY, PROBE_KEPT };

int zarr_probe(zc_zarr *a, zarr_probe_info *out)
{
    if (!a || !out) return zc__err(ZC_EINVAL, "zarr_probe: NULL argument");
    if (atomic_load_explicit(&a->probe_state, memory_order_acquire) == PROBE_KEPT) {
        *out = a->probe;
        return 0;
    }
    int none = PROBE_NONE;
    bool mine = atomic_compare_exchange_strong(&a->probe_state, &none, PROBE_BUSY);
    bool kept;
    int rc = probe_chunk(a, out, &kept);
    if (mine) {
        if (rc == 0 && kept) a->probe = *out;
        atomic_store_explicit(&a->probe_state, rc == 0 && kept ? PROBE_KEPT : PROBE_NONE, memory_order_release);
    }
    return rc;
}
