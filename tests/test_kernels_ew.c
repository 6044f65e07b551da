/* tests/test_kernels_ew.c — the fused elementwise kernel (src/kernels/elementwise.h).
 *
 * Reference values come from NumPy: tests/kernels_ew_ref.py writes the inputs
 * and NumPy's results for a section (every function × every dtype it accepts
 * on edge values, mixed-dtype calls, casts, the promotion table, fused
 * chains) into a temporary directory; each test evaluates the same cases
 * through ew_eval and compares. Exact results must match bit for bit (signed
 * zeros included); transcendental functions within a few ULPs.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "harness.h"
#include "kernels/elementwise.h"

#define REF_SCRIPT ZC_TEST_DATA "/../kernels_ew_ref.py"

/* ------------------------------------------------------------------ helpers */

typedef struct {
    char dir[64];
    unsigned char *data; /* data.bin */
    size_t size;
    char *man;           /* manifest.txt */
} ref_t;

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = aligned_alloc(64, ((size_t)n + 64) & ~(size_t)63);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    *size = (size_t)n;
    return b;
}

/* Run the reference script for one section. */
static int ref_load(const char *section, ref_t *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/zc_ew_XXXXXX");
    if (!mkdtemp(r->dir)) return -1;
    char cmd[512], path[128];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s", REF_SCRIPT, r->dir, section);
    if (system(cmd) != 0) {
        fprintf(stderr, "reference script failed: %s\n", cmd);
        return -1;
    }
    size_t n;
    snprintf(path, sizeof path, "%s/data.bin", r->dir);
    r->data = slurp(path, &r->size);
    snprintf(path, sizeof path, "%s/manifest.txt", r->dir);
    r->man = (char *)slurp(path, &n);
    return r->data && r->man ? 0 : -1;
}

