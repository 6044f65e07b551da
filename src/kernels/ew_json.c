/* kernels/ew_json.c — elementwise programs to and from JSON.
 *
 * A program is written as the list of build calls that made it, so parsing
 * replays them through the same checks (a hand-edited or hostile plan cannot
 * make a program the builder would refuse):
 *
 *   {"ew": 1,
 *    "nodes": [["input", 0, "float64"],          ew_input(p, 0, ZC_FLOAT64)
 *              ["int", 2], ["float", 0.5],        weak scalars (ew_const_i64/_f64)
 *              ["bool", true], ["complex", 1, -2],
 *              ["typed", "uint64", "18446744073709551615"],
 *              ["multiply", 0, 0], ["sqrt", 6],   ew_binary / ew_unary by name
 *              ["where", 2, 0, 1], ["astype", 7, "int8"]],
 *    "output": 8}
 *
 * Node arguments are earlier node numbers. Floats that JSON cannot hold are
 * strings "nan", "inf", "-inf"; integers beyond int64 are decimal strings.
 * Finite doubles are printed with 17 significant digits, so they round-trip.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/ew_internal.h"

static json_t *num_json(double x)
{
    if (isnan(x)) return json_string("nan");
    if (isinf(x)) return json_string(x > 0 ? "inf" : "-inf");
    return json_real(x);
}

static int json_num(const json_t *j, double *x)
{
    if (json_is_number(j)) {
        *x = json_number_value(j);
        return 0;
    }
    const char *s = json_string_value(j);
    if (!s) return -1;
    if (!strcmp(s, "nan")) *x = NAN;
    else if (!strcmp(s, "-nan")) *x = -NAN;
    else if (!strcmp(s, "inf")) *x = INFINITY;
    else if (!strcmp(s, "-inf")) *x = -INFINITY;
    else return -1;
    return 0;
}

static json_t *typed_json(zc_dtype t, const unsigned char *raw)
{
    switch (t) {
    case ZC_BOOL: return json_boolean(raw[0] != 0);
    case ZC_INT8: { int8_t v; memcpy(&v, raw, 1); return json_integer(v); }
    case ZC_INT16: { int16_t v; memcpy(&v, raw, 2); return json_integer(v); }
    case ZC_INT32: { int32_t v; memcpy(&v, raw, 4); return json_integer(v); }
    case ZC_INT64: { int64_t v; memcpy(&v, raw, 8); return json_integer(v); }
    case ZC_UINT8: return json_integer(raw[0]);
    case ZC_UINT16: { uint16_t v; memcpy(&v, raw, 2); return json_integer(v); }
    case ZC_UINT32: { uint32_t v; memcpy(&v, raw, 4); return json_integer(v); }
    case ZC_UINT64: {
        uint64_t v;
        memcpy(&v, raw, 8);
        if (v <= INT64_MAX) return json_integer((json_int_t)v);
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
        return json_string(buf);
    }
    case ZC_FLOAT16: { uint16_t h; memcpy(&h, raw, 2); return num_json(ew_h2f(h)); }
    case ZC_FLOAT32: { float v; memcpy(&v, raw, 4); return num_json(v); }
    case ZC_FLOAT64: { double v; memcpy(&v, raw, 8); return num_json(v); }
    case ZC_COMPLEX64: {
        float v[2];
        memcpy(v, raw, 8);
        return json_pack("[oo]", num_json(v[0]), num_json(v[1]));
    }
    case ZC_COMPLEX128: {
        double v[2];
        memcpy(v, raw, 16);
        return json_pack("[oo]", num_json(v[0]), num_json(v[1]));
    }
    default: return NULL;
    }
}

/* Parse a typed constant's JSON value into raw (memory representation). */
static int json_typed(zc_dtype t, const json_t *j, unsigned char *raw)
{
    memset(raw, 0, 16);
    if (t == ZC_BOOL) {
        if (!json_is_boolean(j)) return -1;
        raw[0] = json_is_true(j);
        return 0;
    }
    if (t >= ZC_INT8 && t <= ZC_UINT64) {
        int64_t lo, hi;
        uint64_t u = 0;
        int64_t v = 0;
        if (json_is_integer(j)) {
            v = json_integer_value(j);
            u = (uint64_t)v;
        } else if (t == ZC_UINT64 && json_is_string(j)) {
            const char *s = json_string_value(j);
            char *end;
            errno = 0;
            if (!*s || *s == '-') return -1;
            unsigned long long x = strtoull(s, &end, 10);
            if (*end || errno) return -1;
            u = x;
            memcpy(raw, &u, 8);
            return 0;
        } else {
            return -1;
        }
        switch (t) {
        case ZC_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
        case ZC_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
        case ZC_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
        case ZC_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
        case ZC_UINT8: lo = 0; hi = UINT8_MAX; break;
        case ZC_UINT16: lo = 0; hi = UINT16_MAX; break;
        case ZC_UINT32: lo = 0; hi = UINT32_MAX; break;
        default: lo = 0; hi = INT64_MAX; break;
        }
        if (v < lo || v > hi) return -1;
        int8_t i8 = (int8_t)v; int16_t i16 = (int16_t)v; int32_t i32 = (int32_t)v;
        switch (ew_dtype_size(t)) {
        case 1: memcpy(raw, &i8, 1); break;
        case 2: memcpy(raw, &i16, 2); break;
        case 4: memcpy(raw, &i32, 4); break;
        default: memcpy(raw, &u, 8); break;
        }
        return 0;
    }
    if (t == ZC_COMPLEX64 || t == ZC_COMPLEX128) {
        double re, im;
        if (!json_is_array(j) || json_array_size(j) != 2 || json_num(json_array_get(j, 0), &re) ||
            json_num(json_array_get(j, 1), &im))
            return -1;
        if (t == ZC_COMPLEX64) {
            float v[2] = {(float)re, (float)im};
            memcpy(raw, v, 8);
        } else {
            double v[2] = {re, im};
            memcpy(raw, v, 16);
        }
        return 0;
    }
    double x;
    if (json_num(j, &x)) return -1;
    if (t == ZC_FLOAT16) {
        uint16_t h = ew_d2h(x);
        memcpy(raw, &h, 2);
    } else if (t == ZC_FLOAT32) {
        float f = (float)x;
        memcpy(raw, &f, 4);
    } else {
        memcpy(raw, &x, 8);
    }
    return 0;
}

