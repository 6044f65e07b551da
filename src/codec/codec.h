/* codec/codec.h — one interface for every codec, a registry by name, and the
 * chain that runs a Zarr v3 codec list (array→array*, array→bytes, bytes→bytes*).
 *
 * Pipeline order (written down once):
 *
 *   encode:  array ──a2a[0]──…──a2a[k]──▶ array ──a2b──▶ bytes ──b2b[0]──…──▶ stored
 *   decode:  stored ──b2b[last]⁻¹──…──▶ bytes ──a2b⁻¹──▶ array ──a2a[k]⁻¹──…──▶ array
 *
 * Zarr v2 metadata is translated to the same shape by zarr/: transpose (order F),
 * bytes (the typestr's endianness), then the v2 filters and the compressor as
 * bytes→bytes codecs. v2 filters see the stored bytes, as numcodecs does; each
 * carries its own dtype (with byte order) in its config.
 *
 * A codec type is a plain struct registered by name (v3 name, e.g. "zstd",
 * "numcodecs.delta") and optionally by its numcodecs id (v2, e.g. "delta").
 * Registering copies the struct. */
#ifndef ZC_CODEC_CODEC_H
#define ZC_CODEC_CODEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/dtype.h"

typedef enum {
    CODEC_A2A = 1, /* array → array: transpose, delta, fixedscaleoffset, bitround, … */
    CODEC_A2B = 2, /* array → bytes: bytes (endian), sharding_indexed */
    CODEC_B2B = 3, /* bytes → bytes: compressors, checksums, shuffle */
} codec_kind;

/* What a codec instance sees, fixed at creation. */
typedef struct {
    dtype_t dtype;          /* element type of the data this codec encodes (for B2B:
                               the array's, as a typesize hint, e.g. for blosc) */
    int ndim;               /* chunk rank */
    int64_t shape[ZC_MAX_DIMS]; /* chunk shape this codec encodes (A2A/A2B) */
    size_t nbytes;          /* decoded size of the whole chunk (array bytes) */
    int zarr_format;        /* 2 or 3: config spelling (v2 numcodecs keys vs v3) */
} codec_ctx;

/* A stored chunk in blocks that can be fetched apart (blosc1): a header, a
 * table of where each block's stored bytes start, then the blocks, each
 * decodable alone. A reader of a part of a big chunk fetches the head, then
 * only the blocks it needs (zarr/read.c, zarr/part.c). */
typedef struct {
    size_t nbytes, blocksize, cbytes; /* decoded bytes, decoded bytes per block, stored bytes, as declared */
    size_t nblocks;                   /* 0 when blocksize is 0 */
    size_t table;                     /* stored bytes before the first block: the header and the start table */
    bool known;                       /* a format version whose layout this reader knows (else: decode whole) */
    bool split;                       /* its blocks are stored apart (false: stored as one piece) */
    bool fast;                        /* a decoder near memory speed (blosclz, lz4): decoding more than
                                       * a reader needs costs little (plan/rechunk_plan.c slice costs) */
} codec_blocks;
#define CODEC_BLOCKS_HEAD 16 /* stored bytes that hold the header */

/* Decoding a chunk straight into a strided selection: for k_d < count[d], the
 * item at byte src_off + sum k_d sstride[d] of the decoded chunk goes to
 * dst + sum k_d dstride[d] (strides in bytes); tmp holds one block. */
typedef struct {
    size_t isz;              /* item size */
    unsigned char *tmp, *dst;
    const int64_t *dstride, *sstride, *count;
    int ndim;
    int64_t src_off;
    bool stream;             /* dst is not read soon: non-temporal stores where they help */
} codec_scatter;

