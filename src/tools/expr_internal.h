/* tools/expr_internal.h — internals shared by the evaluator's files (the
 * tree into a lazy array; the language is in expr.h).
 *
 *   expr_parse.c      the text into a tree (expr.h)
 *   expr_value.c      values (arrays, Python numbers, strings, dtypes, tuples,
 *                     slices), errors at a column, and conversions of values
 *                     into the library's arguments
 *   expr_fold.c       Python numbers: operators with Python's arithmetic;
 *                     functions of numbers computed by the library
 *   expr_table.c      the function table: names, signatures, handlers; the
 *                     elementwise names and arities come from the library
 *   expr_bind.c       a call: arguments bound to parameters, then its handler
 *   expr_eval.c       the walk over the tree (names, operators, subscripts)
 *   expr_fn_*.c       the handlers, by family (elementwise and reductions,
 *                     creation, manipulation, linear algebra, fft)
 *
 * Values during evaluation are arrays (one reference each), Python numbers
 * (folded with Python's semantics while both operands are numbers, so
 * `axis=-1` or `2**10` stay numbers; next to an array a number becomes a
 * "weak" zc_scalar), strings, dtypes (bare names like float32), None, ...,
 * slices and tuples. Every failure sets cli_lasterr() to "at column N: what"
 * and returns -1. */
#ifndef ZC_TOOLS_EXPR_INTERNAL_H
#define ZC_TOOLS_EXPR_INTERNAL_H

#include <stdint.h>

#include "expr.h"

/* ------------------------------------------------------------ values (expr_value.c) */

typedef enum { V_NONE, V_NUM, V_STR, V_ARRAY, V_DTYPE, V_TUPLE, V_ELLIPSIS, V_SLICE } ex_vkind;

typedef struct ex_value ex_value;
struct ex_value {
    ex_vkind kind;
    int col;             /* column of the expression that made it */
    int is_int, is_bool; /* V_NUM: Python int (i) / bool (i = 0/1) / float (f) */
    int64_t i;
    double f;
    const char *s;       /* V_STR (points into the tree) */
    zc_dtype dtype;      /* V_DTYPE */
    zc_array *arr;       /* V_ARRAY: one reference */
    int n;               /* V_TUPLE items / V_SLICE: 3 parts (kind V_NONE when omitted) */
    ex_value *items;
};

/* The evaluation's context. */
typedef struct {
    const ex_binding *vars;
    int nvars;
    int status; /* library status of the failure, 0 if none */
} ex_ctx;

void ex_value_clear(ex_value *v);
const char *ex_kind_name(const ex_value *v); /* "an integer", "a tuple" ... for messages */
double ex_num_f(const ex_value *v);
void ex_set_int(ex_value *v, int64_t i, int col);
void ex_set_bool(ex_value *v, int b, int col);
void ex_set_float(ex_value *v, double f, int col);
int ex_set_array(ex_value *out, zc_array *a); /* takes the reference; returns 0 */
/* A tuple of n arrays (their references move into it; released on failure). */
int ex_set_tuple(ex_value *out, zc_array *const *r, int64_t n, int col);
/* Default dtype of a Python number: bool, int64 or float64. */
zc_dtype ex_default_dtype(const ex_value *v);

/* A failed library call: its message (prefixed by `what` unless it names it). */
int ex_fail_zc(ex_ctx *e, int rc, int col, const char *what);

/* Conversions; each fails at the value's column, naming `what`. */
int ex_as_array(ex_ctx *e, const ex_value *v, const char *what, zc_array **arr); /* numbers: weak scalars */
int ex_as_int(const ex_value *v, const char *what, int64_t *out);
int ex_as_number(const ex_value *v, const char *what, double *out);
int ex_as_bool(const ex_value *v, const char *what, int *out);
int ex_as_dtype(const ex_value *v, const char *what, zc_dtype *out);
int ex_as_shape(const ex_value *v, const char *what, int *ndim, int64_t *shape);
/* 1 when chunks were given, 0 for automatic (None), -1 on error. */
int ex_as_chunks(const ex_value *v, int ndim, const int64_t *shape, int64_t *chunks);
int ex_as_int_list(const ex_value *v, const char *what, int max, int *n, int64_t *out);
int ex_as_axes(const ex_value *v, const char *what, int *n, int *axes); /* None: *n = -1 */
int ex_as_axis(const ex_value *v, const char *what, int none_ok, int *axis);
int ex_array_info(ex_ctx *e, const ex_value *v, int *ndim, int64_t *shape, int64_t *chunks, zc_dtype *dtype);

/* ------------------------------------------------------------ Python numbers (expr_fold.c) */

/* An operator on two numbers, with Python's arithmetic (overflow is an error). */
int ex_fold_operator(ex_op op, const ex_value *a, const ex_value *b, int col, ex_value *out);
/* A unary operator (- + ~ not) on a number. */
int ex_fold_unary_operator(ex_op op, const ex_value *a, int col, ex_value *out);
/* An elementwise function of numbers: 1 folded into *out, 0 left to the
 * library's arrays, -1 failed. */
int ex_fold_function(const char *api, int nargs, const ex_value *args, int col, ex_value *out);

