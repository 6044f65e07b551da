/* tests/test_codec_blosc_fast.c — the in-place blosc1 block decoder
 * (codec/blosc_fast.c) against libblosc: every typesize 1..17, no shuffle and
 * byte shuffle, split and unsplit blocks, short last blocks, buffers below 128
 * items; declines for what it does not handle; corrupt streams never crash. */
#include <blosc.h>
#include <stdint.h>

#include "codec/blosc_fast.h"
#include "core/alloc.h"
#include "harness.h"

static uint64_t rng = 0x853c49e6748fea9bull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void fill(unsigned char *p, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++)
        p[i] = kind == 0 ? (unsigned char)(i / 7 ^ (rnd() % 50 == 0 ? rnd() % 4 : 0))
             : kind == 1 ? (unsigned char)rnd()                                  /* incompressible */
                         : (unsigned char)((i % 13) * (rnd() % 3 == 0));          /* mixed */
}

static size_t le32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (size_t)p[3] << 24; }

TEST(blosc_fast_matches_libblosc)
{
    static const size_t sizes[] = {100, 1000, 4096, 40000, 163840, 1000003};
    static const size_t forced[] = {0, 16384, 65536};
    int done = 0, declined = 0;
    for (size_t ts = 1; ts <= 17; ts++)
        for (int shuffle = 0; shuffle <= 1; shuffle++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (size_t fi = 0; fi < 3; fi++)
                    for (int kind = 0; kind < 3; kind++) {
                        if (ts > 8 && (si == 5 || kind == 1)) continue; /* keep it quick */
                        size_t n = sizes[si] / ts * ts + (si % 2) * (ts > 1 ? ts - 1 : 0); /* some not a multiple */
                        unsigned char *src = malloc(n), *c = malloc(n + 16), *want = malloc(n), *got = malloc(n);
                        fill(src, n, kind);
                        int cl = blosc_compress_ctx(5, shuffle, ts, n, src, c, n + 16, "lz4", forced[fi], 1);
                        CHECK(cl > 0);
                        CHECK(blosc_decompress_ctx(c, want, n, 1) == (int)n);
                        CHECK(!memcmp(want, src, n));
                        size_t bs = le32(c + 8), nb = (n + bs - 1) / bs;
                        memset(got, 0xcc, n);
                        int r = codec_blosc_fast_blocks(c, (size_t)cl, got, 0, nb - 1);
                        if (c[2] & 0x2) {
                            CHECK(r == 0); /* plain copies are blosc.c's job */
                            declined++;
                        } else {
                            CHECK(r == 1);
                            if (r == 1 && memcmp(got, want, n)) {
                                fprintf(stderr, "ts %zu shuffle %d n %zu bs %zu flags %x differs\n", ts, shuffle, n,
                                        bs, c[2]);
                                CHECK(0);
                            }
                            done++;
                            /* a single block, in place */
                            size_t j = (size_t)(rnd() % nb), b0 = j * bs, b1 = b0 + bs < n ? b0 + bs : n;
                            memset(got, 0xcc, n);
                            CHECK(codec_blosc_fast_blocks(c, (size_t)cl, got, j, j) == 1);
                            CHECK(!memcmp(got + b0, want + b0, b1 - b0));
                            if (b0) CHECK(got[b0 - 1] == 0xcc);
                            if (b1 < n) CHECK(got[b1] == 0xcc);
                        }
                        free(src);
                        free(c);
                        free(want);
                        free(got);
                    }
    CHECK(done > 600);
    CHECK(declined > 0);
}

TEST(blosc_fast_declines_other_kinds)
{
    size_t n = 100000;
    unsigned char *src = malloc(n), *c = malloc(n + 16), *got = malloc(n);
    fill(src, n, 0);
    const char *cnames[] = {"blosclz", "zstd", "zlib", "lz4"};
    for (int k = 0; k < 4; k++) {
        int shuffle = k == 3 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
        int cl = blosc_compress_ctx(5, shuffle, 4, n, src, c, n + 16, cnames[k], 0, 1);
        CHECK(cl > 0);
        size_t bs = le32(c + 8);
        CHECK(codec_blosc_fast_blocks(c, (size_t)cl, got, 0, (n - 1) / bs) == 0);
    }
    /* lz4 + shuffle: handled; wrong sizes or block numbers decline */
    int cl = blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, n, src, c, n + 16, "lz4", 16384, 1);
    size_t bs = le32(c + 8), nb = (n + bs - 1) / bs;
    CHECK(codec_blosc_fast_blocks(c, (size_t)cl, got, 0, nb - 1) == 1 && !memcmp(got, src, n));
    CHECK(codec_blosc_fast_blocks(c, (size_t)cl - 1, got, 0, nb - 1) == 0);
    CHECK(codec_blosc_fast_blocks(c, (size_t)cl, got, 0, nb) == 0);
    CHECK(codec_blosc_fast_blocks(c, 10, got, 0, 0) == 0);
    free(src);
    free(c);
    free(got);
}

