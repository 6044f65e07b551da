/* codec/crc32c.c — the "crc32c" checksum codec (Zarr v3 "crc32c", numcodecs id
 * "crc32c") and the CRC-32C function.
 *
 * Layout: the data followed by the 4-byte little-endian CRC-32C (Castagnoli,
 * reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF) of
 * the data. numcodecs' CRC32C puts it at the end too (location "end").
 *
 * The CRC uses the SSE4.2 crc32 instruction when the CPU has it (~8 B/cycle
 * chain), else slicing-by-8 tables built once. */
#include <pthread.h>
#include <string.h>

#include "codec/compress_common.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define HAVE_X86_CRC 1
#endif

static uint32_t table[8][256];
static int use_hw;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
#ifdef HAVE_X86_CRC
    __builtin_cpu_init();
    use_hw = __builtin_cpu_supports("sse4.2");
#endif
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

static uint32_t sum(const void *p, size_t n) { return codec_crc32c_update(0, p, n); }

static const codec_b2b_cksum_algo algo = {
    .v3_name = "crc32c", .v2_id = "crc32c", .sum = sum, .default_end = true, .v3_plain = true,
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