static void ref_free(ref_t *r)
{
    char path[128];
    snprintf(path, sizeof path, "%s/data.bin", r->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/manifest.txt", r->dir);
    unlink(path);
    rmdir(r->dir);
    free(r->data);
    free(r->man);
}

static zc_dtype dt_parse(const char *s)
{
    zc_dtype t = ZC_DTYPE_INVALID;
    size_t size;
    if (zc_dtype_parse(s, &t, &size)) return ZC_DTYPE_INVALID;
    return t;
}

static size_t dt_size(zc_dtype t)
{
    switch (t) {
    case ZC_BOOL: case ZC_INT8: case ZC_UINT8: return 1;
    case ZC_INT16: case ZC_UINT16: case ZC_FLOAT16: return 2;
    case ZC_INT32: case ZC_UINT32: case ZC_FLOAT32: return 4;
    case ZC_COMPLEX128: return 16;
    default: return 8;
    }
}

static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Element i of a real dtype as double (ints through int64/uint64 are compared apart). */
static double get_real(const void *p, zc_dtype t, size_t i)
{
    const unsigned char *b = (const unsigned char *)p + i * dt_size(t);
    switch (t) {
    case ZC_FLOAT16: { uint16_t h; memcpy(&h, b, 2); return half_to_float(h); }
    case ZC_FLOAT32: { float f; memcpy(&f, b, 4); return f; }
    case ZC_FLOAT64: { double d; memcpy(&d, b, 8); return d; }
    default: return NAN;
    }
}

static double ulp_of(double x, zc_dtype t)
{
    int p = t == ZC_FLOAT16 ? 11 : (t == ZC_FLOAT32 || t == ZC_COMPLEX64) ? 24 : 53;
    int emin = t == ZC_FLOAT16 ? -14 : (t == ZC_FLOAT32 || t == ZC_COMPLEX64) ? -126 : -1022;
    int e;
    x = fabs(x);
    if (x == 0 || isinf(x)) x = ldexp(1.0, emin);
    frexp(x, &e);
    if (e - 1 < emin) e = emin + 1;
    return ldexp(1.0, e - p);
}

static int close_part(double got, double exp, int tol, zc_dtype t, double scale)
{
    if (isnan(exp)) return isnan(got);
    if (isnan(got)) return 0;
    if (tol == 0) return got == exp && !signbit(got) == !signbit(exp);
    if (isinf(exp) || isinf(got)) return got == exp;
    double s = fabs(exp) > scale ? fabs(exp) : scale;
    return fabs(got - exp) <= tol * ulp_of(s, t);
}

/* Compare element i; on mismatch describe both in msg. */
static int same_elem(const void *got, const void *exp, zc_dtype t, size_t i, int tol, char *msg, size_t msize)
{
    size_t sz = dt_size(t);
    const unsigned char *g = (const unsigned char *)got + i * sz, *e = (const unsigned char *)exp + i * sz;
    if (t == ZC_FLOAT16 || t == ZC_FLOAT32 || t == ZC_FLOAT64) {
        double a = get_real(got, t, i), b = get_real(exp, t, i);
        if (close_part(a, b, tol, t, 0)) return 1;
        snprintf(msg, msize, "got %.17g expected %.17g", a, b);
        return 0;
    }
    if (t == ZC_COMPLEX64 || t == ZC_COMPLEX128) {
        double gr, gi, er, ei;
        if (t == ZC_COMPLEX64) {
            float v[2];
            memcpy(v, g, 8); gr = v[0]; gi = v[1];
            memcpy(v, e, 8); er = v[0]; ei = v[1];
        } else {
            double v[2];
            memcpy(v, g, 16); gr = v[0]; gi = v[1];
            memcpy(v, e, 16); er = v[0]; ei = v[1];
        }
        double scale = isfinite(er) && isfinite(ei) ? fmax(fabs(er), fabs(ei)) : 0;
        if (close_part(gr, er, tol, t, scale) && close_part(gi, ei, tol, t, scale)) return 1;
        snprintf(msg, msize, "got (%.17g, %.17g) expected (%.17g, %.17g)", gr, gi, er, ei);
        return 0;
    }
    if (!memcmp(g, e, sz)) return 1;
    uint64_t a = 0, b = 0;
    memcpy(&a, g, sz);
    memcpy(&b, e, sz);
    snprintf(msg, msize, "got bits 0x%llx expected 0x%llx", (unsigned long long)a, (unsigned long long)b);
    return 0;
}

static void describe_in(char *buf, size_t size, const void *p, zc_dtype t, size_t i)
{
    size_t sz = dt_size(t);
    const unsigned char *b = (const unsigned char *)p + i * sz;
    if (t == ZC_FLOAT16 || t == ZC_FLOAT32 || t == ZC_FLOAT64) {
        snprintf(buf, size, "%.17g", get_real(p, t, i));
    } else if (t == ZC_COMPLEX64) {
        float v[2];
        memcpy(v, b, 8);
        snprintf(buf, size, "(%g,%g)", v[0], v[1]);
    } else if (t == ZC_COMPLEX128) {
        double v[2];
        memcpy(v, b, 16);
        snprintf(buf, size, "(%.17g,%.17g)", v[0], v[1]);
    } else {
        int64_t v = 0;
        memcpy(&v, b, sz);
        if (sz < 8 && t != ZC_UINT8 && t != ZC_UINT16 && t != ZC_UINT32 && t != ZC_BOOL) {
            int sh = 64 - 8 * (int)sz;
            v = (int64_t)((uint64_t)v << sh) >> sh;
        }
        snprintf(buf, size, "%lld", (long long)v);
    }
}

/* Element i of an input as a double (bool and integers too). */
static double in_value(const void *p, zc_dtype t, size_t i)
{
    if (t == ZC_FLOAT16 || t == ZC_FLOAT32 || t == ZC_FLOAT64) return get_real(p, t, i);
    size_t sz = dt_size(t);
    uint64_t u = 0;
    memcpy(&u, (const unsigned char *)p + i * sz, sz);
    if (t == ZC_BOOL || t == ZC_UINT8 || t == ZC_UINT16 || t == ZC_UINT32 || t == ZC_UINT64) return (double)u;
    int sh = 64 - 8 * (int)sz;
    return (double)((int64_t)(u << sh) >> sh);
}

/* The array API 2024.12's floor_divide special cases where NumPy's loops give
 * NaN or -1: ±inf // a finite non-zero is ±inf, a finite non-zero // an
 * infinity of the other sign is -0. 1 and *want when element i is one. */
static int floor_divide_std(const char *fn, zc_dtype rdt, const void *const *in, const zc_dtype *dts, size_t i,
                            double *want)
{
    if (strcmp(fn, "floor_divide") || (rdt != ZC_FLOAT16 && rdt != ZC_FLOAT32 && rdt != ZC_FLOAT64)) return 0;
    double a = in_value(in[0], dts[0], i), b = in_value(in[1], dts[1], i);
    if (isinf(a) && isfinite(b) && b != 0) *want = signbit(a) == signbit(b) ? INFINITY : -INFINITY;
    else if (isfinite(a) && isinf(b) && a != 0 && (a > 0) != (b > 0)) *want = -0.0;
    else return 0;
    return 1;
}

/* Build fn(x0, x1, ...) over inputs of the given dtypes. */
static int build(const char *fn, int nargs, const zc_dtype *dts, zc_dtype astype_to, ew_program **out)
{
    ew_program *p;
    int rc = ew_program_create(&p);
    if (rc) return rc;
    int x[3], r = -1;
    for (int k = 0; k < nargs; k++) {
        x[k] = ew_input(p, k, dts[k]);
        if (x[k] < 0) { ew_program_free(p); return x[k]; }
    }
    if (!strcmp(fn, "astype")) rc = ew_astype(p, x[0], astype_to, &r);
    else if (!strcmp(fn, "where")) rc = ew_where(p, x[0], x[1], x[2], &r);
    else if (nargs == 1) rc = ew_unary(p, (ew_op)ew_op_from_name(fn), x[0], &r);
    else rc = ew_binary(p, (ew_op)ew_op_from_name(fn), x[0], x[1], &r);
    if (!rc) rc = ew_set_output(p, r);
    if (rc) {
        ew_program_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* Run every "case" line of a section; returns the number of cases run. */
static int run_cases(const ref_t *r)
{
    int ncases = 0, nbad_cases = 0;
    char *save = NULL, *man = strdup(r->man);
    for (char *line = strtok_r(man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char fn[48], rd[24], ds[3][24];
        int nargs, tol;
        size_t n, roff, off[3];
        int got = sscanf(line, "case %47s %d %zu %23s %zu %d %23s %zu %23s %zu %23s %zu", fn, &nargs, &n, rd, &roff,
                         &tol, ds[0], &off[0], ds[1], &off[1], ds[2], &off[2]);
        if (got < 8) continue;
        CHECK(got == 6 + 2 * nargs);
        zc_dtype dts[3], rdt = dt_parse(rd);
        const void *in[3];
        int64_t strides[3] = {1, 1, 1};
        for (int k = 0; k < nargs; k++) {
            dts[k] = dt_parse(ds[k]);
            in[k] = r->data + off[k];
        }
        ncases++;
        ew_program *p = NULL;
        int rc = build(fn, nargs, dts, rdt, &p);
        if (rc) {
            fprintf(stderr, "%s(%s%s%s): %s %s\n", fn, ds[0], nargs > 1 ? ", " : "", nargs > 1 ? ds[1] : "",
                    zc_errname(rc), zc_errmsg());
            harness_failures++;
            continue;
        }
        if (ew_output_dtype(p) != rdt) {
            fprintf(stderr, "%s(%s%s%s): result dtype %s, NumPy gives %s\n", fn, ds[0], nargs > 1 ? ", " : "",
                    nargs > 1 ? ds[1] : "", zc_dtype_name(ew_output_dtype(p)), rd);
            harness_failures++;
            ew_program_free(p);
            continue;
        }
        void *outb = calloc(n + 1, dt_size(rdt));
        ew_eval(p, n, in, strides, outb);
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            char msg[160], a0[64], a1[64] = "";
            double want;
            if (nargs == 2 && floor_divide_std(fn, rdt, in, dts, i, &want)) { /* the standard, not NumPy */
                double g = get_real(outb, rdt, i);
                if (g == want && !signbit(g) == !signbit(want)) continue;
                snprintf(msg, sizeof msg, "got %.17g expected %.17g (the array API's special case)", g, want);
            } else if (same_elem(outb, r->data + roff, rdt, i, tol, msg, sizeof msg)) {
                continue;
            }
            if (bad++ < 3) {
                describe_in(a0, sizeof a0, in[0], dts[0], i);
                if (nargs > 1) describe_in(a1, sizeof a1, in[1], dts[1], i);
                fprintf(stderr, "%s(%s %s%s%s%s) -> %s: %s\n", fn, ds[0], a0, nargs > 1 ? ", " : "",
                        nargs > 1 ? ds[1] : "", a1, rd, msg);
            }
        }
        if (bad) {
            fprintf(stderr, "%s(%s%s%s): %d of %zu differ\n", fn, ds[0], nargs > 1 ? ", " : "", nargs > 1 ? ds[1] : "",
                    bad, n);
            harness_failures++;
            nbad_cases++;
        }
        free(outb);
        ew_program_free(p);
    }
    free(man);
    if (nbad_cases) fprintf(stderr, "%d of %d cases differ from NumPy\n", nbad_cases, ncases);
    return ncases;
}

static void numpy_section(const char *section, int min_cases)
{
    ref_t r;
    int rc = ref_load(section, &r);
    CHECK(rc == 0);
    if (rc == 0) {
        int n = run_cases(&r);
        printf("%s: %d cases\n", section, n);
        CHECK(n >= min_cases);
    }
    ref_free(&r);
}

/* ------------------------------------------------------------------ NumPy comparisons */

TEST(ew_numpy_unary) { numpy_section("unary", 300); }
TEST(ew_numpy_binary) { numpy_section("binary", 250); }
TEST(ew_numpy_mixed) { numpy_section("mixed", 800); }
TEST(ew_numpy_cast) { numpy_section("cast", 169); }

static const zc_dtype ALL_DT[] = {ZC_BOOL, ZC_INT8, ZC_INT16, ZC_INT32, ZC_INT64, ZC_UINT8, ZC_UINT16,
                                  ZC_UINT32, ZC_UINT64, ZC_FLOAT16, ZC_FLOAT32, ZC_FLOAT64, ZC_COMPLEX64,
                                  ZC_COMPLEX128};
#define NDT 14

TEST(ew_promote_table)
{
    ref_t r;
    int rc = ref_load("promote", &r);
    CHECK(rc == 0);
    int n = 0;
    char *save = NULL;
    for (char *line = rc ? NULL : strtok_r(r.man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char a[24], b[24], c[24];
        if (sscanf(line, "promote %23s %23s %23s", a, b, c) != 3) continue;
        zc_dtype t = ZC_DTYPE_INVALID;
        CHECK_OK(ew_promote(dt_parse(a), dt_parse(b), &t));
        if (t != dt_parse(c)) {
            fprintf(stderr, "promote(%s, %s) = %s, NumPy %s\n", a, b, zc_dtype_name(t), c);
            harness_failures++;
        }
        n++;
    }
    CHECK(n == NDT * NDT);
    ref_free(&r);
    zc_dtype t;
    CHECK_ERR(ew_promote(ZC_UNICODE, ZC_INT8, &t), ZC_EINVAL, "unicode");
}

/* The kernel accepts a function on a dtype exactly when the reference (an
 * independent list of the array API's categories) has a case for it. */
TEST(ew_accepted_dtypes)
{
    static char seen[128][NDT];
    memset(seen, 0, sizeof seen);
    const char *sections[2] = {"unary", "binary"};
    for (int s = 0; s < 2; s++) {
        ref_t r;
        int rc = ref_load(sections[s], &r);
        CHECK(rc == 0);
        char *save = NULL;
        for (char *line = rc ? NULL : strtok_r(r.man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char fn[48], rd[24], d0[24];
            int nargs, tol;
            size_t n, roff;
            if (sscanf(line, "case %47s %d %zu %23s %zu %d %23s", fn, &nargs, &n, rd, &roff, &tol, d0) != 7) continue;
            int op = ew_op_from_name(fn);
            CHECK(op >= 0);
            for (int k = 0; k < NDT && op >= 0; k++)
                if (ALL_DT[k] == dt_parse(d0)) seen[op][k] = 1;
        }
        ref_free(&r);
    }
    int checked = 0;
    for (int op = 0; op < EW_BINARY_END_; op++) {
        if (op == EW_UNARY_END_) continue;
        int nargs = op < EW_UNARY_END_ ? 1 : 2;
        for (int k = 0; k < NDT; k++) {
            zc_dtype d[2] = {ALL_DT[k], ALL_DT[k]};
            ew_program *p = NULL;
            int rc = build(ew_op_name((ew_op)op), nargs, d, ZC_DTYPE_INVALID, &p);
            ew_program_free(p);
            checked++;
            if ((rc == 0) != seen[op][k]) {
                fprintf(stderr, "%s on %s: kernel %s, reference %s\n", ew_op_name((ew_op)op), zc_dtype_name(ALL_DT[k]),
                        rc ? "refuses" : "accepts", seen[op][k] ? "accepts" : "refuses");
                harness_failures++;
            }
            if (rc) {
                CHECK(rc == ZC_EINVAL);
                CHECK(strstr(zc_errmsg(), ew_op_name((ew_op)op)) != NULL);
                CHECK(strstr(zc_errmsg(), zc_dtype_name(ALL_DT[k])) != NULL);
            }
        }
    }
    CHECK(checked == (EW_BINARY_END_ - 1) * NDT);
}

/* ------------------------------------------------------------------ fused chains */

typedef struct {
    ew_program *p;
    int a, b;
} prog_ab;

static int B(ew_program *p, ew_op op, int x, int y)
{
    int r = -1;
    CHECK_OK(ew_binary(p, op, x, y, &r));
    return r;
}

static int U(ew_program *p, ew_op op, int x)
{
    int r = -1;
    CHECK_OK(ew_unary(p, op, x, &r));
    return r;
}

/* The ten-operation chains of kernels_ew_ref.py, with weak Python scalars. */
static ew_program *chain_f32(void)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int a = ew_input(p, 0, ZC_FLOAT32), b = ew_input(p, 1, ZC_FLOAT32);
    int t = B(p, EW_MULTIPLY, a, b);
    t = B(p, EW_ADD, t, ew_const_f64(p, 1.5));
    t = U(p, EW_SQRT, U(p, EW_ABS, t));
    t = B(p, EW_DIVIDE, t, B(p, EW_SUBTRACT, b, ew_const_i64(p, 2)));
    t = B(p, EW_MAXIMUM, t, a);
    int w;
    CHECK_OK(ew_where(p, B(p, EW_GREATER, a, ew_const_i64(p, 0)), t, U(p, EW_NEGATIVE, t), &w));
    t = B(p, EW_POW, w, ew_const_i64(p, 2));
    t = B(p, EW_SUBTRACT, t, B(p, EW_MULTIPLY, a, ew_const_f64(p, 0.25)));
    t = B(p, EW_ADD, B(p, EW_FLOOR_DIVIDE, t, ew_const_i64(p, 3)), B(p, EW_REMAINDER, t, ew_const_f64(p, 0.75)));
    t = B(p, EW_MINIMUM, t, ew_const_f64(p, 1e30));
    CHECK(ew_reg_dtype(p, t) == ZC_FLOAT32);
    CHECK_OK(ew_set_output(p, t));
    return p;
}

static ew_program *chain_i8(void)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int a = ew_input(p, 0, ZC_INT8), b = ew_input(p, 1, ZC_INT8);
    int t = B(p, EW_MULTIPLY, a, b);
    t = B(p, EW_ADD, t, ew_const_i64(p, 100));
    t = B(p, EW_FLOOR_DIVIDE, t, ew_const_i64(p, 7));
    t = B(p, EW_ADD, t, B(p, EW_REMAINDER, a, ew_const_i64(p, 5)));
    t = B(p, EW_BITWISE_LEFT_SHIFT, t, ew_const_i64(p, 1));
    t = B(p, EW_BITWISE_XOR, t, b);
    t = B(p, EW_SUBTRACT, t, a);
    t = U(p, EW_ABS, t);
    t = B(p, EW_MULTIPLY, t, ew_const_i64(p, 3));
    t = B(p, EW_MAXIMUM, t, b);
    t = B(p, EW_BITWISE_RIGHT_SHIFT, t, ew_const_i64(p, 2));
    int w;
    CHECK_OK(ew_where(p, B(p, EW_LESS, a, b), t, U(p, EW_NEGATIVE, t), &w));
    CHECK(ew_reg_dtype(p, w) == ZC_INT8);
    CHECK_OK(ew_set_output(p, w));
    return p;
}

static int count_diff(const void *got, const void *exp, zc_dtype t, size_t n, const char *what)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char msg[160];
        if (same_elem(got, exp, t, i, 0, msg, sizeof msg)) continue;
        if (bad++ < 3) fprintf(stderr, "%s: element %zu: %s\n", what, i, msg);
    }
    return bad;
}

/* Evaluate with contiguous, strided (stride 3 and -1) and broadcast (stride 0) inputs. */
static void check_chain(ew_program *p, zc_dtype t, size_t n, const void *a, const void *b, const void *full,
                        const void *bcast, const char *name)
{
    size_t sz = dt_size(t);
    unsigned char *out = calloc(n, sz), *a3 = calloc(3 * n, sz), *brev = calloc(n, sz);
    const void *in[2] = {a, b};
    int64_t st[2] = {1, 1};
    ew_eval(p, n, in, st, out);
    CHECK(count_diff(out, full, t, n, name) == 0);
    /* a every third element, b reversed (negative stride from its last element) */
    for (size_t i = 0; i < n; i++) {
        memcpy(a3 + 3 * i * sz, (const unsigned char *)a + i * sz, sz);
        memcpy(brev + (n - 1 - i) * sz, (const unsigned char *)b + i * sz, sz);
    }
    const void *in2[2] = {a3, brev + (n - 1) * sz};
    int64_t st2[2] = {3, -1};
    memset(out, 0, n * sz);
    ew_eval(p, n, in2, st2, out);
    CHECK(count_diff(out, full, t, n, name) == 0);
    /* b broadcast */
    int64_t st3[2] = {1, 0};
    memset(out, 0, n * sz);
    ew_eval(p, n, in, st3, out);
    CHECK(count_diff(out, bcast, t, n, name) == 0);
    /* odd run lengths: runs that end inside a tile */
    memset(out, 0, n * sz);
    for (size_t off = 0; off < n;) {
        size_t m = (off * 7 + 13) % 1500 + 1;
        if (m > n - off) m = n - off;
        const void *in4[2] = {(const unsigned char *)a + off * sz, (const unsigned char *)b + off * sz};
        ew_eval(p, m, in4, st, out + off * sz);
        off += m;
    }
    CHECK(count_diff(out, full, t, n, name) == 0);
    free(out);
    free(a3);
    free(brev);
}

TEST(ew_chain_numpy)
{
    ref_t r;
    int rc = ref_load("chain", &r);
    CHECK(rc == 0);
    int chains = 0;
    char *save = NULL;
    for (char *line = rc ? NULL : strtok_r(r.man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[16], dt[24];
        size_t n, oa, ob, of, obc;
        if (sscanf(line, "chain %15s %23s %zu %zu %zu %zu %zu", name, dt, &n, &oa, &ob, &of, &obc) != 7) continue;
        ew_program *p = !strcmp(name, "f32") ? chain_f32() : chain_i8();
        CHECK(ew_output_dtype(p) == dt_parse(dt));
        check_chain(p, dt_parse(dt), n, r.data + oa, r.data + ob, r.data + of, r.data + obc, name);
        ew_program_free(p);
        chains++;
    }
    CHECK(chains == 2);
    ref_free(&r);
}

/* ------------------------------------------------------------------ scalar rules and errors */

TEST(ew_weak_scalars)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int f32 = ew_input(p, 0, ZC_FLOAT32), i8 = ew_input(p, 1, ZC_INT8), bl = ew_input(p, 2, ZC_BOOL);
    int f16 = ew_input(p, 3, ZC_FLOAT16), u64 = ew_input(p, 4, ZC_UINT64);
    CHECK(ew_reg_dtype(p, ew_const_i64(p, 2)) == ZC_INT64);
    CHECK(ew_reg_dtype(p, ew_const_f64(p, 2)) == ZC_FLOAT64);
    CHECK(ew_reg_dtype(p, ew_const_bool(p, 1)) == ZC_BOOL);
    CHECK(ew_reg_dtype(p, ew_const_c128(p, 1, 2)) == ZC_COMPLEX128);
    /* 2 ** a stays float32; a * 0.5 stays float32; int scalar with float array → float */
    CHECK(ew_reg_dtype(p, B(p, EW_POW, ew_const_i64(p, 2), f32)) == ZC_FLOAT32);
    CHECK(ew_reg_dtype(p, B(p, EW_MULTIPLY, f32, ew_const_f64(p, 0.5))) == ZC_FLOAT32);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, f16, ew_const_i64(p, 3))) == ZC_FLOAT16);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, i8, ew_const_i64(p, -128))) == ZC_INT8);
    /* float scalar with an integer array → float64 (NumPy 1.24 and 2 agree) */
    CHECK(ew_reg_dtype(p, B(p, EW_MULTIPLY, i8, ew_const_f64(p, 1.5))) == ZC_FLOAT64);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, bl, ew_const_i64(p, 1))) == ZC_INT64);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, bl, ew_const_f64(p, 1))) == ZC_FLOAT64);
    CHECK(ew_reg_dtype(p, B(p, EW_LOGICAL_AND, bl, ew_const_bool(p, 1))) == ZC_BOOL);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, i8, ew_const_bool(p, 1))) == ZC_INT8);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, f32, ew_const_c128(p, 0, 1))) == ZC_COMPLEX64);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, i8, ew_const_c128(p, 0, 1))) == ZC_COMPLEX128);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, u64, ew_const_i64(p, 1))) == ZC_UINT64);
    /* weak with weak stays weak; it meets an array later */
    int s = B(p, EW_MULTIPLY, ew_const_i64(p, 3), ew_const_f64(p, 0.5));
    CHECK(ew_reg_dtype(p, s) == ZC_FLOAT64);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, f32, s)) == ZC_FLOAT32);
    CHECK(ew_reg_dtype(p, B(p, EW_ADD, f32, U(p, EW_NEGATIVE, ew_const_i64(p, 4)))) == ZC_FLOAT32);
    /* a scalar that does not fit the array's integer dtype */
    int r;
    CHECK_ERR(ew_binary(p, EW_ADD, i8, ew_const_i64(p, 1000), &r), ZC_EINVAL, "1000");
    CHECK_ERR(ew_binary(p, EW_SUBTRACT, u64, ew_const_i64(p, -1), &r), ZC_EINVAL, "uint64");
    CHECK_ERR(ew_binary(p, EW_BITWISE_AND, i8, ew_const_f64(p, 1), &r), ZC_EINVAL, "bitwise_and");
    CHECK_ERR(ew_binary(p, EW_BITWISE_OR, f32, ew_const_i64(p, 1), &r), ZC_EINVAL, "float32");
    CHECK_ERR(ew_where(p, ew_const_i64(p, 1), f32, f32, &r), ZC_EINVAL, "condition must be bool");
    CHECK_ERR(ew_where(p, i8, f32, f32, &r), ZC_EINVAL, "int8");
    ew_program_free(p);

    /* values: float32 2 ** x, uint8 x - 1 wraps, bool + 1 */
    CHECK_OK(ew_program_create(&p));
    int x = ew_input(p, 0, ZC_UINT8);
    int y = B(p, EW_SUBTRACT, x, ew_const_i64(p, 1));
    CHECK_OK(ew_set_output(p, y));
    uint8_t xin[4] = {0, 1, 255, 7}, xout[4];
    const void *in[1] = {xin};
    int64_t st[1] = {1};
    ew_eval(p, 4, in, st, xout);
    CHECK(xout[0] == 255 && xout[1] == 0 && xout[2] == 254 && xout[3] == 6);
    ew_program_free(p);
}

