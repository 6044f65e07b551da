/* tools/npy.h — NumPy .npy files: header parsing and writing, dtype strings.
 *
 * File layout (NumPy format versions 1.0, 2.0, 3.0):
 *   "\x93NUMPY" major minor | header length (uint16 LE for v1, uint32 LE for
 *   v2/v3) | header: a Python dict literal {'descr': '<f4', 'fortran_order':
 *   False, 'shape': (3, 4), } padded with spaces and ended by '\n' so the data
 *   starts at a multiple of 64 (16 in old files) | raw element data.
 * Reading accepts any byte order and C or Fortran order; data handed to the
 * caller is native byte order and C order. Writing produces version 1.0 (2.0
 * only for headers over 64 KiB), native byte order, C order. */
#ifndef ZC_TOOLS_NPY_H
#define ZC_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

typedef struct {
    int version;                 /* format major version: 1, 2 or 3 */
    char descr[40];              /* dtype string as written ("<f4") */
    zc_dtype dtype;              /* element type */
    size_t itemsize;             /* bytes per element (U<n>: 4n) */
    char byteorder;              /* '<', '>' or '|' (no order: 1-byte units) */
    int fortran;                 /* 1 = column-major data */
    int ndim;                    /* 0..ZC_MAX_DIMS */
    int64_t shape[ZC_MAX_DIMS];  /* each >= 0 */
    uint64_t nelems;             /* product of shape */
    uint64_t nbytes;             /* nelems × itemsize (checked) */
    uint64_t data_offset;        /* bytes before the data */
} npy_header;

/* Parse a dtype string ("<i2", "|b1", "<U5", "|S7", "<c16", "<f2", "V8").
 * @return 0, or -1 with cli_lasterr() naming the string. */
int npy_descr_parse(const char *descr, zc_dtype *dtype, size_t *itemsize, char *byteorder);
/* Native-order dtype string for a zc_dtype into buf (size >= 24). */
int npy_descr_format(zc_dtype dtype, size_t itemsize, char *buf, size_t size);
/* Short NumPy-like label for messages: "int32", "float16", "S7", "U5", "V8". */
void npy_dtype_label(zc_dtype dtype, size_t itemsize, char *buf, size_t size);

/* Parse a complete header from the first `len` bytes of a file.
 * `name` is used in messages. @return 0, or -1 with cli_lasterr(). */
int npy_parse_header(const unsigned char *buf, size_t len, const char *name, npy_header *h);
/* Read and parse the header of open file `fd` and check the file holds all the
 * data it announces (truncation is an error). */
int npy_read_header(int fd, const char *name, npy_header *h);
/* Build a version 1.0 (2.0 if needed) header for native C-order data; the
 * caller frees *out with free(). */
int npy_build_header(zc_dtype dtype, size_t itemsize, int ndim, const int64_t *shape, char **out,
                     size_t *len);

/* True if data in this header's byte order must be swapped to native. */
int npy_needs_swap(const npy_header *h);
/* Swap `n` elements of dtype/itemsize in place (little <-> big endian). */
void npy_byteswap(zc_dtype dtype, size_t itemsize, void *data, size_t n);
/* Copy a Fortran-order array `src` of `shape` into C order `dst`. */
void npy_f_to_c(const void *src, void *dst, int ndim, const int64_t *shape, size_t itemsize);

/* Load a whole .npy file as native byte order, C order (malloc'd *data). */
int npy_load_file(const char *path, npy_header *h, void **data);
/* Save native C-order data as a .npy file (written to a temporary name, then renamed). */
int npy_save_file(const char *path, zc_dtype dtype, size_t itemsize, int ndim, const int64_t *shape,
             const void *data, size_t nbytes);

#endif
