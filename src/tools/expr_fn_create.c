/* tools/expr_fn_create.c — handlers of the creation functions: zeros, ones,
 * empty, full (and *_like), arange, linspace, eye, uniform, normal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

static int make_full(ex_ctx *e, const ex_fdef *f, const ex_node *call, int ndim, const int64_t *shape,
                     const int64_t *like_chunks, const ex_value *fill, const ex_value *dtv, const ex_value *chv,
                     zc_dtype like_dtype, ex_value *out)
{
    double v = f->k;
    zc_dtype dt = like_dtype != ZC_DTYPE_INVALID ? like_dtype : ZC_FLOAT64;
    if (fill) {
        if (ex_as_number(fill, "fill_value", &v) < 0) return -1;
        if (like_dtype == ZC_DTYPE_INVALID) dt = ex_default_dtype(fill);
    }
    if (dtv->kind != V_NONE && ex_as_dtype(dtv, "dtype", &dt) < 0) return -1;
    int64_t chunks[ZC_MAX_DIMS];
    int has = ex_as_chunks(chv, ndim, shape, chunks);
    if (has < 0) return -1;
    const int64_t *ch = has ? chunks : like_chunks;
    zc_array *a;
    int rc = zc_full(ndim, shape, ch, dt, v, &a);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->name);
    return ex_set_array(out, a);
}

int ex_fn_full(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    int ndim;
    int64_t shape[ZC_MAX_DIMS];
    if (ex_as_shape(&args[0], "shape", &ndim, shape) < 0) return -1;
    int is_full = !strcmp(f->api, "full");
    const ex_value *fill = is_full ? &args[1] : NULL;
    return make_full(e, f, call, ndim, shape, NULL, fill, &args[is_full ? 2 : 1], &args[is_full ? 3 : 2],
                     ZC_DTYPE_INVALID, out);
}

int ex_fn_full_like(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (args[0].kind != V_ARRAY)
        return ex_fail(args[0].col, "%s(): x must be an array, got %s", f->name, ex_kind_name(&args[0]));
    int ndim;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_dtype dt;
    if (ex_array_info(e, &args[0], &ndim, shape, chunks, &dt) < 0) return -1;
    int is_full = !strcmp(f->api, "full_like");
    const ex_value *fill = is_full ? &args[1] : NULL;
    return make_full(e, f, call, ndim, shape, chunks, fill, &args[is_full ? 2 : 1], &args[is_full ? 3 : 2], dt,
                     out);
}

/* A 1-D chunk: None (0: automatic), an integer, or a 1-tuple. */
static int chunk_1d(const ex_value *v, int64_t n, int64_t *chunk)
{
    int64_t shape = n, ch[1];
    int has = ex_as_chunks(v, 1, &shape, ch);
    if (has < 0) return -1;
    *chunk = has ? ch[0] : 0;
    return 0;
}

int ex_fn_arange(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    double start = 0, stop = 0, step = 1;
    int all_int = 1;
    for (int k = 0; k < 3; k++) {
        if (args[k].kind == V_NONE) continue;
        double x;
        if (ex_as_number(&args[k], k == 0 ? "start" : k == 1 ? "stop" : "step", &x) < 0) return -1;
        all_int &= args[k].is_int;
    }
    if (args[1].kind == V_NONE) { /* arange(stop) */
        stop = ex_num_f(&args[0]);
    } else {
        start = ex_num_f(&args[0]);
        stop = ex_num_f(&args[1]);
    }
    if (args[2].kind != V_NONE) step = ex_num_f(&args[2]);
    if (step == 0) return ex_fail(args[2].col, "arange(): step must not be zero");
    zc_dtype dt = all_int ? ZC_INT64 : ZC_FLOAT64;
    if (args[3].kind != V_NONE && ex_as_dtype(&args[3], "dtype", &dt) < 0) return -1;
    double len = ceil((stop - start) / step);
    int64_t chunk;
    if (chunk_1d(&args[4], len > 0 && len < 9e18 ? (int64_t)len : 0, &chunk) < 0) return -1;
    zc_array *a;
    int rc = zc_arange(start, stop, step, dt, chunk, &a);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, "arange");
    return ex_set_array(out, a);
}