TEST(ew_errors)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int f = ew_input(p, 0, ZC_FLOAT32), c = ew_input(p, 1, ZC_COMPLEX64), r;
    CHECK(ew_op_from_name("add") == EW_ADD);
    CHECK(ew_op_from_name("where") > EW_BINARY_END_);
    CHECK(ew_op_from_name("fused_multiply_add") == -1);
    CHECK(ew_op_from_name("") == -1);
    CHECK(!strcmp(ew_op_name(EW_BITWISE_RIGHT_SHIFT), "bitwise_right_shift"));
    CHECK_ERR(ew_binary(p, EW_BITWISE_AND, f, f, &r), ZC_EINVAL, "bitwise_and: unsupported dtypes float32, float32");
    CHECK_ERR(ew_unary(p, EW_BITWISE_INVERT, f, &r), ZC_EINVAL, "bitwise_invert");
    CHECK_ERR(ew_binary(p, EW_LESS, c, c, &r), ZC_EINVAL, "complex64");
    CHECK_ERR(ew_binary(p, EW_LOGICAL_AND, f, f, &r), ZC_EINVAL, "logical_and");
    CHECK_ERR(ew_unary(p, EW_IMAG, f, &r), ZC_EINVAL, "imag");
    CHECK_ERR(ew_unary(p, EW_FLOOR, c, &r), ZC_EINVAL, "floor");
    CHECK_ERR(ew_binary(p, EW_ATAN2, c, f, &r), ZC_EINVAL, "complex64, float32");
    CHECK_ERR(ew_unary(p, EW_NEGATIVE, ew_input(p, 2, ZC_BOOL), &r), ZC_EINVAL, "negative");
    CHECK_ERR(ew_unary(p, (ew_op)EW_ADD, f, &r), ZC_EINVAL, "not a unary");
    CHECK_ERR(ew_binary(p, EW_SIN, f, f, &r), ZC_EINVAL, "not a binary");
    CHECK_ERR(ew_unary(p, EW_SIN, 99, &r), ZC_EINVAL, "register 99");
    CHECK_ERR(ew_input(p, 0, ZC_INT8), ZC_EINVAL, "input 0");
    CHECK_ERR(ew_input(p, EW_MAX_INPUTS, ZC_INT8), ZC_EINVAL, "input index");
    CHECK_ERR(ew_input(p, 3, ZC_UNICODE), ZC_EINVAL, "unicode");
    CHECK_ERR(ew_astype(p, f, ZC_BYTES, &r), ZC_EINVAL, "astype");
    CHECK_ERR(ew_set_output(p, -1), ZC_EINVAL, "register -1");
    CHECK(ew_output_dtype(p) == ZC_DTYPE_INVALID);
    ew_program_free(p);
    ew_program_free(NULL);
}

