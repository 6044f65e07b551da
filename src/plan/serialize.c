/* plan/serialize.c — a plan as JSON, so another process (a worker, an MPI
 * rank, a batch job) can run any slice of it by itself.
 *
 * The document holds the plan's own graph (multistage rechunks expanded,
 * reduction rounds explicit, fitted parameters such as a product's step) in
 * post-order, and its table of operations (stages): the node each one
 * writes, its task grid (the node's blocks, or a copy's block of output
 * chunks), projection, group. Loading it does not plan again: "operation N,
 * blocks A:B" is the same tasks in every process, whatever its thread count.
 * Sources are named by store URL and path. A format number, the library
 * version and a checksum of the content guard against plans from another
 * version and plans changed after saving; loading also checks every
 * operation against its node (grid, copy block, group, order).
 *
 *   {"zcube_plan": 2, "zcube_version": "0.1.0", "work_dir": "...", "spec": {...},
 *    "nodes": [{"kind": "zarr", "store": "/data/era5.zarr", "path": "u", ...},
 *              {"kind": "ew", "op": 12, "inputs": [0, 0], ...}, ...],
 *    "outputs": [3], "targets": [{"store": "...", "path": "...", "codec": ..., "zarr_format": 3}],
 *    "stages": [{"node": 2, "target": -1, "tasks": 40, "projected_mem": ..., "name": "op0 mean (round 1)",
 *                "fused": "...", "group": -1, "copy_block": [...]}, ...],
 *    "memory_limit": ..., "threads": 2, "tasks": ..., "checksum": "<16 hex digits>"} */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/hash.h"
#include "plan/kind.h"
#include "plan/plan.h"
#include "store/store.h"
#include "zarr/zarr.h"

typedef struct {
    zc_array **v;
    int n, cap;
} list;

typedef struct {
    zc_store **v;
    int n, cap;
} store_list;

/* Keep a store open for the plan's life. */
static int keep_store(store_list *l, zc_store *st)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        zc_store **v = zc__realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) {
            zc_store_close(st);
            return ZC_ENOMEM;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = st;
    return 0;
}

static int index_of(const list *l, const zc_array *a)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == a) return i;
    return -1;
}

static int add_post(list *l, zc_array *a)
{
    if (index_of(l, a) >= 0) return 0;
    for (int i = 0; i < a->ninputs; i++) ZC_TRY(add_post(l, a->inputs[i]));
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        zc_array **v = zc__realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return ZC_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = a;
    return 0;
}

