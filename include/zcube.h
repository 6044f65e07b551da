/*
 * zcube.h — the public interface of zcube, and its manual.
 *
 * zcube reads, writes and computes on Zarr arrays far larger than memory.
 *
 * Sections, each marked [stable] (kept across minor versions: functions keep
 * their signatures and meaning, codes are only added, structs only grow at
 * their end behind struct_size) or [experimental] (may change in any release):
 *   1. Version          [stable]
 *   2. Errors           [stable]  every int call returns 0 or a negative ZC_E* code;
 *                                 zc_errmsg() says what failed and where.
 *   3. Memory           [stable]  zc_free() for anything the library hands back.
 *   4. Data types       [stable]  zc_dtype, element sizes, promotion and limits.
 *   5. Stores           [stable]  where keys live: a local folder, memory, S3, HTTP.
 *   6. Zarr arrays      [stable]  open/create, inspect, read/write hyperslabs.
 *   7. Groups           [stable]  list and create a hierarchy.
 *   8. Sampler          [experimental] random windows from several arrays for ML training.
 *   9. Lazy arrays      [stable]  the array API as a graph of operations: creation,
 *                                 elementwise, reductions, indexing, manipulation.
 *  10. Linear algebra   [stable]  products, decompositions and solvers.
 *  11. Computing        [stable]  zc_spec (the memory bound), targets, reports, zc_compute.
 *  12. Plans            [experimental] plan once, execute whole or by task ranges, save, load.
 *  13. FFT              [experimental] the array API fft extension.
 *  14. Distributed execution [experimental] a saved plan on processes, MPI ranks, Slurm.
 *  15. Testing hooks    [experimental] fault injection.
 *
 * Return values: every function returning int returns 0 on success or a
 * negative ZC_E* code, and sets zc_errmsg(). Each function lists the codes it
 * returns after "@return"; a section's "@return (every function below)" lists
 * them for a family of functions that fail alike. Functions returning a
 * pointer or a count say what they return.
 *
 * Threading: distinct handles may be used from different threads at once; one
 * handle is used by one thread at a time unless a function says otherwise.
 * Reads and writes of one zc_zarr may run concurrently when they touch
 * different chunks.
 */
#ifndef ZCUBE_H
#define ZCUBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ZC_BUILDING)
#define ZC_API __attribute__((visibility("default")))
#else
#define ZC_API
#endif

/* ===================================================================== 1. Version [stable] */

#define ZC_VERSION_MAJOR 0
#define ZC_VERSION_MINOR 1
#define ZC_VERSION_PATCH 0
#define ZC_VERSION_NUMBER (ZC_VERSION_MAJOR * 10000 + ZC_VERSION_MINOR * 100 + ZC_VERSION_PATCH)
#define ZC_VERSION_STRING "0.1.0"

/**
 * The library's version number, to compare with ZC_VERSION_NUMBER.
 * @return ZC_VERSION_NUMBER of the library running (a number, not a status).
 */
ZC_API int zc_version_number(void);
/**
 * @return its version text ("0.1.0"), static, never NULL.
 */
ZC_API const char *zc_version_string(void);

/* ===================================================================== 2. Errors [stable] */

/* Codes are stable: new codes are appended, numbers never reused. */
#define ZC_ERRNO_MAP(X)                                                        \
    X(OK, 0, "success")                                                        \
    X(EINVAL, -1, "invalid argument")                                          \
    X(ENOMEM, -2, "out of memory")                                             \
    X(EIO, -3, "input/output error")                                           \
    X(ENOENT, -4, "not found")                                                 \
    X(EFORMAT, -5, "malformed metadata")                                       \
    X(ECORRUPT, -6, "corrupt data")                                            \
    X(EUNSUPPORTED, -7, "unsupported feature")                                 \
    X(ERANGE, -8, "selection out of bounds")                                   \
    X(EOVERFLOW, -9, "size overflow")                                          \
    X(EEXIST, -10, "already exists")                                           \
    X(ECHECKSUM, -11, "checksum mismatch")                                     \
    X(ECANCELED, -12, "operation canceled")                                    \
    X(EMEMBOUND, -13, "memory bound exceeded")                                 \
    X(EINTERNAL, -14, "internal error")

typedef enum {
#define ZC_ERR_ENUM_(name, value, text) ZC_##name = value,
    ZC_ERRNO_MAP(ZC_ERR_ENUM_)
#undef ZC_ERR_ENUM_
} zc_status;

/**
 * Static text for a status code ("corrupt data"); never NULL.
 * @return static text, never NULL ("unknown error" for a code not listed).
 */
ZC_API const char *zc_strerror(int status);
/**
 * Short name of a status code ("ZC_ECORRUPT"); never NULL.
 * @return static text, never NULL ("ZC_UNKNOWN" for a code not listed).
 */
ZC_API const char *zc_errname(int status);
/**
 * Detail of the last failure on this thread: what failed and where (file,
 * array, chunk key, byte offset, OS errno). Valid until the next zc_ call on
 * this thread. Empty string if the last call succeeded or set no detail.
 * @return the thread's message, never NULL.
 */
ZC_API const char *zc_errmsg(void);
/** Copy of zc_errmsg() into buf (always NUL-terminated if size > 0). */
ZC_API void zc_errmsg_r(char *buf, size_t size);
/**
 * The figures of a plan refused for its memory bound (ZC_EMEMBOUND from
 * zc_compute, zc_plan_create, ...): the bytes per task projected for the
 * operation that does not fit and the bytes allowed (what zc_errmsg() states
 * rounded; projected is SIZE_MAX for a rechunk no plan of any size was found
 * for). Either pointer may be NULL. Valid as zc_errmsg() is.
 * @return 1 with the figures when the thread's last failure is such a refusal,
 *         0 otherwise (outputs untouched).
 */
ZC_API int zc_errmem(size_t *projected, size_t *allowed);
/**
 * After a plan refused for its memory bound (ZC_EMEMBOUND from zc_plan_create,
 * zc_compute, ...): the smallest allowed_mem (bytes, a multiple of 100 kB,
 * found to within 1% by planning again) with which the same computation is
 * planned, as zc_errmsg() states it. The reserve follows it when
 * reserved_mem is automatic. Valid as zc_errmsg() is.
 * @return 1 with the figure; 0 when no bound up to 16 TiB fits, the failure
 *         was not such a refusal, or planning failed otherwise (untouched).
 */
ZC_API int zc_errmem_fit(size_t *allowed_mem);

/* ===================================================================== 3. Memory [stable] */

/** Free memory the library allocated for the caller. NULL is a no-op. */
ZC_API void zc_free(void *ptr);

/* ===================================================================== 4. Data types [stable] */

typedef enum {
    ZC_DTYPE_INVALID = 0,
    ZC_BOOL = 1,
    ZC_INT8,
    ZC_INT16,
    ZC_INT32,
    ZC_INT64,
    ZC_UINT8,
    ZC_UINT16,
    ZC_UINT32,
    ZC_UINT64,
    ZC_FLOAT16,
    ZC_FLOAT32,
    ZC_FLOAT64,
    ZC_COMPLEX64,
    ZC_COMPLEX128,
    ZC_BYTES,   /* fixed-length byte string (NumPy "S<n>"), n bytes, NUL padded */
    ZC_UNICODE, /* fixed-length UCS-4 string (NumPy "U<n>"), 4n bytes, native endian */
    ZC_RAW,     /* raw bits (Zarr v3 "r<bits>"), n bytes */
} zc_dtype;

/**
 * Name of a dtype in Zarr v3 spelling ("float32"); "bytes"/"unicode"/"raw" for the rest.
 * @return static text, never NULL ("invalid" for a value not listed).
 */
ZC_API const char *zc_dtype_name(zc_dtype dtype);
/**
 * Parse a dtype name: v3 names ("int16"), NumPy strings ("<i2", "|S7", "U13", "f8").
 * @return 0, ZC_EINVAL (NULL argument), ZC_EUNSUPPORTED (an unknown or unsupported name, quoted), ZC_ENOMEM.
 */
ZC_API int zc_dtype_parse(const char *name, zc_dtype *dtype, size_t *itemsize);

/* Type promotion and limits (the array API's result_type, can_cast, finfo, iinfo),
 * over bool, integer, float and complex dtypes; others fail with ZC_EINVAL. */
/** The dtype of combining n >= 1 dtypes by the array API's promotion rules (mixed
 *  int64/uint64 promote to float64, like NumPy). ZC_EINVAL names a pair that does not promote.
 * @return 0, ZC_EINVAL (NULL argument, n < 1, a dtype that is not bool, integer, float or complex, a pair that does not promote).
 */
ZC_API int zc_result_type(int n, const zc_dtype *dtypes, zc_dtype *out);
/**
 * *result = 1 if `from` casts to `to` by promotion (result_type(from, to) == to), else 0.
 * @return 0, ZC_EINVAL (NULL result, a dtype that is not bool, integer, float or complex).
 */
ZC_API int zc_can_cast(zc_dtype from, zc_dtype to, int *result);
/** Limits of a floating-point dtype (complex: of its real component, dtype says which). */
typedef struct {
    int bits;               /* bits of the (real) type */
    double eps;             /* difference between 1.0 and the next larger value */
    double max;             /* largest finite value */
    double min;             /* smallest finite value (-max) */
    double smallest_normal; /* smallest positive normal value */
    zc_dtype dtype;         /* the real floating-point dtype described */
} zc_finfo_t;
/**
 * @return 0, ZC_EINVAL (NULL info, not a float or complex dtype).
 */
ZC_API int zc_finfo(zc_dtype dtype, zc_finfo_t *info);
/** Limits of an integer dtype (not bool). */
typedef struct {
    int bits;
    int64_t min;   /* 0 for unsigned types */
    uint64_t max;
    zc_dtype dtype;
} zc_iinfo_t;
/**
 * @return 0, ZC_EINVAL (NULL info, not an integer dtype).
 */
ZC_API int zc_iinfo(zc_dtype dtype, zc_iinfo_t *info);

/* ===================================================================== 5. Stores [stable] */

typedef struct zc_store zc_store;

#define ZC_STORE_READONLY 1u /* refuse writes */
#define ZC_STORE_CREATE 2u   /* create the root folder if absent */

