/* codec/blosc_fast.c — decoding blosc1 blocks without libblosc's per-call
 * setup, for the common case: format version 2, lz4, byte shuffle or none.
 *
 * Why: libblosc 1.x builds a context and allocates three block-sized
 * temporaries on every call (blosc_decompress_ctx, blosc_getitem), and
 * blosc_getitem copies every block it decodes once more. For 4 KiB chunks
 * the setup is a large part of the decode; for partial reads of big chunks
 * the extra copy is. Here each block is decoded straight into place: its
 * splits with LZ4_decompress_safe into the destination (no shuffle) or into a
 * block buffer that is then unshuffled into the destination; with shuffle, a
 * stream stored as is (incompressible byte plane) is unshuffled from the
 * source, not copied first. codec_blosc_fast_scatter unshuffles only the
 * items of a selection, straight into a strided destination, one block at a
 * time (the block's planes stay in cache; blocks without a selected item are
 * skipped), with non-temporal stores when the destination is far bigger than
 * the cache; each block's streams are decoded only as far as the selection
 * goes in it (a block's byte planes are separate lz4 streams, each must be
 * decoded from its start but can stop early: rows in the first part of a
 * block's slices cost a part of the block).
 *
 * Block layout (blosc1, header in blosc.c): block j starts at bstarts[j]; it
 * holds nsplits streams, each a LE32 compressed length then the bytes (a length
 * equal to the stream's decoded size means stored as is). A block is split in
 * `typesize` streams (one per byte of an item, after shuffling) unless header
 * flag 0x10 (no split) is set, the typesize is above 16, the block holds fewer
 * than 128 items, or it is the last, shorter block. Byte shuffle stores byte k
 * of every item together: stream k of a block of m = size / typesize items
 * holds bytes k, k + ts, ...; the last size % typesize bytes stay in place.
 *
 * Anything else (other compressors, bit shuffle, other versions) and anything
 * that does not add up (a stream running past the buffer, a length that does
 * not decode to the expected size) returns 0: the caller then uses libblosc,
 * which decodes the buffer or reports it corrupt. */
#include <lz4.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "codec/blosc_fast.h"
#include "core/alloc.h"
#include "zcube.h"

#define FLAG_SHUFFLE 0x1
#define FLAG_MEMCPYED 0x2
#define FLAG_BITSHUFFLE 0x4
#define FLAG_RESERVED 0x8 /* unused by c-blosc 1.x (blosc2: delta): leave such buffers to libblosc */
#define FLAG_NOSPLIT 0x10
#define MAX_SPLITS 16
#define MIN_ITEMS 128
#define STACK_BLOCK ((size_t)64 << 10)
#define SCATTER_MIN_RUN 16 /* items: shorter runs take the whole-chunk path */

