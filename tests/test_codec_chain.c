/* tests/test_codec_chain.c — the codec chain: v3 lists (a2a, a2b, b2b), v2
 * lists (transpose "F", bytes, numcodecs filters and a compressor as
 * {"id": ...}), the context each codec sees, sizes and bounds for corrupt
 * input, copies avoided, allocation failures, and bad lists.
 *
 * The bytes→bytes codecs here are tiny test codecs registered by the test
 * itself, so these tests do not depend on the compressors:
 *   test.xor  {"key"}  every byte xor key (no decoded_size: unknown size)
 *   test.pad  {"n"}    appends n bytes 0xEE; decode strips them
 *   test.hdr           prepends the size as 8 bytes LE; decoded_size reads it
 * The zstd test at the end uses the real compressor. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "harness.h"

/* ------------------------------------------------------------ test codecs */

typedef struct {
    unsigned key;  /* xor key / pad length */
    codec_ctx ctx; /* what it was created with */
} tstate;

static codec_ctx last_ctx;             /* ctx of the last test codec created */
/* atomics: chain_shared_between_threads decodes on several threads at once */
static _Atomic(const void *) last_decode_dst; /* dst of the last test decode call */
static atomic_int decode_calls;               /* test decode calls */

static int t_create(const json_t *cfg, const codec_ctx *ctx, void **state, const char *key)
{
    json_t *k = cfg ? json_object_get(cfg, key) : NULL;
    if (key && !json_is_integer(k)) return zc__err(ZC_EFORMAT, "test codec: missing '%s'", key);
    tstate *st = zc__malloc(sizeof *st);
    if (!st) return ZC_ENOMEM;
    st->key = key ? (unsigned)json_integer_value(k) : 0;
    st->ctx = *ctx;
    last_ctx = *ctx;
    *state = st;
    return 0;
}
static int xor_create(const json_t *cfg, const codec_ctx *ctx, void **state) { return t_create(cfg, ctx, state, "key"); }
static int pad_create(const json_t *cfg, const codec_ctx *ctx, void **state) { return t_create(cfg, ctx, state, "n"); }
static int hdr_create(const json_t *cfg, const codec_ctx *ctx, void **state) { return t_create(cfg, ctx, state, NULL); }
static void t_destroy(void *state) { zc__free(state); }

static int xor_decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *w)
{
    const tstate *st = state;
    decode_calls++;
    last_decode_dst = dst;
    if (n > cap) return zc__err(ZC_ECORRUPT, "test.xor: %zu bytes exceed %zu", n, cap);
    for (size_t i = 0; i < n; i++) ((unsigned char *)dst)[i] = ((const unsigned char *)src)[i] ^ (unsigned char)st->key;
    *w = n;
    return 0;
}
static int xor_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const tstate *st = state;
    ZC_TRY(buf_reserve(out, out->size + n));
    for (size_t i = 0; i < n; i++) out->data[out->size + i] = ((const unsigned char *)src)[i] ^ (unsigned char)st->key;
    out->size += n;
    return 0;
}
static json_t *xor_json(void *state, int fmt)
{
    const tstate *st = state;
    return fmt == 2 ? json_pack("{s:s, s:i}", "id", "test_xor", "key", (int)st->key)
                    : json_pack("{s:s, s:{s:i}}", "name", "test.xor", "configuration", "key", (int)st->key);
}

static int pad_decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *w)
{
    const tstate *st = state;
    decode_calls++;
    last_decode_dst = dst;
    if (n < st->key) return zc__err(ZC_ECORRUPT, "test.pad: too short");
    if (n - st->key > cap) return zc__err(ZC_ECORRUPT, "test.pad: %zu bytes exceed %zu", n - st->key, cap);
    memcpy(dst, src, n - st->key);
    *w = n - st->key;
    return 0;
}
static int pad_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const tstate *st = state;
    ZC_TRY(buf_append(out, src, n));
    for (unsigned i = 0; i < st->key; i++) ZC_TRY(buf_append(out, "\xee", 1));
    return 0;
}
static json_t *pad_json(void *state, int fmt)
{
    const tstate *st = state;
    return json_pack("{s:s, s:{s:i}}", "name", "test.pad", "configuration", "n", (int)st->key);
}

