/* core/dtype.c — element types, their Zarr v2/v3 spellings and fill values. */
#include "core/dtype.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

static const struct {
    zc_dtype type;
    const char *v3;   /* Zarr v3 name */
    char kind;        /* NumPy kind letter */
    size_t size;
} TYPES[] = {
    {ZC_BOOL, "bool", 'b', 1},          {ZC_INT8, "int8", 'i', 1},
    {ZC_INT16, "int16", 'i', 2},        {ZC_INT32, "int32", 'i', 4},
    {ZC_INT64, "int64", 'i', 8},        {ZC_UINT8, "uint8", 'u', 1},
    {ZC_UINT16, "uint16", 'u', 2},      {ZC_UINT32, "uint32", 'u', 4},
    {ZC_UINT64, "uint64", 'u', 8},      {ZC_FLOAT16, "float16", 'f', 2},
    {ZC_FLOAT32, "float32", 'f', 4},    {ZC_FLOAT64, "float64", 'f', 8},
    {ZC_COMPLEX64, "complex64", 'c', 8}, {ZC_COMPLEX128, "complex128", 'c', 16},
};
#define NTYPES (sizeof TYPES / sizeof TYPES[0])

const char *zc_dtype_name(zc_dtype dtype)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (TYPES[i].type == dtype) return TYPES[i].v3;
    switch (dtype) {
    case ZC_BYTES: return "bytes";
    case ZC_UNICODE: return "unicode";
    case ZC_RAW: return "raw";
    default: return "invalid";
    }
}

bool dtype_is_integer(zc_dtype t) { return t >= ZC_INT8 && t <= ZC_UINT64; }
bool dtype_is_signed(zc_dtype t) { return t >= ZC_INT8 && t <= ZC_INT64; }
bool dtype_is_float(zc_dtype t) { return t >= ZC_FLOAT16 && t <= ZC_FLOAT64; }
bool dtype_is_complex(zc_dtype t) { return t == ZC_COMPLEX64 || t == ZC_COMPLEX128; }

size_t dtype_swap_unit(const dtype_t *dt)
{
    switch (dt->type) {
    case ZC_COMPLEX64: return 4;
    case ZC_COMPLEX128: return 8;
    case ZC_UNICODE: return 4;
    case ZC_BYTES: case ZC_RAW: return 1;
    default: return dt->size;
    }
}

static bool native_little(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

bool dtype_needs_swap(const dtype_t *dt)
{
    if (dtype_swap_unit(dt) == 1 || dt->endian == '|') return false;
    return (dt->endian == '<') != native_little();
}

void dtype_byteswap(void *data, size_t n, const dtype_t *dt)
{
    size_t unit = dtype_swap_unit(dt);
    size_t count = n * (dt->size / unit);
    unsigned char *p = data;
    switch (unit) {
    case 2:
        for (size_t i = 0; i < count; i++) {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            v = __builtin_bswap16(v);
            memcpy(p + 2 * i, &v, 2);
        }
        break;
    case 4:
        for (size_t i = 0; i < count; i++) {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            v = __builtin_bswap32(v);
            memcpy(p + 4 * i, &v, 4);
        }
        break;
    case 8:
        for (size_t i = 0; i < count; i++) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            v = __builtin_bswap64(v);
            memcpy(p + 8 * i, &v, 8);
        }
        break;
    default: break;
    }
}

int dtype_from_v2(const char *typestr, dtype_t *dt)
{
    const char *s = typestr;
    char endian = '=';
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') endian = *s++;
    char kind = *s++;
    if (!kind) return zc__err(ZC_EFORMAT, "empty dtype string");
    if (kind == 'O')
        return zc__err(ZC_EUNSUPPORTED, "dtype '%s' (Python objects / variable-length) is not supported", typestr);
    if (kind == 'M' || kind == 'm')
        return zc__err(ZC_EUNSUPPORTED, "dtype '%s' (datetime/timedelta) is not supported", typestr);
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || *end || n <= 0 || n > (1L << 30))
        return zc__err(ZC_EFORMAT, "malformed dtype string '%s'", typestr);
    if (endian == '=') endian = native_little() ? '<' : '>';
    dt->endian = endian;
    if (kind == 'S' || kind == 'V') {
        dt->type = kind == 'S' ? ZC_BYTES : ZC_RAW;
        dt->size = (size_t)n;
        dt->endian = '|';
        return 0;
    }
    if (kind == 'U') {
        dt->type = ZC_UNICODE;
        dt->size = (size_t)n * 4;
        return 0;
    }
    for (size_t i = 0; i < NTYPES; i++) {
        if (TYPES[i].kind == kind && TYPES[i].size == (size_t)n) {
            dt->type = TYPES[i].type;
            dt->size = TYPES[i].size;
            if (dt->size == 1) dt->endian = '|';
            return 0;
        }
    }
    return zc__err(ZC_EUNSUPPORTED, "dtype '%s' is not supported", typestr);
}

