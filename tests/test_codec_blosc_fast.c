/* tests/test_codec_blosc_fast.c — the in-place blosc1 block decoder
 * (codec/blosc_fast.c) against libblosc: every typesize 1..17, no shuffle and
 * byte shuffle, split and unsplit blocks, short last blocks, buffers below 128
 * items; declines for what it does not handle; corrupt streams never crash. */
#include <blosc.h>
#include <lz4.h>
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

/* float32-like items whose byte planes compress very differently, as in
 * measured data: bytes 0-1 random (stored as is), byte 2 `kind` 0 slowly
 * varying with noise (a modest ratio: liblz4's partial decoder), 1 segments
 * repeating with periods 1..40 between short random runs (highly compressed:
 * lz4_decode_upto's overlapping and 8/16-byte match copies), byte 3 nearly
 * constant (lz4_decode_upto, one long match). */
static void fill_planes(unsigned char *p, size_t items, int kind)
{
    size_t i = 0;
    while (i < items) {
        size_t len = 20 + rnd() % 600, period = 1 + rnd() % 40;
        bool random_run = kind == 1 && rnd() % 4 == 0;
        if (random_run) len = 1 + rnd() % 40;
        for (size_t k = 0; k < len && i < items; k++, i++) {
            p[4 * i] = (unsigned char)rnd();
            p[4 * i + 1] = (unsigned char)rnd();
            if (kind == 0) p[4 * i + 2] = (unsigned char)(i / 300 + (rnd() % 8 == 0 ? rnd() % 3 : 0));
            else p[4 * i + 2] = random_run || k < period ? (unsigned char)rnd() : p[4 * (i - period) + 2];
            p[4 * i + 3] = rnd() % 5000 == 0 ? 0x44 : 0x43;
        }
    }
}

/* codec_blosc_fast_scatter(_part) on chunks of (16, 64, 128) float32-like
 * items in blocks of two 64 x 128 slices (each split in 4 byte planes), random boxes:
 * planes are decoded only as far as the selection goes in each block; the
 * whole selection matches, a call for one block puts exactly that block's
 * selected items in place and writes nothing else, and corrupt or cut streams
 * never write outside the selection. */
TEST(blosc_fast_scatter_part_planes)
{
    enum { D0 = 16, D1 = 64, D2 = 128, TS = 4 };
    size_t n = (size_t)D0 * D1 * D2 * TS, bs = 2 * D1 * D2 * TS, nb = D0 / 2;
    unsigned char *src = malloc(n), *c = malloc(n + 64), *tmp = malloc(n), *bad = malloc(n + 64);
    int ratio_low = 0, ratio_high = 0, rounds_done = 0;
    for (int kind = 0; kind < 2; kind++) {
        fill_planes(src, n / TS, kind);
        /* libblosc 1.21 makes blocks of typesize x the forced size (at least 64 KiB) */
        int cl = blosc_compress_ctx(5, BLOSC_SHUFFLE, TS, n, src, c, n + 64, "lz4", (int)bs / TS, 1);
        CHECK(cl > 0 && !(c[2] & 0x12) && le32(c + 8) == bs);
        if (cl <= 0 || le32(c + 8) != bs) continue;
        for (size_t j = 0; j < nb; j++) { /* which decoder each stream goes to */
            size_t at = le32(c + 16 + 4 * j), each = bs / TS;
            for (int k = 0; k < TS; k++) {
                size_t s = le32(c + at);
                ratio_high += s < each / 8;
                ratio_low += s >= each / 8 && s < each;
                at += 4 + s;
            }
        }
        for (int round = 0; round < 150; round++) {
            int64_t lo[3], cnt[3], dim[3] = {D0, D1, D2}, cs[3] = {D1 * D2 * TS, D2 * TS, TS};
            for (int d = 0; d < 3; d++) {
                int64_t minc = d == 2 ? 16 : 1;
                lo[d] = (int64_t)(rnd() % (uint64_t)(dim[d] - minc + 1));
                cnt[d] = minc + (int64_t)(rnd() % (uint64_t)(dim[d] - lo[d] - minc + 1));
            }
            int64_t ds[3] = {cnt[1] * cnt[2] * TS, cnt[2] * TS, TS}, ss[3];
            for (int d = 0; d < 3; d++) ss[d] = cnt[d] > 1 ? cs[d] : 0;
            int64_t off = lo[0] * cs[0] + lo[1] * cs[1] + lo[2] * cs[2];
            size_t on = (size_t)(cnt[0] * ds[0]);
            unsigned char *want = malloc(on), *out = malloc(on + 64), *blk = malloc(on);
            for (int64_t a = 0; a < cnt[0]; a++)
                for (int64_t b = 0; b < cnt[1]; b++)
                    for (int64_t e = 0; e < cnt[2]; e++) {
                        size_t at = (size_t)(off + a * cs[0] + b * cs[1] + e * cs[2]), o = (size_t)(a * ds[0] + b * ds[1] + e * TS);
                        memcpy(want + o, src + at, TS);
                        memset(blk + o, (int)(at / bs), TS);
                    }
            memset(out, 0xcc, on + 64);
            CHECK(codec_blosc_fast_scatter(c, (size_t)cl, n, TS, tmp, out, ds, ss, cnt, 3, off, false) == 1);
            CHECK(!memcmp(out, want, on));
            /* one block alone: its items, nothing else */
            size_t j = (size_t)(lo[0] / 2) + rnd() % 2;
            if (j >= nb) j = nb - 1;
            memset(out, 0xcc, on + 64);
            CHECK(codec_blosc_fast_scatter_part(c, (size_t)cl, n, TS, tmp, out, ds, ss, cnt, 3, off, rnd() % 2, j, j) == 1);
            size_t wrong = 0;
            for (size_t k = 0; k < on; k++) wrong += blk[k] == (unsigned char)j ? out[k] != want[k] : out[k] != 0xcc;
            for (size_t k = on; k < on + 64; k++) wrong += out[k] != 0xcc;
            CHECK(wrong == 0);
            /* every block, last first: the whole selection */
            memset(out, 0xcc, on + 64);
            for (size_t q = nb; q-- > 0;)
                CHECK(codec_blosc_fast_scatter_part(c, (size_t)cl, n, TS, tmp, out, ds, ss, cnt, 3, off, false, q, q) == 1);
            CHECK(!memcmp(out, want, on));
            /* corrupt or cut streams: 0 or 1, never a byte outside the selection */
            memcpy(bad, c, (size_t)cl);
            size_t table = 16 + 4 * nb;
            if (round % 2) {
                for (int k = 0; k < 4; k++) bad[table + rnd() % ((size_t)cl - table)] = (unsigned char)rnd();
            } else { /* a stream length cut: its decoding runs out of input */
                size_t at = le32(c + 16 + 4 * j) + (rnd() % 2 ? 4 + le32(c + le32(c + 16 + 4 * j)) : 0);
                size_t s = le32(bad + at);
                if (s > 8) for (int b = 0; b < 4; b++) bad[at + b] = (unsigned char)((s / 2) >> (8 * b));
            }
            memset(out, 0xcc, on + 64);
            int r = codec_blosc_fast_scatter(bad, (size_t)cl, n, TS, tmp, out, ds, ss, cnt, 3, off, false);
            CHECK(r == 0 || r == 1);
            for (size_t k = on; k < on + 64; k++) CHECK(out[k] == 0xcc);
            r = codec_blosc_fast_scatter_part(bad, (size_t)cl, n, TS, tmp, out, ds, ss, cnt, 3, off, false, j, j);
            CHECK(r == 0 || r == 1);
            for (size_t k = on; k < on + 64; k++) CHECK(out[k] == 0xcc);
            free(want);
            free(out);
            free(blk);
            rounds_done++;
        }
    }
    CHECK(rounds_done == 300);
    CHECK(ratio_low >= 8 && ratio_high >= 16); /* both decoders had streams to do */
    free(src);
    free(c);
    free(tmp);
    free(bad);
}

