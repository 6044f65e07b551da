/* tests/test_zarr.c — arrays: create, write and read hyperslabs against an
 * in-memory reference, sharding, fill values, and bad input. */
#include <jansson.h>
#include <stdint.h>
#include <unistd.h>

#include "harness.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* Reference: a dense C-order int32 array; element value = f(linear index). */
typedef struct {
    int ndim;
    int64_t shape[4];
    int32_t *data;
    size_t n;
} ref_array;

static size_t lin(const ref_array *r, const int64_t *idx)
{
    size_t k = 0;
    for (int d = 0; d < r->ndim; d++) k = k * (size_t)r->shape[d] + (size_t)idx[d];
    return k;
}

/* Copy selection between reference and a packed buffer (dir 0: ref→buf, 1: buf→ref). */
static size_t ref_sel(ref_array *r, const zc_range *sel, int32_t *buf, int dir)
{
    int64_t idx[4], cnt[4], k[4] = {0};
    size_t total = 1;
    for (int d = 0; d < r->ndim; d++) {
        cnt[d] = sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0;
        total *= (size_t)cnt[d];
    }
    for (size_t i = 0; i < total; i++) {
        for (int d = 0; d < r->ndim; d++) idx[d] = sel[d].start + k[d] * sel[d].step;
        if (dir == 0) buf[i] = r->data[lin(r, idx)];
        else r->data[lin(r, idx)] = buf[i];
        for (int d = r->ndim - 1; d >= 0; d--) {
            if (++k[d] < cnt[d]) break;
            k[d] = 0;
        }
    }
    return total;
}

static void random_sel(const ref_array *r, zc_range *sel)
{
    for (int d = 0; d < r->ndim; d++) {
        int64_t a = rnd_in(0, r->shape[d]), b = rnd_in(0, r->shape[d]);
        if (a > b) { int64_t t = a; a = b; b = t; }
        sel[d] = (zc_range){a, b, rnd() % 3 ? 1 : rnd_in(1, 5)};
    }
}

/* Write random regions, read random regions, compare with the reference. */
static void exercise(const char *url, zc_zarr_create_opts *o, int rounds)
{
    zc_store *st;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "grp/arr", o, &a));
    if (!a) { zc_store_close(st); return; }
    ref_array r = {.ndim = o->ndim};
    r.n = 1;
    for (int d = 0; d < o->ndim; d++) {
        r.shape[d] = o->shape[d];
        r.n *= (size_t)o->shape[d];
    }
    r.data = calloc(r.n ? r.n : 1, sizeof(int32_t));
    int32_t fill = o->fill_value ? atoi(o->fill_value) : 0;
    for (size_t i = 0; i < r.n; i++) r.data[i] = fill;
    int32_t *buf = malloc((r.n + 1) * sizeof(int32_t)), *got = malloc((r.n + 1) * sizeof(int32_t));
    for (int round = 0; round < rounds; round++) {
        zc_range sel[4];
        random_sel(&r, sel);
        size_t n = 1;
        for (int d = 0; d < r.ndim; d++) n *= (size_t)(sel[d].stop > sel[d].start ? (sel[d].stop - sel[d].start - 1) / sel[d].step + 1 : 0);
        for (size_t i = 0; i < n; i++) buf[i] = (int32_t)(rnd() % 1000) - 500;
        if (round % 4 == 3) for (size_t i = 0; i < n; i++) buf[i] = fill; /* make some chunks empty again */
        CHECK_OK(zc_zarr_write(a, sel, buf, n * sizeof(int32_t)));
        ref_sel(&r, sel, buf, 1);
        random_sel(&r, sel);
        n = ref_sel(&r, sel, buf, 0);
        memset(got, 0x5a, n * sizeof(int32_t));
        CHECK_OK(zc_zarr_read(a, sel, got, n * sizeof(int32_t)));
        if (memcmp(got, buf, n * sizeof(int32_t))) {
            fprintf(stderr, "round %d: read differs from reference\n", round);
            CHECK(0);
            break;
        }
    }
    /* reopen and read everything */
    zc_zarr_close(a);
    CHECK_OK(zc_zarr_open(st, "grp/arr", &a));
    if (a) {
        CHECK_OK(zc_zarr_read(a, NULL, got, r.n * sizeof(int32_t)));
        CHECK(!memcmp(got, r.data, r.n * sizeof(int32_t)));
        zc_zarr_close(a);
    }
    free(buf);
    free(got);
    free(r.data);
    zc_store_close(st);
}

static zc_zarr_create_opts opts_3d(int fmt, const char *codec)
{
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.zarr_format = fmt;
    o.ndim = 3;
    o.shape[0] = 13; o.shape[1] = 17; o.shape[2] = 9;
    o.chunks[0] = 4; o.chunks[1] = 5; o.chunks[2] = 9;
    o.dtype = ZC_INT32;
    o.codec = codec;
    return o;
}

TEST(roundtrip_v3_zstd)
{
    zc_zarr_create_opts o = opts_3d(3, "zstd:1");
    exercise("memory://rt_v3", &o, 60);
}

TEST(roundtrip_v2_blosc_f_order)
{
    zc_zarr_create_opts o = opts_3d(2, "blosc:lz4:5:shuffle");
    o.order = 'F';
    o.fill_value = "-7";
    exercise("memory://rt_v2", &o, 60);
}

