/* tools/expr_fn_fft.c — handlers of the fft extension (also as fft.*): n=,
 * axis=/axes=, s=, norm="backward"|"ortho"|"forward"; fftfreq, fftshift. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

static int fft_norm(const ex_value *a, const char **norm)
{
    *norm = NULL;
    if (a->kind == V_NONE) return 0;
    if (a->kind != V_STR) return ex_fail(a->col, "norm must be a string (\"backward\", \"ortho\" or \"forward\"), got %s", ex_kind_name(a));
    *norm = a->s;
    return 0;
}

int ex_fn_fft(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    static const struct { const char *name; int (*fn)(zc_array *, int64_t, int, const char *, zc_array **); } T[] = {
        {"fft", zc_fft_fft}, {"ifft", zc_fft_ifft}, {"rfft", zc_fft_rfft},
        {"irfft", zc_fft_irfft}, {"hfft", zc_fft_hfft}, {"ihfft", zc_fft_ihfft}};
    zc_array *x;
    if (ex_as_array(e, &args[0], "x", &x) < 0) return -1;
    int64_t n = -1, axis = -1;
    const char *norm;
    int rc = 0;
    if (args[1].kind != V_NONE && (rc = ex_as_int(&args[1], "n", &n)) == 0 && n < 1)
        rc = ex_fail(args[1].col, "%s(): n must be >= 1 (got %lld)", f->api, (long long)n);
    if (rc == 0 && args[2].kind != V_NONE) rc = ex_as_int(&args[2], "axis", &axis);
    if (rc == 0 && (axis < INT32_MIN || axis > INT32_MAX)) rc = ex_fail(args[2].col, "axis %lld is out of range", (long long)axis);
    if (rc == 0) rc = fft_norm(&args[3], &norm);
    if (rc < 0) {
        zc_array_release(x);
        return -1;
    }
    zc_array *r = NULL;
    for (size_t k = 0; k < sizeof T / sizeof T[0]; k++)
        if (!strcmp(T[k].name, f->api)) rc = T[k].fn(x, n, (int)axis, norm, &r);
    zc_array_release(x);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->api);
    return ex_set_array(out, r);
}

int ex_fn_fftn(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    zc_array *x;
    if (ex_as_array(e, &args[0], "x", &x) < 0) return -1;
    int64_t s[ZC_MAX_DIMS], ax64[ZC_MAX_DIMS];
    int ns = 0, na = 0, axes[ZC_MAX_DIMS];
    const char *norm;
    int rc = 0;
    if (args[1].kind != V_NONE) rc = ex_as_int_list(&args[1], "s", ZC_MAX_DIMS, &ns, s);
    for (int k = 0; rc == 0 && k < ns; k++)
        if (s[k] < 1 && s[k] != -1) rc = ex_fail(args[1].col, "%s(): s entries must be >= 1 (got %lld)", f->api, (long long)s[k]);
    if (rc == 0 && args[2].kind != V_NONE) rc = ex_as_int_list(&args[2], "axes", ZC_MAX_DIMS, &na, ax64);
    for (int k = 0; rc == 0 && k < na; k++) {
        if (ax64[k] < -ZC_MAX_DIMS || ax64[k] >= ZC_MAX_DIMS) rc = ex_fail(args[2].col, "axis %lld is out of range", (long long)ax64[k]);
        axes[k] = (int)ax64[k];
    }
    if (rc == 0 && args[2].kind != V_NONE && na == 0) rc = ex_fail(args[2].col, "%s(): axes is empty", f->api);
    if (rc == 0) rc = fft_norm(&args[3], &norm);
    if (rc < 0) {
        zc_array_release(x);
        return -1;
    }
    zc_array *r = NULL;
    if (!strcmp(f->api, "fftn")) rc = zc_fft_fftn(x, s, ns, axes, na, norm, &r);
    else if (!strcmp(f->api, "ifftn")) rc = zc_fft_ifftn(x, s, ns, axes, na, norm, &r);
    else if (!strcmp(f->api, "rfftn")) rc = zc_fft_rfftn(x, s, ns, axes, na, norm, &r);
    else rc = zc_fft_irfftn(x, s, ns, axes, na, norm, &r);
    zc_array_release(x);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->api);
    return ex_set_array(out, r);
}

int ex_fn_fftfreq(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    int64_t n;
    double d = 1;
    zc_dtype dt = ZC_FLOAT64;
    if (ex_as_int(&args[0], "n", &n) < 0) return -1;
    if (args[1].kind != V_NONE && ex_as_number(&args[1], "d", &d) < 0) return -1;
    if (args[2].kind != V_NONE && ex_as_dtype(&args[2], "dtype", &dt) < 0) return -1;
    zc_array *r;
    int rc = !strcmp(f->api, "fftfreq") ? zc_fft_fftfreq(n, d, dt, &r) : zc_fft_rfftfreq(n, d, dt, &r);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->api);
    return ex_set_array(out, r);
}

int ex_fn_fftshift(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    zc_array *x;
    if (ex_as_array(e, &args[0], "x", &x) < 0) return -1;
    int64_t ax64[ZC_MAX_DIMS];
    int na = 0, axes[ZC_MAX_DIMS], rc = 0;
    if (args[1].kind != V_NONE) rc = ex_as_int_list(&args[1], "axes", ZC_MAX_DIMS, &na, ax64);
    for (int k = 0; rc == 0 && k < na; k++) {
        if (ax64[k] < -ZC_MAX_DIMS || ax64[k] >= ZC_MAX_DIMS) rc = ex_fail(args[1].col, "axis %lld is out of range", (long long)ax64[k]);
        axes[k] = (int)ax64[k];
    }
    if (rc < 0) {
        zc_array_release(x);
        return -1;
    }
    zc_array *r = NULL;
    /* axes=() shifts nothing; None shifts every axis */
    if (args[1].kind != V_NONE && na == 0) {
        zc_array_retain(x);
        r = x;
    } else {
        rc = !strcmp(f->api, "fftshift") ? zc_fft_fftshift(x, axes, na, &r) : zc_fft_ifftshift(x, axes, na, &r);
    }
    zc_array_release(x);
    if (rc < 0) return ex_fail_zc(e, rc, call->col, f->api);
    return ex_set_array(out, r);
}