static size_t le32(const unsigned char *p)
{
    return (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
/* unshuffle_items' 4-byte loop, 32 items at a time with AVX2 (byte unpacks
 * work within 128-bit lanes: items 0-3 and 16-19 come out together, put
 * back in order with a lane permute). Returns the first item not done. */
__attribute__((target("avx2"))) static size_t unshuffle4_avx2(unsigned char *dst, const unsigned char *const *p,
                                                               size_t i, size_t end, bool nt)
{
    const unsigned char *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
    for (; i + 32 <= end; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(p0 + i)), b = _mm256_loadu_si256((const __m256i *)(p1 + i));
        __m256i c = _mm256_loadu_si256((const __m256i *)(p2 + i)), d = _mm256_loadu_si256((const __m256i *)(p3 + i));
        __m256i ab0 = _mm256_unpacklo_epi8(a, b), ab1 = _mm256_unpackhi_epi8(a, b);
        __m256i cd0 = _mm256_unpacklo_epi8(c, d), cd1 = _mm256_unpackhi_epi8(c, d);
        __m256i o0 = _mm256_unpacklo_epi16(ab0, cd0), o1 = _mm256_unpackhi_epi16(ab0, cd0); /* 0-3|16-19, 4-7|20-23 */
        __m256i o2 = _mm256_unpacklo_epi16(ab1, cd1), o3 = _mm256_unpackhi_epi16(ab1, cd1); /* 8-11|24-27, 12-15|28-31 */
        unsigned char *o = dst + 4 * i;
        if (nt) { /* o is 32-byte aligned */
            _mm256_stream_si256((__m256i *)o, _mm256_permute2x128_si256(o0, o1, 0x20));
            _mm256_stream_si256((__m256i *)(o + 32), _mm256_permute2x128_si256(o2, o3, 0x20));
            _mm256_stream_si256((__m256i *)(o + 64), _mm256_permute2x128_si256(o0, o1, 0x31));
            _mm256_stream_si256((__m256i *)(o + 96), _mm256_permute2x128_si256(o2, o3, 0x31));
        } else {
            _mm256_storeu_si256((__m256i *)o, _mm256_permute2x128_si256(o0, o1, 0x20));
            _mm256_storeu_si256((__m256i *)(o + 32), _mm256_permute2x128_si256(o2, o3, 0x20));
            _mm256_storeu_si256((__m256i *)(o + 64), _mm256_permute2x128_si256(o0, o1, 0x31));
            _mm256_storeu_si256((__m256i *)(o + 96), _mm256_permute2x128_si256(o2, o3, 0x31));
        }
    }
    return i;
}

static bool has_avx2(void)
{
    static int state; /* 0 unknown, 1 yes, 2 no; a race only computes it twice */
    int v = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (!v) {
        v = __builtin_cpu_supports("avx2") && !getenv("ZC_NO_AVX2") ? 1 : 2;
        __atomic_store_n(&state, v, __ATOMIC_RELAXED);
    }
    return v == 1;
}
#endif

/* Items i0 .. i0 + cnt of a shuffled block of ts byte planes:
 * dst[(i - i0) * ts + k] = p[k][i]. */
static void unshuffle_items(unsigned char *dst, const unsigned char *const *p, size_t ts, size_t i0, size_t cnt)
{
    size_t i = i0, end = i0 + cnt;
    dst -= i0 * ts;
#if defined(__SSE2__)
    if (ts == 4) {
        const unsigned char *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
#if defined(HAVE_AVX2_PATH)
        if (end - i >= 32 && has_avx2()) i = unshuffle4_avx2(dst, p, i, end, false);
#endif
        for (; i + 16 <= end; i += 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(p0 + i)), b = _mm_loadu_si128((const __m128i *)(p1 + i));
            __m128i c = _mm_loadu_si128((const __m128i *)(p2 + i));
            __m128i d = _mm_loadu_si128((const __m128i *)(p3 + i));
            __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
            __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
            _mm_storeu_si128((__m128i *)(dst + 4 * i), _mm_unpacklo_epi16(ab0, cd0));
            _mm_storeu_si128((__m128i *)(dst + 4 * i + 16), _mm_unpackhi_epi16(ab0, cd0));
            _mm_storeu_si128((__m128i *)(dst + 4 * i + 32), _mm_unpacklo_epi16(ab1, cd1));
            _mm_storeu_si128((__m128i *)(dst + 4 * i + 48), _mm_unpackhi_epi16(ab1, cd1));
        }
        for (; i + 4 <= end; i += 4) { /* runs of a few items (small chunks, window edges) */
            int32_t w[4];
            for (int k = 0; k < 4; k++) memcpy(&w[k], p[k] + i, 4);
            __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w[0]), _mm_cvtsi32_si128(w[1]));
            __m128i cd = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w[2]), _mm_cvtsi32_si128(w[3]));
            _mm_storeu_si128((__m128i *)(dst + 4 * i), _mm_unpacklo_epi16(ab, cd));
        }
    } else if (ts == 8) {
        for (; i + 16 <= end; i += 16) {
            __m128i s[8], t[8], u[8];
            for (int k = 0; k < 8; k++) s[k] = _mm_loadu_si128((const __m128i *)(p[k] + i));
            for (int k = 0; k < 4; k++) {
                t[2 * k] = _mm_unpacklo_epi8(s[2 * k], s[2 * k + 1]);
                t[2 * k + 1] = _mm_unpackhi_epi8(s[2 * k], s[2 * k + 1]);
            }
            /* t[0,1]: bytes 0-1 of items 0-7, 8-15; t[2,3]: bytes 2-3; ... */
            for (int h = 0; h < 2; h++) {
                u[4 * h + 0] = _mm_unpacklo_epi16(t[h], t[2 + h]);
                u[4 * h + 1] = _mm_unpackhi_epi16(t[h], t[2 + h]);
                u[4 * h + 2] = _mm_unpacklo_epi16(t[4 + h], t[6 + h]);
                u[4 * h + 3] = _mm_unpackhi_epi16(t[4 + h], t[6 + h]);
            }
            /* u[4h+0]: bytes 0-3 of items 8h+0..3, u[4h+1]: of 8h+4..7, u[4h+2/3]: bytes 4-7 */
            for (int h = 0; h < 2; h++)
                for (int q = 0; q < 2; q++) {
                    unsigned char *o = dst + 8 * (i + 8 * (size_t)h + 4 * (size_t)q);
                    _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi32(u[4 * h + q], u[4 * h + 2 + q]));
                    _mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi32(u[4 * h + q], u[4 * h + 2 + q]));
                }
        }
    } else if (ts == 2) {
        for (; i + 16 <= end; i += 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(p[0] + i)), b = _mm_loadu_si128((const __m128i *)(p[1] + i));
            _mm_storeu_si128((__m128i *)(dst + 2 * i), _mm_unpacklo_epi8(a, b));
            _mm_storeu_si128((__m128i *)(dst + 2 * i + 16), _mm_unpackhi_epi8(a, b));
        }
    }
