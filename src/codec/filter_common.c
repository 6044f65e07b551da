/* codec/filter_common.c — config reading, half rounding and NumPy 1.x type
 * promotion for the numcodecs filters (see filter_common.h). */
#include "codec/filter_common.h"

#include <stdio.h>

#include "core/checked.h"
#include "core/error.h"

/* ---- config ---- */

int codec_filter_dtype(const json_t *cfg, const char *who, const char *key, bool required,
                       dtype_t *out, bool *present)
{
    const json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    if (present) *present = false;
    if (!v || json_is_null(v)) {
        if (required) return zc__err(ZC_EFORMAT, "%s: missing '%s'", who, key);
        return 0;
    }
    int rc;
    if (json_is_object(v)) {
        rc = dtype_from_v3(v, out);
    } else if (json_is_string(v)) {
        /* v3 names first ("int32"), then NumPy typestrs ("<i4", "f8") */
        rc = dtype_from_v3(v, out);
        if (rc < 0) rc = dtype_from_v2(json_string_value(v), out);
    } else {
        return zc__err(ZC_EFORMAT, "%s: '%s' must be a dtype string such as \"<i4\"", who, key);
    }
    if (rc < 0) return zc__err_wrap(rc, "%s: '%s'", who, key);
    if (present) *present = true;
    return 0;
}

int codec_filter_number(const json_t *cfg, const char *who, const char *key, num_scalar *out)
{
    const json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    if (!v || json_is_null(v)) return zc__err(ZC_EFORMAT, "%s: missing '%s'", who, key);
    if (json_is_integer(v)) {
        out->is_int = true;
        out->i = json_integer_value(v);
        out->d = (double)out->i;
    } else if (json_is_real(v)) {
        out->is_int = false;
        out->d = json_real_value(v);
        out->i = 0;
    } else {
        return zc__err(ZC_EFORMAT, "%s: '%s' must be a number", who, key);
    }
    return 0;
}

