/* codec/compress_common.c — helpers shared by the compressor and checksum
 * codecs: config readers, JSON spelling, per-thread compression contexts,
 * bounded raw DEFLATE, and the 32-bit checksum codec used by crc32c, crc32
 * and adler32 (see compress_common.h for the layouts). */
#include "codec/compress_common.h"

#include <libdeflate.h>
#include <pthread.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_create?Ctx_advanced */
#include <zstd.h>

#include "core/alloc.h"
#include "core/error.h"

/* ------------------------------------------------------------------ config */

static const json_t *cfg_get(const json_t *cfg, const char *key)
{
    const json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

int codec_b2b_cfg_int(const json_t *cfg, const char *who, const char *key, long long def,
                      long long lo, long long hi, long long *out)
{
    const json_t *v = cfg_get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_integer(v))
        return zc__err(ZC_EFORMAT, "%s: '%s' must be an integer", who, key);
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return zc__err(ZC_EFORMAT, "%s: '%s' is %lld, outside [%lld, %lld]", who, key, x, lo, hi);
    *out = x;
    return 0;
}

int codec_b2b_cfg_bool(const json_t *cfg, const char *who, const char *key, bool def, bool *out)
{
    const json_t *v = cfg_get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v)) return zc__err(ZC_EFORMAT, "%s: '%s' must be true or false", who, key);
    *out = json_is_true(v);
    return 0;
}

int codec_b2b_cfg_str(const json_t *cfg, const char *who, const char *key, const char *def,
                      const char **out)
{
    const json_t *v = cfg_get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_string(v)) return zc__err(ZC_EFORMAT, "%s: '%s' must be a string", who, key);
    *out = json_string_value(v);
    return 0;
}