#endif
    for (; i < end; i++)
        for (size_t k = 0; k < ts; k++) dst[i * ts + k] = p[k][i];
}

/* unshuffle_items for a destination that will not be read soon (a read much
 * bigger than the cache): 4-byte items, 64 bytes at a time with non-temporal
 * stores, which skip reading each destination line before writing it. The
 * caller ends with _mm_sfence. */
static void unshuffle_items_nt(unsigned char *dst, const unsigned char *const *p, size_t ts, size_t i0, size_t cnt)
{
#if defined(__SSE2__)
    if (ts == 4 && !((uintptr_t)dst & 15)) {
        const unsigned char *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
        size_t i = i0, end = i0 + cnt;
        unsigned char *o = dst - 4 * i0;
#if defined(HAVE_AVX2_PATH)
        if (cnt >= 32 && !((uintptr_t)dst & 31) && has_avx2()) i = unshuffle4_avx2(o, p, i, end, true);
#endif
        for (; i + 16 <= end; i += 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(p0 + i)), b = _mm_loadu_si128((const __m128i *)(p1 + i));
            __m128i c = _mm_loadu_si128((const __m128i *)(p2 + i));
            __m128i d = _mm_loadu_si128((const __m128i *)(p3 + i));
            __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
            __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
            _mm_stream_si128((__m128i *)(o + 4 * i), _mm_unpacklo_epi16(ab0, cd0));
            _mm_stream_si128((__m128i *)(o + 4 * i + 16), _mm_unpackhi_epi16(ab0, cd0));
            _mm_stream_si128((__m128i *)(o + 4 * i + 32), _mm_unpacklo_epi16(ab1, cd1));
            _mm_stream_si128((__m128i *)(o + 4 * i + 48), _mm_unpackhi_epi16(ab1, cd1));
        }
        if (i < end) unshuffle_items(o + 4 * i, p, ts, i, end - i);
        return;
    }
#endif
    unshuffle_items(dst, p, ts, i0, cnt);
}

/* Decode one block of `size` bytes starting at src[at] into out. 1 done, 0 decline. */
static int block(const unsigned char *src, size_t n, size_t at, size_t ts, bool split, size_t size, unsigned char *out)
{
    size_t ns = split ? ts : 1, each = size / ns;
    for (size_t k = 0; k < ns; k++) {
        if (at > n || n - at < 4) return 0;
        size_t c = le32(src + at);
        at += 4;
        if (c == 0 || c > n - at || c > (size_t)INT32_MAX) return 0;
        if (c == each) {
            memcpy(out + k * each, src + at, each);
        } else {
            int r = LZ4_decompress_safe((const char *)src + at, (char *)out + k * each, (int)c, (int)each);
            if (r < 0 || (size_t)r != each) return 0;
        }
        at += c;
    }
    return 1;
}

/* An lz4 length: a 4-bit field of 15 goes on in bytes added up to the first
 * that is not 255. False if the stream ends first. */