TEST(roundtrip_v2_nested_keys_uncompressed)
{
    zc_zarr_create_opts o = opts_3d(2, "none");
    o.separator = '/';
    exercise("memory://rt_v2n", &o, 40);
}

TEST(roundtrip_v3_sharded)
{
    zc_zarr_create_opts o = opts_3d(3, "gzip:1");
    o.shards[0] = 8; o.shards[1] = 10; o.shards[2] = 9;
    exercise("memory://rt_sh", &o, 60);
}

TEST(roundtrip_filesystem_sharded_and_plain)
{
    char dir[] = "/tmp/zc_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_zarr_create_opts o = opts_3d(3, "zstd");
    o.shards[0] = 4; o.shards[1] = 10; o.shards[2] = 9;
    exercise(dir, &o, 30);
    zc_zarr_create_opts p = opts_3d(2, "zlib:1");
    p.overwrite = 1;
    exercise(dir, &p, 30);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* --overwrite of a 2-D array by a 1-D one on a filesystem: the old chunk keys
 * c/0/0 ... leave folders c/0, c/1 where the new array's chunks are files:
 * overwrite removes the emptied folders too (before, every new chunk failed
 * "renaming ... to c/0: Is a directory"), and keeps a sibling array's. */
TEST(overwrite_changes_key_layout_on_filesystem)
{
    char dir[] = "/tmp/zc_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, ZC_STORE_CREATE, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = 4; o.shape[1] = 4;
    o.chunks[0] = 2; o.chunks[1] = 2;
    o.dtype = ZC_INT32;
    int32_t v[16];
    for (int i = 0; i < 16; i++) v[i] = i + 1;
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "x", &o, &a));
    CHECK_OK(zc_zarr_write(a, NULL, v, sizeof v));
    zc_zarr_close(a);
    CHECK_OK(zc_zarr_create(st, "y", &o, &a)); /* a sibling: untouched */
    CHECK_OK(zc_zarr_write(a, NULL, v, sizeof v));
    zc_zarr_close(a);
    o.ndim = 1;
    o.shape[0] = 16;
    o.chunks[0] = 2;
    o.overwrite = 1;
    CHECK_OK(zc_zarr_create(st, "x", &o, &a));
    for (int i = 0; i < 16; i++) v[i] = -i;
    CHECK_OK(zc_zarr_write(a, NULL, v, sizeof v));
    int32_t back[16] = {0};
    CHECK_OK(zc_zarr_read(a, NULL, back, sizeof back));
    CHECK(memcmp(back, v, sizeof v) == 0);
    zc_zarr_close(a);
    CHECK_OK(zc_zarr_open(st, "y", &a));
    CHECK_OK(zc_zarr_read(a, NULL, back, sizeof back));
    CHECK(back[0] == 1 && back[15] == 16);
    zc_zarr_close(a);
    zc_store_close(st);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(zero_dim_and_empty)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://zd", 0, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 0;
    o.dtype = ZC_FLOAT64;
    o.fill_value = "\"NaN\"";
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "scalar", &o, &a));
    double v = 0;
    CHECK_OK(zc_zarr_read(a, NULL, &v, sizeof v));
    CHECK(v != v); /* NaN fill */
    v = 2.5;
    CHECK_OK(zc_zarr_write(a, NULL, &v, sizeof v));
    v = 0;
    CHECK_OK(zc_zarr_read(a, NULL, &v, sizeof v));
    CHECK(v == 2.5);
    zc_zarr_close(a);
    o.ndim = 2;
    o.shape[0] = 0; o.shape[1] = 5;
    o.chunks[0] = 2; o.chunks[1] = 2;
    CHECK_OK(zc_zarr_create(st, "empty", &o, &a));
    CHECK_OK(zc_zarr_read(a, NULL, &v, 0));
    zc_zarr_close(a);
    zc_store_close(st);
}

/* An array holds no nodes: neither one below an array member nor one below
 * an array at the store's root (that one was written inside the array). */
TEST(no_node_below_an_array)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://below", 0, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 1;
    o.shape[0] = 4;
    o.chunks[0] = 2;
    o.dtype = ZC_INT32;
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "a", &o, &a));
    zc_zarr_close(a);
    CHECK_ERR(zc_zarr_create(st, "a/b", &o, &a), ZC_EEXIST, "'a' is an array");
    zc_store_close(st);
    CHECK_OK(zc_store_open("memory://below-root", 0, &st));
    CHECK_OK(zc_zarr_create(st, "", &o, &a));
    zc_zarr_close(a);
    CHECK_ERR(zc_zarr_create(st, "sub/x", &o, &a), ZC_EEXIST, "root is an array");
    zc_node_kind kind;
    CHECK_OK(zc_node_kind_at(st, "sub", &kind, NULL));
    CHECK(kind == ZC_NODE_NONE);
    zc_store_close(st);
}