typedef struct codec_type {
    unsigned version;       /* struct version: 1 */
    const char *name;       /* v3 name */
    const char *v2_id;      /* numcodecs id, or NULL if none */
    codec_kind kind;        /* how it is used in a v3 chain; v2 filters act as B2B */
    /* Parse `config` (may be NULL: defaults) into *state. Errors name the bad key. */
    int (*create)(const json_t *config, const codec_ctx *ctx, void **state);
    void (*destroy)(void *state);
    /* Decode src[0..n) into dst (capacity cap), set *written. Must fail with
     * ZC_ECORRUPT (never write past cap) if the data would exceed cap. */
    int (*decode)(void *state, const void *src, size_t n, void *dst, size_t cap, size_t *written);
    /* Exact decoded size if the encoded form says so (zstd frame, blosc header,
     * numcodecs lz4 prefix); set *known = false otherwise. May be NULL. */
    int (*decoded_size)(void *state, const void *src, size_t n, size_t *size, bool *known);
    /* Encode src[0..n), appending to out. */
    int (*encode)(void *state, const void *src, size_t n, zc_buf *out);
    /* Configuration as JSON in the spelling of `zarr_format` (new reference):
     * v3 → {"name":…, "configuration":{…}}; v2 → {"id":…, …}. */
    json_t *(*to_json)(void *state, int zarr_format);
    /* For A2A codecs: the shape/dtype of the encoded array, given the input's.
     * NULL means unchanged. */
    int (*encoded_ctx)(void *state, const codec_ctx *in, codec_ctx *out);
    /* ---- optional hooks: decoding a chunk by parts (NULL: not offered). The
     * chain asks for them (codec/stream.c, codec_chain_decode_steps), and zarr/
     * through the chain: no file outside a codec's own names the codec. ---- */
    /* Most bytes the encoded form of nbytes decoded bytes takes (blosc: a
     * header more; zstd: ZSTD_compressBound): a stored chunk larger than this
     * is corrupt, and a projection may count on it. */
    size_t (*stored_max)(void *state, size_t nbytes);
    /* Block-wise: the decoded bytes of src[0..n) are blocks of *bsize bytes
     * (the last may be shorter), each decodable alone. ZC_ECORRUPT unless the
     * encoded form declares exactly nbytes decoded bytes. */
    int (*block_size)(void *state, const void *src, size_t n, size_t nbytes, size_t *bsize);
    /* The largest block a chunk of nbytes has (from the configuration: blosc's
     * blocksize, or c-blosc's automatic choice, at most 1 MiB). */
    size_t (*block_max)(void *state, size_t nbytes);
    /* Decode block j (of bsize bytes, the last nbytes - j bsize) into dst. */
    int (*decode_block)(void *state, const void *src, size_t n, size_t nbytes, size_t bsize, size_t j, void *dst);
    /* Step-wise, into the caller's whole buffer: decode src[0..n) into
     * dst[0..cap) a step at a time, calling step(ctx, done) whenever `every`
     * more bytes are out and once at the end; with stop < cap it may end once
     * `stop` bytes are out (codec_zstd_decode_steps says how exactly). */
    int (*decode_steps)(void *state, const void *src, size_t n, void *dst, size_t cap, size_t stop, size_t every,
                        void (*step)(void *ctx, size_t done), void *ctx, size_t *written);
    /* Step-wise with bounded state: an iterator over the nbytes decoded bytes
     * of src[0..n), handing them out in order (steps_read: exactly the next
     * len bytes), allocating at most steps_mem(state, nbytes) bytes. */
    int (*steps_open)(void *state, const void *src, size_t n, size_t nbytes, void **it);
    int (*steps_read)(void *it, void *dst, size_t len);
    void (*steps_close)(void *it);
    size_t (*steps_mem)(void *state, size_t nbytes);
    /* Blocks fetched apart (codec_blocks): parse the head p[0..n) (false if
     * n < CODEC_BLOCKS_HEAD); the stored start of block j (the table must lie
     * within p); make the head at p declare only cbytes stored bytes, so the
     * decoder reads no further than was fetched. */
    bool (*blocks_parse)(const void *p, size_t n, codec_blocks *b);
    size_t (*block_start)(const void *p, size_t j);
    void (*blocks_limit)(void *p, size_t cbytes);
    /* Only the blocks holding decoded bytes [lo, hi) of src[0..n), written at
     * their own positions in dst (capacity cap: the whole decoded size, which
     * the header must declare, else ZC_ECORRUPT); [*dlo, *dhi) ⊇ [lo, hi) what
     * was written, or *dhi = 0 when the buffer is better decoded whole. */
    int (*decode_range)(const void *src, size_t n, void *dst, size_t cap, size_t lo, size_t hi, size_t *dlo,
                        size_t *dhi);
    /* Decode blocks jb0..jb1 of src[0..n) (a chunk of nbytes) into the
     * selection sc only; 1 when done, 0 when declined (decode the usual way). */
    int (*scatter)(const void *src, size_t n, size_t nbytes, const codec_scatter *sc, size_t jb0, size_t jb1);
} codec_type;

