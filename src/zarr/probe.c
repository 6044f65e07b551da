/* zarr/probe.c — what the planner may assume about reading parts of a stored
 * array's chunks: the granularity of a partial decode and how well the chunks
 * compress, from the header of one stored chunk (the first of the grid).
 *
 * zarr/read.c decodes only the blosc blocks a selection needs, fetching only
 * their bytes, when the chunk is a blosc buffer of at least PART_MIN bytes and
 * the selection spans at most half of it (its TWO_STEP_MIN; the same figure is
 * kept here). A blosc header (16 bytes: version, versionlz, flags, typesize,
 * nbytes, blocksize, cbytes) gives the block size and the stored size. */
#include "zarr/probe.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "zarr/zarr.h"

#define PART_MIN ((size_t)256 << 10) /* zarr/read.c TWO_STEP_MIN */
#define KEY_LEN 1024

static size_t le32(const unsigned char *p)
{
    return (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
}

int zarr_probe(zc_zarr *a, zarr_probe_info *out)
{
    if (!a || !out) return zc__err(ZC_EINVAL, "zarr_probe: NULL argument");
    memset(out, 0, sizeof *out);
    if (a->m.sharded || a->rchunk_nbytes == 0 || !codec_chain_is_blosc(a->chain)) return 0;
    int64_t c0[ZC_MAX_DIMS] = {0};
    char key[KEY_LEN];
    ZC_TRY(zarr_chunk_key(a, c0, key, sizeof key));
    unsigned char head[16];
    store_req q = {.key = key, .offset = 0, .length = sizeof head, .buf = head, .buf_cap = sizeof head};
    int rc = store_get_many(a->st, &q, 1);
    if (rc < 0) return rc;
    if (q.status != 0 || q.size != sizeof head) return 0; /* absent (fill) or too short: nothing known */
    size_t nbytes = le32(head + 4), bs = le32(head + 8), cbytes = le32(head + 12);
    if (head[0] != 2 || nbytes != a->rchunk_nbytes || cbytes == 0) return 0;
    out->ratio = (double)cbytes / (double)nbytes;
    /* a memcpyed buffer (flag 0x2) is decoded whole; blocks at least the item size */
    if (!(head[2] & 0x2) && bs >= a->m.dtype.size && bs <= nbytes && nbytes >= PART_MIN) out->unit = bs;
    return 0;
}
