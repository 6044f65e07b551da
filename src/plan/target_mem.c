/* plan/target_mem.c — what writing costs a stage's tasks: the buffers of a
 * chunk's write and the compressor state (see plan.h, plan_write_model and
 * plan_project_targets), and how an intermediate's chunks are stored. */
#include <stdint.h>
#include <string.h>

#include "codec/codec.h"
#include "core/checked.h"
#include "core/error.h"
#include "plan/kind.h"
#include "plan/plan.h"
#include "store/store.h"

/* Writing a chunk (zarr/write.c write_chunk) holds, beyond the task's block: the
 * chunk assembled from the block (unless the block lays it out already:
 * encodes_in_block), then each codec's output (codec_chain_encode keeps two
 * intermediate buffers and the result: at most three), each reserved once at
 * its codec's bound. An intermediate is written lz4 or uncompressed into files
 * (exec/run.c intermediate_codec): the chunk and one encoded copy. */
#define INTERMEDIATE_COPIES 2
/* a sharded target rebuilds its shard (write_shard: the old shard, the body
 * grown by doubling, the object with its index first): the old model's
 * measured bound, kept for shards */
#define SHARD_COPIES 4

/* a codec's bound on its output, over all the codecs zcube writes (bzip2's
 * is the widest: 1% + 600 bytes); k of them. Saturated: a projection that
 * overflows is refused, never wrapped to a small one. */
static size_t bounds(size_t n, size_t k)
{
    size_t b, r;
    if (ck_add_sz(n, n / 64 + 4096, &b) || ck_mul_sz(b, k, &r)) return SIZE_MAX;
    return r;
}

int plan_write_model(const zc_target *t, const zc_zarr_create_opts *create, size_t itemsize, plan_write *w)
{
    w->kept = t && t->store && t->store->url && !strncmp(t->store->url, "memory://", 9);
    bool sharded = false;
    for (int d = 0; create && d < create->ndim && d < ZC_MAX_DIMS; d++) sharded |= create->shards[d] != 0;
    w->in_block = !sharded && !(create && create->order == 'F');
    int *copies = &w->copies;
    if (sharded) {
        *copies = SHARD_COPIES;
        return 0;
    }
    const char *cname = t && t->codec ? t->codec : "zstd:1";
    json_t *spec = NULL;
    ZC_TRY(codec_spec_parse(cname, 3, itemsize, &spec));
    size_t steps = json_is_array(spec) ? json_array_size(spec) : 1;
    json_decref(spec);
    /* the chunk, each codec's output (at most three held), a transposed order's copy */
    *copies = 1 + (int)(steps < 3 ? steps : 3) + (create && create->order == 'F');
    return 0;
}

/* zarr/write.c in_place: every chunk of a's grid is whole (no edge chunk to
 * pad) and lies contiguous in the block, so each is encoded from the block. */
static bool encodes_in_block(const zc_array *a, const int64_t *chunk, const int64_t *block)
{
    bool later = false; /* a later dim where the chunk is narrower than the block */
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t c = chunk[d], e = block[d] < a->shape[d] ? block[d] : a->shape[d];
        if (c <= 0 || a->shape[d] % c || e % c || (later && c > 1)) return false;
        later |= c != e;
    }
    return true;
}

size_t plan_write_extra(const zc_array *a, const int64_t *chunk, const int64_t *block, bool intermediate)
{
    bool inter = intermediate || !a->write_copies;
    /* an intermediate stored uncompressed is written from the chunk itself (zarr/write.c) */
    size_t copies = inter ? (a->stored_plain ? 1 : INTERMEDIATE_COPIES) : (size_t)a->write_copies;
    size_t bytes = a->itemsize;
    for (int d = 0; d < a->ndim; d++) bytes = ck_sat_mul(bytes, (size_t)(chunk[d] < a->shape[d] ? chunk[d] : a->shape[d]));
    if (block && (inter || a->write_in_block) && encodes_in_block(a, chunk, block)) copies--;
    return bounds(bytes, copies);
}

bool plan_stores_uncompressed(const zc_array *a)
{
    while (a->kind == NODE_RECHUNK && a->ninputs == 1) a = a->inputs[0];
    return kind_has(a, KIND_UNCOMPRESSED);
}

size_t plan_kept(size_t bytes, size_t nchunks)
{
    /* each chunk as encoded: at most its bound */
    size_t pad, r;
    if (ck_mul_sz(nchunks, 4096, &pad) || ck_add_sz(pad, bytes / 64, &pad) || ck_add_sz(bytes, pad, &r)) return SIZE_MAX;
    return r;
}

size_t plan_write_kept(const zc_array *a, size_t bytes, size_t nchunks)
{
    return a->write_kept ? plan_kept(bytes, nchunks) : 0;
}

/* The compressor state a target's tasks allocate to encode its chunks (zstd's
 * context grows with the level: 0.2 MB at level 1 on small chunks, 13 MB at
 * level 9 on 1 MB ones), added to the projection of the stage writing it. It
 * is runtime state, taken from reserved_mem: a stage is refused only if its
 * projection then exceeds allowed_mem itself. Without targets (a plan only
 * described, or computed into a buffer) the default codec, zstd:1, is assumed,
 * and nothing is refused for it (the real targets may not compress). */
int plan_project_targets(plan *p, const zc_target *targets, size_t allowed_mem)
{
    for (int k = 0; k < p->nstages; k++) {
        plan_stage *s = &p->stages[k];
        if (s->target < 0) continue;
        const zc_target *t = targets ? &targets[s->target] : NULL;
        const char *cname = t && t->codec ? t->codec : "zstd:1";
        /* an array at its store's root has the path "": say "the output" */
        bool named = t && t->path && *t->path;
        const char *path = named ? t->path : "the output", *q = named ? "'" : "";
        json_t *spec = NULL;
        ZC_TRY(codec_spec_parse(cname, 3, s->node->itemsize, &spec));
        size_t state = codec_spec_encode_state(spec, node_chunk_bytes(s->node));
        json_decref(spec);
        s->projected += state;
        if (targets && s->projected > allowed_mem)
            return zc__err_mem(s->projected, allowed_mem,
                           "%s [%s] needs %.1f MB per task, %.1f MB of them for the compressor of %s%s%s (%s), more "
                           "than the %.1f MB allowed: use a lower level, smaller chunks or raise allowed_mem",
                           s->name, s->fused, (double)s->projected / 1e6, (double)state / 1e6, q, path, q, cname, (double)allowed_mem / 1e6);
    }
    return 0;
}
