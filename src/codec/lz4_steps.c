/* codec/lz4_steps.c — an LZ4 block decoded in order into a small window
 * (lz4_steps.h), for chunks streamed a piece at a time (codec_stream).
 *
 * liblz4 decodes a block only whole or from its start up to a point, into
 * one buffer that holds everything before it: matches reach up to 65,535
 * bytes back. Here a window of HISTORY + STEP bytes does: decoded bytes are
 * handed out from it, and when it is full and handed out, its last HISTORY
 * bytes move to its start and decoding goes on after them. Decoding stops
 * in the middle of a literal run or a match when the window is full and
 * resumes there (the sequence's state is kept). Every length, offset and
 * position is checked: a block that reads past its end, refers before the
 * first byte or decodes to more or fewer bytes than the prefix says is
 * ZC_ECORRUPT, never a read or write outside the buffers. */
#include "codec/lz4_steps.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define HISTORY ((size_t)64 << 10) /* the farthest a match reaches back (65,535), rounded up */
#define STEP ((size_t)256 << 10)   /* bytes decoded at a time */

typedef struct {
    const unsigned char *ip, *iend;
    size_t nbytes, done;            /* decoded size (the prefix's), bytes decoded so far */
    size_t lit, mlen, off;          /* the current sequence: literals left, match bytes left, its offset */
    bool need_match;                /* literals done, its match not read yet */
    unsigned tok_match;             /* the token's match length field */
    size_t op, rd, base;            /* window: decoded up to op, handed out up to rd; window start = byte `base` */
    unsigned char win[];            /* HISTORY + STEP */
} lz4_it;

size_t codec_lz4_steps_mem(void *state, size_t nbytes)
{
    (void)state;
    size_t w = HISTORY + STEP;
    return sizeof(lz4_it) + (nbytes < w ? nbytes : w);
}

void codec_lz4_steps_close(void *it) { zc__free(it); }

int codec_lz4_steps_open(void *state, const void *src, size_t n, size_t nbytes, void **it)
{
    (void)state;
    if (n < 4) return zc__err(ZC_ECORRUPT, "lz4: %zu bytes is too short for the 4-byte size prefix", n);
    uint32_t size = codec_b2b_load_le32(src);
    if (size != nbytes)
        return zc__err(ZC_ECORRUPT, "lz4: prefix declares %u decoded bytes, expected %zu", (unsigned)size, nbytes);
    size_t w = HISTORY + STEP;
    lz4_it *z = zc__malloc(sizeof *z + (nbytes < w ? nbytes : w));
    if (!z) return ZC_ENOMEM;
    memset(z, 0, sizeof *z);
    z->ip = (const unsigned char *)src + 4;
    z->iend = (const unsigned char *)src + n;
    z->nbytes = nbytes;
    *it = z;
    return 0;
}

/* A length: a 4-bit field of 15 goes on in bytes added up to the first that
 * is not 255. False if the block ends first. */
static bool more_len(lz4_it *z, size_t *len)
{
    if (*len != 15) return true;
    unsigned b;
    do {
        if (z->ip >= z->iend) return false;
        b = *z->ip++;
        *len += b;
    } while (b == 255);
    return true;
}

static int corrupt(const lz4_it *z, const char *what)
{
    return zc__err(ZC_ECORRUPT, "lz4: %s (after %zu of the %zu decoded bytes)", what, z->done, z->nbytes);
}

/* Decode into the window until it holds `lim` bytes (from its start) or the
 * block ends. */
static int decode_to(lz4_it *z, size_t lim)
{
    unsigned char *w = z->win;
    while (z->op < lim) {
        if (z->lit) {
            size_t t = z->lit < lim - z->op ? z->lit : lim - z->op;
            if (t > (size_t)(z->iend - z->ip)) return corrupt(z, "literals run past the block");
            memcpy(w + z->op, z->ip, t);
            z->ip += t;
            z->op += t;
            z->done += t;
            z->lit -= t;
            continue;
        }
        if (z->mlen) {
            size_t t = z->mlen < lim - z->op ? z->mlen : lim - z->op;
            const unsigned char *m = w + z->op - z->off;
            if (z->off >= t) memcpy(w + z->op, m, t);
            else
                for (size_t i = 0; i < t; i++) w[z->op + i] = m[i]; /* overlapping: repeats the last off bytes */
            z->op += t;
            z->done += t;
            z->mlen -= t;
            continue;
        }
        if (z->need_match) {
            if (z->ip == z->iend) return 0; /* the last sequence has no match: the block ends */
            if (z->iend - z->ip < 2) return corrupt(z, "offset cut short");
            z->off = (size_t)z->ip[0] | (size_t)z->ip[1] << 8;
            z->ip += 2;
            size_t ml = z->tok_match;
            if (!more_len(z, &ml)) return corrupt(z, "match length cut short");
            ml += 4;
            if (z->off == 0 || z->off > z->op) return corrupt(z, "match before the first byte");
            if (ml > z->nbytes - z->done) return corrupt(z, "match past the decoded size");
            z->mlen = ml;
            z->need_match = false;
            continue;
        }
        if (z->ip >= z->iend) return 0;
        unsigned tok = *z->ip++;
        size_t lit = tok >> 4;
        if (!more_len(z, &lit)) return corrupt(z, "literal length cut short");
        if (lit > z->nbytes - z->done) return corrupt(z, "literals past the decoded size");
        z->lit = lit;
        z->tok_match = tok & 15;
        z->need_match = true;
    }
    return 0;
}

int codec_lz4_steps_read(void *it, void *vdst, size_t len)
{
    lz4_it *z = it;
    unsigned char *dst = vdst;
    size_t cap = HISTORY + STEP < z->nbytes ? HISTORY + STEP : z->nbytes;
    while (len) {
        if (z->rd == z->op) { /* all handed out: decode more, first making room */
            if (z->base + z->op >= z->nbytes) return corrupt(z, "bytes asked past the end of the chunk");
            if (z->op == cap) {
                size_t keep = HISTORY < z->op ? HISTORY : z->op;
                memmove(z->win, z->win + z->op - keep, keep);
                z->base += z->op - keep;
                z->op = z->rd = keep;
            }
            ZC_TRY(decode_to(z, cap));
            if (z->rd == z->op) return corrupt(z, "block ends before the decoded size");
        }
        size_t t = z->op - z->rd < len ? z->op - z->rd : len;
        memcpy(dst, z->win + z->rd, t);
        dst += t;
        z->rd += t;
        len -= t;
    }
    if (z->base + z->rd == z->nbytes && (z->ip != z->iend || z->lit || z->mlen))
        return corrupt(z, "block goes on past the decoded size");
    return 0;
}
