/* tests/test_zarr_partial.c — reading parts of chunks: blosc chunks decode only
 * the blocks a selection needs (codec_blosc_decode_range), uncompressed chunks
 * are read as byte ranges (whole contiguous chunks straight into the caller's
 * buffer), and everything else (order F, transpose, big-endian bytes, other
 * codecs) falls back to decoding whole chunks. Every read is compared with a
 * byte-level reference; corrupt block offsets and wrong-size chunks must give
 * ZC_ECORRUPT naming the chunk, never a crash (also run under ASan). */
#include <blosc.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/blosc_fast.h" /* codec_blosc_decode_range */
#include "codec/codec.h"
#include "harness.h"
#include "store/fs.h"    /* store_fs_set_map_bytes */
#include "store/store.h" /* test-only: write raw objects */
#include "zarr/read.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* Compressible bytes: slow ramps with some noise. */
static void fill_bytes(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i / 7 + seed) ^ (rnd() % 50 == 0 ? rnd() % 4 : 0));
}

/* ------------------------------------------------ codec_blosc_decode_range */

static void check_range(const unsigned char *comp, size_t clen, const unsigned char *orig, size_t nbytes, size_t lo,
                        size_t hi, unsigned char *out, int *partial)
{
    size_t dlo = 0, dhi = 0;
    memset(out, 0xa5, nbytes);
    int rc = codec_blosc_decode_range(comp, clen, out, nbytes, lo, hi, &dlo, &dhi);
    CHECK_OK(rc);
    if (rc) return;
    if (dhi == 0) return; /* declined: the caller decodes whole */
    CHECK(dlo <= lo && dhi >= hi && dhi <= nbytes);
    if (memcmp(out + dlo, orig + dlo, dhi - dlo)) {
        fprintf(stderr, "range %zu..%zu (decoded %zu..%zu) of %zu differs\n", lo, hi, dlo, dhi, nbytes);
        CHECK(0);
    }
    if (dhi - dlo < nbytes) (*partial)++;
}

TEST(blosc_range_all_shuffles_typesizes)
{
    static const int typesizes[] = {1, 2, 3, 4, 8, 16};
    /* c-blosc 1.21 honours small forced blocksizes only for typesize >= 2 (else
     * 64 KiB): buffers of typesize 1 are made bigger to hold several blocks */
    static const size_t blocksizes[] = {0, 128, 256, 1000};
    int partial = 0, cases = 0;
    for (size_t ti = 0; ti < sizeof typesizes / sizeof typesizes[0]; ti++)
        for (int shuffle = 0; shuffle <= 2; shuffle++)
            for (size_t bi = 0; bi < sizeof blocksizes / sizeof blocksizes[0]; bi++) {
                int ts = typesizes[ti];
                size_t nbytes = ts == 1 ? 200001 : (size_t)ts * 45001; /* a short last block */
                unsigned char *orig = malloc(nbytes), *comp = malloc(nbytes + BLOSC_MAX_OVERHEAD),
                              *out = malloc(nbytes);
                fill_bytes(orig, nbytes, (unsigned)ti);
                int clen = blosc_compress_ctx(5, shuffle, (size_t)ts, nbytes, orig, comp,
                                              nbytes + BLOSC_MAX_OVERHEAD, "lz4", blocksizes[bi], 1);
                CHECK(clen > 0);
                size_t bs = (size_t)(comp[8] | comp[9] << 8 | comp[10] << 16 | (size_t)comp[11] << 24);
                /* block edges: exactly one block, across an edge, the last byte */
                for (size_t k = 0; k * bs < nbytes; k++) {
                    size_t e = k * bs;
                    size_t end = e + bs < nbytes ? e + bs : nbytes;
                    check_range(comp, (size_t)clen, orig, nbytes, e, end, out, &partial);
                    if (e > 0) check_range(comp, (size_t)clen, orig, nbytes, e - 1, e + 1, out, &partial);
                    check_range(comp, (size_t)clen, orig, nbytes, e, e + 1, out, &partial);
                    check_range(comp, (size_t)clen, orig, nbytes, end - 1, end, out, &partial);
                }
                for (int r = 0; r < 30; r++) {
                    size_t a = (size_t)rnd_in(0, (int64_t)nbytes - 1), b = (size_t)rnd_in(0, (int64_t)nbytes - 1);
                    if (a > b) { size_t t = a; a = b; b = t; }
                    check_range(comp, (size_t)clen, orig, nbytes, a, b + 1, out, &partial);
                }
                check_range(comp, (size_t)clen, orig, nbytes, 0, nbytes, out, &partial);
                cases++;
                free(orig);
                free(comp);
                free(out);
            }
    CHECK(cases == 6 * 3 * 4);
    CHECK(partial > 500); /* most ranges decoded less than the whole buffer */

    /* a plain-copy buffer (incompressible, clevel 0) is sliced */
    size_t nbytes = 5000;
    unsigned char *orig = malloc(nbytes), *comp = malloc(nbytes + BLOSC_MAX_OVERHEAD), *out = malloc(nbytes);
    for (size_t i = 0; i < nbytes; i++) orig[i] = (unsigned char)rnd();
    int clen = blosc_compress_ctx(0, 0, 1, nbytes, orig, comp, nbytes + BLOSC_MAX_OVERHEAD, "lz4", 0, 1);
    CHECK(clen == (int)nbytes + BLOSC_MAX_OVERHEAD && (comp[2] & BLOSC_MEMCPYED));
    partial = 0;
    check_range(comp, (size_t)clen, orig, nbytes, 17, 4000, out, &partial);
    CHECK(partial == 1);
    /* the plain copy must hold what it declares */
    size_t dlo, dhi;
    CHECK_ERR(codec_blosc_decode_range(comp, (size_t)clen - 10, out, nbytes, 17, 4000, &dlo, &dhi), ZC_ECORRUPT, NULL);
    free(orig);
    free(comp);
    free(out);
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static uint32_t get_le32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

TEST(blosc_range_corrupt)
{
    size_t nbytes = 1 << 20, dlo, dhi;
    unsigned char *orig = malloc(nbytes), *comp = malloc(nbytes + BLOSC_MAX_OVERHEAD), *bad = malloc(nbytes + 64),
                  *out = malloc(nbytes);
    fill_bytes(orig, nbytes, 3);
    int clen = blosc_compress_ctx(5, 1, 4, nbytes, orig, comp, nbytes + BLOSC_MAX_OVERHEAD, "lz4", 16384, 1);
    size_t bs = get_le32(comp + 8), nblocks = nbytes / bs;
    CHECK(clen > 0 && !(comp[2] & BLOSC_MEMCPYED) && nbytes % bs == 0 && nblocks >= 8);
    if (clen <= 0 || (comp[2] & BLOSC_MEMCPYED) || nblocks < 8) return;
    size_t n = (size_t)clen;
    unsigned char *b5 = bad + 16 + 4 * 5; /* start of block 5 in the table */
    /* block start past the end, inside the header/table, and at the very end */
    uint32_t starts[] = {0xfffffff0u, (uint32_t)n, 3, (uint32_t)(16 + 4 * nblocks - 1)};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        memcpy(bad, comp, n);
        put_le32(b5, starts[i]);
        CHECK_ERR(codec_blosc_decode_range(bad, n, out, nbytes, 5 * bs + 10, 5 * bs + 20, &dlo, &dhi), ZC_ECORRUPT,
                  "block 5");
        /* blocks not needed are not looked at */
        CHECK_OK(codec_blosc_decode_range(bad, n, out, nbytes, 2 * bs, 3 * bs, &dlo, &dhi));
        CHECK(dhi == 3 * bs && !memcmp(out + 2 * bs, orig + 2 * bs, bs));
    }
    /* a split length inside block 5 that runs past the buffer; then garbage */
    memcpy(bad, comp, n);
    put_le32(bad + get_le32(b5), 0x7ffffff0u);
    CHECK_ERR(codec_blosc_decode_range(bad, n, out, nbytes, 5 * bs, 5 * bs + 1, &dlo, &dhi), ZC_ECORRUPT, NULL);
    for (int round = 0; round < 200; round++) {
        memcpy(bad, comp, n);
        size_t at = get_le32(b5) + (size_t)rnd_in(0, 64);
        for (int k = 0; k < 4; k++) bad[at + (size_t)k] = (unsigned char)rnd();
        int rc = codec_blosc_decode_range(bad, n, out, nbytes, 5 * bs, 6 * bs, &dlo, &dhi);
        CHECK(rc == 0 || rc == ZC_ECORRUPT); /* never a crash (ASan build) */
    }
    /* header declaring another size; truncated buffer */
    CHECK_ERR(codec_blosc_decode_range(comp, n, out, nbytes - 4, 0, 10, &dlo, &dhi), ZC_ECORRUPT, "expected");
    CHECK_ERR(codec_blosc_decode_range(comp, n - 1, out, nbytes, 0, 10, &dlo, &dhi), ZC_ECORRUPT, NULL);
    CHECK_ERR(codec_blosc_decode_range(comp, 10, out, nbytes, 0, 10, &dlo, &dhi), ZC_ECORRUPT, NULL);
    free(orig);
    free(comp);
    free(bad);
    free(out);
}