int ex_fn_linspace(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    double start = 0, stop = 0;
    int64_t num = 50;
    int endpoint = 1;
    if (ex_as_number(&args[0], "start", &start) < 0 || ex_as_number(&args[1], "stop", &stop) < 0) return -1;
    if (args[2].kind != V_NONE && ex_as_int(&args[2], "num", &num) < 0) return -1;
    if (num < 0) return ex_fail(args[2].col, "linspace(): num must be >= 0, got %lld", (long long)num);
    if (args[3].kind != V_NONE && ex_as_bool(&args[3], "endpoint", &endpoint) < 0) return -1;
    zc_dtype dt = ZC_FLOAT64;
    if (args[4].kind != V_NONE && ex_as_dtype(&args[4], "dtype", &dt) < 0) return -1;
    int64_t chunk;
    if (chunk_1d(&args[5], num, &chunk) < 0) return -1;
    zc_array *a;
    int rc = zc_linspace(start, stop, num, endpoint, dt, chunk, &a);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, "linspace");
    return ex_set_array(out, a);
}

int ex_fn_eye(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    int64_t n, m = -1, k = 0;
    if (ex_as_int(&args[0], "n_rows", &n) < 0) return -1;
    if (n < 0) return ex_fail(args[0].col, "eye(): n_rows must be >= 0");
    if (args[1].kind != V_NONE) {
        if (ex_as_int(&args[1], "n_cols", &m) < 0) return -1;
        if (m < 0) return ex_fail(args[1].col, "eye(): n_cols must be >= 0");
    }
    if (args[2].kind != V_NONE && ex_as_int(&args[2], "k", &k) < 0) return -1;
    zc_dtype dt = ZC_FLOAT64;
    if (args[3].kind != V_NONE && ex_as_dtype(&args[3], "dtype", &dt) < 0) return -1;
    int64_t shape[2] = {n, m >= 0 ? m : n}, chunks[2];
    int has = ex_as_chunks(&args[4], 2, shape, chunks);
    if (has < 0) return -1;
    if (m == 0 || n == 0) {
        /* zc_eye reads m <= 0 as "same as n": an empty eye is a full of zeros */
        zc_array *a;
        int rc = zc_full(2, shape, has ? chunks : NULL, dt, 0, &a);
        if (rc < 0) return ex_fail_zc(e, rc, call->col, "eye");
        return ex_set_array(out, a);
    }
    zc_array *a;
    int rc = zc_eye(n, shape[1], k, dt, has ? chunks : NULL, &a);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, "eye");
    return ex_set_array(out, a);
}

int ex_fn_random(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    int ndim;
    int64_t shape[ZC_MAX_DIMS];
    if (ex_as_shape(&args[0], "shape", &ndim, shape) < 0) return -1;
    int normal = !strcmp(f->api, "normal");
    double p1 = 0, p2 = 1;
    if (args[1].kind != V_NONE && ex_as_number(&args[1], normal ? "loc" : "low", &p1) < 0) return -1;
    if (args[2].kind != V_NONE && ex_as_number(&args[2], normal ? "scale" : "high", &p2) < 0) return -1;
    if (normal && p2 < 0) return ex_fail(args[2].col, "normal(): scale must be >= 0");
    int64_t seed = 0;
    if (args[3].kind != V_NONE) {
        if (ex_as_int(&args[3], "seed", &seed) < 0) return -1;
        if (seed < 0) return ex_fail(args[3].col, "seed must be >= 0");
    }
    zc_dtype dt = ZC_FLOAT64;
    if (args[4].kind != V_NONE && ex_as_dtype(&args[4], "dtype", &dt) < 0) return -1;
    int64_t chunks[ZC_MAX_DIMS];
    int has = ex_as_chunks(&args[5], ndim, shape, chunks);
    if (has < 0) return -1;
    zc_array *a;
    int rc = normal ? zc_random_normal((uint64_t)seed, ndim, shape, has ? chunks : NULL, dt, p1, p2, &a)
                    : zc_random_uniform((uint64_t)seed, ndim, shape, has ? chunks : NULL, dt, p1, p2, &a);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->api);
    return ex_set_array(out, a);
}
