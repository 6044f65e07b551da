/* tests/test_cli_eval.c — unit tests of the `zcube eval` evaluator
 * (src/tools/expr_eval.c) over the public lazy-array API: shapes, dtypes and
 * chunks of what expressions build, Python-number folding, argument binding,
 * and errors with their columns and exit classes (library status or not).
 * End-to-end comparisons with NumPy are in tests/cli/eval_numpy.py. */
#include <math.h>
#include <stdint.h>

#include "cli_util.h"
#include "expr.h"
#include "harness.h"

/* u: float32 (6, 10) chunks (4, 3), values 0..59; k: int16 (10,) values -5..4 */
typedef struct {
    zc_array *u, *k;
    ex_binding vars[2];
} env;

static void env_init(env *e)
{
    float uv[60];
    int16_t kv[10];
    for (int i = 0; i < 60; i++) uv[i] = (float)i;
    for (int i = 0; i < 10; i++) kv[i] = (int16_t)(i - 5);
    int64_t us[2] = {6, 10}, uc[2] = {4, 3}, ks[1] = {10}, kc[1] = {4};
    CHECK_OK(zc_asarray(uv, ZC_FLOAT32, 2, us, uc, &e->u));
    CHECK_OK(zc_asarray(kv, ZC_INT16, 1, ks, kc, &e->k));
    e->vars[0] = (ex_binding){"u", e->u};
    e->vars[1] = (ex_binding){"k", e->k};
}

static void env_free(env *e)
{
    zc_array_release(e->u);
    zc_array_release(e->k);
}

/* Evaluate; on failure print the message and return NULL. */
static zc_array *ev(env *e, const char *src)
{
    ex_tree *t;
    if (ex_parse(src, &t) < 0) {
        fprintf(stderr, "  parse \"%s\": %s\n", src, cli_lasterr());
        return NULL;
    }
    zc_array *a = NULL;
    int status;
    if (ex_eval(t, e->vars, 2, &a, &status) < 0) fprintf(stderr, "  eval \"%s\": %s\n", src, cli_lasterr());
    ex_free(t);
    return a;
}

/* Shape and dtype of the result of `src`. */
static int has(env *e, const char *src, zc_dtype dtype, int ndim, const int64_t *shape)
{
    zc_array *a = ev(e, src);
    if (!a) return 0;
    int nd;
    int64_t sh[ZC_MAX_DIMS];
    zc_dtype dt;
    int ok = zc_array_info(a, &nd, sh, NULL, &dt) == 0 && nd == ndim && dt == dtype;
    for (int d = 0; ok && d < nd; d++) ok = sh[d] == shape[d];
    if (!ok) {
        fprintf(stderr, "  \"%s\": dtype %s ndim %d (", src, zc_dtype_name(dt), nd);
        for (int d = 0; d < nd; d++) fprintf(stderr, "%lld ", (long long)sh[d]);
        fprintf(stderr, ")\n");
    }
    zc_array_release(a);
    return ok;
}

/* Compute `src` (which must give a float64/int64 value for every element) into buf. */
static int values(env *e, const char *src, void *buf, size_t size)
{
    zc_array *a = ev(e, src);
    if (!a) return -1;
    zc_spec spec = ZC_SPEC_INIT;
    spec.allowed_mem = 64 << 20;
    spec.reserved_mem = 8 << 20;
    int rc = zc_compute_buffer(&spec, a, buf, size, NULL);
    if (rc < 0) fprintf(stderr, "  compute \"%s\": %s\n", src, zc_errmsg());
    zc_array_release(a);
    return rc;
}

/* Evaluation must fail with `needle` in the message and the given class
 * (lib = 1: a library status, 0: the expression itself). */