json_t *codec_b2b_json(const char *v3_name, const char *v2_id, int zarr_format, json_t *conf)
{
    json_t *o = json_object();
    if (!o) {
        json_decref(conf);
        return NULL;
    }
    if (zarr_format == 2) {
        if (json_object_set_new(o, "id", json_string(v2_id)) ||
            (conf && json_object_update(o, conf))) {
            json_decref(o);
            o = NULL;
        }
        json_decref(conf);
        return o;
    }
    if (json_object_set_new(o, "name", json_string(v3_name)) ||
        (conf && json_object_set_new(o, "configuration", conf))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ------------------------------------------------------- per-thread contexts */

typedef struct {
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
    struct libdeflate_compressor *dc;
    int dc_level;
    struct libdeflate_decompressor *dd;
} thread_ctx;

static pthread_key_t tkey;
static pthread_once_t tkey_once = PTHREAD_ONCE_INIT;
static int tkey_ok;
static _Thread_local thread_ctx *tctx;

static void thread_ctx_free(void *p)
{
    thread_ctx *t = p;
    if (!t) return;
    tctx = NULL; /* runs on the exiting thread: a later use there starts afresh */
    ZSTD_freeCCtx(t->zc);
    ZSTD_freeDCtx(t->zd);
    if (t->dc) libdeflate_free_compressor(t->dc);
    if (t->dd) libdeflate_free_decompressor(t->dd);
    zc__free(t);
}

/* The libraries' allocations go through zc__malloc, so a task's measured memory
 * counts its contexts (zstd's: ~1.3 MB to compress at level 1, up to 8 MiB kept;
 * libdeflate's: ~0.5-1 MB compressors). libdeflate's allocator is process-wide
 * (libdeflate >= 1.9), set once before the first context. */
static void *zstd_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return zc__malloc(size);
}
static void zstd_free(void *opaque, void *p)
{
    (void)opaque;
    zc__free(p);
}
static const ZSTD_customMem zstd_mem = {zstd_alloc, zstd_free, NULL};

static void tkey_init(void)
{
    libdeflate_set_memory_allocator(zc__malloc, zc__free);
    tkey_ok = pthread_key_create(&tkey, thread_ctx_free) == 0;
}

static thread_ctx *thread_get(void)
{
    if (tctx) return tctx;
    pthread_once(&tkey_once, tkey_init);
    if (!tkey_ok) {
        zc__err(ZC_ENOMEM, "cannot create a thread key for codec contexts");
        return NULL;
    }
    thread_ctx *t = zc__calloc(1, sizeof *t);
    if (!t) return NULL;
    if (pthread_setspecific(tkey, t)) {
        zc__free(t);
        zc__err(ZC_ENOMEM, "cannot store codec contexts for this thread");
        return NULL;
    }
    tctx = t;
    return t;
}

ZSTD_CCtx *codec_b2b_zstd_cctx(void)
{
    thread_ctx *t = thread_get();
    if (!t) return NULL;
    if (!t->zc && !(t->zc = ZSTD_createCCtx_advanced(zstd_mem)))
        zc__err(ZC_ENOMEM, "zstd: out of memory creating a compression context");
    return t->zc;
}

void codec_b2b_zstd_cctx_trim(void)
{
    if (tctx && tctx->zc && ZSTD_sizeof_CCtx(tctx->zc) > ((size_t)8 << 20)) {
        ZSTD_freeCCtx(tctx->zc);
        tctx->zc = NULL;
    }
}

ZSTD_DCtx *codec_b2b_zstd_dctx(void)
{
    thread_ctx *t = thread_get();
    if (!t) return NULL;
    if (!t->zd && !(t->zd = ZSTD_createDCtx_advanced(zstd_mem)))
        zc__err(ZC_ENOMEM, "zstd: out of memory creating a decompression context");
    return t->zd;
}

ZSTD_DCtx *codec_b2b_zstd_dctx_new(void)
{
    ZSTD_DCtx *d = ZSTD_createDCtx_advanced(zstd_mem);
    if (!d) zc__err(ZC_ENOMEM, "zstd: out of memory creating a decompression context");
    return d;
}

struct libdeflate_compressor *codec_b2b_deflate_compressor(int level)
{
    thread_ctx *t = thread_get();
    if (!t) return NULL;
    if (t->dc && t->dc_level != level) {
        libdeflate_free_compressor(t->dc);
        t->dc = NULL;
    }
    if (!t->dc) {
        t->dc = libdeflate_alloc_compressor(level);
        if (!t->dc) {
            zc__err(ZC_ENOMEM, "deflate: cannot create a level %d compressor", level);
            return NULL;
        }
        t->dc_level = level;
    }
    return t->dc;
}

struct libdeflate_decompressor *codec_b2b_deflate_decompressor(void)
{
    thread_ctx *t = thread_get();
    if (!t) return NULL;
    if (!t->dd && !(t->dd = libdeflate_alloc_decompressor()))
        zc__err(ZC_ENOMEM, "deflate: out of memory creating a decompressor");
    return t->dd;
}

size_t codec_spec_encode_state(const json_t *spec, size_t n)
{
    size_t total = 0, k;
    const json_t *c;
    json_array_foreach(spec, k, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        const json_t *lv = json_object_get(json_object_get(c, "configuration"), "level");
        long long level = json_is_integer(lv) ? (long long)json_integer_value(lv) : -1000;
        if (!name) continue;
        if (!strcmp(name, "zstd")) /* the level's parameters for an input of n bytes */
            total += ZSTD_estimateCCtxSize_usingCParams(
                ZSTD_getCParams(level == -1000 ? ZSTD_CLEVEL_DEFAULT : (int)level, n, 0));
        else if (!strcmp(name, "gzip") || !strcmp(name, "numcodecs.zlib")) /* libdeflate 1.14, measured */
            total += level == 0 ? (8 << 10) : level == 1 ? (200 << 10) : (672 << 10);
        else if (!strcmp(name, "numcodecs.bz2")) /* bzip2's manual: 400k + 8 x the block (level x 100k) */
            total += (size_t)400000 + (size_t)8 * 100000 * (size_t)(level > 0 ? level : 9);
    }
    return total;
}

/* ------------------------------------------------------------- raw DEFLATE */

int codec_b2b_inflate(const char *who, const void *src, size_t n, void *dst, size_t cap,
                      size_t *in_used, size_t *out_len)
{
    struct libdeflate_decompressor *d = codec_b2b_deflate_decompressor();
    if (!d) return ZC_ENOMEM;
    enum libdeflate_result r =
        libdeflate_deflate_decompress_ex(d, src, n, dst, cap, in_used, out_len);
    switch (r) {
    case LIBDEFLATE_SUCCESS: return 0;
    case LIBDEFLATE_INSUFFICIENT_SPACE:
        return zc__err(ZC_ECORRUPT, "%s: data decodes to more than the %zu bytes expected", who, cap);
    default:
        return zc__err(ZC_ECORRUPT, "%s: invalid or truncated deflate data (%zu bytes)", who, n);
    }
}

/* ------------------------------------------------------- checksum codecs */

typedef struct {
    const codec_b2b_cksum_algo *algo;
    bool at_end; /* checksum after the data (else before) */
} cksum_state;

/* Checksum src[0..n) while copying it to dst, a cache-sized block at a time,
 * so the data crosses main memory once. */
#define CKSUM_BLOCK ((size_t)64 << 10)

static uint32_t sum_copy(const codec_b2b_cksum_algo *a, unsigned char *dst, const unsigned char *src,
                         size_t n)
{
    uint32_t sum = a->init;
    for (size_t off = 0; off < n; off += CKSUM_BLOCK) {
        size_t len = n - off < CKSUM_BLOCK ? n - off : CKSUM_BLOCK;
        sum = a->update(sum, src + off, len);
        memcpy(dst + off, src + off, len);
    }
    return sum;
}

int codec_b2b_cksum_create(const codec_b2b_cksum_algo *algo, const json_t *cfg,
                           const codec_ctx *ctx, void **state)
{
    const char *loc;
    ZC_TRY(codec_b2b_cfg_str(cfg, algo->v2_id, "location", algo->default_end ? "end" : "start", &loc));
    bool at_end;
    if (!strcmp(loc, "end")) at_end = true;
    else if (!strcmp(loc, "start")) at_end = false;
    else return zc__err(ZC_EFORMAT, "%s: 'location' is '%s', not 'start' or 'end'", algo->v2_id, loc);
    if (ctx->zarr_format == 3 && algo->v3_plain && !at_end)
        return zc__err(ZC_EFORMAT, "%s: the v3 codec keeps its checksum at the end", algo->v3_name);
    cksum_state *s = zc__malloc(sizeof *s);
    if (!s) return ZC_ENOMEM;
    s->algo = algo;
    s->at_end = at_end;
    *state = s;
    return 0;
}

void codec_b2b_cksum_destroy(void *state) { zc__free(state); }

int codec_b2b_cksum_decode(void *state, const void *src, size_t n, void *dst, size_t cap,
                           size_t *written)
{
    const cksum_state *s = state;
    const char *name = s->algo->v2_id;
    if (n < 4)
        return zc__err(ZC_ECORRUPT, "%s: %zu bytes is shorter than the 4-byte checksum", name, n);
    size_t len = n - 4;
    if (len > cap)
        return zc__err(ZC_ECORRUPT, "%s: %zu data bytes, more than the %zu expected", name, len, cap);
    const unsigned char *p = src;
    const unsigned char *data = s->at_end ? p : p + 4;
    uint32_t stored = codec_b2b_load_le32(s->at_end ? p + len : p);
    uint32_t sum = sum_copy(s->algo, dst, data, len); /* dst is scratch if the sums differ */
    if (sum != stored)
        return zc__err(ZC_ECHECKSUM, "%s: checksum mismatch (stored 0x%08x, computed 0x%08x over %zu bytes)",
                       name, (unsigned)stored, (unsigned)sum, len);
    *written = len;
    return 0;
}

int codec_b2b_cksum_decoded_size(void *state, const void *src, size_t n, size_t *size, bool *known)
{
    const cksum_state *s = state;
    if (n < 4)
        return zc__err(ZC_ECORRUPT, "%s: %zu bytes is shorter than the 4-byte checksum",
                       s->algo->v2_id, n);
    *size = n - 4;
    *known = true;
    return 0;
}

int codec_b2b_cksum_encode(void *state, const void *src, size_t n, zc_buf *out)
{
    const cksum_state *s = state;
    size_t need;
    if (__builtin_add_overflow(out->size, n, &need) || __builtin_add_overflow(need, 4, &need))
        return zc__err(ZC_EOVERFLOW, "%s: encoded size overflows", s->algo->v2_id);
    ZC_TRY(buf_reserve(out, need));
    unsigned char *o = out->data + out->size;
    if (s->at_end) {
        codec_b2b_store_le32(o + n, sum_copy(s->algo, o, src, n));
    } else {
        codec_b2b_store_le32(o, sum_copy(s->algo, o + 4, src, n));
    }
    out->size = need;
    return 0;
}

json_t *codec_b2b_cksum_to_json(void *state, int zarr_format)
{
    const cksum_state *s = state;
    const codec_b2b_cksum_algo *a = s->algo;
    if (zarr_format == 3 && a->v3_plain) return codec_b2b_json(a->v3_name, a->v2_id, 3, NULL);
    json_t *conf = json_object();
    if (!conf) return NULL;
    /* numcodecs before 0.14 has no 'location': write it only when it matters. */
    if (zarr_format == 3 || s->at_end != a->default_end) {
        if (json_object_set_new(conf, "location", json_string(s->at_end ? "end" : "start"))) {
            json_decref(conf);
            return NULL;
        }
    }
    return codec_b2b_json(a->v3_name, a->v2_id, zarr_format, conf);
}
