/* tests/test_codec_filters.c — the array→array and array→bytes codecs
 * (bytes, transpose) and the numcodecs filters (delta, shuffle,
 * fixedscaleoffset, quantize, astype, bitround): numcodecs fixtures in both
 * directions, NumPy semantics checked against values numcodecs 0.11 / NumPy
 * 1.24 produced, round trips, and bad configs / bad sizes. Every codec is
 * created through the registry (codec_create).
 *
 * Digests (FNV-1a 64 of the bytes) of numcodecs' own output were made with
 * /usr/bin/python3, e.g. for fixedscaleoffset:
 *     A = (np.arange(1001, dtype='f8') - 500) * 1.2345
 *     e = FixedScaleOffset(**cfg).encode(A.astype(cfg['dtype'])); fnv(e.tobytes())
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>

#include "codec/codec.h"
#include "codec/filter_common.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "harness.h"
#include "npyload.h"

/* ------------------------------------------------------------ helpers */

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static codec_ctx ctx_of(int zarr_format, zc_dtype type, int ndim, const int64_t *shape)
{
    codec_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.zarr_format = zarr_format;
    size_t size;
    zc_dtype_parse(zc_dtype_name(type), &ctx.dtype.type, &size);
    ctx.dtype.size = size;
    ctx.dtype.endian = size == 1 ? '|' : '<';
    ctx.ndim = ndim;
    ctx.nbytes = size;
    for (int i = 0; i < ndim; i++) {
        ctx.shape[i] = shape[i];
        ctx.nbytes *= (size_t)shape[i];
    }
    return ctx;
}

static int create_json(const char *text, const codec_ctx *ctx, codec *c)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) {
        fprintf(stderr, "bad test JSON %s: %s\n", text, e.text);
        return ZC_EINVAL;
    }
    int rc = codec_create(j, ctx, c);
    json_decref(j);
    return rc;
}

/* v2-spelled filter for data of n bytes (the ctx dtype is only a hint). */
static int create_v2(const char *text, codec *c)
{
    int64_t shape[1] = {8};
    codec_ctx ctx = ctx_of(2, ZC_UINT8, 1, shape);
    return create_json(text, &ctx, c);
}

/* Decode into a malloc'd buffer of exactly `cap` bytes (ASan sees overruns). */
static int dec(codec *c, const void *src, size_t n, size_t cap, unsigned char **out, size_t *w)
{
    *out = malloc(cap ? cap : 1);
    *w = (size_t)-1;
    return c->type->decode(c->state, src, n, *out, cap, w);
}

static int enc(codec *c, const void *src, size_t n, zc_buf *out)
{
    out->size = 0;
    return c->type->encode(c->state, src, n, out);
}

/* ------------------------------------------------------------ numcodecs fixtures */

/* Decoded bytes numcodecs gives for the lossy fixtures (not the input array). */
static const struct {
    const char *file;
    uint64_t digest;
} LOSSY[] = {
    {"fixedscaleoffset/codec.00/encoded.00.dat", 0x94498d89fae29195ull},
    {"fixedscaleoffset/codec.00/encoded.01.dat", 0x248b2921f20ab52full},
    {"fixedscaleoffset/codec.00/encoded.02.dat", 0x94498d89fae29195ull},
    {"fixedscaleoffset/codec.00/encoded.03.dat", 0x94498d89fae29195ull},
    {"fixedscaleoffset/codec.00/encoded.04.dat", 0x94498d89fae29195ull},
    {"fixedscaleoffset/codec.01/encoded.00.dat", 0xd3559dd0c59e00bdull},
    {"fixedscaleoffset/codec.01/encoded.01.dat", 0xefc85dd0a3364b3bull},
    {"fixedscaleoffset/codec.01/encoded.02.dat", 0xd3559dd0c59e00bdull},
    {"fixedscaleoffset/codec.01/encoded.03.dat", 0xd3559dd0c59e00bdull},
    {"fixedscaleoffset/codec.01/encoded.04.dat", 0xd3559dd0c59e00bdull},
    {"fixedscaleoffset/codec.02/encoded.00.dat", 0x392203979fa55c24ull},
    {"fixedscaleoffset/codec.02/encoded.01.dat", 0x8e81e6a4e4650e94ull},
    {"fixedscaleoffset/codec.02/encoded.02.dat", 0x392203979fa55c24ull},
    {"fixedscaleoffset/codec.02/encoded.03.dat", 0x392203979fa55c24ull},
    {"fixedscaleoffset/codec.02/encoded.04.dat", 0x392203979fa55c24ull},
    {"fixedscaleoffset/codec.03/encoded.00.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.03/encoded.01.dat", 0xea1f60948622f6f9ull},
    {"fixedscaleoffset/codec.03/encoded.02.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.03/encoded.03.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.03/encoded.04.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.04/encoded.00.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.04/encoded.01.dat", 0xea1f60948622f6f9ull},
    {"fixedscaleoffset/codec.04/encoded.02.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.04/encoded.03.dat", 0x59e11fcc3ff26a85ull},
    {"fixedscaleoffset/codec.04/encoded.04.dat", 0x59e11fcc3ff26a85ull},
    {"quantize/codec.00/encoded.00.dat", 0x7e583b2decd7f9b7ull},
    {"quantize/codec.00/encoded.01.dat", 0x83aa95eb2e55eb25ull},
    {"quantize/codec.00/encoded.02.dat", 0x7e583b2decd7f9b7ull},
    {"quantize/codec.00/encoded.03.dat", 0x7e583b2decd7f9b7ull},
    {"quantize/codec.00/encoded.04.dat", 0x7e583b2decd7f9b7ull},
    {"quantize/codec.01/encoded.00.dat", 0xefb5249336e344b5ull},
    {"quantize/codec.01/encoded.01.dat", 0xa86e004c73b03155ull},
    {"quantize/codec.01/encoded.02.dat", 0xefb5249336e344b5ull},
    {"quantize/codec.01/encoded.03.dat", 0xefb5249336e344b5ull},
    {"quantize/codec.01/encoded.04.dat", 0xefb5249336e344b5ull},
    {"quantize/codec.02/encoded.00.dat", 0x13c80aaafc402aecull},
    {"quantize/codec.02/encoded.01.dat", 0x0a5bf72707fabed9ull},
    {"quantize/codec.02/encoded.02.dat", 0x13c80aaafc402aecull},
    {"quantize/codec.02/encoded.03.dat", 0x13c80aaafc402aecull},
    {"quantize/codec.02/encoded.04.dat", 0x13c80aaafc402aecull},
    {"quantize/codec.03/encoded.00.dat", 0x2a03698529dc1024ull},
    {"quantize/codec.03/encoded.01.dat", 0xfafbabd07eca191full},
    {"quantize/codec.03/encoded.02.dat", 0x2a03698529dc1024ull},
    {"quantize/codec.03/encoded.03.dat", 0x2a03698529dc1024ull},
    {"quantize/codec.03/encoded.04.dat", 0x2a03698529dc1024ull},
    {"quantize/codec.04/encoded.00.dat", 0xa2cc2c1c538189d7ull},
    {"quantize/codec.04/encoded.01.dat", 0xb60b6cbb882a7417ull},
    {"quantize/codec.04/encoded.02.dat", 0xa2cc2c1c538189d7ull},
    {"quantize/codec.04/encoded.03.dat", 0xa2cc2c1c538189d7ull},
    {"quantize/codec.04/encoded.04.dat", 0xa2cc2c1c538189d7ull},
    {"astype/f/codec.00/encoded.00.dat", 0xeb44a57d59fe6e99ull},
    {"astype/f/codec.00/encoded.01.dat", 0x98a0fa997c895182ull},
};

