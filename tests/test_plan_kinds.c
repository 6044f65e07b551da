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

TEST(reads_projected_at_their_true_alignment)
{
    /* (100, 60) float64 stored in (10, 20) chunks of 1,600 bytes */
    zc_array a;
    memset(&a, 0, sizeof a);
    a.kind = NODE_RECHUNK;
    a.ndim = 2;
    a.shape[0] = 100;
    a.shape[1] = 60;
    a.itemsize = 8;
    int64_t ch[2] = {10, 20};
    size_t c = 10 * 20 * 8;
    zc_range one[2] = {{10, 20, 1}, {20, 40, 1}};      /* exactly chunk (1, 1) */
    zc_range shifted[2] = {{15, 25, 1}, {20, 40, 1}};  /* halves of chunks (1, 1) and (2, 1) */
    zc_range rows[2] = {{10, 30, 1}, {0, 60, 1}};      /* 2 x 3 whole chunks, none contiguous in it */
    zc_range column[2] = {{0, 100, 1}, {20, 40, 1}};   /* 10 whole chunks, each contiguous in it */
    zc_range all[2] = {{0, 100, 1}, {0, 60, 1}};       /* 30 whole chunks, none contiguous in it */
    /* compressed: one chunk of scratch and every chunk touched */
    a.stored_plain = false;
    CHECK(node_proj_read(&a, ch, one) == 5 * c); /* worst alignment: 2 x 2 touched */
    CHECK(node_proj_read_exact(&a, ch, one) == 2 * c);
    CHECK(node_proj_read_exact(&a, ch, shifted) == 3 * c);
    CHECK(node_proj_read_exact(&a, ch, rows) == 7 * c);
    /* uncompressed: read straight into the destination where a chunk lands
     * whole and contiguous in it; of a cut chunk, the bytes of its rows read */
    a.stored_plain = true;
    CHECK(node_proj_read(&a, ch, one) == 4 * c);
    CHECK(node_proj_read_exact(&a, ch, one) == 0);
    CHECK(node_proj_read_exact(&a, ch, column) == 0);
    CHECK(node_proj_read_exact(&a, ch, shifted) == c); /* 5 rows of each of two chunks */
    CHECK(node_proj_read_exact(&a, ch, rows) == 6 * c);
    CHECK(node_proj_read_exact(&a, ch, all) == 30 * c);
    zc_range none[2] = {{10, 20, 1}, {25, 25, 1}};     /* empty: nothing read */
    CHECK(node_proj_read_exact(&a, ch, none) == 0);
    /* cut on every side: between the selected bytes and the chunks' */
    zc_range odd[2] = {{3, 97, 1}, {1, 59, 1}};
    size_t b = node_proj_read_exact(&a, ch, odd);
    CHECK(b >= (size_t)94 * 58 * 8 && b < 30 * c);
}