static int hdr_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    if (n < 8) return zc__err(ZC_ECORRUPT, "test.hdr: too short");
    uint64_t s;
    memcpy(&s, src, 8);
    *size = (size_t)s;
    *known = true;
    return 0;
}
static int hdr_decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *w)
{
    size_t s = 0;
    bool k;
    decode_calls++;
    last_decode_dst = dst;
    ZC_TRY(hdr_size(state, src, n, &s, &k));
    if (s != n - 8 || s > cap) return zc__err(ZC_ECORRUPT, "test.hdr: bad size");
    memcpy(dst, (const unsigned char *)src + 8, s);
    *w = s;
    return 0;
}
static int hdr_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    uint64_t s = n;
    ZC_TRY(buf_append(out, &s, 8));
    return buf_append(out, src, n);
}
static json_t *hdr_json(void *state, int fmt) { return json_pack("{s:s}", "name", "test.hdr"); }

static void register_test_codecs(void)
{
    const codec_type t_xor = {.version = 1, .name = "test.xor", .v2_id = "test_xor", .kind = CODEC_B2B, .create = xor_create, .destroy = t_destroy,
                              .decode = xor_decode, .decoded_size = NULL, .encode = xor_encode, .to_json = xor_json};
    const codec_type pad = {.version = 1, .name = "test.pad", .v2_id = NULL, .kind = CODEC_B2B, .create = pad_create, .destroy = t_destroy,
                              .decode = pad_decode, .decoded_size = NULL, .encode = pad_encode, .to_json = pad_json};
    const codec_type hdr = {.version = 1, .name = "test.hdr", .v2_id = NULL, .kind = CODEC_B2B, .create = hdr_create, .destroy = t_destroy,
                              .decode = hdr_decode, .decoded_size = hdr_size, .encode = hdr_encode, .to_json = hdr_json};
    const codec_type *t;
    codec_find("bytes", 3, &t); /* load the built-ins first */
    CHECK_OK(codec_register(&t_xor));
    CHECK_OK(codec_register(&pad));
    CHECK_OK(codec_register(&hdr));
}

/* ------------------------------------------------------------ helpers */

static codec_ctx chunk_ctx(int zarr_format, zc_dtype type, int ndim, const int64_t *shape)
{
    codec_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    size_t size;
    zc_dtype_parse(zc_dtype_name(type), &ctx.dtype.type, &size);
    ctx.dtype.size = size;
    ctx.dtype.endian = size == 1 ? '|' : '<'; /* native on this (little-endian) host */
    ctx.zarr_format = zarr_format;
    ctx.ndim = ndim;
    ctx.nbytes = size;
    for (int i = 0; i < ndim; i++) {
        ctx.shape[i] = shape[i];
        ctx.nbytes *= (size_t)shape[i];
    }
    return ctx;
}

static int chain_from(const char *text, const codec_ctx *ctx, codec_chain **ch)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) {
        fprintf(stderr, "bad test JSON %s: %s\n", text, e.text);
        return ZC_EINVAL;
    }
    int rc = codec_chain_create(j, ctx, ch);
    json_decref(j);
    return rc;
}

/* out = in.transpose(order) for a C-order array */
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

static void swap_each(unsigned char *p, size_t n, size_t unit)
{
    for (size_t i = 0; i < n; i += unit)
        for (size_t k = 0; k < unit / 2; k++) {
            unsigned char t = p[i + k];
            p[i + k] = p[i + unit - 1 - k];
            p[i + unit - 1 - k] = t;
        }
}

/* ------------------------------------------------------------ v3 */