static const uint64_t *lossy_digest(const char *rel)
{
    for (size_t i = 0; i < sizeof LOSSY / sizeof LOSSY[0]; i++)
        if (!strcmp(LOSSY[i].file, rel)) return &LOSSY[i].digest;
    return NULL;
}

/* Run every codec.MM/encoded.NN.dat under tests/data/numcodecs/<dir>:
 * decoding gives array.NN.npy's bytes (lossy: numcodecs' digest), encoding
 * array.NN gives encoded.NN.dat byte for byte. Returns the cases checked. */
static int run_fixture_dir(const char *dir)
{
    int cases = 0;
    char path[512], rel[256];
    for (int m = 0; m < 100; m++) {
        snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/config.json", ZC_TEST_DATA, dir, m);
        size_t clen;
        char *cfg = load_file(path, &clen);
        if (!cfg) break;
        char *text = malloc(clen + 1);
        memcpy(text, cfg, clen);
        text[clen] = 0;
        free(cfg);
        codec c;
        int rc = create_v2(text, &c);
        CHECK_OK(rc);
        if (rc < 0) {
            free(text);
            continue;
        }
        for (int k = 0; k < 100; k++) {
            snprintf(rel, sizeof rel, "%s/codec.%02d/encoded.%02d.dat", dir, m, k);
            snprintf(path, sizeof path, "%s/numcodecs/%s", ZC_TEST_DATA, rel);
            size_t n;
            unsigned char *encoded = load_file(path, &n);
            if (!encoded) break;
            snprintf(path, sizeof path, "%s/numcodecs/%s/array.%02d.npy", ZC_TEST_DATA, dir, k);
            npy_array a;
            CHECK(npy_load(path, &a) == 0);
            unsigned char *out;
            size_t w;
            bool known = false;
            size_t ds = 0;
            CHECK_OK(c.type->decoded_size(c.state, encoded, n, &ds, &known));
            CHECK(known && ds == a.nbytes);
            rc = dec(&c, encoded, n, a.nbytes, &out, &w);
            CHECK_OK(rc);
            const uint64_t *digest = lossy_digest(rel);
            if (rc == 0) {
                CHECK(w == a.nbytes);
                if (digest) {
                    if (fnv(out, w) != *digest) fprintf(stderr, "lossy mismatch: %s\n", rel);
                    CHECK(fnv(out, w) == *digest);
                } else {
                    if (memcmp(out, a.data, w)) fprintf(stderr, "mismatch: %s\n", rel);
                    CHECK(!memcmp(out, a.data, w));
                }
            }
            free(out);
            /* one byte short of room: must refuse, not overrun */
            if (a.nbytes > 0) {
                CHECK_ERR(dec(&c, encoded, n, a.nbytes - 1, &out, &w), ZC_ECORRUPT, NULL);
                free(out);
            }
            zc_buf e = {0};
            CHECK_OK(enc(&c, a.data, a.nbytes, &e));
            CHECK(e.size == n && !memcmp(e.data, encoded, n));
            buf_free(&e);
            npy_free(&a);
            free(encoded);
            cases++;
        }
        codec_destroy(&c);
        free(text);
    }
    return cases;
}

TEST(filt_fixtures_delta)
{
    const char *sub[] = {"delta/bool", "delta/float32", "delta/float64", "delta/int32", "delta/uint16"};
    for (size_t i = 0; i < 5; i++) CHECK(run_fixture_dir(sub[i]) == 1);
}

TEST(filt_fixtures_shuffle) { CHECK(run_fixture_dir("shuffle") == 4 * 13); }
TEST(filt_fixtures_fixedscaleoffset) { CHECK(run_fixture_dir("fixedscaleoffset") == 5 * 5); }
TEST(filt_fixtures_quantize) { CHECK(run_fixture_dir("quantize") == 5 * 5); }

TEST(filt_fixtures_astype)
{
    CHECK(run_fixture_dir("astype/f") == 2);
    CHECK(run_fixture_dir("astype/i") == 2);
}

/* ------------------------------------------------------------ bytes */

TEST(filt_bytes_endian)
{
    const zc_dtype types[] = {ZC_UINT8, ZC_INT16, ZC_FLOAT32, ZC_INT64, ZC_COMPLEX128};
    const size_t unit[] = {1, 2, 4, 8, 8};
    for (size_t t = 0; t < 5; t++) {
        int64_t shape[2] = {3, 5};
        codec_ctx ctx = ctx_of(3, types[t], 2, shape);
        unsigned char src[15 * 16], expect[15 * 16];
        for (size_t i = 0; i < ctx.nbytes; i++) src[i] = (unsigned char)(i * 7 + 1);
        for (int big = 0; big < 2; big++) {
            codec c;
            CHECK_OK(create_json(big ? "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}"
                                     : "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}",
                                 &ctx, &c));
            /* on this little-endian host, big = reverse each swap unit */
            for (size_t i = 0; i < ctx.nbytes; i += unit[t])
                for (size_t k = 0; k < unit[t]; k++)
                    expect[i + k] = src[big ? i + unit[t] - 1 - k : i + k];
            zc_buf e = {0};
            CHECK_OK(enc(&c, src, ctx.nbytes, &e));
            CHECK(e.size == ctx.nbytes && !memcmp(e.data, expect, ctx.nbytes));
            unsigned char *out;
            size_t w;
            CHECK_OK(dec(&c, e.data, e.size, ctx.nbytes, &out, &w));
            CHECK(w == ctx.nbytes && !memcmp(out, src, w));
            free(out);
            /* wrong sizes */
            CHECK_ERR(dec(&c, e.data, e.size - 1, ctx.nbytes, &out, &w), ZC_ECORRUPT, "expected");
            free(out);
            CHECK_ERR(enc(&c, src, ctx.nbytes + 1, &e), ZC_EINVAL, NULL);
            json_t *j = c.type->to_json(c.state, 3);
            const char *en = json_string_value(json_object_get(json_object_get(j, "configuration"), "endian"));
            CHECK(en && !strcmp(en, big ? "big" : "little"));
            json_decref(j);
            buf_free(&e);
            codec_destroy(&c);
        }
    }
}

