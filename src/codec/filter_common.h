/* codec/filter_common.h — internal helpers shared by the numcodecs filters
 * (delta, fixedscaleoffset, quantize, astype, bitround, shuffle): config
 * reading with named errors, and element arithmetic that follows NumPy.
 *
 * Elements are read from and written to bytes in the byte order of the
 * filter's own dtype (a v2 filter with dtype ">i2" reads big-endian values),
 * as numcodecs does. In between, a value is held as a `num_val`:
 *
 *   kind        held in   precision kept
 *   NUM_BOOL    .u        0 or 1
 *   NUM_INT     .i        wrapped to the dtype's width (sign-extended)
 *   NUM_UINT    .u        wrapped to the dtype's width
 *   NUM_FLOAT   .d        rounded to the dtype's precision after every step
 *
 * Float arithmetic is done in double and rounded to float32/float16 after each
 * operation. This gives the same bits as computing in float32 (or in float32
 * then rounding to half, as NumPy does for float16), because double has more
 * than 2p+2 bits for p = 24 and p = 11, so the double rounding is innocuous.
 *
 * Float → integer casts are undefined in C (and unspecified in NumPy) when the
 * value is out of range or NaN. Here they follow NumPy's scalar loops on
 * x86-64: to int8/uint8/int16/uint16/int32 the value is truncated to int32
 * (NaN and values outside int32 give INT32_MIN) and wrapped to the width; to
 * uint32/int64 likewise through int64 (INT64_MIN); to uint64 exactly when in
 * [0, 2^64), else through int64. (NumPy's SIMD loops may differ for
 * out-of-range values.) */
#ifndef ZC_CODEC_FILTER_COMMON_H
#define ZC_CODEC_FILTER_COMMON_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codec/codec.h"
#include "core/dtype.h"

/* ---- config ---- */

/* A dtype under `key`: a v3 name ("int32") or a NumPy typestr ("<i4", "f8").
 * Missing or null: ZC_EFORMAT if `required`, else *present = false (present
 * may be NULL when required). Errors name the codec and the key. */
int codec_filter_dtype(const json_t *cfg, const char *who, const char *key, bool required,
                       dtype_t *out, bool *present);
/* An integer under `key` in [lo, hi]; `def` when missing/null unless `required`. */
int codec_filter_int(const json_t *cfg, const char *who, const char *key, bool required,
                     long long def, long long lo, long long hi, long long *out);
/* Codec object spelling: v3 {"name": v3_name, "configuration": conf} or
 * v2 {"id": v2_id, ...conf}. Steals conf; NULL when out of memory. */
json_t *codec_filter_json(const char *v3_name, const char *v2_id, int zarr_format, json_t *conf);
/* Add a dtype as a NumPy typestr ("<i4") under key; returns conf (NULL on OOM,
 * conf freed). */
json_t *codec_filter_json_dtype(json_t *conf, const char *key, const dtype_t *dt);

/* Size of n bytes of `in_size`-byte elements re-expressed as `out_size`-byte
 * elements. ZC_ECORRUPT (naming the codec) if n is not a whole number of input
 * elements, ZC_EOVERFLOW if the result does not fit. */
int codec_filter_resize(const char *who, size_t n, size_t in_size, size_t out_size, size_t *out);
/* encoded_ctx for filters that map each element of `from` to one of `to`:
 * same shape, dtype `to` (its byte order kept), nbytes rescaled. ZC_EFORMAT if
 * in->nbytes is not a whole number of `from` elements. */
int codec_filter_encoded_ctx(const char *who, const dtype_t *from, const dtype_t *to,
                             const codec_ctx *in, codec_ctx *out);

/* ---- element arithmetic ---- */

typedef enum { NUM_BOOL, NUM_INT, NUM_UINT, NUM_FLOAT } num_kind;

typedef struct {
    num_kind kind;  /* how values are held */
    unsigned size;  /* bytes per element: 1, 2, 4 or 8 */
    bool swap;      /* stored byte order differs from native */
    dtype_t dt;     /* the dtype it came from */
} num_fmt;