static int fails(env *e, const char *src, const char *needle, int lib)
{
    ex_tree *t;
    if (ex_parse(src, &t) < 0) {
        fprintf(stderr, "  parse \"%s\": %s\n", src, cli_lasterr());
        return 0;
    }
    zc_array *a = NULL;
    int status = 0;
    int rc = ex_eval(t, e->vars, 2, &a, &status);
    ex_free(t);
    if (rc == 0) {
        fprintf(stderr, "  \"%s\" evaluated, expected \"%s\"\n", src, needle);
        zc_array_release(a);
        return 0;
    }
    if (!strstr(cli_lasterr(), needle) || (status != 0) != lib) {
        fprintf(stderr, "  \"%s\": \"%s\" (status %d), expected \"%s\" (%s)\n", src, cli_lasterr(), status, needle,
                lib ? "library" : "expression");
        return 0;
    }
    return a == NULL;
}

TEST(eval_shapes_dtypes)
{
    env e;
    env_init(&e);
    int64_t s610[2] = {6, 10}, s10[1] = {10}, s6[1] = {6}, s11[2] = {1, 1}, s32[2] = {3, 2}, s3[1] = {3};
    CHECK(has(&e, "u + 1", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "u * 2.5 - u / 3", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "u + k", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "k * 2", ZC_INT16, 1, s10));
    CHECK(has(&e, "k / 2", ZC_FLOAT64, 1, s10));
    CHECK(has(&e, "k > 0", ZC_BOOL, 1, s10));
    CHECK(has(&e, "(k > 0) & (k < 3)", ZC_BOOL, 1, s10));
    CHECK(has(&e, "not (k > 0)", ZC_BOOL, 1, s10));
    CHECK(has(&e, "k > 0 and k < 3", ZC_BOOL, 1, s10));
    CHECK(has(&e, "mean(u, axis=0)", ZC_FLOAT32, 1, s10));
    CHECK(has(&e, "sum(u, 1)", ZC_FLOAT32, 1, s6));
    CHECK(has(&e, "sum(u, axis=(0, 1), keepdims=True)", ZC_FLOAT32, 2, s11));
    CHECK(has(&e, "sum(k)", ZC_INT64, 0, NULL));
    CHECK(has(&e, "sum(u, axis=-1, dtype=float64)", ZC_FLOAT64, 1, s6));
    /* manipulation, cumulative and linear algebra */
    int64_t s106[2] = {10, 6}, s60[1] = {60}, s1610[3] = {1, 6, 10}, s66[2] = {6, 6}, s1210[2] = {12, 10};
    int64_t s2610[3] = {2, 6, 10}, s1010[2] = {10, 10}, s59[2] = {6, 9}, s620[2] = {6, 20};
    CHECK(has(&e, "reshape(u, (10, -1))", ZC_FLOAT32, 2, s106));
    CHECK(has(&e, "reshape(u, -1)", ZC_FLOAT32, 1, s60));
    CHECK(has(&e, "u.T", ZC_FLOAT32, 2, s106));
    CHECK(has(&e, "u.mT", ZC_FLOAT32, 2, s106));
    CHECK(has(&e, "transpose(u)", ZC_FLOAT32, 2, s106));
    CHECK(has(&e, "permute_dims(u, (1, 0))", ZC_FLOAT32, 2, s106));
    CHECK(has(&e, "matrix_transpose(u)", ZC_FLOAT32, 2, s106));
    CHECK(has(&e, "moveaxis(expand_dims(u, axis=0), 0, -1)", ZC_FLOAT32, 3, (int64_t[]){6, 10, 1}));
    CHECK(has(&e, "expand_dims(u, 0)", ZC_FLOAT32, 3, s1610));
    CHECK(has(&e, "squeeze(expand_dims(u, 0), axis=0)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "broadcast_to(k, (6, 10))", ZC_INT16, 2, s610));
    CHECK(has(&e, "concat((u, u), axis=0)", ZC_FLOAT32, 2, s1210));
    CHECK(has(&e, "concat([u, u], axis=1)", ZC_FLOAT32, 2, s620));
    CHECK(has(&e, "concat((u, u), axis=None)", ZC_FLOAT32, 1, (int64_t[]){120}));
    CHECK(has(&e, "stack((u, u))", ZC_FLOAT32, 3, s2610));
    CHECK(has(&e, "flip(u)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "roll(u, 2, axis=1)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "repeat(k, 2)", ZC_INT16, 1, (int64_t[]){20}));
    CHECK(has(&e, "tile(k, (2, 1))", ZC_INT16, 2, (int64_t[]){2, 10}));
    CHECK(has(&e, "take(u, [0, 2, 4], axis=1)", ZC_FLOAT32, 2, (int64_t[]){6, 3}));
    CHECK(has(&e, "take(u, 3, axis=1)", ZC_FLOAT32, 1, s6));
    CHECK(has(&e, "diff(u, axis=1)", ZC_FLOAT32, 2, s59));
    CHECK(has(&e, "tril(u, k=1) + triu(u)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "cumulative_sum(k)", ZC_INT64, 1, s10));
    CHECK(has(&e, "cumsum(u)", ZC_FLOAT32, 1, s60));
    CHECK(has(&e, "cumulative_prod(u, axis=0, include_initial=True)", ZC_FLOAT32, 2, (int64_t[]){7, 10}));
    CHECK(has(&e, "u @ u.T", ZC_FLOAT32, 2, s66));
    CHECK(has(&e, "matmul(u.T, u)", ZC_FLOAT32, 2, s1010));
    CHECK(has(&e, "u @ k", ZC_FLOAT32, 1, s6));
    CHECK(has(&e, "k @ k", ZC_INT16, 0, NULL));
    CHECK(has(&e, "tensordot(u, u, axes=((0,), (0,)))", ZC_FLOAT32, 2, s1010));
    CHECK(has(&e, "tensordot(u, u.T, 1)", ZC_FLOAT32, 2, s66));
    CHECK(has(&e, "vecdot(u, k)", ZC_FLOAT32, 1, s6));
    CHECK(has(&e, "outer(k, k[:2])", ZC_INT16, 2, (int64_t[]){10, 2}));
    CHECK(has(&e, "argmax(u, axis=-2)", ZC_INT64, 1, s10));
    CHECK(has(&e, "std(u, axis=1, correction=1)", ZC_FLOAT32, 1, s6));
    CHECK(has(&e, "var(u, ddof=1)", ZC_FLOAT32, 0, NULL));
    CHECK(has(&e, "count_nonzero(u > 3, axis=0)", ZC_INT64, 1, s10));
    CHECK(has(&e, "any(u > 3)", ZC_BOOL, 0, NULL));
    CHECK(has(&e, "u[::2, 1:3]", ZC_FLOAT32, 2, s32));
    int64_t s6110[3] = {6, 1, 10}, s1[1] = {1};
    CHECK(has(&e, "u[:, None]", ZC_FLOAT32, 3, s6110));
    CHECK(has(&e, "u[..., -1]", ZC_FLOAT32, 1, s6));
    CHECK(has(&e, "u[0, :, None][:, 0]", ZC_FLOAT32, 1, s10));
    CHECK(has(&e, "k[-1:]", ZC_INT16, 1, s1));
    CHECK(has(&e, "astype(u, 'int32')", ZC_INT32, 2, s610));
    CHECK(has(&e, "astype(k, float32)", ZC_FLOAT32, 1, s10));
    CHECK(has(&e, "where(u > 3, u, 0)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "clip(u, 1, None)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "sqrt(2) * u", ZC_FLOAT32, 2, s610)); /* a folded Python float stays weak */
    CHECK(has(&e, "zeros((3, 2), dtype=int8)", ZC_INT8, 2, s32));
    CHECK(has(&e, "full((3, 2), 7)", ZC_INT64, 2, s32));
    CHECK(has(&e, "full((3, 2), True)", ZC_BOOL, 2, s32));
    CHECK(has(&e, "ones_like(k)", ZC_INT16, 1, s10));
    CHECK(has(&e, "full_like(u, 2, dtype='uint8')", ZC_UINT8, 2, s610));
    CHECK(has(&e, "arange(3)", ZC_INT64, 1, s3));
    CHECK(has(&e, "arange(0, 1.5, 0.5)", ZC_FLOAT64, 1, s3));
    CHECK(has(&e, "linspace(0, 1, 3)", ZC_FLOAT64, 1, s3));
    int64_t s34[2] = {3, 4}, s33[2] = {3, 3}, s03[2] = {0, 3};
    CHECK(has(&e, "eye(3, 4, k=1)", ZC_FLOAT64, 2, s34));
    CHECK(has(&e, "eye(3)", ZC_FLOAT64, 2, s33));
    CHECK(has(&e, "eye(0, 3)", ZC_FLOAT64, 2, s03));
    CHECK(has(&e, "uniform((3, 4), seed=1, chunks=2)", ZC_FLOAT64, 2, s34));
    CHECK(has(&e, "random.normal(size=(3, 4), scale=2, dtype=float32)", ZC_FLOAT32, 2, s34));
    CHECK(has(&e, "1 + 2", ZC_INT64, 0, NULL)); /* a number at the top: a 0-d array */
    CHECK(has(&e, "2.5", ZC_FLOAT64, 0, NULL));
    CHECK(has(&e, "True", ZC_BOOL, 0, NULL));
    env_free(&e);
}

TEST(eval_chunks)
{
    env e;
    env_init(&e);
    zc_array *a = ev(&e, "rechunk(u, (-1, 4))");
    int64_t ch[2];
    CHECK(a && zc_array_info(a, NULL, NULL, ch, NULL) == 0 && ch[0] == 6 && ch[1] == 4);
    zc_array_release(a);
    a = ev(&e, "rechunk(u, 5)");
    CHECK(a && zc_array_info(a, NULL, NULL, ch, NULL) == 0 && ch[0] == 5 && ch[1] == 5);
    zc_array_release(a);
    a = ev(&e, "ones((7, 9), chunks=(2, None))");
    CHECK(a && zc_array_info(a, NULL, NULL, ch, NULL) == 0 && ch[0] == 2 && ch[1] == 9);
    zc_array_release(a);
    a = ev(&e, "zeros_like(u)"); /* *_like keeps the chunks */
    CHECK(a && zc_array_info(a, NULL, NULL, ch, NULL) == 0 && ch[0] == 4 && ch[1] == 3);
    zc_array_release(a);
    a = ev(&e, "arange(100, chunks=7)");
    CHECK(a && zc_array_info(a, NULL, NULL, ch, NULL) == 0 && ch[0] == 7);
    zc_array_release(a);
    env_free(&e);
}

TEST(eval_values)
{
    env e;
    env_init(&e);
    int64_t i1;
    double d1, d10[10];
    CHECK(values(&e, "sum(arange(10))", &i1, sizeof i1) == 0 && i1 == 45);
    CHECK(values(&e, "2 ** 10", &i1, sizeof i1) == 0 && i1 == 1024);
    CHECK(values(&e, "-7 // 2 * 10 + -7 % 2", &i1, sizeof i1) == 0 && i1 == -39); /* Python floor semantics */
    CHECK(values(&e, "7.5 // 2 + 7.5 % -2", &d1, sizeof d1) == 0 && d1 == 3.0 + -0.5);
    CHECK(values(&e, "1 << 40 | 5", &i1, sizeof i1) == 0 && i1 == ((int64_t)1 << 40 | 5));
    CHECK(values(&e, "sum(k * k)", &i1, sizeof i1) == 0 && i1 == 85);
    CHECK(values(&e, "max(k) - min(k)", &i1, sizeof i1) == 0 && i1 == 9);
    CHECK(values(&e, "argmin(abs(k))", &i1, sizeof i1) == 0 && i1 == 5);
    CHECK(values(&e, "count_nonzero(k % 2 == 0)", &i1, sizeof i1) == 0 && i1 == 5);
    CHECK(values(&e, "sum(astype(u, float64))", &d1, sizeof d1) == 0 && d1 == 1770.0);
    CHECK(values(&e, "mean(astype(u[1], float64))", &d1, sizeof d1) == 0 && d1 == 14.5);
    CHECK(values(&e, "sqrt(16) * (pi / pi) * (e / e)", &d1, sizeof d1) == 0 && d1 == 4.0);
    CHECK(values(&e, "maximum(2, 3.5) + minimum(1, 2)", &d1, sizeof d1) == 0 && d1 == 4.5);
    CHECK(values(&e, "where(0, 1.0, 2.0) + clip(5, None, 3)", &d1, sizeof d1) == 0 && d1 == 5.0);
    CHECK(values(&e, "astype(k, float64) / 2", d10, sizeof d10) == 0 && d10[0] == -2.5 && d10[9] == 2.0);
    CHECK(values(&e, "linspace(0, 9, 10) * 2", d10, sizeof d10) == 0 && d10[9] == 18.0 && d10[1] == 2.0);
    CHECK(values(&e, "eye(1)[0, 0] * 3", &d1, sizeof d1) == 0 && d1 == 3.0);
    CHECK(values(&e, "round(2.5) + round(3.5) + floor(-0.5)", &d1, sizeof d1) == 0 && d1 == 5.0); /* half-even */
    env_free(&e);
}

TEST(eval_errors)
{
    env e;
    env_init(&e);
    CHECK(fails(&e, "meen(u)", "at column 1: unknown function 'meen' (did you mean 'mean'?)", 0));
    CHECK(fails(&e, "u + xyz", "at column 5: unknown name 'xyz' (arrays given with --in: u, k)", 0));
    CHECK(fails(&e, "qqqqqqqq(u)", "unknown function 'qqqqqqqq'", 0));
    CHECK(fails(&e, "sin(u, u)", "at column 8: sin() takes 1 argument, got 2", 0));
    CHECK(fails(&e, "sum(u, 0, True)", "sum() takes at most 2 positional arguments, got 3", 0));
    CHECK(fails(&e, "sum(u, 0, axis=1)", "at column 11: sum() got multiple values for argument 'axis'", 0));
    CHECK(has(&e, "sum(x=u)", ZC_FLOAT32, 0, NULL)); /* x is the parameter's name */
    CHECK(fails(&e, "sum()", "sum() missing required argument 'x'", 0));
    CHECK(fails(&e, "mean(u, axis=(0, 0))", "at column 18: mean(): axis 0 is repeated", 0));
    CHECK(fails(&e, "mean(u, axis=-3)", "axis -3 is out of bounds for an array of 2 dimensions", 0));
    CHECK(fails(&e, "argmax(u, axis=(0, 1))", "argmax(): axis must be an integer or None, not a tuple", 0));
    CHECK(fails(&e, "mean(u, axis=1.0)", "axis must be an integer, got the float 1 (write 1)", 0));
    CHECK(fails(&e, "sum(u, keepdims='yes')", "keepdims must be True or False", 0));
    CHECK(fails(&e, "sum(3)", "sum(): x must be an array, got an integer", 0));
    CHECK(fails(&e, "u @ u", "at column 3: matmul: shapes (6, 10) and (6, 10) do not align", 1));
    CHECK(fails(&e, "u @ 2", "at column 3: operator '@' needs arrays, not an integer", 0));
    CHECK(fails(&e, "reshape(u, (7, -1))", "at column 1: reshape", 1));
    CHECK(fails(&e, "reshape(u, 6.5)", "shape must be an integer", 0));
    CHECK(fails(&e, "concat(u, axis=0)", "concat(): arrays must be a non-empty tuple or list of arrays, got an array", 0));
    CHECK(fails(&e, "concat((u, 1))", "concat(): expected arrays, got an integer", 0));
    CHECK(fails(&e, "moveaxis(u, (0, 1), 0)", "moveaxis(): source and destination must have the same number of axes", 0));
    CHECK(fails(&e, "take(u, u)", "take(): indices must have 1 dimension (it has 2)", 0));
    CHECK(fails(&e, "take(u, u[0])", "take(): indices must be integer, not float32", 0));
    CHECK(fails(&e, "repeat(k, (1, 2))", "repeat(): 2 repeat counts for an axis of length", 0));
    CHECK(fails(&e, "repeat(u, (1, -2, 0, 0, 0, 0), axis=0)", "repeat counts must not be negative (count 1 is -2)", 0));
    /* the sum would overflow */
    CHECK(fails(&e, "repeat(u, (576460752303423487, 9223372036854775807, 0, 0, 0, 0), axis=0)",
                "the repeat counts add up to too many elements", 0));
    CHECK(fails(&e, "tensordot(u, u, axes=((0,), (0, 1)))", "tensordot(): the two axis lists differ in length", 0));
    CHECK(fails(&e, "vecdot(u, k[:6])", "vecdot: shapes (6, 10) and (6,) differ along axis -1", 1));
    CHECK(fails(&e, "k.T + (1).T", "'.T' applies to arrays, not an integer", 0));
    CHECK(fails(&e, "squeeze(u, 0)", "squeeze", 1));
    CHECK(fails(&e, "linalg.norm(u)", "function 'linalg.norm' is not available", 0));
    CHECK(fails(&e, "matrix_power(u, 2)", "matrix_power: needs square matrices, got 6 x 10", 1));
    CHECK(fails(&e, "linalg.eigh(u)", "eigh: the matrix must be square, not 6 x 10", 1));
    CHECK(fails(&e, "sum", "'sum' is a function: call it, as in sum(...)", 0));
    CHECK(fails(&e, "u.real", "attribute access ('.real') is not supported", 0));
    CHECK(fails(&e, "(u + 1)(2)", "only named functions can be called", 0));
    CHECK(fails(&e, "'abc' + u", "operator '+' does not apply to a string", 0));
    CHECK(fails(&e, "-None", "operator '-' does not apply to None", 0));
    CHECK(fails(&e, "u[u > 1]", "x[mask]: its size depends on the data and is counted first", 0)); /* no ex_set_spec */
    CHECK(fails(&e, "u[[0, 1], [1, 2, 3]]", "array indices of lengths 2 and 3 do not broadcast", 0));
    CHECK(fails(&e, "u[[0, 99]]", "out of bounds", 1));
    CHECK(fails(&e, "meshgrid(u, k)", "meshgrid: array 0 has 2 dimensions", 1));
    CHECK(fails(&e, "meshgrid(k, indexing='yx')", "indexing must be 'xy' or 'ij'", 0));
    CHECK(fails(&e, "broadcast_shapes((2, 3), (4,))", "broadcast_shapes(): broadcast_shapes: shape 1 does not broadcast", 0));
    CHECK(fails(&e, "unstack(u, axis=5)", "unstack: axis 5 is out of range", 1));
    CHECK(fails(&e, "u[1.5]", "an index must be a slice, an integer, None or ..., not a float", 0));
    CHECK(fails(&e, "u[::0]", "slice step cannot be zero", 0));
    CHECK(fails(&e, "'abc'[0]", "only arrays can be indexed, not a string", 0));
    CHECK(fails(&e, "zeros((2, -1))", "at column 11: shape: negative dimension -1", 0));
    CHECK(fails(&e, "zeros(2.0)", "shape must be an integer, got the float 2", 0));
    CHECK(fails(&e, "ones((2, 3), chunks=(1,))", "chunks has 1 entry but the array has 2 dimensions", 0));
    CHECK(fails(&e, "ones((2, 3), chunks=0)", "chunks must be positive", 0));
    CHECK(fails(&e, "rechunk(u)", "rechunk() missing required argument 'chunks'", 0));
    CHECK(fails(&e, "rechunk(u, None)", "rechunk(): chunks must be given", 0));
    CHECK(fails(&e, "astype(u, 'S5')", "unknown data type 'S5'", 0));
    CHECK(fails(&e, "astype(u, 3)", "dtype must be a data type", 0));
    CHECK(fails(&e, "arange(0, 5, 0)", "arange(): step must not be zero", 0));
    CHECK(fails(&e, "linspace(0, 1, -1)", "num must be >= 0", 0));
    CHECK(fails(&e, "uniform((2,), seed=-1)", "seed must be >= 0", 0));
    CHECK(fails(&e, "normal((2,), scale=-1)", "scale must be >= 0", 0));
    CHECK(fails(&e, "9223372036854775807 + 1", "integer result out of the 64-bit range", 0));
    CHECK(fails(&e, "2 ** 63", "out of the 64-bit range", 0));
    CHECK(fails(&e, "1 << 64", "out of the 64-bit range", 0));
    CHECK(fails(&e, "1 >> -1", "negative shift count", 0));
    CHECK(fails(&e, "1.5 & 1", "operator '&' needs integers", 0));
    CHECK(fails(&e, "0 ** -1", "0 cannot be raised to a negative power", 0));
    CHECK(fails(&e, "5 % 0", "modulo by zero", 0));
    CHECK(fails(&e, "(u, k)", "the expression gives a tuple of 2 values, not an array", 0));
    CHECK(fails(&e, "'float32'", "gives a string", 0));
    CHECK(fails(&e, "float32", "gives a dtype", 0));
    /* failures the library reports: status set */
    CHECK(fails(&e, "u + k[:3]", "do not broadcast", 1));
    CHECK(fails(&e, "u[7]", "out of bounds", 1));
    CHECK(fails(&e, "u & 1", "bitwise_and", 1));
    CHECK(fails(&e, "uniform((2,), dtype=int8)", "uniform: dtype must be a float", 1));
    env_free(&e);
}

TEST(eval_names_and_functions)
{
    CHECK(ex_is_function("sum") && ex_is_function("sin") && ex_is_function("where") && ex_is_function("arcsin"));
    CHECK(ex_is_function("matmul")); /* known but not available: still not a valid --in name */
    CHECK(ex_is_function("random.uniform") && ex_is_function("uniform"));
    CHECK(!ex_is_function("u") && !ex_is_function("float32") && !ex_is_function("temperature"));
    env e;
    env_init(&e);
    /* NumPy spellings and array API spellings are the same function */
    int64_t s610[2] = {6, 10};
    CHECK(has(&e, "arctan2(u, 1) + atan2(u, 2) + power(u, 2) + absolute(u)", ZC_FLOAT32, 2, s610));
    CHECK(has(&e, "invert(k) + bitwise_invert(k) + left_shift(k, 1)", ZC_INT16, 1, (int64_t[]){10}));
    CHECK(has(&e, "amax(u, axis=0) + amin(u, axis=0)", ZC_FLOAT32, 1, (int64_t[]){10}));
    CHECK(has(&e, "u[newaxis]", ZC_FLOAT32, 3, (int64_t[]){1, 6, 10}));
    /* bound names shadow the constants e and pi, and dtype names */
    ex_binding vars[1] = {{"e", e.u}};
    ex_tree *t;
    CHECK(ex_parse("e * 2", &t) == 0);
    zc_array *a = NULL;
    CHECK(ex_eval(t, vars, 1, &a, NULL) == 0 && a != NULL);
    int nd = -1;
    CHECK(a && zc_array_info(a, &nd, NULL, NULL, NULL) == 0 && nd == 2);
    zc_array_release(a);
    ex_free(t);
    env_free(&e);
}

TEST(eval_releases_everything)
{
    /* the evaluator takes and drops its own references: after releasing the
     * result and the inputs, nothing is left (checked under ASan/LSan), also
     * on every error path */
    env e;
    env_init(&e);
    const char *srcs[] = {"sum(u * 2 + k, axis=(0, 1)) - mean(u)", "clip(u, 0, 3)[1:, ::2]",
                          "where(u > 3, u, full_like(u, 1))", "u + k[:3]", "sum(u, axis=5)",
                          "f(u, k)", "(u, k, u + 1)", "astype(u * k, 'bogus')"};
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        ex_tree *t;
        CHECK(ex_parse(srcs[i], &t) == 0);
        zc_array *a = NULL;
        ex_eval(t, e.vars, 2, &a, NULL);
        zc_array_release(a);
        ex_free(t);
    }
    env_free(&e);
}
