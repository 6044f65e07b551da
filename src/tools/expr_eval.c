/* tools/expr_eval.c — evaluation of a parsed `zcube eval` expression into a
 * lazy array (include/zcube.h section 9): the walk over the tree. Nothing is
 * computed here: every array operation only records a node of the plan.
 * Names are --in arrays, constants (pi, e, inf, nan, newaxis) and dtypes;
 * operators map to the array API's names (expr_parse.c, ex_op_function). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

static const struct {
    const char *name;
    zc_dtype dtype;
} DTYPES[] = {
    {"bool", ZC_BOOL},       {"int8", ZC_INT8},       {"int16", ZC_INT16},         {"int32", ZC_INT32},
    {"int64", ZC_INT64},     {"uint8", ZC_UINT8},     {"uint16", ZC_UINT16},       {"uint32", ZC_UINT32},
    {"uint64", ZC_UINT64},   {"float16", ZC_FLOAT16}, {"float32", ZC_FLOAT32},     {"float64", ZC_FLOAT64},
    {"complex64", ZC_COMPLEX64}, {"complex128", ZC_COMPLEX128},
};

static int eval_name(ex_ctx *e, const ex_node *n, ex_value *out)
{
    memset(out, 0, sizeof *out);
    out->col = n->col;
    for (int i = 0; i < e->nvars; i++)
        if (!strcmp(e->vars[i].name, n->str)) {
            out->kind = V_ARRAY;
            out->arr = e->vars[i].array;
            zc_array_retain(out->arr);
            return 0;
        }
    if (!strcmp(n->str, "pi")) {
        ex_set_float(out, 3.14159265358979323846, n->col);
        return 0;
    }
    if (!strcmp(n->str, "e")) {
        ex_set_float(out, 2.71828182845904523536, n->col);
        return 0;
    }
    if (!strcmp(n->str, "inf")) {
        ex_set_float(out, INFINITY, n->col);
        return 0;
    }
    if (!strcmp(n->str, "nan")) {
        ex_set_float(out, NAN, n->col);
        return 0;
    }
    if (!strcmp(n->str, "newaxis")) {
        out->kind = V_NONE;
        return 0;
    }
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (!strcmp(DTYPES[i].name, n->str)) {
            out->kind = V_DTYPE;
            out->dtype = DTYPES[i].dtype;
            return 0;
        }
    if (ex_is_function(n->str)) return ex_fail(n->col, "'%s' is a function: call it, as in %s(...)", n->str, n->str);
    char names[256] = "";
    size_t k = 0;
    for (int i = 0; i < e->nvars && k < sizeof names - 40; i++) {
        int w = snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", e->vars[i].name);
        if (w > 0) k += (size_t)w;
    }
    if (e->nvars) return ex_fail(n->col, "unknown name '%s' (arrays given with --in: %s)", n->str, names);
    return ex_fail(n->col, "unknown name '%s' (bind arrays to names with --in NAME=PATH)", n->str);
}

static int eval_unary(ex_ctx *e, const ex_node *n, ex_value *out)
{
    ex_value a;
    if (ex_eval_node(e, n->a, &a) < 0) return -1;
    int rc;
    if (a.kind == V_NUM) return ex_fold_unary_operator(n->op, &a, n->col, out);
    if (a.kind != V_ARRAY) {
        rc = ex_fail(n->col, "operator '%s' does not apply to %s", ex_op_text(n->op), ex_kind_name(&a));
    } else {
        rc = ex_call_ew(e, ex_op_function(n->op), 1, &a, n->col, out);
    }
    ex_value_clear(&a);
    return rc;
}

static int eval_binary(ex_ctx *e, const ex_node *n, ex_value *out)
{
    ex_value ab[2];
    memset(ab, 0, sizeof ab);
    if (ex_eval_node(e, n->a, &ab[0]) < 0) return -1;
    if (ex_eval_node(e, n->b, &ab[1]) < 0) {
        ex_value_clear(&ab[0]);
        return -1;
    }
    int rc;
    if (n->op == EX_OP_MATMUL) {
        static const ex_fdef MATMUL_DEF = {"matmul", "x1,x2", 2, 2, ex_fn_linalg, "matmul", 0};
        if (ab[0].kind != V_ARRAY || ab[1].kind != V_ARRAY)
            rc = ex_fail(n->col, "operator '@' needs arrays, not %s", ex_kind_name(ab[0].kind != V_ARRAY ? &ab[0] : &ab[1]));
        else if ((rc = ex_fn_linalg(e, &MATMUL_DEF, n, ab, out)) == 0)
            out->col = n->col;
    } else if (ab[0].kind == V_NUM && ab[1].kind == V_NUM) {
        rc = ex_fold_operator(n->op, &ab[0], &ab[1], n->col, out);
    } else if ((ab[0].kind == V_ARRAY || ab[0].kind == V_NUM) && (ab[1].kind == V_ARRAY || ab[1].kind == V_NUM)) {
        rc = ex_call_ew(e, ex_op_function(n->op), 2, ab, n->col, out);
    } else {
        const ex_value *bad = ab[0].kind == V_ARRAY || ab[0].kind == V_NUM ? &ab[1] : &ab[0];
        rc = ex_fail(n->col, "operator '%s' does not apply to %s", ex_op_text(n->op), ex_kind_name(bad));
    }
    ex_value_clear(&ab[0]);
    ex_value_clear(&ab[1]);
    return rc;
}

static int slice_part(const ex_value *v, int64_t *x, int *has)
{
    *has = 0;
    if (v->kind == V_NONE) return 0;
    if (ex_as_int(v, "slice bound", x) < 0) return -1;
    *has = 1;
    return 0;
}

/* t[i] of a tuple (the results of qr, svd, lstsq...): consumes *t. */
static int tuple_item(ex_ctx *e, const ex_node *n, ex_value *t, ex_value *out)
{
    ex_value ix;
    int rc = ex_eval_node(e, n->b, &ix);
    if (rc == 0) {
        if (ix.kind != V_NUM || !ix.is_int || ix.is_bool) {
            rc = ex_fail(n->b->col, "a tuple is indexed by an integer, not %s", ex_kind_name(&ix));
        } else {
            int64_t i = ix.i < 0 ? ix.i + t->n : ix.i;
            if (i < 0 || i >= t->n) {
                rc = ex_fail(n->b->col, "tuple index %lld is out of range (%d items)", (long long)ix.i, t->n);
            } else if (t->items[i].kind != V_ARRAY && t->items[i].kind != V_NUM) {
                rc = ex_fail(n->b->col, "tuple item %lld is %s: only arrays and numbers can be taken out of a tuple",
                          (long long)ix.i, ex_kind_name(&t->items[i]));
            } else {
                *out = t->items[i];
                if (out->kind == V_ARRAY) zc_array_retain(out->arr);
                out->col = n->col;
            }
        }
        ex_value_clear(&ix);
    }
    ex_value_clear(t);
    return rc;
}