TEST(write_empty_chunks_skips_fill)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://wec", 0, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 1;
    o.shape[0] = 100;
    o.chunks[0] = 10;
    o.dtype = ZC_UINT8;
    o.fill_value = "3";
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "a", &o, &a));
    uint8_t buf[100];
    memset(buf, 3, sizeof buf);
    buf[55] = 9;
    CHECK_OK(zc_zarr_write(a, NULL, buf, sizeof buf));
    zc_zarr_stats_t s;
    CHECK_OK(zc_zarr_stats(a, &s));
    CHECK(s.chunks_total == 10 && s.chunks_stored == 1);
    CHECK(s.bytes_decoded == 100);
    zc_zarr_close(a);
    o.write_empty_chunks = 1;
    o.overwrite = 1;
    CHECK_OK(zc_zarr_create(st, "a", &o, &a));
    CHECK_OK(zc_zarr_stats(a, &s));
    CHECK(s.chunks_stored == 0); /* overwrite removed the old chunks */
    CHECK_OK(zc_zarr_write(a, NULL, buf, sizeof buf));
    CHECK_OK(zc_zarr_stats(a, &s));
    CHECK(s.chunks_stored == 10);
    zc_zarr_close(a);
    zc_store_close(st);
}

TEST(dtypes_roundtrip)
{
    const char *names[] = {"bool", "int8", "int16", "int64", "uint16", "uint32", "uint64", "float16",
                           "float32", "float64", "complex64", "complex128", "|S5", "<U3"};
    zc_store *st;
    CHECK_OK(zc_store_open("memory://dt", 0, &st));
    for (int fmt = 2; fmt <= 3; fmt++) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
            o.zarr_format = fmt;
            o.ndim = 2;
            o.shape[0] = 7; o.shape[1] = 6;
            o.chunks[0] = 3; o.chunks[1] = 4;
            CHECK_OK(zc_dtype_parse(names[i], &o.dtype, &o.itemsize));
            o.codec = "blosc:zstd:3:bitshuffle";
            zc_zarr *a;
            char path[64];
            snprintf(path, sizeof path, "v%d/%zu", fmt, i);
            CHECK_OK(zc_zarr_create(st, path, &o, &a));
            if (!a) continue;
            size_t n = 42 * o.itemsize;
            unsigned char *src = malloc(n), *dst = malloc(n);
            for (size_t k = 0; k < n; k++) src[k] = (unsigned char)(rnd() & (o.dtype == ZC_BOOL ? 1 : 0xff));
            CHECK_OK(zc_zarr_write(a, NULL, src, n));
            zc_zarr_close(a);
            CHECK_OK(zc_zarr_open(st, path, &a));
            CHECK_OK(zc_zarr_read(a, NULL, dst, n));
            if (memcmp(src, dst, n)) fprintf(stderr, "dtype %s v%d differs\n", names[i], fmt);
            CHECK(!memcmp(src, dst, n));
            zc_zarr_close(a);
            free(src);
            free(dst);
        }
    }
    zc_store_close(st);
}

/* ---- bad input ---- */

static void put_text(zc_store *st, const char *key, const char *text);

static zc_store *bad_store(const char *name)
{
    zc_store *st;
    CHECK_OK(zc_store_open(name, 0, &st));
    return st;
}

#include "store/store.h" /* test-only: write raw objects */
static void put_text(zc_store *st, const char *key, const char *text)
{
    CHECK_OK(store_put(st, key, text, strlen(text)));
}

#define V2_META(shape, chunks, dtype, comp)                                                        \
    "{\"zarr_format\":2,\"shape\":" shape ",\"chunks\":" chunks ",\"dtype\":\"" dtype               \
    "\",\"compressor\":" comp ",\"fill_value\":0,\"filters\":null,\"order\":\"C\"}"

TEST(bad_metadata)
{
    zc_store *st = bad_store("memory://badmeta");
    zc_zarr *a;
    put_text(st, "j/.zarray", "{\"zarr_format\": 2, \"shape\": [");
    CHECK_ERR(zc_zarr_open(st, "j", &a), ZC_EFORMAT, "j/.zarray");
    put_text(st, "neg/.zarray", V2_META("[-4]", "[2]", "<i4", "null"));
    CHECK_ERR(zc_zarr_open(st, "neg", &a), ZC_EFORMAT, "negative");
    put_text(st, "ovf/.zarray", V2_META("[4611686018427387904, 4611686018427387904]", "[1,1]", "<i4", "null"));
    CHECK_ERR(zc_zarr_open(st, "ovf", &a), ZC_EOVERFLOW, "overflow");
    put_text(st, "zc/.zarray", V2_META("[4]", "[0]", "<i4", "null"));
    CHECK_ERR(zc_zarr_open(st, "zc", &a), ZC_EFORMAT, "chunk");
    put_text(st, "codec/.zarray", V2_META("[4]", "[2]", "<i4", "{\"id\":\"snappy9\"}"));
    CHECK_ERR(zc_zarr_open(st, "codec", &a), ZC_EUNSUPPORTED, "snappy9");
    put_text(st, "obj/.zarray", V2_META("[4]", "[2]", "|O", "null"));
    CHECK_ERR(zc_zarr_open(st, "obj", &a), ZC_EUNSUPPORTED, "|O");
    put_text(st, "v3/zarr.json",
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"int8\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
             "\"codecs\":[{\"name\":\"bytes\"}],\"my_ext\":{\"must_understand\":true}}");
    CHECK_ERR(zc_zarr_open(st, "v3", &a), ZC_EUNSUPPORTED, "my_ext");
    put_text(st, "v3b/zarr.json",
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"int8\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
             "\"codecs\":[{\"name\":\"bytes\"}],\"my_ext\":{\"must_understand\":false}}");
    CHECK_OK(zc_zarr_open(st, "v3b", &a));
    zc_zarr_close(a);
    CHECK_ERR(zc_zarr_open(st, "nothing", &a), ZC_ENOENT, "nothing");
    CHECK_ERR(zc_zarr_open(st, "../escape", &a), ZC_EINVAL, "..");
    zc_store_close(st);
}

