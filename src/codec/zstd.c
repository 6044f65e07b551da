/* codec/zstd.c — the "zstd" compressor (Zarr v3 "zstd", numcodecs id "zstd").
 *
 * Bytes: one or more standard zstd frames (RFC 8878). Frames we write carry
 * their content size, and a 4-byte XXH64-based frame checksum when "checksum"
 * is true.
 *
 * Config: v3 {"level": int, "checksum": bool} (zarr-python 3 writes both;
 * default level 0 = zstd's default); v2 {"id": "zstd", "level": int} plus
 * "checksum" (numcodecs >= 0.12; written only when true, as numcodecs 0.11,
 * the one zarr-python 2.13 uses, refuses the key; default level 1 as in
 * numcodecs). Any integer level is accepted and clamped to zstd's range when
 * encoding (numcodecs passes level 100 through the same way).
 *
 * Decoding is one-shot straight into the caller's buffer: a frame whose header
 * declares more than `cap` bytes is refused before any work, and frames without
 * a declared size are still bounded, because one-shot decompression fails
 * (dstSize_tooSmall) rather than write past `cap`. No window buffer is needed
 * (unlike streaming, which would allocate up to the frame's window size).
 * Contexts are per thread (compress_common.c).
 *
 * codec_zstd_decode_steps (zstd.h) decodes into the caller's buffer too, but
 * a block at a time with zstd's buffer-less API (ZSTD_decompressContinue: the
 * output is the caller's contiguous buffer, so no window buffer either),
 * telling the caller after each block: zarr/read.c copies decoded rows into
 * place while they are in cache, and stops a partial read at its last byte. */
#include <limits.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_decompressBegin/Continue (buffer-less streaming), ZSTD_getFrameHeader */
#include <zstd.h>
#include <zstd_errors.h>

#include "codec/compress_common.h"
#include "codec/zstd.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

typedef struct {
    int level;     /* as configured (kept for to_json) */
    bool checksum; /* write a frame checksum */
} zstd_state;

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long level;
    bool checksum;
    ZC_TRY(codec_b2b_cfg_int(cfg, "zstd", "level", ctx->zarr_format == 2 ? 1 : 0, INT_MIN, INT_MAX,
                             &level));
    ZC_TRY(codec_b2b_cfg_bool(cfg, "zstd", "checksum", false, &checksum));
    zstd_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->level = (int)level;
    s->checksum = checksum;
    *state = s;
    return 0;
}

static void destroy(void *state) { zc__free(state); }

static int zstd_error(size_t r, size_t n, size_t cap)
{
    switch (ZSTD_getErrorCode(r)) {
    case ZSTD_error_checksum_wrong:
        return zc__err(ZC_ECHECKSUM, "zstd: frame checksum mismatch");
    case ZSTD_error_dstSize_tooSmall:
        return zc__err(ZC_ECORRUPT, "zstd: data decodes to more than the %zu bytes expected", cap);
    case ZSTD_error_memory_allocation:
        return zc__err(ZC_ENOMEM, "zstd: out of memory");
    default:
        return zc__err(ZC_ECORRUPT, "zstd: %s (%zu bytes of input)", ZSTD_getErrorName(r), n);
    }
}

static int decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written)
{
    unsigned long long fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        return zc__err(ZC_ECORRUPT, "zstd: not a zstd frame, or its header is cut short (%zu bytes)", n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > cap)
        return zc__err(ZC_ECORRUPT, "zstd: frame declares %llu decoded bytes, more than the %zu expected",
                       fcs, cap);
    ZSTD_DCtx *d = codec_b2b_zstd_dctx();
    if (!d) return ZC_ENOMEM;
    size_t r = ZSTD_decompressDCtx(d, dst, cap, src, n);
    if (ZSTD_isError(r)) return zstd_error(r, n, cap);
    *written = r;
    return 0;
}

