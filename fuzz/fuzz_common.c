/* fuzz/fuzz_common.c — helpers shared by the fuzz targets (see fuzz.h):
 * codec contexts, the codec-chain table, chunk shapes from an input byte, and
 * the fixed arrays of fuzz_chunk_read.
 *
 * Everything here is test scaffolding: it may abort when its own setup fails,
 * which the library itself never does. */
#include "fuzz.h"

#include <string.h>

#include "core/dtype.h"
#include "store/store.h"

/* ------------------------------------------------------------ contexts, shapes */

int fuzz_ctx(zc_dtype dtype, size_t itemsize, int ndim, const int64_t *shape, int zarr_format,
             codec_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->zarr_format = zarr_format;
    ctx->dtype.type = dtype;
    if (itemsize) {
        ctx->dtype.size = itemsize;
    } else {
        size_t size = 0;
        zc_dtype t;
        if (zc_dtype_parse(zc_dtype_name(dtype), &t, &size) < 0) abort();
        ctx->dtype.size = size;
    }
    ctx->dtype.endian = dtype_swap_unit(&ctx->dtype) == 1 ? '|' : '<';
    ctx->ndim = ndim;
    size_t nb = ctx->dtype.size;
    for (int i = 0; i < ndim; i++) {
        ctx->shape[i] = shape[i];
        if (shape[i] < 0 || __builtin_mul_overflow(nb, (size_t)shape[i], &nb)) return -1;
    }
    ctx->nbytes = nb;
    return 0;
}

/* Largest divisor of n that is <= want (n > 0), at least 1. */
static size_t divisor_near(size_t n, size_t want)
{
    if (want < 1) want = 1;
    for (size_t d = want; d > 1; d--)
        if (n % d == 0) return d;
    return 1;
}

int fuzz_shape_for(size_t nelem, uint8_t sel, int64_t *shape)
{
    int ndim = 1 + sel % 3;
    if (nelem == 0) {
        for (int i = 0; i < ndim; i++) shape[i] = i == 0 ? 0 : 1 + (sel >> (2 + i)) % 3;
        return ndim;
    }
    size_t left = nelem;
    for (int i = 0; i < ndim - 1; i++) {
        size_t d = divisor_near(left, 1 + (size_t)((sel >> (2 + 2 * i)) & 7) * 3);
        shape[i] = (int64_t)d;
        left /= d;
    }
    shape[ndim - 1] = (int64_t)left;
    return ndim;
}

static const struct {
    int ndim;
    int64_t shape[3];
} SHAPES[] = {
    {1, {1}}, {1, {0}}, {1, {7}}, {1, {64}}, {2, {4, 5}}, {2, {8, 8}},
    {3, {3, 4, 5}}, {3, {2, 3, 4}}, {1, {1000}}, {2, {16, 17}},
};

int fuzz_decode_shape(uint8_t sel, int64_t *shape)
{
    size_t i = sel % (sizeof SHAPES / sizeof SHAPES[0]);
    for (int d = 0; d < SHAPES[i].ndim; d++) shape[d] = SHAPES[i].shape[d];
    return SHAPES[i].ndim;
}

/* ------------------------------------------------------------ codec chains */

#define BYTES_LE "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}"
#define BYTES_BE "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}"