static zc_zarr *small_array(zc_store *st, const char *path, const char *codec, int sharded)
{
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 1;
    o.shape[0] = 64;
    o.chunks[0] = 16;
    if (sharded) o.shards[0] = 32;
    o.dtype = ZC_INT32;
    o.codec = codec;
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_create(st, path, &o, &a));
    int32_t v[64];
    for (int i = 0; i < 64; i++) v[i] = i * 7 + 1;
    CHECK_OK(zc_zarr_write(a, NULL, v, sizeof v));
    return a;
}

TEST(bad_chunks)
{
    zc_store *st = bad_store("memory://badchunk");
    int32_t out[64];
    zc_zarr *a = small_array(st, "raw", "none", 0);
    /* wrong size (truncated) uncompressed chunk */
    put_text(st, "raw/c/1", "abc");
    CHECK_ERR(zc_zarr_read(a, NULL, out, sizeof out), ZC_ECORRUPT, "raw/c/1");
    zc_zarr_close(a);
    a = small_array(st, "z", "zstd", 0);
    put_text(st, "z/c/2", "\x28\xb5\x2f\xfd garbage garbage");
    CHECK_ERR(zc_zarr_read(a, NULL, out, sizeof out), ZC_ECORRUPT, "z/c/2");
    zc_zarr_close(a);
    /* crc32c mismatch: flip a byte of a checksummed chunk */
    a = small_array(st, "crc", "zstd,crc32c", 0);
    void *data;
    size_t n;
    CHECK_OK(store_get(st, "crc/c/0", &data, &n));
    ((unsigned char *)data)[n / 2] ^= 0x40;
    CHECK_OK(store_put(st, "crc/c/0", data, n));
    zc_free(data);
    CHECK_ERR(zc_zarr_read(a, NULL, out, sizeof out), ZC_ECHECKSUM, "crc/c/0");
    zc_zarr_close(a);
    zc_store_close(st);
}

TEST(bad_shards)
{
    zc_store *st = bad_store("memory://badshard");
    int32_t out[64];
    zc_zarr *a = small_array(st, "s", "none", 1);
    CHECK_OK(zc_zarr_read(a, NULL, out, sizeof out));
    CHECK(out[63] == 63 * 7 + 1);
    void *data;
    size_t n;
    CHECK_OK(store_get(st, "s/c/0", &data, &n));
    /* index at the end: 2 entries × 16 bytes + crc32c. Point entry 1 past the end. */
    unsigned char *idx = (unsigned char *)data + n - 36;
    uint64_t off = 1000000;
    memcpy(idx + 16, &off, 8);
    CHECK_OK(store_put(st, "s/c/0", data, n));
    zc_zarr_close(a); /* an open array caches shard indexes: reopen after changing shards behind its back */
    CHECK_OK(zc_zarr_open(st, "s", &a));
    CHECK_ERR(zc_zarr_read(a, NULL, out, sizeof out), ZC_ECHECKSUM, "s/c/0"); /* crc catches it first */
    /* now with a matching crc: the index check must catch it */
    zc_store *st2 = bad_store("memory://badshard2");
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 1;
    o.shape[0] = 64;
    o.chunks[0] = 16;
    o.shards[0] = 32;
    o.dtype = ZC_INT32;
    o.codec = "none";
    zc_zarr *b;
    CHECK_OK(zc_zarr_create(st2, "s", &o, &b));
    /* rewrite metadata without crc32c in the index codecs */
    put_text(st2, "s/zarr.json",
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[64],\"data_type\":\"int32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[32]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
             "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[16],"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"index_location\":\"end\"}}]}");
    zc_zarr_close(b);
    CHECK_OK(zc_zarr_open(st2, "s", &b));
    int32_t v[64];
    for (int i = 0; i < 64; i++) v[i] = i + 1; /* no chunk all fill: every shard is stored */
    CHECK_OK(zc_zarr_write(b, NULL, v, sizeof v));
    zc_free(data);
    CHECK_OK(store_get(st2, "s/c/0", &data, &n));
    idx = (unsigned char *)data + n - 32;
    memcpy(idx + 16, &off, 8);
    CHECK_OK(store_put(st2, "s/c/0", data, n));
    CHECK_ERR(zc_zarr_read(b, NULL, out, sizeof out), ZC_ECORRUPT, "outside the shard");
    /* a shard shorter than its cached index says: corrupt, not a range error */
    zc_range r = {32, 64, 1};
    CHECK_OK(zc_zarr_read(b, &r, out, sizeof out)); /* caches the index of shard 1 */
    put_text(st2, "s/c/1", "xyz0123456789012345678901234567890123456789");
    CHECK_ERR(zc_zarr_read(b, &r, out, sizeof out), ZC_ECORRUPT, "s/c/1");
    /* truncated shard shorter than its index, freshly opened */
    put_text(st2, "s/c/1", "xyz");
    zc_zarr_close(b);
    CHECK_OK(zc_zarr_open(st2, "s", &b));
    CHECK_ERR(zc_zarr_read(b, &r, out, sizeof out), ZC_ECORRUPT, "s/c/1");
    zc_free(data);
    zc_zarr_close(b);
    zc_zarr_close(a);
    zc_store_close(st2);
    zc_store_close(st);
}

