/* fuzz/fuzz_eval_expr.c — `zcube eval` expressions: the parser (src/tools/expr_parse.c)
 * and the evaluator (src/tools/expr_eval.c) on arbitrary text, then planning
 * (what --plan-only does) and, for tiny results, computing.
 *
 * Input layout: the whole input (up to the first NUL) is the expression.
 * Names bound (small in-memory arrays, made once, chunked so that plans have
 * several blocks):
 *   x  float64 (4, 6) chunks (2, 4)     v  float64 (6,) chunks (4,)
 *   m  float64 (4, 4) chunks (2, 2)     n  int32 (8,) chunks (3,)
 *   z  complex128 (5,) chunks (2,)      b  bool (4, 6) chunks (4, 3)
 *   t  int64 (2, 3, 4) chunks (1, 2, 4) s  float32 () (0-d)
 *
 * Checks: a refusal (parse or evaluation) carries a message; an accepted
 * expression gives an array with a sane rank and shape that plans
 * (zc_plan_json, memory:// target, allowed_mem 64 MiB); a plan refusal
 * carries a message too. When the result has at most 4096 elements of a
 * fixed-size dtype and the plan at most 256 tasks, it is computed
 * (zc_compute_buffer, one thread), which must succeed or fail with a
 * message. */
#include <jansson.h>
#include <string.h>

#include "cli_util.h"
#include "expr.h"
#include "fuzz.h"

#define NVARS 8
#define MAX_TEXT 16384

static ex_binding vars[NVARS];
static zc_spec spec;

static void add_var(int i, const char *name, zc_dtype dt, size_t isz, int ndim, const int64_t *shape,
                    const int64_t *chunks)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    unsigned char *buf = calloc((size_t)n, isz);
    FUZZ_CHECK(buf != NULL, "out of memory");
    for (int64_t k = 0; k < n; k++) {
        unsigned char *p = buf + (size_t)k * isz;
        double v = (double)((k * 7) % 11) - 3.5 + (double)k / 8.0;
        switch (dt) {
        case ZC_FLOAT64: memcpy(p, &v, 8); break;
        case ZC_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
        case ZC_INT32: { int32_t w = (int32_t)(k * 3 - 5); memcpy(p, &w, 4); break; }
        case ZC_INT64: { int64_t w = k % 7 - 2; memcpy(p, &w, 8); break; }
        case ZC_COMPLEX128: { double c[2] = {v, 1.0 - v / 3.0}; memcpy(p, c, 16); break; }
        case ZC_BOOL: *p = (unsigned char)(k % 3 == 0); break;
        default: break;
        }
    }
    /* a diagonally dominant m, so solve/inv/cholesky have an answer */
    if (!strcmp(name, "m"))
        for (int r = 0; r < 4; r++) {
            double dv = 20.0 + r;
            memcpy(buf + (size_t)(r * 4 + r) * 8, &dv, 8);
        }
    zc_array *a;
    FUZZ_CHECK(zc_asarray(buf, dt, ndim, shape, chunks, &a) == 0, "zc_asarray %s: %s", name, zc_errmsg());
    free(buf);
    vars[i].name = name;
    vars[i].array = a;
}

static void setup(void)
{
    static int done;
    if (done) return;
    done = 1;
    spec = (zc_spec)ZC_SPEC_INIT;
    spec.allowed_mem = (size_t)64 << 20;
    spec.reserved_mem = (size_t)8 << 20;
    spec.nthreads = 1;
    spec.executor = "sequential";
    add_var(0, "x", ZC_FLOAT64, 8, 2, (int64_t[]){4, 6}, (int64_t[]){2, 4});
    add_var(1, "v", ZC_FLOAT64, 8, 1, (int64_t[]){6}, (int64_t[]){4});
    add_var(2, "m", ZC_FLOAT64, 8, 2, (int64_t[]){4, 4}, (int64_t[]){2, 2});
    add_var(3, "n", ZC_INT32, 4, 1, (int64_t[]){8}, (int64_t[]){3});
    add_var(4, "z", ZC_COMPLEX128, 16, 1, (int64_t[]){5}, (int64_t[]){2});
    add_var(5, "b", ZC_BOOL, 1, 2, (int64_t[]){4, 6}, (int64_t[]){4, 3});
    add_var(6, "t", ZC_INT64, 8, 3, (int64_t[]){2, 3, 4}, (int64_t[]){1, 2, 4});
    add_var(7, "s", ZC_FLOAT32, 4, 0, NULL, NULL);
}