/**
 * Open a store. `url` is a local path, "file://PATH", "memory://NAME"
 * (a process-wide in-memory store; the same NAME gives the same data, created
 * empty on first open, freed when its last handle closes), "s3://BUCKET/PREFIX"
 * (read and write; credentials and endpoint from AWS_* variables) or
 * "http://..." / "https://..." (read-only, no listing); see docs/stores.md.
 * Opening an S3 or HTTP store sends no request: a missing bucket or a wrong
 * key shows on first use, with the URL and the server's answer.
 * A store handle may be used from several threads at once.
 * CONSTRUCTOR: zc_store; DESTRUCTOR: zc_store_close.
 * @return 0, ZC_ENOENT (no such folder and no ZC_STORE_CREATE), ZC_EUNSUPPORTED
 *         (unknown scheme, named; ZC_STORE_CREATE on HTTP), ZC_EINVAL (unknown
 *         flags, path not a folder, no S3 credentials, a bad ZCUBE_* setting),
 *         ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_store_open(const char *url, unsigned flags, zc_store **out);
/** Close a store. NULL is a no-op. Arrays opened on it must be closed first. */
ZC_API void zc_store_close(zc_store *store);

/* ===================================================================== 6. Zarr arrays [stable] */

#define ZC_MAX_DIMS 32

typedef struct zc_zarr zc_zarr;

/** One dimension of a selection: start, stop (exclusive), step (> 0). */
typedef struct {
    int64_t start;
    int64_t stop;
    int64_t step;
} zc_range;

/** Summary of an array's metadata (filled by zc_zarr_info). */
typedef struct {
    int zarr_format;               /* 2 or 3 */
    int ndim;                      /* number of dimensions, 0..ZC_MAX_DIMS */
    int64_t shape[ZC_MAX_DIMS];    /* array shape */
    int64_t chunks[ZC_MAX_DIMS];   /* read chunk shape (inner chunk if sharded) */
    int64_t shards[ZC_MAX_DIMS];   /* shard shape, or all 0 if not sharded */
    zc_dtype dtype;                /* element type */
    size_t itemsize;               /* bytes per element in memory */
    char order;                    /* 'C' or 'F' (storage order of chunks, v2) */
} zc_zarr_info_t;

/**
 * Open the array at `path` ("" for the store root) in `store`, reading its
 * metadata (Zarr v2 .zarray or v3 zarr.json; v2 is tried second).
 * Close arrays before the store they were opened on.
 * CONSTRUCTOR: zc_zarr; DESTRUCTOR: zc_zarr_close.
 * @return 0, ZC_ENOENT (no array there), ZC_EFORMAT (malformed metadata, with the
 *         field named), ZC_EUNSUPPORTED (dtype, codec or extension not supported,
 *         named), ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_zarr_open(zc_store *store, const char *path, zc_zarr **out);

/** Options for zc_zarr_create. Initialise with ZC_ZARR_CREATE_INIT. */
typedef struct {
    unsigned struct_size;        /* sizeof(zc_zarr_create_opts): fields are only appended */
    int zarr_format;             /* 2 or 3 (default 3) */
    int ndim;                    /* number of dimensions */
    int64_t shape[ZC_MAX_DIMS];  /* array shape */
    int64_t chunks[ZC_MAX_DIMS]; /* chunk shape (inner chunk when sharded) */
    int64_t shards[ZC_MAX_DIMS]; /* shard shape (v3 only), all 0 = no sharding */
    zc_dtype dtype;              /* element type */
    size_t itemsize;             /* for ZC_BYTES/ZC_UNICODE/ZC_RAW: bytes per element */
    const char *codec;           /* codec spec, see zc_codec_spec below; NULL = "zstd" */
    const char *fill_value;      /* fill value as JSON text ("0", "\"NaN\"", "null"); NULL = 0 */
    char order;                  /* 'C' (default) or 'F' (v2 only) */
    char separator;              /* chunk key separator: '/' or '.'; 0 = format default */
    int overwrite;               /* replace existing metadata at path */
    int write_empty_chunks;      /* 1 = store chunks equal to the fill value too */
    const char *attributes;      /* JSON object text, or NULL */
    const char *dimension_names; /* JSON array text (v3), or NULL */
} zc_zarr_create_opts;

#define ZC_ZARR_CREATE_INIT {sizeof(zc_zarr_create_opts), 3, 0, {0}, {0}, {0}, ZC_DTYPE_INVALID, 0, \
                             NULL, NULL, 'C', 0, 0, 0, NULL, NULL}

/*
 * Codec spec strings (zc_zarr_create_opts.codec, `zcube create --codec`):
 *   "none" | "zstd[:LEVEL]" | "gzip[:LEVEL]" | "zlib[:LEVEL]" | "bz2[:LEVEL]" |
 *   "lz4[:ACCEL]" | "blosc[:CNAME[:CLEVEL[:SHUFFLE]]]" with CNAME in
 *   lz4, lz4hc, blosclz, zstd, zlib and SHUFFLE in noshuffle, shuffle, bitshuffle;
 *   optionally followed by ",crc32c" (v3) for a checksum.
 *   Alternatively a JSON array of v3 codec objects (v3) or a JSON compressor
 *   object (v2), used as is.
 */

/**
 * Create an array at `path` (writing its metadata) and open it. Missing parents
 * become groups; the array is entered into the consolidated metadata
 * (.zmetadata) of every group above it that has one, including groups above
 * the store's root when `path` is "" (its folder or S3 prefix is in a group).
 * @return 0, ZC_EINVAL (bad option, named), ZC_EEXIST (metadata already there
 *         and !overwrite), ZC_EOVERFLOW, ZC_EUNSUPPORTED, ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_zarr_create(zc_store *store, const char *path, const zc_zarr_create_opts *opts,
                          zc_zarr **out);

/** Close an array. NULL is a no-op. */
ZC_API void zc_zarr_close(zc_zarr *arr);

/**
 * Fill `info` with the array's metadata summary.
 * @return 0, ZC_EINVAL (NULL argument).
 */
ZC_API int zc_zarr_info(const zc_zarr *arr, zc_zarr_info_t *info);

/**
 * The array's full metadata as JSON text, normalized for display:
 * {"zarr_format", "shape", "dtype", "numpy_dtype", "chunks", "shards", "codecs" (the
 * codec chain in v3 spelling; for v2 arrays a transpose for order F and a bytes codec
 * for the byte order come first, then the v2 filters and compressor in their numcodecs
 * spelling {"id": ...}), "fill_value", "order", "separator", "attributes",
 * "dimension_names"}. Free with zc_free.
 * @return 0, ZC_EINVAL (NULL argument), ZC_ENOMEM.
 */
ZC_API int zc_zarr_metadata_json(const zc_zarr *arr, char **json);

/**
 * The codec spec (zc_zarr_create_opts.codec) that recreates the array's compressor
 * and checksum in `zarr_format` (2 or 3): "zstd:5", "blosc:lz4:5:shuffle,crc32c"
 * (crc32c only for 3), "none"; of the inner chunks when sharded. Filters (delta,
 * shuffle, ...) are not carried: a copy moves decoded values. *spec is NULL when
 * the compressor has no spec (lzma, blosc2, zfpy). Free with zc_free.
 * @return 0, ZC_EINVAL (NULL argument, zarr_format not 2 or 3), ZC_ENOMEM.
 */
ZC_API int zc_zarr_codec_spec(const zc_zarr *arr, int zarr_format, char **spec);

/** Storage statistics: chunks (or shards) stored, bytes stored, bytes when decoded. */
typedef struct {
    int64_t chunks_total;   /* chunks (or shards) in the grid */
    int64_t chunks_stored;  /* chunks (or shards) present in the store */
    int64_t bytes_stored;   /* sum of stored object sizes */
    int64_t bytes_decoded;  /* chunks_total × chunk bytes (logical size of all chunks) */
} zc_zarr_stats_t;
/**
 * @return 0, ZC_EINVAL (NULL argument), ZC_EOVERFLOW, ZC_EIO (listing the store), ZC_ENOMEM.
 */
ZC_API int zc_zarr_stats(zc_zarr *arr, zc_zarr_stats_t *stats);

/**
 * Read a hyperslab into `dst`, in C order of the selection's shape, native
 * byte order, `itemsize` bytes per element. `sel` has ndim entries (NULL = the
 * whole array); each range must satisfy 0 <= start <= stop <= shape, step > 0.
 * Missing chunks read as the fill value. Chunks are fetched and decoded in
 * parallel; a fully covered chunk whose layout matches decodes straight into dst.
 * Sharded arrays cache decoded shard indexes in the handle (up to 64 MiB):
 * reopen the array if another process rewrote its shards since.
 * Local chunk files of 256 KiB or more are mapped and decoded straight from
 * the page cache. The pages of chunks read in part stay mapped for later
 * reads (up to an eighth of physical memory per store, shared with the page
 * cache but counted in the process's RSS); those of chunks read whole are
 * released. ZC_STORE_MAP=0 in the environment turns mapping off.
 * @return 0, ZC_ERANGE (selection outside the array, dimension named),
 *         ZC_EINVAL (dst_size too small), ZC_ECORRUPT/ECHECKSUM (chunk key and
 *         codec named), ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_zarr_read(zc_zarr *arr, const zc_range *sel, void *dst, size_t dst_size);

/**
 * Write a hyperslab from `src` (same layout as zc_zarr_read's dst). Chunks
 * only partly covered are read, modified and written back. Each chunk (or
 * shard) is written atomically. Chunks equal to the fill value are erased
 * unless the array was created with write_empty_chunks.
 * @return 0, ZC_ERANGE (selection outside the array, dimension named), ZC_EINVAL (src_size too small,
 *         a read-only store), ZC_EOVERFLOW, ZC_ECORRUPT/ECHECKSUM (a partly covered chunk read back),
 *         ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_zarr_write(zc_zarr *arr, const zc_range *sel, const void *src, size_t src_size);

/**
 * Bytes needed for a selection: product of counts × itemsize (overflow-checked).
 * @return 0, ZC_EINVAL (NULL argument), ZC_ERANGE (selection outside the array), ZC_EOVERFLOW.
 */
ZC_API int zc_zarr_selection_size(const zc_zarr *arr, const zc_range *sel, size_t *nbytes);

/**
 * Set the number of threads used by reads and writes of this array (0 = all cores).
 * @return 0, ZC_EINVAL (NULL array, nthreads < 0).
 */
ZC_API int zc_zarr_set_threads(zc_zarr *arr, int nthreads);

/**
 * Attributes as JSON object text; free with zc_free.
 * @return 0, ZC_EINVAL (NULL argument), ZC_ENOMEM.
 */
ZC_API int zc_zarr_attributes(const zc_zarr *arr, char **json);

/** IO counters of one array since it was opened (all threads). */
typedef struct {
    int64_t chunks_read;    /* chunks (or inner chunks) fetched and decoded */
    int64_t bytes_read;     /* stored bytes fetched, shard indexes included */
    int64_t index_hits;     /* shard indexes found in the cache */
    int64_t index_misses;   /* shard indexes fetched */
} zc_zarr_io_stats_t;
/**
 * @return 0, ZC_EINVAL (NULL argument).
 */