TEST(bad_selections)
{
    zc_store *st = bad_store("memory://badsel");
    zc_zarr *a = small_array(st, "a", "none", 0);
    int32_t out[64];
    zc_range r = {0, 65, 1};
    CHECK_ERR(zc_zarr_read(a, &r, out, sizeof out), ZC_ERANGE, "dimension 0");
    r = (zc_range){-1, 5, 1};
    CHECK_ERR(zc_zarr_read(a, &r, out, sizeof out), ZC_ERANGE, "dimension 0");
    r = (zc_range){0, 5, 0};
    CHECK_ERR(zc_zarr_read(a, &r, out, sizeof out), ZC_ERANGE, "step");
    r = (zc_range){0, 64, 1};
    CHECK_ERR(zc_zarr_read(a, &r, out, 10), ZC_EINVAL, "too small");
    CHECK_ERR(zc_zarr_write(a, &r, out, 10), ZC_EINVAL, "too small");
    zc_zarr_close(a);
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = INT64_MAX / 2; o.shape[1] = 8;
    o.chunks[0] = 1; o.chunks[1] = 1;
    o.dtype = ZC_INT32;
    CHECK_ERR(zc_zarr_create(st, "huge", &o, &a), ZC_EOVERFLOW, "overflow");
    o.shape[0] = -3;
    CHECK_ERR(zc_zarr_create(st, "neg", &o, &a), ZC_EINVAL, "negative");
    zc_store_close(st);
}

TEST(alloc_failures_leave_no_leaks)
{
    /* Fail the k-th allocation of a sharded write+read for k = 1, 2, ...: each
     * call fails cleanly with ZC_ENOMEM or succeeds; ASan checks for leaks. */
    for (long k = 1; k < 400; k++) {
        zc_store *st;
        if (zc_store_open("memory://oom", 0, &st)) continue;
        zc_zarr_create_opts o = opts_3d(3, "zstd");
        o.shards[0] = 8; o.shards[1] = 10; o.shards[2] = 9;
        zc_zarr *a = NULL;
        int32_t buf[13 * 17 * 9];
        for (int i = 0; i < 13 * 17 * 9; i++) buf[i] = i;
        zc_test_fail_alloc(k, 0);
        int rc = zc_zarr_create(st, "x", &o, &a);
        if (rc == 0) rc = zc_zarr_write(a, NULL, buf, sizeof buf);
        if (rc == 0) rc = zc_zarr_read(a, NULL, buf, sizeof buf);
        int failed = zc_test_fail_alloc(0, 0);
        CHECK(rc == 0 || rc == ZC_ENOMEM);
        if (rc != 0 && rc != ZC_ENOMEM) fprintf(stderr, "k=%ld: %s %s\n", k, zc_errname(rc), zc_errmsg());
        zc_zarr_close(a);
        zc_store_close(st);
        if (!failed) break; /* got past every allocation */
    }
}

#include "zarr/shard_cache.h"
TEST(shard_cache_evicts_and_stays_consistent)
{
    shard_cache *c;
    CHECK_OK(shard_cache_create(4, 4 * 100, &c)); /* room for ~4 entries of 4 words */
    uint64_t idx[4], got[4];
    for (uint64_t id = 0; id < 200; id++) {
        for (int w = 0; w < 4; w++) idx[w] = id * 10 + (uint64_t)w;
        shard_cache_put(c, id * 7919, idx, id % 5 != 0, id + 1);
        bool present;
        uint64_t size;
        CHECK(shard_cache_get(c, id * 7919, got, &present, &size)); /* the newest is always there */
        CHECK(present == (id % 5 != 0) && size == id + 1);
        if (present) CHECK(!memcmp(got, idx, sizeof idx));
    }
    int hits = 0;
    for (uint64_t id = 0; id < 200; id++) {
        bool present;
        uint64_t size;
        if (shard_cache_get(c, id * 7919, got, &present, &size)) {
            hits++;
            CHECK(size == id + 1);
            if (present) CHECK(got[3] == id * 10 + 3);
        }
    }
    CHECK(hits >= 1 && hits <= 8);
    shard_cache_drop(c, 199 * 7919);
    bool present;
    uint64_t size;
    CHECK(!shard_cache_get(c, 199 * 7919, got, &present, &size));
    shard_cache_free(c);
}

/* fuzzing.md finding #6: 400 bytes of valid metadata declaring a shard of
 * 2^24 inner chunks (the largest allowed: a 256 MB index) open and read (the
 * shard is absent: fill) without allocating in proportion to the index;
 * 2^26 inner chunks are refused by name. */
#include "core/alloc.h"
#define HUGE_SHARD_META(n)                                                                            \
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"uint8\","             \
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[" n "]}},"              \
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":7,"                                 \
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[1],"             \
    "\"codecs\":[{\"name\":\"bytes\"}],"                                                              \
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"             \
    "\"index_location\":\"end\"}}]}"