static int node_json(const list *l, zc_array *a, json_t **out)
{
    const node_kind_def *k = kind_of(a);
    json_t *o = json_pack("{s:s, s:o, s:o, s:s, s:I}", "kind", k->json, "shape", kind_int_array(a->shape, a->ndim),
                          "chunks", kind_int_array(a->chunks, a->ndim), "dtype", zc_dtype_name(a->dtype), "itemsize",
                          (json_int_t)a->itemsize);
    json_t *inputs = json_array();
    for (int i = 0; i < a->ninputs; i++) json_array_append_new(inputs, json_integer(index_of(l, a->inputs[i])));
    json_object_set_new(o, "inputs", inputs);
    int rc = k->to_json ? k->to_json(a, o) : 0;
    if (rc < 0) {
        json_decref(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* Rebuild node i of the document (its inputs are built already). */
static int node_from_json(const json_t *o, zc_array **built, int i, store_list *stores, zc_array **out)
{
    const char *name = json_string_value(json_object_get(o, "kind"));
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    int nd = kind_ints(json_object_get(o, "shape"), shape, ZC_MAX_DIMS);
    if (nd < 0 || kind_ints(json_object_get(o, "chunks"), chunks, ZC_MAX_DIMS) != nd || !name)
        return zc__err(ZC_EFORMAT, "plan: node %d is malformed", i);
    zc_array *in[NODE_MAX_INPUTS];
    json_t *inputs = json_object_get(o, "inputs");
    int nin = (int)json_array_size(inputs);
    if (!json_is_array(inputs) || nin > NODE_MAX_INPUTS)
        return zc__err(ZC_EFORMAT, "plan: node %d needs a list of at most %d inputs", i, NODE_MAX_INPUTS);
    for (int k = 0; k < nin; k++) {
        const json_t *jv = json_array_get(inputs, (size_t)k);
        json_int_t j = json_integer_value(jv);
        if (!json_is_integer(jv) || j < 0 || j >= i)
            return zc__err(ZC_EFORMAT, "plan: node %d names input %lld", i, (long long)j);
        in[k] = built[j];
    }
    /* the grid: positive chunks no larger than the dimension, a countable number of blocks */
    int64_t nblocks = 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] < 0 || chunks[d] < 1 || (chunks[d] > shape[d] && chunks[d] > 1) ||
            ck_mul_i64(nblocks, shape[d] ? ck_ceildiv(shape[d], chunks[d]) : 1, &nblocks))
            return zc__err(ZC_EFORMAT, "plan: node %d: dimension %d of size %lld with chunks of %lld", i, d,
                           (long long)shape[d], (long long)chunks[d]);
    }
    zc_dtype dt = kind_dtype_of(json_object_get(o, "dtype"));
    node_kind kind;
    if (kind_by_json(name, &kind) < 0) return zc__err(ZC_EFORMAT, "plan: node %d has unknown kind '%s'", i, name);
    const node_kind_def *k = kind_def(kind);
    if (nin < k->min_inputs || nin > k->max_inputs)
        return zc__err(ZC_EFORMAT, "plan: node %d (%s) has %d inputs", i, name, nin);
    if (k->flags & KIND_IN_MEMORY)
        return zc__err(ZC_EFORMAT, "plan: node %d is a '%s', whose values only the planning process had", i, name);
    if (k->load) { /* the node makes itself (a stored array opens its store) */
        zc_store *st = NULL;
        int rc = k->load(o, i, &st, out);
        if (st) ZC_TRY(keep_store(stores, st));
        if (rc < 0) return rc;
        bool same = (*out)->ndim == nd && (*out)->dtype == dt;
        for (int d = 0; same && d < nd; d++) same = (*out)->shape[d] == shape[d];
        if (same) return 0;
        zc_array_release(*out);
        *out = NULL;
        return zc__err(ZC_EFORMAT, "plan: node %d: the stored array '%s' no longer has the shape and dtype the plan was made for",
                       i, json_string_value(json_object_get(o, "path")));
    }
    ZC_TRY(node_new(kind, nd, shape, chunks, dt, nin, in, out));
    zc_array *a = *out;
    int rc = 0;
    const json_t *jis = json_object_get(o, "itemsize");
    json_int_t isz = json_integer_value(jis);
    if (!json_is_integer(jis) || (dt == ZC_RAW || dt == ZC_BYTES || dt == ZC_UNICODE ? isz < 1 || isz > 65536 : (size_t)isz != a->itemsize))
        rc = zc__err(ZC_EFORMAT, "plan: node %d: itemsize %lld for dtype %s", i, (long long)isz, zc_dtype_name(dt));
    else a->itemsize = (size_t)isz;
    if (rc == 0 && k->from_json) rc = k->from_json(o, a, i);
    if (rc < 0) {
        zc_array_release(a);
        *out = NULL;
        return rc;
    }
    return 0;
}

static json_t *spec_json(const zc_spec *s)
{
    return json_pack("{s:I, s:I, s:i, s:i, s:i}", "allowed_mem", (json_int_t)s->allowed_mem, "reserved_mem",
                     (json_int_t)s->reserved_mem, "nthreads", s->nthreads, "max_retries", s->max_retries,
                     "max_input_blocks", s->max_input_blocks);
}

/* ---- the document ---- */

#define PLAN_FORMAT 2
#define CHECKSUM_SEED 0x7a63756265706c6eull