TEST(chain_v3_transpose_bytes_xor)
{
    register_test_codecs();
    int64_t shape[3] = {5, 7, 3};
    codec_ctx ctx = chunk_ctx(3, ZC_INT32, 3, shape);
    codec_chain *ch;
    CHECK_OK(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
                        " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
                        " {\"name\":\"test.xor\",\"configuration\":{\"key\":90}}]",
                        &ctx, &ch));
    if (!ch) return;
    CHECK(!codec_chain_is_identity(ch));
    /* the b2b codec saw the array dtype with the stored (big) byte order */
    CHECK(last_ctx.dtype.type == ZC_INT32 && last_ctx.dtype.endian == '>' && last_ctx.nbytes == ctx.nbytes);
    CHECK(last_ctx.shape[0] == 3 && last_ctx.shape[1] == 5 && last_ctx.shape[2] == 7); /* transposed */
    int32_t src[105];
    for (int i = 0; i < 105; i++) src[i] = i * 1000003 - 77;
    unsigned char want[420];
    int order[3] = {2, 0, 1};
    naive_transpose((unsigned char *)src, want, 3, shape, order, 4);
    swap_each(want, 420, 4);
    for (int i = 0; i < 420; i++) want[i] ^= 90;
    zc_buf e = {0};
    CHECK_OK(codec_chain_encode(ch, src, sizeof src, &e));
    CHECK(e.size == 420 && !memcmp(e.data, want, 420));
    int32_t back[105];
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, back, sizeof back));
    CHECK(!memcmp(back, src, sizeof src));
    /* the chain as a v3 list */
    json_t *j = codec_chain_json(ch);
    CHECK(json_array_size(j) == 3);
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(j, 0), "name")), "transpose"));
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(j, 1), "name")), "bytes"));
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(j, 2), "name")), "test.xor"));
    /* … which builds the same chain again */
    codec_chain *again;
    CHECK_OK(codec_chain_create(j, &ctx, &again));
    zc_buf e2 = {0};
    CHECK_OK(codec_chain_encode(again, src, sizeof src, &e2));
    CHECK(e2.size == e.size && !memcmp(e2.data, e.data, e.size));
    codec_chain_free(again);
    json_decref(j);
    /* encode reuses the output buffer (size reset) */
    CHECK_OK(codec_chain_encode(ch, src, sizeof src, &e));
    CHECK(e.size == 420);
    buf_free(&e);
    buf_free(&e2);
    codec_chain_free(ch);
}

TEST(chain_identity_and_sizes)
{
    int64_t shape[2] = {4, 4};
    codec_ctx i4 = chunk_ctx(3, ZC_INT32, 2, shape), u1 = chunk_ctx(3, ZC_UINT8, 2, shape);
    codec_chain *ch;
    int32_t a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = i * 3;
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", &i4, &ch));
    CHECK(codec_chain_is_identity(ch));
    CHECK_OK(codec_chain_decode(ch, a, sizeof a, b, sizeof b));
    CHECK(!memcmp(a, b, sizeof a));
    CHECK_ERR(codec_chain_decode(ch, a, sizeof a - 4, b, sizeof b), ZC_ECORRUPT, "expected 64");
    CHECK_ERR(codec_chain_decode(ch, a, sizeof a + 1, b, sizeof b), ZC_ECORRUPT, "expected 64");
    CHECK_ERR(codec_chain_decode(ch, a, sizeof a, b, sizeof b - 1), ZC_EINVAL, NULL);
    zc_buf e = {0};
    CHECK_OK(codec_chain_encode(ch, a, sizeof a, &e));
    CHECK(e.size == sizeof a && !memcmp(e.data, a, sizeof a));
    CHECK_ERR(codec_chain_encode(ch, a, sizeof a - 1, &e), ZC_EINVAL, NULL);
    codec_chain_free(ch);
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]", &i4, &ch));
    CHECK(!codec_chain_is_identity(ch));
    CHECK_OK(codec_chain_encode(ch, a, sizeof a, &e));
    CHECK(e.size == 64 && e.data[3] == 0 && e.data[7] == 3);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, sizeof b));
    CHECK(!memcmp(a, b, sizeof a));
    CHECK_ERR(codec_chain_decode(ch, e.data, 60, b, sizeof b), ZC_ECORRUPT, "expected 64");
    codec_chain_free(ch);
    /* 1-byte elements: no endian needed, still an identity */
    CHECK_OK(chain_from("[{\"name\":\"bytes\"}]", &u1, &ch));
    CHECK(codec_chain_is_identity(ch));
    codec_chain_free(ch);
    /* a transpose is not an identity */
    CHECK_OK(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]",
                        &i4, &ch));
    CHECK(!codec_chain_is_identity(ch));
    CHECK_ERR(codec_chain_decode(ch, a, 63, b, sizeof b), ZC_ECORRUPT, "expected 64");
    buf_free(&e);
    codec_chain_free(ch);
}

