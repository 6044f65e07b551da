/* tools/expr_eval.c — evaluation of a parsed `zcube eval` expression into a
 * lazy array (include/zcube.h section 9). Nothing is computed here: every
 * array operation only records a node of the plan.
 *
 * Values during evaluation are arrays (one reference each), Python numbers
 * (folded with Python's semantics while both operands are numbers, so
 * `axis=-1` or `2**10` stay numbers; next to an array a number becomes a
 * "weak" zc_scalar), strings, dtypes (bare names like float32), None, ...,
 * slices and tuples. Functions are a table: each entry names its parameters
 * (a Python-like signature) and a handler; the binder matches positional and
 * keyword arguments and reports what is wrong at the argument's column.
 * Operators map to the array API's names (expr.c, ex_op_function). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr.h"

/* ------------------------------------------------------------ values */

typedef enum { V_NONE, V_NUM, V_STR, V_ARRAY, V_DTYPE, V_TUPLE, V_ELLIPSIS, V_SLICE } vkind;

typedef struct value value;
struct value {
    vkind kind;
    int col;             /* column of the expression that made it */
    int is_int, is_bool; /* V_NUM: Python int (i) / bool (i = 0/1) / float (f) */
    int64_t i;
    double f;
    const char *s;       /* V_STR (points into the tree) */
    zc_dtype dtype;      /* V_DTYPE */
    zc_array *arr;       /* V_ARRAY: one reference */
    int n;               /* V_TUPLE items / V_SLICE: 3 parts (kind V_NONE when omitted) */
    value *items;
};

static void value_clear(value *v)
{
    if (v->kind == V_ARRAY) zc_array_release(v->arr);
    if (v->kind == V_TUPLE || v->kind == V_SLICE) {
        for (int k = 0; k < v->n; k++) value_clear(&v->items[k]);
        free(v->items);
    }
    memset(v, 0, sizeof *v);
}

static const char *kind_name(const value *v)
{
    switch (v->kind) {
    case V_NONE: return "None";
    case V_NUM: return v->is_bool ? "a bool" : v->is_int ? "an integer" : "a float";
    case V_STR: return "a string";
    case V_ARRAY: return "an array";
    case V_DTYPE: return "a dtype";
    case V_TUPLE: return "a tuple";
    case V_ELLIPSIS: return "...";
    case V_SLICE: return "a slice";
    }
    return "?";
}

static double num_f(const value *v) { return v->is_int ? (double)v->i : v->f; }

static void set_int(value *v, int64_t i, int col)
{
    memset(v, 0, sizeof *v);
    v->kind = V_NUM;
    v->is_int = 1;
    v->i = i;
    v->col = col;
}

static void set_bool(value *v, int b, int col)
{
    set_int(v, b != 0, col);
    v->is_bool = 1;
}

static void set_float(value *v, double f, int col)
{
    memset(v, 0, sizeof *v);
    v->kind = V_NUM;
    v->f = f;
    v->col = col;
}

/* ------------------------------------------------------------ context and errors */

typedef struct {
    const ex_binding *vars;
    int nvars;
    int status; /* library status of the failure, 0 if none */
} ev;

static int fail(int col, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int col, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cli_seterr("at column %d: %s", col, msg);
}

/* A failed library call: its message, at the column of the expression. */
static int fail_zc(ev *e, int rc, int col, const char *what)
{
    e->status = rc;
    const char *m = zc_errmsg();
    if (!*m) m = zc_strerror(rc);
    if (what && !strstr(m, what)) return fail(col, "%s: %s", what, m);
    return fail(col, "%s", m);
}

/* ------------------------------------------------------------ function table */

typedef struct fdef fdef;
typedef int (*handler)(ev *e, const fdef *f, const ex_node *call, value *args, value *out);

#define MAXPARAMS 8
struct fdef {
    const char *name;   /* name in expressions ("random.uniform" for a dotted one) */
    const char *params; /* "x,axis,keepdims": in order; "a|b" = b is another keyword for a */
    int nreq;           /* leading parameters that are required */
    int npos;           /* how many may be given positionally */
    handler fn;
    const char *api;    /* elementwise: the array API name; else a detail for the handler */
    double k;           /* handler detail (fill value of zeros/ones) */
};

/* names of the array API (and of NumPy) that zcube does not offer yet */
static const char *const UNAVAILABLE[] = {
    "dot", "einsum", "inner", "broadcast_arrays", "unstack", "take_along_axis", "sort", "argsort", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "nonzero", "searchsorted", "meshgrid", "result_type",
    "can_cast", "finfo", "iinfo", "asarray", "from_dlpack", "isdtype", "eigh", "det",
    "norm", "vector_norm", "matrix_norm", "trace", "diagonal", "pinv", "median", "quantile", "percentile",
    "average", "nanmean", "nansum",
};

/* NumPy spellings accepted for array API functions */
static const char *const ALIASES[][2] = {
    {"absolute", "abs"},        {"arccos", "acos"},     {"arccosh", "acosh"}, {"arcsin", "asin"},
    {"arcsinh", "asinh"},       {"arctan", "atan"},     {"arctanh", "atanh"}, {"arctan2", "atan2"},
    {"power", "pow"},           {"conjugate", "conj"},  {"invert", "bitwise_invert"},
    {"left_shift", "bitwise_left_shift"}, {"right_shift", "bitwise_right_shift"},
    {"true_divide", "divide"},  {"mod", "remainder"},   {"fmax", NULL},       {"fmin", NULL},
};

static const char *const UNARY_EW[] = {
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj", "cos", "cosh",
    "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10",
    "logical_not", "negative", "positive", "real", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt",
    "tan", "tanh", "trunc", "reciprocal"};
static const char *const BINARY_EW[] = {
    "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot", "less", "less_equal",
    "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "nextafter",
    "not_equal", "pow", "remainder", "subtract"};

static int h_unary(ev *, const fdef *, const ex_node *, value *, value *);
static int h_binary(ev *, const fdef *, const ex_node *, value *, value *);
static int h_where(ev *, const fdef *, const ex_node *, value *, value *);
static int h_clip(ev *, const fdef *, const ex_node *, value *, value *);
static int h_reduce(ev *, const fdef *, const ex_node *, value *, value *);
static int h_full(ev *, const fdef *, const ex_node *, value *, value *);
static int h_full_like(ev *, const fdef *, const ex_node *, value *, value *);
static int h_arange(ev *, const fdef *, const ex_node *, value *, value *);
static int h_linspace(ev *, const fdef *, const ex_node *, value *, value *);
static int h_eye(ev *, const fdef *, const ex_node *, value *, value *);
static int h_random(ev *, const fdef *, const ex_node *, value *, value *);
static int h_astype(ev *, const fdef *, const ex_node *, value *, value *);
static int h_rechunk(ev *, const fdef *, const ex_node *, value *, value *);
static int h_reshape(ev *, const fdef *, const ex_node *, value *, value *);
static int h_permute(ev *, const fdef *, const ex_node *, value *, value *);
static int h_moveaxis(ev *, const fdef *, const ex_node *, value *, value *);
static int h_matrix_transpose(ev *, const fdef *, const ex_node *, value *, value *);
static int h_expand_dims(ev *, const fdef *, const ex_node *, value *, value *);
static int h_squeeze(ev *, const fdef *, const ex_node *, value *, value *);
static int h_broadcast_to(ev *, const fdef *, const ex_node *, value *, value *);
static int h_join(ev *, const fdef *, const ex_node *, value *, value *);
static int h_flip(ev *, const fdef *, const ex_node *, value *, value *);
static int h_roll(ev *, const fdef *, const ex_node *, value *, value *);
static int h_repeat(ev *, const fdef *, const ex_node *, value *, value *);
static int h_tile(ev *, const fdef *, const ex_node *, value *, value *);
static int h_take(ev *, const fdef *, const ex_node *, value *, value *);
static int h_diff(ev *, const fdef *, const ex_node *, value *, value *);
static int h_tri(ev *, const fdef *, const ex_node *, value *, value *);
static int h_cumulative(ev *, const fdef *, const ex_node *, value *, value *);
static int h_linalg(ev *, const fdef *, const ex_node *, value *, value *);
static int h_decomp(ev *, const fdef *, const ex_node *, value *, value *);
static int h_fft(ev *, const fdef *, const ex_node *, value *, value *);
static int h_fftn(ev *, const fdef *, const ex_node *, value *, value *);
static int h_fftfreq(ev *, const fdef *, const ex_node *, value *, value *);
static int h_fftshift(ev *, const fdef *, const ex_node *, value *, value *);

