/* plan/serialize.c — a computation as JSON, so another process (a worker, an MPI
 * rank, a batch job) can run any slice of it by itself.
 *
 * The document lists the nodes of the optimized graph (multistage rechunks
 * already expanded, reduction rounds explicit) in post-order with their
 * parameters; sources are named by store URL and path. Rebuilding it and
 * planning again gives the same stages in the same order, so "operation N,
 * blocks A:B" means the same tasks in every process.
 *
 *   {"zcube_plan": 1, "work_dir": "...", "spec": {...},
 *    "nodes": [{"kind": "zarr", "store": "/data/era5.zarr", "path": "u", ...},
 *              {"kind": "ew", "op": "multiply", "inputs": [0, 0], ...}, ...],
 *    "outputs": [3], "targets": [{"store": "...", "path": "...", "codec": ..., "zarr_format": 3}]} */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "exec/run.h"
#include "ops/linalg.h"
#include "plan/decomp.h"
#include "plan/fft.h"
#include "plan/manip.h"
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

static json_t *int_array(const int64_t *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static int store_url(zc_store *st, char *buf, size_t size)
{
    if (!strncmp(st->url, "memory://", 9))
        return zc__err(ZC_EUNSUPPORTED, "store '%s' lives in this process's memory: workers cannot reach it", st->url);
    const char *path = !strncmp(st->url, "file://", 7) ? st->url + 7 : st->url;
    char real[PATH_MAX];
    if (!realpath(path, real)) return zc__err_sys(errno, "resolving store path '%s'", path);
    snprintf(buf, size, "%s", real);
    return 0;
}

static int node_json(const list *l, zc_array *a, json_t **out)
{
    static const char *const kinds[] = {"zarr", "buffer", "create", "scalar", "ew", "slice", "reduce", "rechunk"};
    json_t *o = json_pack("{s:s, s:o, s:o, s:s, s:I}", "kind",
                          manip_kind(a->kind) ? manip_kind_json(a->kind) : a->kind == NODE_MATMUL ? "matmul" : a->kind == NODE_DECOMP ? "decomp" : a->kind == NODE_FFT ? "fft" : kinds[a->kind], "shape", int_array(a->shape, a->ndim),
                          "chunks", int_array(a->chunks, a->ndim), "dtype", zc_dtype_name(a->dtype), "itemsize",
                          (json_int_t)a->itemsize);
    json_t *inputs = json_array();
    for (int i = 0; i < a->ninputs; i++) json_array_append_new(inputs, json_integer(index_of(l, a->inputs[i])));
    json_object_set_new(o, "inputs", inputs);
    char url[PATH_MAX];
    switch (a->kind) {
    case NODE_ZARR:
        if (store_url(a->p.zarr.store, url, sizeof url) < 0) {
            json_decref(o);
            return ZC_EUNSUPPORTED;
        }
        json_object_set_new(o, "store", json_string(url));
        json_object_set_new(o, "path", json_string(a->p.zarr.path));
        break;
    case NODE_BUFFER:
        json_decref(o);
        return zc__err(ZC_EUNSUPPORTED, "arrays made from caller buffers (zc_asarray) cannot be sent to workers");
    case NODE_CREATE:
        json_object_set_new(o, "what", json_integer(a->p.create.what));
        json_object_set_new(o, "a", json_real(a->p.create.a));
        json_object_set_new(o, "b", json_real(a->p.create.b));
        json_object_set_new(o, "c", json_real(a->p.create.c));
        json_object_set_new(o, "k", json_integer(a->p.create.k));
        json_object_set_new(o, "seed", json_integer((json_int_t)a->p.create.seed));
        break;
    case NODE_SCALAR:
        json_object_set_new(o, "value", json_real(a->p.scalar.value));
        json_object_set_new(o, "is_int", json_boolean(a->p.scalar.is_int));
        break;
    case NODE_EW:
        json_object_set_new(o, "op", json_integer(a->p.ew.op));
        break;
    case NODE_SLICE: {
        int64_t in_dim[ZC_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) in_dim[d] = a->p.slice.in_dim[d];
        json_object_set_new(o, "in_dim", int_array(in_dim, a->ndim));
        json_object_set_new(o, "start", int_array(a->p.slice.start, a->ndim));
        json_object_set_new(o, "step", int_array(a->p.slice.step, a->ndim));
        json_object_set_new(o, "fixed", int_array(a->p.slice.fixed, a->inputs[0]->ndim));
        break;
    }
    case NODE_REDUCE: {
        int64_t od[ZC_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) od[d] = a->p.reduce.out_dim[d];
        json_object_set_new(o, "op", json_integer(a->p.reduce.op));
        json_object_set_new(o, "in_dtype", json_string(zc_dtype_name(a->p.reduce.in_dtype)));
        json_object_set_new(o, "axes", json_integer((json_int_t)a->p.reduce.axes));
        json_object_set_new(o, "flags", json_integer(a->p.reduce.flags));
        json_object_set_new(o, "split", int_array(a->p.reduce.split, a->inputs[0]->ndim));
        json_object_set_new(o, "ddof", json_real(a->p.reduce.ddof));
        json_object_set_new(o, "out_dim", int_array(od, a->ndim));
        break;
    }
    case NODE_RECHUNK: break;
    case NODE_RESHAPE: case NODE_VIEW: case NODE_CONCAT: case NODE_GATHER: case NODE_TOTALS:
    case NODE_SCAN: manip_to_json(a, o); break;
    case NODE_MATMUL: linalg_to_json(a, o); break;
    case NODE_DECOMP: decomp_to_json(a, o); break;
    case NODE_FFT: fftn_to_json(a, o); break;
    }
    *out = o;
    return 0;
}

static int get_ints(const json_t *a, int64_t *out, int max)
{
    if (!json_is_array(a) || json_array_size(a) > (size_t)max) return zc__err(ZC_EFORMAT, "plan: bad integer list");
    for (size_t i = 0; i < json_array_size(a); i++) out[i] = json_integer_value(json_array_get(a, i));
    return (int)json_array_size(a);
}

static zc_dtype dtype_of(const json_t *v)
{
    zc_dtype t = ZC_DTYPE_INVALID;
    const char *s = json_string_value(v);
    if (s && !strcmp(s, "raw")) return ZC_RAW;
    if (s) zc_dtype_parse(s, &t, NULL);
    return t;
}

/* Rebuild node i of the document (its inputs are built already). */
static int node_from_json(const json_t *o, zc_array **built, int i, store_list *stores, zc_array **out)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    int nd = get_ints(json_object_get(o, "shape"), shape, ZC_MAX_DIMS);
    if (nd < 0 || get_ints(json_object_get(o, "chunks"), chunks, ZC_MAX_DIMS) != nd || !kind)
        return zc__err(ZC_EFORMAT, "plan: node %d is malformed", i);
    zc_array *in[NODE_MAX_INPUTS];
    json_t *inputs = json_object_get(o, "inputs");
    int nin = (int)json_array_size(inputs);
    if (nin > NODE_MAX_INPUTS) return zc__err(ZC_EFORMAT, "plan: node %d has too many inputs", i);
    for (int k = 0; k < nin; k++) {
        json_int_t j = json_integer_value(json_array_get(inputs, (size_t)k));
        if (j < 0 || j >= i) return zc__err(ZC_EFORMAT, "plan: node %d names input %lld", i, (long long)j);
        in[k] = built[j];
    }
    zc_dtype dt = dtype_of(json_object_get(o, "dtype"));
    if (!strcmp(kind, "zarr")) {
        zc_store *st;
        ZC_TRY(zc_store_open(json_string_value(json_object_get(o, "store")), ZC_STORE_READONLY, &st));
        ZC_TRY(keep_store(stores, st));
        return zc_from_zarr(st, json_string_value(json_object_get(o, "path")), out);
    }
    node_kind k;
    if (!strcmp(kind, "create")) k = NODE_CREATE;
    else if (!strcmp(kind, "scalar")) k = NODE_SCALAR;
    else if (!strcmp(kind, "ew")) k = NODE_EW;
    else if (!strcmp(kind, "slice")) k = NODE_SLICE;
    else if (!strcmp(kind, "reduce")) k = NODE_REDUCE;
    else if (!strcmp(kind, "rechunk")) k = NODE_RECHUNK;
    else if (!strcmp(kind, "matmul")) k = NODE_MATMUL;
    else if (!strcmp(kind, "decomp")) k = NODE_DECOMP;
    else if (!strcmp(kind, "fft")) k = NODE_FFT;
    else if (manip_kind_from_json(kind, &k) == 0) {}
    else return zc__err(ZC_EFORMAT, "plan: node %d has unknown kind '%s'", i, kind);
    ZC_TRY(node_new(k, nd, shape, chunks, dt, nin, in, out));
    zc_array *a = *out;
    int rc;
    a->itemsize = (size_t)json_integer_value(json_object_get(o, "itemsize"));
    switch (k) {
    case NODE_CREATE:
        a->p.create.what = (create_kind)json_integer_value(json_object_get(o, "what"));
        a->p.create.a = json_number_value(json_object_get(o, "a"));
        a->p.create.b = json_number_value(json_object_get(o, "b"));
        a->p.create.c = json_number_value(json_object_get(o, "c"));
        a->p.create.k = json_integer_value(json_object_get(o, "k"));
        a->p.create.seed = (uint64_t)json_integer_value(json_object_get(o, "seed"));
        break;
    case NODE_SCALAR:
        a->p.scalar.value = json_number_value(json_object_get(o, "value"));
        a->p.scalar.is_int = json_is_true(json_object_get(o, "is_int"));
        break;
    case NODE_EW: a->p.ew.op = (int)json_integer_value(json_object_get(o, "op")); break;
    case NODE_SLICE: {
        int64_t v[ZC_MAX_DIMS];
        get_ints(json_object_get(o, "in_dim"), v, ZC_MAX_DIMS);
        for (int d = 0; d < nd; d++) a->p.slice.in_dim[d] = (int)v[d];
        get_ints(json_object_get(o, "start"), a->p.slice.start, ZC_MAX_DIMS);
        get_ints(json_object_get(o, "step"), a->p.slice.step, ZC_MAX_DIMS);
        get_ints(json_object_get(o, "fixed"), a->p.slice.fixed, ZC_MAX_DIMS);
        break;
    }
    case NODE_REDUCE: {
        int64_t v[ZC_MAX_DIMS];
        a->p.reduce.op = (red_op)json_integer_value(json_object_get(o, "op"));
        a->p.reduce.in_dtype = dtype_of(json_object_get(o, "in_dtype"));
        a->p.reduce.axes = (uint64_t)json_integer_value(json_object_get(o, "axes"));
        a->p.reduce.flags = (int)json_integer_value(json_object_get(o, "flags"));
        get_ints(json_object_get(o, "split"), a->p.reduce.split, ZC_MAX_DIMS);
        a->p.reduce.ddof = json_number_value(json_object_get(o, "ddof"));
        get_ints(json_object_get(o, "out_dim"), v, ZC_MAX_DIMS);
        for (int d = 0; d < nd; d++) a->p.reduce.out_dim[d] = (int)v[d];
        break;
    }
    case NODE_DECOMP:
        if ((rc = decomp_from_json(o, a)) < 0) {
            zc_array_release(a);
            *out = NULL;
            return rc;
        }
        break;
    case NODE_FFT:
        if ((rc = fftn_from_json(o, a)) < 0) {
            zc_array_release(a);
            *out = NULL;
            return rc;
        }
        break;
    case NODE_MATMUL:
        if ((rc = linalg_from_json(o, a)) < 0) {
            zc_array_release(a);
            *out = NULL;
            return rc;
        }
        break;
    default:
        if (manip_kind(k) && (rc = manip_from_json(o, a)) < 0) {
            zc_array_release(a);
            *out = NULL;
            return rc;
        }
        break;
    }
    return 0;
}