/* ------------------------------------------------------------ v2 */

TEST(chain_v2_f_order_filters)
{
    register_test_codecs();
    /* int16 chunk (4, 6), order F, big-endian typestr, delta filter, "compressor" */
    int64_t shape[2] = {4, 6};
    codec_ctx ctx = chunk_ctx(2, ZC_INT16, 2, shape);
    codec_chain *ch;
    CHECK_OK(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}},"
                        " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
                        " {\"id\":\"delta\",\"dtype\":\">i2\"},"
                        " {\"id\":\"test_xor\",\"key\":7}]",
                        &ctx, &ch));
    if (!ch) return;
    CHECK(last_ctx.zarr_format == 2 && last_ctx.dtype.endian == '>' && last_ctx.dtype.type == ZC_INT16);
    int16_t a[24];
    for (int i = 0; i < 24; i++) a[i] = (int16_t)(i * i * 37 - 300);
    /* expected: F order, big endian, delta of big-endian values, xor 7 */
    int16_t f[24];
    int rev[2] = {1, 0};
    naive_transpose((unsigned char *)a, (unsigned char *)f, 2, shape, rev, 2);
    unsigned char want[48];
    for (int i = 0; i < 24; i++) {
        uint16_t d = (uint16_t)(i ? f[i] - f[i - 1] : f[0]);
        want[2 * i] = (unsigned char)((d >> 8) ^ 7);
        want[2 * i + 1] = (unsigned char)((d & 0xff) ^ 7);
    }
    zc_buf e = {0};
    CHECK_OK(codec_chain_encode(ch, a, sizeof a, &e));
    CHECK(e.size == 48 && !memcmp(e.data, want, 48));
    int16_t back[24];
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, back, sizeof back));
    CHECK(!memcmp(back, a, sizeof a));
    CHECK_ERR(codec_chain_decode(ch, e.data, 47, back, sizeof back), ZC_ECORRUPT, NULL);
    /* the v3 list spells the v2 filter in its v3 name */
    json_t *j = codec_chain_json(ch);
    CHECK(json_array_size(j) == 4);
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(j, 2), "name")), "numcodecs.delta"));
    json_decref(j);
    buf_free(&e);
    codec_chain_free(ch);
}

TEST(chain_v2_size_changing_filter)
{
    register_test_codecs();
    /* float64 (10, 10) → fixedscaleoffset to u1 (8× smaller) → xor. The xor
     * sees uint8 data of 100 bytes (its ctx follows the filter). */
    int64_t shape[2] = {10, 10};
    codec_ctx ctx = chunk_ctx(2, ZC_FLOAT64, 2, shape);
    codec_chain *ch;
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                        " {\"id\":\"fixedscaleoffset\",\"offset\":1000,\"scale\":10,\"dtype\":\"<f8\",\"astype\":\"|u1\"},"
                        " {\"id\":\"test_xor\",\"key\":1}]",
                        &ctx, &ch));
    if (!ch) return;
    CHECK(last_ctx.nbytes == 100 && last_ctx.dtype.type == ZC_UINT8);
    double a[100], back[100];
    for (int i = 0; i < 100; i++) a[i] = 1000 + i * 0.1 + (i % 3 == 0 ? 0.01 : 0);
    zc_buf e = {0};
    CHECK_OK(codec_chain_encode(ch, a, sizeof a, &e));
    CHECK(e.size == 100);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, back, sizeof back));
    for (int i = 0; i < 100; i++) CHECK(fabs(back[i] - a[i]) <= 0.05 + 1e-9);
    /* a stored chunk of the wrong size fails at the filter, naming sizes */
    CHECK_ERR(codec_chain_decode(ch, e.data, 99, back, sizeof back), ZC_ECORRUPT, "expected 100");
    buf_free(&e);
    codec_chain_free(ch);
    /* an expanding filter (astype i2 → f8, 4×) before an unknown-size codec */
    codec_ctx i2 = chunk_ctx(2, ZC_INT16, 1, (int64_t[]){50000});
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                        " {\"id\":\"astype\",\"encode_dtype\":\"<f8\",\"decode_dtype\":\"<i2\"},"
                        " {\"id\":\"test_xor\",\"key\":3}, {\"name\":\"test.pad\",\"configuration\":{\"n\":5}}]",
                        &i2, &ch));
    int16_t *v = malloc(100000), *w = malloc(100000);
    for (int i = 0; i < 50000; i++) v[i] = (int16_t)(i * 7);
    CHECK_OK(codec_chain_encode(ch, v, 100000, &e));
    CHECK(e.size == 400005);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, w, 100000));
    CHECK(!memcmp(v, w, 100000));
    free(v);
    free(w);
    buf_free(&e);
    codec_chain_free(ch);
}

