/* plan/elementwise.c — the EW kind (see elementwise.h): fusing a subtree into
 * one program, computing its regions, their memory, saving and checking. */
#include "plan/elementwise.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "plan/kind.h"

/* ---- making a node ---- */

static void shape_str(const zc_array *a, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < a->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%lld%s", (long long)a->shape[d], d + 1 < a->ndim ? ", " : "");
    if (k < n) snprintf(buf + k, n - k, ")");
}

/* Broadcast shape and chunks of the arguments (chunks from the largest argument). */
static int broadcast(const char *name, int nargs, zc_array *const *args, int *ndim, int64_t *shape, int64_t *chunks)
{
    int nd = 0;
    for (int i = 0; i < nargs; i++)
        if (args[i]->ndim > nd) nd = args[i]->ndim;
    for (int d = 0; d < nd; d++) {
        shape[d] = 1;
        chunks[d] = 1;
    }
    size_t best = 0;
    for (int i = 0; i < nargs; i++) {
        const zc_array *a = args[i];
        int off = nd - a->ndim;
        for (int j = 0; j < a->ndim; j++) {
            int64_t s = a->shape[j];
            if (s == shape[j + off] || s == 1) continue;
            if (shape[j + off] != 1) {
                char x[256], y[256];
                shape_str(args[0], x, sizeof x);
                shape_str(a, y, sizeof y);
                return zc__err(ZC_EINVAL, "%s: shapes %s and %s do not broadcast (dimension %d: %lld vs %lld)", name, x,
                               y, j + off, (long long)shape[j + off], (long long)s);
            }
            shape[j + off] = s;
        }
    }
    for (int i = 0; i < nargs; i++) {
        const zc_array *a = args[i];
        size_t bytes = a->itemsize;
        for (int d = 0; d < a->ndim; d++) bytes *= (size_t)a->shape[d];
        if (a->kind == NODE_SCALAR || bytes < best) continue;
        best = bytes;
        int off = nd - a->ndim;
        for (int j = 0; j < a->ndim; j++)
            if (a->shape[j] == shape[j + off]) chunks[j + off] = a->chunks[j];
    }
    *ndim = nd;
    return 0;
}

/* The result dtype, by compiling the one operation on its argument dtypes. */
static int result_dtype(int op, int nargs, zc_array *const *args, zc_dtype astype, zc_dtype *out)
{
    ew_program *p;
    ZC_TRY(ew_program_create(&p));
    int r[3] = {-1, -1, -1}, reg = -1, rc = 0;
    for (int i = 0; i < nargs && rc >= 0; i++) {
        const zc_array *a = args[i];
        if (a->kind == NODE_SCALAR)
            r[i] = a->p.scalar.is_int ? ew_const_i64(p, node_scalar_int(a)) : ew_const_f64(p, a->p.scalar.value);
        else
            r[i] = ew_input(p, i, a->dtype);
        if (r[i] < 0) rc = r[i];
    }
    if (rc >= 0) {
        if (op < 0) rc = ew_astype(p, r[0], astype, &reg);
        else if (nargs == 3) rc = ew_where(p, r[0], r[1], r[2], &reg);
        else if (nargs == 1) rc = ew_unary(p, (ew_op)op, r[0], &reg);
        else rc = ew_binary(p, (ew_op)op, r[0], r[1], &reg);
    }
    if (rc >= 0) *out = ew_reg_dtype(p, reg);
    ew_program_free(p);
    return rc < 0 ? rc : 0;
}

int ew_node_make(const char *name, int op, int nargs, zc_array *const *args, zc_dtype astype, zc_array **out)
{
    int nd = 0;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_dtype dt;
    ZC_TRY(broadcast(name, nargs, args, &nd, shape, chunks));
    ZC_TRY(result_dtype(op, nargs, args, astype, &dt));
    ZC_TRY(node_new(NODE_EW, nd, shape, chunks, dt, nargs, args, out));
    (*out)->p.ew.op = op;
    return 0;
}

/* ---- fusion ---- */

static pthread_mutex_t fuse_lock = PTHREAD_MUTEX_INITIALIZER;

