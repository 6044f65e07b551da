/* tests/test_plan_kinds.c — the kind table (plan/kind.h).
 *
 * Every node kind has a complete row: a name, a saved name no other kind has,
 * a projection, values by region or by block (not both), input counts that
 * make sense, and flags that do not contradict each other; the saved name
 * leads back to the kind. A kind added to node_kind without its row (or with
 * half of one) fails here before any plan uses it. */
#include <string.h>

#include "harness.h"
#include "plan/kind.h"

TEST(every_kind_has_a_complete_row)
{
    for (int k = 0; k < NODE_KIND_END_; k++) {
        const node_kind_def *d = kind_def((node_kind)k);
        CHECK(d != NULL);
        if (!d) continue;
        CHECK(d->json && d->json[0]);
        CHECK(d->name != NULL);
        CHECK(d->proj != NULL);
        CHECK((d->region != NULL) != (d->block != NULL));
        CHECK(d->min_inputs >= 0 && d->min_inputs <= d->max_inputs && d->max_inputs <= NODE_MAX_INPUTS);
        node_kind back;
        CHECK(kind_by_json(d->json, &back) == 0 && back == (node_kind)k);
        for (int j = 0; j < k; j++) CHECK(strcmp(kind_def((node_kind)j)->json, d->json) != 0);
    }
    node_kind none;
    CHECK(kind_by_json("no such kind", &none) < 0);
}

TEST(kind_flags_agree)
{
    for (int k = 0; k < NODE_KIND_END_; k++) {
        const node_kind_def *d = kind_def((node_kind)k);
        unsigned f = d->flags;
        /* materialized always, fused unless shared, or a source: one of the three */
        CHECK(((f & KIND_STORED) != 0) + ((f & KIND_FUSED) != 0) + ((f & KIND_SOURCE) != 0) == 1);
        if (f & KIND_NO_STAGE) CHECK(f & KIND_SOURCE);
        if (f & KIND_STAGE_ONLY) CHECK(f & KIND_STORED);
        if (d->block) CHECK(f & KIND_STAGE_ONLY); /* no region: only its stage makes its values */
        if (f & KIND_SOURCE) CHECK(d->max_inputs == 0);
        else CHECK(d->min_inputs >= 1);
        if (d->load) CHECK(d->from_json == NULL);
    }
}