#define RED_AXIS_PARAMS "x,axis,keepdims"
static const fdef FUNCS[] = {
    /* reductions (api: the zc_reduce name) */
    {"sum", RED_AXIS_PARAMS ",dtype", 1, 2, h_reduce, "sum", 0},
    {"prod", RED_AXIS_PARAMS ",dtype", 1, 2, h_reduce, "prod", 0},
    {"mean", RED_AXIS_PARAMS ",dtype", 1, 2, h_reduce, "mean", 0},
    {"min", RED_AXIS_PARAMS, 1, 2, h_reduce, "min", 0},
    {"max", RED_AXIS_PARAMS, 1, 2, h_reduce, "max", 0},
    {"amin", RED_AXIS_PARAMS, 1, 2, h_reduce, "min", 0},
    {"amax", RED_AXIS_PARAMS, 1, 2, h_reduce, "max", 0},
    {"var", RED_AXIS_PARAMS ",correction|ddof", 1, 2, h_reduce, "var", 0},
    {"std", RED_AXIS_PARAMS ",correction|ddof", 1, 2, h_reduce, "std", 0},
    {"argmin", RED_AXIS_PARAMS, 1, 2, h_reduce, "argmin", 0},
    {"argmax", RED_AXIS_PARAMS, 1, 2, h_reduce, "argmax", 0},
    {"any", RED_AXIS_PARAMS, 1, 2, h_reduce, "any", 0},
    {"all", RED_AXIS_PARAMS, 1, 2, h_reduce, "all", 0},
    {"count_nonzero", RED_AXIS_PARAMS, 1, 2, h_reduce, "count_nonzero", 0},
    /* elementwise beyond the 1- and 2-argument tables */
    {"where", "condition,x1,x2", 3, 3, h_where, "where", 0},
    {"clip", "x,min|a_min,max|a_max", 1, 3, h_clip, "clip", 0},
    /* creation */
    {"zeros", "shape,dtype,chunks", 1, 2, h_full, "zeros", 0},
    {"ones", "shape,dtype,chunks", 1, 2, h_full, "ones", 1},
    {"empty", "shape,dtype,chunks", 1, 2, h_full, "empty", 0},
    {"full", "shape,fill_value,dtype,chunks", 2, 3, h_full, "full", 0},
    {"zeros_like", "x,dtype,chunks", 1, 2, h_full_like, "zeros_like", 0},
    {"ones_like", "x,dtype,chunks", 1, 2, h_full_like, "ones_like", 1},
    {"empty_like", "x,dtype,chunks", 1, 2, h_full_like, "empty_like", 0},
    {"full_like", "x,fill_value,dtype,chunks", 2, 3, h_full_like, "full_like", 0},
    {"arange", "start,stop,step,dtype,chunks", 1, 4, h_arange, "arange", 0},
    {"linspace", "start,stop,num,endpoint,dtype,chunks", 2, 3, h_linspace, "linspace", 0},
    {"eye", "n_rows|N,n_cols|M,k,dtype,chunks", 1, 3, h_eye, "eye", 0},
    {"uniform", "shape|size,low,high,seed,dtype,chunks", 1, 3, h_random, "uniform", 0},
    {"random.uniform", "shape|size,low,high,seed,dtype,chunks", 1, 3, h_random, "uniform", 0},
    {"normal", "shape|size,loc|mean,scale|std,seed,dtype,chunks", 1, 3, h_random, "normal", 0},
    {"random.normal", "shape|size,loc|mean,scale|std,seed,dtype,chunks", 1, 3, h_random, "normal", 0},
    /* data types and chunks */
    {"astype", "x,dtype", 2, 2, h_astype, "astype", 0},
    {"rechunk", "x,chunks", 2, 2, h_rechunk, "rechunk", 0},
    /* manipulation and cumulative (api: the function, or the one an alias stands for) */
    {"reshape", "x,shape|newshape,copy", 2, 2, h_reshape, "reshape", 0},
    {"permute_dims", "x,axes", 2, 2, h_permute, "permute_dims", 0},
    {"transpose", "x,axes", 1, 2, h_permute, "transpose", 0},
    {"moveaxis", "x,source,destination", 3, 3, h_moveaxis, "moveaxis", 0},
    {"matrix_transpose", "x", 1, 1, h_matrix_transpose, "matrix_transpose", 0},
    {"expand_dims", "x,axis", 1, 2, h_expand_dims, "expand_dims", 0},
    {"squeeze", "x,axis", 1, 2, h_squeeze, "squeeze", 0},
    {"broadcast_to", "x,shape", 2, 2, h_broadcast_to, "broadcast_to", 0},
    {"concat", "arrays,axis", 1, 2, h_join, "concat", 0},
    {"concatenate", "arrays,axis", 1, 2, h_join, "concat", 0},
    {"stack", "arrays,axis", 1, 2, h_join, "stack", 0},
    {"flip", "x,axis", 1, 2, h_flip, "flip", 0},
    {"roll", "x,shift,axis", 2, 3, h_roll, "roll", 0},
    {"repeat", "x,repeats,axis", 2, 3, h_repeat, "repeat", 0},
    {"tile", "x,repetitions|reps", 2, 2, h_tile, "tile", 0},
    {"take", "x,indices,axis", 2, 3, h_take, "take", 0},
    {"diff", "x,n,axis,prepend,append", 1, 3, h_diff, "diff", 0},
    {"tril", "x,k", 1, 2, h_tri, "tril", 0},
    {"triu", "x,k", 1, 2, h_tri, "triu", 0},
    {"cumulative_sum", "x,axis,dtype,include_initial", 1, 2, h_cumulative, "cumulative_sum", 0},
    {"cumulative_prod", "x,axis,dtype,include_initial", 1, 2, h_cumulative, "cumulative_prod", 0},
    {"cumsum", "x,axis,dtype,include_initial", 1, 2, h_cumulative, "cumulative_sum", 0},
    {"cumprod", "x,axis,dtype,include_initial", 1, 2, h_cumulative, "cumulative_prod", 0},
    /* linear algebra (the operator @ is matmul) */
    {"matmul", "x1,x2", 2, 2, h_linalg, "matmul", 0},
    {"tensordot", "x1,x2,axes", 2, 3, h_linalg, "tensordot", 0},
    {"vecdot", "x1,x2,axis", 2, 2, h_linalg, "vecdot", 0},
    {"outer", "x1,x2", 2, 2, h_linalg, "outer", 0},
    /* decompositions and solvers; several results make a tuple, indexed: svd(a)[1] */
    {"qr", "a|x,mode", 1, 2, h_decomp, "qr", 0},
    {"linalg.qr", "a|x,mode", 1, 2, h_decomp, "qr", 0},
    {"svd", "a|x,full_matrices", 1, 2, h_decomp, "svd", 0},
    {"linalg.svd", "a|x,full_matrices", 1, 2, h_decomp, "svd", 0},
    {"svdvals", "a|x", 1, 1, h_decomp, "svdvals", 0},
    {"linalg.svdvals", "a|x", 1, 1, h_decomp, "svdvals", 0},
    {"svd_compressed", "a|x,k,n_oversamples|oversamples,n_power_iter|power_iters,seed", 2, 2, h_decomp, "svd_compressed", 0},
    {"linalg.svd_compressed", "a|x,k,n_oversamples|oversamples,n_power_iter|power_iters,seed", 2, 2, h_decomp, "svd_compressed", 0},
    {"solve", "a|x1,b|x2", 2, 2, h_decomp, "solve", 0},
    {"linalg.solve", "a|x1,b|x2", 2, 2, h_decomp, "solve", 0},
    {"cholesky", "a|x,upper", 1, 1, h_decomp, "cholesky", 0},
    {"linalg.cholesky", "a|x,upper", 1, 1, h_decomp, "cholesky", 0},
    {"inv", "a|x", 1, 1, h_decomp, "inv", 0},
    {"linalg.inv", "a|x", 1, 1, h_decomp, "inv", 0},
    {"lstsq", "a,b,rcond", 2, 2, h_decomp, "lstsq", 0},
    {"linalg.lstsq", "a,b,rcond", 2, 2, h_decomp, "lstsq", 0},
    /* the fft extension (also as fft.*): n=, axis=/axes=, norm="backward"|"ortho"|"forward" */
    {"fft", "x|a,n,axis,norm", 1, 4, h_fft, "fft", 0},
    {"fft.fft", "x|a,n,axis,norm", 1, 4, h_fft, "fft", 0},
    {"ifft", "x|a,n,axis,norm", 1, 4, h_fft, "ifft", 0},
    {"fft.ifft", "x|a,n,axis,norm", 1, 4, h_fft, "ifft", 0},
    {"rfft", "x|a,n,axis,norm", 1, 4, h_fft, "rfft", 0},
    {"fft.rfft", "x|a,n,axis,norm", 1, 4, h_fft, "rfft", 0},
    {"irfft", "x|a,n,axis,norm", 1, 4, h_fft, "irfft", 0},
    {"fft.irfft", "x|a,n,axis,norm", 1, 4, h_fft, "irfft", 0},
    {"hfft", "x|a,n,axis,norm", 1, 4, h_fft, "hfft", 0},
    {"fft.hfft", "x|a,n,axis,norm", 1, 4, h_fft, "hfft", 0},
    {"ihfft", "x|a,n,axis,norm", 1, 4, h_fft, "ihfft", 0},
    {"fft.ihfft", "x|a,n,axis,norm", 1, 4, h_fft, "ihfft", 0},
    {"fftn", "x|a,s,axes,norm", 1, 4, h_fftn, "fftn", 0},
    {"fft.fftn", "x|a,s,axes,norm", 1, 4, h_fftn, "fftn", 0},
    {"ifftn", "x|a,s,axes,norm", 1, 4, h_fftn, "ifftn", 0},
    {"fft.ifftn", "x|a,s,axes,norm", 1, 4, h_fftn, "ifftn", 0},
    {"rfftn", "x|a,s,axes,norm", 1, 4, h_fftn, "rfftn", 0},
    {"fft.rfftn", "x|a,s,axes,norm", 1, 4, h_fftn, "rfftn", 0},
    {"irfftn", "x|a,s,axes,norm", 1, 4, h_fftn, "irfftn", 0},
    {"fft.irfftn", "x|a,s,axes,norm", 1, 4, h_fftn, "irfftn", 0},
    {"fftfreq", "n,d,dtype", 1, 2, h_fftfreq, "fftfreq", 0},
    {"fft.fftfreq", "n,d,dtype", 1, 2, h_fftfreq, "fftfreq", 0},
    {"rfftfreq", "n,d,dtype", 1, 2, h_fftfreq, "rfftfreq", 0},
    {"fft.rfftfreq", "n,d,dtype", 1, 2, h_fftfreq, "rfftfreq", 0},
    {"fftshift", "x,axes", 1, 2, h_fftshift, "fftshift", 0},
    {"fft.fftshift", "x,axes", 1, 2, h_fftshift, "fftshift", 0},
    {"ifftshift", "x,axes", 1, 2, h_fftshift, "ifftshift", 0},
    {"fft.ifftshift", "x,axes", 1, 2, h_fftshift, "ifftshift", 0},
};
#define NFUNCS ((int)(sizeof FUNCS / sizeof FUNCS[0]))

static const fdef UNARY_DEF = {"", "x", 1, 1, h_unary, NULL, 0};
static const fdef BINARY_DEF = {"", "x1,x2", 2, 2, h_binary, NULL, 0};

/* Look up a function: table entries, then elementwise names (via aliases).
 * `tmp` receives a definition for elementwise names. */
static const fdef *find_function(const char *name, fdef *tmp)
{
    for (int i = 0; i < NFUNCS; i++)
        if (!strcmp(FUNCS[i].name, name)) return &FUNCS[i];
    const char *api = name;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (!strcmp(ALIASES[i][0], name)) api = ALIASES[i][1];
    if (!api) return NULL;
    for (size_t i = 0; i < sizeof UNARY_EW / sizeof UNARY_EW[0]; i++)
        if (!strcmp(UNARY_EW[i], api)) {
            *tmp = UNARY_DEF;
            tmp->name = name;
            tmp->api = UNARY_EW[i];
            return tmp;
        }
    for (size_t i = 0; i < sizeof BINARY_EW / sizeof BINARY_EW[0]; i++)
        if (!strcmp(BINARY_EW[i], api)) {
            *tmp = BINARY_DEF;
            tmp->name = name;
            tmp->api = BINARY_EW[i];
            return tmp;
        }
    return NULL;
}

static int is_unavailable(const char *name)
{
    const char *base = strrchr(name, '.');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof UNAVAILABLE / sizeof UNAVAILABLE[0]; i++)
        if (!strcmp(UNAVAILABLE[i], base)) return 1;
    return !strcmp(name, "fmax") || !strcmp(name, "fmin");
}

int ex_is_function(const char *name)
{
    fdef tmp;
    return find_function(name, &tmp) != NULL || is_unavailable(name);
}

/* Levenshtein distance, capped (names are short). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40) return 99;
    int row[41];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

/* The closest known function name within 2 edits, or NULL. */
static const char *suggest(const char *name)
{
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; i < NFUNCS; i++) {
        int d = edit_distance(name, FUNCS[i].name);
        if (d < bd) bd = d, best = FUNCS[i].name;
    }
    for (size_t i = 0; i < sizeof UNARY_EW / sizeof UNARY_EW[0]; i++) {
        int d = edit_distance(name, UNARY_EW[i]);
        if (d < bd) bd = d, best = UNARY_EW[i];
    }
    for (size_t i = 0; i < sizeof BINARY_EW / sizeof BINARY_EW[0]; i++) {
        int d = edit_distance(name, BINARY_EW[i]);
        if (d < bd) bd = d, best = BINARY_EW[i];
    }
    return best;
}

/* ------------------------------------------------------------ names */

static const struct {
    const char *name;
    zc_dtype dtype;
} DTYPES[] = {
    {"bool", ZC_BOOL},       {"int8", ZC_INT8},       {"int16", ZC_INT16},         {"int32", ZC_INT32},
    {"int64", ZC_INT64},     {"uint8", ZC_UINT8},     {"uint16", ZC_UINT16},       {"uint32", ZC_UINT32},
    {"uint64", ZC_UINT64},   {"float16", ZC_FLOAT16}, {"float32", ZC_FLOAT32},     {"float64", ZC_FLOAT64},
    {"complex64", ZC_COMPLEX64}, {"complex128", ZC_COMPLEX128},
};

static int eval_node(ev *e, const ex_node *n, value *out);

static int eval_name(ev *e, const ex_node *n, value *out)
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
        set_float(out, 3.14159265358979323846, n->col);
        return 0;
    }
    if (!strcmp(n->str, "e")) {
        set_float(out, 2.71828182845904523536, n->col);
        return 0;
    }
    if (!strcmp(n->str, "inf")) {
        set_float(out, INFINITY, n->col);
        return 0;
    }
    if (!strcmp(n->str, "nan")) {
        set_float(out, NAN, n->col);
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
    if (ex_is_function(n->str)) return fail(n->col, "'%s' is a function: call it, as in %s(...)", n->str, n->str);
    char names[256] = "";
    size_t k = 0;
    for (int i = 0; i < e->nvars && k < sizeof names - 40; i++) {
        int w = snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", e->vars[i].name);
        if (w > 0) k += (size_t)w;
    }
    if (e->nvars) return fail(n->col, "unknown name '%s' (arrays given with --in: %s)", n->str, names);
    return fail(n->col, "unknown name '%s' (bind arrays to names with --in NAME=PATH)", n->str);
}

