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

/* ---- decoding by steps (codec.h hooks) ---- */

/* The largest window a stream decodes with: zstd's levels up to 19 use at
 * most 8 MiB (windowLog 23); frames needing more (--ultra, long mode) are
 * refused by the stream with a clear error, never decoded past the bound. */
#define STEPS_WINDOW_LOG 23

static size_t stored_max(void *state, size_t nbytes)
{
    (void)state;
    return ZSTD_compressBound(nbytes);
}

static int decode_steps(void *state, const void *src, size_t n, void *dst, size_t cap, size_t stop, size_t every,
                        void (*step)(void *ctx, size_t done), void *ctx, size_t *written)
{
    (void)state;
    return codec_zstd_decode_steps(src, n, dst, cap, stop, every, step, ctx, written);
}

typedef struct {
    ZSTD_DCtx *d;
    ZSTD_inBuffer in;
    size_t left;   /* decoded bytes not handed out yet */
    size_t nbytes; /* of the chunk */
    int wlog;      /* the window allowed */
} zstd_steps;

/* log2 of the window a stream of a chunk of nbytes allows: what the
 * configured level compresses a chunk of that size with (zstd's parameters
 * for the level and the size: zcube, numcodecs and zarr-python all write
 * so; level 1: 512 KiB for chunks above 256 KiB), and a frame of a known
 * size no larger than its window holds it whole (single segment), so no more
 * than nbytes rounded up to a power of two; at least 1 KiB (zstd's
 * smallest), at most STEPS_WINDOW_LOG. */
static int steps_window_log(const zstd_state *s, size_t nbytes)
{
    int level = s->level == 0 ? ZSTD_CLEVEL_DEFAULT : s->level;
    if (level > ZSTD_maxCLevel()) level = ZSTD_maxCLevel();
    int cap = (int)ZSTD_getCParams(level, nbytes, 0).windowLog, log = 10;
    if (cap > STEPS_WINDOW_LOG) cap = STEPS_WINDOW_LOG;
    while (log < cap && ((size_t)1 << log) < nbytes) log++;
    return log;
}

/* The window, zstd's input and output blocks and the context. */
static size_t steps_mem(void *state, size_t nbytes)
{
    return ZSTD_estimateDStreamSize((size_t)1 << steps_window_log(state, nbytes));
}

static void steps_close(void *it)
{
    zstd_steps *z = it;
    if (!z) return;
    ZSTD_freeDCtx(z->d);
    zc__free(z);
}

static int steps_open(void *state, const void *src, size_t n, size_t nbytes, void **it)
{
    unsigned long long fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        return zc__err(ZC_ECORRUPT, "zstd: not a zstd frame, or its header is cut short (%zu bytes)", n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > nbytes)
        return zc__err(ZC_ECORRUPT, "zstd: frame declares %llu decoded bytes, more than the %zu expected", fcs,
                       nbytes);
    zstd_steps *z = zc__calloc(1, sizeof *z);
    if (!z) return ZC_ENOMEM;
    if (!(z->d = codec_b2b_zstd_dctx_new())) {
        zc__free(z);
        return ZC_ENOMEM;
    }
    z->in = (ZSTD_inBuffer){src, n, 0};
    z->left = z->nbytes = nbytes;
    z->wlog = steps_window_log(state, nbytes);
    ZSTD_DCtx_setParameter(z->d, ZSTD_d_windowLogMax, z->wlog);
    *it = z;
    return 0;
}

static int steps_read(void *it, void *dst, size_t len)
{
    zstd_steps *z = it;
    if (len > z->left) return zc__err(ZC_ECORRUPT, "zstd: %zu bytes asked past the end of the chunk", len);
    ZSTD_outBuffer out = {dst, len, 0};
    while (out.pos < len) {
        size_t before = z->in.pos, r = ZSTD_decompressStream(z->d, &out, &z->in);
        if (ZSTD_isError(r)) {
            if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
                return zc__err(ZC_EMEMBOUND, "zstd: a frame needs a window larger than the %zu KiB its level "
                               "compresses a chunk of %zu bytes with, which a stream decodes it with (written "
                               "at another level than the metadata says, or in long mode?)",
                               ((size_t)1 << z->wlog) >> 10, z->nbytes);
            return zstd_error(r, z->in.size, len);
        }
        if (out.pos < len && z->in.pos == z->in.size && z->in.pos == before)
            return zc__err(ZC_ECORRUPT, "zstd: data cut short (%zu of the expected bytes missing)",
                           z->left - out.pos);
    }
    z->left -= len;
    if (z->left == 0) { /* the frames end here, and nothing follows */
        unsigned char extra;
        ZSTD_outBuffer one = {&extra, 1, 0};
        size_t r = z->in.pos < z->in.size ? ZSTD_decompressStream(z->d, &one, &z->in) : 0;
        if (ZSTD_isError(r)) return zstd_error(r, z->in.size, len);
        if (one.pos || r != 0 || z->in.pos != z->in.size)
            return zc__err(ZC_ECORRUPT, "zstd: data decodes to more bytes than expected");
    }
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
    .stored_max = stored_max,
    .decode_steps = decode_steps,
    .steps_open = steps_open,
    .steps_read = steps_read,
    .steps_close = steps_close,
    .steps_mem = steps_mem,
};
