/* codec/chain.c — a codec list run as one pipeline (order in codec.h):
 *
 *   encode:  array ─a2a[0]─…─▶ array ─a2b─▶ bytes ─b2b[0]─…─▶ stored
 *   decode:  the same steps backwards, the last one writing into the caller's
 *            buffer.
 *
 * Entries are v3 objects {"name", "configuration"} or v2 numcodecs objects
 * {"id", ...}; the latter are bytes→bytes (v2 filters and compressors see the
 * stored bytes). Each codec is created with the context it sees:
 *   - a2a codecs: the array as it reaches them (encoded_ctx of the previous
 *     one may have changed shape or dtype);
 *   - the a2b codec: the array after the a2a codecs;
 *   - b2b codecs: that array's dtype as a typesize hint, with the stored byte
 *     order (from the a2b codec's "endian") and, when the b2b codecs before it
 *     report it through encoded_ctx (v2 filters do), the dtype and size of the
 *     data reaching it;
 *   - ctx.zarr_format is the spelling of the entry (3 for "name", 2 for "id").
 *
 * Sizes. size[i] is the size of what codec i encodes (= what its decode must
 * produce); size[0] is the chunk's nbytes. It is known through the a2a codecs
 * and the a2b codec (which keeps the size unless it has an encoded_ctx), and
 * through b2b codecs as long as each has an encoded_ctx. Decoding checks every
 * known size, so a corrupt chunk fails at the codec that produced the wrong
 * size. A decode output of unknown size is bounded by the codec's
 * decoded_size (checked against `bound`) or else by `bound` =
 * 2 × (largest known size) + 64 KiB.
 *
 * Copies. The "bytes" codec in native order is skipped (a pass-through). The
 * last step decodes straight into dst: [bytes, zstd] is one zstd call into dst,
 * [bytes] a memcpy. Intermediate results ping-pong between at most two scratch
 * buffers per call, each grown only when a step needs more. */
#include <string.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

#define CHAIN_MAX 32
#define SLACK ((size_t)64 << 10)

struct codec_chain {
    int n;                       /* codecs, in encode order */
    int a2b;                     /* index of the array→bytes codec */
    codec c[CHAIN_MAX];          /* the codecs */
    size_t size[CHAIN_MAX + 1];  /* size[i]: bytes codec i encodes; size[n]: stored */
    bool known[CHAIN_MAX + 1];   /* size[i] is exact */
    bool skip[CHAIN_MAX];        /* codec i is a plain copy (native-order "bytes") */
    size_t bound;                /* cap for a decode output of unknown size */
    codec_ctx ctx;               /* the chunk (native order, C order) */
};

static const char *kind_name(codec_kind k)
{
    return k == CODEC_A2A ? "array→array" : k == CODEC_A2B ? "array→bytes" : "bytes→bytes";
}

static int check_ctx(const codec_ctx *ctx)
{
    if (ctx->ndim < 0 || ctx->ndim > ZC_MAX_DIMS)
        return zc__err(ZC_EINVAL, "codec chain: rank %d out of range", ctx->ndim);
    size_t nb = ctx->dtype.size;
    for (int i = 0; i < ctx->ndim; i++)
        if (ctx->shape[i] < 0 || ck_mul_sz(nb, (size_t)ctx->shape[i], &nb))
            return zc__err(ZC_EOVERFLOW, "codec chain: chunk shape overflows");
    if (nb != ctx->nbytes)
        return zc__err(ZC_EINVAL, "codec chain: chunk of %zu bytes does not match its shape (%zu)",
                       ctx->nbytes, nb);
    return 0;
}

/* The stored byte order an a2b codec announces ("bytes" {"endian"}), or 0. */
static char stored_endian(const codec *c, bool *ok)
{
    *ok = true;
    json_t *j = c->type->to_json ? c->type->to_json(c->state, 3) : NULL;
    if (c->type->to_json && !j) {
        *ok = false;
        return 0;
    }
    const char *e = json_string_value(json_object_get(json_object_get(j, "configuration"), "endian"));
    char r = e ? (!strcmp(e, "big") ? '>' : !strcmp(e, "little") ? '<' : 0) : 0;
    json_decref(j);
    return r;
}