TEST(filt_bytes_config)
{
    int64_t shape[1] = {4};
    codec_ctx i4 = ctx_of(3, ZC_INT32, 1, shape), u1 = ctx_of(3, ZC_UINT8, 1, shape);
    codec c;
    CHECK_ERR(create_json("{\"name\":\"bytes\"}", &i4, &c), ZC_EFORMAT, "endian");
    CHECK_ERR(create_json("{\"name\":\"bytes\",\"configuration\":{\"endian\":\"middle\"}}", &i4, &c),
              ZC_EFORMAT, "endian");
    CHECK_ERR(create_json("{\"name\":\"bytes\",\"configuration\":{\"endian\":4}}", &i4, &c), ZC_EFORMAT,
              "endian");
    /* 1-byte types need no endian */
    CHECK_OK(create_json("{\"name\":\"bytes\"}", &u1, &c));
    json_t *j = c.type->to_json(c.state, 3);
    CHECK(!json_object_get(json_object_get(j, "configuration"), "endian"));
    json_decref(j);
    codec_destroy(&c);
    /* unicode swaps 4-byte units */
    codec_ctx u = ctx_of(3, ZC_INT32, 1, shape);
    u.dtype.type = ZC_UNICODE;
    u.dtype.size = 8; /* U2 */
    u.nbytes = 32;
    CHECK_OK(create_json("{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}", &u, &c));
    uint32_t s[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
    zc_buf e = {0};
    CHECK_OK(enc(&c, s, 32, &e));
    CHECK(e.data[3] == 'a' && e.data[0] == 0 && e.data[7] == 'b');
    buf_free(&e);
    codec_destroy(&c);
}

/* ------------------------------------------------------------ transpose */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* out = in.transpose(order), element by element */
static void naive_transpose(const unsigned char *in, unsigned char *out, int nd, const int64_t *shape,
                            const int *order, size_t es)
{
    int64_t tshape[8], istr[8], idx[8] = {0}, total = 1;
    for (int i = nd - 1; i >= 0; i--) {
        istr[i] = total;
        total *= shape[i];
    }
    for (int i = 0; i < nd; i++) tshape[i] = shape[order[i]];
    for (int64_t o = 0; o < total; o++) {
        int64_t off = 0;
        for (int i = 0; i < nd; i++) off += idx[i] * istr[order[i]];
        memcpy(out + o * es, in + off * es, es);
        for (int i = nd - 1; i >= 0; i--) {
            if (++idx[i] < tshape[i]) break;
            idx[i] = 0;
        }
    }
}

static void transpose_case(int nd, const int64_t *shape, const int *order, zc_dtype type)
{
    codec_ctx ctx = ctx_of(3, type, nd, shape);
    char text[256];
    int k = snprintf(text, sizeof text, "{\"name\":\"transpose\",\"configuration\":{\"order\":[");
    for (int i = 0; i < nd; i++) k += snprintf(text + k, sizeof text - k, "%s%d", i ? "," : "", order[i]);
    snprintf(text + k, sizeof text - k, "]}}");
    codec c;
    CHECK_OK(create_json(text, &ctx, &c));
    size_t n = ctx.nbytes, es = ctx.dtype.size;
    unsigned char *src = malloc(n + 1), *ref = malloc(n + 1);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)rnd();
    naive_transpose(src, ref, nd, shape, order, es);
    zc_buf e = {0};
    CHECK_OK(enc(&c, src, n, &e));
    CHECK(e.size == n && !memcmp(e.data, ref, n));
    unsigned char *out;
    size_t w;
    CHECK_OK(dec(&c, ref, n, n, &out, &w));
    CHECK(w == n && !memcmp(out, src, n));
    free(out);
    codec_ctx ec;
    CHECK_OK(c.type->encoded_ctx(c.state, &ctx, &ec));
    for (int i = 0; i < nd; i++) CHECK(ec.shape[i] == shape[order[i]]);
    CHECK(ec.nbytes == ctx.nbytes && ec.dtype.type == ctx.dtype.type);
    buf_free(&e);
    free(src);
    free(ref);
    codec_destroy(&c);
}

TEST(filt_transpose_random)
{
    const zc_dtype types[] = {ZC_UINT8, ZC_INT16, ZC_FLOAT32, ZC_FLOAT64, ZC_COMPLEX128};
    for (int iter = 0; iter < 400; iter++) {
        int nd = 1 + (int)(rnd() % 4);
        int64_t shape[4];
        int order[4];
        for (int i = 0; i < nd; i++) {
            /* include length-1 axes and sizes around the 32-element tile */
            uint64_t r = rnd() % 8;
            shape[i] = r == 0 ? 1 : r == 1 ? 33 : r == 2 ? 64 : 1 + (int64_t)(rnd() % (nd <= 2 ? 70 : 12));
            order[i] = i;
        }
        for (int i = nd - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)(rnd() % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        transpose_case(nd, shape, order, types[iter % 5]);
    }
    /* a 6-byte element (no stamped kernel), and a big 2-D case */
    int64_t s2[2] = {301, 517};
    int o2[2] = {1, 0};
    transpose_case(2, s2, o2, ZC_FLOAT32);
    int64_t s3[3] = {7, 5, 9};
    int o3[3] = {2, 0, 1};
    codec_ctx ctx = ctx_of(3, ZC_UINT8, 3, s3);
    ctx.dtype.type = ZC_RAW;
    ctx.dtype.size = 6;
    ctx.nbytes *= 6;
    codec c;
    CHECK_OK(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}}", &ctx, &c));
    unsigned char *src = malloc(ctx.nbytes), *ref = malloc(ctx.nbytes);
    for (size_t i = 0; i < ctx.nbytes; i++) src[i] = (unsigned char)rnd();
    naive_transpose(src, ref, 3, s3, o3, 6);
    zc_buf e = {0};
    CHECK_OK(enc(&c, src, ctx.nbytes, &e));
    CHECK(e.size == ctx.nbytes && !memcmp(e.data, ref, ctx.nbytes));
    buf_free(&e);
    free(src);
    free(ref);
    codec_destroy(&c);
}

TEST(filt_transpose_c_f)
{
    int64_t shape[3] = {4, 3, 2};
    codec_ctx ctx = ctx_of(3, ZC_INT32, 3, shape);
    int32_t src[24], ref[24];
    for (int i = 0; i < 24; i++) src[i] = i * 11;
    codec f, cc;
    CHECK_OK(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}}", &ctx, &f));
    CHECK_OK(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":\"C\"}}", &ctx, &cc));
    int rev[3] = {2, 1, 0};
    naive_transpose((unsigned char *)src, (unsigned char *)ref, 3, shape, rev, 4);
    zc_buf e = {0};
    CHECK_OK(enc(&f, src, sizeof src, &e));
    CHECK(e.size == sizeof src && !memcmp(e.data, ref, sizeof ref));
    CHECK_OK(enc(&cc, src, sizeof src, &e));
    CHECK(!memcmp(e.data, src, sizeof src));
    /* to_json is the v3 list form */
    json_t *j = f.type->to_json(f.state, 3);
    json_t *o = json_object_get(json_object_get(j, "configuration"), "order");
    CHECK(json_array_size(o) == 3 && json_integer_value(json_array_get(o, 0)) == 2 &&
          json_integer_value(json_array_get(o, 2)) == 0);
    json_decref(j);
    buf_free(&e);
    codec_destroy(&f);
    codec_destroy(&cc);
}