int plan_doc_checksum(json_t *doc, char *hex)
{
    json_t *saved = json_object_get(doc, "checksum");
    json_incref(saved);
    json_object_del(doc, "checksum");
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    if (saved) {
        json_object_set_new(doc, "checksum", saved);
    }
    if (!text) return ZC_ENOMEM;
    snprintf(hex, 17, "%016llx", (unsigned long long)hash_bytes(text, strlen(text), CHECKSUM_SEED));
    free(text);
    return 0;
}

static json_t *stage_json(const list *l, const plan_stage *s)
{
    const zc_array *a = s->node;
    json_t *o = json_pack("{s:i, s:i, s:I, s:I, s:s, s:s, s:i}", "node", index_of(l, a), "target", s->target,
                          "tasks", (json_int_t)s->tasks, "projected_mem", (json_int_t)s->projected, "name", s->name,
                          "fused", s->fused, "group", s->group);
    if (o && s->copy[0] > 0) json_object_set_new(o, "copy_block", kind_int_array(s->copy, a->ndim));
    return o;
}

int plan_write_doc(const zc_plan *z, const char *work_dir, const char *path)
{
    const plan *p = &z->p;
    list l = {0};
    json_t *nodes = json_array(), *outs = json_array(), *tg = json_array(), *stages = json_array();
    int rc = 0;
    for (int i = 0; i < p->noutputs && rc == 0; i++) rc = add_post(&l, p->outputs[i]);
    for (int i = 0; i < l.n && rc == 0; i++) {
        json_t *o = NULL;
        if ((rc = node_json(&l, l.v[i], &o)) == 0) json_array_append_new(nodes, o);
    }
    for (int i = 0; i < p->noutputs && rc == 0; i++) {
        char url[PATH_MAX];
        json_array_append_new(outs, json_integer(index_of(&l, p->outputs[i])));
        if ((rc = kind_store_url(z->targets[i].store, url, sizeof url)) < 0) break;
        json_array_append_new(tg, json_pack("{s:s, s:s, s:s?, s:i}", "store", url, "path", z->targets[i].path,
                                            "codec", z->targets[i].codec, "zarr_format", z->targets[i].zarr_format));
    }
    for (int k = 0; k < p->nstages && rc == 0; k++) {
        json_t *o = stage_json(&l, &p->stages[k]);
        if (!o) rc = ZC_ENOMEM;
        else json_array_append_new(stages, o);
    }
    json_t *doc = NULL;
    char hex[17];
    if (rc == 0) {
        char real[PATH_MAX];
        doc = json_pack("{s:i, s:s, s:s, s:o, s:O, s:O, s:O, s:O, s:I, s:I, s:I}", "zcube_plan", PLAN_FORMAT,
                        "zcube_version", ZC_VERSION_STRING, "work_dir", realpath(work_dir, real) ? real : work_dir,
                        "spec", spec_json(&z->spec), "nodes", nodes, "outputs", outs, "targets", tg, "stages",
                        stages, "memory_limit", (json_int_t)p->limit, "threads", (json_int_t)p->threads,
                        "tasks", (json_int_t)p->tasks);
        if (doc && p->work_in_memory) json_object_set_new(doc, "work_in_memory", json_true());
        if (!doc || plan_doc_checksum(doc, hex) < 0) rc = ZC_ENOMEM;
    }
    if (rc == 0) {
        json_object_set_new(doc, "checksum", json_string(hex));
        if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) < 0)
            rc = zc__err(ZC_EIO, "cannot write the plan to '%s'", path);
    }
    json_decref(doc);
    json_decref(nodes);
    json_decref(outs);
    json_decref(tg);
    json_decref(stages);
    zc__free(l.v);
    return rc;
}

/* Stage k of a loaded plan reads only stages before it: the materialized nodes
 * met walking down its node's inputs through fused ones. */
static bool reads_earlier(const zc_array *a, int k, int depth)
{
    if (depth > 10000) return false;
    for (int i = 0; i < a->ninputs; i++) {
        const zc_array *in = a->inputs[i];
        if (in->stage >= 0 ? in->stage >= k : !reads_earlier(in, k, depth + 1)) return false;
    }
    return true;
}