ZC_API int zc_zarr_io_stats(const zc_zarr *arr, zc_zarr_io_stats_t *st);

/* ===================================================================== 7. Groups [stable] */

/** Kind of a node in a hierarchy. */
typedef enum { ZC_NODE_NONE = 0, ZC_NODE_GROUP = 1, ZC_NODE_ARRAY = 2 } zc_node_kind;

/**
 * What is at `path`: array, group, or nothing; and its zarr_format.
 * @return 0 (kind ZC_NODE_NONE when nothing is there), ZC_EINVAL (NULL argument), ZC_EIO.
 */
ZC_API int zc_node_kind_at(zc_store *store, const char *path, zc_node_kind *kind, int *zarr_format);

/**
 * List the hierarchy below `path`: calls `fn(path, kind, zarr_format, ctx)` for
 * every node, parents before children, children in name order. Stops and
 * returns the callback's value if it returns non-zero.
 */
typedef int (*zc_node_fn)(const char *path, zc_node_kind kind, int zarr_format, void *ctx);
/**
 * @return 0, the callback's non-zero value, ZC_ENOENT (nothing at path), ZC_EFORMAT (malformed
 *         metadata, key named), ZC_EINVAL (NULL argument), ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_group_walk(zc_store *store, const char *path, zc_node_fn fn, void *ctx);

/**
 * Create a group (writing .zgroup or zarr.json), entered into consolidated
 * metadata above it as zc_zarr_create does.
 * @return 0, ZC_EINVAL (NULL argument, zarr_format not 2 or 3, a read-only store), ZC_EFORMAT
 *         (a malformed .zmetadata above it, named), ZC_EIO.
 */
ZC_API int zc_group_create(zc_store *store, const char *path, int zarr_format);

/* ===================================================================== 8. Sampler [experimental] */

/*
 * Random windows (crops) from one or more arrays, batched for ML training.
 *
 *   zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;  o.seed = 42; o.batch_size = 32;
 *   zc_sampler_create(&o, &s);
 *   zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
 *   src.array = arr; src.window[0] = 4; ...;  zc_sampler_add_source(s, &src);
 *   for (int64_t step = 0; ; step++) {
 *       const zc_batch *b;  zc_sampler_next(s, &b);   // prefetched, library buffers
 *       train(b->data[0], b->origins[0]);
 *   }
 *
 * Every dimension of every source has a name in one shared index space (the
 * array's dimension_names, or names given, or "dim0", "dim1", ... by position).
 * A window origin is drawn in that space, so sources sharing a dimension name
 * see the same index there (plus the source's offset and optional jitter).
 *
 * The sample space is every valid origin (RANDOM) or a grid of origins with a
 * given overlap (GRID). An epoch visits each once, in an order given by a keyed
 * permutation of the space (nothing is materialized): batch b of epoch e for
 * seed s is a pure function of (s, e, b). `step` counts batches across epochs:
 * epoch = step / batches_per_epoch. So training can resume at any step and two
 * runs see identical data.
 */
typedef struct zc_sampler zc_sampler;

typedef enum {
    ZC_SAMPLE_RANDOM = 0, /* every valid origin, shuffled without replacement per epoch */
    ZC_SAMPLE_GRID = 1,   /* origins on a grid: stride = window - overlap, shuffled per epoch */
} zc_sample_mode;

typedef struct {
    unsigned struct_size;   /* sizeof(zc_sampler_opts) */
    uint64_t seed;          /* key of the shuffle and of jitter */
    int batch_size;         /* windows per batch, >= 1 */
    zc_sample_mode mode;    /* RANDOM or GRID */
    int nthreads;           /* threads reading windows; 0 = all cores */
    int prefetch;           /* batches read ahead by zc_sampler_next; 0 = none */
    int reject_nan;         /* redraw windows containing NaN (float/complex sources) */
    int reject_fill;        /* redraw windows containing the array's fill value */
    int max_redraws;        /* redraws per window before ZC_ERANGE; 0 = 1000 */
} zc_sampler_opts;

#define ZC_SAMPLER_OPTS_INIT {sizeof(zc_sampler_opts), 0, 32, ZC_SAMPLE_RANDOM, 0, 2, 0, 0, 0}

typedef struct {
    unsigned struct_size;            /* sizeof(zc_sampler_source) */
    const char *name;                /* for messages; may be NULL */
    zc_zarr *array;                  /* borrowed: must outlive the sampler */
    int64_t window[ZC_MAX_DIMS];     /* window shape, one per array dimension */
    const char *dims[ZC_MAX_DIMS];   /* shared-space name per dimension; NULL = dimension_names or "dim<k>" */
    int64_t offset[ZC_MAX_DIMS];     /* source index = shared index + offset */
    int64_t jitter[ZC_MAX_DIMS];     /* extra shift, uniform in [-jitter, +jitter], per window */
    int64_t overlap[ZC_MAX_DIMS];    /* GRID mode: overlap of neighbouring windows */
} zc_sampler_source;

#define ZC_SAMPLER_SOURCE_INIT {sizeof(zc_sampler_source), NULL, NULL, {0}, {NULL}, {0}, {0}, {0}}

/**
 * CONSTRUCTOR: zc_sampler; DESTRUCTOR: zc_sampler_free.
 * @return 0, ZC_EINVAL (NULL argument, an option out of range, named), ZC_ENOMEM.
 */
ZC_API int zc_sampler_create(const zc_sampler_opts *opts, zc_sampler **out);
/** Stop prefetching and free. NULL is a no-op. */
ZC_API void zc_sampler_free(zc_sampler *s);
/**
 * Add a source (before the first batch). Fails with ZC_EINVAL naming the source
 * and dimension if a window does not fit the array or the shared ranges of a
 * dimension do not overlap.
 * @return 0, ZC_EINVAL (as said; NULL argument; after the first batch), ZC_EOVERFLOW, ZC_ENOMEM.
 */
ZC_API int zc_sampler_add_source(zc_sampler *s, const zc_sampler_source *src);

/**
 * Windows in one epoch, and whole batches per epoch (the last partial batch is dropped).
 * @return 0, ZC_EINVAL (NULL argument, no source).
 */
ZC_API int zc_sampler_epoch_size(zc_sampler *s, int64_t *windows, int64_t *batches);

/**
 * Bytes of one batch of source k (batch_size × window elements × itemsize).
 * @return 0, ZC_EINVAL (NULL argument, k out of range).
 */
ZC_API int zc_sampler_batch_bytes(zc_sampler *s, int k, size_t *nbytes);

/**
 * Read batch `step` into caller buffers: data[k] (zc_sampler_batch_bytes(k)
 * bytes, windows in C order one after another) and, if origins is not NULL,
 * origins[k] (batch_size × ndim_k int64, the window origins in array k's own
 * indices). Thread-safe: several threads may read different steps at once.
 * @return 0, ZC_EINVAL (NULL argument, no buffer for a source, no source), ZC_ERANGE
 *         (max_redraws windows rejected, batch and slot named), a read's ZC_ECORRUPT/ECHECKSUM/EIO,
 *         ZC_ENOMEM.
 */
ZC_API int zc_sampler_read(zc_sampler *s, int64_t step, void *const *data, int64_t *const *origins);

/** A batch in library-owned buffers (see zc_sampler_next). */
typedef struct {
    int64_t step;                  /* global batch number */
    int64_t epoch;                 /* step / batches per epoch */
    int nsources;
    void *const *data;             /* data[k]: batch of source k */
    const size_t *nbytes;          /* nbytes[k] */
    int64_t *const *origins;       /* origins[k]: batch_size × ndim_k */
    int64_t rejected;              /* windows redrawn for this batch */
} zc_batch;

/**
 * The next batch, starting at `start` (zc_sampler_seek), read ahead by a
 * background thread `prefetch` batches deep. The batch stays valid until the
 * next call to zc_sampler_next or zc_sampler_seek on this sampler.
 * @return 0, and zc_sampler_read's codes (a prefetched batch's error comes back here).
 */
ZC_API int zc_sampler_next(zc_sampler *s, const zc_batch **out);
/**
 * Make the next zc_sampler_next return batch `step`.
 * @return 0, ZC_EINVAL (NULL sampler, step < 0).
 */
ZC_API int zc_sampler_seek(zc_sampler *s, int64_t step);

/** Running totals since creation. */
typedef struct {
    int64_t windows;        /* windows delivered */
    int64_t rejected;       /* windows redrawn */
    int64_t bytes_used;     /* decoded bytes delivered */
    int64_t bytes_read;     /* bytes fetched from stores (read amplification = read / used on raw data) */
    int64_t chunks_read;    /* chunks (or inner chunks) fetched and decoded */
} zc_sampler_stats_t;
/**
 * @return 0, ZC_EINVAL (NULL argument).
 */
ZC_API int zc_sampler_stats(zc_sampler *s, zc_sampler_stats_t *st);

/* ===================================================================== 9. Lazy arrays [stable] */

/*
 * Plan, then execute. Array functions only record operations: a zc_array is a
 * node of a plan (its shape, dtype and chunks are known at once; no data is read
 * except metadata). zc_compute optimizes the plan (fuses elementwise chains and
 * blockwise operations, culls what is not needed), projects the memory of every
 * task, refuses with ZC_EMEMBOUND before any work if one exceeds the bound, then
 * runs every operation as tasks over its output blocks, writing intermediates as
 * Zarr arrays in the work directory (removed at the end).
 *
 *   zc_array *u, *m;
 *   zc_from_zarr(store, "u", &u);
 *   zc_array *u2;  zc_multiply(u, u, &u2);
 *   int axis = 0;  zc_reduce("mean", u2, &axis, 1, 0, 0, &m);
 *   zc_spec spec = ZC_SPEC_INIT;  spec.allowed_mem = 500 << 20;
 *   zc_target t = {out_store, "mean_u2", NULL};
 *   zc_compute(&spec, 1, &m, &t, &report);
 *   zc_array_release(u); zc_array_release(u2); zc_array_release(m);
 *
 * Handles are reference-counted: an array keeps its inputs alive, so releasing a
 * handle you no longer need is always safe. Every function returning a new array
 * gives the caller one reference.
 *
 * @return (every function below) 0, ZC_EINVAL (NULL argument; an axis, shape,
 *         index, count or dtype that does not fit, named with the function and
 *         the values), ZC_EUNSUPPORTED (a dtype the operation does not take),
 *         ZC_EOVERFLOW (sizes), ZC_ENOMEM. They read no data: zc_from_zarr reads
 *         the array's metadata and returns zc_zarr_open's codes too (ZC_ENOENT,
 *         ZC_EFORMAT, ZC_EIO). What goes wrong with the data shows in zc_compute.
 */