/* ------------------------------------------------------------ conversions */

/* A value as an array: arrays as they are, numbers as weak scalars. The
 * caller owns *arr (one reference). */
static int as_array(ev *e, const value *v, const char *what, zc_array **arr)
{
    if (v->kind == V_ARRAY) {
        zc_array_retain(v->arr);
        *arr = v->arr;
        return 0;
    }
    if (v->kind == V_NUM) {
        int rc = zc_scalar(num_f(v), v->is_int, arr);
        if (rc < 0) return fail_zc(e, rc, v->col, what);
        return 0;
    }
    return fail(v->col, "%s: expected an array or a number, got %s", what, kind_name(v));
}

static int as_int(const value *v, const char *what, int64_t *out)
{
    if (v->kind == V_NUM && v->is_int) {
        *out = v->i;
        return 0;
    }
    if (v->kind == V_NUM && !v->is_int && v->f == floor(v->f) && fabs(v->f) < 9e15)
        return fail(v->col, "%s must be an integer, got the float %g (write %lld)", what, v->f, (long long)v->f);
    return fail(v->col, "%s must be an integer, got %s", what, kind_name(v));
}

static int as_number(const value *v, const char *what, double *out)
{
    if (v->kind != V_NUM) return fail(v->col, "%s must be a number, got %s", what, kind_name(v));
    *out = num_f(v);
    return 0;
}

static int as_bool(const value *v, const char *what, int *out)
{
    if (v->kind != V_NUM || !v->is_int) return fail(v->col, "%s must be True or False, got %s", what, kind_name(v));
    *out = v->i != 0;
    return 0;
}

static int as_dtype(const value *v, const char *what, zc_dtype *out)
{
    if (v->kind == V_DTYPE) {
        *out = v->dtype;
        return 0;
    }
    if (v->kind == V_STR) {
        size_t itemsize;
        if (zc_dtype_parse(v->s, out, &itemsize) < 0 || *out == ZC_BYTES || *out == ZC_UNICODE || *out == ZC_RAW)
            return fail(v->col, "%s: unknown data type '%s' (use bool, int8..int64, uint8..uint64, float16, "
                        "float32, float64, complex64, complex128)", what, v->s);
        return 0;
    }
    return fail(v->col, "%s must be a data type such as float32 or \"int16\", got %s", what, kind_name(v));
}

/* A shape: an integer or a tuple of integers >= 0. */
static int as_shape(const value *v, const char *what, int *ndim, int64_t *shape)
{
    if (v->kind == V_NUM) {
        if (as_int(v, what, &shape[0]) < 0) return -1;
        if (shape[0] < 0) return fail(v->col, "%s: negative dimension %lld", what, (long long)shape[0]);
        *ndim = 1;
        return 0;
    }
    if (v->kind != V_TUPLE) return fail(v->col, "%s must be an integer or a tuple of integers, got %s", what, kind_name(v));
    if (v->n > ZC_MAX_DIMS) return fail(v->col, "%s: more than %d dimensions", what, ZC_MAX_DIMS);
    for (int d = 0; d < v->n; d++) {
        if (as_int(&v->items[d], what, &shape[d]) < 0) return -1;
        if (shape[d] < 0) return fail(v->items[d].col, "%s: negative dimension %lld", what, (long long)shape[d]);
    }
    *ndim = v->n;
    return 0;
}

/* Chunks for an array of `shape`: None (NULL: automatic), an integer for every
 * dimension, or a tuple with one entry per dimension; -1 or None = the whole
 * dimension. Returns 1 when chunks were given, 0 for automatic, -1 on error. */
static int as_chunks(const value *v, int ndim, const int64_t *shape, int64_t *chunks)
{
    if (v->kind == V_NONE) return 0;
    if (v->kind == V_NUM) {
        int64_t c;
        if (as_int(v, "chunks", &c) < 0) return -1;
        if (c == 0 || c < -1) return fail(v->col, "chunks must be positive (or -1 for a whole dimension), got %lld",
                                          (long long)c);
        for (int d = 0; d < ndim; d++) chunks[d] = c == -1 || c > shape[d] ? (shape[d] > 0 ? shape[d] : 1) : c;
        return 1;
    }
    if (v->kind != V_TUPLE) return fail(v->col, "chunks must be an integer or a tuple, got %s", kind_name(v));
    if (v->n != ndim)
        return fail(v->col, "chunks has %d entr%s but the array has %d dimension%s", v->n, v->n == 1 ? "y" : "ies",
                    ndim, ndim == 1 ? "" : "s");
    for (int d = 0; d < ndim; d++) {
        const value *c = &v->items[d];
        int64_t x = -1;
        if (c->kind != V_NONE && as_int(c, "chunks", &x) < 0) return -1;
        if (x == 0 || x < -1)
            return fail(c->col, "chunks must be positive (or -1 for a whole dimension), got %lld", (long long)x);
        chunks[d] = x == -1 || x > shape[d] ? (shape[d] > 0 ? shape[d] : 1) : x;
    }
    return 1;
}

static int array_info(ev *e, const value *v, int *ndim, int64_t *shape, int64_t *chunks, zc_dtype *dtype)
{
    int rc = zc_array_info(v->arr, ndim, shape, chunks, dtype);
    if (rc < 0) return fail_zc(e, rc, v->col, NULL);
    return 0;
}

/* ------------------------------------------------------------ Python arithmetic on numbers */

static int int_result(value *out, int col, int overflow, int64_t r)
{
    if (overflow) return fail(col, "integer result out of the 64-bit range");
    set_int(out, r, col);
    return 0;
}

/* Python's float floor division and modulo (Objects/floatobject.c, float_divmod). */
static void py_float_divmod(double a, double b, double *div, double *mod)
{
    double m = fmod(a, b);
    double d = (a - m) / b;
    if (m != 0) {
        if ((b < 0) != (m < 0)) {
            m += b;
            d -= 1.0;
        }
    } else {
        m = copysign(0.0, b);
    }
    double fd;
    if (d != 0) {
        fd = floor(d);
        if (d - fd > 0.5) fd += 1.0;
    } else {
        fd = copysign(0.0, a / b);
    }
    *div = fd;
    *mod = m;
}

static int fold_binary(ex_op op, const value *a, const value *b, int col, value *out)
{
    int both_int = a->is_int && b->is_int;
    double x = num_f(a), y = num_f(b);
    int64_t r;
    switch (op) {
    case EX_OP_ADD:
        if (both_int) {
            int ovf = __builtin_add_overflow(a->i, b->i, &r);
            return int_result(out, col, ovf, r);
        }
        set_float(out, x + y, col);
        return 0;
    case EX_OP_SUB:
        if (both_int) {
            int ovf = __builtin_sub_overflow(a->i, b->i, &r);
            return int_result(out, col, ovf, r);
        }
        set_float(out, x - y, col);
        return 0;
    case EX_OP_MUL:
        if (both_int) {
            int ovf = __builtin_mul_overflow(a->i, b->i, &r);
            return int_result(out, col, ovf, r);
        }
        set_float(out, x * y, col);
        return 0;
    case EX_OP_DIV:
        if (y == 0) return fail(col, "division by zero");
        set_float(out, x / y, col);
        return 0;
    case EX_OP_FLOORDIV:
    case EX_OP_MOD:
        if (y == 0) return fail(col, "%s by zero", op == EX_OP_MOD ? "modulo" : "division");
        if (both_int) {
            if (a->i == INT64_MIN && b->i == -1) {
                if (op == EX_OP_MOD) return int_result(out, col, 0, 0);
                return int_result(out, col, 1, 0);
            }
            int64_t q = a->i / b->i, m = a->i % b->i;
            if (m != 0 && ((m < 0) != (b->i < 0))) {
                q -= 1;
                m += b->i;
            }
            return int_result(out, col, 0, op == EX_OP_MOD ? m : q);
        } else {
            double d, m;
            py_float_divmod(x, y, &d, &m);
            set_float(out, op == EX_OP_MOD ? m : d, col);
            return 0;
        }
    case EX_OP_POW:
        if (both_int && b->i >= 0) {
            int64_t base = a->i, acc = 1;
            uint64_t k = (uint64_t)b->i;
            int ovf = 0;
            if (base == 0) {
                acc = k == 0 ? 1 : 0;
            } else if (base == 1) {
                acc = 1;
            } else if (base == -1) {
                acc = (k & 1) ? -1 : 1;
            } else {
                /* |base| >= 2: once base*base overflows with bits of k left, so does the result */
                while (k && !ovf) {
                    if (k & 1) ovf = __builtin_mul_overflow(acc, base, &acc);
                    k >>= 1;
                    if (k && !ovf) ovf = __builtin_mul_overflow(base, base, &base);
                }
            }
            return int_result(out, col, ovf, acc);
        }
        if (x == 0 && y < 0) return fail(col, "0 cannot be raised to a negative power");
        if (x < 0 && y != floor(y)) return fail(col, "a negative number raised to a fractional power is complex");
        set_float(out, pow(x, y), col);
        return 0;
    case EX_OP_LSHIFT:
    case EX_OP_RSHIFT:
    case EX_OP_BITAND:
    case EX_OP_BITXOR:
    case EX_OP_BITOR:
        if (!both_int) return fail(col, "operator '%s' needs integers, not floats", ex_op_text(op));
        if (op == EX_OP_LSHIFT || op == EX_OP_RSHIFT) {
            if (b->i < 0) return fail(col, "negative shift count");
            if (op == EX_OP_RSHIFT) return int_result(out, col, 0, b->i >= 63 ? (a->i < 0 ? -1 : 0) : a->i >> b->i);
            if (a->i == 0) return int_result(out, col, 0, 0);
            if (b->i >= 63) return int_result(out, col, 1, 0);
            int64_t s = (int64_t)((uint64_t)a->i << b->i);
            return int_result(out, col, (s >> b->i) != a->i, s);
        }
        r = op == EX_OP_BITAND ? (a->i & b->i) : op == EX_OP_BITXOR ? (a->i ^ b->i) : (a->i | b->i);
        if (a->is_bool && b->is_bool) set_bool(out, (int)r, col);
        else set_int(out, r, col);
        return 0;
    case EX_OP_LT: set_bool(out, both_int ? a->i < b->i : x < y, col); return 0;
    case EX_OP_LE: set_bool(out, both_int ? a->i <= b->i : x <= y, col); return 0;
    case EX_OP_GT: set_bool(out, both_int ? a->i > b->i : x > y, col); return 0;
    case EX_OP_GE: set_bool(out, both_int ? a->i >= b->i : x >= y, col); return 0;
    case EX_OP_EQ: set_bool(out, both_int ? a->i == b->i : x == y, col); return 0;
    case EX_OP_NE: set_bool(out, both_int ? a->i != b->i : x != y, col); return 0;
    case EX_OP_AND: *out = (a->is_int ? a->i : x) ? *b : *a; out->col = col; return 0;
    case EX_OP_OR: *out = (a->is_int ? a->i : x) ? *a : *b; out->col = col; return 0;
    default: return fail(col, "operator '%s' does not apply to numbers", ex_op_text(op));
    }
}

/* ------------------------------------------------------------ operators */

static int call_ew(ev *e, const char *api, int nargs, const value *args, int col, value *out)
{
    zc_array *a[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; i < nargs && rc == 0; i++) rc = as_array(e, &args[i], api, &a[i]);
    zc_array *r = NULL;
    if (rc == 0) {
        int zrc = zc_elementwise(api, nargs, a, &r);
        if (zrc < 0) rc = fail_zc(e, zrc, col, api);
    }
    for (int i = 0; i < nargs; i++) zc_array_release(a[i]);
    if (rc < 0) return -1;
    memset(out, 0, sizeof *out);
    out->kind = V_ARRAY;
    out->arr = r;
    out->col = col;
    return 0;
}