TEST(absurd_shard_grid_costs_nothing)
{
    zc_store *st = bad_store("memory://hugeshard");
    put_text(st, "ok/zarr.json", HUGE_SHARD_META("16777216"));
    put_text(st, "big/zarr.json", HUGE_SHARD_META("67108864"));
    zc_zarr *a;
    size_t base = zc__alloc_current();
    zc__alloc_reset_peak();
    CHECK_OK(zc_zarr_open(st, "ok", &a));
    unsigned char buf[4] = {0};
    CHECK_OK(zc_zarr_read(a, NULL, buf, sizeof buf));
    CHECK(buf[0] == 7 && buf[3] == 7);
    size_t peak = zc__alloc_peak() - base;
    CHECK(peak < ((size_t)4 << 20)); /* was 256 MB (index) + 128 MB (cache) */
    if (peak >= ((size_t)4 << 20)) fprintf(stderr, "peak %zu bytes\n", peak);
    /* a shard that is there but too short for its index: refused, no 256 MB either */
    zc_zarr_close(a);
    put_text(st, "ok/c/0", "tiny");
    CHECK_OK(zc_zarr_open(st, "ok", &a));
    zc__alloc_reset_peak();
    CHECK_ERR(zc_zarr_read(a, NULL, buf, sizeof buf), ZC_ECORRUPT, "too short for its index");
    CHECK(zc__alloc_peak() - base < ((size_t)4 << 20));
    zc_zarr_close(a);
    CHECK_ERR(zc_zarr_open(st, "big", &a), ZC_EUNSUPPORTED, "inner chunks per shard");
    zc_store_close(st);
}

/* Never a signal: another program rewrites the chunk files of an array in
 * place (truncates each, then writes the same bytes back) while this one
 * reads the array again and again, mapped reads included (chunks of 512 KiB
 * decoded: the store maps them). Every read either gives exactly the data or
 * fails with ZC_EIO (the file named) / ZC_ECORRUPT / ZC_ECHECKSUM; none
 * raises SIGBUS (without store/map_guard.c: "Bus error" at once). Shard
 * files mapped by the loader's reads (ZARR_READ_MAP) get the same. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "store/map_guard.h"
#include "zarr/read.h"
static void truncating_writer(const char *dir, const char *arr, int nfiles, bool sharded)
{
    unsigned char *bytes[8];
    size_t len[8];
    char paths[8][700];
    for (int i = 0; i < nfiles; i++) {
        if (sharded) snprintf(paths[i], sizeof paths[i], "%s/%s/c/%d/0", dir, arr, i);
        else snprintf(paths[i], sizeof paths[i], "%s/%s/c/%d/%d", dir, arr, i / 2, i % 2);
        FILE *f = fopen(paths[i], "rb");
        bytes[i] = malloc(4 << 20);
        len[i] = f ? fread(bytes[i], 1, 4 << 20, f) : 0;
        if (f) fclose(f);
    }
    pid_t pid = fork();
    if (pid == 0) { /* the other program: system calls only */
        for (unsigned k = 0;; k++) {
            int i = (int)(k % (unsigned)nfiles);
            int fd = open(paths[i], O_WRONLY | O_TRUNC);
            if (fd < 0) _exit(3);
            struct timespec t = {0, 200 * 1000};
            nanosleep(&t, NULL);
            size_t half = len[i] / 2;
            if (write(fd, bytes[i], half) != (ssize_t)half) _exit(4);
            nanosleep(&t, NULL);
            if (write(fd, bytes[i] + half, len[i] - half) != (ssize_t)(len[i] - half)) _exit(4);
            close(fd);
        }
    }
    for (int i = 0; i < nfiles; i++) free(bytes[i]);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_zarr *a;
    CHECK_OK(zc_zarr_open(st, arr, &a));
    size_t n = 512 * 1024;
    float *got = malloc(n * sizeof *got);
    int ok = 0, eio = 0, corrupt = 0, other = 0, wrong = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        int rc = zarr_read_flags(a, NULL, got, n * sizeof *got, sharded ? ZARR_READ_MAP : 0);
        if (rc == 0) {
            ok++;
            for (size_t i = 0; i < n; i += 997)
                if (got[i] != (float)(i % 1000)) {
                    wrong++;
                    break;
                }
        } else if (rc == ZC_EIO) {
            eio++;
            CHECK(strstr(zc_errmsg(), arr) != NULL);
        } else if (rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM) { /* the bytes of a half-rewritten file */
            corrupt++;
        } else if (other++ < 3) {
            fprintf(stderr, "read: %s: %s\n", zc_errname(rc), zc_errmsg());
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL); /* the writer ran all along */
    printf("%s: %d reads right, %d ZC_EIO, %d ZC_ECORRUPT/ECHECKSUM, %d other, %d wrong; %u faults turned to zeros\n", arr, ok,
           eio, corrupt, other, wrong, map_guard_faults());
    CHECK(wrong == 0 && other == 0 && ok + eio + corrupt > 0);
    free(got);
    zc_zarr_close(a);
    zc_store_close(st);
}