static int eval_subscript(ex_ctx *e, const ex_node *n, ex_value *out)
{
    ex_value a, ix;
    if (ex_eval_node(e, n->a, &a) < 0) return -1;
    if (a.kind == V_TUPLE) return tuple_item(e, n, &a, out);
    if (a.kind != V_ARRAY) {
        int rc = ex_fail(n->a->col, "only arrays can be indexed, not %s", ex_kind_name(&a));
        ex_value_clear(&a);
        return rc;
    }
    if (ex_eval_node(e, n->b, &ix) < 0) {
        ex_value_clear(&a);
        return -1;
    }
    /* one entry or a tuple of entries (a list, written in brackets, is one entry: an index array) */
    const ex_value *items = &ix;
    int nitems = 1;
    if (ix.kind == V_TUPLE && n->b->parens != 2) {
        items = ix.items;
        nitems = ix.n;
    }
    zc_index idx[ZC_MAX_DIMS * 2];
    int rc = 0, adv = -1, narr = 0; /* adv: the entry that is an array (or a list of integers) */
    for (int k = 0; k < nitems; k++) narr += items[k].kind == V_ARRAY || (items[k].kind == V_TUPLE && items[k].n > 0);
    if (narr > 1) { /* x[i0, i1, ...]: integer arrays and integers only */
        zc_array *r = NULL;
        rc = ex_int_arrays_index(e, a.arr, items, nitems, &r);
        ex_value_clear(&a);
        ex_value_clear(&ix);
        if (rc < 0) return rc;
        ex_set_array(out, r);
        out->col = n->col;
        return 0;
    }
    if (nitems > (int)(sizeof idx / sizeof idx[0])) rc = ex_fail(n->b->col, "too many indices (%d)", nitems);
    for (int k = 0; k < nitems && rc == 0; k++) {
        const ex_value *v = &items[k];
        zc_index *x = &idx[k];
        memset(x, 0, sizeof *x);
        if (v->kind == V_NONE) {
            x->kind = ZC_IDX_NEWAXIS;
        } else if (v->kind == V_ELLIPSIS) {
            x->kind = ZC_IDX_ELLIPSIS;
        } else if (v->kind == V_SLICE) {
            x->kind = ZC_IDX_SLICE;
            int has_step;
            if (slice_part(&v->items[0], &x->start, &x->has_start) < 0 ||
                slice_part(&v->items[1], &x->stop, &x->has_stop) < 0 ||
                slice_part(&v->items[2], &x->step, &has_step) < 0) {
                rc = -1;
                break;
            }
            if (!has_step) x->step = 1;
            if (x->step == 0) rc = ex_fail(v->items[2].col, "slice step cannot be zero");
        } else if (v->kind == V_NUM && v->is_int && !v->is_bool) {
            x->kind = ZC_IDX_INT;
            x->index = v->i;
        } else if (v->kind == V_ARRAY || (v->kind == V_TUPLE && v->n > 0)) { /* placed after the loop */
            adv = k;
            x->kind = ZC_IDX_SLICE;
            x->step = 1;
        } else {
            rc = ex_fail(v->col, "an index must be a slice, an integer, None or ..., not %s", ex_kind_name(v));
        }
    }
    zc_array *base = a.arr, *taken = NULL;
    int mask = 0;
    if (rc == 0 && adv >= 0 && (rc = ex_array_index(e, base, idx, nitems, adv, &items[adv], &taken, &mask)) == 0)
        base = taken;
    if (rc == 0 && mask) { /* x[mask]: the whole subscript */
        ex_value_clear(&a);
        ex_value_clear(&ix);
        ex_set_array(out, taken);
        out->col = n->col;
        return 0;
    }
    if (rc == 0) {
        zc_array *r;
        int zrc = zc_getitem(base, idx, nitems, &r);
        if (zrc < 0) {
            rc = ex_fail_zc(e, zrc, n->b->col, NULL);
        } else {
            memset(out, 0, sizeof *out);
            out->kind = V_ARRAY;
            out->arr = r;
            out->col = n->col;
        }
    }
    zc_array_release(taken);
    ex_value_clear(&a);
    ex_value_clear(&ix);
    return rc;
}