static json_t *spec_json(const zc_spec *s)
{
    return json_pack("{s:I, s:I, s:i, s:i, s:i}", "allowed_mem", (json_int_t)s->allowed_mem, "reserved_mem",
                     (json_int_t)s->reserved_mem, "nthreads", s->nthreads, "max_retries", s->max_retries,
                     "max_input_blocks", s->max_input_blocks);
}

int zc_plan_save(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets, const char *path)
{
    zc__err_clear();
    if (!spec || !arrays || !targets || !path || n < 1) return zc__err(ZC_EINVAL, "zc_plan_save: NULL argument");
    plan p;
    ZC_TRY(plan_build(spec, n, arrays, &p)); /* expands rechunks: the saved graph is the planned one */
    list l = {0};
    json_t *nodes = json_array(), *outs = json_array(), *tg = json_array();
    int rc = 0;
    for (int i = 0; i < p.noutputs && rc == 0; i++) rc = add_post(&l, p.outputs[i]);
    for (int i = 0; i < l.n && rc == 0; i++) {
        json_t *o = NULL;
        if ((rc = node_json(&l, l.v[i], &o)) == 0) json_array_append_new(nodes, o);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        char url[PATH_MAX];
        json_array_append_new(outs, json_integer(index_of(&l, p.outputs[i])));
        if ((rc = store_url(targets[i].store, url, sizeof url)) < 0) break;
        json_array_append_new(tg, json_pack("{s:s, s:s, s:s?, s:i}", "store", url, "path", targets[i].path, "codec",
                                            targets[i].codec, "zarr_format", targets[i].zarr_format));
    }
    char work_dir[PATH_MAX];
    exec_work_dir(spec, work_dir, sizeof work_dir);
    zc_store *work = NULL;
    if (rc == 0) rc = zc_store_open(work_dir, ZC_STORE_CREATE, &work);
    if (rc == 0) rc = exec_prepare(&p, targets, work, 0);
    if (rc == 0) {
        char real[PATH_MAX];
        json_t *doc = json_pack("{s:i, s:s, s:o, s:O, s:O, s:O, s:I}", "zcube_plan", 1, "work_dir",
                                realpath(work_dir, real) ? real : work_dir, "spec", spec_json(spec), "nodes", nodes,
                                "outputs", outs, "targets", tg, "stages", (json_int_t)p.nstages);
        if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) < 0)
            rc = zc__err(ZC_EIO, "cannot write the plan to '%s'", path);
        json_decref(doc);
    }
    json_decref(nodes);
    json_decref(outs);
    json_decref(tg);
    zc__free(l.v);
    for (int k = 0; k < p.nstages; k++) {
        zc_zarr_close(p.stages[k].node->mat);
        p.stages[k].node->mat = NULL;
    }
    plan_free(&p);
    zc_store_close(work);
    return rc;
}

