/* codec/lz4.c — numcodecs' "lz4" compressor (v2 id "lz4", v3 name
 * "numcodecs.lz4").
 *
 * Bytes (numcodecs framing, not the LZ4 frame format): a 4-byte little-endian
 * decoded size, then one LZ4 block.
 *
 *   +-----------+------------------------+
 *   | size (LE) | LZ4 block (n - 4 bytes) |
 *   +-----------+------------------------+
 *
 * Config: {"acceleration": int} (v2 {"id": "lz4", "acceleration"}), default 1;
 * values below 1 mean 1 and large ones are capped by LZ4 itself, as numcodecs
 * passes them through.
 *
 * Decoding checks the prefix against `cap` before touching the block and
 * requires the block to decode to exactly that many bytes (LZ4_decompress_safe
 * never writes past the size it is given). Streams (codec_stream) decode it
 * in order with 64 KiB of history instead (lz4_steps.c). */
#include <limits.h>
#include <lz4.h>

#include "codec/compress_common.h"
#include "codec/lz4_steps.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

typedef struct {
    int acceleration; /* as configured */
} lz4_state;

static int create(const json_t *cfg, const codec_ctx *ctx, void **state)
{
    long long accel;
    ZC_TRY(codec_b2b_cfg_int(cfg, "lz4", "acceleration", 1, INT_MIN, INT_MAX, &accel));
    lz4_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->acceleration = (int)accel;
    *state = s;
    return 0;
}

static void destroy(void *state) { zc__free(state); }

static int decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    if (n < 4) return zc__err(ZC_ECORRUPT, "lz4: %zu bytes is too short for the 4-byte size prefix", n);
    *size = codec_b2b_load_le32(src);
    *known = true;
    return 0;
}

static int decode(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written)
{
    if (n < 4) return zc__err(ZC_ECORRUPT, "lz4: %zu bytes is too short for the 4-byte size prefix", n);
    uint32_t size = codec_b2b_load_le32(src);
    if (size > cap)
        return zc__err(ZC_ECORRUPT, "lz4: prefix declares %u decoded bytes, more than the %zu expected",
                       (unsigned)size, cap);
    if (size > INT_MAX || n - 4 > INT_MAX)
        return zc__err(ZC_ECORRUPT, "lz4: block sizes exceed what LZ4 allows (%u decoded, %zu stored)",
                       (unsigned)size, n - 4);
    int r = LZ4_decompress_safe((const char *)src + 4, dst, (int)(n - 4), (int)size);
    if (r < 0)
        return zc__err(ZC_ECORRUPT, "lz4: invalid or truncated block (%zu bytes, error at offset %d)",
                       n - 4, -r - 1);
    if ((uint32_t)r != size)
        return zc__err(ZC_ECORRUPT, "lz4: block decodes to %d bytes, the prefix says %u", r,
                       (unsigned)size);
    *written = size;
    return 0;
}

static int encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const lz4_state *s = state;
    if (n > LZ4_MAX_INPUT_SIZE)
        return zc__err(ZC_EOVERFLOW, "lz4: %zu bytes is more than LZ4 can compress (%d)", n,
                       LZ4_MAX_INPUT_SIZE);
    int bound = LZ4_compressBound((int)n);
    size_t need;
    if (ck_add_sz(out->size, 4 + (size_t)bound, &need))
        return zc__err(ZC_EOVERFLOW, "lz4: encoded size overflows");
    ZC_TRY(buf_reserve(out, need));
    unsigned char *o = out->data + out->size;
    int r = LZ4_compress_fast(src, (char *)o + 4, (int)n, bound, s->acceleration);
    if (r <= 0 && n > 0) return zc__err(ZC_EINTERNAL, "lz4: compression of %zu bytes failed", n);
    codec_b2b_store_le32(o, (uint32_t)n);
    out->size += 4 + (size_t)r;
    return 0;
}

static size_t stored_max(void *state, size_t nbytes)
{
    (void)state;
    return 4 + (nbytes <= LZ4_MAX_INPUT_SIZE ? (size_t)LZ4_compressBound((int)nbytes) : nbytes + nbytes / 255 + 16);
}

static json_t *to_json(void *state, int zarr_format)
{
    const lz4_state *s = state;
    json_t *conf = json_pack("{s:i}", "acceleration", s->acceleration);
    return conf ? codec_b2b_json("numcodecs.lz4", "lz4", zarr_format, conf) : NULL;
}

const codec_type codec_lz4 = {
    .version = 1,
    .name = "numcodecs.lz4",
    .v2_id = "lz4",
    .kind = CODEC_B2B,
    .create = create,
    .destroy = destroy,
    .decode = decode,
    .decoded_size = decoded_size,
    .encode = encode,
    .to_json = to_json,
    .stored_max = stored_max,
    .steps_open = codec_lz4_steps_open,
    .steps_read = codec_lz4_steps_read,
    .steps_close = codec_lz4_steps_close,
    .steps_mem = codec_lz4_steps_mem,
};