/* ------------------------------------------------------------------ layouts */

/* A program over bool, float16, int16, uint8 and complex64 inputs; returns it with output set. */
static ew_program *mixed_program(zc_dtype out_dtype)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int b = ew_input(p, 0, ZC_BOOL), h = ew_input(p, 1, ZC_FLOAT16), i = ew_input(p, 2, ZC_INT16);
    int u = ew_input(p, 3, ZC_UINT8), c = ew_input(p, 4, ZC_COMPLEX64);
    int hu = B(p, EW_MULTIPLY, h, ew_const_f64(p, 1.25));   /* float16 */
    int iu = B(p, EW_ADD, i, u);                             /* int16 */
    int w;
    CHECK_OK(ew_where(p, b, hu, iu, &w));                    /* float32 */
    int z = B(p, EW_ADD, c, w);                              /* complex64 */
    int r = B(p, EW_ADD, U(p, EW_REAL, z), U(p, EW_IMAG, z));
    int o;
    CHECK_OK(ew_astype(p, r, out_dtype, &o));
    CHECK_OK(ew_set_output(p, o));
    return p;
}

TEST(ew_layouts)
{
    enum { N = 2500 };
    static uint8_t bl[N], u8[N];
    static uint16_t f16[N];
    static int16_t i16[N];
    static float c64[2 * N];
    for (int k = 0; k < N; k++) {
        bl[k] = (uint8_t)(k % 3 == 0 ? 0 : k % 3 == 1 ? 1 : 2); /* 2 is true too */
        f16[k] = (uint16_t)(0x3c00 + (k * 37) % 0x400);        /* [1, 2) */
        if (k % 97 == 5) f16[k] = 0x7c00;                       /* inf */
        i16[k] = (int16_t)(k * 53 - 30000);
        u8[k] = (uint8_t)(k * 7);
        c64[2 * k] = (float)k * 0.5f;
        c64[2 * k + 1] = -(float)k;
    }
    const zc_dtype outs[] = {ZC_FLOAT16, ZC_FLOAT64, ZC_INT32, ZC_BOOL, ZC_COMPLEX128};
    for (int t = 0; t < 5; t++) {
        ew_program *p = mixed_program(outs[t]);
        size_t sz = dt_size(outs[t]);
        unsigned char *ref = calloc(N, sz), *got = calloc(N, sz);
        /* reference: every input contiguous */
        const void *in[5] = {bl, f16, i16, u8, c64};
        int64_t st[5] = {1, 1, 1, 1, 1};
        ew_eval(p, N, in, st, ref);
        /* the same values one element at a time (all inputs scalar: stride 0) */
        int bad = 0;
        for (int k = 0; k < N; k += 7) {
            const void *in1[5] = {bl + k, f16 + k, i16 + k, u8 + k, c64 + 2 * k};
            int64_t st0[5] = {0, 0, 0, 0, 0};
            unsigned char one[16];
            ew_eval(p, 1, in1, st0, one);
            bad += memcmp(one, ref + (size_t)k * sz, sz) != 0;
        }
        CHECK(bad == 0);
        /* gathered: inputs spread with strides 2, -1, 3, 5, and 4 (complex) */
        uint8_t *bl2 = calloc(2 * N, 1), *u85 = calloc(5 * N, 1);
        uint16_t *f16r = calloc(N, 2);
        int16_t *i163 = calloc(3 * N, 2);
        float *c644 = calloc(8 * N, 4);
        for (int k = 0; k < N; k++) {
            bl2[2 * k] = bl[k];
            f16r[N - 1 - k] = f16[k];
            i163[3 * k] = i16[k];
            u85[5 * k] = u8[k];
            c644[8 * k] = c64[2 * k];
            c644[8 * k + 1] = c64[2 * k + 1];
        }
        const void *in2[5] = {bl2, f16r + N - 1, i163, u85, c644};
        int64_t st2[5] = {2, -1, 3, 5, 4};
        ew_eval(p, N, in2, st2, got);
        CHECK(memcmp(got, ref, N * sz) == 0);
        free(bl2); free(u85); free(f16r); free(i163); free(c644);
        free(ref);
        free(got);
        ew_program_free(p);
    }
    /* spot values: bool 2 counts as true; float16 output rounds once */
    ew_program *p = mixed_program(ZC_FLOAT64);
    const void *in[5] = {bl, f16, i16, u8, c64};
    int64_t st[5] = {1, 1, 1, 1, 1};
    double out[3];
    ew_eval(p, 3, in, st, out);
    /* k=0: cond 0 → i16+u8 = -30000 + 0; z = 0 + 0j + -30000 → real -30000, imag 0 */
    CHECK(out[0] == -30000.0);
    /* k=1, 2: cond true (1, and 2) → w = float16(f16 * 1.25); z = (0.5k + w, -k); r = re + im in float32 */
    for (int k = 1; k <= 2; k++) {
        int e;
        double m = frexp(half_to_float(f16[k]) * 1.25, &e);
        float w = (float)ldexp(nearbyint(ldexp(m, 11)), e - 11); /* round to 11 significant bits */
        float re = 0.5f * (float)k + w, im = -(float)k;
        CHECK(out[k] == (double)(re + im));
    }
    ew_program_free(p);
}