/* ------------------------------------------------------------ functions (expr_table.c, expr_bind.c) */

typedef struct ex_fdef ex_fdef;
typedef int (*ex_handler)(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out);

#define EX_MAXPARAMS 8
struct ex_fdef {
    const char *name;   /* name in expressions ("random.uniform" for a dotted one) */
    const char *params; /* "x,axis,keepdims": in order; "a|b" = b is another keyword for a */
    int nreq;           /* leading parameters that are required */
    int npos;           /* how many may be given positionally */
    ex_handler fn;
    const char *api;    /* elementwise: the array API name; else a detail for the handler */
    double k;           /* handler detail (fill value of zeros/ones) */
};

/* Look a function up (`tmp` receives the definition of an elementwise name). */
const ex_fdef *ex_find_function(const char *name, ex_fdef *tmp);
/* A name of the array API or NumPy that zcube does not offer. */
int ex_is_unavailable(const char *name);
/* The closest known function name within 2 edits, or NULL. */
const char *ex_suggest(const char *name);

int ex_eval_node(ex_ctx *e, const ex_node *n, ex_value *out);
int ex_eval_call(ex_ctx *e, const ex_node *n, ex_value *out);

/* ------------------------------------------------------------ handlers (expr_fn_*.c) */

/* An elementwise library call on arrays or numbers (numbers as weak scalars). */
int ex_call_ew(ex_ctx *e, const char *api, int nargs, const ex_value *args, int col, ex_value *out);
int ex_need_array(const ex_fdef *f, const ex_value *v, const char *param);
int ex_lib_result(ex_ctx *e, const ex_fdef *f, const ex_node *call, int rc, zc_array *const *a, ex_value *out);
int ex_as_arrays(ex_ctx *e, const ex_fdef *f, const ex_value *v, zc_array **arr, int max, int *n);

#define EX_HANDLER(name) int ex_fn_##name(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
EX_HANDLER(unary);
EX_HANDLER(binary);
EX_HANDLER(where);
EX_HANDLER(clip);
EX_HANDLER(reduce);
EX_HANDLER(astype);
EX_HANDLER(rechunk);
EX_HANDLER(full);
EX_HANDLER(full_like);
EX_HANDLER(arange);
EX_HANDLER(linspace);
EX_HANDLER(eye);
EX_HANDLER(random);
EX_HANDLER(reshape);
EX_HANDLER(permute);
EX_HANDLER(moveaxis);
EX_HANDLER(matrix_transpose);
EX_HANDLER(expand_dims);
EX_HANDLER(squeeze);
EX_HANDLER(broadcast_to);
EX_HANDLER(join);
EX_HANDLER(flip);
EX_HANDLER(roll);
EX_HANDLER(repeat);
EX_HANDLER(tile);
EX_HANDLER(take);
EX_HANDLER(unstack);
EX_HANDLER(several); /* broadcast_arrays, meshgrid */
EX_HANDLER(broadcast_shapes);
EX_HANDLER(nonzero);
EX_HANDLER(isin);
EX_HANDLER(unique);
EX_HANDLER(diff);
EX_HANDLER(tri);
EX_HANDLER(cumulative);
EX_HANDLER(sort); /* expr_fn_sort.c */
EX_HANDLER(searchsorted);
EX_HANDLER(take_along_axis);
EX_HANDLER(linalg);
EX_HANDLER(decomp);
EX_HANDLER(linalg_ext);
EX_HANDLER(fft);
EX_HANDLER(fftn);
EX_HANDLER(fftfreq);
EX_HANDLER(fftshift);

/* ------------------------------------------------------------ data-dependent sizes (expr_fn_select.c) */

/* The bound set by ex_set_spec, or ex_fail naming `what` when there is none. */
int ex_need_count_spec(int col, const char *what);
/* Entry adv of subscript idx (nidx entries) of x is the array or list v: a bool
 * array is x[mask] (the only entry: *mask = 1, *out the selection); integers
 * take along the input dim the entry indexes (*out; the entry becomes ':', or
 * an integer for a 0-d array), the other entries then apply as basic indices. */
int ex_array_index(ex_ctx *e, zc_array *x, zc_index *idx, int nidx, int adv, const ex_value *v, zc_array **out,
                   int *mask);
/* x[i0, i1, ...] with two or more integer arrays (1-D, or lists) and integers,
 * nothing else (the array API's integer array indexing): the entries broadcast
 * to one length n; element j is x at (i0[j], i1[j], ...), the dims after the
 * entries kept: a take of positions in x flattened over the indexed dims. */
int ex_int_arrays_index(ex_ctx *e, zc_array *x, const ex_value *items, int nitems, zc_array **out);
/* n integers held in memory for `what` (indices made from data): under the bound
 * (an eighth of it), else ex_fail. */
int ex_check_held(int col, const char *what, int64_t n);
/* The integers of v, a list written in the expression or a 1-D (or 0-d) integer
 * array computed now under the bound (at most an eighth of it); *vals malloc'd,
 * *n of them, *ndim 0 for a single integer or 0-d array, else 1. `what` names
 * v in errors. */
int ex_int_values(ex_ctx *e, const ex_value *v, const char *what, int64_t **vals, int64_t *n, int *ndim);

#endif