/* codec_lz4_decode_upto against the input of LZ4_compress_default, for data
 * with matches of every offset 1..40 and long runs, every stop, dst with and
 * without room past the block (the byte-wise copies near its end); cut and
 * corrupt blocks never read or write outside their buffers (ASan build). */
TEST(lz4_decode_upto_stops)
{
    int checked = 0;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + rnd() % 5000;
        unsigned char *src = malloc(n), *got = malloc(n);
        size_t i = 0;
        while (i < n) {
            size_t len = 1 + rnd() % 300, period = 1 + rnd() % 40;
            bool lits = rnd() % 3 == 0;
            for (size_t k = 0; k < len && i < n; k++, i++)
                src[i] = lits || k < period || i < period ? (unsigned char)rnd() : src[i - period];
        }
        int bound = LZ4_compressBound((int)n);
        unsigned char *c = malloc((size_t)bound);
        int cl = LZ4_compress_default((const char *)src, (char *)c, (int)n, bound);
        CHECK(cl > 0);
        for (int k = 0; k < 20; k++) {
            size_t want = k == 0 ? n : 1 + rnd() % n;
            memset(got, 0xcc, n);
            ptrdiff_t r = codec_lz4_decode_upto(c, (size_t)cl, got, n, want);
            CHECK(r >= (ptrdiff_t)want && r <= (ptrdiff_t)n);
            if (r >= (ptrdiff_t)want && memcmp(got, src, want)) {
                fprintf(stderr, "n %zu want %zu differs\n", n, want);
                CHECK(0);
            }
            checked++;
        }
        /* cut short: fewer bytes than wanted or -1, never past the buffers */
        size_t cut = (size_t)cl / 2;
        unsigned char *cc = malloc(cut ? cut : 1);
        memcpy(cc, c, cut);
        ptrdiff_t r = codec_lz4_decode_upto(cc, cut, got, n, n);
        CHECK(r < (ptrdiff_t)n || (size_t)cl == cut);
        free(cc);
        for (int k = 0; k < 5; k++) {
            unsigned char *bad = malloc((size_t)cl);
            memcpy(bad, c, (size_t)cl);
            bad[rnd() % (size_t)cl] = (unsigned char)rnd();
            r = codec_lz4_decode_upto(bad, (size_t)cl, got, n, 1 + rnd() % n);
            CHECK(r >= -1 && r <= (ptrdiff_t)n);
            free(bad);
        }
        free(src);
        free(got);
        free(c);
    }
    CHECK(checked == 200 * 20);
}