void codec_chain_free(codec_chain *ch)
{
    if (!ch) return;
    for (int i = 0; i < ch->n; i++) codec_destroy(&ch->c[i]);
    zc__free(ch);
}

int codec_chain_create(const json_t *codecs, const codec_ctx *ctx, codec_chain **out)
{
    *out = NULL;
    if (!json_is_array(codecs)) return zc__err(ZC_EFORMAT, "'codecs' must be a list");
    size_t n = json_array_size(codecs);
    if (n == 0) return zc__err(ZC_EFORMAT, "'codecs' is empty (needs an array→bytes codec such as bytes)");
    if (n > CHAIN_MAX) return zc__err(ZC_EFORMAT, "'codecs' has %zu entries (at most %d)", n, CHAIN_MAX);
    ZC_TRY(check_ctx(ctx));

    /* pass 1: look every codec up and check the order a2a* a2b b2b* */
    int fmt[CHAIN_MAX], a2b = -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(codecs, i);
        if (!json_is_object(e)) return zc__err(ZC_EFORMAT, "codecs[%zu] is not an object", i);
        const json_t *name = json_object_get(e, "name"), *id = json_object_get(e, "id");
        const codec_type *t;
        codec_kind kind;
        const char *label;
        if (json_is_string(name)) {
            label = json_string_value(name);
            if (!strcmp(label, "sharding_indexed"))
                return zc__err(ZC_EUNSUPPORTED, "codecs[%zu]: sharding_indexed is handled by the "
                               "array layer, not inside a codec chain", i);
            ZC_TRY(codec_find(label, 3, &t));
            kind = t->kind;
            fmt[i] = 3;
        } else if (json_is_string(id)) {
            label = json_string_value(id);
            ZC_TRY(codec_find(label, 2, &t));
            kind = CODEC_B2B; /* v2 filters and compressors work on the stored bytes */
            fmt[i] = 2;
        } else {
            return zc__err(ZC_EFORMAT, "codecs[%zu] has no string 'name' (or v2 'id')", i);
        }
        if (kind == CODEC_A2B) {
            if (a2b >= 0)
                return zc__err(ZC_EFORMAT, "codecs[%zu] '%s' is a second array→bytes codec "
                               "(codecs[%d] is one already)", i, label, a2b);
            a2b = (int)i;
        } else if (kind == CODEC_A2A && a2b >= 0) {
            return zc__err(ZC_EFORMAT, "codecs[%zu] '%s' is array→array but comes after the "
                           "array→bytes codec", i, label);
        } else if (kind == CODEC_B2B && a2b < 0) {
            return zc__err(ZC_EFORMAT, "codecs[%zu] '%s' is %s but comes before the "
                           "array→bytes codec", i, label, kind_name(kind));
        }
    }
    if (a2b < 0) return zc__err(ZC_EFORMAT, "'codecs' has no array→bytes codec (such as bytes)");

    /* pass 2: create each codec with the context it sees */
    codec_chain *ch = zc__calloc(1, sizeof *ch);
    if (!ch) return ZC_ENOMEM;
    ch->ctx = *ctx;
    ch->a2b = a2b;
    ch->size[0] = ctx->nbytes;
    ch->known[0] = true;
    codec_ctx cur = *ctx;
    int rc = 0;
    for (int i = 0; i < (int)n; i++) {
        codec_ctx cc = cur;
        cc.zarr_format = fmt[i];
        rc = codec_create(json_array_get(codecs, (size_t)i), &cc, &ch->c[i]);
        if (rc < 0) {
            zc__err_wrap(rc, "codecs[%d]", i);
            goto fail;
        }
        ch->n = i + 1;
        const codec *c = &ch->c[i];
        if (i == a2b) {
            bool ok;
            char e = stored_endian(c, &ok);
            if (!ok) { rc = zc__err(ZC_ENOMEM, "codec chain: out of memory"); goto fail; }
            if (e) cur.dtype.endian = e;
            else if (dtype_swap_unit(&cur.dtype) == 1) cur.dtype.endian = '|';
            ch->skip[i] = !strcmp(c->type->name, "bytes") && !dtype_needs_swap(&cur.dtype);
        }
        bool sized = i <= a2b || ch->known[i];
        if (c->type->encoded_ctx && sized) {
            codec_ctx next;
            rc = c->type->encoded_ctx(c->state, &cur, &next);
            if (rc < 0) goto fail;
            next.zarr_format = ctx->zarr_format;
            cur = next;
        }
        ch->size[i + 1] = cur.nbytes;
        ch->known[i + 1] = i <= a2b || (ch->known[i] && c->type->encoded_ctx);
    }
    size_t big = 0;
    for (int i = 0; i <= ch->n; i++)
        if (ch->known[i] && ch->size[i] > big) big = ch->size[i];
    if (ck_mul_sz(big, 2, &ch->bound) || ck_add_sz(ch->bound, SLACK, &ch->bound)) ch->bound = (size_t)-1;
    *out = ch;
    return 0;