/* ---------------------------------------------------------- through zarr/ */

/* Reads of the tests below: zc_zarr_read, or with ZARR_READ_MAP (files
 * mapped, the loader's way) where a test sets read_flags. */
static unsigned read_flags;
static int rd(zc_zarr *a, const zc_range *sel, void *dst, size_t n)
{
    return read_flags ? zarr_read_flags(a, sel, dst, n, read_flags) : zc_zarr_read(a, sel, dst, n);
}

/* Reference: a dense C-order 3-d array of isz-byte elements. */
typedef struct {
    int64_t shape[3];
    size_t isz;
    unsigned char *data;
} ref3;

static size_t ref_extract(const ref3 *r, const zc_range *sel, unsigned char *out)
{
    size_t k = 0;
    for (int64_t i = sel[0].start; i < sel[0].stop; i += sel[0].step)
        for (int64_t j = sel[1].start; j < sel[1].stop; j += sel[1].step)
            for (int64_t l = sel[2].start; l < sel[2].stop; l += sel[2].step) {
                size_t at = (size_t)((i * r->shape[1] + j) * r->shape[2] + l) * r->isz;
                memcpy(out + k, r->data + at, r->isz);
                k += r->isz;
            }
    return k;
}

static void random_sel(const ref3 *r, zc_range *sel)
{
    for (int d = 0; d < 3; d++) {
        int64_t a = rnd_in(0, r->shape[d] - 1), b = rnd_in(a + 1, r->shape[d]);
        if (rnd() % 4 == 0) { a = 0; b = r->shape[d]; }
        sel[d] = (zc_range){a, b, rnd() % 4 ? 1 : rnd_in(2, 4)};
    }
}

/* Write the reference into the array, then read random regions (and the whole
 * array) and compare. */
static void check_reads(zc_zarr *a, ref3 *r, int rounds)
{
    size_t total = (size_t)(r->shape[0] * r->shape[1] * r->shape[2]) * r->isz;
    unsigned char *want = malloc(total), *got = malloc(total);
    for (int round = 0; round <= rounds; round++) {
        zc_range sel[3] = {{0, r->shape[0], 1}, {0, r->shape[1], 1}, {0, r->shape[2], 1}};
        if (round < rounds) random_sel(r, sel);
        size_t n = ref_extract(r, sel, want);
        memset(got, 0x5a, n);
        CHECK_OK(rd(a, sel, got, n));
        if (memcmp(got, want, n)) {
            fprintf(stderr, "round %d: [%lld:%lld:%lld, %lld:%lld:%lld, %lld:%lld:%lld] differs\n", round,
                    (long long)sel[0].start, (long long)sel[0].stop, (long long)sel[0].step, (long long)sel[1].start,
                    (long long)sel[1].stop, (long long)sel[1].step, (long long)sel[2].start, (long long)sel[2].stop,
                    (long long)sel[2].step);
            CHECK(0);
            break;
        }
    }
    free(want);
    free(got);
}

static void exercise(zc_zarr *a, ref3 *r, int rounds)
{
    size_t total = (size_t)(r->shape[0] * r->shape[1] * r->shape[2]) * r->isz;
    CHECK_OK(zc_zarr_write(a, NULL, r->data, total));
    check_reads(a, r, rounds);
}

static ref3 make_ref(int64_t s0, int64_t s1, int64_t s2, size_t isz)
{
    ref3 r = {{s0, s1, s2}, isz, NULL};
    size_t n = (size_t)(s0 * s1 * s2) * isz;
    r.data = malloc(n);
    fill_bytes(r.data, n, (unsigned)isz);
    return r;
}

#define SMALL "[11,37,29]", "[4,16,29]"
#define LARGE "[9,70,700]", "[5,40,700]" /* chunks of 140 KB (int8) to 1.1 MB (float64): several blosc blocks */

static void put_meta(zc_store *st, const char *key, const char *shape, const char *chunks, const char *dtype,
                     const char *order, const char *compressor)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"zarr_format\":2,\"shape\":%s,\"chunks\":%s,\"dtype\":\"%s\",\"compressor\":%s,"
             "\"fill_value\":0,\"filters\":null,\"order\":\"%s\"}",
             shape, chunks, dtype, compressor, order);
    CHECK_OK(store_put(st, key, text, strlen(text)));
}

static const char *const v2_dtypes[] = {"|i1", "<i2", "<i4", "<f8", "|V3"};
static const size_t v2_sizes[] = {1, 2, 4, 8, 3};