static int eval_tuple(ex_ctx *e, const ex_node *n, ex_value *out)
{
    memset(out, 0, sizeof *out);
    out->kind = V_TUPLE;
    out->col = n->col;
    if (n->nitems && !(out->items = calloc((size_t)n->nitems, sizeof *out->items)))
        return cli_seterr("out of memory");
    for (int i = 0; i < n->nitems; i++) {
        if (ex_eval_node(e, n->items[i], &out->items[i]) < 0) {
            ex_value_clear(out);
            return -1;
        }
        out->n = i + 1;
    }
    return 0;
}

static int eval_slice(ex_ctx *e, const ex_node *n, ex_value *out)
{
    memset(out, 0, sizeof *out);
    out->kind = V_SLICE;
    out->col = n->col;
    if (!(out->items = calloc(3, sizeof *out->items))) return cli_seterr("out of memory");
    out->n = 3;
    const ex_node *parts[3] = {n->a, n->b, n->c};
    for (int k = 0; k < 3; k++) {
        if (!parts[k]) {
            out->items[k].kind = V_NONE;
            out->items[k].col = n->col;
        } else if (ex_eval_node(e, parts[k], &out->items[k]) < 0) {
            ex_value_clear(out);
            return -1;
        }
    }
    return 0;
}

/* x.T (all axes reversed, as NumPy) and x.mT (the last two swapped) */
static int eval_transpose_attr(ex_ctx *e, const ex_node *n, ex_value *out)
{
    ex_value a;
    if (ex_eval_node(e, n->a, &a) < 0) return -1;
    if (a.kind != V_ARRAY) {
        int rc = ex_fail(n->col, "'.%s' applies to arrays, not %s", n->str, ex_kind_name(&a));
        ex_value_clear(&a);
        return rc;
    }
    ex_value args[2];
    memset(args, 0, sizeof args);
    args[0] = a;
    args[1].kind = V_NONE;
    args[1].col = n->col;
    static const ex_fdef T_DEF = {"T", "x,axes", 1, 2, ex_fn_permute, "transpose", 0};
    static const ex_fdef MT_DEF = {"mT", "x", 1, 1, ex_fn_matrix_transpose, "matrix_transpose", 0};
    int rc = !strcmp(n->str, "T") ? ex_fn_permute(e, &T_DEF, n, args, out) : ex_fn_matrix_transpose(e, &MT_DEF, n, args, out);
    if (rc == 0) out->col = n->col;
    ex_value_clear(&a);
    return rc;
}