int codec_filter_int(const json_t *cfg, const char *who, const char *key, bool required,
                     long long def, long long lo, long long hi, long long *out)
{
    const json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    if (!v || json_is_null(v)) {
        if (required) return zc__err(ZC_EFORMAT, "%s: missing '%s'", who, key);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return zc__err(ZC_EFORMAT, "%s: '%s' must be an integer in [%lld, %lld]", who, key, lo,
                       hi);
    *out = json_integer_value(v);
    return 0;
}

json_t *codec_filter_json(const char *v3_name, const char *v2_id, int zarr_format, json_t *conf)
{
    if (!conf) return NULL;
    json_t *o = json_object();
    if (!o) goto fail;
    if (zarr_format == 2) {
        if (json_object_set_new(o, "id", json_string(v2_id)) || json_object_update(o, conf))
            goto fail;
        json_decref(conf);
    } else {
        if (json_object_set_new(o, "name", json_string(v3_name)) ||
            json_object_set_new(o, "configuration", conf)) {
            conf = NULL; /* set_new stole it */
            goto fail;
        }
    }
    return o;
fail:
    json_decref(o);
    json_decref(conf);
    return NULL;
}

json_t *codec_filter_json_dtype(json_t *conf, const char *key, const dtype_t *dt)
{
    char buf[32];
    if (!conf) return NULL;
    dtype_to_v2(dt, buf, sizeof buf);
    if (json_object_set_new(conf, key, json_string(buf))) {
        json_decref(conf);
        return NULL;
    }
    return conf;
}

int codec_filter_resize(const char *who, size_t n, size_t in_size, size_t out_size, size_t *out)
{
    if (n % in_size)
        return zc__err(ZC_ECORRUPT, "%s: %zu bytes is not a whole number of %zu-byte elements",
                       who, n, in_size);
    if (ck_mul_sz(n / in_size, out_size, out))
        return zc__err(ZC_EOVERFLOW, "%s: decoded size of %zu elements overflows", who,
                       n / in_size);
    return 0;
}

int codec_filter_encoded_ctx(const char *who, const dtype_t *from, const dtype_t *to,
                             const codec_ctx *in, codec_ctx *out)
{
    *out = *in;
    if (in->nbytes % from->size) {
        char ts[32];
        dtype_to_v2(from, ts, sizeof ts);
        return zc__err(ZC_EFORMAT, "%s: a chunk of %zu bytes is not a whole number of '%s' elements",
                       who, in->nbytes, ts);
    }
    if (ck_mul_sz(in->nbytes / from->size, to->size, &out->nbytes))
        return zc__err(ZC_EOVERFLOW, "%s: encoded chunk size overflows", who);
    out->dtype = *to;
    return 0;
}

/* ---- element formats ---- */

int codec_num_fmt(const dtype_t *dt, const char *who, const char *key, bool allow_bool,
                  num_fmt *f)
{
    f->dt = *dt;
    f->size = (unsigned)dt->size;
    f->swap = dtype_needs_swap(dt);
    if (dt->type == ZC_BOOL && allow_bool) f->kind = NUM_BOOL;
    else if (dtype_is_signed(dt->type)) f->kind = NUM_INT;
    else if (dtype_is_integer(dt->type)) f->kind = NUM_UINT;
    else if (dtype_is_float(dt->type)) f->kind = NUM_FLOAT;
    else {
        char ts[32];
        dtype_to_v2(dt, ts, sizeof ts);
        return zc__err(ZC_EUNSUPPORTED, "%s: '%s' dtype '%s' is not supported (%s only)", who,
                       key, ts, allow_bool ? "bool, integers and floats" : "integers and floats");
    }
    return 0;
}

static const zc_dtype INTS[] = {ZC_INT8, ZC_INT16, ZC_DTYPE_INVALID, ZC_INT32, ZC_DTYPE_INVALID,
                                ZC_DTYPE_INVALID, ZC_DTYPE_INVALID, ZC_INT64};
static const zc_dtype UINTS[] = {ZC_UINT8, ZC_UINT16, ZC_DTYPE_INVALID, ZC_UINT32,
                                 ZC_DTYPE_INVALID, ZC_DTYPE_INVALID, ZC_DTYPE_INVALID, ZC_UINT64};

num_fmt num_fmt_of(num_kind kind, unsigned size)
{
    num_fmt f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.size = size;
    f.swap = false;
    f.dt.size = size;
    f.dt.endian = size == 1 ? '|' : '<';
    switch (kind) {
    case NUM_BOOL: f.dt.type = ZC_BOOL; break;
    case NUM_INT: f.dt.type = INTS[size - 1]; break;
    case NUM_UINT: f.dt.type = UINTS[size - 1]; break;
    default: f.dt.type = size == 2 ? ZC_FLOAT16 : size == 4 ? ZC_FLOAT32 : ZC_FLOAT64; break;
    }
    if (!dtype_needs_swap(&f.dt)) return f;
    f.dt.endian = '>'; /* big-endian host: native is '>' */
    return f;
}

uint16_t codec_double_to_half(double d)
{
    uint64_t x;
    memcpy(&x, &d, 8);
    uint32_t sign = (uint32_t)(x >> 48) & 0x8000;
    int exp = (int)((x >> 52) & 0x7ff);
    uint64_t man = x & ((UINT64_C(1) << 52) - 1);
    if (exp == 0x7ff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int e = exp - 1023 + 15; /* half's biased exponent */
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) { /* half subnormal (or zero) */
        if (e < -10) return (uint16_t)sign;
        man |= UINT64_C(1) << 52;
        unsigned shift = (unsigned)(43 - e);
        uint64_t h = man >> shift, rem = man & ((UINT64_C(1) << shift) - 1);
        uint64_t mid = UINT64_C(1) << (shift - 1);
        if (rem > mid || (rem == mid && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | (uint32_t)e << 10 | (uint32_t)(man >> 42);
    uint64_t rem = man & ((UINT64_C(1) << 42) - 1), mid = UINT64_C(1) << 41;
    if (rem > mid || (rem == mid && (h & 1))) h++; /* a carry rounds up into the exponent */
    return (uint16_t)h;
}

/* ---- NumPy 1.x promotion ---- */

num_fmt num_promote(const num_fmt *a, const num_fmt *b)
{
    if (a->kind == b->kind) return num_fmt_of(a->kind, a->size > b->size ? a->size : b->size);
    if (a->kind == NUM_BOOL) return num_fmt_of(b->kind, b->size);
    if (b->kind == NUM_BOOL) return num_fmt_of(a->kind, a->size);
    if (a->kind == NUM_FLOAT || b->kind == NUM_FLOAT) {
        const num_fmt *f = a->kind == NUM_FLOAT ? a : b, *i = a->kind == NUM_FLOAT ? b : a;
        unsigned need = i->size == 1 ? 2 : i->size == 2 ? 4 : 8; /* holds every integer */
        return num_fmt_of(NUM_FLOAT, f->size > need ? f->size : need);
    }
    /* signed with unsigned */
    const num_fmt *s = a->kind == NUM_INT ? a : b, *u = a->kind == NUM_INT ? b : a;
    if (u->size < s->size) return num_fmt_of(NUM_INT, s->size);
    if (u->size < 8) return num_fmt_of(NUM_INT, 2 * u->size);
    return num_fmt_of(NUM_FLOAT, 8);
}

/* np.min_scalar_type of a Python number; *small_unsigned: a non-negative int
 * that also fits the signed type of the same size. */
static num_fmt min_scalar_type(const num_scalar *s, bool *small_unsigned)
{
    *small_unsigned = false;
    if (!s->is_int) {
        double a = fabs(s->d);
        if (a < 65000.0 || !isfinite(a)) return num_fmt_of(NUM_FLOAT, 2);
        if (a < 3.4e38) return num_fmt_of(NUM_FLOAT, 4);
        return num_fmt_of(NUM_FLOAT, 8);
    }
    int64_t v = s->i;
    if (v >= 0) {
        unsigned size = v < 256 ? 1 : v < 65536 ? 2 : v < INT64_C(4294967296) ? 4 : 8;
        *small_unsigned = size == 8 || (uint64_t)v < UINT64_C(1) << (8 * size - 1);
        return num_fmt_of(NUM_UINT, size);
    }
    unsigned size = v >= -128 ? 1 : v >= -32768 ? 2 : v >= INT32_MIN ? 4 : 8;
    return num_fmt_of(NUM_INT, size);
}

static int category(num_kind k) { return k == NUM_BOOL ? 0 : k == NUM_FLOAT ? 2 : 1; }

num_fmt num_result_type(const num_fmt *arr, const num_scalar *s)
{
    num_fmt st;
    if (category(arr->kind) >= (s->is_int ? 1 : 2)) {
        bool small;
        st = min_scalar_type(s, &small);
        if (small && st.kind == NUM_UINT && arr->kind == NUM_INT) st = num_fmt_of(NUM_INT, st.size);
    } else {
        st = s->is_int ? num_fmt_of(NUM_INT, 8) : num_fmt_of(NUM_FLOAT, 8);
    }
    num_fmt a = num_fmt_of(arr->kind, arr->size);
    return num_promote(&a, &st);
}

num_val num_scalar_as(const num_scalar *s, const num_fmt *t)
{
    num_val v;
    if (s->is_int) {
        v.i = s->i;
        return num_cast(NUM_INT, v, t);
    }
    v.d = s->d;
    return num_cast(NUM_FLOAT, v, t);
}
