/* tests/test_codec_compress.c — bytes→bytes compressors and checksums:
 * numcodecs fixtures, round trips in both spellings, to_json, spec strings,
 * and hostile input (truncated, flipped, oversized, bad checksums, bad config).
 * Every codec is created through the registry (codec_create). */
#define _GNU_SOURCE /* nftw, mkdtemp */
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <unistd.h>
#include <stdint.h>
#include <zstd.h>

#include "codec/codec.h"
#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "harness.h"
#include "npyload.h"

uint32_t codec_crc32c_sw(uint32_t crc, const void *p, size_t n); /* test hook, crc32c.c */

/* ------------------------------------------------------------ helpers */

static codec_ctx make_ctx(int zarr_format, size_t itemsize)
{
    codec_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.zarr_format = zarr_format;
    ctx.dtype.type = itemsize == 1 ? ZC_UINT8 : itemsize == 2 ? ZC_INT16 : itemsize == 8 ? ZC_INT64 : ZC_INT32;
    ctx.dtype.size = itemsize;
    ctx.dtype.endian = itemsize == 1 ? '|' : '<';
    ctx.ndim = 1;
    return ctx;
}

/* Create from a JSON text; returns the status. */
static int make_codec(const char *json, int zarr_format, size_t itemsize, codec *c)
{
    json_error_t e;
    json_t *j = json_loads(json, 0, &e);
    if (!j) {
        fprintf(stderr, "bad test JSON %s: %s\n", json, e.text);
        return ZC_EINVAL;
    }
    codec_ctx ctx = make_ctx(zarr_format, itemsize);
    int rc = codec_create(j, &ctx, c);
    json_decref(j);
    return rc;
}

/* Decode into a buffer of exactly `cap` bytes (so ASan sees any overrun). */
static int decode_exact(codec *c, const void *src, size_t n, size_t cap, unsigned char **out, size_t *written)
{
    *out = malloc(cap ? cap : 1);
    *written = (size_t)-1;
    return c->type->decode(c->state, src, n, *out, cap, written);
}

/* Deterministic test data: a slowly varying int32 ramp with some noise, so
 * that it compresses but not trivially. */
static unsigned char *make_data(size_t n, uint32_t seed)
{
    unsigned char *d = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345;
        d[i] = (i % 4 == 0) ? (unsigned char)(i / 64) : (i % 4 == 1) ? (unsigned char)((x >> 16) & 3) : 0;
    }
    return d;
}

/* Item size from a NumPy descr ("<i4", "|S3", "<M8[ns]"). */
static size_t descr_itemsize(const char *descr)
{
    const char *p = descr;
    while (*p && (*p < '0' || *p > '9')) p++;
    size_t s = (size_t)atoi(p);
    return s ? s : 1;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* Decode every codec.MM/encoded.NN.dat of a numcodecs fixture directory with
 * its config (v2), compare with array.NN.npy, check a one-byte-smaller
 * capacity is refused, and round-trip the array through the same config.
 * Returns the number of encodings decoded. */
static int run_fixtures(const char *name)
{
    int decoded = 0;
    char path[512];
    for (int m = 0; m < 100; m++) {
        snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/config.json", ZC_TEST_DATA, name, m);
        if (!file_exists(path)) break;
        json_error_t e;
        json_t *cfg = json_load_file(path, 0, &e);
        CHECK(cfg != NULL);
        if (!cfg) continue;
        for (int k = 0; k < 100; k++) {
            snprintf(path, sizeof path, "%s/numcodecs/%s/array.%02d.npy", ZC_TEST_DATA, name, k);
            if (!file_exists(path)) break;
            npy_array a;
            CHECK(npy_load(path, &a) == 0);
            snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/encoded.%02d.dat", ZC_TEST_DATA, name, m, k);
            size_t n;
            unsigned char *enc = load_file(path, &n);
            if (!enc) {
                npy_free(&a);
                continue;
            }
            codec_ctx ctx = make_ctx(2, descr_itemsize(a.descr));
            codec c;
            CHECK_OK(codec_create(cfg, &ctx, &c));
            if (!c.type) {
                free(enc);
                npy_free(&a);
                continue;
            }
            unsigned char *out;
            size_t w;
            int rc = decode_exact(&c, enc, n, a.nbytes, &out, &w);
            CHECK_OK(rc);
            if (rc == 0) {
                CHECK(w == a.nbytes && !memcmp(out, a.data, a.nbytes));
                if (w != a.nbytes || memcmp(out, a.data, a.nbytes))
                    fprintf(stderr, "  mismatch: %s\n", path);
                decoded++;
            }
            free(out);
            if (c.type->decoded_size) {
                size_t ds = 0;
                bool known = false;
                CHECK_OK(c.type->decoded_size(c.state, enc, n, &ds, &known));
                CHECK(!known || ds == a.nbytes);
            }
            /* one byte less room than the data needs: refused, never overrun */
            rc = decode_exact(&c, enc, n, a.nbytes - 1, &out, &w);
            CHECK(rc == ZC_ECORRUPT);
            free(out);
            /* re-encode with the same configuration and decode again */
            zc_buf b = {0};
            CHECK_OK(c.type->encode(c.state, a.data, a.nbytes, &b));
            rc = decode_exact(&c, b.data, b.size, a.nbytes, &out, &w);
            CHECK_OK(rc);
            CHECK(rc == 0 && w == a.nbytes && !memcmp(out, a.data, a.nbytes));
            free(out);
            buf_free(&b);
            codec_destroy(&c);
            free(enc);
            npy_free(&a);
        }
        json_decref(cfg);
    }
    return decoded;
}

/* ------------------------------------------------------------ fixtures */

TEST(fixtures_blosc) { CHECK(run_fixtures("blosc") == 13 * 13); }
TEST(fixtures_zstd) { CHECK(run_fixtures("zstd") == 10 * 13); }
TEST(fixtures_lz4) { CHECK(run_fixtures("lz4") == 7 * 13); }
TEST(fixtures_zlib) { CHECK(run_fixtures("zlib") == 6 * 13); }
TEST(fixtures_gzip) { CHECK(run_fixtures("gzip") == 6 * 13); }
TEST(fixtures_bz2) { CHECK(run_fixtures("bz2") == 4 * 13); }
TEST(fixtures_crc32c) { CHECK(run_fixtures("crc32c") == 13); }
TEST(fixtures_adler32) { CHECK(run_fixtures("adler32") == 13); }
TEST(fixtures_crc32) { CHECK(run_fixtures("crc32") == 13); }

/* Every compressor/checksum fixture directory is covered above; lzma is the
 * one left out (liblzma is not a dependency). */
TEST(fixtures_all_covered)
{
    const char *handled[] = {"blosc", "zstd", "lz4", "zlib", "gzip", "bz2", "crc32c", "adler32", "crc32"};
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) {
        const codec_type *t;
        CHECK_OK(codec_find(handled[i], 2, &t));
    }
    printf("note: numcodecs 'lzma' fixtures are skipped (no lzma codec: liblzma is not a dependency)\n");
}

