/* tools/expr_fn_linalg.c — handlers of linear algebra (matmul, tensordot,
 * vecdot, outer) and of decompositions and solvers (qr, svd, svdvals,
 * svd_compressed, solve, cholesky, inv, det, slogdet, eigh, eigvalsh, lstsq),
 * and the rest of the linalg extension (diagonal ... pinv, composed in the library);
 * several results make a tuple, indexed: svd(a)[1]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

int ex_fn_linalg(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    /* arguments first (errors at their columns), then the library call */
    int axis = -1, n1 = 2, n2 = 2, pairs = 0, a1[ZC_MAX_DIMS], a2[ZC_MAX_DIMS];
    if (!strcmp(f->api, "vecdot") && args[2].kind != V_NONE && ex_as_axis(&args[2], "axis", 0, &axis) < 0) return -1;
    if (!strcmp(f->api, "tensordot")) { /* axes = N, or (axes1, axes2) */
        const ex_value *av = &args[2];
        if (av->kind == V_TUPLE) {
            if (av->n != 2) return ex_fail(av->col, "tensordot(): axes must be an integer or a pair of axis lists");
            if (ex_as_axes(&av->items[0], "axes", &n1, a1) < 0 || ex_as_axes(&av->items[1], "axes", &n2, a2) < 0) return -1;
            if (n1 != n2 || n1 < 0) return ex_fail(av->col, "tensordot(): the two axis lists differ in length");
            pairs = 1;
        } else if (av->kind != V_NONE) {
            int64_t k;
            if (ex_as_int(av, "axes", &k) < 0) return -1;
            if (k < 0 || k > ZC_MAX_DIMS) return ex_fail(av->col, "tensordot(): axes must be >= 0, got %lld", (long long)k);
            n1 = (int)k;
        }
    }
    zc_array *x[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (ex_as_array(e, &args[k], f->name, &x[k]) < 0) {
            zc_array_release(x[0]);
            return -1;
        }
    zc_array *a = NULL;
    int rc;
    if (!strcmp(f->api, "matmul")) rc = zc_matmul(x[0], x[1], &a);
    else if (!strcmp(f->api, "outer")) rc = zc_outer(x[0], x[1], &a);
    else if (!strcmp(f->api, "vecdot")) rc = zc_vecdot(x[0], x[1], axis, &a);
    else rc = zc_tensordot(x[0], x[1], n1, pairs ? a1 : NULL, pairs ? a2 : NULL, &a);
    zc_array_release(x[0]);
    zc_array_release(x[1]);
    return ex_lib_result(e, f, call, rc, &a, out);
}

int ex_fn_decomp(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    const char *api = f->api;
    int two = !strcmp(api, "solve") || !strcmp(api, "lstsq");
    for (int k = 0; k <= two; k++)
        if (args[k].kind != V_ARRAY)
            return ex_fail(args[k].col, "%s(): %s must be an array, got %s", f->name, k ? "b" : "a", ex_kind_name(&args[k]));
    zc_array *a = args[0].arr, *r[4] = {NULL, NULL, NULL, NULL};
    int n = 1, rc;
    if (!strcmp(api, "qr")) {
        int complete = 0;
        if (args[1].kind != V_NONE) {
            if (args[1].kind != V_STR || (strcmp(args[1].s, "reduced") && strcmp(args[1].s, "complete")))
                return ex_fail(args[1].col, "qr(): mode must be \"reduced\" or \"complete\"");
            complete = !strcmp(args[1].s, "complete");
        }
        rc = complete ? zc_qr_complete(a, &r[0], &r[1]) : zc_qr(a, &r[0], &r[1]);
        n = 2;
    } else if (!strcmp(api, "svd")) {
        int full = 0; /* eval's default since it had svd (the array API's is True: U of a tall A would be m×m) */
        if (args[1].kind != V_NONE && ex_as_bool(&args[1], "full_matrices", &full) < 0) return -1;
        rc = full ? zc_svd_full(a, &r[0], &r[1], &r[2]) : zc_svd(a, &r[0], &r[1], &r[2]);
        n = 3;
    } else if (!strcmp(api, "svdvals")) {
        rc = zc_svdvals(a, &r[0]);
    } else if (!strcmp(api, "svd_compressed")) {
        int64_t k, over = 10, power = 0, seed = 0;
        if (ex_as_int(&args[1], "k", &k) < 0) return -1;
        if (args[2].kind != V_NONE && ex_as_int(&args[2], "n_oversamples", &over) < 0) return -1;
        if (args[3].kind != V_NONE && ex_as_int(&args[3], "n_power_iter", &power) < 0) return -1;
        if (args[4].kind != V_NONE && ex_as_int(&args[4], "seed", &seed) < 0) return -1;
        if (power < 0 || power > 1000) return ex_fail(args[3].col, "svd_compressed(): n_power_iter must be in 0..1000");
        if (seed < 0) return ex_fail(args[4].col, "seed must be >= 0");
        rc = zc_svd_compressed(a, k, over, (int)power, (uint64_t)seed, &r[0], &r[1], &r[2]);
        n = 3;
    } else if (!strcmp(api, "solve")) {
        rc = zc_solve(a, args[1].arr, &r[0]);
    } else if (!strcmp(api, "cholesky")) {
        int upper = 0;
        if (args[1].kind != V_NONE && ex_as_bool(&args[1], "upper", &upper) < 0) return -1;
        rc = zc_cholesky(a, &r[0]);
        if (rc == 0 && upper) {
            zc_array *l = r[0];
            rc = zc_matrix_transpose(l, &r[0]);
            zc_array_release(l);
        }
    } else if (!strcmp(api, "inv")) {
        rc = zc_inv(a, &r[0]);
    } else if (!strcmp(api, "det")) {
        rc = zc_det(a, &r[0]);
    } else if (!strcmp(api, "slogdet")) {
        rc = zc_slogdet(a, &r[0], &r[1]);
        n = 2;
    } else if (!strcmp(api, "eigh")) {
        rc = zc_eigh(a, &r[0], &r[1]);
        n = 2;
    } else if (!strcmp(api, "eigvalsh")) {
        rc = zc_eigh(a, &r[0], NULL);
    } else {
        if (args[2].kind != V_NONE)
            return ex_fail(args[2].col, "lstsq(): rcond is fixed at eps * max(M, N) (NumPy's default); leave it out");
        rc = zc_lstsq(a, args[1].arr, &r[0], &r[1], &r[2], &r[3]);
        n = 4;
    }
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
    if (n == 1) return ex_set_array(out, r[0]);
    return ex_set_tuple(out, r, n, call->col);
}

