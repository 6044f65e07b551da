/* codec/blosc.c — the "blosc" compressor (Zarr v3 "blosc", numcodecs id
 * "blosc"), c-blosc 1.x format.
 *
 * Bytes: one blosc1 buffer. Its 16-byte header:
 *
 *   0 version  1 compressor version  2 flags  3 typesize
 *   4 nbytes (LE32, decoded size)  8 blocksize (LE32)  12 cbytes (LE32, = n)
 *
 * flags bit 0 byte shuffle, bit 1 plain copy, bit 2 bit shuffle, bits 5-7 the
 * compressor format (0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib, 4 zstd).
 *
 * Config (zarr-python 3, v3): {"typesize": int, "cname": str, "clevel": 0..9,
 * "shuffle": "noshuffle"|"shuffle"|"bitshuffle", "blocksize": int}.
 * numcodecs (v2): {"id": "blosc", "cname", "clevel", "shuffle": 0|1|2|-1,
 * "blocksize"}; -1 (AUTOSHUFFLE) means bit shuffle for 1-byte items, else byte
 * shuffle. typesize, when absent, is the array's item size (ctx->dtype.size);
 * v2 output leaves it out, as numcodecs 0.11 does not accept it.
 *
 * Decoding validates the header against the input length
 * (blosc_cbuffer_validate), refuses a declared size above `cap`, and then
 * decompresses on the calling thread (no global lock, no blosc threads), since
 * zarr/ runs many decodes at once on its own pool: lz4 buffers with byte or no
 * shuffle block by block in place (blosc_fast.c, no per-call setup), the rest
 * with blosc_decompress_ctx.
 * codec_blosc_decode_range decodes only the blocks a part of the chunk needs (see there). */
#include <blosc.h>
#include <string.h>

#include "codec/blosc_fast.h"
#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

static const char *const cnames[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
/* by header compressor format (flags >> 5), a cname blosc decodes it with */
static const char *const formats[] = {"blosclz", "lz4", "snappy", "zlib", "zstd"};
static const char *const shuffles[] = {"noshuffle", "shuffle", "bitshuffle"};

typedef struct {
    const char *cname; /* one of cnames[] */
    int clevel;        /* 0..9 */
    int shuffle;       /* -1 auto, 0 none, 1 byte, 2 bit */
    size_t typesize;   /* item size for shuffling (>= 1) */
    size_t blocksize;  /* 0: blosc chooses */
} blosc_state;

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    const char *cname;
    long long clevel, shuffle = 1, typesize, blocksize;
    ZC_TRY(codec_b2b_cfg_str(cfg, "blosc", "cname", "lz4", &cname));
    ZC_TRY(codec_b2b_cfg_int(cfg, "blosc", "clevel", 5, 0, 9, &clevel));
    ZC_TRY(codec_b2b_cfg_int(cfg, "blosc", "typesize", ctx->dtype.size ? (long long)ctx->dtype.size : 1,
                             1, INT32_MAX, &typesize));
    ZC_TRY(codec_b2b_cfg_int(cfg, "blosc", "blocksize", 0, 0, INT32_MAX, &blocksize));
    const json_t *sh = cfg ? json_object_get(cfg, "shuffle") : NULL;
    if (ctx->zarr_format == 3 && json_is_string(sh)) {
        const char *v = json_string_value(sh);
        for (shuffle = 0; shuffle < 3 && strcmp(v, shuffles[shuffle]); shuffle++) {}
        if (shuffle == 3)
            return zc__err(ZC_EFORMAT,
                           "blosc: 'shuffle' is '%s', not 'noshuffle', 'shuffle' or 'bitshuffle'", v);
    } else if (ctx->zarr_format == 3 && sh && !json_is_null(sh)) {
        return zc__err(ZC_EFORMAT, "blosc: 'shuffle' must be 'noshuffle', 'shuffle' or 'bitshuffle'");
    } else {
        ZC_TRY(codec_b2b_cfg_int(cfg, "blosc", "shuffle", 1, -1, 2, &shuffle));
    }
    size_t i = 0;
    while (i < sizeof cnames / sizeof cnames[0] && strcmp(cname, cnames[i])) i++;
    if (i == sizeof cnames / sizeof cnames[0])
        return zc__err(ZC_EUNSUPPORTED, "blosc: unknown cname '%s' (blosc has %s)", cname,
                       blosc_list_compressors());
    blosc_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->cname = cnames[i];
    s->clevel = (int)clevel;
    s->shuffle = (int)shuffle;
    s->typesize = (size_t)typesize;
    s->blocksize = (size_t)blocksize;
    *state = s;
    return 0;
}