/* ------------------------------------------------------------ round trips */

static const struct {
    const char *v3, *v2;
} configs[] = {
    {"{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}", "{\"id\":\"zstd\",\"level\":3}"},
    {"{\"name\":\"zstd\",\"configuration\":{\"level\":-5,\"checksum\":true}}",
     "{\"id\":\"zstd\",\"level\":19,\"checksum\":true}"},
    {"{\"name\":\"gzip\",\"configuration\":{\"level\":5}}", "{\"id\":\"gzip\",\"level\":9}"},
    {"{\"name\":\"gzip\",\"configuration\":{\"level\":0}}", "{\"id\":\"gzip\",\"level\":-1}"},
    {"{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}}", "{\"id\":\"zlib\",\"level\":0}"},
    {"{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":9}}", "{\"id\":\"bz2\",\"level\":1}"},
    {"{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}", "{\"id\":\"lz4\",\"acceleration\":50}"},
    {"{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"zstd\",\"clevel\":5,"
     "\"shuffle\":\"shuffle\",\"blocksize\":0}}",
     "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}"},
    {"{\"name\":\"blosc\",\"configuration\":{\"typesize\":2,\"cname\":\"blosclz\",\"clevel\":9,"
     "\"shuffle\":\"bitshuffle\",\"blocksize\":4096}}",
     "{\"id\":\"blosc\",\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":-1,\"blocksize\":256}"},
    {"{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4hc\",\"clevel\":0,"
     "\"shuffle\":\"noshuffle\",\"blocksize\":0}}",
     "{\"id\":\"blosc\",\"cname\":\"snappy\",\"clevel\":3,\"shuffle\":2,\"blocksize\":0}"},
    {"{\"name\":\"crc32c\"}", "{\"id\":\"crc32c\"}"},
    {"{\"name\":\"numcodecs.crc32\",\"configuration\":{\"location\":\"start\"}}", "{\"id\":\"crc32\"}"},
    {"{\"name\":\"numcodecs.adler32\",\"configuration\":{\"location\":\"end\"}}",
     "{\"id\":\"adler32\",\"location\":\"end\"}"},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

static void round_trip(const char *json, int zarr_format, size_t n)
{
    codec c;
    CHECK_OK(make_codec(json, zarr_format, 4, &c));
    if (!c.type) return;
    unsigned char *data = make_data(n, (uint32_t)n);
    zc_buf b = {0};
    CHECK_OK(buf_append(&b, "prefix", 6)); /* encode appends */
    CHECK_OK(c.type->encode(c.state, data, n, &b));
    CHECK(b.size > 6 && !memcmp(b.data, "prefix", 6));
    unsigned char *out;
    size_t w;
    int rc = decode_exact(&c, b.data + 6, b.size - 6, n, &out, &w);
    CHECK_OK(rc);
    CHECK(rc == 0 && w == n && (n == 0 || !memcmp(out, data, n)));
    if (rc || w != n) fprintf(stderr, "  round trip failed: %s (v%d, %zu bytes)\n", json, zarr_format, n);
    free(out);
    if (c.type->decoded_size) {
        size_t ds = 0;
        bool known = false;
        CHECK_OK(c.type->decoded_size(c.state, b.data + 6, b.size - 6, &ds, &known));
        CHECK(known && ds == n);
    }
    /* more room than needed is fine: the exact size comes back */
    rc = decode_exact(&c, b.data + 6, b.size - 6, n + 100, &out, &w);
    CHECK(rc == 0 && w == n);
    free(out);
    buf_free(&b);
    free(data);
    codec_destroy(&c);
}

TEST(round_trip_v3)
{
    const size_t sizes[] = {0, 1, 7, 1000, 65536 + 13, 1 << 20};
    for (size_t i = 0; i < NCONFIGS; i++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) round_trip(configs[i].v3, 3, sizes[s]);
}

TEST(round_trip_v2)
{
    const size_t sizes[] = {0, 1, 7, 1000, 65536 + 13, 1 << 20};
    for (size_t i = 0; i < NCONFIGS; i++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) round_trip(configs[i].v2, 2, sizes[s]);
}

/* Compression actually compresses (guards against a codec silently storing). */
TEST(compressors_compress)
{
    const size_t n = 1 << 20;
    unsigned char *data = make_data(n, 1);
    for (size_t i = 0; i < NCONFIGS; i++) {
        if (strstr(configs[i].v3, "crc32") || strstr(configs[i].v3, "adler32") ||
            strstr(configs[i].v3, "\"clevel\":0") || strstr(configs[i].v3, "\"level\":0"))
            continue;
        codec c;
        CHECK_OK(make_codec(configs[i].v3, 3, 4, &c));
        zc_buf b = {0};
        CHECK_OK(c.type->encode(c.state, data, n, &b));
        CHECK(b.size < n / 2);
        buf_free(&b);
        codec_destroy(&c);
    }
    free(data);
}

/* ------------------------------------------------------------ to_json */

static void check_json(const char *in, int in_format, size_t itemsize, int out_format, const char *want)
{
    codec c;
    CHECK_OK(make_codec(in, in_format, itemsize, &c));
    if (!c.type) return;
    json_t *got = c.type->to_json(c.state, out_format);
    json_t *w = json_loads(want, 0, NULL);
    CHECK(got && w && json_equal(got, w));
    if (!got || !w || !json_equal(got, w)) {
        char *s = got ? json_dumps(got, JSON_COMPACT) : NULL;
        fprintf(stderr, "  to_json(%s, v%d) = %s, want %s\n", in, out_format, s ? s : "NULL", want);
        free(s);
    }
    json_decref(got);
    json_decref(w);
    codec_destroy(&c);
}

