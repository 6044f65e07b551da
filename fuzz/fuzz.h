/* fuzz/fuzz.h — shared pieces of the fuzz targets.
 *
 * Every target is one file defining LLVMFuzzerTestOneInput. The libFuzzer
 * build links each alone with -fsanitize=fuzzer; the regression build
 * (fuzz_regression, always built with the tests) compiles each with
 * -DLLVMFuzzerTestOneInput=zc_fuzz_<target> so that all of them live in one
 * binary driven by regression_driver.c.
 *
 * Helpers here (fuzz_common.c):
 *   - FUZZ_CHECK: the invariant checks of the targets; a violation prints and
 *     aborts (that is the finding, in both builds);
 *   - codec contexts, the table of codec chains shared by fuzz_codec_decode
 *     and fuzz_roundtrip, and chunk shapes picked from an input byte;
 *   - the fixed arrays of fuzz_chunk_read (built once, kept as objects). */
#ifndef ZC_FUZZ_FUZZ_H
#define ZC_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "zcube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: fuzz check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* Arrays and chunks the targets read or decode stay below this. */
#define FUZZ_MAX_BYTES ((size_t)1 << 20)

/* ---- codec contexts ---- */

/* A context for chunks of `dtype` (itemsize for bytes/unicode/raw, else 0 =
 * the type's size), native order ('|' for 1-byte units), `ndim` dims of
 * `shape`, spelled in `zarr_format`. Returns 0, or -1 if the shape overflows. */
int fuzz_ctx(zc_dtype dtype, size_t itemsize, int ndim, const int64_t *shape, int zarr_format,
             codec_ctx *ctx);

/* A chunk shape of exactly `nelem` elements in 1-3 dimensions chosen by `sel`
 * (each dimension a divisor). Returns ndim. */
int fuzz_shape_for(size_t nelem, uint8_t sel, int64_t *shape);

/* One of ten fixed chunk shapes (1-3 dims, one empty), chosen by `sel`.
 * Returns ndim. */
int fuzz_decode_shape(uint8_t sel, int64_t *shape);

/* ---- codec chains (v3 codec lists, some with v2 entries) ---- */

typedef struct {
    const char *json;  /* the codec list */
    zc_dtype dtype;    /* element type of the chunk */
    size_t itemsize;   /* for ZC_UNICODE/ZC_BYTES/ZC_RAW, else 0 */
    int lossless;      /* encode → decode gives the input back, bit for bit */
} fuzz_chain_spec;

extern const fuzz_chain_spec fuzz_chains[];
extern const size_t fuzz_nchains;

/* Parse a chain's JSON (the table's text is trusted: abort if it is not JSON). */
json_t *fuzz_chain_json(const fuzz_chain_spec *spec);

/* ---- single codec configurations (fuzz_codec_decode) ---- */

typedef struct {
    const char *json; /* v3 {"name",...} or v2 {"id",...} */
    zc_dtype dtype;   /* array element type the codec sees */
    size_t itemsize;  /* for unicode/bytes/raw, else 0 */
    int ndim;
    int64_t shape[4]; /* chunk shape (matters for array→array and array→bytes) */
} fuzz_codec_config;

extern const fuzz_codec_config fuzz_codec_configs[];
extern const size_t fuzz_ncodec_configs;

/* ---- the fixed arrays of fuzz_chunk_read ---- */

typedef struct {
    const char *name;      /* for messages */
    const char *meta_key;  /* ".zarray" or "zarr.json" */
    const char *meta;      /* the metadata document */
} fuzz_fixture_spec;

typedef struct {
    char *key;             /* object key (malloc'd) */
    unsigned char *data;   /* its bytes as written (malloc'd) */
    size_t size;
} fuzz_object;

typedef struct {
    const fuzz_fixture_spec *spec;
    fuzz_object *obj;      /* chunk or shard objects, sorted by key */
    size_t nobj;
    unsigned char *whole;  /* the whole array as read back after writing */
    size_t whole_size;
} fuzz_fixture;

extern const size_t fuzz_nfixtures;
/* Fixture i, built on first use: metadata written to a memory store, the
 * array filled with a pattern through zc_zarr_write, its objects and the
 * whole array as read back kept.
 * Aborts if that fails (the fuzz setup is broken, not the input). */
const fuzz_fixture *fuzz_fixture_get(size_t i);

#endif
