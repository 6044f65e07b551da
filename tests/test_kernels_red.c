/* tests/test_kernels_red.c — reductions (kernels/reduce.h) against NumPy.
 *
 * A Python script (run with /usr/bin/python3) writes random arrays of every dtype —
 * continuous values, "special" values (NaN, ±inf, -0.0, many ties, zeros), near-one
 * values for products, a set whose inner axis spans several tiles, one with an axis of
 * length 1 (var with ddof >= n divides by zero like NumPy), values 1000 ± 1 (var by
 * Chan's merges without cancellation; tolerance relative to the variance) — and NumPy's
 * result for every op × dtype × axis combination, plus a float64 scale for the
 * tolerance of inexact results. Each case is computed here in one pass and as a tree:
 * the array split at random along every axis, sub-blocks accumulated either into fresh
 * accumulators or into one already holding other sub-blocks (in shuffled order), the
 * partial accumulators merged pairwise in random order, then finalized. Integers,
 * booleans, indices and min/max must match exactly; sums, means and variances to
 * rounding (rtol × scale: 1e-12 float64, 2e-5 float32, 2e-2 float16). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "core/dtype.h"
#include "kernels/red_internal.h" /* record layouts, for white-box checks */
#include "kernels/reduce.h"
#include "npyload.h"