void dtype_to_v2(const dtype_t *dt, char *buf, size_t size)
{
    char e = dt->endian;
    if (dtype_swap_unit(dt) == 1) e = '|';
    else if (e == '|') e = native_little() ? '<' : '>';
    switch (dt->type) {
    case ZC_BYTES: snprintf(buf, size, "|S%zu", dt->size); return;
    case ZC_RAW: snprintf(buf, size, "|V%zu", dt->size); return;
    case ZC_UNICODE: snprintf(buf, size, "%cU%zu", e, dt->size / 4); return;
    default: break;
    }
    for (size_t i = 0; i < NTYPES; i++)
        if (TYPES[i].type == dt->type) {
            snprintf(buf, size, "%c%c%zu", e, TYPES[i].kind, TYPES[i].size);
            return;
        }
    snprintf(buf, size, "invalid");
}

int dtype_from_v3(const json_t *v, dtype_t *dt)
{
    const char *name = NULL;
    const json_t *cfg = NULL;
    if (json_is_string(v)) {
        name = json_string_value(v);
    } else if (json_is_object(v) && json_is_string(json_object_get(v, "name"))) {
        name = json_string_value(json_object_get(v, "name"));
        cfg = json_object_get(v, "configuration");
    } else {
        return zc__err(ZC_EFORMAT, "'data_type' must be a string or an object with a name");
    }
    dt->endian = native_little() ? '<' : '>';
    for (size_t i = 0; i < NTYPES; i++) {
        if (!strcmp(TYPES[i].v3, name)) {
            dt->type = TYPES[i].type;
            dt->size = TYPES[i].size;
            return 0;
        }
    }
    if (name[0] == 'r' && isdigit((unsigned char)name[1])) {
        char *end;
        long bits = strtol(name + 1, &end, 10);
        if (*end || bits <= 0 || bits % 8 || bits > (1L << 20))
            return zc__err(ZC_EFORMAT, "malformed raw data type '%s'", name);
        dt->type = ZC_RAW;
        dt->size = (size_t)bits / 8;
        dt->endian = '|';
        return 0;
    }
    /* zarr-python 3 extension names for fixed-length strings */
    json_t *lb = cfg ? json_object_get(cfg, "length_bytes") : NULL;
    if (!strcmp(name, "fixed_length_utf32") || !strcmp(name, "null_terminated_bytes") ||
        !strcmp(name, "fixed_length_bytes")) {
        if (!json_is_integer(lb) || json_integer_value(lb) <= 0)
            return zc__err(ZC_EFORMAT, "data type '%s' needs configuration.length_bytes", name);
        dt->type = !strcmp(name, "fixed_length_utf32") ? ZC_UNICODE : ZC_BYTES;
        dt->size = (size_t)json_integer_value(lb);
        if (dt->type == ZC_UNICODE && dt->size % 4)
            return zc__err(ZC_EFORMAT, "fixed_length_utf32 length_bytes %zu is not a multiple of 4", dt->size);
        if (dt->type == ZC_BYTES) dt->endian = '|';
        return 0;
    }
    if (!strcmp(name, "string") || !strcmp(name, "variable_length_utf8") || !strcmp(name, "bytes"))
        return zc__err(ZC_EUNSUPPORTED, "data type '%s' (variable-length) is not supported", name);
    return zc__err(ZC_EUNSUPPORTED, "data type '%s' is not supported", name);
}

json_t *dtype_to_v3(const dtype_t *dt)
{
    char buf[32];
    switch (dt->type) {
    case ZC_RAW:
        snprintf(buf, sizeof buf, "r%zu", dt->size * 8);
        return json_string(buf);
    case ZC_UNICODE:
    case ZC_BYTES:
        return json_pack("{s:s, s:{s:I}}", "name",
                         dt->type == ZC_UNICODE ? "fixed_length_utf32" : "null_terminated_bytes",
                         "configuration", "length_bytes", (json_int_t)dt->size);
    default: return json_string(zc_dtype_name(dt->type));
    }
}

/* ---- half precision ---- */

float dtype_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: renormalize */
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) { man <<= 1; exp--; }
            man &= 0x3ff;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t dtype_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;
    return (uint16_t)half;
}