/* ------------------------------------------------------------ sizes, bounds, copies */

TEST(chain_unknown_sizes_and_bounds)
{
    register_test_codecs();
    int64_t shape[1] = {256};
    codec_ctx ctx = chunk_ctx(3, ZC_UINT8, 1, shape);
    codec_chain *ch;
    /* pad then xor: the xor's output (what pad decodes) has unknown size */
    CHECK_OK(chain_from("[{\"name\":\"bytes\"}, {\"name\":\"test.pad\",\"configuration\":{\"n\":3}},"
                        " {\"name\":\"test.xor\",\"configuration\":{\"key\":5}}]",
                        &ctx, &ch));
    unsigned char a[256], b[256];
    for (int i = 0; i < 256; i++) a[i] = (unsigned char)i;
    zc_buf e = {0};
    CHECK_OK(codec_chain_encode(ch, a, 256, &e));
    CHECK(e.size == 259);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, 256));
    CHECK(!memcmp(a, b, 256));
    /* stored data larger than the bound (2×256 + 64 KiB) is refused by the
     * codec that would overrun, not written past */
    size_t huge = 2 * 256 + (64 << 10) + 10;
    unsigned char *big = calloc(huge, 1);
    CHECK_ERR(codec_chain_decode(ch, big, huge, b, 256), ZC_ECORRUPT, "test.xor");
    /* within the bound but too big in the end: pad would write 300 bytes into 256 */
    CHECK_ERR(codec_chain_decode(ch, big, 303, b, 256), ZC_ECORRUPT, "exceed 256");
    /* too small in the end */
    CHECK_ERR(codec_chain_decode(ch, big, 200, b, 256), ZC_ECORRUPT, "expected 256");
    free(big);
    codec_chain_free(ch);
    /* a codec announcing a decoded size beyond what is expected */
    CHECK_OK(chain_from("[{\"name\":\"bytes\"}, {\"name\":\"test.hdr\"}, {\"name\":\"test.xor\",\"configuration\":{\"key\":0}}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, 256, &e));
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, 256));
    CHECK(!memcmp(a, b, 256));
    uint64_t lie = (uint64_t)1 << 40;
    memcpy(e.data, &lie, 8);
    CHECK_ERR(codec_chain_decode(ch, e.data, e.size, b, 256), ZC_ECORRUPT, NULL);
    codec_chain_free(ch);
    /* test.hdr decoding into a scratch buffer: its claim is checked against the bound */
    CHECK_OK(chain_from("[{\"name\":\"bytes\"}, {\"name\":\"test.xor\",\"configuration\":{\"key\":0}}, {\"name\":\"test.hdr\"}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, 256, &e));
    memcpy(e.data, &lie, 8);
    CHECK_ERR(codec_chain_decode(ch, e.data, e.size, b, 256), ZC_ECORRUPT, "exceeds the bound");
    codec_chain_free(ch);
    /* … and against the exact size when it is known (bytes, big endian, is the last step) */
    codec_ctx i4 = chunk_ctx(3, ZC_INT32, 1, (int64_t[]){64});
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}, {\"name\":\"test.hdr\"}]",
                        &i4, &ch));
    CHECK_OK(codec_chain_encode(ch, a, 256, &e));
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, 256));
    CHECK(!memcmp(a, b, 256));
    memcpy(e.data, &lie, 8);
    CHECK_ERR(codec_chain_decode(ch, e.data, e.size, b, 256), ZC_ECORRUPT, "exceeds the expected 256");
    buf_free(&e);
    codec_chain_free(ch);
}