/* A program of constants only gives a broadcast result; pow special cases. */
TEST(ew_constants)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int c = B(p, EW_ADD, ew_const_i64(p, 2), ew_const_i64(p, 3));
    int h;
    CHECK_OK(ew_astype(p, B(p, EW_DIVIDE, c, ew_const_i64(p, 3)), ZC_FLOAT16, &h));
    CHECK_OK(ew_set_output(p, h));
    CHECK(ew_output_dtype(p) == ZC_FLOAT16);
    CHECK(ew_ninputs(p) == 0);
    uint16_t out[40];
    ew_eval(p, 40, NULL, NULL, out);
    for (int k = 0; k < 40; k++) CHECK(out[k] == 0x3eab); /* float16(5/3) */
    ew_program_free(p);

    /* x ** 0 == 1 even for NaN; x ** 1 == x; x ** 2 == x * x; x ** 0.5 uses pow (pow(-0, .5) is +0) */
    CHECK_OK(ew_program_create(&p));
    int x = ew_input(p, 0, ZC_FLOAT64);
    int e0 = B(p, EW_POW, x, ew_const_i64(p, 0)), e1 = B(p, EW_POW, x, ew_const_f64(p, 1));
    int e2 = B(p, EW_POW, x, ew_const_i64(p, 2)), eh = B(p, EW_POW, x, ew_const_f64(p, 0.5));
    int s = B(p, EW_ADD, B(p, EW_ADD, e0, e1), B(p, EW_ADD, e2, eh));
    double xs[4] = {NAN, -0.0, 3.0, 1e200}, got[4];
    const void *in[1] = {xs};
    int64_t st[1] = {1};
    int regs[4] = {e0, e1, e2, eh};
    double want[4][4] = {{1, 1, 1, 1}, {NAN, -0.0, 3.0, 1e200}, {NAN, 0.0, 9.0, INFINITY}, {NAN, 0.0, sqrt(3.0), 1e100}};
    for (int r = 0; r < 4; r++) {
        CHECK_OK(ew_set_output(p, regs[r]));
        ew_eval(p, 4, in, st, got);
        for (int k = 0; k < 4; k++) {
            char msg[128];
            if (!same_elem(got, want[r], ZC_FLOAT64, (size_t)k, 0, msg, sizeof msg)) {
                fprintf(stderr, "pow case %d element %d: %s\n", r, k, msg);
                harness_failures++;
            }
        }
    }
    CHECK_OK(ew_set_output(p, s));
    ew_eval(p, 4, in, st, got);
    CHECK(got[2] == 1 + 3 + 9 + sqrt(3.0));
    ew_program_free(p);

    /* int8: 2 ** 7 wraps, (-2) ** 3, 0 ** 0 */
    CHECK_OK(ew_program_create(&p));
    x = ew_input(p, 0, ZC_INT8);
    int y = ew_input(p, 1, ZC_INT8);
    CHECK_OK(ew_set_output(p, B(p, EW_POW, x, y)));
    int8_t xa[5] = {2, -2, 0, 3, -1}, ya[5] = {7, 3, 0, -2, -3}, za[5];
    const void *in2[2] = {xa, ya};
    int64_t st2[2] = {1, 1};
    ew_eval(p, 5, in2, st2, za);
    CHECK(za[0] == -128 && za[1] == -8 && za[2] == 1 && za[3] == 0 && za[4] == -1);
    ew_program_free(p);
}