TEST(zarr_blosc_partial_regions)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://partial_blosc", ZC_STORE_CREATE, &st));
    int narr = 0;
    /* small chunks (7 KB at most: blosc stores them as plain copies), large ones
     * (compressed blocks), C and F order (F: a transpose, decoded whole) */
    for (int large = 0; large < 2; large++)
    for (size_t ti = 0; ti < sizeof v2_dtypes / sizeof v2_dtypes[0]; ti++)
        for (int shuffle = 0; shuffle <= 2; shuffle++)
            for (int fo = 0; fo < 2; fo++) {
                char path[64], key[80], comp[160];
                snprintf(path, sizeof path, "b%d_%zu_%d_%d", large, ti, shuffle, fo);
                snprintf(key, sizeof key, "%s/.zarray", path);
                snprintf(comp, sizeof comp,
                         "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":%d,\"blocksize\":%d}", shuffle,
                         large ? 16384 : 256);
                if (large) put_meta(st, key, LARGE, v2_dtypes[ti], fo ? "F" : "C", comp);
                else put_meta(st, key, SMALL, v2_dtypes[ti], fo ? "F" : "C", comp);
                zc_zarr *a = NULL;
                CHECK_OK(zc_zarr_open(st, path, &a));
                if (!a) continue;
                ref3 r = large ? make_ref(9, 70, 700, v2_sizes[ti]) : make_ref(11, 37, 29, v2_sizes[ti]);
                exercise(a, &r, large ? 12 : 25);
                free(r.data);
                zc_zarr_close(a);
                narr++;
            }
    CHECK(narr == 2 * 5 * 3 * 2);
    /* v3, plain and sharded, blosc with small blocks */
    for (int sharded = 0; sharded < 2; sharded++) {
        zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
        o.ndim = 3;
        o.shape[0] = 9; o.shape[1] = 70; o.shape[2] = 700;
        o.chunks[0] = 5; o.chunks[1] = 40; o.chunks[2] = 700; /* 560 KB: parts read in two steps */
        if (sharded) { o.shards[0] = 10; o.shards[1] = 80; o.shards[2] = 700; }
        o.dtype = ZC_FLOAT32;
        o.codec = "[{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":5,"
                  "\"shuffle\":\"shuffle\",\"blocksize\":16384}}]";
        zc_zarr *a = NULL;
        CHECK_OK(zc_zarr_create(st, sharded ? "v3s" : "v3", &o, &a));
        if (!a) continue;
        ref3 r = make_ref(9, 70, 700, 4);
        exercise(a, &r, 30);
        free(r.data);
        zc_zarr_close(a);
    }
    zc_store_close(st);
}

TEST(zarr_blosc_partial_corrupt_block)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://partial_blosc_bad", ZC_STORE_CREATE, &st));
    put_meta(st, "b/.zarray", LARGE, "<i4", "C",
             "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":16384}");
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, "b", &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = make_ref(9, 70, 700, 4);
    exercise(a, &r, 0);
    /* chunk 0.0.0 holds 5 × 40 × 700 int32 = 560,000 bytes in several blocks; break the last one */
    void *data;
    size_t n;
    CHECK_OK(store_get(st, "b/0.0.0", &data, &n));
    unsigned char *p = data;
    size_t bs = get_le32(p + 8), nblocks = (560000 + bs - 1) / bs;
    CHECK(nblocks >= 3 && !(p[2] & BLOSC_MEMCPYED));
    put_le32(p + 16 + 4 * (nblocks - 1), (uint32_t)n + 100);
    CHECK_OK(store_put(st, "b/0.0.0", p, n));
    zc_free(data);
    zc_range first_rows[3] = {{0, 1, 1}, {0, 4, 1}, {0, 700, 1}}; /* bytes 0..11200: block 0 */
    int32_t got[4 * 700], want[4 * 700];
    ref_extract(&r, first_rows, (unsigned char *)want);
    zc_zarr_io_stats_t s0, s1;
    CHECK_OK(zc_zarr_io_stats(a, &s0));
    CHECK_OK(rd(a, first_rows, got, sizeof got));
    CHECK_OK(zc_zarr_io_stats(a, &s1));
    CHECK(!memcmp(got, want, sizeof got));
    /* only the header, the block starts and block 0 were read */
    CHECK(s1.chunks_read - s0.chunks_read == 1 && s1.bytes_read - s0.bytes_read < (int64_t)n / 2);
    zc_range last_rows[3] = {{4, 5, 1}, {36, 40, 1}, {0, 700, 1}}; /* the chunk's last bytes: the last block */
    char needle[32];
    snprintf(needle, sizeof needle, "block %zu", nblocks - 1);
    CHECK_ERR(rd(a, last_rows, got, sizeof got), ZC_ECORRUPT, "b/0.0.0");
    CHECK_ERR(rd(a, last_rows, got, sizeof got), ZC_ECORRUPT, needle);
    size_t all = 9 * 70 * 700 * 4;
    unsigned char *buf = malloc(all);
    CHECK_ERR(rd(a, NULL, buf, all), ZC_ECORRUPT, "b/0.0.0");
    free(buf);
    free(r.data);
    zc_zarr_close(a);
    zc_store_close(st);
}

/* ------------------------------------------------------- uncompressed */

static void uncompressed_cases(const char *url)
{
    zc_store *st;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    /* v2: C and F order (F: transpose, decoded whole), big-endian (not a plain copy) */
    const char *const dtypes[] = {"<i4", ">i4", "|i1", "<f8", "|V3"};
    const size_t sizes[] = {4, 4, 1, 8, 3};
    for (size_t ti = 0; ti < 5; ti++)
        for (int fo = 0; fo < 2; fo++) {
            char path[32], key[48];
            snprintf(path, sizeof path, "n%zu_%d", ti, fo);
            snprintf(key, sizeof key, "%s/.zarray", path);
            put_meta(st, key, SMALL, dtypes[ti], fo ? "F" : "C", "null");
            zc_zarr *a = NULL;
            CHECK_OK(zc_zarr_open(st, path, &a));
            if (!a) continue;
            ref3 r = make_ref(11, 37, 29, sizes[ti]);
            exercise(a, &r, 30);
            free(r.data);
            zc_zarr_close(a);
        }
    /* v3: transpose + bytes, big-endian bytes (both decoded whole) */
    const char *const v3codecs[] = {
        "{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
        "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}",
        "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}",
    };
    for (int k = 0; k < 2; k++) {
        char text[1024], path[16], key[32];
        snprintf(path, sizeof path, "t3_%d", k);
        snprintf(key, sizeof key, "%s/zarr.json", path);
        snprintf(text, sizeof text,
                 "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[11,37,29],\"data_type\":\"int32\","
                 "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,8,29]}},"
                 "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
                 "\"fill_value\":0,\"codecs\":[%s]}",
                 v3codecs[k]);
        CHECK_OK(store_put(st, key, text, strlen(text)));
        zc_zarr *a = NULL;
        CHECK_OK(zc_zarr_open(st, path, &a));
        if (!a) continue;
        ref3 r = make_ref(11, 37, 29, 4);
        exercise(a, &r, 30);
        free(r.data);
        zc_zarr_close(a);
    }
    /* v3 bytes only, plain and sharded */
    for (int k = 0; k < 2; k++) {
        zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
        o.ndim = 3;
        o.shape[0] = 11; o.shape[1] = 37; o.shape[2] = 29;
        o.chunks[0] = 4; o.chunks[1] = 8; o.chunks[2] = 29;
        if (k == 1) { o.shards[0] = 8; o.shards[1] = 16; o.shards[2] = 29; }
        o.dtype = ZC_INT32;
        o.codec = "none";
        char path[16];
        snprintf(path, sizeof path, "v3_%d", k);
        zc_zarr *a = NULL;
        CHECK_OK(zc_zarr_create(st, path, &o, &a));
        if (!a) continue;
        ref3 r = make_ref(11, 37, 29, 4);
        exercise(a, &r, 30);
        free(r.data);
        zc_zarr_close(a);
    }
    zc_store_close(st);
}