TEST(to_json_spellings)
{
    /* each config written back in its own spelling is unchanged */
    for (size_t i = 0; i < NCONFIGS; i++) {
        check_json(configs[i].v3, 3, 4, 3, configs[i].v3);
        check_json(configs[i].v2, 2, 4, 2, configs[i].v2);
    }
    /* defaults when the configuration is absent */
    check_json("{\"name\":\"zstd\"}", 3, 4, 3, "{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":false}}");
    check_json("{\"id\":\"zstd\"}", 2, 4, 2, "{\"id\":\"zstd\",\"level\":1}");
    check_json("{\"id\":\"gzip\"}", 2, 4, 2, "{\"id\":\"gzip\",\"level\":1}");
    check_json("{\"name\":\"gzip\"}", 3, 4, 3, "{\"name\":\"gzip\",\"configuration\":{\"level\":5}}");
    check_json("{\"id\":\"lz4\"}", 2, 4, 2, "{\"id\":\"lz4\",\"acceleration\":1}");
    check_json("{\"id\":\"bz2\"}", 2, 4, 2, "{\"id\":\"bz2\",\"level\":1}");
    /* blosc typesize comes from the dtype; AUTOSHUFFLE resolves by it in v3 */
    check_json("{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":-1,\"blocksize\":0}", 2, 1, 3,
               "{\"name\":\"blosc\",\"configuration\":{\"typesize\":1,\"cname\":\"lz4\",\"clevel\":5,"
               "\"shuffle\":\"bitshuffle\",\"blocksize\":0}}");
    check_json("{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":-1,\"blocksize\":0}", 2, 8, 3,
               "{\"name\":\"blosc\",\"configuration\":{\"typesize\":8,\"cname\":\"lz4\",\"clevel\":5,"
               "\"shuffle\":\"shuffle\",\"blocksize\":0}}");
    /* v3 → v2: numcodecs spelling, no typesize, zstd checksum only when set */
    check_json(configs[7].v3, 3, 4, 2,
               "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}");
    check_json(configs[0].v3, 3, 4, 2, "{\"id\":\"zstd\",\"level\":3}");
    check_json(configs[1].v3, 3, 4, 2, "{\"id\":\"zstd\",\"level\":-5,\"checksum\":true}");
    check_json("{\"id\":\"zlib\",\"level\":4}", 2, 4, 3, "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":4}}");
    check_json("{\"id\":\"crc32c\"}", 2, 4, 3, "{\"name\":\"crc32c\"}");
    check_json("{\"name\":\"crc32c\"}", 3, 4, 2, "{\"id\":\"crc32c\"}");
    /* the registry finds each by both names */
    const char *pairs[][2] = {{"zstd", "zstd"}, {"gzip", "gzip"}, {"numcodecs.zlib", "zlib"},
                              {"blosc", "blosc"}, {"numcodecs.lz4", "lz4"}, {"numcodecs.bz2", "bz2"},
                              {"crc32c", "crc32c"}, {"numcodecs.crc32", "crc32"},
                              {"numcodecs.adler32", "adler32"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const codec_type *t3 = NULL, *t2 = NULL;
        CHECK_OK(codec_find(pairs[i][0], 3, &t3));
        CHECK_OK(codec_find(pairs[i][1], 2, &t2));
        CHECK(t3 && t3 == t2 && t3->kind == CODEC_B2B);
    }
}

/* ------------------------------------------------------------ spec strings */

static void check_spec(const char *spec, int fmt, size_t typesize, const char *want)
{
    json_t *got = NULL;
    CHECK_OK(codec_spec_parse(spec, fmt, typesize, &got));
    json_t *w = json_loads(want, 0, NULL);
    CHECK(got && w && json_equal(got, w));
    if (!got || !w || !json_equal(got, w)) {
        char *s = got ? json_dumps(got, JSON_COMPACT) : NULL;
        fprintf(stderr, "  spec '%s' v%d = %s, want %s\n", spec, fmt, s ? s : "NULL", want);
        free(s);
    }
    /* every codec object it gives can be created and round-trips data */
    json_t *list = fmt == 3 ? got : json_object_get(got, "compressor");
    size_t cnt = json_is_array(list) ? json_array_size(list) : json_is_object(list) ? 1 : 0;
    for (size_t i = 0; i < cnt; i++) {
        json_t *o = json_is_array(list) ? json_array_get(list, i) : list;
        codec_ctx ctx = make_ctx(fmt, typesize);
        codec c;
        CHECK_OK(codec_create(o, &ctx, &c));
        if (!c.type) continue;
        unsigned char *data = make_data(5000, 3);
        zc_buf b = {0};
        CHECK_OK(c.type->encode(c.state, data, 5000, &b));
        unsigned char *out;
        size_t wr;
        CHECK_OK(decode_exact(&c, b.data, b.size, 5000, &out, &wr));
        CHECK(wr == 5000 && !memcmp(out, data, 5000));
        free(out);
        free(data);
        buf_free(&b);
        codec_destroy(&c);
    }
    json_decref(got);
    json_decref(w);
}

TEST(spec_strings)
{
    check_spec("zstd:3", 3, 4, "[{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]");
    check_spec("zstd", 3, 4, "[{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}]");
    check_spec("zstd:-3", 2, 4, "{\"compressor\":{\"id\":\"zstd\",\"level\":-3},\"filters\":null}");
    check_spec("none", 3, 4, "[]");
    check_spec("none", 2, 4, "{\"compressor\":null,\"filters\":null}");
    check_spec("none,crc32c", 3, 4, "[{\"name\":\"crc32c\"}]");
    check_spec("gzip,crc32c", 3, 4, "[{\"name\":\"gzip\",\"configuration\":{\"level\":5}},{\"name\":\"crc32c\"}]");
    check_spec("gzip:9", 2, 4, "{\"compressor\":{\"id\":\"gzip\",\"level\":9},\"filters\":null}");
    check_spec("zlib:1", 3, 4, "[{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}}]");
    check_spec("zlib", 2, 4, "{\"compressor\":{\"id\":\"zlib\",\"level\":5},\"filters\":null}");
    check_spec("bz2:2", 3, 4, "[{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":2}}]");
    check_spec("bz2", 2, 4, "{\"compressor\":{\"id\":\"bz2\",\"level\":9},\"filters\":null}");
    check_spec("lz4", 3, 4, "[{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}]");
    check_spec("lz4:8", 2, 4, "{\"compressor\":{\"id\":\"lz4\",\"acceleration\":8},\"filters\":null}");
    check_spec("blosc", 3, 4,
               "[{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":5,"
               "\"shuffle\":\"shuffle\",\"blocksize\":0}}]");
    check_spec("blosc:zstd:7:bitshuffle,crc32c", 3, 8,
               "[{\"name\":\"blosc\",\"configuration\":{\"typesize\":8,\"cname\":\"zstd\",\"clevel\":7,"
               "\"shuffle\":\"bitshuffle\",\"blocksize\":0}},{\"name\":\"crc32c\"}]");
    check_spec("blosc:lz4:5:auto", 3, 1,
               "[{\"name\":\"blosc\",\"configuration\":{\"typesize\":1,\"cname\":\"lz4\",\"clevel\":5,"
               "\"shuffle\":\"bitshuffle\",\"blocksize\":0}}]");
    check_spec("blosc:zlib:1:noshuffle", 2, 4,
               "{\"compressor\":{\"id\":\"blosc\",\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":0,"
               "\"blocksize\":0},\"filters\":null}");
    check_spec("blosc:lz4:5:auto", 2, 2,
               "{\"compressor\":{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":-1,"
               "\"blocksize\":0},\"filters\":null}");
    /* JSON passes through untouched */
    check_spec("[{\"name\":\"gzip\",\"configuration\":{\"level\":2}}]", 3, 4,
               "[{\"name\":\"gzip\",\"configuration\":{\"level\":2}}]");
    check_spec("{\"compressor\":{\"id\":\"zstd\",\"level\":4},\"filters\":null}", 2, 4,
               "{\"compressor\":{\"id\":\"zstd\",\"level\":4},\"filters\":null}");
}