TEST(blosc_fast_corrupt_streams)
{
    size_t n = 200000;
    unsigned char *src = malloc(n), *c = malloc(n + 16), *bad = malloc(n + 16), *got = malloc(n);
    fill(src, n, 2);
    int cl = blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, n, src, c, n + 16, "lz4", 16384, 1);
    CHECK(cl > 0 && !(c[2] & 0x2));
    size_t bs = le32(c + 8), nb = (n + bs - 1) / bs;
    for (int round = 0; round < 2000; round++) {
        memcpy(bad, c, (size_t)cl);
        int flips = 1 + (int)(rnd() % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = 16 + (size_t)(rnd() % ((size_t)cl - 16));
            bad[at] = (unsigned char)rnd();
        }
        int r = codec_blosc_fast_blocks(bad, (size_t)cl, got, 0, nb - 1);
        CHECK(r == 0 || r == 1); /* and no crash or overflow (ASan build) */
    }
    free(src);
    free(c);
    free(bad);
    free(got);
}

/* A header's blocksize above the decoded size (from a corrupt chunk) means one
 * block of nbytes: the unshuffle buffer is sized by that, not by the 2 GiB
 * the header claims. */
TEST(blosc_fast_blocksize_above_nbytes)
{
    enum { NB = 400 }; /* 100 int32: fewer than 128 items, so never split */
    unsigned char orig[NB], comp[NB + 64], out[NB];
    fill(orig, NB, 0);
    int clen = blosc_compress_ctx(5, 1, 4, NB, orig, comp, sizeof comp, "lz4", 0, 1);
    CHECK(clen > 0 && le32(comp + 8) == NB && !(comp[2] & 0x2));
    if (clen <= 0 || le32(comp + 8) != NB || (comp[2] & 0x2)) return;
    comp[8] = comp[9] = comp[10] = 0xff;
    comp[11] = 0x7f;
    zc__alloc_reset_peak();
    CHECK(codec_blosc_fast_blocks(comp, (size_t)clen, out, 0, 0) == 1);
    CHECK(!memcmp(out, orig, NB));
    CHECK(zc__alloc_peak() < ((size_t)1 << 20));
}

/* codec_blosc_fast_scatter over chunks of many blocks: random boxes (steps on
 * the outer dims, rows of 16+ items) of a (8, 64, 150) chunk of 2-, 4- and
 * 8-byte items in blocks of 64 KiB (what libblosc 1.21 makes of a small forced
 * size; rows cut by block boundaries, short last blocks) and in one block, into
 * a padded destination, with and
 * without non-temporal stores, aligned and not: every selected item lands in
 * place, nothing else in dst is written. Corrupt bytes in a chunk never crash
 * (ASan build) and leave the outside of the selection untouched. */