typedef struct zc_array zc_array;

ZC_API void zc_array_retain(zc_array *a);
/** Drop one reference. NULL is a no-op. */
ZC_API void zc_array_release(zc_array *a);
/**
 * Shape, chunks and dtype of a lazy array (any pointer may be NULL).
 * @return 0, ZC_EINVAL (NULL array).
 */
ZC_API int zc_array_info(const zc_array *a, int *ndim, int64_t *shape, int64_t *chunks, zc_dtype *dtype);

/* ---- sources and creation ---- */
/** A lazy view of a stored array (the store must outlive the computation). */
ZC_API int zc_from_zarr(zc_store *store, const char *path, zc_array **out);
/** A copy of a caller's C-order buffer, chunked as given (chunks NULL = one chunk). */
ZC_API int zc_asarray(const void *data, zc_dtype dtype, int ndim, const int64_t *shape, const int64_t *chunks,
                      zc_array **out);
/** Constant arrays; `value` is converted to dtype. chunks NULL = automatic (~16 MiB). */
ZC_API int zc_full(int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, double value, zc_array **out);
ZC_API int zc_arange(double start, double stop, double step, zc_dtype dtype, int64_t chunk, zc_array **out);
ZC_API int zc_linspace(double start, double stop, int64_t num, int endpoint, zc_dtype dtype, int64_t chunk,
                       zc_array **out);
ZC_API int zc_eye(int64_t n, int64_t m, int64_t k, zc_dtype dtype, const int64_t *chunks, zc_array **out);
/** Random numbers: the same values for a seed whatever the chunking (counter-based). */
ZC_API int zc_random_uniform(uint64_t seed, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype,
                             double low, double high, zc_array **out);
ZC_API int zc_random_normal(uint64_t seed, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype,
                            double mean, double stddev, zc_array **out);
/** A scalar for expressions. "Weak" like a Python scalar: takes the other operand's dtype.
 * With is_integer, value must be a whole number in int64's range (else ZC_EINVAL). */
ZC_API int zc_scalar(double value, int is_integer, zc_array **out);

/* ---- elementwise: the array API's 67 functions by name ("add", "sin", "where", ...) ---- */
/** Call an elementwise function with 1 to 3 array arguments (broadcasting, type promotion). */
ZC_API int zc_elementwise(const char *name, int nargs, zc_array *const *args, zc_array **out);
/**
 * The functions zc_elementwise takes, by index i = 0, 1, ...: *name ("abs") and
 * *nargs (1, 2, or 3 for where); either pointer may be NULL. For front ends that
 * bind names (the CLI's expressions), so they need no list of their own.
 * @return 0, or ZC_ERANGE when i is past the last function (or negative).
 */
ZC_API int zc_elementwise_info(int i, const char **name, int *nargs);
/** A Python number: dtype ZC_BOOL or ZC_INT64 (value in i) or ZC_FLOAT64 (in f). */
typedef struct {
    zc_dtype dtype;
    int64_t i;
    double f;
} zc_number;
/**
 * An elementwise function of Python numbers, computed by the kernels that compute
 * arrays, with the numbers as weak scalars (zc_scalar): sqrt(2) is the float
 * 1.414..., maximum(1, 2) the int 2, isnan(1.5) the bool False; integers wrap at
 * 64 bits as int64 arrays do.
 * @return 0 with *out, ZC_EINVAL (unknown function, wrong nargs, a number the
 *         function does not take, as bitwise_and of floats: named), or
 *         ZC_EUNSUPPORTED (a result that is not a bool, int64 or float64).
 */
ZC_API int zc_elementwise_number(const char *name, int nargs, const zc_number *args, zc_number *out);
ZC_API int zc_astype(zc_array *a, zc_dtype dtype, zc_array **out);

/* ---- reductions ---- */
/**
 * Reduce over `axes` (naxes 0 = all axes): name is sum, prod, min, max, mean, var,
 * std, argmin, argmax, any, all, count_nonzero. ddof is var/std's correction.
 */
ZC_API int zc_reduce(const char *name, zc_array *a, const int *axes, int naxes, int keepdims, double ddof,
                     zc_array **out);

/* ---- indexing and manipulation ---- */
/** One entry of an index: a slice, an integer, None (new axis) or ... (ellipsis). */
typedef struct {
    enum { ZC_IDX_SLICE, ZC_IDX_INT, ZC_IDX_NEWAXIS, ZC_IDX_ELLIPSIS } kind;
    int64_t start, stop, step;       /* slice (Python semantics, negatives count from the end) */
    int has_start, has_stop;         /* 0 = omitted */
    int64_t index;                   /* integer index */
} zc_index;
ZC_API int zc_getitem(zc_array *a, const zc_index *idx, int nidx, zc_array **out);
/** Change the chunking (multistage through intermediates when needed to stay in memory). */
ZC_API int zc_rechunk(zc_array *a, const int64_t *chunks, zc_array **out);

/* ---- manipulation (array API 2023.12; NumPy is the reference for details) ----
 * Axes may be negative (counted from the end); an axis out of range, shapes that
 * do not fit and negative counts fail with ZC_EINVAL naming the function and the
 * values. Results are lazy like every other array: no data moves until compute.
 * Where an axis may be None, ZC_AXIS_NONE says so (the array is flattened in C
 * order first, as NumPy does). Functions that change nothing (a roll by 0, a
 * reshape to the same shape) may return `x` itself with one more reference. */
#define ZC_AXIS_NONE INT32_MIN
/** C-order reshape; one entry of shape may be -1 (inferred). Output chunks follow
 *  the input's where dims are only merged or split. */
ZC_API int zc_reshape(zc_array *x, int ndim, const int64_t *shape, zc_array **out);
/** Output dim d is input dim axes[d] (naxes == ndim, each axis once). */
ZC_API int zc_permute_dims(zc_array *x, const int *axes, int naxes, zc_array **out);
/** Move axes source[i] to positions destination[i] (n of each), the others keep their order. */
ZC_API int zc_moveaxis(zc_array *x, const int *source, const int *destination, int n, zc_array **out);
/** Swap the last two axes (ndim >= 2). */
ZC_API int zc_matrix_transpose(zc_array *x, zc_array **out);
/** A new axis of size 1 at `axis` (in -ndim-1 .. ndim). */
ZC_API int zc_expand_dims(zc_array *x, int axis, zc_array **out);
/** New axes of size 1 at each of `axes` (naxes of them, distinct), each counted in the
 *  result's x.ndim + naxes dims (negative from its end), as the array API 2025.12 and NumPy. */
ZC_API int zc_expand_dims_axes(zc_array *x, const int *axes, int naxes, zc_array **out);
/** Remove size-1 axes (naxes 0 = every size-1 axis); an axis of another size is an error. */
ZC_API int zc_squeeze(zc_array *x, const int *axes, int naxes, zc_array **out);
/** Broadcast to `shape` (ndim >= x's; NumPy rules). Nothing is copied until computed. */
ZC_API int zc_broadcast_to(zc_array *x, int ndim, const int64_t *shape, zc_array **out);
/** The shape n shapes broadcast to (NumPy rules): shape i has ndims[i] sizes at
 *  shapes[i]; the result's dims into *ndim and shape (room for ZC_MAX_DIMS).
 *  ZC_EINVAL names the shape and dimension that disagree. n == 0 gives (). */
ZC_API int zc_broadcast_shapes(int n, const int *ndims, const int64_t *const *shapes, int *ndim, int64_t *shape);
/** The n (<= 64) arrays broadcast to their common shape: outs[i] (views). */
ZC_API int zc_broadcast_arrays(int n, zc_array *const *arrays, zc_array **outs);
/** Coordinate grids of n 1-D arrays: outs[i] (n of them, arrays[i]'s dtype) has n
 *  dims, varying along dim i with ij != 0 ("ij", matrix indexing), or with the
 *  first two dims swapped when ij == 0 ("xy", Cartesian; the array API's default). */
ZC_API int zc_meshgrid(int n, zc_array *const *arrays, int ij, zc_array **outs);
/** x split along axis into x.shape[axis] arrays of x.ndim - 1 dims: outs (room for them). */
ZC_API int zc_unstack(zc_array *x, int axis, zc_array **outs);
/** Join n >= 1 arrays along an existing axis (ZC_AXIS_NONE: flatten each first);
 *  shapes must agree except along the axis; the dtype is their result_type. */
ZC_API int zc_concat(int n, zc_array *const *arrays, int axis, zc_array **out);
/** Join n >= 1 arrays of one shape along a new axis (in -ndim-1 .. ndim). */
ZC_API int zc_stack(int n, zc_array *const *arrays, int axis, zc_array **out);
/** Reverse the order along axes (naxes 0 = all). */
ZC_API int zc_flip(zc_array *x, const int *axes, int naxes, zc_array **out);
/**
 * Roll elements along axes: out[i] = x[i - shift] (cyclic). naxes 0 = the flattened
 * array (nshifts must be 1); else nshifts == naxes, or 1 shift for every axis.
 */
ZC_API int zc_roll(zc_array *x, const int64_t *shifts, int nshifts, const int *axes, int naxes, zc_array **out);
/** Repeat each element `repeats` >= 0 times along axis (ZC_AXIS_NONE: flattened). */
ZC_API int zc_repeat(zc_array *x, int64_t repeats, int axis, zc_array **out);
/** Tile x reps[i] >= 0 times along each dim (NumPy: shorter reps or x are padded with leading 1s). */
ZC_API int zc_tile(zc_array *x, const int64_t *reps, int nreps, zc_array **out);
/**
 * Elements at `indices` (n of them, known now: a C buffer, copied; negative ones
 * count from the end) along axis (ZC_AXIS_NONE: of the flattened array). To take
 * by a lazy array of indices, compute it first with zc_compute_buffer.
 */
ZC_API int zc_take(zc_array *x, const int64_t *indices, int64_t n, int axis, zc_array **out);
/**
 * take_along_axis (array API 2024.12): out[..., k, ...] = x[..., indices[..., k, ...], ...]
 * along axis, for a lazy integer array of indices (argsort's, say; negative
 * ones count from the end) with x's number of dimensions; the other dims
 * broadcast. The result has indices' length along axis, x's dtype and
 * indices' chunks. A task reads its indices and, once each, every chunk of x
 * along the axis they point into, so it holds one block of x whatever the
 * axis' length. An index out of bounds fails the computation (ZC_EINVAL).
 * @return 0, ZC_EINVAL (NULL argument, indices not integer, dimensions that
 *         differ or do not broadcast, axis out of range), ZC_ENOMEM.
 */