static int eval_unary(ev *e, const ex_node *n, value *out)
{
    value a;
    if (eval_node(e, n->a, &a) < 0) return -1;
    int rc;
    if (a.kind == V_NUM) {
        switch (n->op) {
        case EX_OP_NEG:
            if (a.is_int) {
                rc = int_result(out, n->col, a.i == INT64_MIN, -a.i);
            } else {
                set_float(out, -a.f, n->col);
                rc = 0;
            }
            break;
        case EX_OP_POS:
            *out = a;
            if (a.is_bool) out->is_bool = 0;
            out->col = n->col;
            rc = 0;
            break;
        case EX_OP_INVERT:
            rc = a.is_int ? int_result(out, n->col, 0, ~a.i)
                          : fail(n->col, "operator '~' needs an integer, not a float");
            break;
        default: /* not */
            set_bool(out, a.is_int ? a.i == 0 : a.f == 0, n->col);
            rc = 0;
        }
        return rc;
    }
    if (a.kind != V_ARRAY) {
        rc = fail(n->col, "operator '%s' does not apply to %s", ex_op_text(n->op), kind_name(&a));
    } else {
        rc = call_ew(e, ex_op_function(n->op), 1, &a, n->col, out);
    }
    value_clear(&a);
    return rc;
}

static int eval_binary(ev *e, const ex_node *n, value *out)
{
    value ab[2];
    memset(ab, 0, sizeof ab);
    if (eval_node(e, n->a, &ab[0]) < 0) return -1;
    if (eval_node(e, n->b, &ab[1]) < 0) {
        value_clear(&ab[0]);
        return -1;
    }
    int rc;
    if (n->op == EX_OP_MATMUL) {
        static const fdef MATMUL_DEF = {"matmul", "x1,x2", 2, 2, h_linalg, "matmul", 0};
        if (ab[0].kind != V_ARRAY || ab[1].kind != V_ARRAY)
            rc = fail(n->col, "operator '@' needs arrays, not %s", kind_name(ab[0].kind != V_ARRAY ? &ab[0] : &ab[1]));
        else if ((rc = h_linalg(e, &MATMUL_DEF, n, ab, out)) == 0)
            out->col = n->col;
    } else if (ab[0].kind == V_NUM && ab[1].kind == V_NUM) {
        rc = fold_binary(n->op, &ab[0], &ab[1], n->col, out);
    } else if ((ab[0].kind == V_ARRAY || ab[0].kind == V_NUM) && (ab[1].kind == V_ARRAY || ab[1].kind == V_NUM)) {
        rc = call_ew(e, ex_op_function(n->op), 2, ab, n->col, out);
    } else {
        const value *bad = ab[0].kind == V_ARRAY || ab[0].kind == V_NUM ? &ab[1] : &ab[0];
        rc = fail(n->col, "operator '%s' does not apply to %s", ex_op_text(n->op), kind_name(bad));
    }
    value_clear(&ab[0]);
    value_clear(&ab[1]);
    return rc;
}

/* ------------------------------------------------------------ subscripts */

static int slice_part(const value *v, int64_t *x, int *has)
{
    *has = 0;
    if (v->kind == V_NONE) return 0;
    if (as_int(v, "slice bound", x) < 0) return -1;
    *has = 1;
    return 0;
}

/* t[i] of a tuple (the results of qr, svd, lstsq...): consumes *t. */
static int tuple_item(ev *e, const ex_node *n, value *t, value *out)
{
    value ix;
    int rc = eval_node(e, n->b, &ix);
    if (rc == 0) {
        if (ix.kind != V_NUM || !ix.is_int || ix.is_bool) {
            rc = fail(n->b->col, "a tuple is indexed by an integer, not %s", kind_name(&ix));
        } else {
            int64_t i = ix.i < 0 ? ix.i + t->n : ix.i;
            if (i < 0 || i >= t->n) {
                rc = fail(n->b->col, "tuple index %lld is out of range (%d items)", (long long)ix.i, t->n);
            } else if (t->items[i].kind != V_ARRAY && t->items[i].kind != V_NUM) {
                rc = fail(n->b->col, "tuple item %lld is %s: only arrays and numbers can be taken out of a tuple",
                          (long long)ix.i, kind_name(&t->items[i]));
            } else {
                *out = t->items[i];
                if (out->kind == V_ARRAY) zc_array_retain(out->arr);
                out->col = n->col;
            }
        }
        value_clear(&ix);
    }
    value_clear(t);
    return rc;
}

static int eval_subscript(ev *e, const ex_node *n, value *out)
{
    value a, ix;
    if (eval_node(e, n->a, &a) < 0) return -1;
    if (a.kind == V_TUPLE) return tuple_item(e, n, &a, out);
    if (a.kind != V_ARRAY) {
        int rc = fail(n->a->col, "only arrays can be indexed, not %s", kind_name(&a));
        value_clear(&a);
        return rc;
    }
    if (eval_node(e, n->b, &ix) < 0) {
        value_clear(&a);
        return -1;
    }
    /* one entry or a tuple of entries (a tuple written in brackets is one entry too) */
    const value *items = &ix;
    int nitems = 1;
    if (ix.kind == V_TUPLE && !n->b->parens) {
        items = ix.items;
        nitems = ix.n;
    }
    zc_index idx[ZC_MAX_DIMS * 2];
    int rc = 0;
    if (nitems > (int)(sizeof idx / sizeof idx[0])) rc = fail(n->b->col, "too many indices (%d)", nitems);
    for (int k = 0; k < nitems && rc == 0; k++) {
        const value *v = &items[k];
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
            if (x->step == 0) rc = fail(v->items[2].col, "slice step cannot be zero");
        } else if (v->kind == V_NUM && v->is_int && !v->is_bool) {
            x->kind = ZC_IDX_INT;
            x->index = v->i;
        } else if (v->kind == V_ARRAY) {
            rc = fail(v->col, "indexing with an array is not supported (only slices, integers, None and ...)");
        } else {
            rc = fail(v->col, "an index must be a slice, an integer, None or ..., not %s", kind_name(v));
        }
    }
    if (rc == 0) {
        zc_array *r;
        int zrc = zc_getitem(a.arr, idx, nitems, &r);
        if (zrc < 0) {
            rc = fail_zc(e, zrc, n->b->col, NULL);
        } else {
            memset(out, 0, sizeof *out);
            out->kind = V_ARRAY;
            out->arr = r;
            out->col = n->col;
        }
    }
    value_clear(&a);
    value_clear(&ix);
    return rc;
}

/* ------------------------------------------------------------ calls */

/* The parameter names of a definition: names[i] is the canonical name,
 * alt[i] another accepted keyword (or NULL). */
static int split_params(const char *spec, char names[MAXPARAMS][24], char alt[MAXPARAMS][24])
{
    int n = 0;
    const char *p = spec;
    while (*p && n < MAXPARAMS) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *bar = memchr(p, '|', len);
        size_t l1 = bar ? (size_t)(bar - p) : len;
        snprintf(names[n], 24, "%.*s", (int)l1, p);
        alt[n][0] = 0;
        if (bar) snprintf(alt[n], 24, "%.*s", (int)(len - l1 - 1), bar + 1);
        n++;
        if (!end) break;
        p = end + 1;
    }
    return n;
}

static int eval_call(ev *e, const ex_node *n, value *out)
{
    /* the function's name: a NAME or a dotted name (random.uniform) */
    char name[128];
    const ex_node *fn = n->a;
    if (fn->kind == EX_NAME) {
        snprintf(name, sizeof name, "%s", fn->str);
    } else if (fn->kind == EX_ATTR && fn->a->kind == EX_NAME) {
        snprintf(name, sizeof name, "%s.%s", fn->a->str, fn->str);
    } else {
        return fail(fn->col, "only named functions can be called");
    }
    if (fn->kind == EX_NAME)
        for (int i = 0; i < e->nvars; i++)
            if (!strcmp(e->vars[i].name, name)) return fail(fn->col, "'%s' is an array, not a function", name);
    fdef tmp;
    const fdef *f = find_function(name, &tmp);
    if (!f) {
        if (is_unavailable(name)) return fail(fn->col, "function '%s' is not available", name);
        const char *s = suggest(name);
        if (s) return fail(fn->col, "unknown function '%s' (did you mean '%s'?)", name, s);
        return fail(fn->col, "unknown function '%s'", name);
    }

    /* bind arguments to parameters */
    char names[MAXPARAMS][24], alt[MAXPARAMS][24];
    int np = split_params(f->params, names, alt);
    const ex_node *bound[MAXPARAMS] = {NULL};
    if (n->nitems > f->npos) {
        const ex_node *x = n->items[f->npos];
        if (f->npos == f->nreq && f->nreq == np)
            return fail(x->col, "%s() takes %d argument%s, got %d", name, f->npos, f->npos == 1 ? "" : "s",
                        n->nitems);
        return fail(x->col, "%s() takes at most %d positional argument%s, got %d (give the others by keyword: %s)",
                    name, f->npos, f->npos == 1 ? "" : "s", n->nitems, f->params);
    }
    for (int i = 0; i < n->nitems; i++) bound[i] = n->items[i];
    for (int k = 0; k < n->nkw; k++) {
        int hit = -1;
        for (int i = 0; i < np && hit < 0; i++)
            if (!strcmp(names[i], n->kwnames[k]) || (alt[i][0] && !strcmp(alt[i], n->kwnames[k]))) hit = i;
        if (hit < 0) {
            char list[200];
            snprintf(list, sizeof list, "%s", f->params);
            for (char *c = list; *c; c++)
                if (*c == ',') *c = ' ';
            return fail(n->kwcols[k], "%s() got an unexpected keyword argument '%s' (parameters: %s)", name,
                        n->kwnames[k], list);
        }
        if (bound[hit])
            return fail(n->kwcols[k], "%s() got multiple values for argument '%s'", name, names[hit]);
        bound[hit] = n->kwvalues[k];
    }
    for (int i = 0; i < f->nreq; i++)
        if (!bound[i]) {
            int col = n->nitems ? n->items[n->nitems - 1]->col : n->col;
            return fail(col, "%s() missing required argument '%s' (takes %s)", name, names[i], f->params);
        }

    /* evaluate the arguments (absent ones are V_NONE with the call's column) */
    value args[MAXPARAMS];
    memset(args, 0, sizeof args);
    int rc = 0;
    for (int i = 0; i < np; i++) {
        if (bound[i]) {
            if ((rc = eval_node(e, bound[i], &args[i])) < 0) break;
        } else {
            args[i].kind = V_NONE;
            args[i].col = n->col;
        }
    }
    if (rc == 0) {
        fdef named = *f;
        named.name = name;
        rc = f->fn(e, &named, n, args, out);
        if (rc == 0) out->col = n->col;
    }
    for (int i = 0; i < np; i++) value_clear(&args[i]);
    return rc;
}

/* ---- elementwise */

/* Elementwise functions of Python numbers give Python numbers (so that
 * `sqrt(2) * u` keeps u's dtype, as in NumPy); NULL api entries are left to
 * the library (0-d arrays). */