TEST(spec_errors)
{
    json_t *j = NULL;
    CHECK_ERR(codec_spec_parse("snappy:3", 3, 4, &j), ZC_EINVAL, "snappy:3");
    CHECK_ERR(codec_spec_parse("zstd:x", 3, 4, &j), ZC_EINVAL, "zstd:x");
    CHECK_ERR(codec_spec_parse("zstd:99", 3, 4, &j), ZC_EINVAL, "99");
    CHECK_ERR(codec_spec_parse("gzip:10", 2, 4, &j), ZC_EINVAL, "gzip:10");
    CHECK_ERR(codec_spec_parse("bz2:0", 2, 4, &j), ZC_EINVAL, "bz2:0");
    CHECK_ERR(codec_spec_parse("lz4:0", 3, 4, &j), ZC_EINVAL, "lz4:0");
    CHECK_ERR(codec_spec_parse("zstd:3:4", 3, 4, &j), ZC_EINVAL, "too many");
    CHECK_ERR(codec_spec_parse("none:1", 3, 4, &j), ZC_EINVAL, "too many");
    CHECK_ERR(codec_spec_parse("blosc:lzma", 3, 4, &j), ZC_EINVAL, "lzma");
    CHECK_ERR(codec_spec_parse("blosc:lz4:10", 3, 4, &j), ZC_EINVAL, "blosc:lz4:10");
    CHECK_ERR(codec_spec_parse("blosc:lz4:5:sideways", 3, 4, &j), ZC_EINVAL, "sideways");
    CHECK_ERR(codec_spec_parse("blosc:lz4:5:shuffle:9", 3, 4, &j), ZC_EINVAL, "too many");
    CHECK_ERR(codec_spec_parse("zstd,crc32c", 2, 4, &j), ZC_EINVAL, "v3");
    CHECK_ERR(codec_spec_parse("zstd,md5", 3, 4, &j), ZC_EINVAL, "md5");
    CHECK_ERR(codec_spec_parse("", 3, 4, &j), ZC_EINVAL, NULL);
    CHECK_ERR(codec_spec_parse(":3", 3, 4, &j), ZC_EINVAL, NULL);
    CHECK_ERR(codec_spec_parse("[{\"name\":", 3, 4, &j), ZC_EINVAL, "JSON");
    CHECK_ERR(codec_spec_parse("zstd", 4, 4, &j), ZC_EINVAL, NULL);
    CHECK(j == NULL);
}

/* ------------------------------------------------------------ bad input */

static const char *const bad_input_configs[] = {
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}}",
    "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}",
    "{\"name\":\"gzip\",\"configuration\":{\"level\":5}}",
    "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":5}}",
    "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}",
    "{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}",
    "{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":\"bitshuffle\",\"blocksize\":0}}",
    "{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"zlib\",\"clevel\":0,\"shuffle\":\"noshuffle\",\"blocksize\":0}}",
    "{\"name\":\"crc32c\"}",
    "{\"name\":\"numcodecs.crc32\"}",
    "{\"name\":\"numcodecs.adler32\"}",
};
#define NBAD (sizeof bad_input_configs / sizeof bad_input_configs[0])

/* Codecs whose format carries a checksum over all the data: any successful
 * decode of damaged input must still give the original bytes. */
static bool has_checksum(const char *cfg)
{
    return strstr(cfg, "\"checksum\":true") || strstr(cfg, "\"gzip\"") || strstr(cfg, "numcodecs.zlib") ||
           strstr(cfg, "numcodecs.bz2") || strstr(cfg, "crc32") || strstr(cfg, "adler32");
}

static void encode_sample(const char *cfg, size_t n, codec *c, unsigned char **data, zc_buf *b)
{
    CHECK_OK(make_codec(cfg, 3, 4, c));
    *data = make_data(n, 7);
    memset(b, 0, sizeof *b);
    if (c->type) CHECK_OK(c->type->encode(c->state, *data, n, b));
}

TEST(bad_truncated)
{
    const size_t n = 20000;
    for (size_t i = 0; i < NBAD; i++) {
        codec c;
        unsigned char *data;
        zc_buf b;
        encode_sample(bad_input_configs[i], n, &c, &data, &b);
        if (!c.type) continue;
        const size_t cuts[] = {0, 1, 3, 4, 15, 16, b.size / 2, b.size - 5, b.size - 4, b.size - 1};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            if (cuts[k] >= b.size) continue;
            unsigned char *out;
            size_t w;
            int rc = decode_exact(&c, b.data, cuts[k], n, &out, &w);
            CHECK(rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM);
            if (rc != ZC_ECORRUPT && rc != ZC_ECHECKSUM)
                fprintf(stderr, "  %s cut to %zu: %s\n", bad_input_configs[i], cuts[k], zc_errname(rc));
            free(out);
        }
        buf_free(&b);
        free(data);
        codec_destroy(&c);
    }
}