const fuzz_chain_spec fuzz_chains[] = {
    {"[" BYTES_LE "]", ZC_INT16, 0, 1},
    {"[" BYTES_BE "]", ZC_FLOAT64, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":true}}]", ZC_INT32, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}},{\"name\":\"crc32c\"}]",
     ZC_UINT16, 0, 1},
    {"[{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}}," BYTES_BE
     ",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]", ZC_INT32, 0, 1},
    {"[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}}," BYTES_LE
     ",{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"zstd\",\"clevel\":3,"
     "\"shuffle\":\"bitshuffle\",\"blocksize\":0}}]", ZC_FLOAT32, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"typesize\":2,\"cname\":\"lz4\",\"clevel\":5,"
     "\"shuffle\":\"shuffle\",\"blocksize\":0}}]", ZC_INT16, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}},"
     "{\"name\":\"numcodecs.adler32\"}]", ZC_UINT8, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}]", ZC_INT64, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}},"
     "{\"name\":\"numcodecs.crc32\",\"configuration\":{\"location\":\"end\"}}]", ZC_COMPLEX64, 0, 1},
    {"[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int32\"}}," BYTES_LE
     ",{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}},{\"name\":\"zstd\"}]",
     ZC_INT32, 0, 1},
    {"[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int16\",\"astype\":\"int32\"}}," BYTES_LE
     ",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]", ZC_INT16, 0, 1},
    {"[{\"name\":\"numcodecs.astype\",\"configuration\":{\"decode_dtype\":\"uint8\",\"encode_dtype\":\"float32\"}},"
     BYTES_BE "]", ZC_UINT8, 0, 1},
    {"[{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":0,\"scale\":1,\"dtype\":\"int32\","
     "\"astype\":\"int64\"}}," BYTES_LE ",{\"name\":\"numcodecs.lz4\"}]", ZC_INT32, 0, 1},
    {"[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":23}}," BYTES_LE
     ",{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"blosclz\",\"clevel\":9,"
     "\"shuffle\":\"noshuffle\",\"blocksize\":0}}]", ZC_FLOAT32, 0, 1},
    {"[" BYTES_LE ",{\"id\":\"delta\",\"dtype\":\"<i4\"},{\"id\":\"zlib\",\"level\":1}]", ZC_INT32, 0, 1},
    {"[" BYTES_BE ",{\"id\":\"shuffle\",\"elementsize\":8},{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,"
     "\"shuffle\":-1,\"blocksize\":0}]", ZC_FLOAT64, 0, 1},
    {"[{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}}," BYTES_LE
     ",{\"id\":\"crc32c\"},{\"id\":\"gzip\",\"level\":1}]", ZC_UINT16, 0, 1},
    {"[" BYTES_LE ",{\"id\":\"astype\",\"encode_dtype\":\"<i8\",\"decode_dtype\":\"<i2\"},{\"id\":\"bz2\",\"level\":1}]",
     ZC_INT16, 0, 1},
    {"[" BYTES_LE ",{\"id\":\"fixedscaleoffset\",\"offset\":0,\"scale\":1,\"dtype\":\"<i2\",\"astype\":\"<i4\"},"
     "{\"id\":\"lz4\",\"acceleration\":1}]", ZC_INT16, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":3}}]", ZC_UINT8, 0, 1},
    {"[" BYTES_BE "]", ZC_UNICODE, 8, 1},
    {"[" BYTES_LE ",{\"name\":\"numcodecs.crc32\",\"configuration\":{\"location\":\"start\"}},"
     "{\"name\":\"numcodecs.adler32\",\"configuration\":{\"location\":\"end\"}},{\"name\":\"crc32c\"}]",
     ZC_BOOL, 0, 1},
    {"[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"typesize\":8,\"cname\":\"zlib\",\"clevel\":1,"
     "\"shuffle\":\"shuffle\",\"blocksize\":256}}]", ZC_COMPLEX128, 0, 1},
    {"[" BYTES_LE ",{\"id\":\"blosc\",\"cname\":\"lz4hc\",\"clevel\":9,\"shuffle\":2,\"blocksize\":0}]",
     ZC_FLOAT16, 0, 1},
    /* lossy ones: decode fuzzing only */
    {"[{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":3,\"dtype\":\"float64\",\"astype\":\"float32\"}},"
     BYTES_LE ",{\"name\":\"zstd\"}]", ZC_FLOAT64, 0, 0},
    {"[{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":1000,\"scale\":10,\"dtype\":\"float64\","
     "\"astype\":\"uint8\"}}," BYTES_LE "]", ZC_FLOAT64, 0, 0},
    {"[" BYTES_LE ",{\"id\":\"quantize\",\"digits\":1,\"dtype\":\"<f4\",\"astype\":\"<f2\"},{\"id\":\"zstd\",\"level\":1}]",
     ZC_FLOAT32, 0, 0},
    {"[" BYTES_LE ",{\"id\":\"delta\",\"dtype\":\"<f8\",\"astype\":\"<f4\"}]", ZC_FLOAT64, 0, 0},
    {"[{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":3}}," BYTES_BE "]", ZC_FLOAT16, 0, 0},
};
const size_t fuzz_nchains = sizeof fuzz_chains / sizeof fuzz_chains[0];

json_t *fuzz_chain_json(const fuzz_chain_spec *spec)
{
    json_error_t e;
    json_t *j = json_loads(spec->json, 0, &e);
    FUZZ_CHECK(j != NULL, "bad chain JSON in the table: %s: %s", spec->json, e.text);
    return j;
}