static int fold_unary(const char *api, const value *a, int col, value *out)
{
    double x = num_f(a);
    int is_int = a->is_int;
    static const struct {
        const char *name;
        double (*fn)(double);
    } MATH[] = {{"acos", acos},   {"acosh", acosh}, {"asin", asin}, {"asinh", asinh}, {"atan", atan},
                {"atanh", atanh}, {"cos", cos},     {"cosh", cosh}, {"exp", exp},     {"expm1", expm1},
                {"log", log},     {"log1p", log1p}, {"log2", log2}, {"log10", log10}, {"sin", sin},
                {"sinh", sinh},   {"sqrt", sqrt},   {"tan", tan},   {"tanh", tanh}};
    for (size_t i = 0; i < sizeof MATH / sizeof MATH[0]; i++)
        if (!strcmp(api, MATH[i].name)) {
            set_float(out, MATH[i].fn(x), col);
            return 1;
        }
    if (!strcmp(api, "abs")) {
        if (is_int) return int_result(out, col, a->i == INT64_MIN, a->i < 0 ? -a->i : a->i) < 0 ? -1 : 1;
        set_float(out, fabs(x), col);
    } else if (!strcmp(api, "negative")) {
        if (is_int) return int_result(out, col, a->i == INT64_MIN, -a->i) < 0 ? -1 : 1;
        set_float(out, -x, col);
    } else if (!strcmp(api, "positive")) {
        *out = *a;
        out->is_bool = 0;
        out->col = col;
    } else if (!strcmp(api, "square")) {
        int64_t r = 0;
        if (is_int) {
            int ovf = __builtin_mul_overflow(a->i, a->i, &r);
            return int_result(out, col, ovf, r) < 0 ? -1 : 1;
        }
        set_float(out, x * x, col);
    } else if (!strcmp(api, "sign")) {
        if (is_int) set_int(out, (a->i > 0) - (a->i < 0), col);
        else set_float(out, isnan(x) ? x : (double)((x > 0) - (x < 0)), col);
    } else if (!strcmp(api, "floor") || !strcmp(api, "ceil") || !strcmp(api, "trunc") || !strcmp(api, "round")) {
        if (is_int) {
            set_int(out, a->i, col);
        } else {
            double r = !strcmp(api, "floor") ? floor(x) : !strcmp(api, "ceil") ? ceil(x)
                       : !strcmp(api, "trunc") ? trunc(x) : nearbyint(x); /* round half to even */
            set_float(out, r, col);
        }
    } else if (!strcmp(api, "reciprocal")) {
        if (x == 0) return fail(col, "division by zero") < 0 ? -1 : 1;
        set_float(out, 1.0 / x, col);
    } else if (!strcmp(api, "isnan")) {
        set_bool(out, isnan(x), col);
    } else if (!strcmp(api, "isinf")) {
        set_bool(out, isinf(x), col);
    } else if (!strcmp(api, "isfinite")) {
        set_bool(out, isfinite(x), col);
    } else if (!strcmp(api, "signbit")) {
        set_bool(out, signbit(x) != 0, col);
    } else if (!strcmp(api, "logical_not")) {
        set_bool(out, x == 0, col);
    } else if (!strcmp(api, "bitwise_invert")) {
        if (!is_int) return fail(col, "bitwise_invert needs an integer, not a float") < 0 ? -1 : 1;
        if (a->is_bool) set_bool(out, !a->i, col);
        else set_int(out, ~a->i, col);
    } else {
        return 0; /* real, imag, conj: left to the library */
    }
    return 1;
}

static int fold_binary_fn(const char *api, const value *a, const value *b, int col, value *out)
{
    static const struct {
        const char *name;
        ex_op op;
    } OPS[] = {{"add", EX_OP_ADD},          {"subtract", EX_OP_SUB},          {"multiply", EX_OP_MUL},
               {"divide", EX_OP_DIV},       {"floor_divide", EX_OP_FLOORDIV}, {"remainder", EX_OP_MOD},
               {"pow", EX_OP_POW},          {"bitwise_and", EX_OP_BITAND},    {"bitwise_or", EX_OP_BITOR},
               {"bitwise_xor", EX_OP_BITXOR}, {"bitwise_left_shift", EX_OP_LSHIFT},
               {"bitwise_right_shift", EX_OP_RSHIFT}, {"equal", EX_OP_EQ}, {"not_equal", EX_OP_NE},
               {"less", EX_OP_LT},          {"less_equal", EX_OP_LE},         {"greater", EX_OP_GT},
               {"greater_equal", EX_OP_GE}};
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (!strcmp(api, OPS[i].name)) return fold_binary(OPS[i].op, a, b, col, out) < 0 ? -1 : 1;
    double x = num_f(a), y = num_f(b);
    int both_int = a->is_int && b->is_int;
    if (!strcmp(api, "maximum") || !strcmp(api, "minimum")) {
        int first = !strcmp(api, "maximum") ? (both_int ? a->i >= b->i : x >= y) : (both_int ? a->i <= b->i : x <= y);
        if (!both_int && (isnan(x) || isnan(y))) {
            set_float(out, NAN, col); /* NumPy's maximum/minimum propagate NaN */
            return 1;
        }
        *out = first ? *a : *b;
        if (!both_int && out->is_int) set_float(out, num_f(out), col);
        out->col = col;
        return 1;
    }
    if (!strcmp(api, "logical_and") || !strcmp(api, "logical_or") || !strcmp(api, "logical_xor")) {
        int p = x != 0, q = y != 0;
        set_bool(out, api[8] == 'a' ? p && q : api[8] == 'o' ? p || q : p != q, col);
        return 1;
    }
    double r;
    if (!strcmp(api, "atan2")) r = atan2(x, y);
    else if (!strcmp(api, "hypot")) r = hypot(x, y);
    else if (!strcmp(api, "copysign")) r = copysign(x, y);
    else if (!strcmp(api, "nextafter")) r = nextafter(x, y);
    else if (!strcmp(api, "logaddexp")) r = fmax(x, y) + log1p(exp(-fabs(x - y)));
    else return 0;
    set_float(out, r, col);
    return 1;
}

static int h_unary(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (args[0].kind != V_ARRAY && args[0].kind != V_NUM)
        return fail(args[0].col, "%s(): expected an array or a number, got %s", f->name, kind_name(&args[0]));
    if (args[0].kind == V_NUM) {
        int r = fold_unary(f->api, &args[0], call->col, out);
        if (r) return r < 0 ? -1 : 0;
    }
    return call_ew(e, f->api, 1, args, call->col, out);
}

static int h_binary(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    for (int i = 0; i < 2; i++)
        if (args[i].kind != V_ARRAY && args[i].kind != V_NUM)
            return fail(args[i].col, "%s(): expected an array or a number, got %s", f->name, kind_name(&args[i]));
    if (args[0].kind == V_NUM && args[1].kind == V_NUM) {
        int r = fold_binary_fn(f->api, &args[0], &args[1], call->col, out);
        if (r) return r < 0 ? -1 : 0;
    }
    return call_ew(e, f->api, 2, args, call->col, out);
}

static int h_where(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    for (int i = 0; i < 3; i++)
        if (args[i].kind != V_ARRAY && args[i].kind != V_NUM)
            return fail(args[i].col, "where(): expected an array or a number, got %s", kind_name(&args[i]));
    if (args[0].kind == V_NUM && args[1].kind == V_NUM && args[2].kind == V_NUM) {
        *out = num_f(&args[0]) != 0 ? args[1] : args[2];
        out->col = call->col;
        return 0;
    }
    return call_ew(e, "where", 3, args, call->col, out);
}

/* clip(x, min, max) = minimum(maximum(x, min), max), either bound None */
static int h_clip(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    value cur;
    if (args[0].kind != V_ARRAY && args[0].kind != V_NUM)
        return fail(args[0].col, "clip(): x must be an array or a number, got %s", kind_name(&args[0]));
    cur = args[0];
    if (cur.kind == V_ARRAY) zc_array_retain(cur.arr);
    for (int k = 1; k <= 2; k++) {
        if (args[k].kind == V_NONE) continue;
        if (args[k].kind != V_NUM && args[k].kind != V_ARRAY) {
            value_clear(&cur);
            return fail(args[k].col, "clip(): bounds must be arrays, numbers or None, got %s", kind_name(&args[k]));
        }
        value pair[2] = {cur, args[k]}, next;
        int rc = -1, folded = 0;
        if (cur.kind == V_NUM && args[k].kind == V_NUM)
            folded = fold_binary_fn(k == 1 ? "maximum" : "minimum", &cur, &args[k], call->col, &next);
        if (folded) rc = folded < 0 ? -1 : 0;
        else rc = call_ew(e, k == 1 ? "maximum" : "minimum", 2, pair, call->col, &next);
        value_clear(&cur);
        if (rc < 0) return -1;
        cur = next;
    }
    *out = cur;
    return 0;
}

/* ---- reductions */

static int h_reduce(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    const char *api = f->api;
    if (args[0].kind != V_ARRAY)
        return fail(args[0].col, "%s(): x must be an array, got %s", f->name, kind_name(&args[0]));
    int ndim;
    zc_dtype dt;
    int64_t shape[ZC_MAX_DIMS];
    if (array_info(e, &args[0], &ndim, shape, NULL, &dt) < 0) return -1;
    int is_arg = !strcmp(api, "argmin") || !strcmp(api, "argmax");
    int axes[ZC_MAX_DIMS], naxes = 0;
    const value *ax = &args[1];
    if (ax->kind == V_NUM || ax->kind == V_TUPLE) {
        int cnt = ax->kind == V_TUPLE ? ax->n : 1;
        if (is_arg && ax->kind == V_TUPLE)
            return fail(ax->col, "%s(): axis must be an integer or None, not a tuple", f->name);
        if (cnt > ZC_MAX_DIMS) return fail(ax->col, "%s(): too many axes", f->name);
        for (int k = 0; k < cnt; k++) {
            const value *v = ax->kind == V_TUPLE ? &ax->items[k] : ax;
            int64_t a;
            if (as_int(v, "axis", &a) < 0) return -1;
            if (a < -ndim || a >= ndim)
                return fail(v->col, "%s(): axis %lld is out of bounds for an array of %d dimension%s", f->name,
                            (long long)a, ndim, ndim == 1 ? "" : "s");
            if (a < 0) a += ndim;
            for (int j = 0; j < naxes; j++)
                if (axes[j] == a) return fail(v->col, "%s(): axis %lld is repeated", f->name, (long long)a);
            axes[naxes++] = (int)a;
        }
        if (ax->kind == V_TUPLE && cnt == 0) {
            /* axis=() reduces nothing: NumPy returns the values themselves (as the result dtype) */
            return fail(ax->col, "%s(): axis=() (reducing no axis) is not supported", f->name);
        }
    } else if (ax->kind != V_NONE) {
        return fail(ax->col, "%s(): axis must be an integer, a tuple of integers or None, got %s", f->name,
                    kind_name(ax));
    }
    int keepdims = 0;
    if (args[2].kind != V_NONE && as_bool(&args[2], "keepdims", &keepdims) < 0) return -1;
    double ddof = 0;
    zc_array *x = args[0].arr;
    zc_array_retain(x);
    if (!strcmp(api, "var") || !strcmp(api, "std")) {
        if (args[3].kind != V_NONE && as_number(&args[3], "correction", &ddof) < 0) {
            zc_array_release(x);
            return -1;
        }
    } else if (!strcmp(api, "sum") || !strcmp(api, "prod") || !strcmp(api, "mean")) {
        if (args[3].kind != V_NONE) { /* dtype=: reduce the values converted to it */
            zc_dtype want;
            if (as_dtype(&args[3], "dtype", &want) < 0) {
                zc_array_release(x);
                return -1;
            }
            zc_array *c;
            int rc = zc_astype(x, want, &c);
            zc_array_release(x);
            if (rc < 0) return fail_zc(e, rc, args[3].col, "astype");
            x = c;
        }
    }
    zc_array *r;
    int rc = zc_reduce(api, x, axes, naxes, keepdims, ddof, &r);
    zc_array_release(x);
    if (rc < 0) return fail_zc(e, rc, call->col, api);
    memset(out, 0, sizeof *out);
    out->kind = V_ARRAY;
    out->arr = r;
    return 0;
}

/* ---- creation */

static int set_array(value *out, zc_array *a)
{
    memset(out, 0, sizeof *out);
    out->kind = V_ARRAY;
    out->arr = a;
    return 0;
}

/* Default dtype of a fill value: bool, int64 or float64, like Python scalars. */
static zc_dtype default_dtype(const value *v)
{
    if (v->kind == V_NUM && v->is_bool) return ZC_BOOL;
    if (v->kind == V_NUM && v->is_int) return ZC_INT64;
    return ZC_FLOAT64;
}

