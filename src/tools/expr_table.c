/* tools/expr_table.c — the functions of the language: a table of names,
 * Python-like signatures and handlers, NumPy aliases, the names zcube does not
 * offer yet, and suggestions for misspelled names. The elementwise functions
 * (names and arities) are not listed here: they come from the library
 * (zc_elementwise_info). */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "expr_internal.h"

/* names of the array API (and of NumPy) that zcube does not offer yet */
static const char *const UNAVAILABLE[] = {
    "dot", "einsum", "inner", "result_type",
    "can_cast", "finfo", "iinfo", "asarray", "from_dlpack", "isdtype",
    "norm", "median", "quantile", "percentile",
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

#define RED_AXIS_PARAMS "x,axis,keepdims"
static const ex_fdef FUNCS[] = {
    /* reductions (api: the zc_reduce name) */
    {"sum", RED_AXIS_PARAMS ",dtype", 1, 2, ex_fn_reduce, "sum", 0},
    {"prod", RED_AXIS_PARAMS ",dtype", 1, 2, ex_fn_reduce, "prod", 0},
    {"mean", RED_AXIS_PARAMS ",dtype", 1, 2, ex_fn_reduce, "mean", 0},
    {"min", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "min", 0},
    {"max", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "max", 0},
    {"amin", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "min", 0},
    {"amax", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "max", 0},
    {"var", RED_AXIS_PARAMS ",correction|ddof", 1, 2, ex_fn_reduce, "var", 0},
    {"std", RED_AXIS_PARAMS ",correction|ddof", 1, 2, ex_fn_reduce, "std", 0},
    {"argmin", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "argmin", 0},
    {"argmax", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "argmax", 0},
    {"any", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "any", 0},
    {"all", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "all", 0},
    {"count_nonzero", RED_AXIS_PARAMS, 1, 2, ex_fn_reduce, "count_nonzero", 0},
    /* elementwise beyond the 1- and 2-argument tables */
    {"where", "condition,x1,x2", 3, 3, ex_fn_where, "where", 0},
    {"clip", "x,min|a_min,max|a_max", 1, 3, ex_fn_clip, "clip", 0},
    /* creation */
    {"zeros", "shape,dtype,chunks", 1, 2, ex_fn_full, "zeros", 0},
    {"ones", "shape,dtype,chunks", 1, 2, ex_fn_full, "ones", 1},
    {"empty", "shape,dtype,chunks", 1, 2, ex_fn_full, "empty", 0},
    {"full", "shape,fill_value,dtype,chunks", 2, 3, ex_fn_full, "full", 0},
    {"zeros_like", "x,dtype,chunks", 1, 2, ex_fn_full_like, "zeros_like", 0},
    {"ones_like", "x,dtype,chunks", 1, 2, ex_fn_full_like, "ones_like", 1},
    {"empty_like", "x,dtype,chunks", 1, 2, ex_fn_full_like, "empty_like", 0},
    {"full_like", "x,fill_value,dtype,chunks", 2, 3, ex_fn_full_like, "full_like", 0},
    {"arange", "start,stop,step,dtype,chunks", 1, 4, ex_fn_arange, "arange", 0},
    {"linspace", "start,stop,num,endpoint,dtype,chunks", 2, 3, ex_fn_linspace, "linspace", 0},
    {"eye", "n_rows|N,n_cols|M,k,dtype,chunks", 1, 3, ex_fn_eye, "eye", 0},
    {"uniform", "shape|size,low,high,seed,dtype,chunks", 1, 3, ex_fn_random, "uniform", 0},
    {"random.uniform", "shape|size,low,high,seed,dtype,chunks", 1, 3, ex_fn_random, "uniform", 0},
    {"normal", "shape|size,loc|mean,scale|std,seed,dtype,chunks", 1, 3, ex_fn_random, "normal", 0},
    {"random.normal", "shape|size,loc|mean,scale|std,seed,dtype,chunks", 1, 3, ex_fn_random, "normal", 0},
    /* data types and chunks */
    {"astype", "x,dtype", 2, 2, ex_fn_astype, "astype", 0},
    {"rechunk", "x,chunks", 2, 2, ex_fn_rechunk, "rechunk", 0},
    /* manipulation and cumulative (api: the function, or the one an alias stands for) */
    {"reshape", "x,shape|newshape,copy", 2, 2, ex_fn_reshape, "reshape", 0},
    {"permute_dims", "x,axes", 2, 2, ex_fn_permute, "permute_dims", 0},
    {"transpose", "x,axes", 1, 2, ex_fn_permute, "transpose", 0},
    {"moveaxis", "x,source,destination", 3, 3, ex_fn_moveaxis, "moveaxis", 0},
    {"matrix_transpose", "x", 1, 1, ex_fn_matrix_transpose, "matrix_transpose", 0},
    {"expand_dims", "x,axis", 1, 2, ex_fn_expand_dims, "expand_dims", 0},
    {"squeeze", "x,axis", 1, 2, ex_fn_squeeze, "squeeze", 0},
    {"broadcast_to", "x,shape", 2, 2, ex_fn_broadcast_to, "broadcast_to", 0},
    {"concat", "arrays,axis", 1, 2, ex_fn_join, "concat", 0},
    {"concatenate", "arrays,axis", 1, 2, ex_fn_join, "concat", 0},
    {"stack", "arrays,axis", 1, 2, ex_fn_join, "stack", 0},
    {"flip", "x,axis", 1, 2, ex_fn_flip, "flip", 0},
    {"roll", "x,shift,axis", 2, 3, ex_fn_roll, "roll", 0},
    {"repeat", "x,repeats,axis", 2, 3, ex_fn_repeat, "repeat", 0},
    {"tile", "x,repetitions|reps", 2, 2, ex_fn_tile, "tile", 0},
    {"take", "x,indices,axis", 2, 3, ex_fn_take, "take", 0},
    {"unstack", "x,axis", 1, 1, ex_fn_unstack, "unstack", 0},
    {"broadcast_arrays", "a1,a2,a3,a4,a5,a6,a7,a8", 0, 8, ex_fn_several, "broadcast_arrays", 0},
    {"meshgrid", "a1,a2,a3,a4,a5,a6,a7,indexing", 0, 7, ex_fn_several, "meshgrid", 0},
    {"broadcast_shapes", "s1,s2,s3,s4,s5,s6,s7,s8", 0, 8, ex_fn_broadcast_shapes, "broadcast_shapes", 0},
    /* data-dependent sizes: counted when the expression is evaluated (ex_set_spec's bound) */
    {"nonzero", "x", 1, 1, ex_fn_nonzero, "nonzero", 0},
    {"isin", "x1|element,x2|test_elements,invert", 2, 2, ex_fn_isin, "isin", 0},
    {"unique_all", "x", 1, 1, ex_fn_unique, "vinc", 0},
    {"unique_counts", "x", 1, 1, ex_fn_unique, "vc", 0},
    {"unique_inverse", "x", 1, 1, ex_fn_unique, "vn", 0},
    {"unique_values", "x", 1, 1, ex_fn_unique, "v", 0},
    {"diff", "x,n,axis,prepend,append", 1, 3, ex_fn_diff, "diff", 0},
    {"tril", "x,k", 1, 2, ex_fn_tri, "tril", 0},
    {"triu", "x,k", 1, 2, ex_fn_tri, "triu", 0},
    {"cumulative_sum", "x,axis,dtype,include_initial", 1, 2, ex_fn_cumulative, "cumulative_sum", 0},
    {"cumulative_prod", "x,axis,dtype,include_initial", 1, 2, ex_fn_cumulative, "cumulative_prod", 0},
    {"cumsum", "x,axis,dtype,include_initial", 1, 2, ex_fn_cumulative, "cumulative_sum", 0},
    {"cumprod", "x,axis,dtype,include_initial", 1, 2, ex_fn_cumulative, "cumulative_prod", 0},
    {"sort", "x,axis,descending,stable", 1, 2, ex_fn_sort, "sort", 0},
    {"argsort", "x,axis,descending,stable", 1, 2, ex_fn_sort, "argsort", 0},
    {"searchsorted", "x1,x2,side,sorter", 2, 2, ex_fn_searchsorted, "searchsorted", 0},
    {"take_along_axis", "x|arr,indices,axis", 2, 3, ex_fn_take_along_axis, "take_along_axis", 0},
    /* linear algebra (the operator @ is matmul) */
    {"matmul", "x1,x2", 2, 2, ex_fn_linalg, "matmul", 0},
    {"tensordot", "x1,x2,axes", 2, 3, ex_fn_linalg, "tensordot", 0},
    {"vecdot", "x1,x2,axis", 2, 2, ex_fn_linalg, "vecdot", 0},
    {"outer", "x1,x2", 2, 2, ex_fn_linalg, "outer", 0},
    /* decompositions and solvers; several results make a tuple, indexed: svd(a)[1] */
    {"qr", "a|x,mode", 1, 2, ex_fn_decomp, "qr", 0},
    {"linalg.qr", "a|x,mode", 1, 2, ex_fn_decomp, "qr", 0},
    {"svd", "a|x,full_matrices", 1, 2, ex_fn_decomp, "svd", 0},
    {"linalg.svd", "a|x,full_matrices", 1, 2, ex_fn_decomp, "svd", 0},
    {"svdvals", "a|x", 1, 1, ex_fn_decomp, "svdvals", 0},
    {"linalg.svdvals", "a|x", 1, 1, ex_fn_decomp, "svdvals", 0},
    {"svd_compressed", "a|x,k,n_oversamples|oversamples,n_power_iter|power_iters,seed", 2, 2, ex_fn_decomp, "svd_compressed", 0},
    {"linalg.svd_compressed", "a|x,k,n_oversamples|oversamples,n_power_iter|power_iters,seed", 2, 2, ex_fn_decomp, "svd_compressed", 0},
    {"solve", "a|x1,b|x2", 2, 2, ex_fn_decomp, "solve", 0},
    {"linalg.solve", "a|x1,b|x2", 2, 2, ex_fn_decomp, "solve", 0},
    {"cholesky", "a|x,upper", 1, 1, ex_fn_decomp, "cholesky", 0},
    {"linalg.cholesky", "a|x,upper", 1, 1, ex_fn_decomp, "cholesky", 0},
    {"inv", "a|x", 1, 1, ex_fn_decomp, "inv", 0},
    {"linalg.inv", "a|x", 1, 1, ex_fn_decomp, "inv", 0},
    {"det", "a|x", 1, 1, ex_fn_decomp, "det", 0},
    {"linalg.det", "a|x", 1, 1, ex_fn_decomp, "det", 0},
    {"slogdet", "a|x", 1, 1, ex_fn_decomp, "slogdet", 0},
    {"linalg.slogdet", "a|x", 1, 1, ex_fn_decomp, "slogdet", 0},
    {"eigh", "a|x", 1, 1, ex_fn_decomp, "eigh", 0},
    {"linalg.eigh", "a|x", 1, 1, ex_fn_decomp, "eigh", 0},
    {"eigvalsh", "a|x", 1, 1, ex_fn_decomp, "eigvalsh", 0},
    {"linalg.eigvalsh", "a|x", 1, 1, ex_fn_decomp, "eigvalsh", 0},
    {"lstsq", "a,b,rcond", 2, 2, ex_fn_decomp, "lstsq", 0},
    {"linalg.lstsq", "a,b,rcond", 2, 2, ex_fn_decomp, "lstsq", 0},
    /* the rest of the linalg extension (composed in the library) */
    {"diagonal", "x,offset", 1, 1, ex_fn_linalg_ext, "diagonal", 0},
    {"linalg.diagonal", "x,offset", 1, 1, ex_fn_linalg_ext, "diagonal", 0},
    {"trace", "x,offset,dtype", 1, 1, ex_fn_linalg_ext, "trace", 0},
    {"linalg.trace", "x,offset,dtype", 1, 1, ex_fn_linalg_ext, "trace", 0},
    {"vector_norm", "x,axis,keepdims,ord", 1, 1, ex_fn_linalg_ext, "vector_norm", 0},
    {"linalg.vector_norm", "x,axis,keepdims,ord", 1, 1, ex_fn_linalg_ext, "vector_norm", 0},
    {"matrix_norm", "x,keepdims,ord", 1, 1, ex_fn_linalg_ext, "matrix_norm", 0},
    {"linalg.matrix_norm", "x,keepdims,ord", 1, 1, ex_fn_linalg_ext, "matrix_norm", 0},
    {"cross", "x1,x2,axis", 2, 2, ex_fn_linalg_ext, "cross", 0},
    {"linalg.cross", "x1,x2,axis", 2, 2, ex_fn_linalg_ext, "cross", 0},
    {"matrix_power", "x,n", 2, 2, ex_fn_linalg_ext, "matrix_power", 0},
    {"linalg.matrix_power", "x,n", 2, 2, ex_fn_linalg_ext, "matrix_power", 0},
    {"matrix_rank", "x,rtol", 1, 1, ex_fn_linalg_ext, "matrix_rank", 0},
    {"linalg.matrix_rank", "x,rtol", 1, 1, ex_fn_linalg_ext, "matrix_rank", 0},
    {"pinv", "x,rtol", 1, 1, ex_fn_linalg_ext, "pinv", 0},
    {"linalg.pinv", "x,rtol", 1, 1, ex_fn_linalg_ext, "pinv", 0},
    /* the fft extension (also as fft.*): n=, axis=/axes=, norm="backward"|"ortho"|"forward" */
    {"fft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "fft", 0},
    {"fft.fft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "fft", 0},
    {"ifft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "ifft", 0},
    {"fft.ifft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "ifft", 0},
    {"rfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "rfft", 0},
    {"fft.rfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "rfft", 0},
    {"irfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "irfft", 0},
    {"fft.irfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "irfft", 0},
    {"hfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "hfft", 0},
    {"fft.hfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "hfft", 0},
    {"ihfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "ihfft", 0},
    {"fft.ihfft", "x|a,n,axis,norm", 1, 4, ex_fn_fft, "ihfft", 0},
    {"fftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "fftn", 0},
    {"fft.fftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "fftn", 0},
    {"ifftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "ifftn", 0},
    {"fft.ifftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "ifftn", 0},
    {"rfftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "rfftn", 0},
    {"fft.rfftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "rfftn", 0},
    {"irfftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "irfftn", 0},
    {"fft.irfftn", "x|a,s,axes,norm", 1, 4, ex_fn_fftn, "irfftn", 0},
    {"fftfreq", "n,d,dtype", 1, 2, ex_fn_fftfreq, "fftfreq", 0},
    {"fft.fftfreq", "n,d,dtype", 1, 2, ex_fn_fftfreq, "fftfreq", 0},
    {"rfftfreq", "n,d,dtype", 1, 2, ex_fn_fftfreq, "rfftfreq", 0},
    {"fft.rfftfreq", "n,d,dtype", 1, 2, ex_fn_fftfreq, "rfftfreq", 0},
    {"fftshift", "x,axes", 1, 2, ex_fn_fftshift, "fftshift", 0},
    {"fft.fftshift", "x,axes", 1, 2, ex_fn_fftshift, "fftshift", 0},
    {"ifftshift", "x,axes", 1, 2, ex_fn_fftshift, "ifftshift", 0},
    {"fft.ifftshift", "x,axes", 1, 2, ex_fn_fftshift, "ifftshift", 0},
};
#define NFUNCS ((int)(sizeof FUNCS / sizeof FUNCS[0]))

static const ex_fdef UNARY_DEF = {"", "x", 1, 1, ex_fn_unary, NULL, 0};
static const ex_fdef BINARY_DEF = {"", "x1,x2", 2, 2, ex_fn_binary, NULL, 0};

/* The library's elementwise function `api` of 1 or 2 arguments (where is in
 * the table, with its own handler): its name as the library keeps it. */
static const char *elementwise(const char *api, int *nargs)
{
    const char *name;
    for (int i = 0; zc_elementwise_info(i, &name, nargs) == 0; i++)
        if (*nargs <= 2 && !strcmp(name, api)) return name;
    return NULL;
}

/* Look up a function: table entries, then elementwise names (via aliases).
 * `tmp` receives a definition for elementwise names. */
const ex_fdef *ex_find_function(const char *name, ex_fdef *tmp)
{
    for (int i = 0; i < NFUNCS; i++)
        if (!strcmp(FUNCS[i].name, name)) return &FUNCS[i];
    const char *api = name;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (!strcmp(ALIASES[i][0], name)) api = ALIASES[i][1];
    int nargs;
    if (!api || !(api = elementwise(api, &nargs))) return NULL;
    *tmp = nargs == 1 ? UNARY_DEF : BINARY_DEF;
    tmp->name = name;
    tmp->api = api;
    return tmp;
}

int ex_is_unavailable(const char *name)
{
    const char *base = strrchr(name, '.');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof UNAVAILABLE / sizeof UNAVAILABLE[0]; i++)
        if (!strcmp(UNAVAILABLE[i], base)) return 1;
    return !strcmp(name, "fmax") || !strcmp(name, "fmin");
}

int ex_is_function(const char *name)
{
    ex_fdef tmp;
    return ex_find_function(name, &tmp) != NULL || ex_is_unavailable(name);
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
const char *ex_suggest(const char *name)
{
    const char *best = NULL, *ew;
    int bd = 3, nargs;
    for (int i = 0; i < NFUNCS; i++) {
        int d = edit_distance(name, FUNCS[i].name);
        if (d < bd) bd = d, best = FUNCS[i].name;
    }
    for (int i = 0; zc_elementwise_info(i, &ew, &nargs) == 0; i++) {
        int d = edit_distance(name, ew);
        if (d < bd) bd = d, best = ew;
    }
    return best;
}