static bool lz4_len(const unsigned char **ip, const unsigned char *iend, size_t *len)
{
    if (*len != 15) return true;
    unsigned b;
    do {
        if (*ip >= iend) return false;
        b = *(*ip)++;
        *len += b;
    } while (b == 255);
    return true;
}

/* (blosc_fast.h) Used for parts of highly compressed streams instead of
 * LZ4_decompress_safe_partial, which copies the match that crosses its stop
 * a byte at a time: in a nearly constant byte plane that match is most of the
 * stream (liblz4 1.9.4: 2x the CPU of decoding it whole). Matches are copied
 * as liblz4 does: 16 or 8 bytes at a time where there is room past them. */
ptrdiff_t codec_lz4_decode_upto(const void *vsrc, size_t n, void *vdst, size_t cap, size_t want)
{
    const unsigned char *ip = vsrc, *iend = ip + n;
    unsigned char *dst = vdst, *op = dst, *oend = dst + cap;
    for (;;) {
        if (ip >= iend) return -1;
        unsigned tok = *ip++;
        size_t lit = tok >> 4;
        if (!lz4_len(&ip, iend, &lit)) return -1;
        if (lit > (size_t)(iend - ip) || lit > (size_t)(oend - op)) return -1;
        if (lit <= 16 && iend - ip >= 16 && oend - op >= 16) memcpy(op, ip, 16); /* the usual short run, fixed size */
        else memcpy(op, ip, lit);
        op += lit;
        ip += lit;
        if (ip == iend || (size_t)(op - dst) >= want) return op - dst; /* the last sequence has no match */
        if (iend - ip < 2) return -1;
        size_t off = (size_t)ip[0] | (size_t)ip[1] << 8, ml = tok & 15;
        ip += 2;
        if (!lz4_len(&ip, iend, &ml)) return -1;
        ml += 4;
        if (off == 0 || off > (size_t)(op - dst) || ml > (size_t)(oend - op)) return -1;
        const unsigned char *m = op - off;
        if ((size_t)(oend - op) >= ml + 16) { /* room for whole 8- or 16-byte stores past the match */
            unsigned char *e = op + ml;
            if (off >= 16) {
                do {
                    memcpy(op, m, 16);
                    op += 16;
                    m += 16;
                } while (op < e);
            } else if (off == 1) {
                memset(op, *m, ml);
            } else {
                /* the first 8 bytes one by one (or 4 + 4), then m at least 8 back: 8 at a time (as liblz4) */
                static const unsigned inc[8] = {0, 1, 2, 1, 0, 4, 4, 4};
                static const int dec[8] = {0, 0, 0, -1, -4, 1, 2, 3};
                if (off < 8) {
                    op[0] = m[0];
                    op[1] = m[1];
                    op[2] = m[2];
                    op[3] = m[3];
                    m += inc[off];
                    memcpy(op + 4, m, 4);
                    m -= dec[off];
                } else {
                    memcpy(op, m, 8);
                    m += 8;
                }
                op += 8;
                while (op < e) {
                    memcpy(op, m, 8);
                    op += 8;
                    m += 8;
                }
            }
            op = e;
            if ((size_t)(op - dst) >= want) return op - dst;
            continue;
        }
        if (off >= ml) {
            memcpy(op, m, ml);
        } else if (off == 1) {
            memset(op, *m, ml);
        } else { /* overlapping: op[i] = op[i - off]; copy from D back, D the largest multiple of off available */
            size_t done = 0;
            while (done < ml) {
                size_t d = (done + off) / off * off, c = ml - done < d ? ml - done : d;
                memcpy(op + done, op + done - d, c);
                done += c;
            }
        }
        op += ml;
        if ((size_t)(op - dst) >= want) return op - dst;
    }
}

/* A shuffled block of `size` bytes starting at src[at]: its byte planes p[0..ts)
 * of size / ts bytes each, and (not split) the size % ts tail bytes at *tail.
 * Streams stored as is are used in place, not copied; the others decode into
 * tmp (stream k at tmp + k × its size). Only items [0, lim) of the planes are
 * wanted: a stream's decoding stops at the last byte they need (the rest of
 * the stream is then not checked).
 * 1 done, 0 decline. */