/* ------------------------------------------------------------ single codecs */

#define S1(a) 1, {a, 0, 0, 0}
#define S2(a, b) 2, {a, b, 0, 0}
#define S3(a, b, c) 3, {a, b, c, 0}

const fuzz_codec_config fuzz_codec_configs[] = {
    /* v3 bytes→bytes */
    {"{\"name\":\"zstd\"}", ZC_INT32, 0, S1(256)},
    {"{\"name\":\"zstd\",\"configuration\":{\"level\":5,\"checksum\":true}}", ZC_UINT8, 0, S1(1000)},
    {"{\"name\":\"gzip\"}", ZC_INT32, 0, S1(256)},
    {"{\"name\":\"numcodecs.zlib\"}", ZC_INT16, 0, S1(256)},
    {"{\"name\":\"numcodecs.bz2\"}", ZC_INT64, 0, S1(256)},
    {"{\"name\":\"numcodecs.lz4\"}", ZC_FLOAT32, 0, S1(256)},
    {"{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\","
     "\"blocksize\":0}}", ZC_INT32, 0, S1(256)},
    {"{\"name\":\"blosc\",\"configuration\":{\"typesize\":1,\"cname\":\"zstd\",\"clevel\":3,"
     "\"shuffle\":\"bitshuffle\",\"blocksize\":0}}", ZC_UINT8, 0, S1(256)},
    {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":\"noshuffle\"}}",
     ZC_FLOAT64, 0, S1(256)},
    {"{\"name\":\"crc32c\"}", ZC_INT32, 0, S1(256)},
    {"{\"name\":\"numcodecs.crc32\"}", ZC_INT32, 0, S1(256)},
    {"{\"name\":\"numcodecs.adler32\",\"configuration\":{\"location\":\"end\"}}", ZC_INT32, 0, S1(256)},
    {"{\"name\":\"numcodecs.shuffle\"}", ZC_INT16, 0, S1(256)},
    {"{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":3}}", ZC_UINT8, 0, S1(255)},
    /* v2 compressors and checksums (the numcodecs fixtures' configs) */
    {"{\"id\":\"zstd\",\"level\":1}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"gzip\",\"level\":1}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"zlib\",\"level\":1}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"bz2\",\"level\":1}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"lz4\",\"acceleration\":1}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"crc32c\"}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"crc32\"}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"adler32\"}", ZC_INT32, 0, S1(256)},
    {"{\"id\":\"shuffle\",\"elementsize\":4}", ZC_INT32, 0, S1(256)},
    /* v2 filters (bytes→bytes in a v2 chain, with their own dtypes) */
    {"{\"id\":\"delta\",\"dtype\":\"<i4\"}", ZC_INT32, 0, S1(64)},
    {"{\"id\":\"delta\",\"dtype\":\">i2\",\"astype\":\"|i1\"}", ZC_INT16, 0, S1(64)},
    {"{\"id\":\"delta\",\"dtype\":\"|b1\"}", ZC_BOOL, 0, S1(64)},
    {"{\"id\":\"delta\",\"dtype\":\"<f4\",\"astype\":\"<f2\"}", ZC_FLOAT32, 0, S1(64)},
    {"{\"id\":\"delta\",\"dtype\":\"<u8\",\"astype\":\">u4\"}", ZC_UINT64, 0, S1(64)},
    {"{\"id\":\"fixedscaleoffset\",\"offset\":1000,\"scale\":10,\"dtype\":\"<f8\",\"astype\":\"|u1\"}",
     ZC_FLOAT64, 0, S1(64)},
    {"{\"id\":\"fixedscaleoffset\",\"offset\":-3.5,\"scale\":100,\"dtype\":\">f4\",\"astype\":\"<i2\"}",
     ZC_FLOAT32, 0, S1(64)},
    {"{\"id\":\"fixedscaleoffset\",\"offset\":5,\"scale\":1,\"dtype\":\"<i2\",\"astype\":\"<i8\"}", ZC_INT16, 0,
     S1(64)},
    {"{\"id\":\"quantize\",\"digits\":-1,\"dtype\":\"<f8\",\"astype\":\"<f2\"}", ZC_FLOAT64, 0, S1(64)},
    {"{\"id\":\"quantize\",\"digits\":5,\"dtype\":\"<f4\"}", ZC_FLOAT32, 0, S1(64)},
    {"{\"id\":\"astype\",\"encode_dtype\":\"<f4\",\"decode_dtype\":\"<i8\"}", ZC_INT64, 0, S1(64)},
    {"{\"id\":\"astype\",\"encode_dtype\":\"|u1\",\"decode_dtype\":\">f8\"}", ZC_FLOAT64, 0, S1(64)},
    {"{\"id\":\"bitround\",\"keepbits\":5}", ZC_FLOAT32, 0, S1(64)},
    {"{\"id\":\"bitround\",\"keepbits\":2}", ZC_FLOAT16, 0, S1(64)},
    /* v3 array→array and array→bytes */
    {"{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int32\",\"astype\":\"int8\"}}", ZC_INT32, 0,
     S1(64)},
    {"{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":1.5,\"scale\":2,\"dtype\":\"float64\","
     "\"astype\":\"int16\"}}", ZC_FLOAT64, 0, S1(33)},
    {"{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":2,\"dtype\":\"float32\"}}", ZC_FLOAT32, 0,
     S1(10)},
    {"{\"name\":\"numcodecs.astype\",\"configuration\":{\"decode_dtype\":\"int16\",\"encode_dtype\":\"uint32\"}}",
     ZC_INT16, 0, S2(7, 3)},
    {"{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":10}}", ZC_FLOAT64, 0, S1(16)},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}", ZC_INT16, 0, S2(7, 9)},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}}", ZC_UINT8, 0, S3(3, 4, 5)},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}}", ZC_COMPLEX128, 0, 4, {2, 3, 4, 5}},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}", ZC_UINT8, 0, S2(40, 70)},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}", ZC_UINT64, 0, S2(37, 35)},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[0,2,1]}}", ZC_FLOAT32, 0, S3(2, 33, 9)},
    {"{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}", ZC_INT64, 0, S1(10)},
    {"{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}", ZC_COMPLEX64, 0, S1(5)},
    {"{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}", ZC_UNICODE, 12, S1(4)},
    {"{\"name\":\"bytes\"}", ZC_UINT8, 0, S1(100)},
    {"{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}", ZC_FLOAT16, 0, S2(3, 3)},
};
const size_t fuzz_ncodec_configs = sizeof fuzz_codec_configs / sizeof fuzz_codec_configs[0];