/* Stage k of the document, checked against its node (the tasks a worker will
 * run follow from the node's grid and the copy block alone). */
static int stage_from_json(const json_t *o, zc_array *const *built, size_t nn, int k, int ntargets, size_t allowed_mem,
                           plan *p)
{
    plan_stage *s = &p->stages[k];
    const json_t *jn = json_object_get(o, "node"), *jt = json_object_get(o, "target"), *jg = json_object_get(o, "group");
    const char *name = json_string_value(json_object_get(o, "name")), *fused = json_string_value(json_object_get(o, "fused"));
    json_int_t n = json_integer_value(jn), t = json_integer_value(jt), g = json_integer_value(jg);
    if (!json_is_integer(jn) || n < 0 || (size_t)n >= nn || !json_is_integer(jt) || t < -1 || t >= ntargets ||
        !json_is_integer(jg) || g < -1 || g > k || !name || !fused)
        return zc__err(ZC_EFORMAT, "plan: operation %d is malformed", k);
    zc_array *a = built[n];
    if (a->stage >= 0 || kind_has(a, KIND_NO_STAGE))
        return zc__err(ZC_EFORMAT, "plan: operation %d: node %lld cannot be an operation", k, (long long)n);
    s->node = a;
    zc_array_retain(a);
    a->stage = k;
    s->target = (int)t;
    s->group = (int)g;
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->fused, sizeof s->fused, "%s", fused);
    json_int_t pm = json_integer_value(json_object_get(o, "projected_mem"));
    /* up to allowed_mem: a target's compressor state comes from reserved_mem (plan_project_targets) */
    if (pm < 0 || (size_t)pm > allowed_mem)
        return zc__err(ZC_EFORMAT, "plan: operation %d projects %lld bytes per task, over allowed_mem", k, (long long)pm);
    s->projected = (size_t)pm;
    int64_t tasks = node_nblocks(a);
    const json_t *cb = json_object_get(o, "copy_block");
    if (cb) {
        int64_t tb[ZC_MAX_DIMS]; /* a kind's own task block must be the one saved */
        bool own = kind_of(a)->task_block && kind_of(a)->task_block(a, tb);
        if ((a->kind != NODE_RECHUNK && !own) || kind_ints(cb, s->copy, ZC_MAX_DIMS) != a->ndim || a->ndim < 1 ||
            (own && memcmp(tb, s->copy, sizeof(int64_t) * (size_t)a->ndim)))
            return zc__err(ZC_EFORMAT, "plan: operation %d: a copy block on a node that is not a copy", k);
        tasks = 1;
        for (int d = 0; d < a->ndim; d++) {
            if (s->copy[d] < a->chunks[d] || s->copy[d] % a->chunks[d] ||
                ck_mul_i64(tasks, a->shape[d] ? ck_ceildiv(a->shape[d], s->copy[d]) : 1, &tasks))
                return zc__err(ZC_EFORMAT, "plan: operation %d: copy block %lld along dimension %d is not a multiple of "
                               "its chunks (%lld)", k, (long long)s->copy[d], d, (long long)a->chunks[d]);
        }
    }
    s->tasks = tasks;
    if (json_integer_value(json_object_get(o, "tasks")) != tasks)
        return zc__err(ZC_EFORMAT, "plan: operation %d lists %lld tasks; its grid has %lld", k,
                       (long long)json_integer_value(json_object_get(o, "tasks")), (long long)tasks);
    if (!reads_earlier(a, k, 0))
        return zc__err(ZC_EFORMAT, "plan: operation %d reads an operation that does not come before it", k);
    if (s->group >= 0) {
        const zc_array *lead = p->stages[s->group].node;
        if (a->kind != NODE_REDUCE || !(a->p.reduce.flags & ROUND_FIRST) || p->stages[s->group].group != s->group ||
            lead->kind != NODE_REDUCE || !plan_same_grid(lead, a) || cb)
            return zc__err(ZC_EFORMAT, "plan: operation %d cannot run in the tasks of operation %d", k, s->group);
    }
    p->tasks += tasks;
    if (s->target < 0) p->intermediate_bytes += (int64_t)(node_chunk_bytes(a) * (size_t)node_nblocks(a));
    return 0;
}