static size_t fixed_size(zc_dtype dt)
{
    switch (dt) {
    case ZC_BOOL: case ZC_INT8: case ZC_UINT8: return 1;
    case ZC_INT16: case ZC_UINT16: case ZC_FLOAT16: return 2;
    case ZC_INT32: case ZC_UINT32: case ZC_FLOAT32: return 4;
    case ZC_INT64: case ZC_UINT64: case ZC_FLOAT64: case ZC_COMPLEX64: return 8;
    case ZC_COMPLEX128: return 16;
    default: return 0;
    }
}

static void plan_and_compute(zc_array *a, const char *text)
{
    int ndim;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_dtype dt;
    FUZZ_CHECK(zc_array_info(a, &ndim, shape, chunks, &dt) == 0, "'%s': info: %s", text, zc_errmsg());
    FUZZ_CHECK(ndim >= 0 && ndim <= ZC_MAX_DIMS, "'%s': ndim %d", text, ndim);
    int64_t n = 1;
    int tiny = 1;
    for (int d = 0; d < ndim; d++) {
        FUZZ_CHECK(shape[d] >= 0, "'%s': dim %d has size %lld", text, d, (long long)shape[d]);
        FUZZ_CHECK(chunks[d] >= 1 || shape[d] == 0, "'%s': dim %d has chunk %lld", text, d,
                   (long long)chunks[d]);
        if (shape[d] > 4096 || (n *= shape[d]) > 4096) tiny = 0;
    }
    zc_store *st;
    FUZZ_CHECK(zc_store_open("memory://fuzz-eval-out", ZC_STORE_CREATE, &st) == 0, "%s", zc_errmsg());
    zc_target target = {st, "", NULL, 3};
    char *plan = NULL;
    int rc = zc_plan_json(&spec, 1, &a, &target, &plan);
    if (rc < 0) {
        FUZZ_CHECK(zc_errmsg()[0] != 0, "'%s': plan refused (%d) without a message", text, rc);
        zc_store_close(st);
        return;
    }
    json_t *doc = json_loads(plan, 0, NULL);
    FUZZ_CHECK(doc != NULL, "'%s': plan is not JSON: %s", text, plan);
    json_int_t tasks = json_integer_value(json_object_get(doc, "tasks"));
    FUZZ_CHECK(tasks >= 0, "'%s': %lld tasks", text, (long long)tasks);
    json_decref(doc);
    zc_free(plan);
    size_t isz = fixed_size(dt);
    if (tiny && isz && tasks <= 256) {
        size_t bytes = (size_t)n * isz;
        void *buf = malloc(bytes ? bytes : 1);
        FUZZ_CHECK(buf != NULL, "out of memory");
        rc = zc_compute_buffer(&spec, a, buf, bytes, NULL);
        if (getenv("ZC_FUZZ_VERBOSE")) fprintf(stderr, "  computed: %d %s\n", rc, rc < 0 ? zc_errmsg() : "");
        FUZZ_CHECK(rc == 0 || zc_errmsg()[0] != 0, "'%s': compute failed (%d) without a message", text, rc);
        free(buf);
    }
    zc_store_close(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size > MAX_TEXT) size = MAX_TEXT;
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = 0;

    ex_tree *tree = NULL;
    if (ex_parse(text, &tree) < 0) {
        FUZZ_CHECK(cli_lasterr()[0] != 0, "'%s' refused without a message", text);
        if (getenv("ZC_FUZZ_VERBOSE")) fprintf(stderr, "  not parsed: %s\n", cli_lasterr());
        free(text);
        return 0;
    }
    zc_array *out = NULL;
    int status = 0;
    if (ex_eval(tree, vars, NVARS, &out, &status) < 0) {
        FUZZ_CHECK(cli_lasterr()[0] != 0, "'%s' not evaluated, without a message", text);
        if (getenv("ZC_FUZZ_VERBOSE")) fprintf(stderr, "  not evaluated: %s\n", cli_lasterr());
        FUZZ_CHECK(out == NULL, "'%s': failed evaluation left a result", text);
    } else {
        FUZZ_CHECK(out != NULL, "'%s': evaluated to NULL", text);
        plan_and_compute(out, text);
        zc_array_release(out);
    }
    ex_free(tree);
    free(text);
    return 0;
}