static void destroy(void *state) { zc__free(state); }

/* Check the header against n; give the decoded size. */
static int check_header(const void *src, size_t n, size_t *nbytes)
{
    if (n < BLOSC_MIN_HEADER_LENGTH)
        return zc__err(ZC_ECORRUPT, "blosc: %zu bytes is shorter than the %d-byte header", n,
                       BLOSC_MIN_HEADER_LENGTH);
    if (blosc_cbuffer_validate(src, n, nbytes) < 0) {
        size_t hn, hc, hb;
        blosc_cbuffer_sizes(src, &hn, &hc, &hb);
        return zc__err(ZC_ECORRUPT,
                       "blosc: invalid header (version %u, %zu bytes stored of %zu given, %zu decoded)",
                       ((const unsigned char *)src)[0], hc, n, hn);
    }
    return 0;
}

static int decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    ZC_TRY(check_header(src, n, size));
    *known = true;
    return 0;
}

static size_t le32(const unsigned char *p)
{
    return (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
}

/* The layout for readers fetching some blocks only (codec_blocks): unless the
 * buffer is memcpyed (flag 0x2), block j's stored start is the LE32 at
 * 16 + 4 j, and its bytes end where the next block (in stored order) starts,
 * the last at cbytes. Format version 2 only (c-blosc 1.x writes it). */
static bool blocks_parse(const void *p, size_t n, codec_blocks *h)
{
    const unsigned char *b = p;
    if (n < CODEC_BLOCKS_HEAD) return false;
    h->nbytes = le32(b + 4);
    h->blocksize = le32(b + 8);
    h->cbytes = le32(b + 12);
    h->nblocks = h->blocksize ? h->nbytes / h->blocksize + (h->nbytes % h->blocksize != 0) : 0;
    h->table = CODEC_BLOCKS_HEAD + 4 * h->nblocks;
    h->known = b[0] == 2;
    h->split = !(b[2] & 0x2);
    h->fast = (b[2] & 0x2) || b[2] >> 5 <= 1; /* memcpyed, blosclz or lz4 */
    return true;
}

static size_t block_start(const void *p, size_t j) { return le32((const unsigned char *)p + CODEC_BLOCKS_HEAD + 4 * j); }

static void blocks_limit(void *p, size_t cbytes)
{
    for (int k = 0; k < 4; k++) ((unsigned char *)p)[12 + k] = (unsigned char)(cbytes >> (8 * k));
}

static int scatter(const void *src, size_t n, size_t nbytes, const codec_scatter *sc, size_t jb0, size_t jb1)
{
    if (jb0 == 0 && jb1 == SIZE_MAX)
        return codec_blosc_fast_scatter(src, n, nbytes, sc->isz, sc->tmp, sc->dst, sc->dstride, sc->sstride, sc->count,
                                        sc->ndim, sc->src_off, sc->stream);
    return codec_blosc_fast_scatter_part(src, n, nbytes, sc->isz, sc->tmp, sc->dst, sc->dstride, sc->sstride,
                                         sc->count, sc->ndim, sc->src_off, sc->stream, jb0, jb1);
}

/* The header's compressor format is one this blosc has. */
static int check_format(unsigned flags)
{
    if (flags & BLOSC_MEMCPYED) return 0;
    unsigned fmt = flags >> 5;
    if (fmt >= sizeof formats / sizeof formats[0])
        return zc__err(ZC_ECORRUPT, "blosc: unknown compressor format %u in header", fmt);
    if (blosc_compname_to_compcode(formats[fmt]) < 0)
        return zc__err(ZC_EUNSUPPORTED, "blosc: data compressed with %s, which this blosc lacks", formats[fmt]);
    return 0;
}

static int decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written)
{
    size_t nbytes;
    ZC_TRY(check_header(src, n, &nbytes));
    if (nbytes > cap)
        return zc__err(ZC_ECORRUPT, "blosc: header declares %zu decoded bytes, more than the %zu expected",
                       nbytes, cap);
    if (nbytes == 0) {
        *written = 0;
        return 0;
    }
    ZC_TRY(check_format(((const unsigned char *)src)[2]));
    size_t bs = le32((const unsigned char *)src + 8);
    if (bs && codec_blosc_fast_blocks(src, n, dst, 0, (nbytes - 1) / bs)) {
        *written = nbytes;
        return 0;
    }
    int r = blosc_decompress_ctx(src, dst, cap, 1);
    if (r <= 0 || (size_t)r != nbytes)
        return zc__err(ZC_ECORRUPT, "blosc: corrupt data (%zu bytes, %zu decoded expected, error %d)", n,
                       nbytes, r);
    *written = nbytes;
    return 0;
}