static int spec_from_json(const json_t *js, const char *path, zc_spec *spec)
{
    json_int_t am = json_integer_value(json_object_get(js, "allowed_mem")),
               rm = json_integer_value(json_object_get(js, "reserved_mem")),
               mr = json_integer_value(json_object_get(js, "max_retries")),
               nt = json_integer_value(json_object_get(js, "nthreads"));
    if (am < 1 || rm < 0 || rm >= am || mr < 0 || mr > 1000 || nt < 0 || nt > 65536)
        return zc__err(ZC_EFORMAT, "plan '%s': spec has allowed_mem %lld, reserved_mem %lld, max_retries %lld", path,
                       (long long)am, (long long)rm, (long long)mr);
    spec->allowed_mem = (size_t)am;
    spec->reserved_mem = (size_t)rm;
    spec->max_retries = (int)mr;
    spec->nthreads = (int)nt;
    return 0;
}

/* The document's version and checksum. */
static int check_doc(json_t *doc, const char *path)
{
    const json_t *fmt = json_object_get(doc, "zcube_plan");
    if (!json_is_integer(fmt)) return zc__err(ZC_EFORMAT, "'%s' is not a zcube plan (no \"zcube_plan\" member)", path);
    const char *ver = json_string_value(json_object_get(doc, "zcube_version"));
    if (json_integer_value(fmt) != PLAN_FORMAT || !ver || strcmp(ver, ZC_VERSION_STRING))
        return zc__err(ZC_EFORMAT, "plan '%s' was saved by zcube %s (plan format %lld); this is zcube %s (plan format %d): "
                       "save the plan again with this version", path, ver ? ver : "before 0.1.0",
                       (long long)json_integer_value(fmt), ZC_VERSION_STRING, PLAN_FORMAT);
    const char *sum = json_string_value(json_object_get(doc, "checksum"));
    char hex[17];
    if (plan_doc_checksum(doc, hex) < 0) return ZC_ENOMEM;
    if (!sum || strcmp(sum, hex))
        return zc__err(ZC_EFORMAT, "plan '%s' was changed after it was saved (checksum %s, content hashes to %s): "
                       "save the plan again", path, sum ? sum : "missing", hex);
    return 0;
}