fail:
    codec_chain_free(ch);
    return rc;
}

bool codec_chain_is_identity(const codec_chain *ch) { return ch->n == 1 && ch->skip[0]; }

/* How many codecs are not skipped; *one is the last of them (-1 if none). */
static int live_codecs(const codec_chain *ch, int *one)
{
    int live = 0;
    *one = -1;
    for (int i = 0; i < ch->n; i++)
        if (!ch->skip[i]) {
            *one = i;
            live++;
        }
    return live;
}

/* The one codec of the chain that stores blocks apart, or NULL. */
static const codec *blocks_codec(const codec_chain *ch)
{
    const codec *c = codec_chain_sole(ch);
    return c && c->type->blocks_parse && c->type->block_start && c->type->blocks_limit && c->type->decode_range ? c
                                                                                                                : NULL;
}

bool codec_chain_has_blocks(const codec_chain *ch) { return blocks_codec(ch) != NULL; }

bool codec_chain_blocks(const codec_chain *ch, const void *p, size_t n, codec_blocks *b)
{
    const codec *c = blocks_codec(ch);
    return c && c->type->blocks_parse(p, n, b);
}

size_t codec_chain_block_start(const codec_chain *ch, const void *p, size_t j)
{
    return blocks_codec(ch)->type->block_start(p, j);
}

int codec_chain_decode_blocks(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size, size_t lo,
                              size_t hi, size_t *dlo, size_t *dhi)
{
    *dhi = 0;
    return blocks_codec(ch)->type->decode_range(src, n, dst, dst_size, lo, hi, dlo, dhi);
}

void codec_chain_blocks_limit(const codec_chain *ch, void *p, size_t cbytes)
{
    blocks_codec(ch)->type->blocks_limit(p, cbytes);
}

int codec_chain_scatter(const codec_chain *ch, const void *src, size_t n, const codec_scatter *sc, size_t jb0,
                        size_t jb1)
{
    const codec *c = codec_chain_sole(ch);
    return c && c->type->scatter ? c->type->scatter(src, n, ch->ctx.nbytes, sc, jb0, jb1) : 0;
}

const codec *codec_chain_sole(const codec_chain *ch)
{
    int one;
    if (live_codecs(ch, &one) != 1 || !ch->known[one] || ch->size[one] != ch->ctx.nbytes) return NULL;
    return &ch->c[one];
}

size_t codec_chain_nbytes(const codec_chain *ch) { return ch->ctx.nbytes; }

bool codec_chain_has_steps(const codec_chain *ch)
{
    const codec *c = codec_chain_sole(ch);
    return c && c->type->decode_steps;
}