/* Partial decode: only the blocks that hold [lo, hi). After the header comes
 * the table of block starts (LE32 offsets from the buffer's start, one per
 * block of `blocksize` decoded bytes, the last block possibly shorter); each
 * block decodes on its own, in place (blosc_fast.c), or else with
 * blosc_getitem, which decodes whole blocks into its own buffer and copies the
 * items asked for. The offsets of the blocks used
 * are checked to lie inside the buffer first; blosc itself checks each block's
 * compressed lengths against the header's cbytes, which check_header matched
 * to n. Plain-copy buffers are sliced. Declines (*dhi = 0) when every block
 * is needed (one whole decode is cheaper) or the items do not tile the blocks. */
int codec_blosc_decode_range(const void *src, size_t n, void *dst, size_t cap, size_t lo, size_t hi, size_t *dlo,
                             size_t *dhi)
{
    *dhi = 0;
    size_t nbytes;
    ZC_TRY(check_header(src, n, &nbytes));
    if (nbytes != cap)
        return zc__err(ZC_ECORRUPT, "blosc: header declares %zu decoded bytes, expected %zu", nbytes, cap);
    if (lo >= hi || hi > nbytes) return 0;
    const unsigned char *p = src;
    unsigned flags = p[2];
    ZC_TRY(check_format(flags));
    if (flags & BLOSC_MEMCPYED) {
        if (n - BLOSC_MAX_OVERHEAD < nbytes)
            return zc__err(ZC_ECORRUPT, "blosc: uncompressed buffer of %zu bytes holds less than the %zu declared",
                           n, nbytes);
        memcpy((unsigned char *)dst + lo, p + BLOSC_MAX_OVERHEAD + lo, hi - lo);
        *dlo = lo;
        *dhi = hi;
        return 0;
    }
    size_t ts = p[3], bs = le32(p + 8);
    if (ts == 0 || bs == 0 || bs % ts || nbytes % ts) return 0;
    size_t nblocks = nbytes / bs + (nbytes % bs != 0), j0 = lo / bs, j1 = (hi - 1) / bs;
    if (j0 == 0 && j1 == nblocks - 1) return 0;
    size_t table = BLOSC_MAX_OVERHEAD + 4 * nblocks;
    if (n < table)
        return zc__err(ZC_ECORRUPT, "blosc: %zu bytes cannot hold the starts of its %zu blocks", n, nblocks);
    for (size_t j = j0; j <= j1; j++) {
        size_t at = le32(p + BLOSC_MAX_OVERHEAD + 4 * j);
        if (at < table || at >= n)
            return zc__err(ZC_ECORRUPT, "blosc: block %zu starts at byte %zu, outside the blocks (%zu..%zu)", j,
                           at, table, n);
    }
    size_t b0 = j0 * bs, b1 = (j1 + 1) * bs < nbytes ? (j1 + 1) * bs : nbytes;
    if (codec_blosc_fast_blocks(src, n, dst, j0, j1)) {
        *dlo = b0;
        *dhi = b1;
        return 0;
    }
    int r = blosc_getitem(src, (int)(b0 / ts), (int)((b1 - b0) / ts), (unsigned char *)dst + b0);
    if (r < 0 || (size_t)r != b1 - b0)
        return zc__err(ZC_ECORRUPT, "blosc: corrupt data in blocks %zu..%zu (decoded bytes %zu..%zu, error %d)",
                       j0, j1, b0, b1, r);
    *dlo = b0;
    *dhi = b1;
    return 0;
}