TEST(zarr_uncompressed_ranges_memory) { uncompressed_cases("memory://partial_none"); }

TEST(zarr_uncompressed_ranges_file)
{
    char dir[] = "/tmp/zc_partial_XXXXXX", url[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(url, sizeof url, "file://%s", dir);
    uncompressed_cases(url);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(zarr_uncompressed_reads_only_the_range)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://partial_none_io", ZC_STORE_CREATE, &st));
    put_meta(st, "c/.zarray", SMALL, "<i4", "C", "null");
    put_meta(st, "f/.zarray", SMALL, "<i4", "F", "null");
    zc_zarr *c = NULL, *f = NULL;
    CHECK_OK(zc_zarr_open(st, "c", &c));
    CHECK_OK(zc_zarr_open(st, "f", &f));
    if (!c || !f) { zc_store_close(st); return; }
    ref3 r = make_ref(11, 37, 29, 4);
    exercise(c, &r, 0);
    exercise(f, &r, 0);
    zc_zarr_io_stats_t s0, s1;
    /* one element: 4 bytes read from a 7424-byte chunk; two short pieces of two
     * rows: one range each; two long pieces: one range from the first to the last byte */
    zc_range one[3] = {{5, 6, 1}, {20, 21, 1}, {3, 4, 1}}, rows[3] = {{5, 6, 1}, {20, 22, 1}, {1, 3, 1}};
    zc_range long_rows[3] = {{5, 6, 1}, {20, 22, 1}, {0, 20, 1}};
    int32_t lv[40], lwant[40];
    int32_t v[4], want[4];
    CHECK_OK(zc_zarr_io_stats(c, &s0));
    CHECK_OK(rd(c, one, v, 4));
    CHECK_OK(zc_zarr_io_stats(c, &s1));
    CHECK(s1.bytes_read - s0.bytes_read == 4 && s1.chunks_read - s0.chunks_read == 1);
    ref_extract(&r, one, (unsigned char *)want);
    CHECK(v[0] == want[0]);
    CHECK_OK(rd(c, rows, v, 16));
    CHECK_OK(zc_zarr_io_stats(c, &s0));
    CHECK(s0.bytes_read - s1.bytes_read == 2 * 2 * 4);
    ref_extract(&r, rows, (unsigned char *)want);
    CHECK(!memcmp(v, want, 16));
    CHECK_OK(rd(c, long_rows, lv, sizeof lv));
    CHECK_OK(zc_zarr_io_stats(c, &s1));
    CHECK(s1.bytes_read - s0.bytes_read == (29 + 20) * 4);
    ref_extract(&r, long_rows, (unsigned char *)lwant);
    CHECK(!memcmp(lv, lwant, sizeof lv));
    /* order F is a transpose: the whole chunk */
    CHECK_OK(zc_zarr_io_stats(f, &s0));
    CHECK_OK(rd(f, one, v, 4));
    CHECK_OK(zc_zarr_io_stats(f, &s1));
    CHECK(s1.bytes_read - s0.bytes_read == 4 * 16 * 29 * 4);
    ref_extract(&r, one, (unsigned char *)want);
    CHECK(v[0] == want[0]);
    free(r.data);
    zc_zarr_close(c);
    zc_zarr_close(f);
    zc_store_close(st);
}

static void wrong_size_cases(const char *url)
{
    zc_store *st;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    put_meta(st, "w/.zarray", SMALL, "<i4", "C", "null");
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, "w", &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = make_ref(11, 37, 29, 4);
    exercise(a, &r, 0);
    size_t chunk = 4 * 16 * 29 * 4, all = 11 * 37 * 29 * 4;
    unsigned char *big = calloc(1, chunk + 8), *buf = malloc(all);
    zc_range part[3] = {{1, 2, 1}, {3, 4, 1}, {0, 5, 1}};
    int32_t v[5];
    /* too long, too short, empty: a region, a whole chunk, the whole array */
    size_t lens[] = {chunk + 8, chunk - 4, 0};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(store_put(st, "w/0.0.0", big, lens[k]));
        CHECK_ERR(rd(a, part, v, sizeof v), ZC_ECORRUPT, "w/0.0.0");
        zc_range apart[3] = {{1, 3, 1}, {3, 4, 1}, {0, 2, 1}}; /* two ranges far apart */
        CHECK_ERR(rd(a, apart, v, 16), ZC_ECORRUPT, "w/0.0.0");
        zc_range whole[3] = {{0, 4, 1}, {0, 16, 1}, {0, 29, 1}};
        CHECK_ERR(rd(a, whole, buf, chunk), ZC_ECORRUPT, "w/0.0.0");
        CHECK_ERR(rd(a, NULL, buf, all), ZC_ECORRUPT, "w/0.0.0");
    }
    free(big);
    free(buf);
    free(r.data);
    zc_zarr_close(a);
    zc_store_close(st);
}