int codec_chain_decode_steps(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size,
                             size_t stop, size_t every, void (*step)(void *ctx, size_t done), void *ctx,
                             size_t *written)
{
    const codec *c = codec_chain_sole(ch);
    if (!c || !c->type->decode_steps) return ZC_EUNSUPPORTED;
    if (dst_size != ch->ctx.nbytes)
        return zc__err(ZC_EINVAL, "codec chain: a %zu-byte buffer for a chunk of %zu", dst_size, ch->ctx.nbytes);
    return c->type->decode_steps(c->state, src, n, dst, dst_size, stop, every, step, ctx, written);
}

json_t *codec_chain_json(const codec_chain *ch)
{
    json_t *list = json_array();
    for (int i = 0; list && i < ch->n; i++) {
        const codec *c = &ch->c[i];
        json_t *j = c->type->to_json ? c->type->to_json(c->state, 3) : NULL;
        if (!j || json_array_append_new(list, j)) {
            json_decref(list);
            list = NULL;
        }
    }
    if (!list) zc__err(ZC_ENOMEM, "codec chain: out of memory writing the codec list");
    return list;
}

/* ---- decode ---- */

typedef struct {
    unsigned char *p; /* zc__malloc'd or NULL */
    size_t cap;       /* bytes allocated */
} scratch;

/* Make s hold at least `need` bytes; its contents are dead (already consumed). */
static int scratch_ensure(scratch *s, size_t need)
{
    if (s->p && s->cap >= need) return 0;
    zc__free(s->p);
    s->cap = 0;
    s->p = zc__malloc(need ? need : 1);
    if (!s->p) return ZC_ENOMEM;
    s->cap = need;
    return 0;
}

int codec_chain_decode(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size)
{
    if (dst_size != ch->ctx.nbytes)
        return zc__err(ZC_EINVAL, "codec chain: output buffer of %zu bytes, the chunk has %zu",
                       dst_size, ch->ctx.nbytes);
    int last = -1; /* the step that writes dst: the lowest codec not skipped */
    for (int i = 0; i < ch->n && last < 0; i++)
        if (!ch->skip[i]) last = i;
    if (last < 0) {
        if (n != dst_size)
            return zc__err(ZC_ECORRUPT, "chunk has %zu bytes, expected %zu", n, dst_size);
        if (n) memcpy(dst, src, n);
        return 0;
    }
    scratch s[2] = {{NULL, 0}, {NULL, 0}};
    const unsigned char *in = src;
    size_t len = n;
    int in_buf = -1; /* which scratch holds `in` (-1: src or dst) */
    int rc = 0;
    for (int i = ch->n - 1; i >= last; i--) {
        const codec *c = &ch->c[i];
        if (ch->skip[i]) {
            if (ch->known[i] && len != ch->size[i]) {
                rc = zc__err(ZC_ECORRUPT, "codec '%s': chunk has %zu bytes, expected %zu",
                             c->type->name, len, ch->size[i]);
                goto done;
            }
            continue;
        }
        unsigned char *out;
        size_t cap;
        int out_buf = -1;
        if (i == last) {
            out = dst;
            cap = dst_size;
        } else {
            cap = ch->known[i] ? ch->size[i] : ch->bound;
            if (c->type->decoded_size) {
                size_t ds = 0;
                bool k = false;
                rc = c->type->decoded_size(c->state, in, len, &ds, &k);
                if (rc < 0) goto done;
                if (k && ds > cap) {
                    rc = zc__err(ZC_ECORRUPT, "codec '%s': decoded size %zu exceeds the %s %zu",
                                 c->type->name, ds, ch->known[i] ? "expected" : "bound", cap);
                    goto done;
                }
                if (k) cap = ds;
            }
            out_buf = in_buf == 0 ? 1 : 0;
            rc = scratch_ensure(&s[out_buf], cap);
            if (rc < 0) goto done;
            out = s[out_buf].p;
        }
        size_t w = 0;
        rc = c->type->decode(c->state, len ? in : (const unsigned char *)"", len, out, cap, &w);
        if (rc < 0) goto done;
        if (w > cap) {
            rc = zc__err(ZC_EINTERNAL, "codec '%s' wrote %zu bytes into %zu", c->type->name, w, cap);
            goto done;
        }
        if (ch->known[i] && w != ch->size[i]) {
            rc = zc__err(ZC_ECORRUPT, "codec '%s': decoded %zu bytes, expected %zu",
                         c->type->name, w, ch->size[i]);
            goto done;
        }
        in = out;
        len = w;
        in_buf = out_buf;
    }
done:
    zc__free(s[0].p);
    zc__free(s[1].p);
    return rc;
}