ZC_API int zc_take_along_axis(zc_array *x, zc_array *indices, int axis, zc_array **out);
/**
 * isin(x, test_elements): a bool array of x's shape, true where the element
 * equals some element of test_elements (any shape; NaN equals nothing), false
 * where not (true where not with invert). The comparison promotes as `equal`.
 * Every block of x is compared with every block of test_elements under the
 * memory bound (work x.size * test_elements.size).
 */
ZC_API int zc_isin(zc_array *x, zc_array *test_elements, int invert, zc_array **out);
/**
 * n-th discrete difference along axis (n >= 0): out = x[1:] - x[:-1], n times
 * (not_equal for bool). prepend/append (NULL = none) are joined to x along axis
 * first; a 0-d one is broadcast to length 1 there.
 */
ZC_API int zc_diff(zc_array *x, int axis, int n, zc_array *prepend, zc_array *append, zc_array **out);
/** Lower/upper triangle of the last two dims: elements with col - row <= k (tril) / >= k (triu), others 0. */
ZC_API int zc_tril(zc_array *x, int64_t k, zc_array **out);
ZC_API int zc_triu(zc_array *x, int64_t k, zc_array **out);
/** Arrays of x's shape and chunks; dtype ZC_DTYPE_INVALID = x's dtype. empty_like gives zeros. */
ZC_API int zc_zeros_like(zc_array *x, zc_dtype dtype, zc_array **out);
ZC_API int zc_ones_like(zc_array *x, zc_dtype dtype, zc_array **out);
ZC_API int zc_empty_like(zc_array *x, zc_dtype dtype, zc_array **out);
ZC_API int zc_full_like(zc_array *x, double value, zc_dtype dtype, zc_array **out);
/**
 * Cumulative sum/product along axis (ZC_AXIS_NONE only for 0-d and 1-D x). dtype
 * ZC_DTYPE_INVALID = the array API default (signed ints and bool → int64, unsigned
 * → uint64, floats and complex keep theirs). include_initial: the result starts with
 * the identity (0 or 1) and is one longer along axis. Two passes: totals of each
 * block along axis (materialized), then every block scans from the carry of the
 * blocks before it; integers are exact whatever the chunks (wrapping like NumPy),
 * floats are accumulated in float64 (complex128).
 */
ZC_API int zc_cumulative_sum(zc_array *x, int axis, zc_dtype dtype, int include_initial, zc_array **out);
ZC_API int zc_cumulative_prod(zc_array *x, int axis, zc_dtype dtype, int include_initial, zc_array **out);
/**
 * Sorted copy of x along axis (zc_sort), or the int64 indices that sort it
 * (zc_argsort), as the array API's sort/argsort: stable (equal values keep
 * their order, also when descending), NaNs last in both orders, -0 equal to
 * +0. Bool, integer and real float dtypes; x has at least one dimension. The
 * result has x's shape and chunks, except along axis where chunks are at least
 * min(4096, length). Sorted lines that fit one task are sorted whole; longer
 * ones by an external sample sort planned within the memory bound (sorted runs,
 * then a merge per block of the result: plan/sort.h).
 * @return 0, ZC_EINVAL (NULL argument, a complex or string dtype, a 0-d x, an
 *         axis out of range, descending not 0 or 1), ZC_ENOMEM.
 */
ZC_API int zc_sort(zc_array *x, int axis, int descending, zc_array **out);
ZC_API int zc_argsort(zc_array *x, int axis, int descending, zc_array **out);
/**
 * For each value of x2, the index where it would be inserted into the sorted
 * 1-D x1 to keep it sorted (int64, x2's shape), as the array API's
 * searchsorted: right 0 ("left"): before equal values, 1 ("right"): after
 * them; x1 sorted as zc_sort sorts (NaNs last). sorter NULL, or integer
 * indices (x1's length) that sort x1: the search is then in x1[sorter]
 * (argsort(x1) of the same x1 becomes sort(x1); any other sorter a lazy
 * zc_take_along_axis; an index out of range fails when computed). Values of
 * two dtypes are compared as float64. Any length of x1: a task reads x1's
 * first value of every chunk and the chunks of x1 its values fall in, one at
 * a time.
 * @return 0, ZC_EINVAL (NULL argument, x1 not 1-D, right not 0 or 1, dtypes
 *         that cannot be sorted, a sorter not integer or not of x1's length),
 *         ZC_ENOMEM.
 */
ZC_API int zc_searchsorted(zc_array *x1, zc_array *x2, int right, zc_array *sorter, zc_array **out);

/* ===================================================================== 10. Linear algebra [stable] */

/* @return (every function below) as section 9's builders: 0, ZC_EINVAL (shapes
 * or dtypes that do not fit, named), ZC_EUNSUPPORTED, ZC_EOVERFLOW, ZC_ENOMEM.
 * A singular or not positive definite matrix is found when computing: ZC_EINVAL
 * from zc_compute, naming the function. */

/* ---- linear algebra (array API; NumPy is the reference for details) ----
 * Bad shapes fail with ZC_EINVAL naming the function and both shapes. The result
 * dtype is the operands' result_type (integers wrap like NumPy; bool is or/and). */
/**
 * Matrix product over the last two dims; leading (batch) dims broadcast. A 1-D x1
 * is a row vector, a 1-D x2 a column vector, and that dim is dropped from the result
 * (1-D @ 1-D is 0-d). Blocks: rows of x1's chunks × columns of x2's chunks; each task
 * pulls one step of the contracted dim at a time (gemm in OpenBLAS for float/complex,
 * loops for integers), so operands of any size compute under the memory bound.
 */
ZC_API int zc_matmul(zc_array *x1, zc_array *x2, zc_array **out);
/**
 * Sum of products over naxes contracted axis pairs: axes1/axes2 NULL = the last naxes
 * axes of x1 with the first naxes of x2 (NumPy's axes=int), else pairs axes1[i] with
 * axes2[i]. The result's dims are x1's free dims then x2's.
 */
ZC_API int zc_tensordot(zc_array *x1, zc_array *x2, int naxes, const int *axes1, const int *axes2, zc_array **out);
/** sum(conj(x1) * x2, axis) with broadcasting; both must have `axis` (counted from the
 *  end of the broadcast shape when negative) with the same size. */
ZC_API int zc_vecdot(zc_array *x1, zc_array *x2, int axis, zc_array **out);
/** Outer product of two vectors (other shapes are flattened first, as NumPy does). */
ZC_API int zc_outer(zc_array *x1, zc_array *x2, zc_array **out);

/* ---- linear algebra: decompositions and solvers (LAPACKE + OpenBLAS underneath) ----
 * a is a non-empty 2-D float32 or float64 array (others: ZC_EINVAL naming the
 * function, the argument and its dtype or dims); results are float64. zc_qr,
 * zc_svd, zc_svdvals, zc_det, zc_slogdet and zc_cholesky (of a Hermitian matrix)
 * also take complex64 or complex128: results complex128 (Vᴴ for vt, det/|det| for
 * the sign) but for the singular values and log|det|, float64. Functions with
 * several results take one out pointer per result; a NULL pointer skips that result
 * (at least one must be given). Errors found while computing (singular matrix, not
 * positive definite) are ZC_EINVAL from zc_compute, naming the function.
 *
 * Large matrices (any chunking; the work never needs a whole matrix in one task):
 *  - zc_qr, zc_svd, zc_svdvals on a tall-skinny m×n (m ≥ n) use TSQR: A in row
 *    bands of whole rows, chosen when the plan is made for its bound: A's row
 *    chunks (at least n rows) when their bands are at most 64 MiB (else bands of
 *    64 MiB, A rechunked to them), halved down to n rows while a task would not
 *    fit allowed_mem; each band factored in its own task, the
 *    stacked n×n R factors factored in one task when they are no taller than a band,
 *    else by TSQR again (recursively). n×n must fit in one task. qr reads A twice and
 *    writes Q; svdvals reads A once; svd reads A twice and writes U (the SVD of R is
 *    one task; U = Q·U_R is formed band by band, Q is never written). Q and U
 *    have chunks of the unbounded bands (narrower bands are copied to them), so
 *    what is built on them does not depend on the bound.
 *  - short-fat (m < n): qr takes Q from the QR of A[:, :m] (m×m, one task) and
 *    R = triu(Qᵀ·A) by blocks of columns; svd/svdvals work on Aᵀ (svd(Aᵀ) transposed).
 * Reduced shapes, as NumPy's mode="reduced" / full_matrices=False, with k = min(m, n):
 * q m×k, r k×n, u m×k, s k, vt k×n. Signs of the factors follow LAPACK (Householder
 * QR per band), so they may differ from NumPy's by ±1 per column/row. */
ZC_API int zc_qr(zc_array *a, zc_array **q, zc_array **r);
ZC_API int zc_svd(zc_array *a, zc_array **u, zc_array **s, zc_array **vt);
ZC_API int zc_svdvals(zc_array *a, zc_array **s);
/**
 * The complete forms, as NumPy's mode="complete" / full_matrices=True: q m×m,
 * r m×n; u m×m, s k, vt n×n. For m > n, q is the Q of the QR of [A | I] (whose
 * first n columns span A's; r is that R's first n columns); u (and v) are
 * completed by the complete Q of the reduced u (v): orthonormal columns
 * orthogonal to it. Results, bounds and signs otherwise as zc_qr / zc_svd.
 *
 * Stacks: these and zc_qr, zc_svd, zc_svdvals, zc_cholesky, zc_inv, zc_det,
 * zc_slogdet, zc_eigh take a stack of matrices (..., M, N) as well: one
 * decomposition per matrix (up to 65,536 of them), the results stacked along
 * the leading dims (an empty stack gives empty results).
 */
ZC_API int zc_qr_complete(zc_array *a, zc_array **q, zc_array **r);
ZC_API int zc_svd_full(zc_array *a, zc_array **u, zc_array **s, zc_array **vt);
/**
 * Randomized SVD of rank k (Halko, Martinsson, Tropp 2011) for matrices large in both
 * dimensions: Ω (n × l, l = k + oversamples, at most min(m, n)) from
 * zc_random_normal(seed) — the same for any chunking —; power_iters times
 * Q_z = orth(Aᵀ·(A·Q_z)) starting from Q_z = Ω, with orth a TSQR (re-orthonormalized
 * after every pass over A); Y = A·Q_z, Q = orth(Y), Bᵀ = Aᵀ·Q, the SVD of Bᵀ (n × l,
 * by TSQR), U = Q·U_B[:, :k]. Passes over A: power_iters + 2 when A's chunks hold
 * whole rows (Aᵀ·(A·X) takes one pass: per
 * band, T = A_b·X then A_bᵀ·T); otherwise 2·power_iters + 2 (A·X and Aᵀ·X by
 * blocks, the A side re-orthonormalized too). X is always small (n × l). With
 * zc_spec.cache_mem at least A's decoded size (a stored A), A is read from storage
 * once and the other passes use it in memory. u m×k, s k, vt k×n.
 * The same seed gives the same results. Dask's defaults: oversamples 10,
 * power_iters 0.
 */