TEST(zarr_uncompressed_wrong_size)
{
    wrong_size_cases("memory://partial_none_bad");
    char dir[] = "/tmp/zc_partial_XXXXXX", url[64], cmd[96];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(url, sizeof url, "file://%s", dir);
    wrong_size_cases(url);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Chunk objects are read into a per-thread buffer sized for the decoded chunk
 * plus a margin; a bigger object (here a zstd frame followed by a skippable
 * frame of 20,000 bytes) is read again into its own buffer. */
static void larger_than_guess(const char *url)
{
    zc_store *st;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    put_meta(st, "g/.zarray", SMALL, "<i4", "C", "{\"id\":\"zstd\",\"level\":1}");
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, "g", &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = make_ref(11, 37, 29, 4);
    exercise(a, &r, 0);
    const char *keys[] = {"g/0.0.0", "g/1.1.0", "g/2.2.0"};
    for (int k = 0; k < 3; k++) {
        void *data;
        size_t n;
        CHECK_OK(store_get(st, keys[k], &data, &n));
        unsigned char *big = calloc(1, n + 20000);
        memcpy(big, data, n);
        put_le32(big + n, 0x184d2a50u); /* skippable frame: magic, length, bytes */
        put_le32(big + n + 4, 20000 - 8);
        CHECK_OK(store_put(st, keys[k], big, n + 20000));
        zc_free(data);
        free(big);
    }
    check_reads(a, &r, 30);
    free(r.data);
    zc_zarr_close(a);
    zc_store_close(st);
}

TEST(zarr_chunk_larger_than_guess)
{
    larger_than_guess("memory://partial_guess");
    char dir[] = "/tmp/zc_partial_XXXXXX", url[64], cmd[96];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(url, sizeof url, "file://%s", dir);
    larger_than_guess(url);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* ------------------------------------------- one-block chunks, scattered */

/* float32 chunks of one blosc block (lz4, shuffle): parts of them are
 * unshuffled straight into place (codec_blosc_fast_scatter), byte planes
 * stored as is read in place. The data's low bytes are noise (stored planes)
 * and its high bytes smooth (compressed planes); every read must match, and a
 * corrupt stream length must still give ZC_ECORRUPT naming the chunk. */
TEST(zarr_blosc_one_block_scatter)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://partial_scatter", ZC_STORE_CREATE, &st));
    put_meta(st, "s/.zarray", "[7,90,50]", "[2,64,40]", "<f4", "C",
             "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}");
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, "s", &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = {{7, 90, 50}, 4, malloc(7 * 90 * 50 * 4)};
    for (size_t i = 0; i < 7 * 90 * 50; i++) {
        uint32_t v = (uint32_t)(0x3f000000u + (i / 50) * 256) ^ (uint32_t)(rnd() & 0xffff);
        memcpy(r.data + 4 * i, &v, 4);
    }
    exercise(a, &r, 60);
    /* the chunk is one block of 4 split streams, some stored as is, some compressed */
    void *data;
    size_t n;
    CHECK_OK(store_get(st, "s/1.0.0", &data, &n));
    unsigned char *p = data;
    size_t nbytes = get_le32(p + 4), raw = 0, packed = 0, at = get_le32(p + 16);
    CHECK(nbytes == 2 * 64 * 40 * 4 && get_le32(p + 8) >= nbytes && p[3] == 4 && !(p[2] & 0x12));
    for (int k = 0; k < 4 && at + 4 <= n; k++) {
        size_t c = get_le32(p + at);
        if (c == nbytes / 4) raw++;
        else packed++;
        at += 4 + c;
    }
    CHECK(raw >= 1 && packed >= 1);
    /* rows 2..3 of chunk 1.0.0, x 5..45: runs of 35 and 10 items (the latter the plain path) */
    zc_range part[3] = {{2, 4, 1}, {5, 9, 1}, {5, 45, 1}};
    float got[2 * 4 * 40], want[2 * 4 * 40];
    ref_extract(&r, part, (unsigned char *)want);
    CHECK_OK(rd(a, part, got, sizeof got));
    CHECK(!memcmp(got, want, sizeof got));
    /* chunks 4 items wide in a window 10 wide: runs of 4, 4 and 2 items (the
     * short-run loops), all three chunks along the last dim partly selected */
    put_meta(st, "w/.zarray", "[4,40,10]", "[2,16,4]", "<f4", "C",
             "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}");
    zc_zarr *b = NULL;
    CHECK_OK(zc_zarr_open(st, "w", &b));
    if (b) {
        ref3 rw = {{4, 40, 10}, 4, malloc(4 * 40 * 10 * 4)};
        for (size_t i = 0; i < 4 * 40 * 10; i++) {
            uint32_t v = (uint32_t)(0x40000000u + i * 977) ^ (uint32_t)(rnd() & 0xff);
            memcpy(rw.data + 4 * i, &v, 4);
        }
        exercise(b, &rw, 40);
        zc_range win[3] = {{1, 3, 1}, {3, 30, 1}, {0, 10, 1}};
        float gw[2 * 27 * 10], ww[2 * 27 * 10];
        ref_extract(&rw, win, (unsigned char *)ww);
        CHECK_OK(rd(b, win, gw, sizeof gw));
        CHECK(!memcmp(gw, ww, sizeof gw));
        zc_range win2[3] = {{0, 4, 1}, {5, 21, 1}, {1, 8, 1}}; /* runs of 3 and 4 */
        float gw2[4 * 16 * 7], ww2[4 * 16 * 7];
        ref_extract(&rw, win2, (unsigned char *)ww2);
        CHECK_OK(rd(b, win2, gw2, sizeof gw2));
        CHECK(!memcmp(gw2, ww2, sizeof gw2));
        free(rw.data);
        zc_zarr_close(b);
    }
    /* a stream length running past the chunk: corrupt, whichever path sees it first */
    put_le32(p + get_le32(p + 16), (uint32_t)n);
    CHECK_OK(store_put(st, "s/1.0.0", p, n));
    CHECK_ERR(rd(a, part, got, sizeof got), ZC_ECORRUPT, "s/1.0.0");
    zc_free(data);
    free(r.data);
    zc_zarr_close(a);
    zc_store_close(st);
}

/* ------------------------------------------------ mapped shards (file store) */

/* A sharded array in a folder: shards are mapped (store_map) and inner chunks
 * decoded in place. Every read must match the reference; a shard cut short in
 * place after it was mapped and its index cached must give an error, not a
 * fault past the end of the file (the cached mapping is checked against the
 * file's size and mapped again); put back, it reads back. */
TEST(zarr_sharded_mapped_file)
{
    read_flags = ZARR_READ_MAP;
    char dir[] = "/tmp/zc_mapped_XXXXXX", cmd[96];
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    if (!st) return;
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 3;
    o.shape[0] = 8; o.shape[1] = 70; o.shape[2] = 64;
    o.chunks[0] = 1; o.chunks[1] = 16; o.chunks[2] = 16;
    o.shards[0] = 4; o.shards[1] = 32; o.shards[2] = 64;
    o.dtype = ZC_FLOAT32;
    o.codec = "[{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":5,"
              "\"shuffle\":\"shuffle\",\"blocksize\":0}}]";
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_create(st, "m", &o, &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = make_ref(8, 70, 64, 4);
    exercise(a, &r, 40);
    check_reads(a, &r, 20); /* again: every shard index cached, shards mapped */
    /* shard (1, 0, 0) cut to half its size in place */
    char path[128];
    snprintf(path, sizeof path, "%s/m/c/1/0/0", dir);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    void *orig;
    size_t norig;
    CHECK_OK(store_get(st, "m/c/1/0/0", &orig, &norig));
    CHECK(truncate(path, sb.st_size / 2) == 0);
    zc_range in1[3] = {{4, 8, 1}, {0, 32, 1}, {0, 64, 1}};
    size_t nb = 4 * 32 * 64 * 4;
    unsigned char *got = malloc(nb), *want = malloc(nb);
    int rc = rd(a, in1, got, nb);
    CHECK(rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM);
    CHECK(strstr(zc_errmsg(), "m/c/1/0/0") != NULL);
    /* put back (a new file): mapped again, reads back */
    CHECK_OK(store_put(st, "m/c/1/0/0", orig, norig));
    zc_free(orig);
    CHECK_OK(rd(a, in1, got, nb));
    ref_extract(&r, in1, want);
    CHECK(!memcmp(got, want, nb));
    free(got);
    free(want);
    free(r.data);
    zc_zarr_close(a);
    zc_store_close(st);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    read_flags = 0;
}

/* Unsharded chunk files in a folder are mapped (and the store keeps the
 * mappings): a chunk cut short in place after it was mapped gives
 * ZC_ECORRUPT naming it (the file's size is checked before each use of a
 * kept mapping), a removed chunk reads as fill, a corrupt shard index
 * (checksum) fails naming the shard, an absent shard reads as fill. */
TEST(zarr_mapped_files_error_paths)
{
    read_flags = ZARR_READ_MAP;
    char dir[] = "/tmp/zc_mapped2_XXXXXX", cmd[96], path[160];
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    if (!st) return;
    put_meta(st, "v/.zarray", "[6,90,50]", "[2,64,50]", "<f4", "C",
             "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}");
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, "v", &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = make_ref(6, 90, 50, 4);
    exercise(a, &r, 20);
    check_reads(a, &r, 10);
    size_t all = 6 * 90 * 50 * 4;
    unsigned char *got = malloc(all), *want = malloc(all);
    snprintf(path, sizeof path, "%s/v/1.0.0", dir);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    CHECK(truncate(path, sb.st_size / 2) == 0);
    CHECK_ERR(rd(a, NULL, got, all), ZC_ECORRUPT, "v/1.0.0");
    CHECK(unlink(path) == 0);
    CHECK_OK(rd(a, NULL, got, all));
    memcpy(want, r.data, all);
    for (int64_t i = 2; i < 4; i++) /* chunk (1, 0, 0): fill value 0 */
        memset(want + (size_t)(i * 90 * 50) * 4, 0, 64 * 50 * 4);
    CHECK(!memcmp(got, want, all));
    zc_zarr_close(a);
    /* sharded: corrupt index checksum, then the shard removed */
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 3;
    o.shape[0] = 6; o.shape[1] = 90; o.shape[2] = 50;
    o.chunks[0] = 1; o.chunks[1] = 16; o.chunks[2] = 50;
    o.shards[0] = 2; o.shards[1] = 64; o.shards[2] = 50;
    o.dtype = ZC_FLOAT32;
    o.codec = "[{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":5,"
              "\"shuffle\":\"shuffle\",\"blocksize\":0}}]";
    CHECK_OK(zc_zarr_create(st, "s", &o, &a));
    if (a) {
        exercise(a, &r, 10);
        zc_zarr_close(a);
        void *data;
        size_t n;
        CHECK_OK(store_get(st, "s/c/1/0/0", &data, &n));
        ((unsigned char *)data)[n - 1] ^= 0x5a; /* the index's crc32c */
        CHECK_OK(store_put(st, "s/c/1/0/0", data, n));
        zc_free(data);
        CHECK_OK(zc_zarr_open(st, "s", &a));
        CHECK_ERR(rd(a, NULL, got, all), ZC_ECHECKSUM, "s/c/1/0/0");
        CHECK_OK(store_erase(st, "s/c/1/0/0"));
        CHECK_OK(rd(a, NULL, got, all));
        CHECK(!memcmp(got, want, all)); /* shard (1, 0, 0) covers the same rows as chunk (1, 0, 0) above */
        zc_zarr_close(a);
    }
    free(got);
    free(want);
    free(r.data);
    zc_store_close(st);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    read_flags = 0;
}

/* ------------------------------------- plain reads of mapped chunk files */

/* Resident file-backed pages of this process, in bytes (-1 if unknown). */
static long long rss_file(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "RssFile: %lld kB", &kb) == 1) break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Plain zc_zarr_read maps chunk files (zstd, blosc lz4 of several blocks and
 * of one block, uncompressed) and decodes from the page cache: every read matches the
 * reference, edge chunks and missing chunks (fill) included, with and without
 * non-temporal stores into the destination (forced for every read size); a
 * chunk cut short, with corrupt bytes or (uncompressed) one byte too long gives
 * ZC_ECORRUPT naming it; and the
 * pages of chunks read whole are dropped after the read (RssFile does not grow
 * by the mapped bytes, while a ZARR_READ_MAP read keeps them); those of chunks
 * read in part are kept, unless ZARR_READ_DROP or the store's size limit. */
TEST(zarr_plain_read_mapped_chunks)
{
    char dir[] = "/tmp/zc_plainmap_XXXXXX", cmd[96], path[160];
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    if (!st) return;
    static const char *const comps[] = {
        "{\"id\":\"zstd\",\"level\":1}",
        "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":16384}",
        "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
        "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":2,\"blocksize\":0}",
        "null", /* uncompressed: whole chunks not contiguous in dst are copied from the mapping */
    };
    size_t all = 9 * 70 * 700 * 4;
    unsigned char *got = malloc(all), *want = malloc(all);
    for (size_t ci = 0; ci < sizeof comps / sizeof comps[0]; ci++) {
        char name[16], key[40];
        snprintf(name, sizeof name, "p%zu", ci);
        snprintf(key, sizeof key, "%s/.zarray", name);
        put_meta(st, key, LARGE, "<f4", "C", comps[ci]);
        zc_zarr *a = NULL;
        CHECK_OK(zc_zarr_open(st, name, &a));
        if (!a) continue;
        ref3 r = make_ref(9, 70, 700, 4);
        exercise(a, &r, 15);
        zarr_read_set_stream_min(1);
        check_reads(a, &r, 15);
        zarr_read_set_stream_min(0);
        /* chunk (1, 1, 0) (rows 5..8 x 40..69: an edge chunk) removed: fill value 0 */
        snprintf(path, sizeof path, "%s/%s/1.1.0", dir, name);
        CHECK(unlink(path) == 0);
        memcpy(want, r.data, all);
        for (int64_t i = 5; i < 9; i++)
            for (int64_t j = 40; j < 70; j++) memset(want + (size_t)((i * 70 + j) * 700) * 4, 0, 700 * 4);
        for (int stream = 0; stream < 2; stream++) {
            zarr_read_set_stream_min(stream ? 1 : 0);
            memset(got, 0x5a, all);
            CHECK_OK(zc_zarr_read(a, NULL, got, all));
            CHECK(!memcmp(got, want, all));
        }
        zarr_read_set_stream_min(0);
        /* chunk (0, 1, 0) cut short, then with corrupt bytes in its middle */
        void *data;
        size_t n;
        snprintf(key, sizeof key, "%s/0.1.0", name);
        CHECK_OK(store_get(st, key, &data, &n));
        snprintf(path, sizeof path, "%s/%s/0.1.0", dir, name);
        CHECK(truncate(path, (off_t)(n / 2)) == 0);
        CHECK_ERR(zc_zarr_read(a, NULL, got, all), ZC_ECORRUPT, key);
        zarr_read_set_stream_min(1);
        CHECK_ERR(zc_zarr_read(a, NULL, got, all), ZC_ECORRUPT, key);
        zarr_read_set_stream_min(0);
        if (!strcmp(comps[ci], "null")) { /* one byte too many; no corrupt bytes to see */
            unsigned char *longer = malloc(n + 1);
            memcpy(longer, data, n);
            longer[n] = 0;
            CHECK_OK(store_put(st, key, longer, n + 1));
            free(longer);
            CHECK_ERR(zc_zarr_read(a, NULL, got, all), ZC_ECORRUPT, key);
            zc_free(data);
            free(r.data);
            zc_zarr_close(a);
            continue;
        }
        for (size_t k = n / 3; k < n / 3 + 64; k++) ((unsigned char *)data)[k] ^= 0xa5;
        for (size_t k = 16; k < 24; k++) ((unsigned char *)data)[k] = 0xff; /* blosc: block starts */
        if (ci == 0) ((unsigned char *)data)[0] ^= 0xff;                      /* zstd: the frame's magic */
        CHECK_OK(store_put(st, key, data, n));
        int rc = zc_zarr_read(a, NULL, got, all);
        CHECK(rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM);
        CHECK(strstr(zc_errmsg(), key) != NULL);
        zc_free(data);
        free(r.data);
        zc_zarr_close(a);
    }
    free(got);
    free(want);
    /* 8 MiB of noise in zstd chunks of 512 KiB (stored ~ as big): a plain read
     * leaves no more than a little of it resident, a mapped read all of it */
    put_meta(st, "big/.zarray", "[16,256,512]", "[4,128,256]", "<f4", "C", "{\"id\":\"zstd\",\"level\":1}");
    zc_zarr *b = NULL;
    CHECK_OK(zc_zarr_open(st, "big", &b));
    if (b) {
        size_t nb = (size_t)16 * 256 * 512 * 4;
        unsigned char *src = malloc(nb), *out = malloc(nb);
        for (size_t i = 0; i < nb; i++) src[i] = (unsigned char)rnd();
        CHECK_OK(zc_zarr_write(b, NULL, src, nb));
        memset(out, 0, nb); /* its pages resident before measuring */
        long long r0 = rss_file();
        CHECK_OK(zc_zarr_read(b, NULL, out, nb));
        long long r1 = rss_file();
        CHECK(!memcmp(out, src, nb));
        CHECK_OK(zarr_read_flags(b, NULL, out, nb, ZARR_READ_MAP));
        long long r2 = rss_file();
        CHECK(r0 >= 0 && r1 >= 0 && r2 >= 0);
        CHECK(r1 - r0 < (long long)(nb / 8)); /* plain: dropped */
        CHECK(r2 - r1 > (long long)(nb / 2)); /* mapped and kept: the check above can fail */
        CHECK(!memcmp(out, src, nb));
        zc_zarr_close(b);
        /* a part of every chunk (x 1..510 of 0..511): a plain read keeps the
         * pages of chunks read in part, ZARR_READ_DROP does not; kept pages
         * go with their mappings when the store's size limit evicts them */
        zc_range part[3] = {{0, 16, 1}, {0, 256, 1}, {1, 511, 1}};
        size_t pn = (size_t)16 * 256 * 510 * 4;
        for (int mode = 0; mode < 3; mode++) {
            store_fs_set_map_bytes(mode == 2 ? (size_t)1 << 20 : 0);
            zc_store_close(st); /* a new store: no mapping kept from before */
            CHECK_OK(zc_store_open(dir, 0, &st));
            CHECK_OK(zc_zarr_open(st, "big", &b));
            if (!b) break;
            memset(out, 0, pn);
            long long p0 = rss_file();
            CHECK_OK(zarr_read_flags(b, part, out, pn, mode == 1 ? ZARR_READ_DROP : 0));
            long long p1 = rss_file();
            for (size_t t = 0; t < 16 * 256; t++) CHECK(!memcmp(out + t * 510 * 4, src + (t * 512 + 1) * 4, 510 * 4));
            CHECK(p0 >= 0 && p1 >= 0);
            if (mode == 0) CHECK(p1 - p0 > (long long)(nb / 2)); /* kept */
            else CHECK(p1 - p0 < (long long)(nb / 4));          /* dropped, or evicted beyond 1 MiB */
            zc_zarr_close(b);
        }
        store_fs_set_map_bytes(0);
        free(src);
        free(out);
    }
    zc_store_close(st);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* ------------------------------------------------ zstd rows put in place */

/* Chunks whose codecs are zstd alone decode a block at a time, each row put in
 * place while in cache (codec_zstd_decode_steps), and parts stop at their
 * last byte: random regions (steps too: those take the plain path) and whole
 * reads match the reference for v2 little-endian (the fast path), big-endian
 * and delta-filtered chunks (not zstd alone), v3 with a frame checksum
 * (decoded whole and checked) and sharded v3, with and without non-temporal
 * stores. A chunk cut short fails for regions that need its end, a
 * flipped checksum for any region of its chunk. */
TEST(zarr_zstd_rows_in_place)
{
    zc_store *st;
    CHECK_OK(zc_store_open("memory://partial_zstd", ZC_STORE_CREATE, &st));
    static const char *const v2[][2] = {
        {"<f4", "{\"id\":\"zstd\",\"level\":1}"},
        {">f4", "{\"id\":\"zstd\",\"level\":1}"},
        {"<f8", "{\"id\":\"zstd\",\"level\":3}"},
    };
    for (size_t k = 0; k < 3; k++) {
        char name[16], key[40];
        snprintf(name, sizeof name, "z%zu", k);
        snprintf(key, sizeof key, "%s/.zarray", name);
        put_meta(st, key, LARGE, v2[k][0], "C", v2[k][1]);
        zc_zarr *a = NULL;
        CHECK_OK(zc_zarr_open(st, name, &a));
        if (!a) continue;
        ref3 r = make_ref(9, 70, 700, k == 2 ? 8 : 4);
        exercise(a, &r, 30);
        zarr_read_set_stream_min(1);
        check_reads(a, &r, 10);
        zarr_read_set_stream_min(0);
        free(r.data);
        zc_zarr_close(a);
    }
    /* a delta filter before zstd: not zstd alone */
    const char *dmeta = "{\"zarr_format\":2,\"shape\":[9,70,700],\"chunks\":[5,40,700],\"dtype\":\"<i4\","
                        "\"compressor\":{\"id\":\"zstd\",\"level\":1},\"fill_value\":0,"
                        "\"filters\":[{\"id\":\"delta\",\"dtype\":\"<i4\"}],\"order\":\"C\"}";
    CHECK_OK(store_put(st, "d/.zarray", dmeta, strlen(dmeta)));
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, "d", &a));
    if (a) {
        ref3 r = make_ref(9, 70, 700, 4);
        exercise(a, &r, 15);
        free(r.data);
        zc_zarr_close(a);
    }
    /* v3: frames with a checksum, plain and sharded */
    for (int sharded = 0; sharded < 2; sharded++) {
        zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
        o.ndim = 3;
        o.shape[0] = 9; o.shape[1] = 70; o.shape[2] = 700;
        o.chunks[0] = 5; o.chunks[1] = 40; o.chunks[2] = 700;
        if (sharded) { o.shards[0] = 10; o.shards[1] = 80; o.shards[2] = 700; }
        o.dtype = ZC_FLOAT32;
        o.codec = "[{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":true}}]";
        CHECK_OK(zc_zarr_create(st, sharded ? "vs" : "v", &o, &a));
        if (!a) continue;
        ref3 r = make_ref(9, 70, 700, 4);
        exercise(a, &r, 20);
        if (!sharded) {
            /* chunk c/0/0/0: the checksum flipped, then the frame cut short */
            void *data;
            size_t n;
            CHECK_OK(store_get(st, "v/c/0/0/0", &data, &n));
            unsigned char *p = data;
            p[n - 1] ^= 0x40;
            CHECK_OK(store_put(st, "v/c/0/0/0", p, n));
            zc_range first[3] = {{0, 1, 1}, {0, 2, 1}, {0, 700, 1}};
            float got[2 * 700];
            CHECK_ERR(rd(a, first, got, sizeof got), ZC_ECHECKSUM, "v/c/0/0/0");
            p[n - 1] ^= 0x40;
            CHECK_OK(store_put(st, "v/c/0/0/0", p, n / 2));
            zc_range last[3] = {{4, 5, 1}, {38, 40, 1}, {0, 700, 1}};
            CHECK_ERR(rd(a, last, got, sizeof got), ZC_ECORRUPT, "v/c/0/0/0");
            zc_free(data);
        }
        free(r.data);
        zc_zarr_close(a);
    }
    /* v2 without a checksum: a frame cut short fails for a region that needs its end */
    CHECK_OK(zc_zarr_open(st, "z0", &a));
    if (a) {
        void *data;
        size_t n;
        CHECK_OK(store_get(st, "z0/0.0.0", &data, &n));
        CHECK_OK(store_put(st, "z0/0.0.0", data, n * 3 / 4));
        zc_range last[3] = {{4, 5, 1}, {38, 40, 1}, {0, 700, 1}};
        float got[2 * 700];
        CHECK_ERR(rd(a, last, got, sizeof got), ZC_ECORRUPT, "z0/0.0.0");
        size_t all = 9 * 70 * 700 * 4;
        unsigned char *buf = malloc(all);
        CHECK_ERR(rd(a, NULL, buf, all), ZC_ECORRUPT, "z0/0.0.0");
        free(buf);
        zc_free(data);
        zc_zarr_close(a);
    }
    zc_store_close(st);
}