typedef struct {
    const codec_type *type;
    void *state;
    codec_ctx ctx; /* what it was created with */
} codec;

/* ---- registry (codec/registry.c) ---- */

/* Register a codec type (copied). Same name again with the same functions: no-op. */
int codec_register(const codec_type *type);
/* Find by v3 name or v2 id; ZC_EUNSUPPORTED naming it if unknown. */
int codec_find(const char *name, int zarr_format, const codec_type **out);
/* Create an instance from a v3 codec object {"name", "configuration"} or a v2
 * object {"id", ...}. */
int codec_create(const json_t *spec, const codec_ctx *ctx, codec *out);
void codec_destroy(codec *c);

/* Built-ins, one per file, registered by codec/builtin.c. */
extern const codec_type codec_bytes, codec_transpose, codec_crc32c, codec_zstd, codec_gzip,
    codec_zlib, codec_blosc, codec_lz4, codec_bz2, codec_delta, codec_shuffle,
    codec_fixedscaleoffset, codec_bitround, codec_astype, codec_quantize, codec_adler32,
    codec_crc32;

/* ---- chain (codec/chain.c) ---- */

typedef struct codec_chain codec_chain;

/* Build a chain from a v3 codec list (JSON array) for chunks of `ctx`
 * (ctx.dtype native order, ctx.shape the chunk shape, ctx.nbytes its size).
 * Sharding is not handled here: zarr/ reads "sharding_indexed" itself. */
int codec_chain_create(const json_t *codecs, const codec_ctx *ctx, codec_chain **out);
void codec_chain_free(codec_chain *ch);
/* Decode one stored chunk into dst, which must be exactly ctx.nbytes (C order,
 * native byte order). Fails with ZC_ECORRUPT if the sizes do not match. */
int codec_chain_decode(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size);
/* Encode a chunk (ctx.nbytes, C order, native) into *out (zc__malloc'd). */
int codec_chain_encode(const codec_chain *ch, const void *src, size_t n, zc_buf *out);
/* Decode bytes [lo, hi) of one stored chunk (at least) into dst, which must be
 * exactly ctx.nbytes: they land at their positions in the chunk, other bytes of
 * dst are left as they were or overwritten with chunk bytes. [*dlo, *dhi) ⊇
 * [lo, hi) says what was written. Decodes less than the whole chunk when the
 * chain is a plain copy or one codec with blocks (only the blocks holding
 * [lo, hi), its decode_range hook); otherwise decodes it whole ([0, ctx.nbytes)). */
int codec_chain_decode_range(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size,
                             size_t lo, size_t hi, size_t *dlo, size_t *dhi);
/* True if decoding is one codec storing blocks apart (codec_blocks) and
 * nothing else (besides a native-order bytes codec). Then: */
bool codec_chain_has_blocks(const codec_chain *ch);
/* the layout the head p[0..n) of a stored chunk declares (false if n is too
 * short or the chain has no blocks); */
bool codec_chain_blocks(const codec_chain *ch, const void *p, size_t n, codec_blocks *b);
/* the stored start of block j (the table must lie within p); */
size_t codec_chain_block_start(const codec_chain *ch, const void *p, size_t j);
/* only the blocks holding decoded bytes [lo, hi) of src[0..n) (which may hold
 * just the head and those blocks) written at their positions in dst (exactly
 * ctx.nbytes): [*dlo, *dhi) ⊇ [lo, hi), or *dhi = 0 when the codec declines
 * (then nothing was written; decode the whole stored chunk); */
int codec_chain_decode_blocks(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size, size_t lo,
                              size_t hi, size_t *dlo, size_t *dhi);
/* the head at p made to declare only cbytes stored bytes (a buffer holding
 * the head and the fetched blocks, the decoder reading no further); */
void codec_chain_blocks_limit(const codec_chain *ch, void *p, size_t cbytes);
/* blocks jb0..jb1 (jb1 may be past the last; 0..SIZE_MAX: the whole chunk)
 * of src[0..n) decoded into the selection sc only: 1 when done, 0 when the
 * codec declines (the selection's runs are short, or the chunk is not of a
 * kind it scatters: then decode it the usual way; items of those blocks may
 * be in place already). */