TEST(chain_copies_avoided)
{
    register_test_codecs();
    int64_t shape[1] = {4096};
    codec_ctx ctx = chunk_ctx(3, ZC_FLOAT32, 1, shape);
    codec_chain *ch;
    float *a = malloc(16384), *b = malloc(16384);
    for (int i = 0; i < 4096; i++) a[i] = (float)i * 0.5f;
    zc_buf e = {0};
    /* native bytes + one b2b: the b2b decodes straight into dst, nothing allocated */
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"name\":\"test.xor\",\"configuration\":{\"key\":9}}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, 16384, &e));
    size_t before = zc__alloc_current();
    zc__alloc_reset_peak();
    decode_calls = 0;
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, 16384));
    CHECK(decode_calls == 1 && last_decode_dst == b);
    CHECK(zc__alloc_peak() == before);
    CHECK(!memcmp(a, b, 16384));
    codec_chain_free(ch);
    /* lone native bytes: a memcpy, no allocation */
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", &ctx, &ch));
    before = zc__alloc_current();
    zc__alloc_reset_peak();
    CHECK_OK(codec_chain_decode(ch, a, 16384, b, 16384));
    CHECK(zc__alloc_peak() == before);
    codec_chain_free(ch);
    /* three b2b steps: at most two scratch buffers of the known size */
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"name\":\"test.xor\",\"configuration\":{\"key\":1}},"
                        " {\"name\":\"test.xor\",\"configuration\":{\"key\":2}}, {\"name\":\"test.hdr\"}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, 16384, &e));
    before = zc__alloc_current();
    zc__alloc_reset_peak();
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, 16384));
    CHECK(zc__alloc_peak() - before <= 2 * (2 * 16384 + (64 << 10)));
    CHECK(zc__alloc_current() == before);
    CHECK(!memcmp(a, b, 16384));
    codec_chain_free(ch);
    buf_free(&e);
    free(a);
    free(b);
}

/* ------------------------------------------------------------ bad lists */

TEST(chain_bad_lists)
{
    register_test_codecs();
    int64_t shape[2] = {3, 4};
    codec_ctx ctx = chunk_ctx(3, ZC_INT32, 2, shape);
    codec_chain *ch = (codec_chain *)&ctx;
    CHECK_ERR(chain_from("{\"name\":\"bytes\"}", &ctx, &ch), ZC_EFORMAT, "list");
    CHECK(ch == NULL);
    CHECK_ERR(chain_from("[]", &ctx, &ch), ZC_EFORMAT, "empty");
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                         " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]", &ctx, &ch),
              ZC_EFORMAT, "second array→bytes");
    CHECK_ERR(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}]", &ctx, &ch),
              ZC_EFORMAT, "no array→bytes");
    CHECK_ERR(chain_from("[{\"name\":\"test.xor\",\"configuration\":{\"key\":1}}, {\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]",
                         &ctx, &ch), ZC_EFORMAT, "before the array→bytes");
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}]",
                         &ctx, &ch), ZC_EFORMAT, "after the array→bytes");
    CHECK_ERR(chain_from("[{\"name\":\"sharding_indexed\",\"configuration\":{}}]", &ctx, &ch),
              ZC_EUNSUPPORTED, "sharding_indexed");
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"name\":\"no.such\"}]", &ctx, &ch),
              ZC_EUNSUPPORTED, "no.such");
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"id\":\"nosuch\"}]", &ctx, &ch),
              ZC_EUNSUPPORTED, "nosuch");
    CHECK_ERR(chain_from("[\"bytes\"]", &ctx, &ch), ZC_EFORMAT, "codecs[0]");
    CHECK_ERR(chain_from("[{\"configuration\":{}}]", &ctx, &ch), ZC_EFORMAT, "codecs[0]");
    CHECK_ERR(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":[0,0]}},"
                         " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", &ctx, &ch),
              ZC_EFORMAT, "'order'");
    CHECK_ERR(chain_from("[{\"name\":\"bytes\"}]", &ctx, &ch), ZC_EFORMAT, "endian");
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"id\":\"delta\",\"dtype\":\"bogus\"}]",
                         &ctx, &ch), ZC_EFORMAT, "'dtype'");
    /* a v2 filter whose elements do not tile the chunk: 48 bytes of <i8? no: 48 is fine; 12-byte chunk of <i8 */
    int64_t s3[1] = {3};
    codec_ctx c3 = chunk_ctx(2, ZC_INT32, 1, s3);
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"id\":\"delta\",\"dtype\":\"<i8\"}]",
                         &c3, &ch), ZC_EFORMAT, "whole number");
    /* ctx that does not match its shape */
    codec_ctx bad = ctx;
    bad.nbytes = 47;
    CHECK_ERR(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", &bad, &ch), ZC_EINVAL, NULL);
    codec_chain_free(NULL);
}