TEST(filt_transpose_bad)
{
    int64_t shape[3] = {4, 3, 2};
    codec_ctx ctx = ctx_of(3, ZC_INT32, 3, shape);
    codec c;
    CHECK_ERR(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[0,0,1]}}", &ctx, &c),
              ZC_EFORMAT, "'order' is not a permutation");
    CHECK_ERR(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[0,1,3]}}", &ctx, &c),
              ZC_EFORMAT, "order");
    CHECK_ERR(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[0,-1,2]}}", &ctx, &c),
              ZC_EFORMAT, "order");
    CHECK_ERR(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}", &ctx, &c),
              ZC_EFORMAT, "'order' has 2 axes");
    CHECK_ERR(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":\"X\"}}", &ctx, &c),
              ZC_EFORMAT, "order");
    CHECK_ERR(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[0,1,\"2\"]}}", &ctx, &c),
              ZC_EFORMAT, "order");
    CHECK_ERR(create_json("{\"name\":\"transpose\"}", &ctx, &c), ZC_EFORMAT, "order");
    CHECK_OK(create_json("{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}}", &ctx, &c));
    unsigned char buf[96] = {0}, *out;
    size_t w;
    CHECK_ERR(dec(&c, buf, 95, 96, &out, &w), ZC_ECORRUPT, "expected 96");
    free(out);
    CHECK_ERR(dec(&c, buf, 96, 95, &out, &w), ZC_ECORRUPT, NULL);
    free(out);
    codec_destroy(&c);
}

/* ------------------------------------------------------------ delta */

static void hex_to(const char *hex, unsigned char *out, size_t *n)
{
    *n = strlen(hex) / 2;
    for (size_t i = 0; i < *n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
}

/* Expected bytes from numcodecs for z = [1,5,-3,100,-128,127,0,60] int16. */
TEST(filt_delta_numcodecs_values)
{
    const int16_t z[8] = {1, 5, -3, 100, -128, 127, 0, 60};
    const struct {
        const char *cfg, *enc, *dec;
        const char *input_dtype; /* how z is laid out for encoding */
    } cases[] = {
        {"{\"id\":\"delta\",\"dtype\":\"<i2\",\"astype\":\"|i1\"}", "0104f8671cff813c",
         "01000500fdff640080007f0000003c00", "<i2"},
        {"{\"id\":\"delta\",\"dtype\":\">i2\"}", "00010004fff80067ff1c00ffff81003c",
         "00010005fffd0064ff80007f0000003c", ">i2"},
        {"{\"id\":\"delta\",\"dtype\":\"<i8\",\"astype\":\"<i2\"}", "01000400f8ff67001cffff0081ff3c00",
         "01000000000000000500000000000000fdffffffffffffff640000000000000080ffffffffffffff7f00000000"
         "00000000000000000000003c00000000000000",
         "<i8"},
    };
    for (size_t t = 0; t < 3; t++) {
        codec c;
        CHECK_OK(create_v2(cases[t].cfg, &c));
        unsigned char in[64], ebytes[64], dbytes[128];
        size_t n = 0, en, dn;
        for (int i = 0; i < 8; i++) {
            if (!strcmp(cases[t].input_dtype, "<i2")) { memcpy(in + 2 * i, &z[i], 2); n += 2; }
            else if (!strcmp(cases[t].input_dtype, ">i2")) { in[2 * i] = (unsigned char)((uint16_t)z[i] >> 8); in[2 * i + 1] = (unsigned char)z[i]; n += 2; }
            else { int64_t v = z[i]; memcpy(in + 8 * i, &v, 8); n += 8; }
        }
        hex_to(cases[t].enc, ebytes, &en);
        hex_to(cases[t].dec, dbytes, &dn);
        zc_buf e = {0};
        CHECK_OK(enc(&c, in, n, &e));
        CHECK(e.size == en && !memcmp(e.data, ebytes, en));
        unsigned char *out;
        size_t w;
        CHECK_OK(dec(&c, ebytes, en, dn, &out, &w));
        CHECK(w == dn && !memcmp(out, dbytes, dn));
        free(out);
        /* encoded size not a whole number of astype elements */
        if (en > 1 && strstr(cases[t].cfg, "|i1") == NULL) {
            CHECK_ERR(dec(&c, ebytes, en - 1, dn, &out, &w), ZC_ECORRUPT, "whole number");
            free(out);
        }
        buf_free(&e);
        codec_destroy(&c);
    }
}

TEST(filt_delta_roundtrip_and_bool)
{
    /* uint8 wraps both ways */
    codec c;
    CHECK_OK(create_v2("{\"id\":\"delta\",\"dtype\":\"|u1\"}", &c));
    unsigned char u[6] = {250, 3, 255, 0, 128, 7}, *out;
    zc_buf e = {0};
    size_t w;
    CHECK_OK(enc(&c, u, 6, &e));
    CHECK(e.data[0] == 250 && e.data[1] == 9 && e.data[2] == 252);
    CHECK_OK(dec(&c, e.data, e.size, 6, &out, &w));
    CHECK(w == 6 && !memcmp(out, u, 6));
    free(out);
    codec_destroy(&c);
    /* float64 round trip (exact for these values) and float32 accumulation */
    CHECK_OK(create_v2("{\"id\":\"delta\",\"dtype\":\"<f4\"}", &c));
    float f[4] = {1e8f, 1, 1, 1}, fd[4];
    CHECK_OK(dec(&c, f, 16, 16, &out, &w));
    memcpy(fd, out, 16);
    CHECK(fd[3] == 1e8f); /* 1e8 + 1 rounds back to 1e8 in float32, as np.cumsum does */
    free(out);
    codec_destroy(&c);
    /* bool: numcodecs encodes a[i] != a[i-1] and decodes with a cumulative or */
    CHECK_OK(create_v2("{\"id\":\"delta\",\"dtype\":\"|b1\"}", &c));
    unsigned char b[4] = {1, 1, 0, 1};
    CHECK_OK(enc(&c, b, 4, &e));
    CHECK(e.size == 4 && e.data[0] == 1 && e.data[1] == 0 && e.data[2] == 1 && e.data[3] == 1);
    CHECK_OK(dec(&c, e.data, 4, 4, &out, &w));
    CHECK(out[0] == 1 && out[1] == 1 && out[2] == 1 && out[3] == 1); /* numcodecs gives this too */
    free(out);
    codec_destroy(&c);
    /* v3 spelling as an array→array codec with a v3 dtype name */
    int64_t shape[1] = {5};
    codec_ctx ctx = ctx_of(3, ZC_INT32, 1, shape);
    CHECK_OK(create_json("{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int32\",\"astype\":\"int64\"}}",
                         &ctx, &c));
    CHECK(c.type->kind == CODEC_A2A);
    codec_ctx ec;
    CHECK_OK(c.type->encoded_ctx(c.state, &ctx, &ec));
    CHECK(ec.dtype.type == ZC_INT64 && ec.nbytes == 40 && ec.shape[0] == 5);
    int32_t v[5] = {INT32_MAX, INT32_MIN, 0, -5, 7};
    CHECK_OK(enc(&c, v, 20, &e));
    CHECK(e.size == 40);
    CHECK_OK(dec(&c, e.data, 40, 20, &out, &w));
    CHECK(w == 20 && !memcmp(out, v, 20));
    free(out);
    json_t *j = c.type->to_json(c.state, 3);
    CHECK(!strcmp(json_string_value(json_object_get(j, "name")), "numcodecs.delta"));
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(j, "configuration"), "astype")), "<i8"));
    json_decref(j);
    j = c.type->to_json(c.state, 2);
    CHECK(!strcmp(json_string_value(json_object_get(j, "id")), "delta"));
    CHECK(!strcmp(json_string_value(json_object_get(j, "dtype")), "<i4"));
    json_decref(j);
    buf_free(&e);
    codec_destroy(&c);
    /* v3: the config dtype must have the array's element size */
    CHECK_ERR(create_json("{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int16\"}}", &ctx, &c),
              ZC_EFORMAT, "'dtype'");
}