TEST(truncating_writer_never_raises_a_signal)
{
    char dir[] = "/tmp/zc_trunc_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    size_t n = 512 * 1024;
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (float)(i % 1000);
    const char *names[2] = {"plain", "sharded"};
    for (int k = 0; k < 2; k++) {
        zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
        o.ndim = 2;
        o.shape[0] = 512, o.shape[1] = 1024;
        o.chunks[0] = 256, o.chunks[1] = 512; /* 512 KiB decoded: mapped */
        if (k) o.shards[0] = 256, o.shards[1] = 1024;
        o.dtype = ZC_FLOAT32;
        o.codec = "blosc:lz4:5:shuffle";
        zc_zarr *a;
        CHECK_OK(zc_zarr_create(st, names[k], &o, &a));
        CHECK_OK(zc_zarr_write(a, NULL, v, n * sizeof *v));
        zc_zarr_close(a);
    }
    zc_store_close(st);
    free(v);
    truncating_writer(dir, "plain", 4, false);
    truncating_writer(dir, "sharded", 2, true);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Bombs: chunks whose codec claims a huge decoded size (the stored bytes of
 * a 4 MiB chunk of another array, under each codec, put where a 16 KiB
 * chunk belongs), a chunk object far larger than any encoding of its chunk,
 * and metadata nested 100,000 deep: each refused with an error, the memory
 * allocated meanwhile bounded (a few chunks, not the claims). */
TEST(bombs_are_refused_within_bounds)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://bombs", 0, &st));
    const char *codecs[] = {"zstd:1", "blosc:lz4:5:shuffle", "gzip:1", "lz4", "bz2:1", "zlib:1",
                            "blosc:zstd:1:bitshuffle"};
    size_t nbig = 1024 * 1024;
    float *big = malloc(nbig * sizeof *big);
    for (size_t i = 0; i < nbig; i++) big[i] = 1.0f;
    for (size_t k = 0; k < sizeof codecs / sizeof codecs[0]; k++) {
        zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
        o.ndim = 2;
        o.shape[0] = o.shape[1] = 1024;
        o.chunks[0] = o.chunks[1] = 1024; /* the 4 MiB chunk whose bytes are the bomb */
        o.dtype = ZC_FLOAT32;
        o.codec = codecs[k];
        o.overwrite = 1;
        zc_zarr *b, *a;
        CHECK_OK(zc_zarr_create(st, "big", &o, &b));
        CHECK_OK(zc_zarr_write(b, NULL, big, nbig * sizeof *big));
        zc_zarr_close(b);
        o.chunks[0] = o.chunks[1] = 64; /* 16 KiB chunks */
        CHECK_OK(zc_zarr_create(st, "small", &o, &a));
        void *bytes;
        size_t n;
        CHECK_OK(store_get(st, "big/c/0/0", &bytes, &n));
        CHECK_OK(store_put(st, "small/c/0/0", bytes, n));
        zc_free(bytes);
        static float out[64 * 64];
        size_t base = zc__alloc_current();
        zc__alloc_reset_peak();
        zc_range r[2] = {{0, 64, 1}, {0, 64, 1}};
        int rc = zc_zarr_read(a, r, out, sizeof out);
        CHECK(rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM);
        CHECK(strstr(zc_errmsg(), "small/c/0/0") != NULL);
        size_t peak = zc__alloc_peak() - base;
        if (peak > ((size_t)1 << 20)) fprintf(stderr, "%s: a bomb took %zu bytes\n", codecs[k], peak);
        CHECK(peak <= ((size_t)1 << 20));
        zc_zarr_close(a);
    }
    free(big);
    /* 64 MiB stored where 16 KiB decode: refused before it is read */
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 1;
    o.shape[0] = 4096;
    o.chunks[0] = 4096;
    o.dtype = ZC_FLOAT32;
    o.overwrite = 1;
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "huge", &o, &a));
    size_t hn = (size_t)64 << 20;
    char *junk = calloc(hn, 1);
    CHECK_OK(store_put(st, "huge/c/0", junk, hn));
    free(junk);
    static float out[4096];
    size_t base = zc__alloc_current();
    zc__alloc_reset_peak();
    CHECK_ERR(zc_zarr_read(a, NULL, out, sizeof out), ZC_ECORRUPT, "more than any encoding");
    CHECK(zc__alloc_peak() - base < ((size_t)1 << 20));
    zc_zarr_close(a);
    /* metadata nested 100,000 deep (attributes): refused, no stack overflow */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 400);
    int len = sprintf(deep, "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"uint8\","
                            "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
                            "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
                            "\"codecs\":[{\"name\":\"bytes\"}],\"attributes\":{\"a\":");
    for (size_t i = 0; i < depth; i++) deep[len++] = '[';
    for (size_t i = 0; i < depth; i++) deep[len++] = ']';
    strcpy(deep + len, "}}");
    put_text(st, "deep/zarr.json", deep);
    free(deep);
    zc_zarr *d = NULL;
    int rc = zc_zarr_open(st, "deep", &d);
    CHECK(rc == ZC_EFORMAT && strstr(zc_errmsg(), "deep/zarr.json"));
    zc_zarr_close(d);
    zc_store_close(st);
}

#include <sys/stat.h>
/* Stats of a grid of 9·10^18 chunks (valid metadata: 1-element chunks) count
 * what is stored by listing it, not by probing every key; 20,000 stored
 * chunk files among other files are counted exactly with constant memory. */
