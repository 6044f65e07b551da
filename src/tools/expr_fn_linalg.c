/* tools/expr_fn_linalg.c — handlers of linear algebra (matmul, tensordot,
 * vecdot, outer) and of decompositions and solvers (qr, svd, svdvals,
 * svd_compressed, solve, cholesky, inv, det, slogdet, eigh, eigvalsh, lstsq);
 * several results make a tuple, indexed: svd(a)[1]. */
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
        if (args[1].kind != V_NONE && (args[1].kind != V_STR || strcmp(args[1].s, "reduced")))
            return ex_fail(args[1].col, "qr(): only mode=\"reduced\" is supported");
        rc = zc_qr(a, &r[0], &r[1]);
        n = 2;
    } else if (!strcmp(api, "svd")) {
        int full = 0;
        if (args[1].kind != V_NONE && ex_as_bool(&args[1], "full_matrices", &full) < 0) return -1;
        if (full) return ex_fail(args[1].col, "svd(): full_matrices=True is not supported (use full_matrices=False)");
        rc = zc_svd(a, &r[0], &r[1], &r[2]);
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
