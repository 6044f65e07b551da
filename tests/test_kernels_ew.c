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
            if (same_elem(outb, r->data + roff, rdt, i, tol, msg, sizeof msg)) continue;
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