/* ---- fill values ---- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_decode(const char *s, unsigned char *out, size_t cap, size_t *n)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(B64, *s);
        if (!p || !*s) return -1;
        acc = (acc << 6) | (uint32_t)(p - B64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (k >= cap) return -1;
            out[k++] = (unsigned char)(acc >> bits);
        }
    }
    *n = k;
    return 0;
}

static json_t *b64_encode(const unsigned char *d, size_t n)
{
    char *s = malloc(4 * (n / 3 + 1) + 1);
    if (!s) return NULL;
    size_t k = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        s[k++] = B64[v >> 18]; s[k++] = B64[(v >> 12) & 63];
        s[k++] = B64[(v >> 6) & 63]; s[k++] = B64[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0);
        s[k++] = B64[v >> 18]; s[k++] = B64[(v >> 12) & 63];
        s[k++] = i + 1 < n ? B64[(v >> 6) & 63] : '=';
        s[k++] = '=';
    }
    s[k] = 0;
    json_t *j = json_string(s);
    free(s);
    return j;
}

/* A float fill value: number, "NaN", "Infinity", "-Infinity", or "0x..." raw bits. */
static int parse_float(const json_t *v, size_t size, double *d, uint64_t *raw, bool *is_raw)
{
    *is_raw = false;
    if (json_is_number(v)) {
        *d = json_number_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "NaN")) { *d = NAN; return 0; }
        if (!strcmp(s, "Infinity")) { *d = INFINITY; return 0; }
        if (!strcmp(s, "-Infinity")) { *d = -INFINITY; return 0; }
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && strlen(s + 2) == size * 2) {
            char *end;
            *raw = strtoull(s + 2, &end, 16);
            if (!*end) { *is_raw = true; return 0; }
        }
    }
    return zc__err(ZC_EFORMAT, "fill_value is not a valid float");
}

static void store_float(zc_dtype t, double d, uint64_t raw, bool is_raw, unsigned char *out)
{
    if (t == ZC_FLOAT16) {
        uint16_t h = is_raw ? (uint16_t)raw : dtype_float_to_half((float)d);
        memcpy(out, &h, 2);
    } else if (t == ZC_FLOAT32) {
        uint32_t r = (uint32_t)raw;
        float f = (float)d;
        if (is_raw) memcpy(out, &r, 4); else memcpy(out, &f, 4);
    } else {
        if (is_raw) memcpy(out, &raw, 8); else memcpy(out, &d, 8);
    }
}