static int make_full(ev *e, const fdef *f, const ex_node *call, int ndim, const int64_t *shape,
                     const int64_t *like_chunks, const value *fill, const value *dtv, const value *chv,
                     zc_dtype like_dtype, value *out)
{
    double v = f->k;
    zc_dtype dt = like_dtype != ZC_DTYPE_INVALID ? like_dtype : ZC_FLOAT64;
    if (fill) {
        if (as_number(fill, "fill_value", &v) < 0) return -1;
        if (like_dtype == ZC_DTYPE_INVALID) dt = default_dtype(fill);
    }
    if (dtv->kind != V_NONE && as_dtype(dtv, "dtype", &dt) < 0) return -1;
    int64_t chunks[ZC_MAX_DIMS];
    int has = as_chunks(chv, ndim, shape, chunks);
    if (has < 0) return -1;
    const int64_t *ch = has ? chunks : like_chunks;
    zc_array *a;
    int rc = zc_full(ndim, shape, ch, dt, v, &a);
    if (rc < 0) return fail_zc(e, rc, call->col, f->name);
    return set_array(out, a);
}

static int h_full(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    int ndim;
    int64_t shape[ZC_MAX_DIMS];
    if (as_shape(&args[0], "shape", &ndim, shape) < 0) return -1;
    int is_full = !strcmp(f->api, "full");
    const value *fill = is_full ? &args[1] : NULL;
    return make_full(e, f, call, ndim, shape, NULL, fill, &args[is_full ? 2 : 1], &args[is_full ? 3 : 2],
                     ZC_DTYPE_INVALID, out);
}

static int h_full_like(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (args[0].kind != V_ARRAY)
        return fail(args[0].col, "%s(): x must be an array, got %s", f->name, kind_name(&args[0]));
    int ndim;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_dtype dt;
    if (array_info(e, &args[0], &ndim, shape, chunks, &dt) < 0) return -1;
    int is_full = !strcmp(f->api, "full_like");
    const value *fill = is_full ? &args[1] : NULL;
    return make_full(e, f, call, ndim, shape, chunks, fill, &args[is_full ? 2 : 1], &args[is_full ? 3 : 2], dt,
                     out);
}

/* A 1-D chunk: None (0: automatic), an integer, or a 1-tuple. */
static int chunk_1d(const value *v, int64_t n, int64_t *chunk)
{
    int64_t shape = n, ch[1];
    int has = as_chunks(v, 1, &shape, ch);
    if (has < 0) return -1;
    *chunk = has ? ch[0] : 0;
    return 0;
}

static int h_arange(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    double start = 0, stop = 0, step = 1;
    int all_int = 1;
    for (int k = 0; k < 3; k++) {
        if (args[k].kind == V_NONE) continue;
        double x;
        if (as_number(&args[k], k == 0 ? "start" : k == 1 ? "stop" : "step", &x) < 0) return -1;
        all_int &= args[k].is_int;
    }
    if (args[1].kind == V_NONE) { /* arange(stop) */
        stop = num_f(&args[0]);
    } else {
        start = num_f(&args[0]);
        stop = num_f(&args[1]);
    }
    if (args[2].kind != V_NONE) step = num_f(&args[2]);
    if (step == 0) return fail(args[2].col, "arange(): step must not be zero");
    zc_dtype dt = all_int ? ZC_INT64 : ZC_FLOAT64;
    if (args[3].kind != V_NONE && as_dtype(&args[3], "dtype", &dt) < 0) return -1;
    double len = ceil((stop - start) / step);
    int64_t chunk;
    if (chunk_1d(&args[4], len > 0 && len < 9e18 ? (int64_t)len : 0, &chunk) < 0) return -1;
    zc_array *a;
    int rc = zc_arange(start, stop, step, dt, chunk, &a);
    if (rc < 0) return fail_zc(e, rc, call->col, "arange");
    return set_array(out, a);
}

static int h_linspace(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    double start = 0, stop = 0;
    int64_t num = 50;
    int endpoint = 1;
    if (as_number(&args[0], "start", &start) < 0 || as_number(&args[1], "stop", &stop) < 0) return -1;
    if (args[2].kind != V_NONE && as_int(&args[2], "num", &num) < 0) return -1;
    if (num < 0) return fail(args[2].col, "linspace(): num must be >= 0, got %lld", (long long)num);
    if (args[3].kind != V_NONE && as_bool(&args[3], "endpoint", &endpoint) < 0) return -1;
    zc_dtype dt = ZC_FLOAT64;
    if (args[4].kind != V_NONE && as_dtype(&args[4], "dtype", &dt) < 0) return -1;
    int64_t chunk;
    if (chunk_1d(&args[5], num, &chunk) < 0) return -1;
    zc_array *a;
    int rc = zc_linspace(start, stop, num, endpoint, dt, chunk, &a);
    if (rc < 0) return fail_zc(e, rc, call->col, "linspace");
    return set_array(out, a);
}

static int h_eye(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    int64_t n, m = -1, k = 0;
    if (as_int(&args[0], "n_rows", &n) < 0) return -1;
    if (n < 0) return fail(args[0].col, "eye(): n_rows must be >= 0");
    if (args[1].kind != V_NONE) {
        if (as_int(&args[1], "n_cols", &m) < 0) return -1;
        if (m < 0) return fail(args[1].col, "eye(): n_cols must be >= 0");
    }
    if (args[2].kind != V_NONE && as_int(&args[2], "k", &k) < 0) return -1;
    zc_dtype dt = ZC_FLOAT64;
    if (args[3].kind != V_NONE && as_dtype(&args[3], "dtype", &dt) < 0) return -1;
    int64_t shape[2] = {n, m >= 0 ? m : n}, chunks[2];
    int has = as_chunks(&args[4], 2, shape, chunks);
    if (has < 0) return -1;
    if (m == 0 || n == 0) {
        /* zc_eye reads m <= 0 as "same as n": an empty eye is a full of zeros */
        zc_array *a;
        int rc = zc_full(2, shape, has ? chunks : NULL, dt, 0, &a);
        if (rc < 0) return fail_zc(e, rc, call->col, "eye");
        return set_array(out, a);
    }
    zc_array *a;
    int rc = zc_eye(n, shape[1], k, dt, has ? chunks : NULL, &a);
    if (rc < 0) return fail_zc(e, rc, call->col, "eye");
    return set_array(out, a);
}

static int h_random(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    int ndim;
    int64_t shape[ZC_MAX_DIMS];
    if (as_shape(&args[0], "shape", &ndim, shape) < 0) return -1;
    int normal = !strcmp(f->api, "normal");
    double p1 = 0, p2 = 1;
    if (args[1].kind != V_NONE && as_number(&args[1], normal ? "loc" : "low", &p1) < 0) return -1;
    if (args[2].kind != V_NONE && as_number(&args[2], normal ? "scale" : "high", &p2) < 0) return -1;
    if (normal && p2 < 0) return fail(args[2].col, "normal(): scale must be >= 0");
    int64_t seed = 0;
    if (args[3].kind != V_NONE) {
        if (as_int(&args[3], "seed", &seed) < 0) return -1;
        if (seed < 0) return fail(args[3].col, "seed must be >= 0");
    }
    zc_dtype dt = ZC_FLOAT64;
    if (args[4].kind != V_NONE && as_dtype(&args[4], "dtype", &dt) < 0) return -1;
    int64_t chunks[ZC_MAX_DIMS];
    int has = as_chunks(&args[5], ndim, shape, chunks);
    if (has < 0) return -1;
    zc_array *a;
    int rc = normal ? zc_random_normal((uint64_t)seed, ndim, shape, has ? chunks : NULL, dt, p1, p2, &a)
                    : zc_random_uniform((uint64_t)seed, ndim, shape, has ? chunks : NULL, dt, p1, p2, &a);
    if (rc < 0) return fail_zc(e, rc, call->col, f->api);
    return set_array(out, a);
}

/* ---- types and chunks */

static int h_astype(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    zc_dtype dt;
    if (as_dtype(&args[1], "dtype", &dt) < 0) return -1;
    zc_array *x;
    if (as_array(e, &args[0], "astype", &x) < 0) return -1;
    zc_array *a;
    int rc = zc_astype(x, dt, &a);
    zc_array_release(x);
    if (rc < 0) return fail_zc(e, rc, call->col, "astype");
    return set_array(out, a);
}

static int h_rechunk(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (args[0].kind != V_ARRAY)
        return fail(args[0].col, "rechunk(): x must be an array, got %s", kind_name(&args[0]));
    int ndim;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    if (array_info(e, &args[0], &ndim, shape, NULL, NULL) < 0) return -1;
    int has = as_chunks(&args[1], ndim, shape, chunks);
    if (has < 0) return -1;
    if (!has) return fail(args[1].col, "rechunk(): chunks must be given");
    zc_array *a;
    int rc = zc_rechunk(args[0].arr, chunks, &a);
    if (rc < 0) return fail_zc(e, rc, call->col, "rechunk");
    return set_array(out, a);
}

/* ---- manipulation, cumulative and linear algebra (zcube.h section 9) */

/* An integer or a tuple of integers (n of them, at most max); negatives allowed. */
static int as_int_list(const value *v, const char *what, int max, int *n, int64_t *out)
{
    if (v->kind == V_NUM) {
        *n = 1;
        return as_int(v, what, &out[0]);
    }
    if (v->kind != V_TUPLE) return fail(v->col, "%s must be an integer or a tuple of integers, got %s", what, kind_name(v));
    if (v->n > max) return fail(v->col, "%s: more than %d entries", what, max);
    for (int k = 0; k < v->n; k++)
        if (as_int(&v->items[k], what, &out[k]) < 0) return -1;
    *n = v->n;
    return 0;
}

/* Axes: None (*n = -1), an integer or a tuple of integers. */
static int as_axes(const value *v, const char *what, int *n, int *axes)
{
    if (v->kind == V_NONE) {
        *n = -1;
        return 0;
    }
    int64_t a[ZC_MAX_DIMS];
    if (as_int_list(v, what, ZC_MAX_DIMS, n, a) < 0) return -1;
    for (int k = 0; k < *n; k++) {
        if (a[k] < INT32_MIN + 1 || a[k] > INT32_MAX)
            return fail(v->kind == V_TUPLE ? v->items[k].col : v->col, "%s: axis %lld is out of range", what, (long long)a[k]);
        axes[k] = (int)a[k];
    }
    return 0;
}

/* One axis, or None as ZC_AXIS_NONE when none_ok. */
static int as_axis(const value *v, const char *what, int none_ok, int *axis)
{
    if (v->kind == V_NONE && none_ok) {
        *axis = ZC_AXIS_NONE;
        return 0;
    }
    int64_t a;
    if (as_int(v, what, &a) < 0) return -1;
    if (a < INT32_MIN + 1 || a > INT32_MAX) return fail(v->col, "%s: axis %lld is out of range", what, (long long)a);
    *axis = (int)a;
    return 0;
}

static int need_array(const fdef *f, const value *v, const char *param)
{
    if (v->kind == V_ARRAY) return 0;
    return fail(v->col, "%s(): %s must be an array, got %s", f->name, param, kind_name(v));
}

/* Finish a handler: the library's result or its error at the call. */
static int lib_result(ev *e, const fdef *f, const ex_node *call, int rc, zc_array *const *a, value *out)
{
    if (rc < 0) return fail_zc(e, rc, call->col, f->name);
    return set_array(out, *a); /* read after the call that set it (argument order is unspecified) */
}

static int h_reshape(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int n = 0;
    int64_t shape[ZC_MAX_DIMS];
    if (as_int_list(&args[1], "shape", ZC_MAX_DIMS, &n, shape) < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_reshape(args[0].arr, n, shape, &a), &a, out);
}

static int h_permute(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int n = 0, axes[ZC_MAX_DIMS];
    if (as_axes(&args[1], "axes", &n, axes) < 0) return -1;
    int ndim;
    if (array_info(e, &args[0], &ndim, NULL, NULL, NULL) < 0) return -1;
    if (n < 0) { /* transpose(x): reverse the axes */
        if (!strcmp(f->api, "permute_dims")) return fail(args[1].col, "permute_dims(): axes must be given");
        n = ndim;
        for (int d = 0; d < ndim; d++) axes[d] = ndim - 1 - d;
    }
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_permute_dims(args[0].arr, axes, n, &a), &a, out);
}