int zc_plan_load(const char *path, zc_plan **out)
{
    zc__err_clear();
    if (out) *out = NULL;
    if (!path || !out) return zc__err(ZC_EINVAL, "zc_plan_load: NULL argument");
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (!doc) return zc__err(ZC_EFORMAT, "plan '%s': line %d: %s", path, jerr.line, jerr.text);
    int rc = json_is_object(doc) ? check_doc(doc, path) : zc__err(ZC_EFORMAT, "'%s' is not a zcube plan", path);
    json_t *nodes = json_object_get(doc, "nodes"), *outs = json_object_get(doc, "outputs"),
           *tg = json_object_get(doc, "targets"), *st = json_object_get(doc, "stages");
    size_t nn = json_array_size(nodes), no = json_array_size(outs), ns = json_array_size(st);
    const char *work_dir = json_string_value(json_object_get(doc, "work_dir"));
    if (rc == 0 && (!nn || !no || json_array_size(tg) != no || !ns || ns > nn || !work_dir))
        rc = zc__err(ZC_EFORMAT, "plan '%s' lacks nodes, outputs, targets, operations or its work directory", path);
    zc_array **built = rc == 0 ? zc__calloc(nn, sizeof *built) : NULL;
    zc_target *targets = rc == 0 ? zc__calloc(no, sizeof *targets) : NULL;
    store_list stores = {0};
    plan p = {0};
    zc_spec spec = ZC_SPEC_INIT;
    if (rc == 0 && (!built || !targets)) rc = ZC_ENOMEM;
    for (size_t i = 0; i < nn && rc == 0; i++) rc = node_from_json(json_array_get(nodes, i), built, (int)i, &stores, &built[i]);
    if (rc == 0) rc = spec_from_json(json_object_get(doc, "spec"), path, &spec);
    if (rc == 0) {
        p.limit = spec.allowed_mem - spec.reserved_mem;
        json_int_t lim = json_integer_value(json_object_get(doc, "memory_limit")),
                   th = json_integer_value(json_object_get(doc, "threads"));
        if ((size_t)lim != p.limit || th < 1 || th > 65536)
            rc = zc__err(ZC_EFORMAT, "plan '%s': memory limit %lld or threads %lld disagree with its spec", path,
                         (long long)lim, (long long)th);
        p.threads = th;
        p.work_in_memory = json_is_true(json_object_get(doc, "work_in_memory"));
        p.outputs = zc__calloc(no, sizeof *p.outputs);
        p.stages = zc__calloc(ns, sizeof *p.stages);
        if (rc == 0 && (!p.outputs || !p.stages)) rc = ZC_ENOMEM;
    }
    for (size_t i = 0; i < no && rc == 0; i++) {
        json_int_t k = json_integer_value(json_array_get(outs, i));
        if (k < 0 || (size_t)k >= nn) { rc = zc__err(ZC_EFORMAT, "plan: bad output %lld", (long long)k); break; }
        p.outputs[i] = built[k];
        zc_array_retain(built[k]);
        p.noutputs++;
        json_t *t = json_array_get(tg, i);
        zc_store *ts;
        const char *tpath = json_string_value(json_object_get(t, "path"));
        if (!tpath) { rc = zc__err(ZC_EFORMAT, "plan: target %zu has no path", i); break; }
        if ((rc = zc_store_open(json_string_value(json_object_get(t, "store")), 0, &ts)) < 0) break;
        if ((rc = keep_store(&stores, ts)) < 0) break;
        targets[i] = (zc_target){ts, tpath, json_string_value(json_object_get(t, "codec")),
                                 (int)json_integer_value(json_object_get(t, "zarr_format"))};
    }
    for (size_t k = 0; k < ns && rc == 0; k++) {
        rc = stage_from_json(json_array_get(st, k), built, nn, (int)k, (int)no, spec.allowed_mem, &p);
        if (p.stages[k].node) p.nstages = (int)k + 1; /* plan_free releases it */
    }
    for (size_t i = 0; i < nn && rc == 0; i++) /* values only an operation makes */
        if (kind_has(built[i], KIND_STAGE_ONLY) && built[i]->stage < 0)
            rc = zc__err(ZC_EFORMAT, "plan '%s': node %zu (%s) is computed by no operation", path, i,
                         kind_of(built[i])->name(built[i]));
    for (size_t i = 0; i < no && rc == 0; i++) { /* every output is written by the operation naming it */
        const zc_array *o = p.outputs[i];
        if (o->stage < 0 || p.stages[o->stage].target != (int)i)
            rc = zc__err(ZC_EFORMAT, "plan '%s': output %zu is not written by an operation", path, i);
    }
    if (rc == 0 && json_integer_value(json_object_get(doc, "tasks")) != p.tasks)
        rc = zc__err(ZC_EFORMAT, "plan '%s' lists %lld tasks; its operations have %lld", path,
                     (long long)json_integer_value(json_object_get(doc, "tasks")), (long long)p.tasks);
    spec.work_dir = work_dir;
    zc_plan *z = NULL;
    if (rc == 0) rc = plan_object(&p, &spec, targets, &z); /* takes p over */
    else plan_free(&p);
    if (z) { /* the stores it opened live as long as it */
        z->stores = stores.v;
        z->nstores = stores.n;
        stores = (store_list){0};
        *out = z;
    }
    for (size_t i = 0; built && i < nn; i++) zc_array_release(built[i]);
    for (int i = 0; i < stores.n; i++) zc_store_close(stores.v[i]);
    zc__free(stores.v);
    zc__free(built);
    zc__free(targets);
    json_decref(doc);
    return rc;
}