/* ------------------------------------------------------------ fixedscaleoffset */

static double ramp(int i, double step) { return (double)(i - 500) * step; }

/* Fill n elements of `dtype` (a v2 typestr) with x_i = (i - 500) * step. */
static unsigned char *ramp_array(const char *typestr, double step, int n, size_t *bytes)
{
    dtype_t dt;
    num_fmt f;
    if (dtype_from_v2(typestr, &dt) < 0 || codec_num_fmt(&dt, "test", "dtype", true, &f) < 0) return NULL;
    unsigned char *p = malloc((size_t)n * dt.size);
    for (int i = 0; i < n; i++) {
        num_val v;
        v.d = ramp(i, step);
        num_store(&f, p + (size_t)i * dt.size, num_cast(NUM_FLOAT, v, &f));
    }
    *bytes = (size_t)n * dt.size;
    return p;
}

TEST(filt_fso_numcodecs_values)
{
    const struct {
        const char *offset, *scale, *dtype, *astype;
        uint64_t enc, dec;
    } cases[] = {
        {"1000", "10", "<f4", "|u1", 0x56a090f33c3dfc29ull, 0xe515726aca595ceull},
        {"100", "100000", "<f4", "<i4", 0x78fa3c68349f8379ull, 0xf5bf4c31ca6c35fbull},
        {"2.5", "0.5", "<f4", "<f2", 0x7a4b351c0a455046ull, 0x5cf1f9db8ea2710eull},
        {"1000", "10", ">f4", ">i2", 0xbd70ccb37b097477ull, 0xdc5f84571489b61ull},
        {"-3", "7", "<f2", "<i2", 0x2c7fc2ba26eea53bull, 0xf9b9c000d21e6a6full},
        {"0.25", "4.0", "<f8", "<u2", 0xa067729b85ae1423ull, 0xaa39131ffbc306dfull},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg,
                 "{\"id\":\"fixedscaleoffset\",\"offset\":%s,\"scale\":%s,\"dtype\":\"%s\",\"astype\":\"%s\"}",
                 cases[t].offset, cases[t].scale, cases[t].dtype, cases[t].astype);
        codec c;
        CHECK_OK(create_v2(cfg, &c));
        size_t n = 0;
        unsigned char *a = ramp_array(cases[t].dtype, 1.2345, 1001, &n);
        zc_buf e = {0};
        CHECK_OK(enc(&c, a, n, &e));
        if (fnv(e.data, e.size) != cases[t].enc) fprintf(stderr, "fso encode case %zu differs\n", t);
        CHECK(fnv(e.data, e.size) == cases[t].enc);
        unsigned char *out;
        size_t w;
        CHECK_OK(dec(&c, e.data, e.size, n, &out, &w));
        CHECK(w == n);
        if (fnv(out, w) != cases[t].dec) fprintf(stderr, "fso decode case %zu differs\n", t);
        CHECK(fnv(out, w) == cases[t].dec);
        free(out);
        free(a);
        buf_free(&e);
        codec_destroy(&c);
    }
    /* integer dtype: exact integer arithmetic, and float offset */
    const struct {
        const char *cfg;
        uint64_t enc, dec;
    } ic[] = {
        {"{\"id\":\"fixedscaleoffset\",\"offset\":7,\"scale\":3,\"dtype\":\"<i4\",\"astype\":\"<i2\"}",
         0xbfa563902373b2a8ull, 0x35b60e2a819329e2ull},
        {"{\"id\":\"fixedscaleoffset\",\"offset\":7.5,\"scale\":3,\"dtype\":\"<i4\",\"astype\":\"<i2\"}",
         0x690a3f02479ea754ull, 0xf9c06dbe4087e70bull},
    };
    int32_t y[1000];
    for (int i = 0; i < 1000; i++) y[i] = (i - 500) * 37;
    for (size_t t = 0; t < 2; t++) {
        codec c;
        CHECK_OK(create_v2(ic[t].cfg, &c));
        zc_buf e = {0};
        CHECK_OK(enc(&c, y, sizeof y, &e));
        CHECK(e.size == 2000 && fnv(e.data, e.size) == ic[t].enc);
        unsigned char *out;
        size_t w;
        CHECK_OK(dec(&c, e.data, e.size, sizeof y, &out, &w));
        CHECK(w == sizeof y && fnv(out, w) == ic[t].dec);
        free(out);
        /* odd sizes */
        CHECK_ERR(dec(&c, e.data, 3, 8, &out, &w), ZC_ECORRUPT, "whole number");
        free(out);
        CHECK_ERR(enc(&c, y, 6, &e), ZC_EINVAL, NULL);
        buf_free(&e);
        codec_destroy(&c);
    }
}

TEST(filt_fso_sizes)
{
    /* f4 → u1 shrinks 4×; decoded size computed from the element count */
    codec c;
    CHECK_OK(create_v2("{\"id\":\"fixedscaleoffset\",\"offset\":0,\"scale\":1,\"dtype\":\"<f4\",\"astype\":\"|u1\"}", &c));
    unsigned char e[5] = {0, 1, 2, 3, 250}, *out;
    size_t ds, w;
    bool known;
    CHECK_OK(c.type->decoded_size(c.state, e, 5, &ds, &known));
    CHECK(known && ds == 20);
    CHECK_OK(dec(&c, e, 5, 20, &out, &w));
    float f[5];
    memcpy(f, out, 20);
    CHECK(w == 20 && f[1] == 1.0f && f[4] == 250.0f);
    free(out);
    CHECK_ERR(dec(&c, e, 5, 19, &out, &w), ZC_ECORRUPT, NULL);
    free(out);
    /* rounding is half to even like np.around */
    float g[4] = {0.5f, 1.5f, 2.5f, -0.5f};
    zc_buf b = {0};
    CHECK_OK(enc(&c, g, 16, &b));
    CHECK(b.size == 4 && b.data[0] == 0 && b.data[1] == 2 && b.data[2] == 2 && b.data[3] == 0);
    buf_free(&b);
    json_t *j = c.type->to_json(c.state, 2);
    CHECK(json_is_integer(json_object_get(j, "scale")) && !strcmp(json_string_value(json_object_get(j, "astype")), "|u1"));
    json_decref(j);
    codec_destroy(&c);
}