/* ------------------------------------------------------------ failures, threads */

TEST(chain_alloc_failures)
{
    register_test_codecs();
    int64_t shape[2] = {16, 8};
    codec_ctx ctx = chunk_ctx(3, ZC_INT16, 2, shape);
    const char *list = "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},"
                       " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
                       " {\"name\":\"test.xor\",\"configuration\":{\"key\":3}}, {\"name\":\"test.hdr\"}]";
    int16_t a[128], b[128];
    for (int i = 0; i < 128; i++) a[i] = (int16_t)(i * 31);
    json_t *j = json_loads(list, 0, NULL);
    size_t base = zc__alloc_current();
    int ok = 0;
    for (long n = 1; n < 100 && !ok; n++) {
        codec_chain *ch = NULL;
        zc_buf e = {0};
        zc_test_fail_alloc(n, 0);
        int rc = codec_chain_create(j, &ctx, &ch);
        if (rc == 0) rc = codec_chain_encode(ch, a, sizeof a, &e);
        if (rc == 0) rc = codec_chain_decode(ch, e.data, e.size, b, sizeof b);
        long hit = zc_test_fail_alloc(0, 0);
        if (rc == 0) {
            CHECK(hit == 0 && !memcmp(a, b, sizeof a));
            ok = 1;
        } else {
            CHECK(rc == ZC_ENOMEM);
        }
        buf_free(&e);
        codec_chain_free(ch);
        CHECK(zc__alloc_current() == base);
    }
    CHECK(ok);
    json_decref(j);
}

typedef struct {
    const codec_chain *ch;
    const zc_buf *enc;
    const int32_t *want;
    int bad;
} thread_arg;

static void *decode_many(void *p)
{
    thread_arg *t = p;
    int32_t out[600];
    for (int k = 0; k < 200; k++) {
        if (codec_chain_decode(t->ch, t->enc->data, t->enc->size, out, sizeof out) != 0 ||
            memcmp(out, t->want, sizeof out))
            t->bad++;
    }
    return NULL;
}

TEST(chain_shared_between_threads)
{
    register_test_codecs();
    int64_t shape[2] = {20, 30};
    codec_ctx ctx = chunk_ctx(3, ZC_INT32, 2, shape);
    codec_chain *ch;
    CHECK_OK(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},"
                        " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
                        " {\"name\":\"test.hdr\"}]", &ctx, &ch));
    int32_t a[600];
    for (int i = 0; i < 600; i++) a[i] = i * 7 - 1000;
    zc_buf e = {0};
    CHECK_OK(codec_chain_encode(ch, a, sizeof a, &e));
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){ch, &e, a, 0};
        pthread_create(&th[i], NULL, decode_many, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].bad == 0);
    }
    buf_free(&e);
    codec_chain_free(ch);
}

/* Random stored bytes of random lengths through chains with filters: every
 * call returns 0 or a negative code, never touches memory it should not
 * (run under ASan), and a success gives exactly nbytes. */