static int block_planes(const unsigned char *src, size_t n, size_t at, size_t ts, bool split, size_t size,
                        size_t lim, unsigned char *tmp, const unsigned char **p, const unsigned char **tail)
{
    size_t ns = split ? ts : 1, each = size / ns, m = size / ts;
    size_t want = lim >= m ? each : split ? lim : (ts - 1) * m + lim; /* bytes of each stream needed */
    for (size_t k = 0; k < ns; k++) {
        if (at > n || n - at < 4) return 0;
        size_t c = le32(src + at);
        at += 4;
        if (c == 0 || c > n - at || c > (size_t)INT32_MAX) return 0;
        const unsigned char *s = src + at;
        if (c != each) {
            if (want == each) {
                int r = LZ4_decompress_safe((const char *)src + at, (char *)tmp + k * each, (int)c, (int)each);
                if (r < 0 || (size_t)r != each) return 0;
            } else {
                /* liblz4 for the usual stream; highly compressed ones (a
                 * nearly constant byte plane) with codec_lz4_decode_upto */
                ptrdiff_t r = c < each / 8 ? codec_lz4_decode_upto(src + at, c, tmp + k * each, each, want)
                                           : LZ4_decompress_safe_partial((const char *)src + at, (char *)tmp + k * each,
                                                                         (int)c, (int)want, (int)each);
                if (r < 0 || (size_t)r < want) return 0;
            }
            s = tmp + k * each;
        }
        if (split) {
            p[k] = s;
        } else {
            for (size_t q = 0; q < ts; q++) p[q] = s + q * m;
            *tail = s + m * ts;
        }
        at += c;
    }
    return 1;
}

/* Decode blocks j0..j1 of src into dst, block j at dst + (j - j0) bs
 * (codec_blosc_fast_blocks with base j0, codec_blosc_fast_block with j0 = j1). */
static int blocks_at(const void *vsrc, size_t n, void *vdst, size_t j0, size_t j1)
{
    const unsigned char *src = vsrc;
    unsigned char *dst = vdst;
    if (n < 16) return 0;
    unsigned flags = src[2];
    size_t ts = src[3], nbytes = le32(src + 4), bs = le32(src + 8);
    if (src[0] != 2 || (flags >> 5) != 1 || (flags & (FLAG_MEMCPYED | FLAG_BITSHUFFLE | FLAG_RESERVED))) return 0;
    if (ts == 0 || bs == 0 || nbytes == 0 || le32(src + 12) != n) return 0;
    size_t nblocks = nbytes / bs + (nbytes % bs != 0);
    if (j1 >= nblocks || j0 > j1 || n < 16 + 4 * nblocks) return 0;
    bool shuffle = (flags & FLAG_SHUFFLE) && ts > 1;
    size_t tmp_size = bs < nbytes ? bs : nbytes; /* a header's blocksize may exceed the whole buffer */
    unsigned char stack[STACK_BLOCK], *tmp = stack;
    if (shuffle && tmp_size > STACK_BLOCK && !(tmp = zc__malloc(tmp_size))) return 0;
    int ok = 1;
    for (size_t j = j0; j <= j1 && ok; j++) {
        size_t size = j == nblocks - 1 && nbytes % bs ? nbytes % bs : bs;
        bool last_short = size < bs;
        bool split = !(flags & FLAG_NOSPLIT) && ts <= MAX_SPLITS && bs / ts >= MIN_ITEMS && !last_short;
        if (split && size % ts) {
            ok = 0;
            break;
        }
        size_t at = le32(src + 16 + 4 * j);
        if (at < 16 + 4 * nblocks) {
            ok = 0;
            break;
        }
        unsigned char *out = dst + (j - j0) * bs;
        if (!shuffle) {
            ok = block(src, n, at, ts, split, size, out);
        } else {
            const unsigned char *p[256], *tail = NULL;
            ok = block_planes(src, n, at, ts, split, size, SIZE_MAX, tmp, p, &tail);
            if (ok) {
                unshuffle_items(out, p, ts, 0, size / ts);
                if (size % ts) memcpy(out + size / ts * ts, tail, size % ts); /* not split: tail set */
            }
        }
    }
    if (tmp != stack) zc__free(tmp);
    return ok;
}