int zc_plan_run(const char *path, int op, int64_t first, int64_t last, int nthreads)
{
    zc__err_clear();
    if (!path) return zc__err(ZC_EINVAL, "zc_plan_run: NULL path");
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (!doc) return zc__err(ZC_EFORMAT, "plan '%s': line %d: %s", path, jerr.line, jerr.text);
    int rc = 0;
    json_t *nodes = json_object_get(doc, "nodes"), *outs = json_object_get(doc, "outputs"),
           *tg = json_object_get(doc, "targets"), *js = json_object_get(doc, "spec");
    size_t nn = json_array_size(nodes), no = json_array_size(outs);
    if (json_integer_value(json_object_get(doc, "zcube_plan")) != 1 || !nn || !no || json_array_size(tg) != no) {
        json_decref(doc);
        return zc__err(ZC_EFORMAT, "plan '%s' is not a zcube plan (version 1)", path);
    }
    zc_array **built = zc__calloc(nn, sizeof *built), **outputs = zc__calloc(no, sizeof *outputs);
    zc_target *targets = zc__calloc(no, sizeof *targets);
    store_list stores = {0};
    zc_store *work = NULL;
    plan p = {0};
    bool planned = false;
    if (!built || !outputs || !targets) { rc = ZC_ENOMEM; goto out; }
    for (size_t i = 0; i < nn && rc == 0; i++) rc = node_from_json(json_array_get(nodes, i), built, (int)i, &stores, &built[i]);
    for (size_t i = 0; i < no && rc == 0; i++) {
        json_int_t k = json_integer_value(json_array_get(outs, i));
        if (k < 0 || (size_t)k >= nn) { rc = zc__err(ZC_EFORMAT, "plan: bad output %lld", (long long)k); break; }
        outputs[i] = built[k];
        json_t *t = json_array_get(tg, i);
        zc_store *st;
        if ((rc = zc_store_open(json_string_value(json_object_get(t, "store")), 0, &st)) < 0) break;
        if ((rc = keep_store(&stores, st)) < 0) break;
        targets[i] = (zc_target){st, json_string_value(json_object_get(t, "path")),
                                 json_string_value(json_object_get(t, "codec")),
                                 (int)json_integer_value(json_object_get(t, "zarr_format"))};
    }
    zc_spec spec = ZC_SPEC_INIT;
    spec.allowed_mem = (size_t)json_integer_value(json_object_get(js, "allowed_mem"));
    spec.reserved_mem = (size_t)json_integer_value(json_object_get(js, "reserved_mem"));
    spec.max_retries = (int)json_integer_value(json_object_get(js, "max_retries"));
    spec.nthreads = nthreads;
    if (rc == 0 && (rc = plan_build(&spec, (int)no, outputs, &p)) == 0) planned = true;
    if (rc == 0 && (op < 0 || op >= p.nstages))
        rc = zc__err(ZC_EINVAL, "plan '%s' has operations 0..%d, not %d", path, p.nstages - 1, op);
    if (rc == 0) rc = zc_store_open(json_string_value(json_object_get(doc, "work_dir")), 0, &work);
    if (rc == 0) rc = exec_open(&p, targets, work);
    if (rc == 0) rc = exec_run_stage(&p, op, first, last, &spec);
out:
    if (planned) exec_finish(&p);
    for (size_t i = 0; built && i < nn; i++) zc_array_release(built[i]);
    for (int i = 0; i < stores.n; i++) zc_store_close(stores.v[i]);
    zc__free(stores.v);
    zc__free(built);
    zc__free(outputs);
    zc__free(targets);
    zc_store_close(work);
    json_decref(doc);
    return rc;
}