ZC_API int zc_svd_compressed(zc_array *a, int64_t k, int64_t oversamples, int power_iters, uint64_t seed,
                             zc_array **u, zc_array **s, zc_array **vt);
/* Matrices that fit in one task (whatever their chunks: the task reads them whole;
 * zc_compute refuses with ZC_EMEMBOUND, naming the operation, its projected and the
 * allowed memory, if they do not). b is 1-D (n) or 2-D (n×r). */
/** a x = b for a square a (singular: ZC_EINVAL at compute). x has b's shape;
 *  complex128 when a or b is complex (zgetrs). Stacks: a (..., M, M) with b (M,)
 *  or (..., M, K), the leading dims broadcast, one solve per system. */
ZC_API int zc_solve(zc_array *a, zc_array *b, zc_array **x);
/** Lower factor L of a symmetric positive definite a = L·Lᵀ (a's lower triangle is read). */
ZC_API int zc_cholesky(zc_array *a, zc_array **l);
/** The inverse (complex too: zgetri). */
ZC_API int zc_inv(zc_array *a, zc_array **x);
/** Determinant (0-d float64) from the LU factorization; 0 for a singular matrix (no error). */
ZC_API int zc_det(zc_array *a, zc_array **det);
/**
 * Sign (-1, 0 or 1) and natural log of the absolute value of the determinant (0-d
 * float64 each; 0 and -inf for a singular matrix, a NaN logabsdet for one with NaNs),
 * from the LU factorization, as NumPy's slogdet. Either output may be NULL.
 */
ZC_API int zc_slogdet(zc_array *a, zc_array **sign, zc_array **logabsdet);
/**
 * Eigenvalues w (n, ascending, float64) and eigenvectors v (n×n, column i for
 * w[i]) of a symmetric, or complex Hermitian, a (only its lower triangle is
 * read, as NumPy's eigh), by LAPACK's dsyevd / zheevd. Either output may be
 * NULL. No convergence: ZC_EINVAL at compute.
 */
ZC_API int zc_eigh(zc_array *a, zc_array **w, zc_array **v);
/**
 * Least squares min ‖b − a x‖ (SVD based, rcond = eps·max(m, n) like NumPy's default):
 * x (n or n×r), residuals (r; 1 for a 1-D b) = squared norms of b − a·x — always
 * given, where NumPy returns an empty array when rank < n or m <= n —, rank (0-d
 * int64), s (min(m, n) singular values of a).
 */
ZC_API int zc_lstsq(zc_array *a, zc_array *b, zc_array **x, zc_array **residuals, zc_array **rank, zc_array **s);

/* ---- the rest of the linalg extension, composed of the operations above ----
 * Each is a graph of takes, elementwise functions, reductions, products and
 * decompositions, planned under the bound as those are. Matrices are the last
 * two dims of x (stacks broadcast; the SVD-based ones decompose each matrix of
 * a stack, as zc_svd does). Return 0, ZC_EINVAL
 * (NULL argument, too few dims, non-square where square is needed, a bad ord
 * or axis, shapes that do not broadcast), ZC_EUNSUPPORTED, ZC_ENOMEM. */
/** The offset diagonal of each matrix (offset > 0: above the main one): (..., K). */
ZC_API int zc_diagonal(zc_array *x, int64_t offset, zc_array **out);
/** The sum of each matrix's offset diagonal (as zc_reduce "sum"). */
ZC_API int zc_trace(zc_array *x, int64_t offset, zc_array **out);
/** The ord-norm of |x| over axes (naxes 0: all): ord INFINITY (max), -INFINITY
 *  (min), 0 (non-zero count), 1, 2, or any p (sum of |x|^p)^(1/p); a real
 *  floating result (integers computed as float64). */
ZC_API int zc_vector_norm(zc_array *x, const int *axes, int naxes, int keepdims, double ord, zc_array **out);
/** The matrix norm of each matrix: ord "fro", "1", "-1", "inf", "-inf" (largest or
 *  smallest column or row sum of |x|), or "2", "-2", "nuc" (from the singular
 *  values). keepdims keeps the two dims as 1. */
ZC_API int zc_matrix_norm(zc_array *x, const char *ord, int keepdims, zc_array **out);
/** The cross product of 3-vectors along axis (negative, of size 3 in both; x1 and
 *  x2 broadcast). */
ZC_API int zc_cross(zc_array *x1, zc_array *x2, int axis, zc_array **out);
/** x·x·…·x (n times) of square matrices, by squaring; n = 0 the identity, n < 0
 *  powers of zc_inv(x). */
ZC_API int zc_matrix_power(zc_array *x, int64_t n, zc_array **out);
/** The number of singular values above rtol times the largest (rtol < 0:
 *  max(M, N)·eps of x's precision), int64, one per matrix (...). */
ZC_API int zc_matrix_rank(zc_array *x, double rtol, zc_array **out);
/** The Moore-Penrose pseudo-inverse V·diag(1/s)·Uᴴ, singular values at most rtol
 *  times the largest (rtol < 0 as zc_matrix_rank) counted as zero; (..., N, M). */
ZC_API int zc_pinv(zc_array *x, double rtol, zc_array **out);

/* ===================================================================== 11. Computing [stable] */

typedef struct {
    int64_t op;          /* operation number in the plan */
    const char *name;    /* operation name */
    int64_t done, total; /* tasks */
} zc_progress;
typedef int (*zc_progress_fn)(const zc_progress *p, void *ctx); /* non-zero cancels (ZC_ECANCELED) */

typedef struct {
    unsigned struct_size;   /* sizeof(zc_spec) */
    const char *work_dir;   /* intermediates; NULL = $TMPDIR/zcube-work-<pid> */
    size_t allowed_mem;     /* bytes one task may use, all included; default 2 GiB */
    size_t reserved_mem;    /* part of allowed_mem kept for the runtime (and for intermediates
                               small enough to stay in memory: up to half of it); 0 (the
                               default) = automatic: allowed_mem / 8, at most 64 MiB */
    int nthreads;           /* 0 = all cores */
    int resume;             /* keep work_dir and skip output chunks already written */
    int max_retries;        /* per task, on IO errors; default 2 */
    zc_progress_fn progress;
    void *progress_ctx;
    int max_input_blocks;   /* fusion limit on input blocks per task; default 64 */
    const char *executor;   /* "threads" (default) or "sequential" */
    size_t cache_mem;       /* bytes of decoded source chunks kept in memory for the whole
                               computation, beyond the tasks' allowed_mem: a stored array read
                               by several stages whose decoded size fits (together with the
                               others so kept) is read and decoded once, by the first stage
                               that reads each chunk (zc_compute only; workers running a
                               saved plan read as before). Process memory stays within
                               nthreads x allowed_mem + cache_mem. What the sources leave
                               of it holds the intermediates when they all fit. The
                               report's "source_cache" gives bytes, arrays, hits, misses,
                               intermediates_in_memory. 0 = off */
} zc_spec;
#define ZC_SPEC_INIT {sizeof(zc_spec), NULL, (size_t)2 << 30, 0, 0, 0, 2, NULL, NULL, 64, NULL, 0}

/** Where a computed array goes. codec NULL = "zstd:1"; zarr_format 0 = 3. An
 * array or group already at store/path is replaced (check with zc_node_kind_at
 * first to refuse, as the command and the Python module do without
 * --overwrite / overwrite=True); one that is or holds an input is refused. */
typedef struct {
    zc_store *store;
    const char *path;
    const char *codec;
    int zarr_format;
} zc_target;

/** What a computation did, per operation (JSON text from zc_report_json). */
typedef struct zc_report zc_report;
ZC_API void zc_report_free(zc_report *r);
/**
 * {"operations":[{"name","tasks","seconds","projected_mem","measured_mem","fused":[...],"memory"}], "seconds",
 *  "intermediate_bytes", "peak_task_mem", "tasks", "memory"}. Free with zc_free.
 *
 * measured_mem: the largest peak of one task's allocations (everything zcube
 * allocates, zstd and libdeflate contexts included), never above projected_mem.
 * "memory" (docs/internals/memory.md) holds what the kernel measured:
 *   top level: "threads", "allowed_mem", "reserve" {"block_cache", "fft", "blas",
 *   "runtime", "uncounted", "total"} (resident memory outside the tasks' counts:
 *   the allocator's per-thread caches of freed blocks, and what it never sees:
 *   FFTW plans, OpenBLAS buffers, io_uring rings, thread stacks), "buffer"
 *   (zc_compute_buffer's destination, bytes), "bound" = threads x allowed_mem +
 *   cache_mem + buffer + reserve total, "rss_base" (RSS when the computation
 *   began), "peak_rss", and the verdicts "measured", "agrees", "within_bound"
 *   (every stage's);
 *   per operation: "rss_start", "peak_rss" (VmHWM, reset at the stage's start),
 *   "counted_growth" (the allocator's held bytes, peak minus start),
 *   "mapped_peak" (files mapped by fs stores: page cache counted in RSS), "kept"
 *   (bytes still allocated after the stage: data in memory stores), "bound"
 *   (the top-level bound + kept), "agrees" (RSS growth <= counted_growth +
 *   mapped_peak + reserve.uncounted) and "within_bound" (peak_rss - rss_base <=
 *   bound).
 * zc_plan_json's "memory" holds the reserve and the bound only.
 * @return 0, ZC_EINVAL (NULL argument), ZC_ENOMEM.
 */
ZC_API int zc_report_json(const zc_report *r, char **json);

/**
 * Compute `n` arrays into their targets, sharing work (zc_plan_create +
 * zc_plan_execute of every operation + zc_plan_free). report may be NULL.
 * @return 0, ZC_EMEMBOUND (before any work: the operation, its projected and
 *         allowed memory and what to change), ZC_EINVAL (as zc_plan_create: a
 *         target over an input), ZC_ECANCELED, or the first task error.
 */
ZC_API int zc_compute(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets,
                      zc_report **report);
/**
 * Compute one array into a caller's C-order buffer (for arrays that fit in memory).
 * @return 0, ZC_EINVAL (NULL argument, dst_size smaller than the array), and zc_compute's codes.
 */
ZC_API int zc_compute_buffer(const zc_spec *spec, zc_array *a, void *dst, size_t dst_size, zc_report **report);