int codec_blosc_fast_blocks(const void *src, size_t n, void *dst, size_t j0, size_t j1)
{
    size_t bs = n >= 16 ? le32((const unsigned char *)src + 8) : 0;
    return blocks_at(src, n, (unsigned char *)dst + j0 * bs, j0, j1);
}

int codec_blosc_fast_block(const void *src, size_t n, size_t j, void *dst) { return blocks_at(src, n, dst, j, j); }

#if defined(__SSE2__)
/* n_in runs of `run` (< 16) 4-byte items: run r starts at item i0 + r ss_in
 * of planes p and goes to dst + r ds_in (bytes). */
static void short_runs4(unsigned char *dst, const unsigned char *const *p, size_t i0, size_t run, int64_t n_in,
                        int64_t ss_in, int64_t ds_in)
{
    const unsigned char *p0 = p[0] + i0, *p1 = p[1] + i0, *p2 = p[2] + i0, *p3 = p[3] + i0;
    if (run == 4) { /* a whole row of a small chunk */
        for (int64_t r = 0; r < n_in; r++, p0 += ss_in, p1 += ss_in, p2 += ss_in, p3 += ss_in, dst += ds_in) {
            int32_t w0, w1, w2, w3;
            memcpy(&w0, p0, 4);
            memcpy(&w1, p1, 4);
            memcpy(&w2, p2, 4);
            memcpy(&w3, p3, 4);
            __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w0), _mm_cvtsi32_si128(w1));
            __m128i cd = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w2), _mm_cvtsi32_si128(w3));
            _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(ab, cd));
        }
        return;
    }
    if (run == 2) {
        for (int64_t r = 0; r < n_in; r++, p0 += ss_in, p1 += ss_in, p2 += ss_in, p3 += ss_in, dst += ds_in) {
            uint16_t w0, w1, w2, w3;
            memcpy(&w0, p0, 2);
            memcpy(&w1, p1, 2);
            memcpy(&w2, p2, 2);
            memcpy(&w3, p3, 2);
            __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w0), _mm_cvtsi32_si128(w1));
            __m128i cd = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w2), _mm_cvtsi32_si128(w3));
            _mm_storel_epi64((__m128i *)dst, _mm_unpacklo_epi16(ab, cd));
        }
        return;
    }
    for (int64_t r = 0; r < n_in; r++, p0 += ss_in, p1 += ss_in, p2 += ss_in, p3 += ss_in, dst += ds_in) {
        unsigned char *o = dst;
        size_t i = 0;
        for (; i + 4 <= run; i += 4, o += 16) {
            int32_t w0, w1, w2, w3;
            memcpy(&w0, p0 + i, 4);
            memcpy(&w1, p1 + i, 4);
            memcpy(&w2, p2 + i, 4);
            memcpy(&w3, p3 + i, 4);
            __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w0), _mm_cvtsi32_si128(w1));
            __m128i cd = _mm_unpacklo_epi8(_mm_cvtsi32_si128(w2), _mm_cvtsi32_si128(w3));
            _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(ab, cd));
        }
        for (; i < run; i++, o += 4) {
            uint32_t v = (uint32_t)p0[i] | (uint32_t)p1[i] << 8 | (uint32_t)p2[i] << 16 | (uint32_t)p3[i] << 24;
            memcpy(o, &v, 4);
        }
    }
}
#endif

/* Several blocks: the selection's runs in stored order (they only move
 * forward), each block decoded into tmp (block-sized, so it stays in cache)
 * when the first run that needs it comes, its items unshuffled straight into
 * place; blocks no run needs are not decoded. A run across a block boundary
 * is cut there. 1 done, 0 decline (some selected items may be in place). */