/* ------------------------------------------------------------ quantize, astype, bitround */

TEST(filt_quantize_numcodecs_values)
{
    const struct {
        int digits;
        const char *dtype, *astype;
        uint64_t enc, dec;
    } cases[] = {
        {2, "<f4", "<f2", 0xc1563ef502e29691ull, 0xff0da6ff892b79d5ull},
        {3, "<f2", "<f2", 0x1215f76d8438e219ull, 0x1215f76d8438e219ull},
        {12, "<f2", "<f4", 0x764389c7b05b7261ull, 0x599a264ae6b6a505ull},
        {-1, "<f8", "<f8", 0xf7b205698d712045ull, 0xf7b205698d712045ull},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        char cfg[200];
        snprintf(cfg, sizeof cfg, "{\"id\":\"quantize\",\"digits\":%d,\"dtype\":\"%s\",\"astype\":\"%s\"}",
                 cases[t].digits, cases[t].dtype, cases[t].astype);
        codec c;
        CHECK_OK(create_v2(cfg, &c));
        size_t n = 0;
        unsigned char *a = ramp_array(cases[t].dtype, 1.2345 / 50, 1001, &n);
        zc_buf e = {0};
        CHECK_OK(enc(&c, a, n, &e));
        if (fnv(e.data, e.size) != cases[t].enc) fprintf(stderr, "quantize encode case %zu differs\n", t);
        CHECK(fnv(e.data, e.size) == cases[t].enc);
        unsigned char *out;
        size_t w;
        CHECK_OK(dec(&c, e.data, e.size, n, &out, &w));
        CHECK(w == n && fnv(out, w) == cases[t].dec);
        free(out);
        free(a);
        buf_free(&e);
        codec_destroy(&c);
    }
}

TEST(filt_astype_numcodecs_values)
{
    const double f[8] = {1.5, -2.7, 300.0, 2.5, 3.5, -0.5, 70000.0, -70000.0};
    const struct {
        const char *to, *hex;
    } cases[] = {
        {"|i1", "01fe2c0203007090"},
        {"|u1", "01fe2c0203007090"},
        {"<i2", "0100feff2c01020003000000701190ee"},
        {"<u2", "0100feff2c01020003000000701190ee"},
        {"<i4", "01000000feffffff2c0100000200000003000000000000007011010090eefeff"},
        {"<u4", "01000000feffffff2c0100000200000003000000000000007011010090eefeff"},
        {"<i8", "0100000000000000feffffffffffffff2c01000000000000020000000000000003000000000000000000"
                "000000000000701101000000000090eefeffffffffff"},
        {"<u8", "0100000000000000feffffffffffffff2c01000000000000020000000000000003000000000000000000"
                "000000000000701101000000000090eefeffffffffff"},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "{\"id\":\"astype\",\"encode_dtype\":\"%s\",\"decode_dtype\":\"<f8\"}", cases[t].to);
        codec c;
        CHECK_OK(create_v2(cfg, &c));
        unsigned char want[64];
        size_t wn;
        hex_to(cases[t].hex, want, &wn);
        zc_buf e = {0};
        CHECK_OK(enc(&c, f, sizeof f, &e));
        if (e.size != wn || memcmp(e.data, want, wn)) fprintf(stderr, "astype to %s differs\n", cases[t].to);
        CHECK(e.size == wn && !memcmp(e.data, want, wn));
        unsigned char *out;
        size_t w;
        CHECK_OK(dec(&c, e.data, e.size, sizeof f, &out, &w));
        double back[8];
        memcpy(back, out, sizeof back);
        CHECK(w == sizeof f && back[0] == 1.0 && back[1] == (cases[t].to[1] == 'i' ? -2.0 : cases[t].to[2] == '1' ? 254.0 : cases[t].to[2] == '2' ? 65534.0 : cases[t].to[2] == '4' ? 4294967294.0 : 18446744073709551614.0));
        free(out);
        buf_free(&e);
        codec_destroy(&c);
    }
    /* special values: NaN → 0 for int8/16 (via int32), INT64_MIN for int64; to f2 rounds */
    codec c;
    CHECK_OK(create_v2("{\"id\":\"astype\",\"encode_dtype\":\"<f2\",\"decode_dtype\":\"<f8\"}", &c));
    const double g[5] = {1.5, -2.7, 3e10, NAN, 1.0 + 1.0 / 2048 + 1e-12};
    zc_buf e = {0};
    CHECK_OK(enc(&c, g, sizeof g, &e));
    unsigned char want[10];
    size_t wn;
    hex_to("003e66c1007c007e013c", want, &wn);
    CHECK(e.size == 10 && !memcmp(e.data, want, 10));
    buf_free(&e);
    codec_destroy(&c);
}