/* ---- selections whose size depends on the data (counted under a spec when made) ---- */
/**
 * Boolean-mask indexing, x[mask]: the elements (or sub-arrays) of x where mask
 * is true, in C order along the mask's dims. mask is bool with 1..x's ndim dims,
 * its shape x's leading one; the result has shape (count,) + x.shape[mask.ndim:].
 * Its size depends on the data, so it is counted now (pass 1): a computation
 * under `spec` of the true values per block of the mask's rows, kept in the
 * result (8 bytes per block); the values themselves are placed at compute time
 * (pass 2), each task reading only the blocks that hold its rows. The result is
 * an ordinary array: exact shape, regular chunks (those of x's rows).
 * @return 0, ZC_EINVAL (not bool, shapes), or an error of the count's computation.
 */
ZC_API int zc_mask_select(const zc_spec *spec, zc_array *x, zc_array *mask, zc_array **out);
/**
 * The indices of x's non-zero (true) elements in C order: outs[d] (x's ndim of
 * them, int64, 1-D, one length) are their coordinates along dim d. Counted now
 * under spec as zc_mask_select; x must have at least 1 dimension.
 * @return 0, ZC_EINVAL (a 0-d x, NULL argument), or an error of the count's computation.
 */
ZC_API int zc_nonzero(const zc_spec *spec, zc_array *x, zc_array **outs);
/**
 * The distinct values of x (flattened), as the array API's unique_all,
 * unique_counts, unique_inverse and unique_values: values (1-D, sorted, NaNs
 * last and each NaN distinct, -0 equal to +0), indices (int64, the first
 * occurrence of each in flattened x), inverse (int64, x's shape: the index in
 * values of each element) and counts (int64). Pass NULL for any not wanted.
 * Built on zc_sort (an external sort when x is larger than a task's memory)
 * and one selection counted now under spec as zc_mask_select (it computes the
 * sort once); the arrays sort again when computed. Bool, integer, real and
 * complex float dtypes (complex values in NumPy's order: by real part, then
 * imaginary, those with NaNs last; three sorts and two gathers instead of one
 * sort); an inverse for at most 3037000499 elements.
 * @return 0, ZC_EINVAL (NULL spec or x, a string dtype),
 *         ZC_EUNSUPPORTED (an inverse of a larger x), or an error of the count.
 */
ZC_API int zc_unique(const zc_spec *spec, zc_array *x, zc_array **values, zc_array **indices, zc_array **inverse,
                     zc_array **counts);

/* ===================================================================== 12. Plans [experimental] */

/* ---- plans: plan once, then execute (FFTW-style) ----
 *
 * zc_plan_create runs the planner once: it optimizes the arrays' graph into a
 * table of operations (stages: the node each writes, its task grid, the
 * chunkings of intermediates, fitted sizes such as a copy's block of chunks),
 * projects every task's memory and refuses with ZC_EMEMBOUND before any work.
 * The plan works on its own copy of the graph: the arrays passed in are never
 * changed, so any number of plans, in any threads, may share them. A plan's
 * operations never change once made. zc_plan_execute runs it whole (any number
 * of times) or runs tasks [first, last) of one operation (what every executor
 * calls); executions of one plan run one at a time (a lock), distinct plans
 * run concurrently. A plan written with zc_plan_write holds its operations,
 * not only the source graph: zc_plan_load gives back exactly those tasks in
 * any process, with any thread count.
 *
 *   zc_plan *p;
 *   zc_plan_create(&spec, 1, &m, &t, &p);   // ZC_EMEMBOUND here, before any work
 *   zc_plan_execute(p, NULL, ZC_PLAN_ALL, 0, -1);
 *   zc_plan_free(p);
 *
 * zc_compute, zc_plan_json, zc_plan_save and zc_plan_run are these calls in one. */
typedef struct zc_plan zc_plan;
#define ZC_PLAN_ALL (-1) /* zc_plan_execute: every operation, in order */

/**
 * Plan n arrays into their targets (targets NULL: a plan that can be described
 * but not executed or written). The spec's memory figures size the plan; its
 * other settings are the default of every execution. Free with zc_plan_free.
 * @return 0, ZC_EINVAL (NULL argument, a target without store or path, unknown
 *         spec version, a target that is or holds a stored array the arrays
 *         read: writing it would erase that input first), ZC_EMEMBOUND (an
 *         operation does not fit: its name, its projected and allowed memory
 *         and what to change), ZC_ENOMEM.
 */
ZC_API int zc_plan_create(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets,
                          zc_plan **out);
/**
 * zc_plan_create whose targets are created with the caller's options:
 * create[i] (NULL = from targets[i]'s codec and zarr_format, as zc_plan_create)
 * gives format, codec, fill value, attributes, dimension names, order, separator
 * and sharding (what `zcube copy` keeps); the plan keeps a copy. Its ndim, shape,
 * dtype and itemsize must be arrays[i]'s, and arrays[i]'s chunks must be its write
 * unit: its shards when sharded, else its chunks (tasks write whole units), else
 * creating it fails with ZC_EINVAL. create NULL: zc_plan_create.
 * @return as zc_plan_create; ZC_EINVAL also for more than 64 targets.
 */
ZC_API int zc_plan_create_advanced(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets,
                                   const zc_zarr_create_opts *const *create, zc_plan **out);
/** Free a plan (its own copy of the graph, its stores if loaded). NULL is a no-op. */
ZC_API void zc_plan_free(zc_plan *plan);
/**
 * Execute a plan. op ZC_PLAN_ALL: every operation (creating its arrays, the
 * intermediates in a fresh work directory removed at the end unless resume);
 * the report is then zc_plan_report's. op >= 0: tasks [first, last) of that
 * operation (last < 0 = to its end) of a written or loaded plan, whose arrays
 * exist; operations before it must have finished, in any processes. run gives
 * this execution's settings (threads, executor, progress, retries, resume,
 * cache_mem, work_dir); NULL = the plan's spec. Its memory figures are ignored:
 * the plan's were used to size the tasks.
 * @return 0, ZC_EINVAL (bad op; a slice of a plan never written), ZC_ECANCELED,
 *         or the first task error.
 */
ZC_API int zc_plan_execute(zc_plan *plan, const zc_spec *run, int op, int64_t first, int64_t last);
/** Number of operations of a plan. @return 0 or ZC_EINVAL (NULL argument). */
ZC_API int zc_plan_ops(const zc_plan *plan, int *nops);
/** Tasks of operation op (0 for an operation run by the tasks of an earlier one of its
 *  group). @return 0 or ZC_EINVAL (NULL argument, op out of range). */
ZC_API int zc_plan_op_tasks(const zc_plan *plan, int op, int64_t *tasks);
/**
 * The plan as JSON (free with zc_free): {"operations":[{"op", "name", "kind", "shape",
 * "chunks", "dtype", "tasks", "projected_mem", "inputs", "fused", "output", "group"?,
 * "copy_block"?}], "tasks", "intermediate_bytes", "memory_limit"}.
 * @return 0, ZC_EINVAL (NULL argument), ZC_ENOMEM.
 */
ZC_API int zc_plan_to_json(const zc_plan *plan, char **json);
/**
 * The report of the plan's last whole execution (zc_report_json's JSON; free with
 * zc_free). @return 0, ZC_EINVAL (NULL argument; never executed whole), ZC_ENOMEM.
 */
ZC_API int zc_plan_report(zc_plan *plan, char **json);
/**
 * Save a plan for workers: creates every operation's array (the targets, and the
 * intermediates in the work directory — the spec's, else a fresh one — which the
 * workers must reach) and writes the plan to `path` as JSON: its operations and
 * graph, the library version and a checksum. Stores must be local folders (not
 * memory://) and arrays must not come from zc_asarray.
 * @return 0, ZC_EINVAL (NULL argument, plan without targets), ZC_EUNSUPPORTED
 *         (memory store, zc_asarray source), ZC_EIO.
 */
ZC_API int zc_plan_write(zc_plan *plan, const char *path);
/**
 * Load a plan written by zc_plan_write, without planning again: its operations
 * and task grids are the saved ones whatever this process's thread count.
 * @return 0, ZC_EFORMAT (not a plan; a plan of another zcube version or plan
 *         format; content changed after saving — checksum —; an operation
 *         disagreeing with its node; a source whose shape or dtype changed),
 *         ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_plan_load(const char *path, zc_plan **out);

/**
 * The optimized plan without running it (zc_plan_create + zc_plan_to_json;
 * targets NULL: written as zstd:1 into files, what a target's codec and store
 * hold per task changes the projections): JSON {"operations":[{"name", "kind", "shape", "chunks",
 * "dtype", "tasks", "projected_mem", "inputs", "fused"}], "tasks", "intermediate_bytes"}.
 * @return 0, zc_plan_create's codes, ZC_ENOMEM.
 */
ZC_API int zc_plan_json(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets, char **json);

/**
 * Save a computation for workers: zc_plan_create + zc_plan_write.
 * @return 0, zc_plan_create's and zc_plan_write's codes.
 */
ZC_API int zc_plan_save(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets,
                        const char *path);
/**
 * Run tasks [first, last) of operation `op` of a saved plan, in this process
 * (last < 0 = to the end) on nthreads threads (0 = all cores): zc_plan_load +
 * zc_plan_execute. Operations before `op` must have finished, in any
 * processes. This is what `zcube worker PLAN.json --op N --blocks A:B` calls.
 * @return 0, zc_plan_load's and zc_plan_execute's codes.
 */
ZC_API int zc_plan_run(const char *path, int op, int64_t first, int64_t last, int nthreads);

/* ===================================================================== 13. FFT (array API fft extension) [experimental] */

/*
 * Discrete Fourier transforms, lazily like every other array function, with
 * FFTW3 underneath (fftw3f for float32/complex64, fftw3 for float64/complex128;
 * bool and integers are computed in float64, float16 in float32). NumPy's
 * numpy.fft is the reference for values and normalization.
 *
 *   n      length of the transform along the axis (input cut or zero-padded);
 *          -1 = the input's length (irfft/hfft: 2·(m-1) for m inputs); n < 1
 *          otherwise is ZC_EINVAL
 *   axis   negative counts from the end; out of range is ZC_EINVAL
 *   norm   "backward" (NULL = this: no scaling forward, 1/n inverse), "ortho"
 *          (1/sqrt(n) both ways) or "forward" (1/n forward, none inverse)
 *
 * An axis whose line fits in a task is rechunked to be whole and transformed
 * block by block (FFTW plans are made once per shape and reused by every task).
 * A longer axis uses the four-step (Bailey) algorithm built from the engine's
 * reshape, rechunk and FFT nodes, so tasks stay within allowed_mem for any
 * length: an axis of length N = N1·N2 costs about three rechunks (transposes)
 * and two transform passes over storage; a prime length too long for one task
 * goes through Bluestein's algorithm (a convolution of length 2^p >= 2N-1 done
 * by three such transforms: about three times the work). The function records
 * the transform; the algorithm is chosen when a plan is made, for its spec's
 * allowed_mem, so one graph may be planned under several bounds. The result's
 * chunks do not depend on the bound: a line no longer than the input's chunk
 * (or 16 KiB) is whole in blocks of about the input's chunk bytes (at most 30
 * MiB); a longer one is cut like the input's chunks.
 *
 * @return (every function below) 0, ZC_EINVAL (NULL argument; n,
 *         axis, axes, s, norm or dtype that does not fit, named), ZC_EUNSUPPORTED
 *         (n above 2^40 points; a four-step split needing more than ZC_MAX_DIMS
 *         dimensions), ZC_ENOMEM.
 */