static int scatter_blocks(const unsigned char *src, size_t n, unsigned flags, size_t ts, size_t nbytes, size_t bs,
                          size_t nblocks, unsigned char *tmp, unsigned char *dst, const int64_t *cnt, const int64_t *ds,
                          const int64_t *ss, int outer, size_t run, int64_t so, bool stream, size_t jb0, size_t jb1)
{
    size_t ipb = bs / ts, cur = SIZE_MAX, have = 0; /* items per block; the block in tmp and its items */
    const unsigned char *p[256], *tail = NULL;
    int64_t k[ZC_MAX_DIMS] = {0}, dof = 0;
    /* a second walk ahead of the first: the last run starting before a
     * block's end tells how far into the block the selection goes (runs only
     * move forward), and the block's planes are decoded that far only */
    int64_t k2[ZC_MAX_DIMS] = {0}, so2 = so;
    size_t last_end = 0; /* end item of the last run the second walk passed */
    bool walk2 = true;
    for (;;) {
        size_t i = (size_t)so, left = run;
        unsigned char *o = dst + dof;
        while (left) {
            size_t j = i / ipb;
            if (j < jb0) { /* before the blocks asked for: skip to their start */
                size_t skip = jb0 * ipb - i < left ? jb0 * ipb - i : left;
                o += skip * ts;
                i += skip;
                left -= skip;
                continue;
            }
            if (j > jb1) return 1; /* past them: so is every later run */
            if (j != cur) {
                if (j >= nblocks) return 0;
                size_t size = j == nblocks - 1 && nbytes % bs ? nbytes % bs : bs;
                bool split = !(flags & FLAG_NOSPLIT) && ts <= MAX_SPLITS && ipb >= MIN_ITEMS && size == bs;
                size_t at = le32(src + 16 + 4 * j), bend = (j + 1) * ipb;
                while (walk2 && (size_t)so2 < bend) {
                    last_end = (size_t)so2 + run;
                    int d = outer - 1;
                    for (; d >= 0; d--) {
                        so2 += ss[d];
                        if (++k2[d] < cnt[d]) break;
                        so2 -= cnt[d] * ss[d];
                        k2[d] = 0;
                    }
                    if (d < 0) walk2 = false;
                }
                size_t lim = (last_end < bend ? last_end : bend) - j * ipb;
                if (at < 16 + 4 * nblocks || !block_planes(src, n, at, ts, split, size, lim, tmp, p, &tail)) return 0;
                cur = j;
                have = size / ts;
            }
            size_t in = i - j * ipb, take = have - in < left ? have - in : left;
            if (in >= have) return 0;
            if (stream) unshuffle_items_nt(o, p, ts, in, take);
            else unshuffle_items(o, p, ts, in, take);
            o += take * ts;
            i += take;
            left -= take;
        }
        int d = outer - 1;
        for (; d >= 0; d--) {
            so += ss[d];
            dof += ds[d];
            if (++k[d] < cnt[d]) break;
            so -= cnt[d] * ss[d];
            dof -= cnt[d] * ds[d];
            k[d] = 0;
        }
        if (d < 0) return 1;
    }
}

int codec_blosc_fast_scatter(const void *vsrc, size_t n, size_t nbytes_want, size_t isz, unsigned char *tmp,
                             unsigned char *dst, const int64_t *dstride, const int64_t *sstride, const int64_t *count,
                             int ndim, int64_t src_off, bool stream)
{
    return codec_blosc_fast_scatter_part(vsrc, n, nbytes_want, isz, tmp, dst, dstride, sstride, count, ndim, src_off,
                                         stream, 0, SIZE_MAX);
}