static int leaf_index(zc_array *a, zc_array *leaf)
{
    for (int i = 0; i < a->p.ew.nleaves; i++)
        if (a->p.ew.leaves[i] == leaf) return i;
    if (a->p.ew.nleaves == 64) return zc__err(ZC_EUNSUPPORTED, "a fused expression has more than 64 inputs");
    zc_array **l = zc__realloc(a->p.ew.leaves, sizeof *l * (size_t)(a->p.ew.nleaves + 1));
    if (!l) return ZC_ENOMEM;
    a->p.ew.leaves = l;
    l[a->p.ew.nleaves] = leaf;
    return a->p.ew.nleaves++;
}

/* Compile node n (inside root's subtree) into root's program; *reg = its register. */
static int compile(zc_array *root, zc_array *n, int *reg)
{
    ew_program *p = root->p.ew.prog;
    if (n->kind == NODE_SCALAR) {
        *reg = n->p.scalar.is_int ? ew_const_i64(p, node_scalar_int(n)) : ew_const_f64(p, n->p.scalar.value);
        return *reg < 0 ? *reg : 0;
    }
    if (n->kind != NODE_EW || (n != root && n->mat)) {
        int k = leaf_index(root, n);
        if (k < 0) return k;
        *reg = ew_input(p, k, n->dtype);
        return *reg < 0 ? *reg : 0;
    }
    int r[NODE_MAX_INPUTS];
    for (int i = 0; i < n->ninputs; i++) ZC_TRY(compile(root, n->inputs[i], &r[i]));
    if (n->p.ew.op < 0) return ew_astype(p, r[0], n->dtype, reg);
    if (n->ninputs == 3) return ew_where(p, r[0], r[1], r[2], reg);
    if (n->ninputs == 1) return ew_unary(p, (ew_op)n->p.ew.op, r[0], reg);
    return ew_binary(p, (ew_op)n->p.ew.op, r[0], r[1], reg);
}

void node_unfuse_ew(zc_array *a)
{
    ew_program_free(a->p.ew.prog);
    a->p.ew.prog = NULL;
    zc__free(a->p.ew.leaves);
    a->p.ew.leaves = NULL;
    a->p.ew.nleaves = 0;
}

int node_fuse_ew(zc_array *a)
{
    pthread_mutex_lock(&fuse_lock);
    int rc = 0;
    if (!a->p.ew.prog) {
        int reg;
        if ((rc = ew_program_create(&a->p.ew.prog)) == 0 && (rc = compile(a, a, &reg)) == 0)
            rc = ew_set_output(a->p.ew.prog, reg);
        if (rc < 0) node_unfuse_ew(a);
    }
    pthread_mutex_unlock(&fuse_lock);
    return rc;
}

int ew_node_leaves(const zc_array *n, const zc_array **out, int k)
{
    for (int i = 0; i < n->ninputs; i++) {
        const zc_array *c = n->inputs[i];
        if (c->kind == NODE_SCALAR) continue;
        if (c->kind == NODE_EW && c->stage < 0) {
            k = ew_node_leaves(c, out, k);
            continue;
        }
        bool seen = false;
        for (int j = 0; j < k && !seen; j++) seen = out[j] == c;
        if (!seen && k < 64) out[k++] = c;
    }
    return k;
}

/* ---- the kind ---- */

static const char *ew_name(const zc_array *a)
{
    return a->p.ew.op < 0 ? "astype" : a->ninputs == 3 ? "where" : ew_op_name((ew_op)a->p.ew.op);
}

