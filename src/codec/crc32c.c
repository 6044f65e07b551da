/* codec/crc32c.c — the "crc32c" checksum codec (Zarr v3 "crc32c", numcodecs id
 * "crc32c") and the CRC-32C function.
 *
 * Layout: the data followed by the 4-byte little-endian CRC-32C (Castagnoli,
 * reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF) of
 * the data. numcodecs' CRC32C puts it at the end too (location "end").
 *
 * The CRC uses the SSE4.2 crc32 instruction when the CPU has it, else
 * slicing-by-8 tables built once. The instruction has a latency of 3 cycles and
 * a throughput of 1, so large inputs run three independent streams over three
 * adjacent STRIPE-byte blocks and join them: the CRC register update is linear,
 * so processing B from state s gives shift(s, |B|) ^ crc_from_zero(B), where
 * shift multiplies by x^(8|B|) mod P — a linear map on 32 bits, done with four
 * byte-indexed tables per shift distance (built once, from multmodp). */
#include <pthread.h>
#include <string.h>

#include "codec/compress_common.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define HAVE_X86_CRC 1
#endif

#define POLY 0x82F63B78u
#define STRIPE 4096 /* bytes per stream per round of the 3-stream loop */

static uint32_t table[8][256];
static uint32_t shift1[4][256], shift2[4][256]; /* multiply by x^(8*STRIPE), x^(16*STRIPE) */
static int use_hw;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* a*b mod P, reflected bit order (x^0 is bit 31), as in zlib's crc32.c */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = (uint32_t)1 << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
    }
    return p;
}

/* x^(8n) mod P */
static uint32_t xpow8n(size_t n)
{
    uint32_t sq = (uint32_t)1 << 23; /* x^8 */
    uint32_t p = (uint32_t)1 << 31;  /* 1 */
    for (; n; n >>= 1, sq = multmodp(sq, sq))
        if (n & 1) p = multmodp(sq, p);
    return p;
}

static void init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
    uint32_t k1 = xpow8n(STRIPE), k2 = xpow8n(2 * STRIPE);
    for (int b = 0; b < 4; b++)
        for (uint32_t i = 0; i < 256; i++) {
            shift1[b][i] = multmodp(k1, i << (8 * b));
            shift2[b][i] = multmodp(k2, i << (8 * b));
        }
#ifdef HAVE_X86_CRC
    __builtin_cpu_init();
    use_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static inline uint32_t shift_by(const uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

/* Slicing-by-8 on the inverted CRC. */
static uint32_t crc_sw(uint32_t c, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
        n--;
    }
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= c;
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
            table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
            table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

#ifdef HAVE_X86_CRC
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8(c, *p++);
        n--;
    }
#ifdef __x86_64__
    while (n >= 3 * STRIPE) {
        uint64_t c0 = c, c1 = 0, c2 = 0;
        for (size_t i = 0; i < STRIPE; i += 8) {
            uint64_t v0, v1, v2;
            memcpy(&v0, p + i, 8);
            memcpy(&v1, p + STRIPE + i, 8);
            memcpy(&v2, p + 2 * STRIPE + i, 8);
            c0 = _mm_crc32_u64(c0, v0);
            c1 = _mm_crc32_u64(c1, v1);
            c2 = _mm_crc32_u64(c2, v2);
        }
        c = shift_by(shift2, (uint32_t)c0) ^ shift_by(shift1, (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * STRIPE;
        n -= 3 * STRIPE;
    }
    uint64_t c64 = c;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c64 = _mm_crc32_u64(c64, v);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
#endif
    while (n >= 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        c = _mm_crc32_u32(c, v);
        p += 4;
        n -= 4;
    }
    while (n--) c = _mm_crc32_u8(c, *p++);
    return c;
}
#endif

uint32_t codec_crc32c_update(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&init_once, init);
    uint32_t c = ~crc;
#ifdef HAVE_X86_CRC
    if (use_hw) return ~crc_hw(c, p, n);
#endif
    return ~crc_sw(c, p, n);
}

/* Test hook: the table implementation, to check it against the hardware one. */
uint32_t codec_crc32c_sw(uint32_t crc, const void *p, size_t n);
uint32_t codec_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&init_once, init);
    return ~crc_sw(~crc, p, n);
}

static const codec_b2b_cksum_algo algo = {
    .v3_name = "crc32c", .v2_id = "crc32c", .update = codec_crc32c_update, .init = 0,
    .default_end = true, .v3_plain = true,
};

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    return codec_b2b_cksum_create(&algo, cfg, ctx, state);
}

const codec_type codec_crc32c = {
    .version = 1,
    .name = "crc32c",
    .v2_id = "crc32c",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = codec_b2b_cksum_destroy,
    .decode = codec_b2b_cksum_decode,
    .decoded_size = codec_b2b_cksum_decoded_size,
    .encode = codec_b2b_cksum_encode,
    .to_json = codec_b2b_cksum_to_json,
};