int codec_blosc_fast_scatter_part(const void *vsrc, size_t n, size_t nbytes_want, size_t isz, unsigned char *tmp,
                                  unsigned char *dst, const int64_t *dstride, const int64_t *sstride,
                                  const int64_t *count, int ndim, int64_t src_off, bool stream, size_t jb0, size_t jb1)
{
    const unsigned char *src = vsrc;
    if (n < 20 || ndim < 1 || ndim > ZC_MAX_DIMS) return 0;
    unsigned flags = src[2];
    size_t ts = src[3], nbytes = le32(src + 4), bs = le32(src + 8);
    if (src[0] != 2 || (flags >> 5) != 1 || (flags & (FLAG_MEMCPYED | FLAG_BITSHUFFLE | FLAG_RESERVED))) return 0;
    if (!(flags & FLAG_SHUFFLE) || ts != isz || ts < 2 || nbytes != nbytes_want || nbytes % ts || bs == 0 ||
        le32(src + 12) != n)
        return 0;
    size_t nblocks = nbytes / bs + (nbytes % bs != 0);
    if ((nblocks > 1 && bs % ts) || n < 16 + 4 * nblocks) return 0;
    /* the selection, its trailing dims merged where contiguous on both sides */
    int64_t cnt[ZC_MAX_DIMS], ds[ZC_MAX_DIMS], ss[ZC_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (count[d] == 1 && d < ndim - 1) continue;
        cnt[nd] = count[d];
        ds[nd] = dstride[d];
        ss[nd] = sstride[d];
        nd++;
    }
    while (nd > 1 && ds[nd - 1] == (int64_t)isz && ss[nd - 1] == (int64_t)isz && ds[nd - 2] == cnt[nd - 1] * ds[nd - 1] &&
           ss[nd - 2] == cnt[nd - 1] * ss[nd - 1]) {
        cnt[nd - 2] *= cnt[nd - 1];
        ds[nd - 2] = ss[nd - 2] = (int64_t)isz;
        nd--;
    }
    size_t run = 1;
    bool rows = ds[nd - 1] == (int64_t)isz && ss[nd - 1] == (int64_t)isz;
    if (rows) run = (size_t)cnt[nd - 1];
    /* short runs (small chunks, narrow windows): a call per run costs more
     * than unshuffling the whole chunk with wide stores and copying the runs,
     * except for 4-byte items, which have their own loop (short_runs4) */
    bool short4 = run < SCATTER_MIN_RUN;
#if defined(__SSE2__)
    if (short4 && (ts != 4 || !rows)) return 0;
#else
    if (short4) return 0;
#endif
    if (src_off % (int64_t)isz) return 0;
    int outer = rows ? nd - 1 : nd; /* dims walked one step at a time */
    for (int d = 0; d < outer; d++) {
        if (ss[d] % (int64_t)isz) return 0;
        ss[d] /= (int64_t)isz; /* in items */
    }
    if (nblocks > 1) {
        if (short4) return 0;
        int ok = scatter_blocks(src, n, flags, ts, nbytes, bs, nblocks, tmp, dst, cnt, ds, ss, outer, run,
                                src_off / (int64_t)isz, stream, jb0, jb1);
#if defined(__SSE2__)
        if (stream) _mm_sfence(); /* the non-temporal stores are done before anyone reads dst */
#endif
        return ok;
    }
    if (jb0 > 0) return 1; /* the one block not asked for */
    /* one block: its stream lengths are checked by block(); it decodes whole into tmp, shuffled */
    bool split = !(flags & FLAG_NOSPLIT) && ts <= MAX_SPLITS && nbytes / ts >= MIN_ITEMS && nbytes == bs;
    size_t at = le32(src + 16);
    const unsigned char *p[256], *tail = NULL;
    int64_t k[ZC_MAX_DIMS] = {0}, so = src_off / (int64_t)isz, dof = 0;
    int64_t end = so + (int64_t)run; /* the selection's last item + 1: planes decoded that far */
    for (int d = 0; d < outer; d++) end += (cnt[d] - 1) * ss[d];
    if (at < 20 || !block_planes(src, n, at, ts, split, nbytes, (size_t)end, tmp, p, &tail)) return 0;
#if defined(__SSE2__)
    if (short4) {
        /* the innermost walked dim as a plain loop, the others as below */
        int in = outer - 1;
        int64_t n_in = in >= 0 ? cnt[in] : 1, ss_in = in >= 0 ? ss[in] : 0, ds_in = in >= 0 ? ds[in] : 0;
        for (;;) {
            short_runs4(dst + dof, p, (size_t)so, run, n_in, ss_in, ds_in);
            int d = in - 1;
            for (; d >= 0; d--) {
                so += ss[d];
                dof += ds[d];
                if (++k[d] < cnt[d]) break;
                so -= cnt[d] * ss[d];
                dof -= cnt[d] * ds[d];
                k[d] = 0;
            }
            if (d < 0) return 1;
        }
    }
#endif
    for (;;) {
        if (stream) unshuffle_items_nt(dst + dof, p, ts, (size_t)so, run);
        else unshuffle_items(dst + dof, p, ts, (size_t)so, run);
        int d = outer - 1;
        for (; d >= 0; d--) {
            so += ss[d];
            dof += ds[d];
            if (++k[d] < cnt[d]) break;
            so -= cnt[d] * ss[d];
            dof -= cnt[d] * ds[d];
            k[d] = 0;
        }
        if (d < 0) break;
    }
#if defined(__SSE2__)
    if (stream) _mm_sfence();
#endif
    return 1;
}