/* ---- decoding by blocks (codec.h hooks; codec/stream.c) ---- */

static size_t stored_max(void *state, size_t nbytes)
{
    (void)state;
    return nbytes + BLOSC_MAX_OVERHEAD; /* blosc stores a buffer as is (memcpyed) rather than let it grow */
}

/* A plain-copy buffer is cut in blocks of this size (it has no block table). */
#define COPY_BLOCK ((size_t)1 << 20)

/* c-blosc 1.x chooses blocks of at most 1 MiB (compute_blocksize: split
 * codecs are capped at 1 MiB, others at 32 KiB x 8 x 4 for clevel 9); a
 * configured blocksize is used as given. */
#define AUTO_BLOCK_MAX ((size_t)1 << 20)

static size_t block_max(void *state, size_t nbytes)
{
    const blosc_state *s = state;
    size_t b = s->blocksize ? s->blocksize : AUTO_BLOCK_MAX;
    if (b < COPY_BLOCK) b = COPY_BLOCK; /* plain-copy buffers are cut in COPY_BLOCK pieces */
    return b < nbytes ? b : nbytes;
}

static int block_size(void *state, const void *src, size_t n, size_t nbytes, size_t *bsize)
{
    (void)state;
    size_t have;
    ZC_TRY(check_header(src, n, &have));
    if (have != nbytes)
        return zc__err(ZC_ECORRUPT, "blosc: header declares %zu decoded bytes, expected %zu", have, nbytes);
    const unsigned char *p = src;
    ZC_TRY(check_format(p[2]));
    if (p[2] & BLOSC_MEMCPYED) {
        if (n - BLOSC_MAX_OVERHEAD < nbytes)
            return zc__err(ZC_ECORRUPT, "blosc: uncompressed buffer of %zu bytes holds less than the %zu declared",
                           n, nbytes);
        *bsize = COPY_BLOCK;
        return 0;
    }
    size_t ts = p[3], bs = le32(p + 8);
    if (nbytes == 0) {
        *bsize = 1;
        return 0;
    }
    if (ts == 0 || bs == 0 || bs % ts || nbytes % ts)
        return zc__err(ZC_ECORRUPT, "blosc: blocks of %zu bytes do not hold whole items of %zu bytes", bs, ts);
    size_t nblocks = nbytes / bs + (nbytes % bs != 0);
    if (n < BLOSC_MAX_OVERHEAD + 4 * nblocks)
        return zc__err(ZC_ECORRUPT, "blosc: %zu bytes cannot hold the starts of its %zu blocks", n, nblocks);
    *bsize = bs;
    return 0;
}