typedef union {
    int64_t i;  /* NUM_INT */
    uint64_t u; /* NUM_UINT, NUM_BOOL */
    double d;   /* NUM_FLOAT */
} num_val;

/* Describe a numeric dtype; ZC_EUNSUPPORTED naming codec/key for complex,
 * strings and raw bytes (and bool unless allow_bool). */
int codec_num_fmt(const dtype_t *dt, const char *who, const char *key, bool allow_bool,
                  num_fmt *f);

/* IEEE half from double, rounded to nearest even in one step. */
uint16_t codec_double_to_half(double d);

/* Round a double to the precision of a float of `size` bytes. */
static inline double num_round(unsigned size, double d)
{
    if (size == 8) return d;
    if (size == 4) return (double)(float)d;
    return (double)dtype_half_to_float(codec_double_to_half(d));
}

static inline num_val num_load(const num_fmt *f, const unsigned char *p)
{
    num_val v;
    unsigned char b[8];
    memcpy(b, p, f->size);
    if (f->swap)
        for (unsigned k = 0; k < f->size / 2; k++) {
            unsigned char t = b[k];
            b[k] = b[f->size - 1 - k];
            b[f->size - 1 - k] = t;
        }
    switch (f->kind) {
    case NUM_BOOL: v.u = b[0] != 0; break;
    case NUM_INT:
        switch (f->size) {
        case 1: { int8_t x; memcpy(&x, b, 1); v.i = x; break; }
        case 2: { int16_t x; memcpy(&x, b, 2); v.i = x; break; }
        case 4: { int32_t x; memcpy(&x, b, 4); v.i = x; break; }
        default: memcpy(&v.i, b, 8); break;
        }
        break;
    case NUM_UINT:
        switch (f->size) {
        case 1: v.u = b[0]; break;
        case 2: { uint16_t x; memcpy(&x, b, 2); v.u = x; break; }
        case 4: { uint32_t x; memcpy(&x, b, 4); v.u = x; break; }
        default: memcpy(&v.u, b, 8); break;
        }
        break;
    default:
        switch (f->size) {
        case 2: { uint16_t h; memcpy(&h, b, 2); v.d = dtype_half_to_float(h); break; }
        case 4: { float x; memcpy(&x, b, 4); v.d = x; break; }
        default: memcpy(&v.d, b, 8); break;
        }
        break;
    }
    return v;
}

/* Store a value already in f's kind and precision. */
static inline void num_store(const num_fmt *f, unsigned char *p, num_val v)
{
    unsigned char b[8];
    switch (f->kind) {
    case NUM_BOOL: b[0] = (unsigned char)(v.u != 0); break;
    case NUM_INT:
    case NUM_UINT:
        switch (f->size) {
        case 1: b[0] = (unsigned char)v.u; break;
        case 2: { uint16_t x = (uint16_t)v.u; memcpy(b, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)v.u; memcpy(b, &x, 4); break; }
        default: memcpy(b, &v.u, 8); break;
        }
        break;
    default:
        switch (f->size) {
        case 2: { uint16_t h = codec_double_to_half(v.d); memcpy(b, &h, 2); break; }
        case 4: { float x = (float)v.d; memcpy(b, &x, 4); break; }
        default: memcpy(b, &v.d, 8); break;
        }
        break;
    }
    if (f->swap)
        for (unsigned k = 0; k < f->size / 2; k++) {
            unsigned char t = b[k];
            b[k] = b[f->size - 1 - k];
            b[f->size - 1 - k] = t;
        }
    memcpy(p, b, f->size);
}

/* Defined float → integer conversions (see the top comment; dtype_f2i, dtype_f2u in core/dtype.h). */
static inline int32_t num_f2i32(double d)
{
    if (!(d > -2147483649.0 && d < 2147483648.0)) return INT32_MIN;
    return (int32_t)d;
}

/* Wrap an integer to f's width (f is NUM_INT or NUM_UINT). */
static inline num_val num_wrap(const num_fmt *f, uint64_t u)
{
    num_val v;
    if (f->size < 8) u &= (UINT64_C(1) << (8 * f->size)) - 1;
    if (f->kind == NUM_INT && f->size < 8 && (u >> (8 * f->size - 1)) & 1)
        u |= ~UINT64_C(0) << (8 * f->size); /* sign-extend */
    v.u = u;
    return v;
}

