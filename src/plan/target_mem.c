/* plan/target_mem.c — the compressor state of the stages writing targets
 * (see plan.h, plan_project_targets). */
#include "codec/codec.h"
#include "core/error.h"
#include "plan/plan.h"

/* The compressor state a target's tasks allocate to encode its chunks (zstd's
 * context grows with the level: 0.2 MB at level 1 on small chunks, 13 MB at
 * level 9 on 1 MB ones), added to the projection of the stage writing it. It
 * is runtime state, taken from reserved_mem: a stage is refused only if its
 * projection then exceeds allowed_mem itself. Without targets (a plan only
 * described, or computed into a buffer) the default codec, zstd:1, is assumed,
 * so a plan is described the same with or without them, and nothing is
 * refused for it (the real targets may not compress). */
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