static const char *REF_PY =
    "import sys, itertools, warnings\n"
    "import numpy as np\n"
    "warnings.simplefilter('ignore')\n"
    "np.seterr(all='ignore')\n"
    "out = sys.argv[1]; dts = sys.argv[2].split(',')\n"
    "rng = np.random.default_rng(20240611)\n"
    "OPS = ['sum','prod','min','max','mean','var','std','argmin','argmax','any','all','count_nonzero']\n"
    "SETS = {'a': (7, 6, 5), 'b': (3, 4, 5, 6), 'p': (5, 6, 7), 'c': (3, 1100), 'd': (1, 5, 2), 'e': (6, 40)}\n"
    "def floats(dt, kind, shape):\n"
    "    if kind == 'p':\n"
    "        v = rng.uniform(0.95, 1.05, shape) * rng.choice([-1.0, 1.0], shape)\n"
    "        v[rng.random(shape) < 0.03] = 0.0\n"
    "        v[rng.random(shape) < 0.01] = np.nan\n"
    "    elif kind == 'b':\n"
    "        v = rng.integers(-16, 17, shape) / 4.0\n"
    "        r = rng.random(shape)\n"
    "        v[r < 0.04] = np.nan\n"
    "        v[(r >= 0.04) & (r < 0.06)] = np.inf\n"
    "        v[(r >= 0.06) & (r < 0.08)] = -np.inf\n"
    "        v[(r >= 0.08) & (r < 0.11)] = -0.0\n"
    "    elif kind == 'e':\n"
    "        v = 1000.0 + rng.uniform(-1, 1, shape)\n"
    "    else:\n"
    "        v = rng.uniform(-4 if dt == 'float16' else -100, 4 if dt == 'float16' else 100, shape)\n"
    "    return v\n"
    "def make(dt, kind, shape):\n"
    "    d = np.dtype(dt)\n"
    "    if d.kind == 'b':\n"
    "        return rng.random(shape) < (0.9 if kind == 'b' else 0.5)\n"
    "    if d.kind in 'iu':\n"
    "        if kind == 'b':\n"
    "            return rng.integers(-2 if d.kind == 'i' else 0, 3, shape).astype(d)\n"
    "        info = np.iinfo(d)\n"
    "        return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)\n"
    "    if d.kind == 'c':\n"
    "        part = 'float32' if d.itemsize == 8 else 'float64'\n"
    "        return (floats(part, kind, shape) + 1j * floats(part, kind, shape)).astype(d)\n"
    "    return floats(dt, kind, shape).astype(d)\n"
    "idx = open(out + '/index.txt', 'w')\n"
    "for s, shape in SETS.items():\n"
    "    nd = len(shape)\n"
    "    for dt in dts:\n"
    "        if s == 'e' and dt not in ('float64', 'complex128'):\n"
    "            continue  # large offsets: NumPy's own float32/16 var is too inexact to compare\n"
    "        x = make(dt, s, shape)\n"
    "        np.save('%s/x_%s_%s.npy' % (out, s, dt), x)\n"
    "        inexact = x.dtype.kind in 'fc'\n"
    "        xd = x.astype(np.complex128 if x.dtype.kind == 'c' else np.float64)\n"
    "        for op in OPS:\n"
    "            if inexact and (op == 'prod') != (s == 'p'):\n"
    "                continue\n"
    "            if not inexact and s == 'p':\n"
    "                continue\n"
    "            if x.dtype.kind == 'c' and op in ('min', 'max', 'argmin', 'argmax'):\n"
    "                continue\n"
    "            for mask in range(1, 1 << nd):\n"
    "                axes = tuple(i for i in range(nd) if mask >> i & 1)\n"
    "                if op in ('argmin', 'argmax') and len(axes) not in (1, nd):\n"
    "                    continue\n"
    "                for ddof in ((0, 1, 2) if op in ('var', 'std') else (0,)):\n"
    "                    if op in ('argmin', 'argmax'):\n"
    "                        r = getattr(np, op)(x) if len(axes) == nd else getattr(np, op)(x, axis=axes[0])\n"
    "                    elif op == 'count_nonzero':\n"
    "                        r = np.count_nonzero(x, axis=axes)\n"
    "                    elif op in ('var', 'std'):\n"
    "                        r = getattr(np, op)(x, axis=axes, ddof=ddof)\n"
    "                    else:\n"
    "                        r = getattr(np, op)(x, axis=axes)\n"
    "                    r = np.asarray(r)\n"
    "                    name = '%s_%s_%s_%d_%d' % (s, dt, op, mask, ddof)\n"
    "                    np.save('%s/%s.npy' % (out, name), r)\n"
    "                    if r.dtype.kind in 'fc':\n"
    "                        a = np.abs(xd.real) + np.abs(xd.imag)\n"
    "                        a[~np.isfinite(a)] = 0  # scale of the finite values\n"
    "                        if op == 'prod':\n"
    "                            sc = np.prod(np.where(a == 0, 1, a), axis=axes)\n"
    "                        elif op in ('var', 'std'):  # the variance itself: cancellation shows\n"
    "                            xm = np.where(np.isfinite(xd), xd, 0)\n"
    "                            sc = np.mean(np.abs(xm - np.mean(xm, axis=axes, keepdims=True)) ** 2, axis=axes)\n"
    "                            sc = np.sqrt(sc) if op == 'std' else sc\n"
    "                        elif op == 'mean':\n"
    "                            sc = np.mean(a, axis=axes)\n"
    "                        else:\n"
    "                            sc = np.sum(a, axis=axes)\n"
    "                        np.save('%s/%s_scale.npy' % (out, name), np.asarray(sc, dtype=np.float64))\n"
    "                    idx.write('%s %s %s %d %d\\n' % (s, dt, op, mask, ddof))\n"
    "idx.close()\n";

/* ---- small helpers ---- */

static uint64_t rng_state = 0x1234567887654321ull;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static const struct {
    const char *name, *descr;
    zc_dtype dt;
    size_t size;
} DT[] = {
    {"bool", "|b1", ZC_BOOL, 1},          {"int8", "|i1", ZC_INT8, 1},          {"int16", "<i2", ZC_INT16, 2},
    {"int32", "<i4", ZC_INT32, 4},        {"int64", "<i8", ZC_INT64, 8},        {"uint8", "|u1", ZC_UINT8, 1},
    {"uint16", "<u2", ZC_UINT16, 2},      {"uint32", "<u4", ZC_UINT32, 4},     {"uint64", "<u8", ZC_UINT64, 8},
    {"float16", "<f2", ZC_FLOAT16, 2},    {"float32", "<f4", ZC_FLOAT32, 4},   {"float64", "<f8", ZC_FLOAT64, 8},
    {"complex64", "<c8", ZC_COMPLEX64, 8}, {"complex128", "<c16", ZC_COMPLEX128, 16},
};
#define NDT (int)(sizeof DT / sizeof DT[0])