static int ew_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    ZC_TRY(node_fuse_ew(a));
    int nl = a->p.ew.nleaves, nd = a->ndim;
    void *buf[64] = {0};
    int64_t lstride[64][ZC_MAX_DIMS]; /* element strides of each leaf buffer per output dim */
    int64_t cnt[ZC_MAX_DIMS];
    size_t rows = 1;
    for (int d = 0; d < nd; d++) {
        cnt[d] = range_count(&sel[d]);
        if (d < nd - 1) rows *= (size_t)cnt[d];
    }
    int rc = 0;
    for (int k = 0; k < nl; k++) {
        zc_array *l = a->p.ew.leaves[k];
        zc_range lsel[ZC_MAX_DIMS];
        node_leaf_sel(a, l, sel, lsel, lstride[k]);
        size_t nb = node_region_bytes(l, lsel);
        if (!(buf[k] = zc__malloc(nb ? nb : 1))) {
            rc = ZC_ENOMEM;
            goto out;
        }
        if ((rc = node_region(l, lsel, buf[k])) < 0) goto out;
    }
    if (nd == 0) {
        int64_t zero[64] = {0};
        ew_eval(a->p.ew.prog, 1, (const void *const *)buf, zero, out);
        goto out;
    }
    int64_t last = cnt[nd - 1], idx[ZC_MAX_DIMS] = {0};
    const void *ptr[64];
    int64_t st[64];
    for (int k = 0; k < nl; k++) st[k] = lstride[k][nd - 1];
    for (size_t r = 0; r < rows && last > 0; r++) {
        for (int k = 0; k < nl; k++) {
            int64_t e = 0;
            for (int d = 0; d < nd - 1; d++) e += idx[d] * lstride[k][d];
            ptr[k] = (const unsigned char *)buf[k] + e * (int64_t)a->p.ew.leaves[k]->itemsize;
        }
        ew_eval(a->p.ew.prog, (size_t)last, ptr, st, out + r * (size_t)last * a->itemsize);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
    }
out:
    for (int k = 0; k < nl; k++) zc__free(buf[k]);
    return rc;
}

/* A fused elementwise region holds every distinct leaf's region at once, read one
 * after another (so only one read's scratch at a time). */
static size_t ew_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *lv[64];
    int k = ew_node_leaves(a, lv, 0);
    size_t total = 0, scratch = 0;
    for (int i = 0; i < k; i++) {
        zc_range ls[ZC_MAX_DIMS];
        node_leaf_sel(a, lv[i], sel, ls, NULL);
        size_t p = proj(lv[i], ls);
        total += node_region_bytes(lv[i], ls);
        if (p > scratch) scratch = p;
    }
    return total + scratch;
}

static int ew_to_json(const zc_array *a, json_t *o)
{
    json_object_set_new(o, "op", json_integer(a->p.ew.op));
    return 0;
}

/* The op, checked by making the node again from its inputs. */
static int ew_from_json(const json_t *o, zc_array *a, int i)
{
    json_int_t jop = json_integer_value(json_object_get(o, "op"));
    int op = a->p.ew.op = jop < -1 || jop > INT_MAX ? INT_MAX : (int)jop;
    int n = a->ninputs, rc;
    zc_array *ref = NULL, *in[NODE_MAX_INPUTS];
    for (int k = 0; k < n; k++) in[k] = a->inputs[k];
    if (n == 3 && op == EW_UNARY_END_) rc = ew_node_make("where", op, 3, in, ZC_DTYPE_INVALID, &ref);
    else if (n == 1 && op == -1 && a->dtype != ZC_RAW) rc = ew_node_make("astype", -1, 1, in, a->dtype, &ref);
    else if ((n == 1 && op >= 0 && op < EW_UNARY_END_) || (n == 2 && op > EW_UNARY_END_ && op < EW_BINARY_END_))
        rc = ew_node_make(ew_op_name((ew_op)op), op, n, in, ZC_DTYPE_INVALID, &ref);
    else return zc__err(ZC_EFORMAT, "plan: node %d: elementwise op %d with %d inputs", i, op, n);
    if (rc < 0) return zc__err_wrap(rc, "plan: node %d (elementwise op %d)", i, op);
    bool ok = a->ndim == ref->ndim && a->dtype == ref->dtype;
    for (int d = 0; ok && d < a->ndim; d++) ok = a->shape[d] == ref->shape[d];
    if (!ok)
        rc = zc__err(ZC_EFORMAT, "plan: node %d (elementwise): shape or dtype (%s) disagree with its inputs' (%s)", i,
                     zc_dtype_name(a->dtype), zc_dtype_name(ref->dtype));
    zc_array_release(ref);
    return rc;
}

static void ew_clone(zc_array *c)
{
    c->p.ew.prog = NULL;
    c->p.ew.leaves = NULL;
    c->p.ew.nleaves = 0;
}

const node_kind_def kind_ew = {
    .json = "ew", .flags = KIND_FUSED, .min_inputs = 1, .max_inputs = 3,
    .name = ew_name, .region = ew_region, .proj = ew_proj, .to_json = ew_to_json, .from_json = ew_from_json,
    .clone = ew_clone, .release = node_unfuse_ew,
};
