/* plan/target_mem.c — the compressor state of the stages writing targets
 * (see plan.h, plan_project_targets). */
#include "codec/codec.h"
#include "core/error.h"
#include "plan/plan.h"

/* The compressor state a target's tasks allocate to encode its chunks (zstd's
 * context grows with the level: 0.2 MB at level 1 on small chunks, 13 MB at
 * level 9 on 1 MB ones), added to the projection of the stage writing it; a
 * stage that no longer fits is refused. */
int plan_project_targets(plan *p, const zc_target *targets)
{
    for (int k = 0; k < p->nstages; k++) {
        plan_stage *s = &p->stages[k];
        if (s->target < 0) continue;
        const zc_target *t = &targets[s->target];
        json_t *spec = NULL;
        ZC_TRY(codec_spec_parse(t->codec ? t->codec : "zstd:1", 3, s->node->itemsize, &spec));
        s->projected += codec_spec_encode_state(spec, node_chunk_bytes(s->node));
        json_decref(spec);
        if (s->projected > p->limit)
            return zc__err(ZC_EMEMBOUND,
                           "%s [%s] needs %.1f MB per task with the compressor of '%s' (%s), more than the %.1f MB "
                           "allowed: use a lower level, smaller chunks or raise allowed_mem",
                           s->name, s->fused, (double)s->projected / 1e6, t->path, t->codec ? t->codec : "zstd:1",
                           (double)p->limit / 1e6);
    }
    return 0;
}
