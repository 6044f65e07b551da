/* core/dtype.h — element types: names in both Zarr formats, sizes, byte order,
 * fill values.
 *
 * In memory, elements are always native byte order; `endian` records the byte
 * order of the stored representation (Zarr v2 typestr, v3 "bytes" codec). */
#ifndef ZC_CORE_DTYPE_H
#define ZC_CORE_DTYPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define ZC_FILL_MAX 64 /* fill values longer than this (long strings) are kept on the heap */

typedef struct {
    zc_dtype type; /* element type */
    size_t size;   /* bytes per element in memory (for ZC_UNICODE: 4 × chars) */
    char endian;   /* stored order: '<' little, '>' big, '|' not applicable (1-byte units) */
} dtype_t;

/* Byte-swap unit of a dtype: 1 (no swapping), 2, 4 or 8 (complex: half size). */
size_t dtype_swap_unit(const dtype_t *dt);
/* True if elements must be byte-swapped between stored and native order. */
bool dtype_needs_swap(const dtype_t *dt);
/* Swap `n` elements in place between little and big endian. */
void dtype_byteswap(void *data, size_t n, const dtype_t *dt);
bool dtype_is_integer(zc_dtype t);
bool dtype_is_signed(zc_dtype t);
bool dtype_is_float(zc_dtype t);   /* float16/32/64 */
bool dtype_is_complex(zc_dtype t);

/* Zarr v2 / NumPy typestr ("<i2", "|b1", ">U13", "S7", "f8"). Refuses object,
 * datetime and structured types with ZC_EUNSUPPORTED naming them. */
int dtype_from_v2(const char *typestr, dtype_t *dt);
/* Render as v2 typestr into buf (size >= 16). */
void dtype_to_v2(const dtype_t *dt, char *buf, size_t size);
/* Zarr v3 data_type: a name ("int16", "r16") or {"name":..., "configuration":...}. */
int dtype_from_v3(const json_t *v, dtype_t *dt);
/* v3 data_type as JSON (new reference). */
json_t *dtype_to_v3(const dtype_t *dt);

/* Parse a fill value from metadata into `out` (dt->size bytes, native order).
 * `is_null` is set for v2 null (no fill value: reads as zeros). */
int dtype_fill_parse(const dtype_t *dt, const json_t *v, int zarr_format, void *out, bool *is_null);
/* Fill value as JSON for the given format (new reference). */
json_t *dtype_fill_json(const dtype_t *dt, const void *fill, bool is_null, int zarr_format);

/* IEEE half <-> float. */
float dtype_half_to_float(uint16_t h);
uint16_t dtype_float_to_half(float f);

/* double -> integer without undefined behaviour, as NumPy's astype on x86:
 * NaN and values beyond int64 give INT64_MIN; dtype_f2u takes [0, 2^64) as
 * it is and wraps the rest through int64 (negative values wrap). */
static inline int64_t dtype_f2i(double d)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)d;
}

static inline uint64_t dtype_f2u(double d)
{
    if (d >= 0 && d < 18446744073709551616.0) return (uint64_t)d;
    return (uint64_t)dtype_f2i(d);
}

#endif