TEST(bad_flipped_bytes)
{
    const size_t n = 3000;
    for (size_t i = 0; i < NBAD; i++) {
        codec c;
        unsigned char *data;
        zc_buf b;
        encode_sample(bad_input_configs[i], n, &c, &data, &b);
        if (!c.type) continue;
        unsigned char *copy = malloc(b.size);
        int failures = 0;
        for (size_t pos = 0; pos < b.size; pos += 1 + pos / 64) {
            for (int bit = 0; bit < 8; bit += 3) {
                memcpy(copy, b.data, b.size);
                copy[pos] ^= (unsigned char)(1u << bit);
                unsigned char *out;
                size_t w;
                int rc = decode_exact(&c, copy, b.size, n, &out, &w);
                if (rc == 0) {
                    CHECK(w <= n);
                    if (has_checksum(bad_input_configs[i])) {
                        CHECK(w == n && !memcmp(out, data, n));
                        if (w != n || memcmp(out, data, n))
                            fprintf(stderr, "  %s: flip at %zu bit %d gave other data\n",
                                    bad_input_configs[i], pos, bit);
                    }
                } else {
                    CHECK(rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM || rc == ZC_EUNSUPPORTED);
                    CHECK(zc_errmsg()[0] != 0);
                    failures++;
                }
                free(out);
            }
        }
        CHECK(failures > 0);
        free(copy);
        buf_free(&b);
        free(data);
        codec_destroy(&c);
    }
}

/* Each codec names itself and the problem for data that would not fit. */
TEST(bad_declared_size_above_cap)
{
    const size_t n = 5000;
    const char *names[] = {"zstd", "zstd", "gzip", "zlib", "bz2", "lz4", "blosc", "blosc", "blosc",
                           "crc32c", "crc32", "adler32"};
    for (size_t i = 0; i < NBAD; i++) {
        codec c;
        unsigned char *data;
        zc_buf b;
        encode_sample(bad_input_configs[i], n, &c, &data, &b);
        if (!c.type) continue;
        unsigned char *out;
        size_t w;
        CHECK_ERR(decode_exact(&c, b.data, b.size, n - 1, &out, &w), ZC_ECORRUPT, names[i]);
        CHECK(strstr(zc_errmsg(), "more than") != NULL);
        free(out);
        CHECK_ERR(decode_exact(&c, b.data, b.size, 0, &out, &w), ZC_ECORRUPT, names[i]);
        free(out);
        buf_free(&b);
        free(data);
        codec_destroy(&c);
    }
}

TEST(bad_header_sizes)
{
    const size_t n = 5000;
    codec c;
    unsigned char *data, *out;
    zc_buf b;
    size_t w;
    /* lz4: prefix claims 4 GiB */
    encode_sample(bad_input_configs[5], n, &c, &data, &b);
    codec_b2b_store_le32(b.data, 0xFFFFFFFFu);
    CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECORRUPT, "4294967295");
    free(out);
    /* lz4: prefix claims fewer bytes than the block holds */
    codec_b2b_store_le32(b.data, (uint32_t)n - 10);
    CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECORRUPT, "lz4");
    free(out);
    buf_free(&b);
    free(data);
    codec_destroy(&c);
    /* blosc: header nbytes raised past cap */
    encode_sample(bad_input_configs[6], n, &c, &data, &b);
    codec_b2b_store_le32(b.data + 4, 0x7FFF0000u);
    CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECORRUPT, "declares");
    free(out);
    bool known = true;
    size_t ds = 0;
    CHECK_OK(c.type->decoded_size(c.state, b.data, b.size, &ds, &known));
    CHECK(known && ds == 0x7FFF0000u);
    /* blosc: cbytes disagrees with the length given */
    codec_b2b_store_le32(b.data + 4, (uint32_t)n);
    codec_b2b_store_le32(b.data + 12, (uint32_t)b.size + 1);
    CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECORRUPT, "invalid header");
    free(out);
    CHECK_ERR(c.type->decoded_size(c.state, b.data, b.size, &ds, &known), ZC_ECORRUPT, "blosc");
    buf_free(&b);
    free(data);
    codec_destroy(&c);
    /* zstd: the frame header declares more than cap; and a frame without a
     * declared size is still bounded */
    encode_sample(bad_input_configs[1], n, &c, &data, &b);
    CHECK_ERR(decode_exact(&c, b.data, b.size, 100, &out, &w), ZC_ECORRUPT, "declares 5000");
    free(out);
    ZSTD_CCtx *z = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0);
    unsigned char frame[8192];
    ZSTD_outBuffer ob = {frame, sizeof frame, 0};
    ZSTD_inBuffer ib = {data, n, 0};
    CHECK(!ZSTD_isError(ZSTD_compressStream2(z, &ob, &ib, ZSTD_e_end)));
    ZSTD_freeCCtx(z);
    CHECK(ZSTD_getFrameContentSize(frame, ob.pos) == ZSTD_CONTENTSIZE_UNKNOWN);
    CHECK_ERR(decode_exact(&c, frame, ob.pos, n - 1, &out, &w), ZC_ECORRUPT, "more than");
    free(out);
    CHECK_OK(decode_exact(&c, frame, ob.pos, n, &out, &w));
    CHECK(w == n && !memcmp(out, data, n));
    free(out);
    CHECK_OK(c.type->decoded_size(c.state, frame, ob.pos, &ds, &known));
    CHECK(!known);
    /* two frames back to back: decodes both, size not known from one header */
    unsigned char two[2 * 8192];
    memcpy(two, b.data, b.size);
    memcpy(two + b.size, b.data, b.size);
    CHECK_OK(decode_exact(&c, two, 2 * b.size, 2 * n, &out, &w));
    CHECK(w == 2 * n && !memcmp(out, data, n) && !memcmp(out + n, data, n));
    free(out);
    CHECK_OK(c.type->decoded_size(c.state, two, 2 * b.size, &ds, &known));
    CHECK(!known);
    CHECK_ERR(decode_exact(&c, two, 2 * b.size, 2 * n - 1, &out, &w), ZC_ECORRUPT, "more than");
    free(out);
    buf_free(&b);
    free(data);
    codec_destroy(&c);
}