int dtype_fill_parse(const dtype_t *dt, const json_t *v, int zarr_format, void *out, bool *is_null)
{
    unsigned char *o = out;
    memset(o, 0, dt->size);
    *is_null = false;
    if (!v || json_is_null(v)) {
        if (zarr_format == 3) return zc__err(ZC_EFORMAT, "fill_value must not be null in Zarr v3");
        *is_null = true;
        return 0;
    }
    zc_dtype t = dt->type;
    if (t == ZC_BOOL) {
        if (json_is_boolean(v)) o[0] = json_is_true(v);
        else if (json_is_integer(v)) o[0] = json_integer_value(v) != 0;
        else return zc__err(ZC_EFORMAT, "fill_value for bool must be true or false");
        return 0;
    }
    if (dtype_is_integer(t)) {
        int64_t iv;
        const char *big = json_string_value(v);
        if (t == ZC_UINT64 && big && !strncmp(big, ZC_JSON_U64_PREFIX, strlen(ZC_JSON_U64_PREFIX))) {
            char *end;
            errno = 0;
            uint64_t u = strtoull(big + strlen(ZC_JSON_U64_PREFIX), &end, 10);
            if (errno || *end) return zc__err(ZC_EFORMAT, "fill_value %s out of range for uint64", big + strlen(ZC_JSON_U64_PREFIX));
            memcpy(o, &u, 8);
            return 0;
        }
        if (json_is_integer(v)) {
            iv = json_integer_value(v);
        } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                   fabs(json_real_value(v)) < 9.2e18) {
            iv = (int64_t)json_real_value(v);
        } else {
            return zc__err(ZC_EFORMAT, "fill_value for %s must be an integer", zc_dtype_name(t));
        }
        /* range check for the declared type */
        int bits = (int)dt->size * 8;
        if (dtype_is_signed(t)) {
            if (bits < 64 && (iv < -(INT64_C(1) << (bits - 1)) || iv >= (INT64_C(1) << (bits - 1))))
                return zc__err(ZC_EFORMAT, "fill_value %lld out of range for %s", (long long)iv, zc_dtype_name(t));
        } else {
            if (iv < 0 || (bits < 64 && iv >= (INT64_C(1) << bits)))
                return zc__err(ZC_EFORMAT, "fill_value %lld out of range for %s", (long long)iv, zc_dtype_name(t));
        }
        switch (dt->size) {
        case 1: { int8_t x = (int8_t)iv; memcpy(o, &x, 1); break; }
        case 2: { int16_t x = (int16_t)iv; memcpy(o, &x, 2); break; }
        case 4: { int32_t x = (int32_t)iv; memcpy(o, &x, 4); break; }
        default: memcpy(o, &iv, 8); break;
        }
        return 0;
    }
    if (dtype_is_float(t)) {
        double d = 0;
        uint64_t raw = 0;
        bool is_raw;
        ZC_TRY(parse_float(v, dt->size, &d, &raw, &is_raw));
        store_float(t, d, raw, is_raw, o);
        return 0;
    }
    if (dtype_is_complex(t)) {
        size_t half = dt->size / 2;
        zc_dtype part = t == ZC_COMPLEX64 ? ZC_FLOAT32 : ZC_FLOAT64;
        if (json_is_array(v) && json_array_size(v) == 2) {
            for (size_t k = 0; k < 2; k++) {
                double d = 0;
                uint64_t raw = 0;
                bool is_raw;
                ZC_TRY(parse_float(json_array_get(v, k), half, &d, &raw, &is_raw));
                store_float(part, d, raw, is_raw, o + k * half);
            }
            return 0;
        }
        double d = 0;
        uint64_t raw = 0;
        bool is_raw;
        if (parse_float(v, half, &d, &raw, &is_raw) == 0) { /* a real number: imaginary 0 */
            store_float(part, d, raw, is_raw, o);
            return 0;
        }
        return zc__err(ZC_EFORMAT, "fill_value for %s must be [real, imag]", zc_dtype_name(t));
    }
    if (t == ZC_BYTES || t == ZC_RAW) {
        if (json_is_string(v)) {
            size_t n;
            unsigned char tmp[4096];
            const char *s = json_string_value(v);
            if (zarr_format == 3 && t == ZC_BYTES) { /* v3 extension: plain string */
                size_t len = strlen(s);
                memcpy(o, s, len < dt->size ? len : dt->size);
                return 0;
            }
            if (b64_decode(s, tmp, sizeof tmp, &n))
                return zc__err(ZC_EFORMAT, "fill_value is not valid base64");
            memcpy(o, tmp, n < dt->size ? n : dt->size);
            return 0;
        }
        if (json_is_array(v)) {
            if (json_array_size(v) != dt->size)
                return zc__err(ZC_EFORMAT, "fill_value must list %zu bytes", dt->size);
            for (size_t k = 0; k < dt->size; k++) {
                json_t *b = json_array_get(v, k);
                if (!json_is_integer(b) || json_integer_value(b) < 0 || json_integer_value(b) > 255)
                    return zc__err(ZC_EFORMAT, "fill_value byte %zu is not 0..255", k);
                o[k] = (unsigned char)json_integer_value(b);
            }
            return 0;
        }
        if (json_is_integer(v) && json_integer_value(v) == 0) return 0;
        return zc__err(ZC_EFORMAT, "fill_value for a byte string must be a string");
    }
    if (t == ZC_UNICODE) {
        if (json_is_integer(v) && json_integer_value(v) == 0) return 0;
        if (!json_is_string(v)) return zc__err(ZC_EFORMAT, "fill_value for a unicode string must be a string");
        /* UTF-8 → UCS-4 */
        const unsigned char *s = (const unsigned char *)json_string_value(v);
        size_t nchar = dt->size / 4, k = 0;
        while (*s && k < nchar) {
            uint32_t c;
            if (*s < 0x80) c = *s++;
            else if ((*s & 0xe0) == 0xc0 && s[1]) { c = (uint32_t)(*s & 0x1f) << 6 | (s[1] & 0x3f); s += 2; }
            else if ((*s & 0xf0) == 0xe0 && s[1] && s[2]) { c = (uint32_t)(*s & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f); s += 3; }
            else if (s[1] && s[2] && s[3]) { c = (uint32_t)(*s & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 | (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f); s += 4; }
            else break;
            memcpy(o + 4 * k++, &c, 4);
        }
        return 0;
    }
    return zc__err(ZC_EUNSUPPORTED, "fill_value for dtype %s", zc_dtype_name(t));
}

static json_t *float_json(double d, int zarr_format)
{
    if (isnan(d)) return json_string("NaN");
    if (isinf(d)) return json_string(d > 0 ? "Infinity" : "-Infinity");
    (void)zarr_format;
    return json_real(d);
}

