/* plan/rechunk.c — the RECHUNK kind (node_rechunk makes it, for zc_rechunk
 * and the planner): the same values with other chunks, one copy stage.
 * Multistage rechunks are chains of these, made by the planner (plan.c
 * expand_rechunk, rechunk_plan.c); a copy's task may write a block of output
 * chunks (plan_stage.copy). Always materialized, and so is its input unless it
 * is a source: a copy reads stored chunks. */
#include "core/error.h"
#include "plan/kind.h"

int node_rechunk(zc_array *a, const int64_t *chunks, zc_array **out)
{
    int64_t ch[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        ch[d] = chunks[d] <= 0 || chunks[d] > a->shape[d] ? a->shape[d] : chunks[d];
        if (ch[d] < 1) ch[d] = 1;
    }
    ZC_TRY(node_new(NODE_RECHUNK, a->ndim, a->shape, ch, a->dtype, 1, &a, out));
    (*out)->itemsize = a->itemsize;
    return 0;
}

static const char *rechunk_name(const zc_array *a) { (void)a; return "rechunk"; }

static int rechunk_region(zc_array *a, const zc_range *sel, void *out) { return node_region(a->inputs[0], sel, out); }

static size_t rechunk_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj) { return proj(a->inputs[0], sel); }

static int rechunk_from_json(const json_t *o, zc_array *a, int i)
{
    (void)o;
    const zc_array *in = a->inputs[0];
    bool same = in->ndim == a->ndim && in->dtype == a->dtype;
    for (int d = 0; same && d < a->ndim; d++) same = in->shape[d] == a->shape[d];
    if (!same) return zc__err(ZC_EFORMAT, "plan: node %d: a rechunk's shape or dtype differ from its input's", i);
    return 0;
}

const node_kind_def kind_rechunk = {
    .json = "rechunk", .flags = KIND_STORED | KIND_STORED_INPUT | KIND_PROJ_EXACT, .min_inputs = 1, .max_inputs = 1,
    .name = rechunk_name, .region = rechunk_region, .proj = rechunk_proj,
    .from_json = rechunk_from_json,
};