/* ------------------------------------------------------------------ JSON */

static void eval_same(const ew_program *a, const ew_program *b, int nin, const zc_dtype *dts, size_t n)
{
    const void *in[8];
    int64_t st[8];
    unsigned char *bufs[8];
    for (int k = 0; k < nin; k++) {
        size_t sz = dt_size(dts[k]);
        bufs[k] = malloc(n * sz);
        for (size_t i = 0; i < n * sz; i++) bufs[k][i] = (unsigned char)(i * 131 + (size_t)k * 17 + (i >> 3));
        if (dts[k] == ZC_BOOL)
            for (size_t i = 0; i < n; i++) bufs[k][i] &= 1;
        in[k] = bufs[k];
        st[k] = 1;
    }
    size_t osz = dt_size(ew_output_dtype(a));
    unsigned char *oa = calloc(n, osz), *ob = calloc(n, osz);
    CHECK(ew_output_dtype(a) == ew_output_dtype(b));
    ew_eval(a, n, in, st, oa);
    ew_eval(b, n, in, st, ob);
    CHECK(memcmp(oa, ob, n * osz) == 0);
    free(oa);
    free(ob);
    for (int k = 0; k < nin; k++) free(bufs[k]);
}

static void roundtrip(const ew_program *p, int nin, const zc_dtype *dts)
{
    char *j1 = NULL, *j2 = NULL;
    ew_program *q = NULL;
    CHECK_OK(ew_program_to_json(p, &j1));
    CHECK_OK(ew_program_from_json(j1, &q));
    if (!q) {
        zc_free(j1);
        return;
    }
    CHECK_OK(ew_program_to_json(q, &j2));
    CHECK(j1 && j2 && !strcmp(j1, j2));
    CHECK(ew_ninputs(q) == ew_ninputs(p));
    eval_same(p, q, nin, dts, 1500);
    zc_free(j1);
    zc_free(j2);
    ew_program_free(q);
}