/* ------------------------------------------------------------ fixed arrays */

static const fuzz_fixture_spec fixture_specs[] = {
    {"v2 blosc <i2", ".zarray",
     "{\"zarr_format\":2,\"shape\":[10,12],\"chunks\":[4,5],\"dtype\":\"<i2\",\"compressor\":{\"id\":\"blosc\","
     "\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0},\"fill_value\":7,\"filters\":null,"
     "\"order\":\"C\"}"},
    {"v2 F-order >f8 shuffle+zlib", ".zarray",
     "{\"zarr_format\":2,\"shape\":[9,7],\"chunks\":[4,3],\"dtype\":\">f8\",\"compressor\":{\"id\":\"zlib\","
     "\"level\":1},\"fill_value\":\"NaN\",\"filters\":[{\"id\":\"shuffle\",\"elementsize\":8}],\"order\":\"F\","
     "\"dimension_separator\":\"/\"}"},
    {"v3 zstd+crc32c float32", "zarr.json",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[9,7],\"data_type\":\"float32\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,4]}},"
     "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
     "\"fill_value\":0.5,\"codecs\":[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,"
     "\"checksum\":false}},{\"name\":\"crc32c\"}],\"attributes\":{}}"},
    {"v3 sharded, index at start", "zarr.json",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8,8],\"data_type\":\"int32\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,8]}},"
     "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
     "\"fill_value\":-1,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
     "\"chunk_shape\":[2,2],\"codecs\":[" BYTES_LE ",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}],"
     "\"index_codecs\":[" BYTES_LE "],\"index_location\":\"start\"}}],\"attributes\":{}}"},
    {"v3 sharded, index at end, ragged", "zarr.json",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[10,9],\"data_type\":\"uint16\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,6]}},"
     "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
     "\"fill_value\":3,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{"
     "\"chunk_shape\":[2,3],\"codecs\":[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,"
     "\"checksum\":false}}],\"index_codecs\":[" BYTES_LE ",{\"name\":\"crc32c\"}],"
     "\"index_location\":\"end\"}}],\"attributes\":{}}"},
    {"v3 transpose+delta+blosc, v2 keys", "zarr.json",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[6,10],\"data_type\":\"int16\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[3,5]}},"
     "\"chunk_key_encoding\":{\"name\":\"v2\",\"configuration\":{\"separator\":\".\"}},"
     "\"fill_value\":0,\"codecs\":[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},"
     "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int16\"}}," BYTES_BE
     ",{\"name\":\"blosc\",\"configuration\":{\"typesize\":2,\"cname\":\"lz4\",\"clevel\":5,"
     "\"shuffle\":\"bitshuffle\",\"blocksize\":0}}],\"attributes\":{}}"},
};
const size_t fuzz_nfixtures = sizeof fixture_specs / sizeof fixture_specs[0];