TEST(bad_checksums)
{
    const size_t n = 4000;
    codec c;
    unsigned char *data, *out;
    zc_buf b;
    size_t w;
    /* crc32c: stored checksum and data each damaged */
    encode_sample(bad_input_configs[9], n, &c, &data, &b);
    CHECK(b.size == n + 4 && !memcmp(b.data, data, n));
    CHECK(codec_b2b_load_le32(b.data + n) == codec_crc32c_update(0, data, n));
    b.data[n + 1] ^= 0x10;
    CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECHECKSUM, "crc32c");
    free(out);
    b.data[n + 1] ^= 0x10;
    b.data[17] ^= 1;
    CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECHECKSUM, "mismatch");
    free(out);
    CHECK_ERR(decode_exact(&c, b.data, 3, n, &out, &w), ZC_ECORRUPT, "crc32c");
    free(out);
    buf_free(&b);
    free(data);
    codec_destroy(&c);
    /* crc32 / adler32 (numcodecs): checksum first */
    for (int k = 10; k <= 11; k++) {
        encode_sample(bad_input_configs[k], n, &c, &data, &b);
        CHECK(b.size == n + 4 && !memcmp(b.data + 4, data, n));
        b.data[0] ^= 0x80;
        CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECHECKSUM, k == 10 ? "crc32" : "adler32");
        free(out);
        buf_free(&b);
        free(data);
        codec_destroy(&c);
    }
    /* zstd frame checksum, gzip CRC-32, zlib Adler-32: the stored sums */
    const struct {
        int cfg;
        long back; /* offset of a checksum byte from the end */
        const char *name;
    } sums[] = {{0, 1, "zstd"}, {2, 6, "gzip"}, {3, 2, "zlib"}};
    for (size_t k = 0; k < sizeof sums / sizeof sums[0]; k++) {
        encode_sample(bad_input_configs[sums[k].cfg], n, &c, &data, &b);
        b.data[b.size - (size_t)sums[k].back] ^= 0x04;
        CHECK_ERR(decode_exact(&c, b.data, b.size, n, &out, &w), ZC_ECHECKSUM, sums[k].name);
        free(out);
        buf_free(&b);
        free(data);
        codec_destroy(&c);
    }
}

TEST(unknown_codec_names)
{
    const codec_type *t;
    CHECK_ERR(codec_find("lzma9000", 3, &t), ZC_EUNSUPPORTED, "lzma9000");
    CHECK_ERR(codec_find("numcodecs.zlib", 2, &t), ZC_EUNSUPPORTED, "numcodecs.zlib"); /* v3 name is not a v2 id */
    CHECK_ERR(codec_find("zlib", 3, &t), ZC_EUNSUPPORTED, "zlib");
    codec c;
    CHECK_ERR(make_codec("{\"name\":\"bogus\",\"configuration\":{}}", 3, 4, &c), ZC_EUNSUPPORTED, "bogus");
    CHECK_ERR(make_codec("{\"id\":\"bogus2\"}", 2, 4, &c), ZC_EUNSUPPORTED, "bogus2");
}

TEST(bad_configs)
{
    codec c;
    CHECK_ERR(make_codec("{\"name\":\"zstd\",\"configuration\":{\"level\":\"x\"}}", 3, 4, &c), ZC_EFORMAT, "level");
    CHECK_ERR(make_codec("{\"name\":\"zstd\",\"configuration\":{\"checksum\":1}}", 3, 4, &c), ZC_EFORMAT, "checksum");
    CHECK_ERR(make_codec("{\"id\":\"gzip\",\"level\":12}", 2, 4, &c), ZC_EFORMAT, "level");
    CHECK_ERR(make_codec("{\"id\":\"zlib\",\"level\":1.5}", 2, 4, &c), ZC_EFORMAT, "level");
    CHECK_ERR(make_codec("{\"id\":\"bz2\",\"level\":0}", 2, 4, &c), ZC_EFORMAT, "bz2");
    CHECK_ERR(make_codec("{\"id\":\"lz4\",\"acceleration\":true}", 2, 4, &c), ZC_EFORMAT, "acceleration");
    CHECK_ERR(make_codec("{\"id\":\"blosc\",\"cname\":\"foo\"}", 2, 4, &c), ZC_EUNSUPPORTED, "foo");
    CHECK_ERR(make_codec("{\"id\":\"blosc\",\"shuffle\":3}", 2, 4, &c), ZC_EFORMAT, "shuffle");
    CHECK_ERR(make_codec("{\"id\":\"blosc\",\"clevel\":10}", 2, 4, &c), ZC_EFORMAT, "clevel");
    CHECK_ERR(make_codec("{\"name\":\"blosc\",\"configuration\":{\"shuffle\":\"sideways\"}}", 3, 4, &c),
              ZC_EFORMAT, "sideways");
    CHECK_ERR(make_codec("{\"name\":\"blosc\",\"configuration\":{\"shuffle\":1}}", 3, 4, &c), ZC_EFORMAT, "shuffle");
    CHECK_ERR(make_codec("{\"name\":\"blosc\",\"configuration\":{\"typesize\":0}}", 3, 4, &c), ZC_EFORMAT, "typesize");
    CHECK_ERR(make_codec("{\"name\":\"crc32c\",\"configuration\":{\"location\":\"start\"}}", 3, 4, &c),
              ZC_EFORMAT, "end");
    CHECK_ERR(make_codec("{\"id\":\"crc32\",\"location\":\"middle\"}", 2, 4, &c), ZC_EFORMAT, "middle");
    CHECK_ERR(make_codec("{\"name\":\"gzip\",\"configuration\":[1]}", 3, 4, &c), ZC_EFORMAT, "gzip");
    /* null means default */
    CHECK_OK(make_codec("{\"id\":\"blosc\",\"cname\":null,\"clevel\":null}", 2, 4, &c));
    codec_destroy(&c);
}

/* ------------------------------------------------------------ formats */

TEST(crc32c_values)
{
    CHECK(codec_crc32c_update(0, "123456789", 9) == 0xE3069283u);
    CHECK(codec_crc32c_sw(0, "123456789", 9) == 0xE3069283u);
    CHECK(codec_crc32c_update(0, "", 0) == 0);
    unsigned char buf[1100];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 131 + (i >> 3));
    for (size_t off = 0; off < 9; off++)
        for (size_t len = 0; len + off <= sizeof buf; len += 1 + len / 3) {
            uint32_t h = codec_crc32c_update(0, buf + off, len);
            CHECK(h == codec_crc32c_sw(0, buf + off, len));
            /* incremental = one shot */
            uint32_t part = codec_crc32c_update(codec_crc32c_update(0, buf + off, len / 2), buf + off + len / 2,
                                                len - len / 2);
            CHECK(part == h);
        }
    /* long inputs take the three-stream path */
    size_t big = 200000;
    unsigned char *d = make_data(big + 8, 5);
    for (size_t off = 0; off < 8; off += 3)
        for (size_t len = big - 40000; len <= big; len += 4099)
            CHECK(codec_crc32c_update(0, d + off, len) == codec_crc32c_sw(0, d + off, len));
    free(d);
}