static int h_moveaxis(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int ns = 0, nd = 0, src[ZC_MAX_DIMS], dst[ZC_MAX_DIMS];
    if (as_axes(&args[1], "source", &ns, src) < 0 || as_axes(&args[2], "destination", &nd, dst) < 0) return -1;
    if (ns < 0 || nd < 0 || ns != nd)
        return fail(args[2].col, "moveaxis(): source and destination must have the same number of axes");
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_moveaxis(args[0].arr, src, dst, ns, &a), &a, out);
}

static int h_matrix_transpose(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_matrix_transpose(args[0].arr, &a), &a, out);
}

static int h_expand_dims(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int axis = 0;
    if (args[1].kind != V_NONE && as_axis(&args[1], "axis", 0, &axis) < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_expand_dims(args[0].arr, axis, &a), &a, out);
}

static int h_squeeze(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int n = 0, axes[ZC_MAX_DIMS];
    if (as_axes(&args[1], "axis", &n, axes) < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_squeeze(args[0].arr, axes, n < 0 ? 0 : n, &a), &a, out);
}

static int h_broadcast_to(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int n = 0;
    int64_t shape[ZC_MAX_DIMS];
    if (as_shape(&args[1], "shape", &n, shape) < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_broadcast_to(args[0].arr, n, shape, &a), &a, out);
}

/* A tuple or list of arrays (numbers become 0-d weak scalars); *n arrays retained into arr. */
static int as_arrays(ev *e, const fdef *f, const value *v, zc_array **arr, int max, int *n)
{
    if (v->kind != V_TUPLE || v->n == 0)
        return fail(v->col, "%s(): arrays must be a non-empty tuple or list of arrays, got %s", f->name, kind_name(v));
    if (v->n > max) return fail(v->col, "%s(): more than %d arrays", f->name, max);
    for (int k = 0; k < v->n; k++) {
        if (v->items[k].kind != V_ARRAY) {
            for (int j = 0; j < k; j++) zc_array_release(arr[j]);
            return fail(v->items[k].col, "%s(): expected arrays, got %s", f->name, kind_name(&v->items[k]));
        }
        arr[k] = v->items[k].arr;
        zc_array_retain(arr[k]);
    }
    *n = v->n;
    return 0;
}

static int h_join(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    zc_array *arr[256];
    int n = 0, axis = 0, stack = !strcmp(f->api, "stack");
    if (args[1].kind != V_NONE || stack) {
        if (args[1].kind != V_NONE && as_axis(&args[1], "axis", 0, &axis) < 0) return -1;
    }
    if (!stack && args[1].kind == V_NONE && call) {
        /* concat(arrays) is axis 0; concat(arrays, axis=None) flattens */
        for (int k = 0; k < call->nkw; k++)
            if (!strcmp(call->kwnames[k], "axis") && call->kwvalues[k]->kind == EX_NONE) axis = ZC_AXIS_NONE;
        if (call->nitems > 1 && call->items[1]->kind == EX_NONE) axis = ZC_AXIS_NONE;
    }
    if (as_arrays(e, f, &args[0], arr, 256, &n) < 0) return -1;
    zc_array *a = NULL;
    int rc = stack ? zc_stack(n, arr, axis, &a) : zc_concat(n, arr, axis, &a);
    for (int k = 0; k < n; k++) zc_array_release(arr[k]);
    return lib_result(e, f, call, rc, &a, out);
}

static int h_flip(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int n = 0, axes[ZC_MAX_DIMS];
    if (as_axes(&args[1], "axis", &n, axes) < 0) return -1;
    if (n == 0) { /* flip(x, axis=()) changes nothing */
        zc_array_retain(args[0].arr);
        return set_array(out, args[0].arr);
    }
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_flip(args[0].arr, axes, n < 0 ? 0 : n, &a), &a, out);
}

static int h_roll(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int ns = 0, na = 0, axes[ZC_MAX_DIMS];
    int64_t shifts[ZC_MAX_DIMS];
    if (as_int_list(&args[1], "shift", ZC_MAX_DIMS, &ns, shifts) < 0 || as_axes(&args[2], "axis", &na, axes) < 0)
        return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_roll(args[0].arr, shifts, ns, axes, na < 0 ? 0 : na, &a), &a, out);
}

static int h_repeat(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int64_t k;
    int axis;
    if (args[1].kind == V_ARRAY || args[1].kind == V_TUPLE)
        return fail(args[1].col, "repeat(): repeats must be one integer (per-element repeats are not supported)");
    if (as_int(&args[1], "repeats", &k) < 0 || as_axis(&args[2], "axis", 1, &axis) < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_repeat(args[0].arr, k, axis, &a), &a, out);
}

static int h_tile(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int n = 0;
    int64_t reps[ZC_MAX_DIMS];
    if (as_int_list(&args[1], "reps", ZC_MAX_DIMS, &n, reps) < 0) return -1;
    zc_array *a = NULL;
    return lib_result(e, f, call, zc_tile(args[0].arr, reps, n, &a), &a, out);
}

static int h_take(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    if (args[1].kind == V_ARRAY)
        return fail(args[1].col, "take(): indices must be integers written in the expression (a list or tuple), not "
                    "an array");
    int axis;
    if (as_axis(&args[2], "axis", 1, &axis) < 0) return -1;
    const value *iv = &args[1];
    int64_t n = iv->kind == V_TUPLE ? iv->n : 1;
    int64_t *idx = malloc(sizeof *idx * (size_t)(n ? n : 1));
    if (!idx) return cli_seterr("out of memory");
    for (int64_t k = 0; k < n; k++)
        if (as_int(iv->kind == V_TUPLE ? &iv->items[k] : iv, "indices", &idx[k]) < 0) {
            free(idx);
            return -1;
        }
    zc_array *a = NULL, *r = NULL;
    int rc = zc_take(args[0].arr, idx, n, axis, &a);
    free(idx);
    if (rc == 0 && iv->kind != V_TUPLE) { /* a scalar index drops the axis, as NumPy does */
        int ndim, ax = axis == ZC_AXIS_NONE ? 0 : axis;
        zc_array_info(a, &ndim, NULL, NULL, NULL);
        if (ax < 0) ax += ndim;
        rc = zc_squeeze(a, &ax, 1, &r);
        zc_array_release(a);
        a = r;
    }
    return lib_result(e, f, call, rc, &a, out);
}