TEST(blosc_fast_scatter_many_blocks)
{
    enum { D0 = 8, D1 = 64, D2 = 150, P = 3 }; /* P: padding of dst on each side of each dim */
    static const size_t tss[] = {2, 4, 8}, forced[] = {1024, 4096, 0};
    int done = 0, multi = 0;
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t fi = 0; fi < 3; fi++) {
            size_t ts = tss[ti], n = (size_t)D0 * D1 * D2 * ts;
            unsigned char *src = malloc(n), *c = malloc(n + 16), *tmp = malloc(n), *bad = malloc(n + 16);
            fill(src, n, (int)(fi % 3 == 2 ? 2 : 0));
            int cl = blosc_compress_ctx(5, BLOSC_SHUFFLE, (int)ts, n, src, c, n + 16, "lz4", forced[fi], 1);
            CHECK(cl > 0 && !(c[2] & 0x2));
            size_t bs = le32(c + 8);
            if (bs < n) multi++;
            for (int round = 0; round < 60; round++) {
                int64_t lo[3], cnt[3], step[3], dim[3] = {D0, D1, D2}, sstride[3], dstride[3], odim[3];
                for (int d = 0; d < 3; d++) {
                    step[d] = d < 2 && rnd() % 3 == 0 ? 1 + (int64_t)(rnd() % 3) : 1;
                    lo[d] = d == 2 ? (int64_t)(rnd() % (D2 - 16 + 1)) : (int64_t)(rnd() % (uint64_t)dim[d]);
                    int64_t maxc = (dim[d] - lo[d] + step[d] - 1) / step[d];
                    cnt[d] = d == 2 ? 16 + (int64_t)(rnd() % (uint64_t)(dim[d] - lo[d] - 16 + 1))
                                    : 1 + (int64_t)(rnd() % (uint64_t)maxc);
                    odim[d] = cnt[d] + 2 * P;
                }
                int64_t cs[3] = {D1 * D2 * (int64_t)ts, D2 * (int64_t)ts, (int64_t)ts};
                dstride[2] = (int64_t)ts;
                dstride[1] = odim[2] * dstride[2];
                dstride[0] = odim[1] * dstride[1];
                for (int d = 0; d < 3; d++) sstride[d] = cnt[d] > 1 ? cs[d] * step[d] : 0;
                int64_t src_off = lo[0] * cs[0] + lo[1] * cs[1] + lo[2] * cs[2];
                size_t on = (size_t)(odim[0] * dstride[0]) + 16;
                unsigned char *out = malloc(on), *want = malloc(on), *mask = calloc(on, 1);
                size_t shift = rnd() % 2 ? 0 : ts; /* dst not 16-aligned: the plain stores */
                memset(out, 0xcc, on);
                memset(want, 0xcc, on);
                unsigned char *o = out + shift + (size_t)(P * (dstride[0] + dstride[1] + dstride[2]));
                unsigned char *w = want + shift + (size_t)(P * (dstride[0] + dstride[1] + dstride[2]));
                for (int64_t a = 0; a < cnt[0]; a++)
                    for (int64_t b = 0; b < cnt[1]; b++)
                    {
                        memcpy(w + a * dstride[0] + b * dstride[1], src + src_off + a * sstride[0] + b * sstride[1],
                               (size_t)cnt[2] * ts);
                        memset(mask + (w - want) + a * dstride[0] + b * dstride[1], 1, (size_t)cnt[2] * ts);
                    }
                bool stream = rnd() % 2;
                int r = codec_blosc_fast_scatter(c, (size_t)cl, n, ts, tmp, o, dstride, sstride, cnt, 3, src_off,
                                                 stream);
                CHECK(r == 1);
                if (r == 1 && memcmp(out, want, on)) {
                    fprintf(stderr, "ts %zu bs %zu lo %lld,%lld,%lld cnt %lld,%lld,%lld stream %d differs\n", ts, bs,
                            (long long)lo[0], (long long)lo[1], (long long)lo[2], (long long)cnt[0],
                            (long long)cnt[1], (long long)cnt[2], stream);
                    CHECK(0);
                }
                done += r == 1;
                /* corrupt bytes after the header: 0 or 1, and never a write outside the selection */
                memcpy(bad, c, (size_t)cl);
                for (int k = 0; k < 3; k++) bad[16 + rnd() % ((size_t)cl - 16)] = (unsigned char)rnd();
                memset(out, 0xcc, on);
                r = codec_blosc_fast_scatter(bad, (size_t)cl, n, ts, tmp, o, dstride, sstride, cnt, 3, src_off, stream);
                CHECK(r == 0 || r == 1);
                size_t outside = 0;
                for (size_t k = 0; k < on; k++) outside += !mask[k] && out[k] != 0xcc;
                CHECK(outside == 0);
                free(out);
                free(want);
                free(mask);
            }
            free(src);
            free(c);
            free(tmp);
            free(bad);
        }
    CHECK(done == 3 * 3 * 60);
    CHECK(multi == 6);
}