/* diagonal, trace, vector_norm, matrix_norm, cross, matrix_power, matrix_rank,
 * pinv: arguments checked here, the work the library's (zc_diagonal ...) */
int ex_fn_linalg_ext(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    const char *api = f->api;
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    zc_array *x = args[0].arr, *r = NULL, *t = NULL;
    int rc;
    if (!strcmp(api, "diagonal") || !strcmp(api, "trace")) {
        int64_t off = 0;
        zc_dtype dt = ZC_BOOL;
        if (args[1].kind != V_NONE && ex_as_int(&args[1], "offset", &off) < 0) return -1;
        if (!strcmp(api, "trace") && args[2].kind != V_NONE && ex_as_dtype(&args[2], "dtype", &dt) < 0) return -1;
        if (!strcmp(api, "diagonal") || dt == ZC_BOOL) {
            rc = !strcmp(api, "diagonal") ? zc_diagonal(x, off, &r) : zc_trace(x, off, &r);
        } else { /* trace(x, dtype=): the diagonal summed in that dtype */
            zc_array *d = NULL;
            if ((rc = zc_diagonal(x, off, &d)) == 0 && (rc = zc_astype(d, dt, &t)) == 0) {
                int ax;
                if ((rc = zc_array_info(t, &ax, NULL, NULL, NULL)) == 0) {
                    ax -= 1;
                    rc = zc_reduce("sum", t, &ax, 1, 0, 0, &r);
                }
            }
            zc_array_release(d);
            zc_array_release(t);
        }
    } else if (!strcmp(api, "vector_norm") || !strcmp(api, "matrix_norm")) {
        int vec = api[0] == 'v', keepdims = 0, n = 0, axes[ZC_MAX_DIMS];
        const ex_value *kv = &args[vec ? 2 : 1], *ov = &args[vec ? 3 : 2];
        if (vec && ex_as_axes(&args[1], "axis", &n, axes) < 0) return -1;
        if (vec && n == 0) /* the library's naxes 0 means all axes */
            return ex_fail(args[1].col, "vector_norm(): axis=() (no axis reduced) is not supported; use abs(x)");
        if (kv->kind != V_NONE && ex_as_bool(kv, "keepdims", &keepdims) < 0) return -1;
        double ord = 2;
        char ords[16] = "fro";
        if (ov->kind == V_STR && !vec) snprintf(ords, sizeof ords, "%s", ov->s);
        else if (ov->kind != V_NONE) {
            if (ex_as_number(ov, "ord", &ord) < 0) return -1;
            if (!vec) {
                if (isinf(ord)) snprintf(ords, sizeof ords, "%sinf", ord < 0 ? "-" : "");
                else if (ord == 1 || ord == -1 || ord == 2 || ord == -2) snprintf(ords, sizeof ords, "%g", ord);
                else return ex_fail(ov->col, "matrix_norm(): ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf");
            }
        }
        rc = vec ? zc_vector_norm(x, axes, n < 0 ? 0 : n, keepdims, ord, &r) : zc_matrix_norm(x, ords, keepdims, &r);
    } else if (!strcmp(api, "cross")) {
        int axis = -1;
        if (args[2].kind != V_NONE && ex_as_axis(&args[2], "axis", 0, &axis) < 0) return -1;
        if (ex_as_array(e, &args[1], "x2", &t) < 0) return -1;
        rc = zc_cross(x, t, axis, &r);
        zc_array_release(t);
    } else if (!strcmp(api, "matrix_power")) {
        int64_t n;
        if (ex_as_int(&args[1], "n", &n) < 0) return -1;
        rc = zc_matrix_power(x, n, &r);
    } else { /* matrix_rank, pinv */
        double rtol = -1;
        if (args[1].kind != V_NONE && ex_as_number(&args[1], "rtol", &rtol) < 0) return -1;
        if (args[1].kind != V_NONE && !(rtol >= 0)) return ex_fail(args[1].col, "%s(): rtol must be >= 0", f->name);
        rc = api[0] == 'p' ? zc_pinv(x, rtol, &r) : zc_matrix_rank(x, rtol, &r);
    }
    return ex_lib_result(e, f, call, rc, &r, out);
}