static int decode_block(void *state, const void *src, size_t n, size_t nbytes, size_t bsize, size_t j, void *dst)
{
    (void)state;
    const unsigned char *p = src;
    size_t b0 = j * bsize, size = nbytes - b0 < bsize ? nbytes - b0 : bsize;
    if (p[2] & BLOSC_MEMCPYED) {
        memcpy(dst, p + BLOSC_MAX_OVERHEAD + b0, size);
        return 0;
    }
    size_t nblocks = nbytes / bsize + (nbytes % bsize != 0), table = BLOSC_MAX_OVERHEAD + 4 * nblocks;
    size_t at = le32(p + BLOSC_MAX_OVERHEAD + 4 * j);
    if (at >= n || at < table)
        return zc__err(ZC_ECORRUPT, "blosc: block %zu starts at byte %zu, outside the blocks (..%zu)", j, at, n);
    if (codec_blosc_fast_block(src, n, j, dst)) return 0;
    size_t ts = p[3];
    int r = blosc_getitem(src, (int)(b0 / ts), (int)(size / ts), dst);
    if (r < 0 || (size_t)r != size)
        return zc__err(ZC_ECORRUPT, "blosc: corrupt data in block %zu (decoded bytes %zu..%zu, error %d)", j, b0,
                       b0 + size, r);
    return 0;
}

static int resolved_shuffle(const blosc_state *s)
{
    if (s->shuffle >= 0) return s->shuffle;
    return s->typesize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
}

static int encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const blosc_state *s = state;
    if (n > BLOSC_MAX_BUFFERSIZE)
        return zc__err(ZC_EOVERFLOW, "blosc: %zu bytes is more than blosc can compress (%d)", n,
                       BLOSC_MAX_BUFFERSIZE);
    if (blosc_compname_to_compcode(s->cname) < 0)
        return zc__err(ZC_EUNSUPPORTED, "blosc: this blosc cannot compress with '%s' (it has %s)",
                       s->cname, blosc_list_compressors());
    size_t room = n + BLOSC_MAX_OVERHEAD, need;
    if (ck_add_sz(out->size, room, &need)) return zc__err(ZC_EOVERFLOW, "blosc: encoded size overflows");
    ZC_TRY(buf_reserve(out, need));
    int r = blosc_compress_ctx(s->clevel, resolved_shuffle(s), s->typesize, n, src,
                               out->data + out->size, room, s->cname, s->blocksize, 1);
    if (r <= 0) return zc__err(ZC_EINTERNAL, "blosc: compression of %zu bytes failed (%d)", n, r);
    out->size += (size_t)r;
    return 0;
}

static json_t *to_json(void *state, int zarr_format)
{
    const blosc_state *s = state;
    json_t *conf;
    if (zarr_format == 3)
        conf = json_pack("{s:I, s:s, s:i, s:s, s:I}", "typesize", (json_int_t)s->typesize, "cname",
                         s->cname, "clevel", s->clevel, "shuffle", shuffles[resolved_shuffle(s)],
                         "blocksize", (json_int_t)s->blocksize);
    else
        conf = json_pack("{s:s, s:i, s:i, s:I}", "cname", s->cname, "clevel", s->clevel, "shuffle",
                         s->shuffle, "blocksize", (json_int_t)s->blocksize);
    return conf ? codec_b2b_json("blosc", "blosc", zarr_format, conf) : NULL;
}

const codec_type codec_blosc = {
    .version = 1,
    .name = "blosc",
    .v2_id = "blosc",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = destroy,
    .decode = decode,
    .decoded_size = decoded_size,
    .encode = encode,
    .to_json = to_json,
    .stored_max = stored_max,
    .block_size = block_size,
    .block_max = block_max,
    .decode_block = decode_block,
    .blocks_parse = blocks_parse,
    .block_start = block_start,
    .blocks_limit = blocks_limit,
    .decode_range = codec_blosc_decode_range,
    .scatter = scatter,
};