TEST(ew_json_roundtrip)
{
    ew_program *p = chain_f32();
    zc_dtype d2[2] = {ZC_FLOAT32, ZC_FLOAT32};
    roundtrip(p, 2, d2);
    ew_program_free(p);
    p = chain_i8();
    zc_dtype i2[2] = {ZC_INT8, ZC_INT8};
    roundtrip(p, 2, i2);
    ew_program_free(p);
    p = mixed_program(ZC_FLOAT16);
    zc_dtype m5[5] = {ZC_BOOL, ZC_FLOAT16, ZC_INT16, ZC_UINT8, ZC_COMPLEX64};
    roundtrip(p, 5, m5);
    ew_program_free(p);

    /* every kind of constant, special floats included */
    CHECK_OK(ew_program_create(&p));
    int x = ew_input(p, 0, ZC_FLOAT64);
    uint64_t umax = UINT64_MAX;
    int8_t i8 = -128;
    uint16_t h = 0x7bff; /* float16 max */
    float fc[2] = {1.5f, -INFINITY};
    double dn = -0.0;
    unsigned char bt = 1;
    int acc = x;
    int cs[] = {ew_const_i64(p, INT64_MIN), ew_const_f64(p, NAN), ew_const_f64(p, -INFINITY),
                ew_const_f64(p, 0.1), ew_const_bool(p, 1), ew_const_c128(p, 0.25, NAN),
                ew_const_typed(p, ZC_UINT64, &umax), ew_const_typed(p, ZC_INT8, &i8),
                ew_const_typed(p, ZC_FLOAT16, &h), ew_const_typed(p, ZC_COMPLEX64, fc),
                ew_const_typed(p, ZC_FLOAT64, &dn), ew_const_typed(p, ZC_BOOL, &bt)};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        CHECK(cs[k] >= 0);
        int t;
        if (ew_reg_dtype(p, cs[k]) == ZC_BOOL) CHECK_OK(ew_where(p, cs[k], acc, x, &t));
        else t = B(p, EW_ADD, acc, cs[k]);
        CHECK_OK(ew_astype(p, t, ZC_COMPLEX128, &acc));
    }
    int o = B(p, EW_MULTIPLY, acc, acc);
    CHECK_OK(ew_set_output(p, o));
    char *j = NULL;
    CHECK_OK(ew_program_to_json(p, &j));
    CHECK(j && strstr(j, "\"18446744073709551615\"") && strstr(j, "\"nan\"") && strstr(j, "\"-inf\"") &&
          strstr(j, "65504") && strstr(j, "-0.0"));
    zc_free(j);
    zc_dtype d1[1] = {ZC_FLOAT64};
    roundtrip(p, 1, d1);
    ew_program_free(p);

    /* no output yet */
    CHECK_OK(ew_program_create(&p));
    ew_input(p, 0, ZC_INT8);
    CHECK_OK(ew_program_to_json(p, &j));
    ew_program *q = NULL;
    CHECK_OK(ew_program_from_json(j, &q));
    CHECK(q && ew_output_dtype(q) == ZC_DTYPE_INVALID && ew_ninputs(q) == 1);
    zc_free(j);
    ew_program_free(q);
    ew_program_free(p);
}