TEST(filt_bitround_numcodecs_values)
{
    const struct {
        int keep;
        const char *dtype;
        uint64_t digest;
    } cases[] = {
        {0, "<f4", 0x35b00b2c425123edull}, {3, "<f4", 0x25ae00db841b6c90ull},
        {10, "<f8", 0x0fc7af009b65ef90ull}, {5, "<f2", 0x6fff503ea25a0312ull},
        {23, "<f4", 0xd27a94118a905f55ull}, {1, "<f2", 0x6f9fbb36736dd623ull},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        dtype_t dt;
        CHECK_OK(dtype_from_v2(cases[t].dtype, &dt));
        int64_t shape[1] = {1001};
        codec_ctx ctx = ctx_of(2, dt.type, 1, shape);
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"id\":\"bitround\",\"keepbits\":%d}", cases[t].keep);
        codec c;
        CHECK_OK(create_json(cfg, &ctx, &c));
        size_t n = 0;
        unsigned char *a = ramp_array(cases[t].dtype, 123.457, 1001, &n);
        num_fmt f;
        CHECK_OK(codec_num_fmt(&dt, "t", "t", false, &f));
        num_val v;
        v.d = INFINITY;
        num_store(&f, a + 5 * dt.size, v);
        v.d = NAN;
        num_store(&f, a + 6 * dt.size, v);
        v.d = -0.0;
        num_store(&f, a + 7 * dt.size, v);
        zc_buf e = {0};
        CHECK_OK(enc(&c, a, n, &e));
        if (fnv(e.data, e.size) != cases[t].digest) fprintf(stderr, "bitround case %zu differs\n", t);
        CHECK(e.size == n && fnv(e.data, e.size) == cases[t].digest);
        unsigned char *out;
        size_t w;
        CHECK_OK(dec(&c, e.data, e.size, n, &out, &w)); /* identity */
        CHECK(w == n && !memcmp(out, e.data, n));
        free(out);
        free(a);
        buf_free(&e);
        codec_destroy(&c);
    }
    /* big-endian data (a v2 ">f4" array) rounds the same values */
    int64_t shape[1] = {2};
    codec_ctx le = ctx_of(2, ZC_FLOAT32, 1, shape), be = le;
    be.dtype.endian = '>';
    codec cl, cb;
    CHECK_OK(create_json("{\"id\":\"bitround\",\"keepbits\":2}", &le, &cl));
    CHECK_OK(create_json("{\"id\":\"bitround\",\"keepbits\":2}", &be, &cb));
    float x[2] = {3.14159f, -1234.5f};
    unsigned char xb[8];
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) xb[4 * i + k] = ((unsigned char *)&x[i])[3 - k];
    zc_buf el = {0}, eb = {0};
    CHECK_OK(enc(&cl, x, 8, &el));
    CHECK_OK(enc(&cb, xb, 8, &eb));
    for (int i = 0; i < 8; i++) CHECK(el.data[i] == eb.data[(i / 4) * 4 + 3 - i % 4]);
    float r[2];
    memcpy(r, el.data, 8);
    CHECK(r[0] == 3.0f && r[1] == -1280.0f);
    buf_free(&el);
    buf_free(&eb);
    codec_destroy(&cl);
    codec_destroy(&cb);
    /* non-float arrays decode (a copy) but do not encode */
    codec_ctx i4 = ctx_of(2, ZC_INT32, 1, shape);
    CHECK_OK(create_json("{\"id\":\"bitround\",\"keepbits\":2}", &i4, &cl));
    CHECK_ERR(enc(&cl, x, 8, &el), ZC_EUNSUPPORTED, "float");
    buf_free(&el);
    codec_destroy(&cl);
    CHECK_ERR(create_json("{\"id\":\"bitround\",\"keepbits\":24}", &le, &cl), ZC_EFORMAT, "keepbits");
    CHECK_ERR(create_json("{\"id\":\"bitround\",\"keepbits\":-1}", &le, &cl), ZC_EFORMAT, "keepbits");
    CHECK_ERR(create_json("{\"id\":\"bitround\"}", &le, &cl), ZC_EFORMAT, "keepbits");
}

/* ------------------------------------------------------------ shuffle */

TEST(filt_shuffle_layout)
{
    codec c;
    CHECK_OK(create_v2("{\"id\":\"shuffle\",\"elementsize\":3}", &c));
    unsigned char src[12], *out;
    for (int i = 0; i < 12; i++) src[i] = (unsigned char)i;
    zc_buf e = {0};
    CHECK_OK(enc(&c, src, 12, &e));
    const unsigned char want[12] = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11};
    CHECK(e.size == 12 && !memcmp(e.data, want, 12));
    size_t w;
    CHECK_OK(dec(&c, e.data, 12, 12, &out, &w));
    CHECK(w == 12 && !memcmp(out, src, 12));
    free(out);
    CHECK_ERR(dec(&c, e.data, 11, 12, &out, &w), ZC_ECORRUPT, "whole number");
    free(out);
    buf_free(&e);
    codec_destroy(&c);
    /* a large buffer (several blocks) round trips */
    CHECK_OK(create_v2("{\"id\":\"shuffle\",\"elementsize\":8}", &c));
    size_t n = 8 * 1000;
    unsigned char *big = malloc(n);
    for (size_t i = 0; i < n; i++) big[i] = (unsigned char)rnd();
    CHECK_OK(enc(&c, big, n, &e));
    CHECK(e.data[1] == big[8] && e.data[1000] == big[1]);
    CHECK_OK(dec(&c, e.data, n, n, &out, &w));
    CHECK(!memcmp(out, big, n));
    free(out);
    free(big);
    buf_free(&e);
    codec_destroy(&c);
    /* defaults: 4 in v2; the array's element size in v3 */
    CHECK_OK(create_v2("{\"id\":\"shuffle\"}", &c));
    json_t *j = c.type->to_json(c.state, 2);
    CHECK(json_integer_value(json_object_get(j, "elementsize")) == 4);
    json_decref(j);
    codec_destroy(&c);
    int64_t shape[1] = {4};
    codec_ctx ctx = ctx_of(3, ZC_INT16, 1, shape);
    CHECK_OK(create_json("{\"name\":\"numcodecs.shuffle\"}", &ctx, &c));
    CHECK(c.type->kind == CODEC_B2B);
    j = c.type->to_json(c.state, 3);
    CHECK(json_integer_value(json_object_get(json_object_get(j, "configuration"), "elementsize")) == 2);
    json_decref(j);
    codec_destroy(&c);
    CHECK_ERR(create_v2("{\"id\":\"shuffle\",\"elementsize\":\"4\"}", &c), ZC_EFORMAT, "elementsize");
}

/* ------------------------------------------------------------ configs, helpers */

TEST(filt_bad_configs)
{
    codec c;
    CHECK_ERR(create_v2("{\"id\":\"delta\"}", &c), ZC_EFORMAT, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"delta\",\"dtype\":\"foo\"}", &c), ZC_EFORMAT, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"delta\",\"dtype\":7}", &c), ZC_EFORMAT, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"delta\",\"dtype\":\"<i4\",\"astype\":\"<i\"}", &c), ZC_EFORMAT, "'astype'");
    CHECK_ERR(create_v2("{\"id\":\"delta\",\"dtype\":\"<i4\",\"astype\":\"<x2\"}", &c), ZC_EUNSUPPORTED, "'astype'");
    CHECK_ERR(create_v2("{\"id\":\"delta\",\"dtype\":\"<c8\"}", &c), ZC_EUNSUPPORTED, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"delta\",\"dtype\":\"|S4\"}", &c), ZC_EUNSUPPORTED, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"fixedscaleoffset\",\"scale\":1,\"dtype\":\"<f8\"}", &c), ZC_EFORMAT, "'offset'");
    CHECK_ERR(create_v2("{\"id\":\"fixedscaleoffset\",\"offset\":1,\"dtype\":\"<f8\"}", &c), ZC_EFORMAT, "'scale'");
    CHECK_ERR(create_v2("{\"id\":\"fixedscaleoffset\",\"offset\":1,\"scale\":\"2\",\"dtype\":\"<f8\"}", &c),
              ZC_EFORMAT, "'scale'");
    CHECK_ERR(create_v2("{\"id\":\"fixedscaleoffset\",\"offset\":1,\"scale\":2}", &c), ZC_EFORMAT, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"quantize\",\"dtype\":\"<f8\"}", &c), ZC_EFORMAT, "'digits'");
    CHECK_ERR(create_v2("{\"id\":\"quantize\",\"digits\":2,\"dtype\":\"<i4\"}", &c), ZC_EFORMAT, "floating");
    CHECK_ERR(create_v2("{\"id\":\"quantize\",\"digits\":2}", &c), ZC_EFORMAT, "'dtype'");
    CHECK_ERR(create_v2("{\"id\":\"astype\",\"encode_dtype\":\"<f4\"}", &c), ZC_EFORMAT, "'decode_dtype'");
    CHECK_ERR(create_v2("{\"id\":\"astype\",\"decode_dtype\":\"<f4\"}", &c), ZC_EFORMAT, "'encode_dtype'");
    CHECK_ERR(create_v2("{\"id\":\"astype\",\"encode_dtype\":\"<M8[ns]\",\"decode_dtype\":\"<f4\"}", &c),
              ZC_EUNSUPPORTED, "encode_dtype");
}