int codec_chain_scatter(const codec_chain *ch, const void *src, size_t n, const codec_scatter *sc, size_t jb0,
                        size_t jb1);
/* Step-wise decode of one stored chunk into dst (exactly ctx.nbytes) when
 * the chain is one codec with a decode_steps hook (after a native-order
 * bytes codec): step(ctx, done) as the hook calls it. ZC_EUNSUPPORTED (no
 * message) when the chain has no such codec: codec_chain_has_steps says. */
int codec_chain_decode_steps(const codec_chain *ch, const void *src, size_t n, void *dst, size_t dst_size,
                             size_t stop, size_t every, void (*step)(void *ctx, size_t done), void *ctx,
                             size_t *written);
bool codec_chain_has_steps(const codec_chain *ch);
/* True if decoding is a plain copy (bytes codec in native order, nothing else):
 * the stored chunk can be used as is. */
bool codec_chain_is_identity(const codec_chain *ch);
/* The one codec decoding does anything with (besides skipped native-order
 * bytes codecs), when its decoded size is the chunk's; NULL otherwise (none:
 * a plain copy, or several). */
const codec *codec_chain_sole(const codec_chain *ch);
/* Decoded bytes of a chunk (ctx.nbytes of the chain). */
size_t codec_chain_nbytes(const codec_chain *ch);
/* ---- decoding a chunk in order, a piece at a time (codec/stream.c) ----
 *
 * A stream hands out the decoded bytes of one stored chunk in order, holding
 * at most codec_chain_stream_mem bytes of its own: the chunk is never whole
 * in memory decoded. Chains that stream: a plain copy (the stored bytes are
 * the decoded ones), or one bytes→bytes codec (after a native-order bytes
 * codec) offering block-wise (blosc: one block at a time) or step-wise
 * (zstd: its window) decoding. Others (gzip, a transpose, filters) do not. */
typedef struct codec_stream codec_stream;

/* Whether chunks of ch stream; if not, *why (may be NULL) says why in a few
 * words naming the codec ("gzip decodes whole chunks only"). */
bool codec_chain_streams(const codec_chain *ch, const char **why);
/* Bytes an open stream of ch allocates at most (0 if ch does not stream). */
size_t codec_chain_stream_mem(const codec_chain *ch);
/* Most bytes a stored chunk of ch takes (any encoding of ctx.nbytes bytes). */
size_t codec_chain_stored_max(const codec_chain *ch);
/* Open a stream over the stored chunk src[0..n) (kept by the caller until
 * the stream is closed). ZC_EUNSUPPORTED if ch does not stream; ZC_ECORRUPT
 * if the chunk does not decode to ctx.nbytes; ZC_EMEMBOUND naming the block
 * size when a block is larger than the codec's block_max (what
 * codec_chain_stream_mem counted). */
int codec_stream_open(const codec_chain *ch, const void *src, size_t n, codec_stream **out);
/* The next len decoded bytes into dst (ZC_ECORRUPT past the chunk's end or
 * on corrupt data). */
int codec_stream_read(codec_stream *s, void *dst, size_t len);
void codec_stream_close(codec_stream *s);

/* The chain as a v3 JSON codec list (new reference). */
json_t *codec_chain_json(const codec_chain *ch);

/* ---- codec spec strings ("zstd:3", "blosc:lz4:5:shuffle", "none") ---- */

/* Turn a spec string into a v3 codec list (bytes→bytes part only) or, for
 * zarr_format 2, into {compressor, filters}. `typesize` is the element size
 * (for blosc). JSON arrays/objects in `spec` are parsed and returned as is. */
int codec_spec_parse(const char *spec, int zarr_format, size_t typesize, json_t **out);
/* The spec string that recreates the compressor and checksum of a v3-shaped
 * codec list in zarr_format (spec_of.c), or *out NULL when the compressor has
 * none (lzma, blosc2, zfpy). Filters are dropped. Free with zc__free. */
int codec_spec_of(const json_t *codecs, int zarr_format, char **out);
/* Bytes the compressors of a v3 codec list (codec_spec_parse) allocate through
 * zcube's allocator to encode a chunk of n bytes: the calling thread's zstd,
 * libdeflate or bzip2 state (others keep theirs on the stack or are not
 * counted: c-blosc's, see docs/internals/memory.md). */
size_t codec_spec_encode_state(const json_t *spec, size_t n);

#endif