TEST(ew_json_bad)
{
    ew_program *q = (ew_program *)(uintptr_t)1;
    CHECK_ERR(ew_program_from_json("{", &q), ZC_EFORMAT, "ew program JSON");
    CHECK(q == NULL);
    CHECK_ERR(ew_program_from_json("[]", &q), ZC_EFORMAT, "expected");
    CHECK_ERR(ew_program_from_json("{\"ew\":2,\"nodes\":[]}", &q), ZC_EFORMAT, "expected");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[5]}", &q), ZC_EFORMAT, "node 0");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"input\",0,\"float32\"],[\"sin\",1]]}", &q), ZC_EFORMAT,
              "node 1");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"input\",0,\"float32\"],[\"frobnicate\",0]]}", &q),
              ZC_EINVAL, "frobnicate");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"input\",0,\"float32\"],[\"bitwise_and\",0,0]]}", &q),
              ZC_EINVAL, "bitwise_and: unsupported dtypes float32, float32");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"input\",0,\"float32\"]],\"output\":1}", &q), ZC_EFORMAT,
              "output");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"input\",99,\"float32\"]]}", &q), ZC_EFORMAT, "input");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"input\",0,\"U7\"]]}", &q), ZC_EINVAL, "unicode");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"typed\",\"int8\",300]]}", &q), ZC_EFORMAT, "typed");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"typed\",\"uint64\",\"-1\"]]}", &q), ZC_EFORMAT, "typed");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"float\",\"one\"]]}", &q), ZC_EFORMAT, "float");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"astype\",0,\"int8\"]]}", &q), ZC_EFORMAT, "astype");
    CHECK_ERR(ew_program_from_json("{\"ew\":1,\"nodes\":[[\"int\",1],[\"add\",0,0,0]]}", &q), ZC_EFORMAT, "add");
    CHECK_ERR(ew_program_from_json(NULL, &q), ZC_EINVAL, NULL);
    /* a valid one parses */
    CHECK_OK(ew_program_from_json(
        "{\"ew\":1,\"nodes\":[[\"input\",1,\"int16\"],[\"float\",0.5],[\"multiply\",0,1]],\"output\":2}", &q));
    CHECK(q && ew_output_dtype(q) == ZC_FLOAT64 && ew_ninputs(q) == 2);
    ew_program_free(q);
}

/* ------------------------------------------------------------------ limits, allocation failures, threads */

TEST(ew_limits)
{
    ew_program *p;
    CHECK_OK(ew_program_create(&p));
    int x = ew_input(p, 0, ZC_FLOAT64), regs[300];
    for (int k = 0; k < 300; k++) regs[k] = B(p, EW_ADD, x, ew_const_i64(p, k));
    int s = regs[0];
    for (int k = 1; k < 300; k++) s = B(p, EW_ADD, s, regs[k]);
    CHECK_ERR(ew_set_output(p, s), ZC_EINVAL, "live values");
    /* a shorter sum fits (and uses short tiles) */
    s = regs[0];
    for (int k = 1; k < 200; k++) s = B(p, EW_ADD, s, regs[k]);
    CHECK_OK(ew_set_output(p, s));
    double xs[100], out[100];
    for (int k = 0; k < 100; k++) xs[k] = k;
    const void *in[1] = {xs};
    int64_t st[1] = {1};
    ew_eval(p, 100, in, st, out);
    int bad = 0;
    for (int k = 0; k < 100; k++) bad += out[k] != 200.0 * k + 199 * 200 / 2;
    CHECK(bad == 0);
    /* an output needing too many steps */
    s = regs[0];
    for (int k = 0; k < 1100; k++) s = B(p, EW_MULTIPLY, s, x);
    CHECK_ERR(ew_set_output(p, s), ZC_EINVAL, "too long");
    /* too many values */
    int r = 0, rc = 0;
    for (int k = 0; k < 10000 && !rc; k++) rc = ew_binary(p, EW_MULTIPLY, x, ew_const_f64(p, k + 0.5), &r);
    CHECK(rc == ZC_EINVAL);
    CHECK(strstr(zc_errmsg(), "too long") != NULL);
    ew_program_free(p);
}

TEST(ew_alloc_failures)
{
    int ok = 0, nomem = 0;
    for (long k = 1; k < 200; k++) {
        zc_test_fail_alloc(k, 0);
        ew_program *p = NULL;
        int rc = ew_program_create(&p);
        int x = -1, t = -1;
        if (!rc) x = ew_input(p, 0, ZC_FLOAT32);
        if (x >= 0) rc = ew_binary(p, EW_MULTIPLY, x, ew_const_f64(p, 2.0), &t);
        else if (!rc) rc = x;
        for (int j = 0; j < 40 && !rc; j++) rc = ew_binary(p, EW_ADD, t, x, &t);
        if (!rc) rc = ew_set_output(p, t);
        char *js = NULL;
        if (!rc) rc = ew_program_to_json(p, &js);
        ew_program *q = NULL;
        if (!rc) rc = ew_program_from_json(js, &q);
        zc_free(js);
        ew_program_free(q);
        ew_program_free(p);
        int failed = zc_test_fail_alloc(0, 0);
        if (rc == 0) ok++;
        else if (rc == ZC_ENOMEM) nomem++;
        else fprintf(stderr, "allocation %ld: %s %s\n", k, zc_errname(rc), zc_errmsg());
        CHECK(rc == 0 || rc == ZC_ENOMEM);
        CHECK(rc == 0 || failed > 0);
    }
    CHECK(nomem > 5);
    CHECK(ok > 0);
}

#include <pthread.h>

typedef struct {
    const ew_program *p;
    const float *a, *b;
    float *out;
    size_t n;
} thr_arg;

static void *thr_run(void *v)
{
    thr_arg *t = v;
    const void *in[2] = {t->a, t->b};
    int64_t st[2] = {1, 1};
    for (int rep = 0; rep < 20; rep++) ew_eval(t->p, t->n, in, st, t->out);
    return NULL;
}

TEST(ew_threads)
{
    enum { N = 20000 };
    ew_program *p = chain_f32();
    float *a = malloc(N * 4), *b = malloc(N * 4), *o1 = malloc(N * 4), *o2 = malloc(N * 4), *o3 = malloc(N * 4);
    for (int k = 0; k < N; k++) {
        a[k] = (float)sin(k) * 10;
        b[k] = (float)cos(k * 0.7) * 3;
    }
    thr_arg t1 = {p, a, b, o1, N}, t2 = {p, a, b, o2, N};
    pthread_t th1, th2;
    CHECK(pthread_create(&th1, NULL, thr_run, &t1) == 0);
    CHECK(pthread_create(&th2, NULL, thr_run, &t2) == 0);
    pthread_join(th1, NULL);
    pthread_join(th2, NULL);
    const void *in[2] = {a, b};
    int64_t st[2] = {1, 1};
    ew_eval(p, N, in, st, o3);
    CHECK(memcmp(o1, o3, N * 4) == 0);
    CHECK(memcmp(o2, o3, N * 4) == 0);
    free(a); free(b); free(o1); free(o2); free(o3);
    ew_program_free(p);
}