static int dt_index_name(const char *name)
{
    for (int i = 0; i < NDT; i++)
        if (!strcmp(DT[i].name, name)) return i;
    return -1;
}

static int dt_index(zc_dtype t)
{
    for (int i = 0; i < NDT; i++)
        if (DT[i].dt == t) return i;
    return -1;
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Element i of a real-valued array as double (complex: part 0/1). */
static double get_d(zc_dtype t, const void *p, size_t i, int part)
{
    switch (t) {
    case ZC_FLOAT16: return half_to_double(((const uint16_t *)p)[i]);
    case ZC_FLOAT32: return ((const float *)p)[i];
    case ZC_FLOAT64: return ((const double *)p)[i];
    case ZC_COMPLEX64: return ((const float *)p)[2 * i + part];
    case ZC_COMPLEX128: return ((const double *)p)[2 * i + part];
    default: return NAN;
    }
}

static bool inexact(zc_dtype t)
{
    return t == ZC_FLOAT16 || t == ZC_FLOAT32 || t == ZC_FLOAT64 || t == ZC_COMPLEX64 || t == ZC_COMPLEX128;
}

static double rtol_for(zc_dtype t)
{
    if (t == ZC_FLOAT16) return 2e-2;
    if (t == ZC_FLOAT32 || t == ZC_COMPLEX64) return 2e-5;
    return 1e-12;
}

/* Count mismatches between got and want (n elements of result dtype od). Exact for
 * integers and for exact ops; for inexact results |got - want| <= rtol * scale
 * (NaN must meet NaN, infinities must be equal). */
static int compare(const char *what, zc_dtype od, bool exact, zc_dtype in, const void *got, const void *want,
                   const double *scale, size_t n)
{
    int bad = 0;
    size_t isz = DT[dt_index(od)].size;
    for (size_t i = 0; i < n; i++) {
        bool ok = true;
        if (!inexact(od)) {
            ok = !memcmp((const char *)got + i * isz, (const char *)want + i * isz, isz);
        } else {
            int parts = od == ZC_COMPLEX64 || od == ZC_COMPLEX128 ? 2 : 1;
            for (int p = 0; p < parts; p++) {
                double g = get_d(od, got, i, p), w = get_d(od, want, i, p);
                if (isnan(w) || isnan(g)) ok &= isnan(w) && isnan(g);
                else if (isinf(w) || isinf(g) || exact) ok &= g == w;
                else ok &= fabs(g - w) <= rtol_for(in) * (scale ? scale[i] : fabs(w)) + 1e-300;
            }
        }
        if (!ok) {
            if (bad < 3) {
                if (inexact(od))
                    fprintf(stderr, "%s: element %zu: got %.17g%+.17gj want %.17g%+.17gj (scale %g)\n", what, i,
                            get_d(od, got, i, 0), od >= ZC_COMPLEX64 ? get_d(od, got, i, 1) : 0.0,
                            get_d(od, want, i, 0), od >= ZC_COMPLEX64 ? get_d(od, want, i, 1) : 0.0,
                            scale ? scale[i] : 0.0);
                else
                    fprintf(stderr, "%s: element %zu differs\n", what, i);
            }
            bad++;
        }
    }
    return bad;
}

/* Copy region [lo, lo+cnt) of a C-ordered array of `shape` into a contiguous buffer,
 * or (scatter) the other way round. */
static void region_copy(int nd, const int64_t *shape, const int64_t *lo, const int64_t *cnt, size_t isz,
                        unsigned char *full, unsigned char *part, bool scatter)
{
    int64_t idx[32] = {0};
    size_t total = 1;
    for (int d = 0; d < nd; d++) total *= (size_t)cnt[d];
    for (size_t k = 0; k < total; k++) {
        size_t off = 0;
        for (int d = 0; d < nd; d++) off = off * (size_t)shape[d] + (size_t)(lo[d] + idx[d]);
        if (scatter) memcpy(full + off * isz, part + k * isz, isz);
        else memcpy(part + k * isz, full + off * isz, isz);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
    }
}

/* Random cuts of each axis into 1..3 pieces: cuts[d][0..np[d]] with cuts[d][0] = 0. */
static void random_cuts(int nd, const int64_t *shape, int64_t cuts[][5], int *np, bool single)
{
    for (int d = 0; d < nd; d++) {
        int p = single ? 1 : 1 + (int)(rnd() % 3);
        if (p > shape[d]) p = (int)shape[d];
        cuts[d][0] = 0;
        cuts[d][p] = shape[d];
        for (int k = 1; k < p; k++) { /* distinct increasing cut points */
            int64_t lo = cuts[d][k - 1] + 1, hi = shape[d] - (p - k);
            cuts[d][k] = lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
        }
        np[d] = p;
    }
}

/* Reduce x (shape, dtype in) over `axes` into out (result dtype), split by random cuts. */
static void tree_reduce(red_op op, zc_dtype in, int nd, const int64_t *shape, uint64_t axes, const void *x,
                        void *out, double ddof, bool single)
{
    int64_t cuts[32][5];
    int np[32];
    random_cuts(nd, shape, cuts, np, single);
    size_t isz = DT[dt_index(in)].size, asz = red_acc_size(op, in);
    zc_dtype od;
    red_result_dtype(op, in, &od);
    size_t osz = DT[dt_index(od)].size;
    int64_t oshape[32];
    int ond = 0;
    for (int d = 0; d < nd; d++)
        if (!((axes >> d) & 1)) oshape[ond++] = shape[d];
    /* iterate over kept-region pieces, then over reduced pieces */
    int kp[32] = {0};
    for (;;) {
        int64_t klo[32], kcnt[32];
        size_t nacc = 1;
        int k = 0;
        for (int d = 0; d < nd; d++) {
            if ((axes >> d) & 1) continue;
            klo[k] = cuts[d][kp[d]];
            kcnt[k] = cuts[d][kp[d] + 1] - cuts[d][kp[d]];
            nacc *= (size_t)kcnt[k++];
        }
        /* list the sub-blocks of this region in a shuffled order */
        int nsub = 1;
        for (int d = 0; d < nd; d++)
            if ((axes >> d) & 1) nsub *= np[d];
        int order[256];
        for (int i = 0; i < nsub; i++) order[i] = i;
        for (int i = nsub - 1; i > 0; i--) {
            int j = (int)(rnd() % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        unsigned char *parts[256];
        int nparts = 0;
        for (int s = 0; s < nsub; s++) {
            int64_t lo[32], cnt[32];
            int rest = order[s];
            for (int d = nd - 1; d >= 0; d--) {
                int piece = kp[d];
                if ((axes >> d) & 1) {
                    piece = rest % np[d];
                    rest /= np[d];
                }
                lo[d] = cuts[d][piece];
                cnt[d] = cuts[d][piece + 1] - cuts[d][piece];
            }
            size_t nel = 1;
            for (int d = 0; d < nd; d++) nel *= (size_t)cnt[d];
            unsigned char *blk = malloc(nel * isz);
            region_copy(nd, shape, lo, cnt, isz, (unsigned char *)x, blk, false);
            if (nparts == 0 || rnd() % 2) {
                parts[nparts] = malloc(nacc * asz);
                red_init(op, in, parts[nparts], nacc);
                nparts++;
            }
            red_accum(op, in, parts[(size_t)(rnd() % (uint64_t)nparts)], nd, cnt, axes, blk, lo, shape);
            free(blk);
        }
        while (nparts > 1) { /* merge two random partials */
            int i = (int)(rnd() % (uint64_t)nparts), j = (int)(rnd() % (uint64_t)(nparts - 1));
            if (j >= i) j++;
            red_merge(op, in, parts[i], parts[j], nacc);
            free(parts[j]);
            parts[j] = parts[--nparts];
        }
        unsigned char *res = malloc(nacc * osz);
        red_finalize(op, in, parts[0], nacc, res, ddof);
        free(parts[0]);
        int64_t zero[32] = {0};
        if (ond) region_copy(ond, oshape, klo, kcnt, osz, out, res, true);
        else memcpy(out, res, osz);
        (void)zero;
        free(res);
        int d = nd - 1;
        for (; d >= 0; d--) {
            if ((axes >> d) & 1) continue;
            if (++kp[d] < np[d]) break;
            kp[d] = 0;
        }
        if (d < 0) break;
    }
}

/* Run the generator for a list of dtypes and check every case it wrote. */
static void numpy_cases(const char *dtypes)
{
    char dir[] = "/tmp/zc_red_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/ref.py", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(REF_PY, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s", path, dir, dtypes);
    int rc = system(cmd);
    CHECK(rc == 0);
    snprintf(path, sizeof path, "%s/index.txt", dir);
    f = fopen(path, "r");
    CHECK(f != NULL);
    int ncase = 0, nfail = 0;
    char set[8], dtn[16], opn[16];
    unsigned mask;
    int ddof;
    char loaded_key[64] = "";
    npy_array x = {0};
    while (f && fscanf(f, "%7s %15s %15s %u %d", set, dtn, opn, &mask, &ddof) == 5) {
        char key[64];
        snprintf(key, sizeof key, "%s_%s", set, dtn);
        if (strcmp(key, loaded_key)) {
            npy_free(&x);
            snprintf(path, sizeof path, "%s/x_%s.npy", dir, key);
            CHECK(npy_load(path, &x) == 0);
            snprintf(loaded_key, sizeof loaded_key, "%s", key);
        }
        int di = dt_index_name(dtn), op = red_op_from_name(opn);
        CHECK(di >= 0 && op >= 0);
        if (di < 0 || op < 0) continue;
        zc_dtype in = DT[di].dt, od;
        CHECK(!strcmp(x.descr, DT[di].descr));
        CHECK_OK(red_result_dtype((red_op)op, in, &od));
        npy_array want = {0}, scale = {0};
        snprintf(path, sizeof path, "%s/%s_%s_%s_%u_%d.npy", dir, set, dtn, opn, mask, ddof);
        CHECK(npy_load(path, &want) == 0);
        CHECK(!strcmp(want.descr, DT[dt_index(od)].descr));
        if (strcmp(want.descr, DT[dt_index(od)].descr)) {
            fprintf(stderr, "%s: NumPy's dtype %s, ours %s\n", path, want.descr, DT[dt_index(od)].descr);
            npy_free(&want);
            continue;
        }
        bool has_scale = inexact(od);
        if (has_scale) {
            snprintf(path, sizeof path, "%s/%s_%s_%s_%u_%d_scale.npy", dir, set, dtn, opn, mask, ddof);
            CHECK(npy_load(path, &scale) == 0);
        }
        size_t n = want.nbytes / DT[dt_index(od)].size;
        bool exact = op == RED_MIN || op == RED_MAX;
        unsigned char *one = malloc(want.nbytes + 16), *tree = malloc(want.nbytes + 16);
        char what[128];
        snprintf(what, sizeof what, "%s %s %s axes 0x%x ddof %d", set, dtn, opn, mask, ddof);
        tree_reduce((red_op)op, in, x.ndim, x.shape, mask, x.data, one, ddof, true);
        int bad = compare(what, od, exact, in, one, want.data, has_scale ? scale.data : NULL, n);
        for (int rep = 0; rep < 4 && !bad; rep++) {
            tree_reduce((red_op)op, in, x.ndim, x.shape, mask, x.data, tree, ddof, false);
            bad += compare(what, od, exact, in, tree, want.data, has_scale ? scale.data : NULL, n);
            /* the tree equals the single pass: exactly unless float rounding is involved */
            if (!inexact(od) || exact) bad += compare(what, od, true, in, tree, one, NULL, n);
        }
        if (bad) {
            nfail++;
            CHECK(bad == 0);
        }
        ncase++;
        free(one);
        free(tree);
        npy_free(&want);
        npy_free(&scale);
    }
    npy_free(&x);
    if (f) fclose(f);
    printf("%d cases, %d failed\n", ncase, nfail);
    CHECK(ncase > 100);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(numpy_bool_int)
{
    numpy_cases("bool,int8,int16,int32,int64,uint8,uint16,uint32,uint64");
}

TEST(numpy_float)
{
    numpy_cases("float16,float32,float64");
}

TEST(numpy_complex)
{
    numpy_cases("complex64,complex128");
}

TEST(dtype_rules_and_refusals)
{
    for (int op = 0; op < RED_END_; op++) CHECK(red_op_from_name(red_op_name((red_op)op)) == op);
    CHECK(red_op_from_name("median") == -1);
    CHECK(red_op_from_name(NULL) == -1);
    CHECK(!strcmp(red_op_name(RED_END_), "?"));
    zc_dtype od;
    red_op ordered[] = {RED_MIN, RED_MAX, RED_ARGMIN, RED_ARGMAX};
    for (int k = 0; k < 4; k++) {
        CHECK_ERR(red_result_dtype(ordered[k], ZC_COMPLEX64, &od), ZC_EINVAL, "complex");
        CHECK(red_acc_size(ordered[k], ZC_COMPLEX128) == 0);
    }
    zc_dtype bad[] = {ZC_DTYPE_INVALID, ZC_BYTES, ZC_UNICODE, ZC_RAW};
    for (int k = 0; k < 4; k++) {
        CHECK_ERR(red_result_dtype(RED_SUM, bad[k], &od), ZC_EINVAL, "sum of");
        CHECK(red_acc_size(RED_SUM, bad[k]) == 0);
    }
    CHECK_ERR(red_result_dtype(RED_END_, ZC_FLOAT64, &od), ZC_EINVAL, "unknown");
    /* the dtypes NumPy gives were checked case by case; a few spot checks of the rest */
    CHECK_OK(red_result_dtype(RED_VAR, ZC_COMPLEX64, &od));
    CHECK(od == ZC_FLOAT32);
    CHECK_OK(red_result_dtype(RED_MEAN, ZC_FLOAT16, &od));
    CHECK(od == ZC_FLOAT16);
    CHECK_OK(red_result_dtype(RED_SUM, ZC_UINT8, &od));
    CHECK(od == ZC_UINT64);
    CHECK(red_acc_size(RED_MEAN, ZC_INT8) == 16 && red_acc_size(RED_VAR, ZC_COMPLEX64) == 32);
    CHECK(red_acc_size(RED_ARGMAX, ZC_FLOAT16) == 16 && red_acc_size(RED_SUM, ZC_FLOAT16) == 4);
}

/* Empty blocks change nothing; a block without reduced axes converts elementwise;
 * a 0-d block is one element. */
TEST(degenerate_blocks)
{
    int64_t shape[2] = {3, 0};
    double x[6] = {1, 2, 3, 4, 5, 6};
    red_arg acc[3];
    red_init(RED_ARGMIN, ZC_FLOAT64, acc, 3);
    red_accum(RED_ARGMIN, ZC_FLOAT64, acc, 2, shape, 2, x, (int64_t[]){0, 0}, (int64_t[]){3, 0});
    for (int i = 0; i < 3; i++) CHECK(acc[i].idx == INT64_MAX && acc[i].v.d == INFINITY);
    int64_t s23[2] = {2, 3};
    uint64_t sums[6];
    red_init(RED_SUM, ZC_FLOAT64, sums, 6); /* float64 sums are doubles */
    red_accum(RED_SUM, ZC_FLOAT64, sums, 2, s23, 0, x, NULL, NULL);
    double out[6];
    red_finalize(RED_SUM, ZC_FLOAT64, sums, 6, out, 0);
    for (int i = 0; i < 6; i++) CHECK(out[i] == x[i]);
    int16_t v = -7;
    uint64_t c;
    red_init(RED_PROD, ZC_INT16, &c, 1);
    red_accum(RED_PROD, ZC_INT16, &c, 0, NULL, 0, &v, NULL, NULL);
    int64_t r;
    red_finalize(RED_PROD, ZC_INT16, &c, 1, &r, 0);
    CHECK(r == -7);
    /* var of one element with ddof 1 is NaN, like NumPy; mean of nothing too */
    red_var_r vr;
    red_init(RED_VAR, ZC_FLOAT64, &vr, 1);
    int64_t one = 1;
    red_accum(RED_VAR, ZC_FLOAT64, &vr, 1, &one, 1, x, NULL, NULL);
    double d;
    red_finalize(RED_VAR, ZC_FLOAT64, &vr, 1, &d, 1.0);
    CHECK(isnan(d));
    red_finalize(RED_VAR, ZC_FLOAT64, &vr, 1, &d, 0.0);
    CHECK(d == 0.0);
    red_mean_r mr;
    red_init(RED_MEAN, ZC_INT32, &mr, 1);
    red_finalize(RED_MEAN, ZC_INT32, &mr, 1, &d, 0);
    CHECK(isnan(d));
}

/* Merging an empty (initialized) accumulator either way leaves the result unchanged. */
TEST(merge_with_empty)
{
    int64_t shape[2] = {5, 4};
    unsigned char x[20 * 16], a[4 * 32], e[4 * 32], b[4 * 32], r1[4 * 16], r2[4 * 16];
    memset(r1, 0, sizeof r1);
    memset(r2, 0, sizeof r2);
    for (int di = 0; di < NDT; di++) {
        zc_dtype in = DT[di].dt;
        for (int k = 0; k < 20; k++) { /* small integers: exact in every dtype, no -0 */
            int v = (int)(rnd() % 19) - 9;
            if (in == ZC_BOOL) v = v > 0;
            else if (in >= ZC_UINT8 && in <= ZC_UINT64) v = v < 0 ? -v : v;
            unsigned char *p = x + (size_t)k * DT[di].size;
            memset(p, 0, DT[di].size);
            switch (in) {
            case ZC_FLOAT16: {
                uint16_t h = dtype_float_to_half((float)v);
                memcpy(p, &h, 2);
                break;
            }
            case ZC_FLOAT32: *(float *)p = (float)v; break;
            case ZC_FLOAT64: *(double *)p = v; break;
            case ZC_COMPLEX64: ((float *)p)[0] = (float)v; ((float *)p)[1] = (float)(v / 2); break;
            case ZC_COMPLEX128: ((double *)p)[0] = v; ((double *)p)[1] = v / 2; break;
            default: {
                int64_t w = v; /* little endian: the low bytes are the narrower integer */
                memcpy(p, &w, DT[di].size);
                break;
            }
            }
        }
        for (int op = 0; op < RED_END_; op++) {
            zc_dtype od;
            if (red_result_dtype((red_op)op, in, &od) < 0) continue;
            size_t asz = red_acc_size((red_op)op, in);
            red_init((red_op)op, in, a, 4);
            red_accum((red_op)op, in, a, 2, shape, 1, x, (int64_t[]){0, 0}, shape);
            red_finalize((red_op)op, in, a, 4, r1, 1.0);
            red_init((red_op)op, in, e, 4);
            memcpy(b, a, 4 * asz);
            red_merge((red_op)op, in, b, e, 4); /* full <- empty */
            red_finalize((red_op)op, in, b, 4, r2, 1.0);
            CHECK(compare("merge empty", od, true, in, r2, r1, NULL, 4) == 0);
            red_merge((red_op)op, in, e, a, 4); /* empty <- full */
            red_finalize((red_op)op, in, e, 4, r2, 1.0);
            /* by value: (1+0j)*(a-0j) has a +0 imaginary part, a sign NumPy loses too */
            if (compare("merge into empty", od, true, in, r2, r1, NULL, 4)) {
                fprintf(stderr, "%s of %s: merge into empty differs\n", red_op_name((red_op)op), DT[di].name);
                CHECK(0);
            }
        }
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The three common cases on blocks with many tiles and long runs, against long double
 * references; throughput is printed (this machine is shared: not asserted). */
TEST(large_blocks)
{
    const int64_t R = 24, C = 100003; /* odd inner length: partial tiles and pairwise tails */
    size_t n = (size_t)(R * C);
    double *x = malloc(n * sizeof *x), *out = malloc(2 * (size_t)C * sizeof *out); /* f32 results are widened via the upper half */
    float *xf = malloc(n * sizeof *xf);
    uint64_t s = 7;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = 1000.0 + (double)(s >> 11) * 0x1p-53 * 2.0 - 1.0;
        xf[i] = (float)x[i];
    }
    int64_t shape[2] = {R, C};
    unsigned char *acc = malloc((size_t)C * 32);
    struct { const char *what; uint64_t axes; size_t nacc; } cases[] = {
        {"leading axis", 1, (size_t)C}, {"last axis", 2, (size_t)R}, {"all axes", 3, 1}};
    red_op ops[] = {RED_SUM, RED_MEAN, RED_VAR, RED_MAX};
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 4; k++) {
            red_op op = ops[k];
            for (int f32 = 0; f32 < 2; f32++) {
                zc_dtype dt = f32 ? ZC_FLOAT32 : ZC_FLOAT64;
                size_t nacc = cases[c].nacc;
                double t = now_s();
                red_init(op, dt, acc, nacc);
                red_accum(op, dt, acc, 2, shape, cases[c].axes, f32 ? (void *)xf : (void *)x, NULL, NULL);
                t = now_s() - t;
                if (f32) {
                    float *o = (float *)out;
                    red_finalize(op, dt, acc, nacc, o, 0);
                    for (size_t i = 0; i < nacc; i++) out[nacc + i] = o[i]; /* widen into the upper half */
                    memmove(out, out + nacc, nacc * sizeof(double));
                } else {
                    red_finalize(op, dt, acc, nacc, out, 0);
                }
                /* long double references, one pass for sums and max, one for squares */
                long double *sum = calloc(nacc, sizeof *sum), *sq = calloc(nacc, sizeof *sq);
                long double *mx = malloc(nacc * sizeof *mx);
                int64_t cnt = (int64_t)(n / nacc);
                for (size_t i = 0; i < nacc; i++) mx[i] = -INFINITY;
                for (int pass = 0; pass < 2; pass++)
                    for (int64_t r = 0; r < R; r++)
                        for (int64_t j = 0; j < C; j++) {
                            size_t i = cases[c].axes == 1 ? (size_t)j : cases[c].axes == 2 ? (size_t)r : 0;
                            long double v = f32 ? xf[r * C + j] : x[r * C + j];
                            if (pass == 0) {
                                sum[i] += v;
                                if (v > mx[i]) mx[i] = v;
                            } else {
                                long double dv = v - sum[i] / cnt;
                                sq[i] += dv * dv;
                            }
                        }
                int bad = 0;
                for (size_t i = 0; i < nacc; i++) {
                    long double mean = sum[i] / cnt;
                    long double want = op == RED_SUM ? sum[i] : op == RED_MEAN ? mean : op == RED_VAR ? sq[i] / cnt : mx[i];
                    /* float32 sums accumulate in float32 like NumPy: n * eps bounds the error */
                    double tol = op == RED_MAX ? 0
                                 : f32 ? (op == RED_VAR ? 1e-6 : 2e-6 + (op == RED_SUM ? 1e-7 * (double)cnt : 0))
                                       : 1e-12;
                    if (fabsl((long double)out[i] - want) > tol * fabsl(want)) {
                        if (bad++ < 2)
                            fprintf(stderr, "%s %s f%d acc %zu: %.17g vs %.17Lg\n", cases[c].what,
                                    red_op_name(op), f32 ? 32 : 64, i, out[i], want);
                    }
                }
                free(sum);
                free(sq);
                free(mx);
                CHECK(bad == 0);
                printf("%-12s %-4s float%d  %6.2f GB/s\n", cases[c].what, red_op_name(op), f32 ? 32 : 64,
                       (double)n * (f32 ? 4.0 : 8.0) / t / 1e9);
            }
        }
    }
    free(x);
    free(xf);
    free(out);
    free(acc);
}