int ex_eval_node(ex_ctx *e, const ex_node *n, ex_value *out)
{
    memset(out, 0, sizeof *out);
    out->col = n->col;
    switch (n->kind) {
    case EX_NUM:
        if (n->is_int) ex_set_int(out, n->ival, n->col);
        else ex_set_float(out, n->fval, n->col);
        return 0;
    case EX_BOOL: ex_set_bool(out, (int)n->ival, n->col); return 0;
    case EX_STR:
        out->kind = V_STR;
        out->s = n->str;
        return 0;
    case EX_NONE: out->kind = V_NONE; return 0;
    case EX_ELLIPSIS: out->kind = V_ELLIPSIS; return 0;
    case EX_NAME: return eval_name(e, n, out);
    case EX_TUPLE: return eval_tuple(e, n, out);
    case EX_SLICE: return eval_slice(e, n, out);
    case EX_CALL: return ex_eval_call(e, n, out);
    case EX_SUBSCRIPT: return eval_subscript(e, n, out);
    case EX_UNARY: return eval_unary(e, n, out);
    case EX_BINARY: return eval_binary(e, n, out);
    case EX_ATTR:
        if (!strcmp(n->str, "T") || !strcmp(n->str, "mT")) return eval_transpose_attr(e, n, out);
        if (n->a->kind == EX_NAME && (!strcmp(n->a->str, "random") || !strcmp(n->a->str, "np")))
            return ex_fail(n->col, "'%s.%s' is a function: call it", n->a->str, n->str);
        return ex_fail(n->col, "attribute access ('.%s') is not supported", n->str);
    }
    return ex_fail(n->col, "unsupported expression");
}

int ex_eval(const ex_tree *t, const ex_binding *vars, int nvars, zc_array **out, int *status)
{
    *out = NULL;
    if (status) *status = 0;
    ex_ctx e = {vars, nvars, 0};
    const ex_node *root = ex_root(t);
    ex_value v;
    int rc = ex_eval_node(&e, root, &v);
    if (rc == 0) {
        if (v.kind == V_ARRAY) {
            *out = v.arr;
            v.kind = V_NONE;
        } else if (v.kind == V_NUM) {
            /* a Python number: a 0-d array of its default dtype */
            int zrc = zc_full(0, NULL, NULL, ex_default_dtype(&v), ex_num_f(&v), out);
            if (zrc < 0) rc = ex_fail_zc(&e, zrc, root->col, "full");
        } else {
            if (v.kind == V_TUPLE)
                rc = ex_fail(root->col, "the expression gives a tuple of %d values, not an array: index it, as in svd(a)[1]",
                          v.n);
            else
                rc = ex_fail(root->col, "the expression gives %s, not an array", ex_kind_name(&v));
        }
        ex_value_clear(&v);
    }
    if (status) *status = e.status;
    return rc;
}