static fuzz_fixture fixtures[sizeof fixture_specs / sizeof fixture_specs[0]];

typedef struct {
    fuzz_object *obj;
    size_t n, cap;
    const char *skip; /* the metadata key */
} key_list;

static int collect(const char *key, void *vctx)
{
    key_list *l = vctx;
    if (!strcmp(key, l->skip)) return 0;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->obj = realloc(l->obj, l->cap * sizeof *l->obj);
        if (!l->obj) abort();
    }
    l->obj[l->n].key = strdup(key);
    l->obj[l->n].data = NULL;
    l->obj[l->n].size = 0;
    l->n++;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const fuzz_object *)a)->key, ((const fuzz_object *)b)->key);
}

#define SETUP(call)                                                             \
    do {                                                                        \
        int rc_ = (call);                                                       \
        FUZZ_CHECK(rc_ == 0, "fixture '%s': %s: %s: %s", spec->name, #call, zc_errname(rc_), zc_errmsg()); \
    } while (0)

static void build(size_t i)
{
    const fuzz_fixture_spec *spec = &fixture_specs[i];
    char url[64];
    snprintf(url, sizeof url, "memory://fuzz-fixture-%zu", i);
    zc_store *st;
    SETUP(zc_store_open(url, 0, &st));
    SETUP(store_put(st, spec->meta_key, spec->meta, strlen(spec->meta)));
    zc_zarr *a;
    SETUP(zc_zarr_open(st, "", &a));
    SETUP(zc_zarr_set_threads(a, 1));
    size_t n;
    SETUP(zc_zarr_selection_size(a, NULL, &n));
    unsigned char *data = malloc(n);
    FUZZ_CHECK(data != NULL, "out of memory");
    /* a pattern with runs and noise, so compressors have work to do */
    uint32_t x = 12345u + (uint32_t)i;
    for (size_t k = 0; k < n; k++) {
        x = x * 1103515245u + 12345u;
        data[k] = (k % 7 < 3) ? (unsigned char)(k / 5) : (unsigned char)(x >> 24);
    }
    SETUP(zc_zarr_write(a, NULL, data, n));
    unsigned char *back = malloc(n ? n : 1);
    FUZZ_CHECK(back != NULL, "out of memory");
    SETUP(zc_zarr_read(a, NULL, back, n));
    FUZZ_CHECK(!memcmp(back, data, n), "fixture '%s' does not read back what was written", spec->name);
    free(data);
    zc_zarr_close(a);
    key_list l = {NULL, 0, 0, spec->meta_key};
    SETUP(store_list_prefix(st, "", collect, &l));
    FUZZ_CHECK(l.n > 0, "fixture '%s' wrote no chunks", spec->name);
    qsort(l.obj, l.n, sizeof *l.obj, by_key);
    for (size_t k = 0; k < l.n; k++) {
        void *p;
        size_t sz;
        SETUP(store_get(st, l.obj[k].key, &p, &sz));
        l.obj[k].data = malloc(sz ? sz : 1);
        FUZZ_CHECK(l.obj[k].data != NULL, "out of memory");
        if (sz) memcpy(l.obj[k].data, p, sz);
        l.obj[k].size = sz;
        zc_free(p);
    }
    zc_store_close(st);
    fixtures[i].spec = spec;
    fixtures[i].obj = l.obj;
    fixtures[i].nobj = l.n;
    fixtures[i].whole = back;
    fixtures[i].whole_size = n;
}

const fuzz_fixture *fuzz_fixture_get(size_t i)
{
    if (i >= fuzz_nfixtures) abort();
    if (!fixtures[i].spec) build(i);
    return &fixtures[i];
}