static double load_float(zc_dtype t, const unsigned char *p)
{
    if (t == ZC_FLOAT16) { uint16_t h; memcpy(&h, p, 2); return dtype_half_to_float(h); }
    if (t == ZC_FLOAT32) { float f; memcpy(&f, p, 4); return f; }
    double d;
    memcpy(&d, p, 8);
    return d;
}

json_t *dtype_fill_json(const dtype_t *dt, const void *fill, bool is_null, int zarr_format)
{
    const unsigned char *p = fill;
    zc_dtype t = dt->type;
    if (is_null) return json_null();
    if (t == ZC_BOOL) return json_boolean(p[0]);
    if (dtype_is_integer(t)) {
        int64_t iv = 0;
        switch (t) {
        case ZC_INT8: { int8_t x; memcpy(&x, p, 1); iv = x; break; }
        case ZC_INT16: { int16_t x; memcpy(&x, p, 2); iv = x; break; }
        case ZC_INT32: { int32_t x; memcpy(&x, p, 4); iv = x; break; }
        case ZC_INT64: { memcpy(&iv, p, 8); break; }
        case ZC_UINT8: iv = p[0]; break;
        case ZC_UINT16: { uint16_t x; memcpy(&x, p, 2); iv = x; break; }
        case ZC_UINT32: { uint32_t x; memcpy(&x, p, 4); iv = x; break; }
        default: {
            uint64_t x;
            memcpy(&x, p, 8);
            if (x > (uint64_t)INT64_MAX) {
                char buf[40];
                snprintf(buf, sizeof buf, ZC_JSON_U64_PREFIX "%llu", (unsigned long long)x);
                return json_string(buf);
            }
            iv = (int64_t)x;
            break;
        }
        }
        return json_integer(iv);
    }
    if (dtype_is_float(t)) return float_json(load_float(t, p), zarr_format);
    if (dtype_is_complex(t)) {
        zc_dtype part = t == ZC_COMPLEX64 ? ZC_FLOAT32 : ZC_FLOAT64;
        size_t half = dt->size / 2;
        return json_pack("[o,o]", float_json(load_float(part, p), zarr_format),
                         float_json(load_float(part, p + half), zarr_format));
    }
    if (t == ZC_UNICODE) {
        char buf[4096];
        size_t k = 0;
        for (size_t i = 0; i < dt->size / 4 && k + 4 < sizeof buf; i++) {
            uint32_t c;
            memcpy(&c, p + 4 * i, 4);
            if (!c) break;
            if (c < 0x80) buf[k++] = (char)c;
            else if (c < 0x800) { buf[k++] = (char)(0xc0 | c >> 6); buf[k++] = (char)(0x80 | (c & 0x3f)); }
            else if (c < 0x10000) { buf[k++] = (char)(0xe0 | c >> 12); buf[k++] = (char)(0x80 | ((c >> 6) & 0x3f)); buf[k++] = (char)(0x80 | (c & 0x3f)); }
            else { buf[k++] = (char)(0xf0 | c >> 18); buf[k++] = (char)(0x80 | ((c >> 12) & 0x3f)); buf[k++] = (char)(0x80 | ((c >> 6) & 0x3f)); buf[k++] = (char)(0x80 | (c & 0x3f)); }
        }
        buf[k] = 0;
        return json_string(buf);
    }
    if ((t == ZC_RAW || t == ZC_BYTES) && zarr_format == 3) { /* v3: the bytes as a list of integers */
        json_t *a = json_array();
        for (size_t i = 0; i < dt->size; i++) json_array_append_new(a, json_integer(p[i]));
        return a;
    }
    return b64_encode(p, dt->size);
}

int zc_dtype_parse(const char *name, zc_dtype *dtype, size_t *itemsize)
{
    dtype_t dt;
    zc__err_clear();
    if (!name || !dtype) return zc__err(ZC_EINVAL, "zc_dtype_parse: NULL argument");
    json_t *s = json_string(name);
    int rc = s ? dtype_from_v3(s, &dt) : ZC_ENOMEM;
    json_decref(s);
    if (rc < 0) {
        rc = dtype_from_v2(name, &dt);
        if (rc < 0 && rc != ZC_EUNSUPPORTED)
            return zc__err(ZC_EINVAL, "unknown dtype '%s' (use e.g. float32, int16, <f8, S7, U13)", name);
    }
    ZC_TRY(rc);
    *dtype = dt.type;
    if (itemsize) *itemsize = dt.size;
    return 0;
}