int codec_chain_decode_range(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size,
                             size_t lo, size_t hi, size_t *dlo, size_t *dhi)
{
    if (dst_size != ch->ctx.nbytes || lo > hi || hi > dst_size)
        return zc__err(ZC_EINVAL, "codec chain: range %zu..%zu of a %zu-byte buffer, the chunk has %zu", lo, hi,
                       dst_size, ch->ctx.nbytes);
    int one;
    if (live_codecs(ch, &one) == 0) {
        if (n != dst_size) return zc__err(ZC_ECORRUPT, "chunk has %zu bytes, expected %zu", n, dst_size);
        if (hi > lo) memcpy((unsigned char *)dst + lo, (const unsigned char *)src + lo, hi - lo);
        *dlo = lo;
        *dhi = hi;
        return 0;
    }
    const codec *c = blocks_codec(ch);
    if (c) { /* dst_size == ctx.nbytes, checked above */
        *dhi = 0;
        ZC_TRY(c->type->decode_range(n ? src : (const void *)"", n, dst, dst_size, lo, hi, dlo, dhi));
        if (*dhi) {
            if (*dlo > lo || *dhi < hi || *dhi > dst_size)
                return zc__err(ZC_EINTERNAL, "codec '%s' decoded %zu..%zu for %zu..%zu", c->type->name, *dlo,
                               *dhi, lo, hi);
            return 0;
        }
    }
    ZC_TRY(codec_chain_decode(ch, src, n, dst, dst_size));
    *dlo = 0;
    *dhi = dst_size;
    return 0;
}

/* ---- encode ---- */

int codec_chain_encode(const codec_chain *ch, const void *src, size_t n, zc_buf *out)
{
    if (n != ch->ctx.nbytes)
        return zc__err(ZC_EINVAL, "codec chain: chunk of %zu bytes, expected %zu", n, ch->ctx.nbytes);
    out->size = 0;
    int last = -1; /* the step that writes `out`: the highest codec not skipped */
    for (int i = ch->n - 1; i >= 0 && last < 0; i--)
        if (!ch->skip[i]) last = i;
    if (last < 0) return buf_append(out, src, n);
    zc_buf b[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    const unsigned char *in = src;
    size_t len = n;
    int in_buf = -1;
    int rc = 0;
    for (int i = 0; i <= last; i++) {
        const codec *c = &ch->c[i];
        if (ch->skip[i]) continue;
        int out_buf = i == last ? -1 : in_buf == 0 ? 1 : 0;
        zc_buf *o = out_buf < 0 ? out : &b[out_buf];
        o->size = 0;
        rc = c->type->encode(c->state, len ? in : (const unsigned char *)"", len, o);
        if (rc < 0) goto done;
        if (ch->known[i + 1] && o->size != ch->size[i + 1]) {
            rc = zc__err(ZC_EINTERNAL, "codec '%s' encoded %zu bytes, expected %zu", c->type->name,
                         o->size, ch->size[i + 1]);
            goto done;
        }
        in = o->data;
        len = o->size;
        in_buf = out_buf;
    }
done:
    buf_free(&b[0]);
    buf_free(&b[1]);
    return rc;
}
