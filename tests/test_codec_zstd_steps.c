/* tests/test_codec_zstd_steps.c — codec_zstd_decode_steps (codec/zstd.c), the
 * block-at-a-time zstd decode zarr/read.c puts rows in place with: the same
 * bytes as ZSTD_decompress for one and several frames, levels, sizes and
 * step sizes; steps that grow and end on the total; stopping at a byte
 * decodes at least up to it (and a frame with a checksum is decoded whole and
 * checked); cut, corrupt, oversized, undersized and non-zstd input give the right errors,
 * never a crash (ASan build). */
#include <stdbool.h>
#include <stdint.h>
#include <zstd.h>

#include "codec/zstd.h"
#include "harness.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct {
    size_t calls, last;
    bool grew; /* every call had more than the one before */
} steps;

static void on_step(void *ctx, size_t done)
{
    steps *s = ctx;
    if (s->calls && done <= s->last) s->grew = false;
    s->calls++;
    s->last = done;
}

/* Compressible bytes: float-like ramps with noise in the low bytes. */
static void fill(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i % 4 == 0 ? rnd() : i % 4 == 3 ? i / 4096 : (i / 64) ^ (rnd() % 8));
}

static size_t compress(unsigned char *out, size_t cap, const unsigned char *src, size_t n, int level, bool checksum,
                       int frames)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t at = 0, per = (n + (size_t)frames - 1) / (size_t)frames;
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
    for (size_t o = 0; o < n; o += per) {
        size_t len = n - o < per ? n - o : per;
        size_t r = ZSTD_compress2(c, out + at, cap - at, src + o, len);
        CHECK(!ZSTD_isError(r));
        if (ZSTD_isError(r)) break;
        at += r;
    }
    ZSTD_freeCCtx(c);
    return at;
}

TEST(zstd_steps_match_one_shot)
{
    static const size_t sizes[] = {1, 1000, 131072, 131073, 600000, 2100000};
    static const size_t everys[] = {1, 65536, 131072, (size_t)1 << 30};
    int cases = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int level = 1; level <= 5; level += 4)
            for (int frames = 1; frames <= 3; frames++)
                for (int ck = 0; ck < 2; ck++) {
                    size_t n = sizes[si], cap = ZSTD_compressBound(n) + 64;
                    unsigned char *src = malloc(n), *c = malloc(cap), *out = malloc(n + 16);
                    fill(src, n);
                    size_t cn = compress(c, cap, src, n, level, ck, frames);
                    size_t every = everys[(size_t)cases % 4], got = 0;
                    steps st = {0, 0, true};
                    memset(out, 0xee, n + 16);
                    CHECK_OK(codec_zstd_decode_steps(c, cn, out, n, n, every, on_step, &st, &got));
                    CHECK(got == n && !memcmp(out, src, n) && out[n] == 0xee);
                    CHECK(st.calls >= 1 && st.last == n && st.grew);
                    if (every == 1 && n > 200000) CHECK(st.calls >= n / 131072); /* a call per block at least */
                    /* stop early: at least that much decoded, all of it right */
                    for (int k = 0; k < 4; k++) {
                        size_t stop = (size_t)(rnd() % n) + 1;
                        st = (steps){0, 0, true};
                        memset(out, 0xee, n + 16);
                        CHECK_OK(codec_zstd_decode_steps(c, cn, out, n, stop, 131072, on_step, &st, &got));
                        CHECK(got >= stop && got <= n && !memcmp(out, src, got) && st.last == got && st.grew);
                        if (ck) CHECK(got == n); /* a checksum is checked: the frame decoded whole */
                    }
                    cases++;
                    free(src);
                    free(c);
                    free(out);
                }
    CHECK(cases == 6 * 2 * 3 * 2);
}

TEST(zstd_steps_bad_input)
{
    size_t n = 700000, cap = ZSTD_compressBound(n), got;
    unsigned char *src = malloc(n), *c = malloc(cap), *bad = malloc(cap), *out = malloc(n);
    fill(src, n);
    size_t cn = compress(c, cap, src, n, 3, true, 1);
    steps st = {0, 0, true};
    /* too small a destination: the frame header says so */
    CHECK_ERR(codec_zstd_decode_steps(c, cn, out, n - 1, n - 1, 65536, on_step, &st, &got), ZC_ECORRUPT,
              "more than");
    /* frames of fewer bytes than expected, decoded to their end */
    unsigned char *big = malloc(n + 100);
    CHECK_ERR(codec_zstd_decode_steps(c, cn, big, n + 100, n + 100, 65536, on_step, &st, &got), ZC_ECORRUPT,
              "decodes to 700000 bytes, expected 700100");
    CHECK_ERR(codec_zstd_decode_steps(c, cn, big, n + 100, 10, 65536, on_step, &st, &got), ZC_ECORRUPT,
              "decodes to"); /* a checksum: decoded to the end */
    free(big);
    /* cut short, anywhere */
    for (int k = 0; k < 20; k++) {
        size_t cut = (size_t)(rnd() % cn);
        CHECK_ERR(codec_zstd_decode_steps(c, cut, out, n, n, 65536, on_step, &st, &got), ZC_ECORRUPT, NULL);
    }
    CHECK_ERR(codec_zstd_decode_steps(c, 0, out, n, n, 65536, on_step, &st, &got), ZC_ECORRUPT, "not a zstd frame");
    /* not zstd */
    memcpy(bad, c, cn);
    bad[0] ^= 0xff;
    CHECK_ERR(codec_zstd_decode_steps(bad, cn, out, n, n, 65536, on_step, &st, &got), ZC_ECORRUPT, "not a zstd frame");
    /* the checksum */
    memcpy(bad, c, cn);
    bad[cn - 1] ^= 0x01;
    CHECK_ERR(codec_zstd_decode_steps(bad, cn, out, n, 1000, 65536, on_step, &st, &got), ZC_ECHECKSUM, NULL);
    /* random corruption: an error or bytes, never a crash or a write past cap */
    for (int k = 0; k < 300; k++) {
        memcpy(bad, c, cn);
        for (int f = 0; f < 3; f++) bad[rnd() % cn] = (unsigned char)rnd();
        int rc = codec_zstd_decode_steps(bad, cn, out, n, n, 65536, on_step, &st, &got);
        CHECK(rc == 0 || rc == ZC_ECORRUPT || rc == ZC_ECHECKSUM);
    }
    free(src);
    free(c);
    free(bad);
    free(out);
}