static json_t *node_json(const ew_node *n)
{
    switch (n->what) {
    case N_INPUT: return json_pack("[sis]", "input", n->arg[0], zc_dtype_name(n->dtype));
    case N_INT: return json_pack("[sI]", "int", (json_int_t)n->i);
    case N_FLOAT: return json_pack("[so]", "float", num_json(n->re));
    case N_BOOL: return json_pack("[sb]", "bool", (int)n->i);
    case N_COMPLEX: return json_pack("[soo]", "complex", num_json(n->re), num_json(n->im));
    case N_TYPED: return json_pack("[sso]", "typed", zc_dtype_name(n->dtype), typed_json(n->dtype, n->raw));
    case N_UNARY: return json_pack("[si]", ew_op_name((ew_op)n->op), n->arg[0]);
    case N_BINARY: return json_pack("[sii]", ew_op_name((ew_op)n->op), n->arg[0], n->arg[1]);
    case N_WHERE: return json_pack("[siii]", "where", n->arg[0], n->arg[1], n->arg[2]);
    case N_ASTYPE: return json_pack("[sis]", "astype", n->arg[0], zc_dtype_name(n->dtype));
    default: return NULL;
    }
}

int ew_program_to_json(const ew_program *p, char **json)
{
    if (!p || !json) return zc__err(ZC_EINVAL, "ew_program_to_json: NULL argument");
    *json = NULL;
    json_t *nodes = json_array(), *root = NULL;
    if (!nodes) return zc__err(ZC_ENOMEM, "ew_program_to_json: out of memory");
    for (int i = 0; i < p->nnodes; i++) {
        json_t *n = node_json(&p->nodes[i]);
        if (!n || json_array_append_new(nodes, n)) {
            json_decref(nodes);
            return zc__err(ZC_ENOMEM, "ew_program_to_json: out of memory at node %d", i);
        }
    }
    root = p->out_node >= 0 ? json_pack("{sisosi}", "ew", 1, "nodes", nodes, "output", p->out_node)
                            : json_pack("{siso}", "ew", 1, "nodes", nodes);
    if (!root) return zc__err(ZC_ENOMEM, "ew_program_to_json: out of memory");
    char *s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (!s) return zc__err(ZC_ENOMEM, "ew_program_to_json: out of memory");
    *json = zc__strdup(s);
    free(s);
    return *json ? 0 : ZC_ENOMEM;
}

static int node_arg(const json_t *a, size_t i, int limit, int *out)
{
    const json_t *j = json_array_get(a, i);
    if (!json_is_integer(j)) return -1;
    json_int_t v = json_integer_value(j);
    if (v < 0 || v >= limit) return -1;
    *out = (int)v;
    return 0;
}

static int parse_dtype(const json_t *j, zc_dtype *t)
{
    const char *s = json_string_value(j);
    size_t size;
    if (!s || zc_dtype_parse(s, t, &size) != 0) return -1;
    return 0;
}