/* Build a gzip member by hand with FEXTRA, FNAME, FCOMMENT and FHCRC fields,
 * then two members with zero padding: Python's gzip reads all of these. */
TEST(gzip_members_and_header_fields)
{
    const size_t n = 3000;
    codec c;
    unsigned char *data, *out;
    zc_buf b;
    size_t w;
    encode_sample(bad_input_configs[2], n, &c, &data, &b);
    CHECK(b.size > 18 && b.data[0] == 0x1f && b.data[1] == 0x8b);
    zc_buf m = {0};
    unsigned char hdr[10];
    memcpy(hdr, b.data, 10);
    hdr[3] = 4 | 8 | 16 | 2;
    CHECK_OK(buf_append(&m, hdr, 10));
    CHECK_OK(buf_append(&m, "\x03\x00xyz", 5));
    CHECK_OK(buf_append(&m, "name.bin", 9));
    CHECK_OK(buf_append(&m, "a comment", 10));
    CHECK_OK(buf_append(&m, "\x12\x34", 2));
    CHECK_OK(buf_append(&m, b.data + 10, b.size - 10));
    CHECK_OK(decode_exact(&c, m.data, m.size, n, &out, &w));
    CHECK(w == n && !memcmp(out, data, n));
    free(out);
    /* name field without its terminator: cut short */
    CHECK_ERR(decode_exact(&c, m.data, 10 + 5 + 4, n, &out, &w), ZC_ECORRUPT, "header");
    free(out);
    /* two members + zero padding */
    CHECK_OK(buf_append(&m, b.data, b.size));
    CHECK_OK(buf_append(&m, "\0\0\0", 3));
    CHECK_OK(decode_exact(&c, m.data, m.size, 2 * n, &out, &w));
    CHECK(w == 2 * n && !memcmp(out, data, n) && !memcmp(out + n, data, n));
    free(out);
    CHECK_ERR(decode_exact(&c, m.data, m.size, 2 * n - 1, &out, &w), ZC_ECORRUPT, "more than");
    free(out);
    /* trailing garbage that is not a member */
    CHECK_OK(buf_append(&m, "junk", 4));
    CHECK_ERR(decode_exact(&c, m.data, m.size, 2 * n, &out, &w), ZC_ECORRUPT, "magic");
    free(out);
    /* ISIZE disagrees */
    memcpy(m.data, b.data, b.size);
    m.data[b.size - 1] ^= 1;
    CHECK_ERR(decode_exact(&c, m.data, b.size, n, &out, &w), ZC_ECORRUPT, "length");
    free(out);
    buf_free(&m);
    buf_free(&b);
    free(data);
    codec_destroy(&c);
}

TEST(bz2_multiple_streams)
{
    const size_t n = 3000;
    codec c;
    unsigned char *data, *out;
    zc_buf b;
    size_t w;
    encode_sample(bad_input_configs[4], n, &c, &data, &b);
    CHECK(b.size > 4 && !memcmp(b.data, "BZh1", 4));
    zc_buf m = {0};
    CHECK_OK(buf_append(&m, b.data, b.size));
    CHECK_OK(buf_append(&m, b.data, b.size));
    CHECK_OK(decode_exact(&c, m.data, m.size, 2 * n, &out, &w));
    CHECK(w == 2 * n && !memcmp(out, data, n) && !memcmp(out + n, data, n));
    free(out);
    CHECK_OK(buf_append(&m, "xx", 2));
    CHECK_ERR(decode_exact(&c, m.data, m.size, 2 * n, &out, &w), ZC_ECORRUPT, "bz2");
    free(out);
    buf_free(&m);
    buf_free(&b);
    free(data);
    codec_destroy(&c);
}

TEST(zlib_header_checks)
{
    codec c;
    unsigned char *out;
    size_t w;
    CHECK_OK(make_codec("{\"id\":\"zlib\"}", 2, 4, &c));
    CHECK_ERR(decode_exact(&c, "\x78\x9d\x03\x00", 4, 10, &out, &w), ZC_ECORRUPT, "header");
    free(out);
    CHECK_ERR(decode_exact(&c, "\x78\xbb\x00\x00\x00\x00", 6, 10, &out, &w), ZC_ECORRUPT, "dictionary");
    free(out);
    /* the empty stream Python's zlib.compress(b"") gives */
    CHECK_OK(decode_exact(&c, "\x78\x9c\x03\x00\x00\x00\x00\x01", 8, 10, &out, &w));
    CHECK(w == 0);
    free(out);
    codec_destroy(&c);
}

/* ------------------------------------------------------------ concurrency */

typedef struct {
    codec *c;
    const unsigned char *enc;
    size_t n_enc;
    const unsigned char *data;
    size_t n;
    int bad;
} thread_job;

static void *decode_many(void *arg)
{
    thread_job *j = arg;
    unsigned char *out = malloc(j->n);
    for (int i = 0; i < 50; i++) {
        size_t w = 0;
        if (j->c->type->decode(j->c->state, j->enc, j->n_enc, out, j->n, &w) || w != j->n ||
            memcmp(out, j->data, j->n))
            j->bad++;
        zc_buf b = {0};
        if (j->c->type->encode(j->c->state, j->data, j->n, &b)) j->bad++;
        buf_free(&b);
    }
    free(out);
    return NULL;
}

/* One shared instance used from several threads at once, as zarr/ does. */
TEST(shared_instance_threads)
{
    const size_t n = 100000;
    for (size_t i = 0; i < NBAD; i++) {
        codec c;
        unsigned char *data;
        zc_buf b;
        encode_sample(bad_input_configs[i], n, &c, &data, &b);
        if (!c.type) continue;
        pthread_t th[4];
        thread_job jobs[4];
        for (int t = 0; t < 4; t++) {
            jobs[t] = (thread_job){&c, b.data, b.size, data, n, 0};
            CHECK(pthread_create(&th[t], NULL, decode_many, &jobs[t]) == 0);
        }
        for (int t = 0; t < 4; t++) {
            pthread_join(th[t], NULL);
            CHECK(jobs[t].bad == 0);
        }
        buf_free(&b);
        free(data);
        codec_destroy(&c);
    }
}

/* ------------------------------------------------------------ allocation failures */