TEST(stats_of_a_huge_grid_list_what_is_stored)
{
    char dir[] = "/tmp/zc_stats_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = o.shape[1] = 3000000000LL;
    o.chunks[0] = o.chunks[1] = 1;
    o.dtype = ZC_UINT8;
    o.codec = "none";
    zc_zarr *a;
    CHECK_OK(zc_zarr_create(st, "g", &o, &a));
    char path[700];
    snprintf(path, sizeof path, "%s/g/c", dir);
    CHECK(mkdir(path, 0777) == 0);
    snprintf(path, sizeof path, "%s/g/c/2999999999", dir);
    CHECK(mkdir(path, 0777) == 0);
    int n = 20000;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/g/c/2999999999/%d", dir, i * 7);
        FILE *f = fopen(path, "wb");
        if (f) {
            fputc(i & 0xff, f);
            fclose(f);
        }
    }
    snprintf(path, sizeof path, "%s/g/c/notachunk", dir); /* not counted: no chunk key */
    FILE *f = fopen(path, "wb");
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/g/c/3000000000", dir); /* outside the grid */
    CHECK(mkdir(path, 0777) == 0);
    snprintf(path, sizeof path, "%s/g/c/3000000000/0", dir);
    f = fopen(path, "wb");
    if (f) fclose(f);
    zc_zarr_stats_t s;
    size_t base = zc__alloc_current();
    zc__alloc_reset_peak();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_OK(zc_zarr_stats(a, &s));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(s.chunks_stored == n && s.bytes_stored == n && s.chunks_total == 9000000000000000000LL);
    CHECK(zc__alloc_peak() - base < ((size_t)256 << 10));
    printf("stats over %d stored chunks of a 9e18 grid: %.2f s\n", n,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    unsigned char v[2];
    zc_range r[2] = {{2999999999LL, 3000000000LL, 1}, {13, 15, 1}};
    CHECK_OK(zc_zarr_read(a, r, v, 2));
    CHECK(v[0] == 0 && v[1] == 2); /* chunk 14 = 2 * 7 holds byte 2; chunk 13 is missing: fill */
    zc_zarr_close(a);
    zc_store_close(st);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* zc_zarr_codec_spec gives back the spec an array was created with (the
 * compressor and crc32c, in the format asked), of the inner chunks when
 * sharded; filters are dropped; a stored v2 fixture's compressor too. */
TEST(codec_spec_of_array)
{
    static const struct {
        int format, sharded;
        const char *spec, *as2, *as3;
    } C[] = {
        {3, 0, "zstd:5", "zstd:5", "zstd:5"},
        {3, 0, "gzip:1,crc32c", "gzip:1", "gzip:1,crc32c"},
        {3, 1, "blosc:zstd:3:bitshuffle,crc32c", "blosc:zstd:3:bitshuffle", "blosc:zstd:3:bitshuffle,crc32c"},
        {2, 0, "blosc:lz4:5:shuffle", "blosc:lz4:5:shuffle", "blosc:lz4:5:shuffle"},
        {2, 0, "lz4:4", "lz4:4", "lz4:4"},
        {2, 0, "bz2:2", "bz2:2", "bz2:2"},
        {2, 0, "none", "none", "none"},
        {3, 0, "zlib", "zlib:5", "zlib:5"},
    };
    zc_store *st;
    CHECK_OK(zc_store_open("memory://cspec", 0, &st));
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
        o.zarr_format = C[i].format;
        o.ndim = 1;
        o.shape[0] = 64;
        o.chunks[0] = 8;
        if (C[i].sharded) o.shards[0] = 32;
        o.dtype = ZC_INT32;
        o.codec = C[i].spec;
        o.overwrite = 1;
        zc_zarr *a;
        CHECK_OK(zc_zarr_create(st, "a", &o, &a));
        char *s2 = NULL, *s3 = NULL;
        CHECK_OK(zc_zarr_codec_spec(a, 2, &s2));
        CHECK_OK(zc_zarr_codec_spec(a, 3, &s3));
        if (!s2 || !s3 || strcmp(s2, C[i].as2) || strcmp(s3, C[i].as3))
            CHECK(!fprintf(stderr, "%s: got %s / %s\n", C[i].spec, s2 ? s2 : "NULL", s3 ? s3 : "NULL"));
        zc_free(s2);
        zc_free(s3);
        CHECK_ERR(zc_zarr_codec_spec(a, 4, &s2), ZC_EINVAL, "zarr_format");
        CHECK_ERR(zc_zarr_codec_spec(a, 3, NULL), ZC_EINVAL, "NULL");
        zc_zarr_close(a);
    }
    zc_store_close(st);
    /* a v2 fixture with a filter before its compressor: the filter is not carried */
    CHECK_OK(zc_store_open(ZC_TEST_DATA "/zarrita/v2/data.zarr", 0, &st));
    zc_zarr *a;
    char *s = NULL;
    CHECK_OK(zc_zarr_open(st, "1d.contiguous.delta.i2", &a));
    CHECK_OK(zc_zarr_codec_spec(a, 3, &s));
    CHECK(s && !strcmp(s, "zlib:1"));
    zc_free(s);
    zc_zarr_close(a);
    zc_store_close(st);
}