static int h_diff(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int64_t n = 1;
    int axis = -1;
    if (args[1].kind != V_NONE && as_int(&args[1], "n", &n) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return fail(args[1].col, "diff(): n must be >= 0, got %lld", (long long)n);
    if (args[2].kind != V_NONE && as_axis(&args[2], "axis", 0, &axis) < 0) return -1;
    zc_array *pa[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (args[3 + k].kind != V_NONE && as_array(e, &args[3 + k], k ? "append" : "prepend", &pa[k]) < 0) {
            zc_array_release(pa[0]);
            return -1;
        }
    zc_array *a = NULL;
    int rc = zc_diff(args[0].arr, axis, (int)n, pa[0], pa[1], &a);
    zc_array_release(pa[0]);
    zc_array_release(pa[1]);
    return lib_result(e, f, call, rc, &a, out);
}

static int h_tri(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int64_t k = 0;
    if (args[1].kind != V_NONE && as_int(&args[1], "k", &k) < 0) return -1;
    zc_array *a = NULL;
    int rc = !strcmp(f->api, "tril") ? zc_tril(args[0].arr, k, &a) : zc_triu(args[0].arr, k, &a);
    return lib_result(e, f, call, rc, &a, out);
}

static int h_cumulative(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    if (need_array(f, &args[0], "x") < 0) return -1;
    int axis, initial = 0;
    zc_dtype dt = ZC_DTYPE_INVALID;
    if (as_axis(&args[1], "axis", 1, &axis) < 0) return -1;
    if (args[2].kind != V_NONE && as_dtype(&args[2], "dtype", &dt) < 0) return -1;
    if (args[3].kind != V_NONE && as_bool(&args[3], "include_initial", &initial) < 0) return -1;
    zc_array *x = args[0].arr, *flat = NULL;
    int ndim;
    if (array_info(e, &args[0], &ndim, NULL, NULL, NULL) < 0) return -1;
    if (axis == ZC_AXIS_NONE && ndim > 1 && (!strcmp(f->name, "cumsum") || !strcmp(f->name, "cumprod"))) {
        int64_t m1 = -1; /* NumPy's cumsum(x) runs over the flattened array */
        int rc = zc_reshape(x, 1, &m1, &flat);
        if (rc < 0) return fail_zc(e, rc, call->col, f->name);
        x = flat;
    }
    zc_array *a = NULL;
    int rc = !strcmp(f->api, "cumulative_sum") ? zc_cumulative_sum(x, axis, dt, initial, &a)
                                               : zc_cumulative_prod(x, axis, dt, initial, &a);
    zc_array_release(flat);
    return lib_result(e, f, call, rc, &a, out);
}

static int h_linalg(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    /* arguments first (errors at their columns), then the library call */
    int axis = -1, n1 = 2, n2 = 2, pairs = 0, a1[ZC_MAX_DIMS], a2[ZC_MAX_DIMS];
    if (!strcmp(f->api, "vecdot") && args[2].kind != V_NONE && as_axis(&args[2], "axis", 0, &axis) < 0) return -1;
    if (!strcmp(f->api, "tensordot")) { /* axes = N, or (axes1, axes2) */
        const value *av = &args[2];
        if (av->kind == V_TUPLE) {
            if (av->n != 2) return fail(av->col, "tensordot(): axes must be an integer or a pair of axis lists");
            if (as_axes(&av->items[0], "axes", &n1, a1) < 0 || as_axes(&av->items[1], "axes", &n2, a2) < 0) return -1;
            if (n1 != n2 || n1 < 0) return fail(av->col, "tensordot(): the two axis lists differ in length");
            pairs = 1;
        } else if (av->kind != V_NONE) {
            int64_t k;
            if (as_int(av, "axes", &k) < 0) return -1;
            if (k < 0 || k > ZC_MAX_DIMS) return fail(av->col, "tensordot(): axes must be >= 0, got %lld", (long long)k);
            n1 = (int)k;
        }
    }
    zc_array *x[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (as_array(e, &args[k], f->name, &x[k]) < 0) {
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
    return lib_result(e, f, call, rc, &a, out);
}

/* ------------------------------------------------------------ the walk */

static int eval_tuple(ev *e, const ex_node *n, value *out)
{
    memset(out, 0, sizeof *out);
    out->kind = V_TUPLE;
    out->col = n->col;
    if (n->nitems && !(out->items = calloc((size_t)n->nitems, sizeof *out->items)))
        return cli_seterr("out of memory");
    for (int i = 0; i < n->nitems; i++) {
        if (eval_node(e, n->items[i], &out->items[i]) < 0) {
            value_clear(out);
            return -1;
        }
        out->n = i + 1;
    }
    return 0;
}

static int eval_slice(ev *e, const ex_node *n, value *out)
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
        } else if (eval_node(e, parts[k], &out->items[k]) < 0) {
            value_clear(out);
            return -1;
        }
    }
    return 0;
}

/* x.T (all axes reversed, as NumPy) and x.mT (the last two swapped) */
static int eval_transpose_attr(ev *e, const ex_node *n, value *out)
{
    value a;
    if (eval_node(e, n->a, &a) < 0) return -1;
    if (a.kind != V_ARRAY) {
        int rc = fail(n->col, "'.%s' applies to arrays, not %s", n->str, kind_name(&a));
        value_clear(&a);
        return rc;
    }
    value args[2];
    memset(args, 0, sizeof args);
    args[0] = a;
    args[1].kind = V_NONE;
    args[1].col = n->col;
    static const fdef T_DEF = {"T", "x,axes", 1, 2, h_permute, "transpose", 0};
    static const fdef MT_DEF = {"mT", "x", 1, 1, h_matrix_transpose, "matrix_transpose", 0};
    int rc = !strcmp(n->str, "T") ? h_permute(e, &T_DEF, n, args, out) : h_matrix_transpose(e, &MT_DEF, n, args, out);
    if (rc == 0) out->col = n->col;
    value_clear(&a);
    return rc;
}

static int eval_node(ev *e, const ex_node *n, value *out)
{
    memset(out, 0, sizeof *out);
    out->col = n->col;
    switch (n->kind) {
    case EX_NUM:
        if (n->is_int) set_int(out, n->ival, n->col);
        else set_float(out, n->fval, n->col);
        return 0;
    case EX_BOOL: set_bool(out, (int)n->ival, n->col); return 0;
    case EX_STR:
        out->kind = V_STR;
        out->s = n->str;
        return 0;
    case EX_NONE: out->kind = V_NONE; return 0;
    case EX_ELLIPSIS: out->kind = V_ELLIPSIS; return 0;
    case EX_NAME: return eval_name(e, n, out);
    case EX_TUPLE: return eval_tuple(e, n, out);
    case EX_SLICE: return eval_slice(e, n, out);
    case EX_CALL: return eval_call(e, n, out);
    case EX_SUBSCRIPT: return eval_subscript(e, n, out);
    case EX_UNARY: return eval_unary(e, n, out);
    case EX_BINARY: return eval_binary(e, n, out);
    case EX_ATTR:
        if (!strcmp(n->str, "T") || !strcmp(n->str, "mT")) return eval_transpose_attr(e, n, out);
        if (n->a->kind == EX_NAME && (!strcmp(n->a->str, "random") || !strcmp(n->a->str, "np")))
            return fail(n->col, "'%s.%s' is a function: call it", n->a->str, n->str);
        return fail(n->col, "attribute access ('.%s') is not supported", n->str);
    }
    return fail(n->col, "unsupported expression");
}

int ex_eval(const ex_tree *t, const ex_binding *vars, int nvars, zc_array **out, int *status)
{
    *out = NULL;
    if (status) *status = 0;
    ev e = {vars, nvars, 0};
    const ex_node *root = ex_root(t);
    value v;
    int rc = eval_node(&e, root, &v);
    if (rc == 0) {
        if (v.kind == V_ARRAY) {
            *out = v.arr;
            v.kind = V_NONE;
        } else if (v.kind == V_NUM) {
            /* a Python number: a 0-d array of its default dtype */
            int zrc = zc_full(0, NULL, NULL, default_dtype(&v), num_f(&v), out);
            if (zrc < 0) rc = fail_zc(&e, zrc, root->col, "full");
        } else {
            if (v.kind == V_TUPLE)
                rc = fail(root->col, "the expression gives a tuple of %d values, not an array: index it, as in svd(a)[1]",
                          v.n);
            else
                rc = fail(root->col, "the expression gives %s, not an array", kind_name(&v));
        }
        value_clear(&v);
    }
    if (status) *status = e.status;
    return rc;
}

/* ---- decompositions and solvers (zcube.h, "linear algebra: decompositions and solvers") */

static int h_decomp(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    const char *api = f->api;
    int two = !strcmp(api, "solve") || !strcmp(api, "lstsq");
    for (int k = 0; k <= two; k++)
        if (args[k].kind != V_ARRAY)
            return fail(args[k].col, "%s(): %s must be an array, got %s", f->name, k ? "b" : "a", kind_name(&args[k]));
    zc_array *a = args[0].arr, *r[4] = {NULL, NULL, NULL, NULL};
    int n = 1, rc;
    if (!strcmp(api, "qr")) {
        if (args[1].kind != V_NONE && (args[1].kind != V_STR || strcmp(args[1].s, "reduced")))
            return fail(args[1].col, "qr(): only mode=\"reduced\" is supported");
        rc = zc_qr(a, &r[0], &r[1]);
        n = 2;
    } else if (!strcmp(api, "svd")) {
        int full = 0;
        if (args[1].kind != V_NONE && as_bool(&args[1], "full_matrices", &full) < 0) return -1;
        if (full) return fail(args[1].col, "svd(): full_matrices=True is not supported (use full_matrices=False)");
        rc = zc_svd(a, &r[0], &r[1], &r[2]);
        n = 3;
    } else if (!strcmp(api, "svdvals")) {
        rc = zc_svdvals(a, &r[0]);
    } else if (!strcmp(api, "svd_compressed")) {
        int64_t k, over = 10, power = 0, seed = 0;
        if (as_int(&args[1], "k", &k) < 0) return -1;
        if (args[2].kind != V_NONE && as_int(&args[2], "n_oversamples", &over) < 0) return -1;
        if (args[3].kind != V_NONE && as_int(&args[3], "n_power_iter", &power) < 0) return -1;
        if (args[4].kind != V_NONE && as_int(&args[4], "seed", &seed) < 0) return -1;
        if (power < 0 || power > 1000) return fail(args[3].col, "svd_compressed(): n_power_iter must be in 0..1000");
        if (seed < 0) return fail(args[4].col, "seed must be >= 0");
        rc = zc_svd_compressed(a, k, over, (int)power, (uint64_t)seed, &r[0], &r[1], &r[2]);
        n = 3;
    } else if (!strcmp(api, "solve")) {
        rc = zc_solve(a, args[1].arr, &r[0]);
    } else if (!strcmp(api, "cholesky")) {
        int upper = 0;
        if (args[1].kind != V_NONE && as_bool(&args[1], "upper", &upper) < 0) return -1;
        rc = zc_cholesky(a, &r[0]);
        if (rc == 0 && upper) {
            zc_array *l = r[0];
            rc = zc_matrix_transpose(l, &r[0]);
            zc_array_release(l);
        }
    } else if (!strcmp(api, "inv")) {
        rc = zc_inv(a, &r[0]);
    } else {
        if (args[2].kind != V_NONE)
            return fail(args[2].col, "lstsq(): rcond is fixed at eps * max(M, N) (NumPy's default); leave it out");
        rc = zc_lstsq(a, args[1].arr, &r[0], &r[1], &r[2], &r[3]);
        n = 4;
    }
    if (rc < 0) return fail_zc(e, rc, call->col, f->name);
    if (n == 1) return set_array(out, r[0]);
    memset(out, 0, sizeof *out);
    out->kind = V_TUPLE;
    out->items = calloc((size_t)n, sizeof(value));
    if (!out->items) {
        for (int k = 0; k < n; k++) zc_array_release(r[k]);
        out->kind = V_NONE;
        return fail(call->col, "out of memory");
    }
    out->n = n;
    for (int k = 0; k < n; k++) {
        out->items[k].kind = V_ARRAY;
        out->items[k].arr = r[k];
        out->items[k].col = call->col;
    }
    return 0;
}

/* ------------------------------------------------------------ fft extension */

/* An int or a tuple/list of ints (axes=, s=) into v; *n = count. */
static int int_list(const value *a, const char *what, int64_t *v, int max, int *n)
{
    if (a->kind == V_TUPLE) {
        if (a->n > max) return fail(a->col, "%s has %d entries (at most %d)", what, a->n, max);
        for (int k = 0; k < a->n; k++)
            if (as_int(&a->items[k], what, &v[k]) < 0) return -1;
        *n = a->n;
        return 0;
    }
    if (as_int(a, what, &v[0]) < 0) return -1;
    *n = 1;
    return 0;
}

static int fft_norm(const value *a, const char **norm)
{
    *norm = NULL;
    if (a->kind == V_NONE) return 0;
    if (a->kind != V_STR) return fail(a->col, "norm must be a string (\"backward\", \"ortho\" or \"forward\"), got %s", kind_name(a));
    *norm = a->s;
    return 0;
}

static int h_fft(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    static const struct { const char *name; int (*fn)(zc_array *, int64_t, int, const char *, zc_array **); } T[] = {
        {"fft", zc_fft_fft}, {"ifft", zc_fft_ifft}, {"rfft", zc_fft_rfft},
        {"irfft", zc_fft_irfft}, {"hfft", zc_fft_hfft}, {"ihfft", zc_fft_ihfft}};
    zc_array *x;
    if (as_array(e, &args[0], "x", &x) < 0) return -1;
    int64_t n = -1, axis = -1;
    const char *norm;
    int rc = 0;
    if (args[1].kind != V_NONE && (rc = as_int(&args[1], "n", &n)) == 0 && n < 1)
        rc = fail(args[1].col, "%s(): n must be >= 1 (got %lld)", f->api, (long long)n);
    if (rc == 0 && args[2].kind != V_NONE) rc = as_int(&args[2], "axis", &axis);
    if (rc == 0 && (axis < INT32_MIN || axis > INT32_MAX)) rc = fail(args[2].col, "axis %lld is out of range", (long long)axis);
    if (rc == 0) rc = fft_norm(&args[3], &norm);
    if (rc < 0) {
        zc_array_release(x);
        return -1;
    }
    zc_array *r = NULL;
    for (size_t k = 0; k < sizeof T / sizeof T[0]; k++)
        if (!strcmp(T[k].name, f->api)) rc = T[k].fn(x, n, (int)axis, norm, &r);
    zc_array_release(x);
    if (rc < 0) return fail_zc(e, rc, call->col, f->api);
    return set_array(out, r);
}

static int h_fftn(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    zc_array *x;
    if (as_array(e, &args[0], "x", &x) < 0) return -1;
    int64_t s[ZC_MAX_DIMS], ax64[ZC_MAX_DIMS];
    int ns = 0, na = 0, axes[ZC_MAX_DIMS];
    const char *norm;
    int rc = 0;
    if (args[1].kind != V_NONE) rc = int_list(&args[1], "s", s, ZC_MAX_DIMS, &ns);
    for (int k = 0; rc == 0 && k < ns; k++)
        if (s[k] < 1 && s[k] != -1) rc = fail(args[1].col, "%s(): s entries must be >= 1 (got %lld)", f->api, (long long)s[k]);
    if (rc == 0 && args[2].kind != V_NONE) rc = int_list(&args[2], "axes", ax64, ZC_MAX_DIMS, &na);
    for (int k = 0; rc == 0 && k < na; k++) {
        if (ax64[k] < -ZC_MAX_DIMS || ax64[k] >= ZC_MAX_DIMS) rc = fail(args[2].col, "axis %lld is out of range", (long long)ax64[k]);
        axes[k] = (int)ax64[k];
    }
    if (rc == 0 && args[2].kind != V_NONE && na == 0) rc = fail(args[2].col, "%s(): axes is empty", f->api);
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
    if (rc < 0) return fail_zc(e, rc, call->col, f->api);
    return set_array(out, r);
}

static int h_fftfreq(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    int64_t n;
    double d = 1;
    zc_dtype dt = ZC_FLOAT64;
    if (as_int(&args[0], "n", &n) < 0) return -1;
    if (args[1].kind != V_NONE && as_number(&args[1], "d", &d) < 0) return -1;
    if (args[2].kind != V_NONE && as_dtype(&args[2], "dtype", &dt) < 0) return -1;
    zc_array *r;
    int rc = !strcmp(f->api, "fftfreq") ? zc_fft_fftfreq(n, d, dt, &r) : zc_fft_rfftfreq(n, d, dt, &r);
    if (rc < 0) return fail_zc(e, rc, call->col, f->api);
    return set_array(out, r);
}

static int h_fftshift(ev *e, const fdef *f, const ex_node *call, value *args, value *out)
{
    zc_array *x;
    if (as_array(e, &args[0], "x", &x) < 0) return -1;
    int64_t ax64[ZC_MAX_DIMS];
    int na = 0, axes[ZC_MAX_DIMS], rc = 0;
    if (args[1].kind != V_NONE) rc = int_list(&args[1], "axes", ax64, ZC_MAX_DIMS, &na);
    for (int k = 0; rc == 0 && k < na; k++) {
        if (ax64[k] < -ZC_MAX_DIMS || ax64[k] >= ZC_MAX_DIMS) rc = fail(args[1].col, "axis %lld is out of range", (long long)ax64[k]);
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
    if (rc < 0) return fail_zc(e, rc, call->col, f->api);
    return set_array(out, r);
}
