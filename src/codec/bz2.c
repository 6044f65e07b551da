/* codec/bz2.c — numcodecs' "bz2" compressor (v2 id "bz2", v3 name
 * "numcodecs.bz2").
 *
 * Bytes: one or more bzip2 streams ("BZh" + block size digit, blocks, end
 * marker with the combined CRC), as Python's bz2.decompress (numcodecs) reads
 * them.
 *
 * Config: {"level": 1..9} (v2 {"id": "bz2", "level"}), the block size in
 * 100 kB units; default 1 (numcodecs).
 *
 * Decoding streams straight into the caller's buffer with libbz2's
 * BZ2_bzDecompress, whose 32-bit counters are fed in pieces; output is bounded
 * by `cap`: when the buffer is full and libbz2 can make no progress, the data
 * decodes to more than expected. libbz2's working memory goes through
 * zc__malloc (bzalloc/bzfree hooks), so it is counted like ours. A bad block or
 * CRC is ZC_ECORRUPT (libbz2 does not tell them apart). */
#include <bzlib.h>
#include <limits.h>
#include <string.h>

#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

typedef struct {
    int level; /* 1..9 */
} bz2_state;

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long level;
    ZC_TRY(codec_b2b_cfg_int(cfg, "bz2", "level", 1, 1, 9, &level));
    bz2_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->level = (int)level;
    *state = s;
    return 0;
}

static void destroy(void *state) { zc__free(state); }

static void *bz_alloc(void *opaque, int items, int size)
{
    size_t total;
    if (items < 0 || size < 0 || ck_mul_sz((size_t)items, (size_t)size, &total)) return NULL;
    return zc__malloc(total);
}

static void bz_free(void *opaque, void *p) { zc__free(p); }

static unsigned clamp_uint(size_t v) { return v > UINT_MAX ? UINT_MAX : (unsigned)v; }

static int bz_error(int ret, size_t at)
{
    switch (ret) {
    case BZ_MEM_ERROR: return zc__err(ZC_ENOMEM, "bz2: out of memory");
    case BZ_DATA_ERROR_MAGIC: return zc__err(ZC_ECORRUPT, "bz2: no bzip2 stream at byte %zu", at);
    case BZ_DATA_ERROR: return zc__err(ZC_ECORRUPT, "bz2: corrupt data (bad block or CRC) before byte %zu", at);
    default: return zc__err(ZC_EINTERNAL, "bz2: libbz2 error %d", ret);
    }
}

/* Decode one stream starting at *pos into o[*total..cap). */
static int decode_stream(const char *p, size_t n, size_t *pos, char *o, size_t cap, size_t *total)
{
    bz_stream s;
    memset(&s, 0, sizeof s);
    s.bzalloc = bz_alloc;
    s.bzfree = bz_free;
    int ret = BZ2_bzDecompressInit(&s, 0, 0);
    if (ret != BZ_OK) return bz_error(ret, *pos);
    int rc = 0;
    for (;;) {
        s.next_in = (char *)p + *pos;
        s.avail_in = clamp_uint(n - *pos);
        s.next_out = o + *total;
        s.avail_out = clamp_uint(cap - *total);
        unsigned ai = s.avail_in, ao = s.avail_out;
        ret = BZ2_bzDecompress(&s);
        *pos += ai - s.avail_in;
        *total += ao - s.avail_out;
        if (ret == BZ_STREAM_END) break;
        if (ret != BZ_OK) {
            rc = bz_error(ret, *pos);
            break;
        }
        if (ai == s.avail_in && ao == s.avail_out) { /* stuck: input ended or output is full */
            if (*pos == n)
                rc = zc__err(ZC_ECORRUPT, "bz2: stream is cut short after %zu bytes", n);
            else
                rc = zc__err(ZC_ECORRUPT, "bz2: data decodes to more than the %zu bytes expected", cap);
            break;
        }
    }
    BZ2_bzDecompressEnd(&s);
    return rc;
}

static int decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written)
{
    size_t pos = 0, total = 0;
    if (n == 0) return zc__err(ZC_ECORRUPT, "bz2: empty input");
    while (pos < n) ZC_TRY(decode_stream(src, n, &pos, dst, cap, &total));
    *written = total;
    return 0;
}

static int encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const bz2_state *st = state;
    size_t start = out->size, bound, need;
    /* libbz2's documented worst case: 1% larger plus 600 bytes */
    if (ck_add_sz(n, n / 100 + 600, &bound) || ck_add_sz(start, bound, &need))
        return zc__err(ZC_EOVERFLOW, "bz2: %zu bytes is too large to compress", n);
    ZC_TRY(buf_reserve(out, need));
    bz_stream s;
    memset(&s, 0, sizeof s);
    s.bzalloc = bz_alloc;
    s.bzfree = bz_free;
    int ret = BZ2_bzCompressInit(&s, st->level, 0, 0);
    if (ret != BZ_OK) return bz_error(ret, 0);
    const char *in = src;
    size_t left = n;
    int rc = 0;
    do {
        if (out->size == out->cap && (rc = buf_reserve(out, out->cap + out->cap / 2 + 4096)) < 0) break;
        if (s.avail_in == 0 && left > 0) { /* BZ_RUN pieces; the last piece goes with BZ_FINISH */
            s.next_in = (char *)in;
            s.avail_in = clamp_uint(left);
            in += s.avail_in;
            left -= s.avail_in;
        }
        s.next_out = (char *)out->data + out->size;
        s.avail_out = clamp_uint(out->cap - out->size);
        unsigned ao = s.avail_out;
        ret = BZ2_bzCompress(&s, left ? BZ_RUN : BZ_FINISH);
        out->size += ao - s.avail_out;
        if (ret < 0) rc = bz_error(ret, 0);
    } while (rc == 0 && ret != BZ_STREAM_END);
    BZ2_bzCompressEnd(&s);
    if (rc < 0) out->size = start;
    return rc;
}

static json_t *to_json(void *state, int zarr_format)
{
    const bz2_state *s = state;
    json_t *conf = json_pack("{s:i}", "level", s->level);
    return conf ? codec_b2b_json("numcodecs.bz2", "bz2", zarr_format, conf) : NULL;
}

const codec_type codec_bz2 = {
    .version = 1,
    .name = "numcodecs.bz2",
    .v2_id = "bz2",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = destroy,
    .decode = decode,
    .decoded_size = NULL,
    .encode = encode,
    .to_json = to_json,
};