TEST(filt_json_spellings_round_trip)
{
    /* each filter's to_json (v2 and v3) recreates an equivalent codec */
    const char *v2[] = {
        "{\"id\":\"delta\",\"dtype\":\"<i4\",\"astype\":\"<i2\"}",
        "{\"id\":\"fixedscaleoffset\",\"offset\":1.5,\"scale\":10,\"dtype\":\"<f8\",\"astype\":\"<i4\"}",
        "{\"id\":\"quantize\",\"digits\":3,\"dtype\":\"<f8\",\"astype\":\"<f4\"}",
        "{\"id\":\"astype\",\"encode_dtype\":\"<i2\",\"decode_dtype\":\"<f8\"}",
        "{\"id\":\"shuffle\",\"elementsize\":8}",
        "{\"id\":\"bitround\",\"keepbits\":7}",
    };
    int64_t shape[1] = {16};
    double data[16];
    for (int i = 0; i < 16; i++) data[i] = (i - 7) * 3.25;
    for (size_t t = 0; t < sizeof v2 / sizeof v2[0]; t++) {
        codec c;
        codec_ctx ctx2 = ctx_of(2, ZC_FLOAT64, 1, shape), ctx3 = ctx_of(3, ZC_FLOAT64, 1, shape);
        CHECK_OK(create_json(v2[t], &ctx2, &c));
        zc_buf e = {0}, e2 = {0}, e3 = {0};
        size_t n = strstr(v2[t], "<i4\",\"astype") ? 64 : sizeof data;
        CHECK_OK(enc(&c, data, n, &e));
        for (int fmt = 2; fmt <= 3; fmt++) {
            json_t *j = c.type->to_json(c.state, fmt);
            CHECK(j != NULL);
            codec d;
            int rc = codec_create(j, fmt == 2 ? &ctx2 : &ctx3, &d);
            /* v3 requires dtype to match the array (f8): the int32 delta is v2 only */
            if (fmt == 3 && strstr(v2[t], "<i4\",\"astype")) {
                CHECK(rc == ZC_EFORMAT);
                json_decref(j);
                continue;
            }
            CHECK_OK(rc);
            if (rc == 0) {
                zc_buf *x = fmt == 2 ? &e2 : &e3;
                CHECK_OK(enc(&d, data, n, x));
                CHECK(x->size == e.size && !memcmp(x->data, e.data, e.size));
                codec_destroy(&d);
            }
            json_decref(j);
        }
        buf_free(&e);
        buf_free(&e2);
        buf_free(&e3);
        codec_destroy(&c);
    }
}

TEST(filt_half_rounding)
{
    CHECK(codec_double_to_half(1.0) == 0x3c00);
    CHECK(codec_double_to_half(-2.0) == 0xc000);
    CHECK(codec_double_to_half(65504.0) == 0x7bff);
    CHECK(codec_double_to_half(65520.0) == 0x7c00);          /* rounds up to inf */
    CHECK(codec_double_to_half(65519.99) == 0x7bff);
    CHECK(codec_double_to_half(1.0 + 1.0 / 2048) == 0x3c00); /* tie → even */
    CHECK(codec_double_to_half(1.0 + 3.0 / 2048) == 0x3c02); /* tie → even (up) */
    CHECK(codec_double_to_half(1.0 + 1.0 / 2048 + 1e-12) == 0x3c01); /* double rounding via float would give 0x3c00 */
    CHECK(codec_double_to_half(5.960464477539063e-08) == 0x0001);    /* smallest subnormal */
    CHECK(codec_double_to_half(2.98023223876953125e-08) == 0x0000);  /* half of it: tie → 0 */
    CHECK(codec_double_to_half(2.99e-08) == 0x0001);
    CHECK(codec_double_to_half(6.097555160522461e-05) == 0x03ff);    /* largest subnormal */
    CHECK(codec_double_to_half(NAN) == 0x7e00);
    CHECK(codec_double_to_half(-INFINITY) == 0xfc00);
    CHECK(codec_double_to_half(-0.0) == 0x8000);
}

TEST(filt_numpy_promotion)
{
    /* np.result_type(array dtype, Python scalar) under NumPy 1.24 */
    const struct {
        num_kind ak;
        unsigned as;
        double v;
        bool is_int;
        num_kind rk;
        unsigned rs;
    } cases[] = {
        {NUM_FLOAT, 2, 10, true, NUM_FLOAT, 2},       {NUM_FLOAT, 2, 256, true, NUM_FLOAT, 4},
        {NUM_FLOAT, 4, 65535, true, NUM_FLOAT, 4},    {NUM_FLOAT, 4, 65536, true, NUM_FLOAT, 8},
        {NUM_FLOAT, 2, -5, true, NUM_FLOAT, 2},       {NUM_FLOAT, 2, -200, true, NUM_FLOAT, 4},
        {NUM_FLOAT, 4, -40000, true, NUM_FLOAT, 8},   {NUM_INT, 1, 10, true, NUM_INT, 1},
        {NUM_INT, 1, 255, true, NUM_INT, 2},          {NUM_UINT, 1, 255, true, NUM_UINT, 1},
        {NUM_UINT, 1, -5, true, NUM_INT, 2},          {NUM_UINT, 1, 65536, true, NUM_UINT, 4},
        {NUM_INT, 1, 2147483648.0, true, NUM_INT, 8}, {NUM_FLOAT, 2, 64999.0, false, NUM_FLOAT, 2},
        {NUM_FLOAT, 2, 65000.0, false, NUM_FLOAT, 4}, {NUM_FLOAT, 4, 3.4e38, false, NUM_FLOAT, 8},
        {NUM_INT, 4, 0.5, false, NUM_FLOAT, 8},       {NUM_BOOL, 1, 3, true, NUM_INT, 8},
        {NUM_FLOAT, 2, INFINITY, false, NUM_FLOAT, 2}, {NUM_UINT, 8, -1, true, NUM_FLOAT, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        num_fmt a = num_fmt_of(cases[i].ak, cases[i].as);
        num_scalar s = {cases[i].v, (int64_t)cases[i].v, cases[i].is_int};
        num_fmt r = num_result_type(&a, &s);
        if (r.kind != cases[i].rk || r.size != cases[i].rs)
            fprintf(stderr, "promotion case %zu: got kind %d size %u\n", i, r.kind, r.size);
        CHECK(r.kind == cases[i].rk && r.size == cases[i].rs);
    }
}