/* NumPy's unsafe cast (ndarray.astype) of a value of kind `from` to `to`. */
static inline num_val num_cast(num_kind from, num_val v, const num_fmt *to)
{
    num_val r;
    switch (to->kind) {
    case NUM_BOOL:
        r.u = from == NUM_FLOAT ? v.d != 0 : v.u != 0;
        return r;
    case NUM_INT:
    case NUM_UINT:
        if (from == NUM_FLOAT) {
            if (to->size <= 2 || (to->size == 4 && to->kind == NUM_INT))
                return num_wrap(to, (uint64_t)(int64_t)num_f2i32(v.d));
            if (to->size == 8 && to->kind == NUM_UINT) return num_wrap(to, dtype_f2u(v.d));
            return num_wrap(to, (uint64_t)dtype_f2i(v.d));
        }
        return num_wrap(to, v.u);
    default:
        switch (from) {
        case NUM_FLOAT: r.d = num_round(to->size, v.d); break;
        case NUM_INT:
            r.d = to->size == 4 ? (double)(float)v.i : num_round(to->size, (double)v.i);
            break;
        default: /* NUM_UINT, NUM_BOOL */
            r.d = to->size == 4 ? (double)(float)v.u : num_round(to->size, (double)v.u);
            break;
        }
        return r;
    }
}

/* a + b and a - b in f's kind and precision (bool: or, and xor like np.diff). */
static inline num_val num_add(const num_fmt *f, num_val a, num_val b)
{
    num_val r;
    switch (f->kind) {
    case NUM_BOOL: r.u = a.u | b.u; return r;
    case NUM_FLOAT: r.d = num_round(f->size, a.d + b.d); return r;
    default: return num_wrap(f, a.u + b.u);
    }
}

static inline num_val num_sub(const num_fmt *f, num_val a, num_val b)
{
    num_val r;
    switch (f->kind) {
    case NUM_BOOL: r.u = a.u ^ b.u; return r;
    case NUM_FLOAT: r.d = num_round(f->size, a.d - b.d); return r;
    default: return num_wrap(f, a.u - b.u);
    }
}

static inline num_val num_mul(const num_fmt *f, num_val a, num_val b)
{
    num_val r;
    switch (f->kind) {
    case NUM_BOOL: r.u = a.u & b.u; return r;
    case NUM_FLOAT: r.d = num_round(f->size, a.d * b.d); return r;
    default: return num_wrap(f, a.u * b.u);
    }
}

/* np.around (half to even) in f's kind: a no-op for integers. */
static inline num_val num_around(const num_fmt *f, num_val a)
{
    if (f->kind == NUM_FLOAT) a.d = rint(a.d);
    return a;
}

/* ---- NumPy 1.x type promotion with Python scalars ----
 *
 * numcodecs computes e.g. `(arr - offset) * scale` with Python numbers; NumPy
 * 1.x picks the operation's type from the array's dtype and the scalar's
 * *value* (value-based casting): float32 array * 65536 is float64, int8
 * array - 255 is int16. These reproduce that for bool/int/uint/float. */

typedef struct {
    double d;   /* the value */
    int64_t i;  /* the value, when is_int */
    bool is_int; /* a Python int (JSON integer) rather than a float */
} num_scalar;

/* A numeric format for kind/size (native order). */
num_fmt num_fmt_of(num_kind kind, unsigned size);
/* np.promote_types for two numeric formats. */
num_fmt num_promote(const num_fmt *a, const num_fmt *b);
/* The type of `array op scalar` (for +, -, *). */
num_fmt num_result_type(const num_fmt *arr, const num_scalar *s);
/* The scalar as a value of type t. */
num_val num_scalar_as(const num_scalar *s, const num_fmt *t);

/* A required number (integer or real) under `key`, as a Python scalar: a JSON
 * integer is a Python int, a real a Python float (they promote differently). */
int codec_filter_number(const json_t *cfg, const char *who, const char *key, num_scalar *out);

#endif