/* ------------------------------------------- small reads: a task per block */

/* Small plain reads of mapped lz4+shuffle chunks on 2 threads (tasks of
 * blosc blocks, zarr/read.c read_split): float32-like data in chunks of
 * (16, 64, 128) (512 KiB) in blocks of 64 KiB (two 64 x 128 slices, four
 * blocks a task) or 256 KiB (one a task), byte planes of very different
 * ratios, decoded only as far as each block's selected items go; random boxes
 * touching 1 to 16 chunks, narrow ones (runs under 16 items: read as usual),
 * strided ones, edge chunks, a missing chunk (fill); a block whose stream
 * length is broken, a block start past the end and a file cut short give
 * ZC_ECORRUPT naming the chunk and write nothing past the selection. */
static void block_tasks_case(const char *dir, int forced)
{
    char meta[200], cmp[160], path[200];
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    if (!st) return;
    enum { S0 = 40, S1 = 150, S2 = 300 };
    snprintf(cmp, sizeof cmp, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":%d}",
             forced);
    snprintf(meta, sizeof meta, "f%d/.zarray", forced);
    put_meta(st, meta, "[40,150,300]", "[16,64,128]", "<f4", "C", cmp);
    snprintf(meta, sizeof meta, "f%d", forced);
    zc_zarr *a = NULL;
    CHECK_OK(zc_zarr_open(st, meta, &a));
    if (!a) { zc_store_close(st); return; }
    ref3 r = make_ref(S0, S1, S2, 4);
    for (size_t i = 0; i < (size_t)S0 * S1 * S2; i++) { /* bytes 0-1 random, 2 slow, 3 nearly constant */
        r.data[4 * i + 2] = (unsigned char)(i / 500 + (rnd() % 8 == 0));
        r.data[4 * i + 3] = rnd() % 3000 ? 0x43 : 0x44;
    }
    size_t all = (size_t)S0 * S1 * S2 * 4;
    CHECK_OK(zc_zarr_write(a, NULL, r.data, all));
    char key0[64], key111[64];
    snprintf(key0, sizeof key0, "f%d/0.0.0", forced);
    snprintf(key111, sizeof key111, "f%d/1.1.1", forced);
    void *data;
    size_t n;
    CHECK_OK(store_get(st, key0, &data, &n));
    unsigned char *p = data;
    size_t bs = get_le32(p + 8), spb = bs / (64 * 128 * 4); /* slices a block */
    CHECK(bs == (size_t)forced * 4 && !(p[2] & 0x12)); /* split blocks */
    zc_free(data);
    unsigned char *want = malloc(all), *got = malloc(all + 64);
    for (int round = 0; round < 300; round++) {
        zc_range sel[3];
        int64_t ext[3] = {1 + rnd_in(0, 19), 1 + rnd_in(0, 90), 1 + rnd_in(0, 200)}, dim[3] = {S0, S1, S2};
        if (round % 5 == 0) ext[2] = rnd_in(1, 15);
        for (int d = 0; d < 3; d++) {
            if (ext[d] > dim[d]) ext[d] = dim[d];
            int64_t lo = rnd_in(0, dim[d] - ext[d]);
            sel[d] = (zc_range){lo, lo + ext[d], d < 2 && round % 7 == 0 ? 2 : 1};
        }
        size_t m = ref_extract(&r, sel, want);
        memset(got, 0x5a, m + 64);
        CHECK_OK(rd(a, sel, got, m));
        if (memcmp(got, want, m)) {
            fprintf(stderr, "bs %zu round %d: [%lld:%lld, %lld:%lld, %lld:%lld] differs\n", bs, round,
                    (long long)sel[0].start, (long long)sel[0].stop, (long long)sel[1].start, (long long)sel[1].stop,
                    (long long)sel[2].start, (long long)sel[2].stop);
            CHECK(0);
            break;
        }
        for (size_t k = m; k < m + 64; k++) CHECK(got[k] == 0x5a);
    }
    /* missing chunk (1, 1, 1): fill value */
    snprintf(path, sizeof path, "%s/%s", dir, key111);
    CHECK(unlink(path) == 0);
    for (int64_t i = 16; i < 32; i++)
        for (int64_t j = 64; j < 128; j++) memset(r.data + (size_t)((i * S1 + j) * S2 + 128) * 4, 0, 128 * 4);
    zc_range box[3] = {{10, 20, 1}, {50, 100, 1}, {100, 200, 1}}; /* 8 chunks, (1, 1, 1) among them */
    size_t m = ref_extract(&r, box, want);
    CHECK_OK(rd(a, box, got, m));
    CHECK(!memcmp(got, want, m));
    /* broken chunks: a stream length (the last block read), a block start
     * (the first), a file cut short */
    zc_range in0[3] = {{4, 12, 1}, {10, 40, 1}, {20, 100, 1}}; /* chunk (0, 0, 0), slices 4..11 */
    size_t jfirst = 4 / spb, jlast = 11 / spb;
    m = ref_extract(&r, in0, want);
    void *orig;
    size_t norig;
    CHECK_OK(store_get(st, key0, &orig, &norig));
    for (int kind = 0; kind < 3; kind++) {
        CHECK_OK(store_get(st, key0, &data, &n));
        p = data;
        if (kind == 0) put_le32(p + get_le32(p + 16 + 4 * jlast), 0x7fffff);
        if (kind == 1) put_le32(p + 16 + 4 * jfirst, (uint32_t)n + 1000);
        CHECK_OK(store_put(st, key0, p, kind == 2 ? n / 2 : n));
        zc_free(data);
        memset(got, 0x5a, m + 64);
        CHECK_ERR(rd(a, in0, got, m), ZC_ECORRUPT, key0);
        for (size_t k = m; k < m + 64; k++) CHECK(got[k] == 0x5a);
        CHECK_OK(store_put(st, key0, orig, norig)); /* whole again */
        CHECK_OK(rd(a, in0, got, m));
        CHECK(!memcmp(got, want, m));
    }
    zc_free(orig);
    free(want);
    free(got);
    free(r.data);
    zc_zarr_close(a);
    zc_store_close(st);
}

TEST(zarr_blosc_block_tasks)
{
    setenv("ZC_NUM_THREADS", "2", 1); /* before the pool exists: blocks shared by two threads */
    char dir[] = "/tmp/zc_blocktasks_XXXXXX", cmd[96];
    CHECK(mkdtemp(dir) != NULL);
    block_tasks_case(dir, 16384); /* 64 KiB blocks (libblosc: typesize x the forced size) */
    block_tasks_case(dir, 65536); /* 256 KiB */
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}