TEST(chain_random_garbage)
{
    register_test_codecs();
    int64_t shape[2] = {6, 10};
    codec_ctx f8 = chunk_ctx(2, ZC_FLOAT64, 2, shape), i2 = chunk_ctx(2, ZC_INT16, 2, shape);
    struct {
        const char *list;
        codec_ctx *ctx;
        size_t stored; /* size of a valid stored chunk */
    } chains[] = {
        {"[{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}}, {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
         " {\"id\":\"fixedscaleoffset\",\"offset\":3,\"scale\":10,\"dtype\":\">f8\",\"astype\":\"|u1\"}, {\"id\":\"shuffle\",\"elementsize\":4},"
         " {\"name\":\"test.hdr\"}]", &f8, 68},
        {"[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"id\":\"delta\",\"dtype\":\"<i2\",\"astype\":\"<i8\"},"
         " {\"id\":\"test_xor\",\"key\":1}]", &i2, 480},
        {"[{\"name\":\"numcodecs.astype\",\"configuration\":{\"encode_dtype\":\"float32\",\"decode_dtype\":\"int16\"}},"
         " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}, {\"name\":\"test.pad\",\"configuration\":{\"n\":2}}]", &i2, 242},
    };
    unsigned char buf[2048], out[480];
    uint64_t r = 12345;
    for (size_t c = 0; c < 3; c++) {
        codec_chain *ch;
        CHECK_OK(chain_from(chains[c].list, chains[c].ctx, &ch));
        if (!ch) continue;
        int ok = 0;
        for (int k = 0; k < 3000; k++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            size_t n = (size_t)(r >> 33) % sizeof buf;
            if (k % 3 == 0) n = chains[c].stored + (k % 2 ? 0 : (size_t)(r >> 40) % 3); /* plausible */
            for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(r >> (i % 56));
            if (c == 0 && n >= 8) { uint64_t len = n - 8; memcpy(buf, &len, 8); }
            int rc = codec_chain_decode(ch, buf, n, out, chains[c].ctx->nbytes);
            CHECK(rc == 0 || rc == ZC_ECORRUPT);
            ok += rc == 0;
        }
        CHECK(ok > 0); /* the plausible sizes decode */
        codec_chain_free(ch);
    }
}

/* ------------------------------------------------------------ with a real compressor */

TEST(chain_with_zstd)
{
    const codec_type *t;
    int rc = codec_find("zstd", 3, &t); /* libzstd is a build dependency: no skip */
    CHECK_OK(rc);
    if (rc) return;
    int64_t shape[3] = {8, 16, 12};
    codec_ctx ctx = chunk_ctx(3, ZC_FLOAT64, 3, shape);
    double *a = malloc(ctx.nbytes), *b = malloc(ctx.nbytes);
    for (size_t i = 0; i < ctx.nbytes / 8; i++) a[i] = (double)(i % 97) * 0.25;
    codec_chain *ch;
    zc_buf e = {0};
    CHECK_OK(chain_from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}, {\"name\":\"zstd\",\"configuration\":{\"level\":3}}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, ctx.nbytes, &e));
    CHECK(e.size < ctx.nbytes);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, ctx.nbytes)); /* warm up the thread's context */
    size_t before = zc__alloc_current();
    zc__alloc_reset_peak();
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, ctx.nbytes));
    CHECK(zc__alloc_peak() - before < ctx.nbytes); /* no full-size scratch: straight into dst */
    CHECK(!memcmp(a, b, ctx.nbytes));
    CHECK_ERR(codec_chain_decode(ch, e.data, e.size - 1, b, ctx.nbytes), ZC_ECORRUPT, NULL);
    codec_chain_free(ch);
    /* v3 transpose + big endian + zstd, and the v2 spelling with F order and a filter */
    CHECK_OK(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,1,0]}},"
                        " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}, {\"name\":\"zstd\",\"configuration\":{\"level\":1}}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, ctx.nbytes, &e));
    memset(b, 0, ctx.nbytes);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, ctx.nbytes));
    CHECK(!memcmp(a, b, ctx.nbytes));
    codec_chain_free(ch);
    ctx.zarr_format = 2;
    CHECK_OK(chain_from("[{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}},"
                        " {\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                        " {\"id\":\"shuffle\",\"elementsize\":8}, {\"id\":\"zstd\",\"level\":1}]",
                        &ctx, &ch));
    CHECK_OK(codec_chain_encode(ch, a, ctx.nbytes, &e));
    memset(b, 0, ctx.nbytes);
    CHECK_OK(codec_chain_decode(ch, e.data, e.size, b, ctx.nbytes));
    CHECK(!memcmp(a, b, ctx.nbytes));
    codec_chain_free(ch);
    buf_free(&e);
    free(a);
    free(b);
}