int codec_zstd_decode_steps(const void *vsrc, size_t n, void *vdst, size_t cap, size_t stop, size_t every,
                            codec_zstd_step_fn step, void *ctx, size_t *written)
{
    const unsigned char *src = vsrc;
    unsigned char *dst = vdst;
    size_t at = 0, pos = 0, told = 0;
    *written = 0;
    ZSTD_DCtx *d = codec_b2b_zstd_dctx();
    if (!d) return ZC_ENOMEM;
    if (n == 0) return zc__err(ZC_ECORRUPT, "zstd: not a zstd frame, or its header is cut short (0 bytes)");
    while (at < n) {
        ZSTD_frameHeader fh;
        size_t hr = ZSTD_getFrameHeader(&fh, src + at, n - at);
        if (ZSTD_isError(hr) || hr > 0)
            return zc__err(ZC_ECORRUPT, "zstd: not a zstd frame, or its header is cut short (%zu bytes at %zu)",
                           n - at, at);
        if (fh.frameType == ZSTD_frame && fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN &&
            fh.frameContentSize > cap - pos)
            return zc__err(ZC_ECORRUPT, "zstd: frame declares %llu decoded bytes, more than the %zu expected",
                           fh.frameContentSize, cap);
        size_t r = ZSTD_decompressBegin(d);
        if (ZSTD_isError(r)) return zstd_error(r, n, cap);
        for (;;) {
            size_t need = ZSTD_nextSrcSizeToDecompress(d);
            if (need == 0) break;
            if (need > n - at) return zc__err(ZC_ECORRUPT, "zstd: frame cut short (%zu bytes of input)", n);
            r = ZSTD_decompressContinue(d, dst + pos, cap - pos, src + at, need);
            if (ZSTD_isError(r)) return zstd_error(r, n, cap);
            at += need;
            pos += r;
            if (pos - told >= every) {
                step(ctx, pos);
                told = pos;
            }
            if (pos >= stop && stop < cap && !fh.checksumFlag) {
                if (told < pos) step(ctx, pos);
                *written = pos;
                return 0;
            }
        }
    }
    if (pos != cap) return zc__err(ZC_ECORRUPT, "zstd: data decodes to %zu bytes, expected %zu", pos, cap);
    if (told < pos) step(ctx, pos);
    *written = pos;
    return 0;
}

static int decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    *known = false;
    unsigned long long fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        return zc__err(ZC_ECORRUPT, "zstd: not a zstd frame, or its header is cut short (%zu bytes)", n);
    if (fcs == ZSTD_CONTENTSIZE_UNKNOWN) return 0;
    size_t frame = ZSTD_findFrameCompressedSize(src, n);
    if (ZSTD_isError(frame)) return zstd_error(frame, n, 0);
    if (frame != n || fcs > SIZE_MAX) return 0; /* several frames: only their sum would do */
    *size = (size_t)fcs;
    *known = true;
    return 0;
}

static int encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const zstd_state *s = state;
    size_t bound = ZSTD_compressBound(n), need;
    if (ZSTD_isError(bound) || ck_add_sz(out->size, bound, &need))
        return zc__err(ZC_EOVERFLOW, "zstd: %zu bytes is too large to compress", n);
    ZC_TRY(buf_reserve(out, need));
    ZSTD_CCtx *c = codec_b2b_zstd_cctx();
    if (!c) return ZC_ENOMEM;
    int level = s->level;
    if (level < ZSTD_minCLevel()) level = ZSTD_minCLevel();
    if (level > ZSTD_maxCLevel()) level = ZSTD_maxCLevel();
    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    size_t r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, s->checksum);
    if (!ZSTD_isError(r)) r = ZSTD_compress2(c, out->data + out->size, out->cap - out->size, src, n);
    codec_b2b_zstd_cctx_trim();
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
            return zc__err(ZC_ENOMEM, "zstd: out of memory compressing %zu bytes", n);
        return zc__err(ZC_EINTERNAL, "zstd: compression failed: %s", ZSTD_getErrorName(r));
    }
    out->size += r;
    return 0;
}

static json_t *to_json(void *state, int zarr_format)
{
    const zstd_state *s = state;
    json_t *conf = json_object();
    if (!conf) return NULL;
    int bad = json_object_set_new(conf, "level", json_integer(s->level));
    if (zarr_format == 3 || s->checksum)
        bad |= json_object_set_new(conf, "checksum", json_boolean(s->checksum));
    if (bad) {
        json_decref(conf);
        return NULL;
    }
    return codec_b2b_json("zstd", "zstd", zarr_format, conf);
}

const codec_type codec_zstd = {
    .version = 1,
    .name = "zstd",
    .v2_id = "zstd",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = destroy,
    .decode = decode,
    .decoded_size = decoded_size,
    .encode = encode,
    .to_json = to_json,
};