/** Complex transforms: fft (exp(-2πi jk/n)) and its inverse; output complex64/complex128. */
ZC_API int zc_fft_fft(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out);
ZC_API int zc_fft_ifft(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out);
/** Real input → n/2+1 complex outputs (complex input is ZC_EINVAL). */
ZC_API int zc_fft_rfft(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out);
/** Inverse of rfft: the first n/2+1 (complex or real float) inputs → n real outputs; integer input is ZC_EINVAL. */
ZC_API int zc_fft_irfft(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out);
/** Hermitian-symmetric input → real output (hfft = irfft(conj(x)) with the norm's direction swapped) and its inverse. */
ZC_API int zc_fft_hfft(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out);
ZC_API int zc_fft_ihfft(zc_array *x, int64_t n, int axis, const char *norm, zc_array **out);
/**
 * n-dimensional transforms over `axes` (naxes 0 = all axes, or the last ns when s
 * is given), lengths s (ns 0 = the input's; -1 entries too). rfftn transforms the
 * last of the axes with rfft, irfftn with irfft (default length 2·(m-1)).
 * Repeated axes are ZC_EINVAL.
 */
ZC_API int zc_fft_fftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm,
                       zc_array **out);
ZC_API int zc_fft_ifftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm,
                        zc_array **out);
ZC_API int zc_fft_rfftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm,
                        zc_array **out);
ZC_API int zc_fft_irfftn(zc_array *x, const int64_t *s, int ns, const int *axes, int naxes, const char *norm,
                         zc_array **out);
/** Sample frequencies of an n-point (r)fft with sample spacing d, as NumPy: dtype float64
 *  (ZC_DTYPE_INVALID) or float32. */
ZC_API int zc_fft_fftfreq(int64_t n, double d, zc_dtype dtype, zc_array **out);
ZC_API int zc_fft_rfftfreq(int64_t n, double d, zc_dtype dtype, zc_array **out);
/** Move the zero frequency to the middle (a roll by n/2 along each axis; naxes 0 = all) and back. */
ZC_API int zc_fft_fftshift(zc_array *x, const int *axes, int naxes, zc_array **out);
ZC_API int zc_fft_ifftshift(zc_array *x, const int *axes, int naxes, zc_array **out);

/* ===================================================================== 14. Distributed execution [experimental] */

/*
 * A saved plan (zc_plan_save) runs on several workers: local processes
 * ("processes") or MPI ranks ("mpi"; see docs/distributed.md), or, through
 * `zcube worker`, on any batch system. The coordinator hands out each
 * operation's tasks in small ranges as workers become free (operations in
 * order), retries a range that failed with a retryable error (I/O, a worker
 * that died) up to `retries` times on another worker, starts backup copies of
 * stragglers on idle workers (the first copy to finish counts; tasks are
 * idempotent), and with `resume` skips the ranges whose completion markers
 * (WORK/zcube-done/op<k>/<first>-<last>, written by workers once a range's
 * chunks are) exist. Every worker must see the plan's work directory and
 * targets (a shared filesystem). Test-only: the environment variable
 * ZCUBE_FAULT injects failures, crashes and delays into chosen tasks (see
 * docs/distributed.md).
 */
typedef struct {
    unsigned struct_size;          /* sizeof(zc_dist_spec) */
    const char *executor;          /* "processes" (default), "mpi" or "slurm" */
    const char *plan_json;         /* zc_plan_json of the saved computation, with the same spec */
    int workers;                   /* processes: how many (default: online cores) */
    int nthreads;                  /* threads of a worker (0 = its cores); any count runs the
                                      same saved tasks */
    int retries;                   /* per range; default 2 */
    int backups;                   /* backup copies of stragglers; default 1 */
    int resume;                    /* skip ranges with completion markers */
    const char *const *worker_argv; /* processes: a command serving ranges on stdin/stdout
                                      (zc_dist_serve), e.g. {"zcube", "worker", PLAN, "--serve", NULL};
                                      argv[0] is a path */
    zc_progress_fn progress;
    void *progress_ctx;
    /* slurm: one job array per operation, element i running the i-th range of
       tasks_per_job tasks (`worker_argv[0] worker PLAN --job-op K`), chained with
       --dependency=afterok, then a job running `worker_argv[0] worker PLAN --finalize`;
       jobs that end without finishing are submitted again (for the tasks still
       missing) up to `retries` times */
    const char *sbatch_args;       /* extra sbatch arguments, split at spaces (e.g. "-p big -A proj") */
    int64_t tasks_per_job;         /* default 16 */
    int detach;                    /* submit and return (then `zcube status WORK`) */
    /* seconds one task may take, 0 = no limit (the default): a range of n tasks on T
       threads is abandoned after task_timeout * ceil(n / T) seconds (a hung task) and
       retried like a failure; the worker that ran it ends (processes: replaced) or
       takes no more ranges (MPI ranks); a Slurm element fails and is resubmitted */
    double task_timeout;
} zc_dist_spec;
#define ZC_DIST_SPEC_INIT {sizeof(zc_dist_spec), "processes", NULL, 0, 0, 2, 1, 0, NULL, NULL, NULL, NULL, 16, 0, 0}

/**
 * Run every operation of the saved plan at plan_path on the spec's executor. On
 * success the intermediates and markers in the work directory are removed. The
 * report is the plan summary with per-operation "seconds" and "skipped", and
 * "executor", "skipped", "revived" (dead workers replaced) and "workers": [{"worker",
 * "tasks", "units", "retried", "backups", "failures", "seconds_busy"}].
 * @return 0, or the first error that ends the run (a range that failed retries + 1
 *         times reports its first failure; non-retryable errors end the run at once).
 */
ZC_API int zc_dist_run(const zc_dist_spec *spec, const char *plan_path, zc_report **report);
/**
 * A worker: answer range requests from in_fd on out_fd until end of input
 * (what `zcube worker PLAN --serve` runs for the processes executor), or until
 * a range ran past its time limit (reported to the coordinator; the caller should
 * then end the process, whose abandoned thread still runs).
 * @return 0 at the end of input or after a range timed out, ZC_EINVAL (NULL path, bad descriptors), ZC_EIO (the pipe),
 *         zc_plan_load's codes; a range's failure is answered to the coordinator, not returned.
 */
ZC_API int zc_dist_serve(const char *plan_path, int nthreads, int in_fd, int out_fd);
/**
 * Batch jobs of the slurm executor: zc_dist_job runs range `index` (< 0: from
 * $SLURM_ARRAY_TASK_ID) of operation op as listed in WORK/zcube-slurm/op<op>.ranges;
 * zc_dist_finalize removes the intermediates and markers and writes WORK/zcube-complete.
 * @return 0, ZC_EINVAL (bad op or index, no $SLURM_ARRAY_TASK_ID), ZC_EFORMAT (the ranges file),
 *         ZC_EIO, and zc_plan_load's and zc_plan_execute's codes.
 */
ZC_API int zc_dist_job(const char *plan_path, int op, int64_t index, int nthreads);
/**
 * @return 0, ZC_EINVAL (NULL path), ZC_ENOENT (the plan's work directory), ZC_EIO, ZC_ENOMEM.
 */
ZC_API int zc_dist_finalize(const char *plan_path);
/**
 * Progress of a run in a work directory, from its completion markers: JSON
 * {"operations": [{"op", "name", "tasks", "done"}], "tasks", "done", "complete"}.
 * The work directory holds the plan summary WORK/zcube-plan-summary.json, which
 * zc_dist_run writes when it starts. Free with zc_free.
 * @return 0, ZC_EINVAL (NULL argument), ZC_ENOENT (no plan summary in work_dir), ZC_EFORMAT, ZC_ENOMEM.
 */
ZC_API int zc_dist_status(const char *work_dir, char **json);

/**
 * MPI (`mpirun -np N prog`): every rank calls zc_dist_mpi_init first. Rank 0 then
 * plans, saves the plan and calls zc_dist_run with executor "mpi", which sends the
 * plan to the other ranks and hands out ranges (rank 0 works too, on a thread);
 * every other rank calls zc_dist_mpi_worker, which returns when rank 0 is done.
 * All ranks end with zc_dist_mpi_finalize (on rank 0 it also releases waiting
 * workers when no plan was sent, e.g. after a planning error). Without MPI at
 * build time these return ZC_EUNSUPPORTED saying how to get it.
 * zc_dist_mpi_init starts MPI (MPI_THREAD_FUNNELED) unless the program already
 * did; before that it sets PMIX_MCA_gds=hash in the environment unless it is set
 * (a rank killed inside MPI_Init can otherwise leave mpirun hung: see
 * docs/distributed.md). A program that starts MPI itself should export it too.
 * @return 0, ZC_EIO (MPI failed to start), ZC_EUNSUPPORTED (built without MPI).
 */
ZC_API int zc_dist_mpi_init(int *rank, int *size);
/**
 * @return 0, ZC_EIO (MPI failed), ZC_EUNSUPPORTED (built without MPI), the plan's load errors.
 */
ZC_API int zc_dist_mpi_worker(int nthreads);
/**
 * @return 0, ZC_EUNSUPPORTED (built without MPI).
 */
ZC_API int zc_dist_mpi_finalize(void);

/* ===================================================================== 15. Testing hooks [experimental] */

/**
 * Make the Nth allocation from now fail (1 = the next one); with `repeat`, every
 * allocation after it fails too. n = 0 turns injection off. Returns how many
 * allocations failed since the last call. Not thread-safe to change while
 * other threads allocate; not a stable API.
 * @return the count (not a status).
 */
ZC_API int zc_test_fail_alloc(long n, int repeat);

#ifdef __cplusplus
}
#endif
#endif /* ZCUBE_H */