/* Replay node i's entry into p; returns the new register or a negative code. */
static int replay(ew_program *p, const json_t *e, int i)
{
    const char *what = json_string_value(json_array_get(e, 0));
    size_t len = json_array_size(e);
    int a, b, c, reg;
    zc_dtype t;
    double re, im;
    if (!what) return zc__err(ZC_EFORMAT, "ew program JSON: node %d is not [\"name\", ...]", i);
    if (!strcmp(what, "input")) {
        if (len != 3 || !json_is_integer(json_array_get(e, 1)) || parse_dtype(json_array_get(e, 2), &t)) goto bad;
        json_int_t k = json_integer_value(json_array_get(e, 1));
        if (k < 0 || k >= EW_MAX_INPUTS) goto bad;
        return ew_input(p, (int)k, t);
    }
    if (!strcmp(what, "int")) {
        if (len != 2 || !json_is_integer(json_array_get(e, 1))) goto bad;
        return ew_const_i64(p, json_integer_value(json_array_get(e, 1)));
    }
    if (!strcmp(what, "float")) {
        if (len != 2 || json_num(json_array_get(e, 1), &re)) goto bad;
        return ew_const_f64(p, re);
    }
    if (!strcmp(what, "bool")) {
        if (len != 2 || !json_is_boolean(json_array_get(e, 1))) goto bad;
        return ew_const_bool(p, json_is_true(json_array_get(e, 1)));
    }
    if (!strcmp(what, "complex")) {
        if (len != 3 || json_num(json_array_get(e, 1), &re) || json_num(json_array_get(e, 2), &im)) goto bad;
        return ew_const_c128(p, re, im);
    }
    if (!strcmp(what, "typed")) {
        unsigned char raw[16];
        if (len != 3 || parse_dtype(json_array_get(e, 1), &t) || !ew_dtype_ok(t) ||
            json_typed(t, json_array_get(e, 2), raw))
            goto bad;
        return ew_const_typed(p, t, raw);
    }
    if (!strcmp(what, "where")) {
        if (len != 4 || node_arg(e, 1, i, &c) || node_arg(e, 2, i, &a) || node_arg(e, 3, i, &b)) goto bad;
        ZC_TRY(ew_where(p, c, a, b, &reg));
        return reg;
    }
    if (!strcmp(what, "astype")) {
        if (len != 3 || node_arg(e, 1, i, &a) || parse_dtype(json_array_get(e, 2), &t)) goto bad;
        ZC_TRY(ew_astype(p, a, t, &reg));
        return reg;
    }
    int op = ew_op_from_name(what);
    if (op < 0 || op > EW_BINARY_END_)
        return zc__err(ZC_EINVAL, "ew program JSON: node %d: unknown function '%s'", i, what);
    if (op < EW_UNARY_END_) {
        if (len != 2 || node_arg(e, 1, i, &a)) goto bad;
        ZC_TRY(ew_unary(p, (ew_op)op, a, &reg));
        return reg;
    }
    if (len != 3 || node_arg(e, 1, i, &a) || node_arg(e, 2, i, &b)) goto bad;
    ZC_TRY(ew_binary(p, (ew_op)op, a, b, &reg));
    return reg;
bad:
    return zc__err(ZC_EFORMAT, "ew program JSON: node %d ('%s') has bad arguments (node arguments must be earlier "
                   "nodes)", i, what);
}

int ew_program_from_json(const char *json, ew_program **out)
{
    if (!json || !out) return zc__err(ZC_EINVAL, "ew_program_from_json: NULL argument");
    *out = NULL;
    json_error_t err;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &err);
    if (!root) return zc__err(ZC_EFORMAT, "ew program JSON: %s at line %d column %d", err.text, err.line, err.column);
    const json_t *ver = json_object_get(root, "ew"), *nodes = json_object_get(root, "nodes");
    const json_t *outj = json_object_get(root, "output");
    int rc = 0;
    ew_program *p = NULL;
    if (!json_is_integer(ver) || json_integer_value(ver) != 1 || !json_is_array(nodes)) {
        rc = zc__err(ZC_EFORMAT, "ew program JSON: expected {\"ew\": 1, \"nodes\": [...]}");
        goto done;
    }
    if (json_array_size(nodes) > EW_MAX_NODES) {
        rc = zc__err(ZC_EFORMAT, "ew program JSON: %zu nodes (at most %d)", json_array_size(nodes), EW_MAX_NODES);
        goto done;
    }
    if ((rc = ew_program_create(&p))) goto done;
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const json_t *e = json_array_get(nodes, i);
        if (!json_is_array(e)) {
            rc = zc__err(ZC_EFORMAT, "ew program JSON: node %zu is not an array", i);
            goto done;
        }
        int r = replay(p, e, (int)i);
        if (r < 0) {
            rc = r;
            if (rc != ZC_EFORMAT) zc__err_wrap(rc, "ew program JSON: node %zu", i);
            goto done;
        }
        if (r != (int)i) {
            rc = zc__err(ZC_EINTERNAL, "ew program JSON: node %zu became register %d", i, r);
            goto done;
        }
    }
    if (outj) {
        json_int_t o = json_is_integer(outj) ? json_integer_value(outj) : -1;
        if (o < 0 || o >= p->nnodes) {
            rc = zc__err(ZC_EFORMAT, "ew program JSON: output is not a node number");
            goto done;
        }
        if ((rc = ew_set_output(p, (int)o))) goto done;
    }
done:
    json_decref(root);
    if (rc) {
        ew_program_free(p);
        return rc;
    }
    *out = p;
    return 0;
}