TEST(alloc_failures)
{
    const size_t n = 50000;
    unsigned char *data = make_data(n, 9);
    for (size_t i = 0; i < NBAD; i++) {
        /* fail the 1st, 2nd, ... allocation until the whole round trip gets through */
        int injected = 0;
        bool done = false;
        for (long k = 1; k < 50 && !done; k++) {
            zc_test_fail_alloc(k, 0);
            codec c;
            int rc = make_codec(bad_input_configs[i], 3, 4, &c);
            zc_buf b = {0};
            if (rc == 0) rc = c.type->encode(c.state, data, n, &b);
            unsigned char *out = NULL;
            size_t w;
            if (rc == 0) {
                out = malloc(n);
                rc = c.type->decode(c.state, b.data, b.size, out, n, &w);
                CHECK(rc != 0 || (w == n && !memcmp(out, data, n)));
            }
            int failed = zc_test_fail_alloc(0, 0);
            CHECK(rc == 0 || rc == ZC_ENOMEM);
            CHECK(rc == 0 || failed == 1);
            injected += failed;
            free(out);
            buf_free(&b);
            if (c.type) codec_destroy(&c);
            done = rc == 0 && failed == 0;
        }
        CHECK(done && injected >= 2); /* state and output buffer at least */
    }
    free(data);
}

/* ------------------------------------------------------------ interop */

/* Codec objects as zarr-python wrote them in the zarrita fixtures (v3
 * zarr.json codecs, also nested in sharding; v2 .zarray compressors): each of
 * ours is created and written back identically. v2 zstd "checksum": false is
 * the one key we drop (numcodecs 0.11, zarr-python 2.13's, refuses it). */
static int spellings_checked;

static bool ours(const char *name)
{
    const char *mine[] = {"zstd", "gzip", "numcodecs.zlib", "blosc", "numcodecs.lz4", "numcodecs.bz2",
                          "crc32c", "numcodecs.crc32", "numcodecs.adler32", "zlib", "lz4", "bz2",
                          "crc32", "adler32"};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (!strcmp(name, mine[i])) return true;
    return false;
}

static void check_written_back(json_t *o, int fmt)
{
    const char *key = fmt == 3 ? "name" : "id";
    const char *name = json_string_value(json_object_get(o, key));
    if (!name || !ours(name)) return;
    codec_ctx ctx = make_ctx(fmt, 4);
    codec c;
    CHECK_OK(codec_create(o, &ctx, &c));
    if (!c.type) return;
    json_t *back = c.type->to_json(c.state, fmt);
    json_t *want = json_deep_copy(o);
    if (fmt == 2 && json_is_false(json_object_get(want, "checksum"))) json_object_del(want, "checksum");
    CHECK(back && json_equal(back, want));
    if (!back || !json_equal(back, want)) {
        char *a = json_dumps(o, JSON_COMPACT), *b = back ? json_dumps(back, JSON_COMPACT) : NULL;
        fprintf(stderr, "  fixture %s written back as %s\n", a, b ? b : "NULL");
        free(a);
        free(b);
    }
    spellings_checked++;
    json_decref(back);
    json_decref(want);
    codec_destroy(&c);
}

static void walk_json(json_t *j, int fmt)
{
    if (json_is_object(j)) {
        check_written_back(j, fmt);
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v) walk_json(v, fmt);
    } else if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) walk_json(v, fmt);
    }
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    int fmt = !strcmp(base, "zarr.json") ? 3 : !strcmp(base, ".zarray") ? 2 : 0;
    if (type != FTW_F || !fmt) return 0;
    json_t *j = json_load_file(path, 0, NULL);
    CHECK(j != NULL);
    if (fmt == 3) walk_json(json_object_get(j, "codecs"), 3);
    else if (json_is_object(json_object_get(j, "compressor"))) check_written_back(json_object_get(j, "compressor"), 2);
    json_decref(j);
    return 0;
}

TEST(zarrita_fixture_spellings)
{
    spellings_checked = 0;
    CHECK(nftw(ZC_TEST_DATA "/zarrita", visit, 16, FTW_PHYS) == 0);
    CHECK(spellings_checked >= 20);
}

/* What we write, numcodecs (the one zarr-python 2.13 uses) reads: each v2
 * config's to_json and encoded bytes go to a temp dir, and numcodecs decodes
 * them with get_codec(config). Skipped if numcodecs is missing. */
TEST(numcodecs_reads_our_output)
{
    if (system("/usr/bin/python3 -c 'import numcodecs' >/dev/null 2>&1") != 0)
        SKIP("/usr/bin/python3 cannot import numcodecs (scripts/install-deps.sh installs python3-zarr)");
    char dir[] = "/tmp/zc_codec_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const size_t n = 100000;
    unsigned char *data = make_data(n, 11);
    char path[256];
    snprintf(path, sizeof path, "%s/data.raw", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n);
    if (f) fclose(f);
    int written = 0;
    for (size_t i = 0; i < NCONFIGS; i++) {
        /* numcodecs 0.11 has no crc32c, no zstd checksum, no checksum location */
        if (strstr(configs[i].v2, "crc32c") || strstr(configs[i].v2, "checksum") || strstr(configs[i].v2, "location"))
            continue;
        codec c;
        CHECK_OK(make_codec(configs[i].v2, 2, 4, &c));
        if (!c.type) continue;
        zc_buf b = {0};
        CHECK_OK(c.type->encode(c.state, data, n, &b));
        json_t *cfg = c.type->to_json(c.state, 2);
        snprintf(path, sizeof path, "%s/%02zu.json", dir, i);
        CHECK(cfg && json_dump_file(cfg, path, 0) == 0);
        snprintf(path, sizeof path, "%s/%02zu.dat", dir, i);
        f = fopen(path, "wb");
        CHECK(f && fwrite(b.data, 1, b.size, f) == b.size);
        if (f) fclose(f);
        written++;
        json_decref(cfg);
        buf_free(&b);
        codec_destroy(&c);
    }
    CHECK(written >= 8);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c '\n"
             "import glob, json, sys, numcodecs\n"
             "d = sys.argv[1]; raw = open(d + \"/data.raw\", \"rb\").read(); bad = 0\n"
             "for j in sorted(glob.glob(d + \"/*.json\")):\n"
             "    c = numcodecs.get_codec(json.load(open(j)))\n"
             "    out = bytes(c.decode(open(j[:-5] + \".dat\", \"rb\").read()))\n"
             "    if out != raw: print(\"numcodecs decodes\", j, \"differently\"); bad += 1\n"
             "sys.exit(1 if bad else 0)\n"
             "' %s",
             dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    free(data);
}
