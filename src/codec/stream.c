/* codec/stream.c — a stored chunk decoded in order, a piece at a time
 * (codec.h, "decoding a chunk in order"), through the codecs' optional
 * hooks: a plain copy reads the stored bytes; a block-wise codec (blosc)
 * decodes one block at a time into a block buffer, or straight into the
 * caller's buffer when a read covers the block; a step-wise codec (zstd)
 * keeps its own window. No codec is named here. */
#include <string.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/error.h"

struct codec_stream {
    const codec *c;             /* NULL: a plain copy */
    const unsigned char *src;
    size_t n, nbytes, pos;      /* pos: decoded bytes handed out */
    size_t bsize, have;         /* block-wise: block size, block in buf (SIZE_MAX: none) */
    unsigned char *buf;
    void *it;                   /* step-wise: the codec's iterator */
};

static bool blockwise(const codec *c) { return c->type->block_size && c->type->block_max && c->type->decode_block; }
static bool stepwise(const codec *c)
{
    return c->type->steps_open && c->type->steps_read && c->type->steps_close && c->type->steps_mem;
}

bool codec_chain_streams(const codec_chain *ch, const char **why)
{
    const char *w = NULL;
    if (!codec_chain_is_identity(ch)) {
        const codec *c = codec_chain_sole(ch);
        if (!c) w = "several codecs decode whole chunks only";
        else if (!c->type->stored_max || (!blockwise(c) && !stepwise(c))) w = c->type->name;
    }
    if (why) *why = w;
    return !w;
}

size_t codec_chain_stream_mem(const codec_chain *ch)
{
    if (!codec_chain_streams(ch, NULL) || codec_chain_is_identity(ch)) return 0;
    const codec *c = codec_chain_sole(ch);
    /* a block buffer, and the codec's own temporary of a block (blosc: the
     * shuffled planes before they are put in order) */
    if (blockwise(c)) return 2 * c->type->block_max(c->state, c->ctx.nbytes);
    return c->type->steps_mem(c->state, c->ctx.nbytes);
}

size_t codec_chain_stored_max(const codec_chain *ch)
{
    const codec *c = codec_chain_sole(ch);
    if (codec_chain_is_identity(ch) || !c || !c->type->stored_max) return codec_chain_is_identity(ch) ? 0 : SIZE_MAX;
    return c->type->stored_max(c->state, c->ctx.nbytes);
}

void codec_stream_close(codec_stream *s)
{
    if (!s) return;
    if (s->it) s->c->type->steps_close(s->it);
    zc__free(s->buf);
    zc__free(s);
}

int codec_stream_open(const codec_chain *ch, const void *src, size_t n, codec_stream **out)
{
    *out = NULL;
    if (!codec_chain_streams(ch, NULL)) return ZC_EUNSUPPORTED;
    codec_stream *s = zc__calloc(1, sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->src = src;
    s->n = n;
    s->have = SIZE_MAX;
    int rc = 0;
    if (codec_chain_is_identity(ch)) {
        s->nbytes = codec_chain_nbytes(ch);
        if (n != s->nbytes) rc = zc__err(ZC_ECORRUPT, "chunk has %zu bytes, expected %zu", n, s->nbytes);
    } else {
        s->c = codec_chain_sole(ch);
        s->nbytes = s->c->ctx.nbytes;
        if (blockwise(s->c)) {
            rc = s->c->type->block_size(s->c->state, src, n, s->nbytes, &s->bsize);
            size_t max = s->c->type->block_max(s->c->state, s->nbytes);
            if (rc == 0 && s->bsize > max && s->bsize < s->nbytes)
                rc = zc__err(ZC_EMEMBOUND, "%s: blocks of %zu bytes, more than the %zu its configuration lets a "
                             "stream expect (written with another block size than the metadata says?)",
                             s->c->type->name, s->bsize, max);
            if (rc == 0 && !(s->buf = zc__malloc(s->bsize < s->nbytes ? s->bsize : s->nbytes ? s->nbytes : 1)))
                rc = ZC_ENOMEM;
        } else {
            rc = s->c->type->steps_open(s->c->state, src, n, s->nbytes, &s->it);
        }
    }
    if (rc < 0) {
        codec_stream_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int codec_stream_read(codec_stream *s, void *vdst, size_t len)
{
    unsigned char *dst = vdst;
    if (len > s->nbytes - s->pos)
        return zc__err(ZC_ECORRUPT, "chunk stream: %zu bytes asked at %zu, past the chunk's %zu", len, s->pos,
                       s->nbytes);
    if (!s->c) {
        memcpy(dst, s->src + s->pos, len);
    } else if (s->it) {
        ZC_TRY(s->c->type->steps_read(s->it, dst, len));
    } else {
        for (size_t at = s->pos, end = s->pos + len; at < end;) {
            size_t j = at / s->bsize, b0 = j * s->bsize, bn = s->nbytes - b0 < s->bsize ? s->nbytes - b0 : s->bsize;
            size_t off = at - b0, take = bn - off < end - at ? bn - off : end - at;
            if (off == 0 && take == bn && s->have != j) { /* the whole block: straight into place */
                ZC_TRY(s->c->type->decode_block(s->c->state, s->src, s->n, s->nbytes, s->bsize, j, dst));
            } else {
                if (s->have != j) {
                    s->have = SIZE_MAX;
                    ZC_TRY(s->c->type->decode_block(s->c->state, s->src, s->n, s->nbytes, s->bsize, j, s->buf));
                    s->have = j;
                }
                memcpy(dst, s->buf + off, take);
            }
            dst += take;
            at += take;
        }
    }
    s->pos += len;
    return 0;
}
