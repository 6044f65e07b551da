/* kernels/elementwise.c — fused elementwise programs: building and evaluation.
 *
 * Building. Every call (ew_input, ew_const_*, ew_unary, ...) is recorded as a
 * node (the caller's register number is the node id) and lowered at once into
 * SSA values: the operands are promoted (weak scalars take the other
 * operand's dtype first), explicit cast instructions convert them to the
 * dtype the function computes in, and the instruction is added with its
 * kernel. Instructions whose operands are all constants are evaluated right
 * away (constant folding), so a constant is never recomputed per tile; weak
 * scalars combined with weak scalars stay weak.
 *
 * Scheduling (ew_set_output). The values the output needs are laid out in
 * order as steps; each input and instruction gets a scratch tile ("slot"),
 * reused once its last reader has run, never shared with an operand of the
 * same step. The tile length is chosen so all slots fit in EW_SCRATCH bytes.
 *
 * Evaluation (ew_eval). Per call, each input is classified: stride 0 → one
 * scalar, stride 1 in native representation → read in place, else gathered
 * (and converted: bool to 0/1, float16 to float) into its slot per tile. An
 * instruction whose operands are all scalars computes one element per tile.
 * Then per tile, each step runs its kernel once over the tile; the last step
 * writes straight into the output when its representation is native.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/ew_internal.h"

/* ------------------------------------------------------------------ creation */

int ew_program_create(ew_program **out)
{
    if (!out) return zc__err(ZC_EINVAL, "ew_program_create: out is NULL");
    *out = NULL;
    ew_program *p = zc__calloc(1, sizeof *p);
    if (!p) return ZC_ENOMEM;
    for (int k = 0; k < EW_MAX_INPUTS; k++) p->input_val[k] = -1;
    p->out_node = -1;
    *out = p;
    return 0;
}

void ew_program_free(ew_program *p)
{
    if (!p) return;
    zc__free(p->nodes);
    zc__free(p->vals);
    zc__free(p->steps);
    zc__free(p);
}

static int new_val(ew_program *p, const ew_val *v)
{
    if (p->nvals >= EW_MAX_VALS)
        return zc__err(ZC_EINVAL, "elementwise program too long: more than %d values (split the expression)",
                       EW_MAX_VALS);
    if (p->nvals == p->capvals) {
        int cap = p->capvals ? 2 * p->capvals : 16;
        ew_val *nv = zc__realloc(p->vals, (size_t)cap * sizeof *nv);
        if (!nv) return ZC_ENOMEM;
        p->vals = nv;
        p->capvals = cap;
    }
    p->vals[p->nvals] = *v;
    return p->nvals++;
}

static int new_node(ew_program *p, const ew_node *n)
{
    if (p->nnodes >= EW_MAX_NODES)
        return zc__err(ZC_EINVAL, "elementwise program too long: more than %d registers", EW_MAX_NODES);
    if (p->nnodes == p->capnodes) {
        int cap = p->capnodes ? 2 * p->capnodes : 16;
        ew_node *nn = zc__realloc(p->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return ZC_ENOMEM;
        p->nodes = nn;
        p->capnodes = cap;
    }
    p->nodes[p->nnodes] = *n;
    return p->nnodes++;
}

static int check_node(const ew_program *p, int reg, const char *fn)
{
    if (!p) return zc__err(ZC_EINVAL, "%s: no program", fn);
    if (reg < 0 || reg >= p->nnodes)
        return zc__err(ZC_EINVAL, "%s: register %d does not exist (program has %d)", fn, reg, p->nnodes);
    return 0;
}

/* ------------------------------------------------------------------ values */

static int is_int(zc_dtype t) { return t >= ZC_INT8 && t <= ZC_UINT64; }
static int is_float(zc_dtype t) { return t >= ZC_FLOAT16 && t <= ZC_FLOAT64; }
static int is_complex(zc_dtype t) { return t == ZC_COMPLEX64 || t == ZC_COMPLEX128; }

static int weak_of_dtype(zc_dtype t)
{
    return t == ZC_BOOL ? W_BOOL : is_int(t) ? W_INT : is_float(t) ? W_FLOAT : W_COMPLEX;
}

static const char *weak_name(int w)
{
    return w == W_BOOL ? "bool scalar" : w == W_INT ? "int scalar" : w == W_FLOAT ? "float scalar" : "complex scalar";
}

static const char *val_name(const ew_program *p, int v)
{
    const ew_val *x = &p->vals[v];
    return x->weak ? weak_name(x->weak) : zc_dtype_name(x->dtype);
}

static int new_const(ew_program *p, zc_dtype t, int weak, const void *cval)
{
    ew_val v = {0};
    v.kind = V_CONST;
    v.weak = (uint8_t)weak;
    v.dtype = t;
    memcpy(v.cval, cval, ew_kind_size(ew_kind_of(t)));
    return new_val(p, &v);
}

/* Ops whose result equals the operand for the given compute dtype. */
static int is_identity(int op, zc_dtype t)
{
    switch (op) {
    case EW_POSITIVE: return 1;
    case EW_CONJ: case EW_REAL: return !is_complex(t);
    case EW_CEIL: case EW_FLOOR: case EW_TRUNC: case EW_ROUND: return is_int(t);
    default: return 0;
    }
}

/* Results of these are halves already when the operands are: no rounding pass. */
static int exact_on_half(int op)
{
    switch (op) {
    case EW_NEGATIVE: case EW_ABS: case EW_COPYSIGN: case EW_MAXIMUM: case EW_MINIMUM: case EW_CEIL:
    case EW_FLOOR: case EW_TRUNC: case EW_ROUND: case EW_SIGN: case EW_NEXTAFTER:
        return 1;
    default: return 0;
    }
}

/* Add instruction `op` (or fold it when every operand is constant). */
static int emit(ew_program *p, int op, zc_dtype compute, zc_dtype result, int nops, const int *args, int *out)
{
    ew_val v = {0};
    v.kind = V_INSTR;
    v.op = (int16_t)op;
    v.dtype = result;
    v.nops = (uint8_t)nops;
    if (op == EW_CAST_) {
        v.fn = ew_kernel_cast(ew_kind_of(p->vals[args[0]].dtype),
                              result == ZC_FLOAT16 ? EK_H : ew_kind_of(result));
    } else if (op == EW_WHERE_) {
        v.fn = ew_kernel_where(ew_kind_size(ew_kind_of(result)));
    } else {
        int k = ew_kind_of(compute);
        if (compute == ZC_FLOAT16) v.fn = ew_kernel_half(op);
        if (!v.fn) v.fn = ew_kernel_basic(op, k);
        if (!v.fn) v.fn = ew_kernel_math(op, k);
        v.narrow = result == ZC_FLOAT16 && !exact_on_half(op);
    }
    if (!v.fn)
        return zc__err(ZC_EINTERNAL, "%s: no kernel for %s", ew_op_name((ew_op)op), zc_dtype_name(compute));
    int all_const = 1, all_weak = 1;
    for (int i = 0; i < nops; i++) {
        v.arg[i] = args[i];
        all_const &= p->vals[args[i]].kind == V_CONST;
        all_weak &= p->vals[args[i]].weak != W_NONE;
    }
    if (all_const) {
        _Alignas(16) unsigned char r[16] = {0};
        const void *a = p->vals[args[0]].cval;
        const void *b = nops > 1 ? p->vals[args[1]].cval : NULL;
        const void *c = nops > 2 ? p->vals[args[2]].cval : NULL;
        v.fn(1, r, a, b, c, EW_SA | EW_SB | EW_SC);
        if (v.narrow) ew_narrow_half(1, (float *)(void *)r);
        int id = new_const(p, result, all_weak ? weak_of_dtype(result) : W_NONE, r);
        if (id < 0) return id;
        *out = id;
        return 0;
    }
    int id = new_val(p, &v);
    if (id < 0) return id;
    *out = id;
    return 0;
}

/* Value v converted to dtype t (a typed value: weak constants lose weakness). */
static int cast_to(ew_program *p, int v, zc_dtype t, int *out)
{
    const ew_val *x = &p->vals[v];
    if (x->dtype == t && !x->weak) {
        *out = v;
        return 0;
    }
    if (x->kind != V_CONST) /* reuse an earlier cast of the same value */
        for (int i = v + 1; i < p->nvals; i++)
            if (p->vals[i].kind == V_INSTR && p->vals[i].op == EW_CAST_ && p->vals[i].arg[0] == v &&
                p->vals[i].dtype == t) {
                *out = i;
                return 0;
            }
    if (x->dtype == t) { /* a weak constant of its default dtype */
        int id = new_const(p, t, W_NONE, x->cval);
        if (id < 0) return id;
        *out = id;
        return 0;
    }
    int args[1] = {v};
    ZC_TRY(emit(p, EW_CAST_, x->dtype, t, 1, args, out));
    if (p->vals[*out].kind == V_CONST) p->vals[*out].weak = W_NONE;
    return 0;
}

/* A weak scalar given the dtype of the array it meets (array API rules, and
 * NumPy's where the standard is silent): bool takes any dtype; an int takes
 * integer, float and complex dtypes (it must fit an integer dtype) and makes
 * a bool array int64; a float takes float and complex dtypes and makes
 * integer and bool arrays float64; a complex makes float16/32 complex64 and
 * the others complex128. */
static int weak_to(ew_program *p, int v, zc_dtype other, const char *fname, int *out)
{
    const ew_val *w = &p->vals[v];
    zc_dtype t = other;
    switch (w->weak) {
    case W_BOOL: break;
    case W_INT:
        if (other == ZC_BOOL) {
            t = ZC_INT64;
        } else if (is_int(other)) {
            int64_t x;
            memcpy(&x, w->cval, 8);
            static const int64_t LO[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN, 0, 0, 0, 0};
            static const int64_t HI[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX, UINT8_MAX, UINT16_MAX,
                                         UINT32_MAX, INT64_MAX};
            int r = (int)(other - ZC_INT8);
            if (x < LO[r] || x > HI[r])
                return zc__err(ZC_EINVAL, "%s: int scalar %lld does not fit %s (a Python scalar takes the array's "
                               "dtype; use a typed constant or astype)", fname, (long long)x, zc_dtype_name(other));
        }
        break;
    case W_FLOAT:
        if (other == ZC_BOOL || is_int(other)) t = ZC_FLOAT64;
        break;
    case W_COMPLEX:
        if (other == ZC_FLOAT16 || other == ZC_FLOAT32) t = ZC_COMPLEX64;
        else if (!is_complex(other)) t = ZC_COMPLEX128;
        break;
    default: *out = v; return 0;
    }
    return cast_to(p, v, t, out);
}

/* Typed constant's value (in compute dtype t) as a double, or NAN if not a real integer value. */
static double const_real(const ew_val *x)
{
    const unsigned char *c = x->cval;
    switch (ew_kind_of(x->dtype)) {
    case EK_BOOL: return c[0];
    case EK_I8: { int8_t v; memcpy(&v, c, 1); return v; }
    case EK_I16: { int16_t v; memcpy(&v, c, 2); return v; }
    case EK_I32: { int32_t v; memcpy(&v, c, 4); return v; }
    case EK_I64: { int64_t v; memcpy(&v, c, 8); return (double)v; }
    case EK_U8: return c[0];
    case EK_U16: { uint16_t v; memcpy(&v, c, 2); return v; }
    case EK_U32: { uint32_t v; memcpy(&v, c, 4); return v; }
    case EK_U64: { uint64_t v; memcpy(&v, c, 8); return (double)v; }
    case EK_F32: { float v; memcpy(&v, c, 4); return v; }
    case EK_F64: { double v; memcpy(&v, c, 8); return v; }
    case EK_C64: { float v[2]; memcpy(v, c, 8); return v[1] == 0 ? v[0] : NAN; }
    case EK_C128: { double v[2]; memcpy(v, c, 16); return v[1] == 0 ? v[0] : NAN; }
    default: return NAN;
    }
}

static int one_const(ew_program *p, zc_dtype t, int *out)
{
    int w = new_const(p, ZC_BOOL, W_NONE, (unsigned char[16]){1});
    if (w < 0) return w;
    return cast_to(p, w, t, out);
}

static void describe2(char *buf, size_t size, const ew_program *p, int a, int b)
{
    snprintf(buf, size, "%s, %s", val_name(p, a), val_name(p, b));
}

static int lower_binary(ew_program *p, int op, int va, int vb, int *out)
{
    const char *fname = ew_op_name((ew_op)op);
    char what[64];
    describe2(what, sizeof what, p, va, vb);
    int wa = p->vals[va].weak, wb = p->vals[vb].weak;
    if (wa && !wb) ZC_TRY(weak_to(p, va, p->vals[vb].dtype, fname, &va));
    else if (wb && !wa) ZC_TRY(weak_to(p, vb, p->vals[va].dtype, fname, &vb));
    zc_dtype ct, rt;
    ZC_TRY(ew_binary_signature(op, p->vals[va].dtype, p->vals[vb].dtype, what, &ct, &rt));
    if (op == EW_POW && p->vals[vb].kind == V_CONST && !(wa && wb)) {
        double e = const_real(&p->vals[vb]);
        if (e == 0) return one_const(p, ct, out); /* x**0 is 1, even for NaN */
        if (e == 1) return cast_to(p, va, ct, out);
        if (e == 2) { /* x*x: the same as pow for every dtype, and much faster */
            int a;
            ZC_TRY(cast_to(p, va, ct, &a));
            return emit(p, EW_SQUARE, ct, rt, 1, &a, out);
        }
    }
    int args[2];
    ZC_TRY(cast_to(p, va, ct, &args[0]));
    ZC_TRY(cast_to(p, vb, ct, &args[1]));
    if (wa && wb) { /* keep weak operands weak so the folded result stays weak */
        p->vals[args[0]].weak = p->vals[args[0]].weak ? p->vals[args[0]].weak : (uint8_t)weak_of_dtype(ct);
        p->vals[args[1]].weak = p->vals[args[1]].weak ? p->vals[args[1]].weak : (uint8_t)weak_of_dtype(ct);
    }
    return emit(p, op, ct, rt, 2, args, out);
}

static int lower_unary(ew_program *p, int op, int va, int *out)
{
    zc_dtype ct, rt;
    ZC_TRY(ew_op_signature(op, p->vals[va].dtype, val_name(p, va), &ct, &rt));
    if (is_identity(op, ct)) {
        *out = va;
        return 0;
    }
    int a;
    int w = p->vals[va].weak;
    ZC_TRY(cast_to(p, va, ct, &a));
    if (w && !p->vals[a].weak) p->vals[a].weak = (uint8_t)weak_of_dtype(ct); /* weak in, weak out */
    return emit(p, op, ct, rt, 1, &a, out);
}

static int lower_where(ew_program *p, int vc, int va, int vb, int *out)
{
    if (p->vals[vc].weak == W_BOOL) ZC_TRY(cast_to(p, vc, ZC_BOOL, &vc));
    if (p->vals[vc].dtype != ZC_BOOL || p->vals[vc].weak)
        return zc__err(ZC_EINVAL, "where: the condition must be bool, not %s", val_name(p, vc));
    int wa = p->vals[va].weak, wb = p->vals[vb].weak;
    if (wa && !wb) ZC_TRY(weak_to(p, va, p->vals[vb].dtype, "where", &va));
    else if (wb && !wa) ZC_TRY(weak_to(p, vb, p->vals[va].dtype, "where", &vb));
    zc_dtype pt;
    ZC_TRY(ew_promote(p->vals[va].dtype, p->vals[vb].dtype, &pt));
    int args[3] = {vc, 0, 0};
    ZC_TRY(cast_to(p, va, pt, &args[1]));
    ZC_TRY(cast_to(p, vb, pt, &args[2]));
    return emit(p, EW_WHERE_, pt, pt, 3, args, out);
}

/* ------------------------------------------------------------------ public building */

static int add_node(ew_program *p, ew_node *n, int val)
{
    n->val = val;
    return new_node(p, n);
}

int ew_input(ew_program *p, int k, zc_dtype dtype)
{
    if (!p) return zc__err(ZC_EINVAL, "ew_input: no program");
    if (k < 0 || k >= EW_MAX_INPUTS)
        return zc__err(ZC_EINVAL, "ew_input: input index %d outside [0, %d)", k, EW_MAX_INPUTS);
    if (!ew_dtype_ok(dtype))
        return zc__err(ZC_EINVAL, "ew_input: input %d has dtype %s; elementwise functions take bool, integer, "
                       "float and complex dtypes", k, zc_dtype_name(dtype));
    int v = p->input_val[k];
    if (v >= 0 && p->vals[v].dtype != dtype)
        return zc__err(ZC_EINVAL, "ew_input: input %d declared as %s and as %s", k, zc_dtype_name(p->vals[v].dtype),
                       zc_dtype_name(dtype));
    if (v < 0) {
        ew_val x = {0};
        x.kind = V_INPUT;
        x.dtype = dtype;
        x.input = k;
        v = new_val(p, &x);
        if (v < 0) return v;
        p->input_val[k] = v;
        if (k + 1 > p->ninputs) p->ninputs = k + 1;
    }
    ew_node n = {0};
    n.what = N_INPUT;
    n.dtype = dtype;
    n.arg[0] = k;
    return add_node(p, &n, v);
}

static int weak_const(ew_program *p, ew_node *n, zc_dtype t, int weak, const void *cval)
{
    if (!p) return zc__err(ZC_EINVAL, "ew_const: no program");
    int v = new_const(p, t, weak, cval);
    if (v < 0) return v;
    return add_node(p, n, v);
}

int ew_const_i64(ew_program *p, int64_t v)
{
    ew_node n = {0};
    n.what = N_INT;
    n.i = v;
    return weak_const(p, &n, ZC_INT64, W_INT, &v);
}

int ew_const_f64(ew_program *p, double v)
{
    ew_node n = {0};
    n.what = N_FLOAT;
    n.re = v;
    return weak_const(p, &n, ZC_FLOAT64, W_FLOAT, &v);
}

int ew_const_bool(ew_program *p, int v)
{
    ew_node n = {0};
    n.what = N_BOOL;
    n.i = v != 0;
    unsigned char b = v != 0;
    return weak_const(p, &n, ZC_BOOL, W_BOOL, &b);
}

int ew_const_c128(ew_program *p, double re, double im)
{
    ew_node n = {0};
    n.what = N_COMPLEX;
    n.re = re;
    n.im = im;
    double c[2] = {re, im};
    return weak_const(p, &n, ZC_COMPLEX128, W_COMPLEX, c);
}

int ew_const_typed(ew_program *p, zc_dtype dtype, const void *value)
{
    if (!p) return zc__err(ZC_EINVAL, "ew_const_typed: no program");
    if (!ew_dtype_ok(dtype))
        return zc__err(ZC_EINVAL, "ew_const_typed: dtype %s is not a bool, integer, float or complex dtype",
                       zc_dtype_name(dtype));
    if (!value) return zc__err(ZC_EINVAL, "ew_const_typed: value is NULL");
    ew_node n = {0};
    n.what = N_TYPED;
    n.dtype = dtype;
    memcpy(n.raw, value, ew_dtype_size(dtype));
    _Alignas(16) unsigned char c[16] = {0};
    if (dtype == ZC_FLOAT16) {
        uint16_t h;
        memcpy(&h, value, 2);
        float f = ew_h2f(h);
        memcpy(c, &f, 4);
    } else if (dtype == ZC_BOOL) {
        c[0] = *(const unsigned char *)value != 0;
    } else {
        memcpy(c, value, ew_dtype_size(dtype));
    }
    int v = new_const(p, dtype, W_NONE, c);
    if (v < 0) return v;
    return add_node(p, &n, v);
}

int ew_unary(ew_program *p, ew_op op, int a, int *reg)
{
    ZC_TRY(check_node(p, a, "ew_unary"));
    if ((int)op < 0 || op >= EW_UNARY_END_)
        return zc__err(ZC_EINVAL, "ew_unary: %d is not a unary function", (int)op);
    if (!reg) return zc__err(ZC_EINVAL, "ew_unary: reg is NULL");
    int v;
    ZC_TRY(lower_unary(p, op, p->nodes[a].val, &v));
    ew_node n = {0};
    n.what = N_UNARY;
    n.op = (int16_t)op;
    n.arg[0] = a;
    int id = add_node(p, &n, v);
    if (id < 0) return id;
    *reg = id;
    return 0;
}

int ew_binary(ew_program *p, ew_op op, int a, int b, int *reg)
{
    ZC_TRY(check_node(p, a, "ew_binary"));
    ZC_TRY(check_node(p, b, "ew_binary"));
    if (op <= EW_UNARY_END_ || op >= EW_BINARY_END_)
        return zc__err(ZC_EINVAL, "ew_binary: %d is not a binary function", (int)op);
    if (!reg) return zc__err(ZC_EINVAL, "ew_binary: reg is NULL");
    int v;
    ZC_TRY(lower_binary(p, op, p->nodes[a].val, p->nodes[b].val, &v));
    ew_node n = {0};
    n.what = N_BINARY;
    n.op = (int16_t)op;
    n.arg[0] = a;
    n.arg[1] = b;
    int id = add_node(p, &n, v);
    if (id < 0) return id;
    *reg = id;
    return 0;
}

int ew_where(ew_program *p, int cond, int a, int b, int *reg)
{
    ZC_TRY(check_node(p, cond, "ew_where"));
    ZC_TRY(check_node(p, a, "ew_where"));
    ZC_TRY(check_node(p, b, "ew_where"));
    if (!reg) return zc__err(ZC_EINVAL, "ew_where: reg is NULL");
    int v;
    ZC_TRY(lower_where(p, p->nodes[cond].val, p->nodes[a].val, p->nodes[b].val, &v));
    ew_node n = {0};
    n.what = N_WHERE;
    n.arg[0] = cond;
    n.arg[1] = a;
    n.arg[2] = b;
    int id = add_node(p, &n, v);
    if (id < 0) return id;
    *reg = id;
    return 0;
}

int ew_astype(ew_program *p, int a, zc_dtype dtype, int *reg)
{
    ZC_TRY(check_node(p, a, "ew_astype"));
    if (!ew_dtype_ok(dtype))
        return zc__err(ZC_EINVAL, "astype: cannot cast %s to %s (elementwise programs take bool, integer, float "
                       "and complex dtypes)", val_name(p, p->nodes[a].val), zc_dtype_name(dtype));
    if (!reg) return zc__err(ZC_EINVAL, "ew_astype: reg is NULL");
    int v;
    ZC_TRY(cast_to(p, p->nodes[a].val, dtype, &v));
    ew_node n = {0};
    n.what = N_ASTYPE;
    n.dtype = dtype;
    n.arg[0] = a;
    int id = add_node(p, &n, v);
    if (id < 0) return id;
    *reg = id;
    return 0;
}

zc_dtype ew_reg_dtype(const ew_program *p, int reg)
{
    if (!p || reg < 0 || reg >= p->nnodes) return ZC_DTYPE_INVALID;
    return p->vals[p->nodes[reg].val].dtype;
}

zc_dtype ew_output_dtype(const ew_program *p)
{
    if (!p || p->out_node < 0) return ZC_DTYPE_INVALID;
    return ew_reg_dtype(p, p->out_node);
}

int ew_ninputs(const ew_program *p) { return p ? p->ninputs : 0; }

/* ------------------------------------------------------------------ scheduling */

int ew_set_output(ew_program *p, int reg)
{
    ZC_TRY(check_node(p, reg, "ew_set_output"));
    int outv = p->nodes[reg].val, nv = p->nvals;
    int *map = zc__malloc_array((size_t)nv, sizeof *map);
    int *last = zc__malloc_array((size_t)nv, sizeof *last);
    ew_step *steps = zc__calloc((size_t)outv + 1, sizeof *steps);
    if (!map || !last || !steps) {
        zc__free(map);
        zc__free(last);
        zc__free(steps);
        return ZC_ENOMEM;
    }
    /* the values the output needs (operands have smaller ids) */
    for (int v = 0; v < nv; v++) map[v] = 0;
    map[outv] = 1;
    for (int v = outv; v >= 0; v--)
        if (map[v] && p->vals[v].kind == V_INSTR)
            for (int i = 0; i < p->vals[v].nops; i++) map[p->vals[v].arg[i]] = 1;
    int ns = 0;
    for (int v = 0; v <= outv; v++) map[v] = map[v] ? ns++ : -1;
    if (ns > EW_MAX_STEPS) {
        zc__free(map);
        zc__free(last);
        zc__free(steps);
        return zc__err(ZC_EINVAL, "elementwise program too long: its output needs %d values (at most %d; split the "
                       "expression)", ns, EW_MAX_STEPS);
    }
    /* steps, and the last step reading each one */
    size_t maxsize = 1;
    for (int v = 0; v <= outv; v++) {
        if (map[v] < 0) continue;
        const ew_val *x = &p->vals[v];
        ew_step *s = &steps[map[v]];
        s->kind = x->kind;
        s->narrow = x->narrow;
        s->nops = x->nops;
        s->dtype = x->dtype;
        s->input = x->input;
        s->fn = x->fn;
        s->esize = (uint8_t)ew_kind_size(ew_kind_of(x->dtype));
        s->msize = (uint8_t)ew_dtype_size(x->dtype);
        s->native = x->dtype != ZC_BOOL && x->dtype != ZC_FLOAT16;
        s->slot = -1;
        memcpy(s->cval, x->cval, sizeof s->cval);
        for (int i = 0; i < x->nops; i++) s->arg[i] = (int16_t)map[x->arg[i]];
        last[map[v]] = map[v];
        if (x->kind == V_INSTR)
            for (int i = 0; i < x->nops; i++) last[map[x->arg[i]]] = map[v];
        if (x->kind != V_CONST && s->esize > maxsize) maxsize = s->esize;
    }
    last[ns - 1] = ns; /* the output lives to the end */
    /* slots: a free list; an instruction's slot is taken before its operands' are freed */
    int freelist[EW_MAX_SLOTS], nfree = 0, nslots = 0, rc = 0;
    for (int i = 0; i < ns && !rc; i++) {
        ew_step *s = &steps[i];
        if (s->kind == V_CONST) continue;
        if (nfree) {
            s->slot = (int16_t)freelist[--nfree];
        } else if (nslots < EW_MAX_SLOTS) {
            s->slot = (int16_t)nslots++;
        } else {
            rc = zc__err(ZC_EINVAL, "elementwise program needs more than %d live values at once (split the "
                         "expression)", EW_MAX_SLOTS);
            break;
        }
        if (s->kind != V_INSTR) continue;
        for (int j = 0; j < s->nops; j++) {
            int a = s->arg[j];
            int dup = 0;
            for (int k = 0; k < j; k++) dup |= s->arg[k] == a;
            if (!dup && last[a] == i && steps[a].slot >= 0) freelist[nfree++] = steps[a].slot;
        }
    }
    zc__free(map);
    zc__free(last);
    if (rc) {
        zc__free(steps);
        return rc;
    }
    size_t tile = EW_TILE_MAX;
    if (nslots > 0 && (size_t)nslots * maxsize * tile > EW_SCRATCH) tile = EW_SCRATCH / ((size_t)nslots * maxsize);
    tile &= ~(size_t)15;
    zc__free(p->steps);
    p->steps = steps;
    p->nsteps = ns;
    p->out_step = ns - 1;
    p->nslots = nslots;
    p->tile = tile;
    p->slot_bytes = (tile * maxsize + 63) & ~(size_t)63;
    p->out_node = reg;
    return 0;
}

/* ------------------------------------------------------------------ evaluation */

enum { M_FIXED, M_DIRECT, M_GATHER };

/* One element of input dtype t at src, in tile representation at dst. */
static void load_one(void *dst, const void *src, zc_dtype t)
{
    if (t == ZC_BOOL) {
        *(unsigned char *)dst = *(const unsigned char *)src != 0;
    } else if (t == ZC_FLOAT16) {
        uint16_t h;
        memcpy(&h, src, 2);
        float f = ew_h2f(h);
        memcpy(dst, &f, 4);
    } else {
        memcpy(dst, src, ew_dtype_size(t));
    }
}

/* m elements from base[first + i*st] (element units) into a tile. */
static void gather(void *restrict dst, const char *base, int64_t first, int64_t st, size_t m, zc_dtype t)
{
    size_t sz = ew_dtype_size(t);
    const char *src = base + first * (int64_t)sz;
    int64_t step = st * (int64_t)sz;
    if (t == ZC_BOOL) {
        unsigned char *d = dst;
        for (size_t i = 0; i < m; i++) d[i] = src[(int64_t)i * step] != 0;
        return;
    }
    if (t == ZC_FLOAT16) {
        float *d = dst;
        if (st == 1) {
            const uint16_t *s = (const void *)src;
            for (size_t i = 0; i < m; i++) d[i] = ew_h2f(s[i]);
        } else {
            for (size_t i = 0; i < m; i++) d[i] = ew_h2f(*(const uint16_t *)(const void *)(src + (int64_t)i * step));
        }
        return;
    }
    switch (sz) {
#define GATHER_(T)                                                                                 \
    {                                                                                              \
        T *restrict d = dst;                                                                       \
        for (size_t i = 0; i < m; i++) d[i] = *(const T *)(const void *)(src + (int64_t)i * step); \
    }                                                                                              \
    break;
    case 1: GATHER_(uint8_t)
    case 2: GATHER_(uint16_t)
    case 4: GATHER_(uint32_t)
    case 8: GATHER_(uint64_t)
    default:
        for (size_t i = 0; i < m; i++) memcpy((char *)dst + i * 16, src + (int64_t)i * step, 16);
        break;
#undef GATHER_
    }
}

/* m output elements of dtype t from a tile (or one scalar repeated). */
static void store(void *restrict dst, const void *src, int scalar, size_t m, zc_dtype t)
{
    if (t == ZC_FLOAT16) {
        const float *s = src;
        uint16_t *d = dst;
        if (scalar) {
            uint16_t h = ew_f2h(s[0]);
            for (size_t i = 0; i < m; i++) d[i] = h;
        } else {
            for (size_t i = 0; i < m; i++) d[i] = ew_f2h(s[i]);
        }
        return;
    }
    size_t sz = ew_dtype_size(t);
    if (!scalar) {
        memcpy(dst, src, m * sz);
        return;
    }
    switch (sz) {
#define FILL_(T)                                                                                   \
    {                                                                                              \
        T v, *restrict d = dst;                                                                    \
        memcpy(&v, src, sizeof v);                                                                 \
        for (size_t i = 0; i < m; i++) d[i] = v;                                                   \
    }                                                                                              \
    break;
    case 1: FILL_(uint8_t)
    case 2: FILL_(uint16_t)
    case 4: FILL_(uint32_t)
    case 8: FILL_(uint64_t)
    default:
        for (size_t i = 0; i < m; i++) memcpy((char *)dst + i * 16, src, 16);
        break;
#undef FILL_
    }
}

void ew_eval(const ew_program *p, size_t n, const void *const *in, const int64_t *stride, void *out)
{
    if (!p || !p->steps || n == 0) return;
    _Alignas(64) unsigned char scratch[EW_SCRATCH];
    _Alignas(16) unsigned char cell[EW_MAX_INPUTS][16];
    const void *ptr[EW_MAX_STEPS];
    unsigned char scal[EW_MAX_STEPS], mode[EW_MAX_STEPS], fl[EW_MAX_STEPS];
    const ew_step *steps = p->steps;
    const int ns = p->nsteps, os = p->out_step;
    memset(scal, 0, (size_t)ns);

    for (int i = 0; i < ns; i++) {
        const ew_step *s = &steps[i];
        ptr[i] = s->slot >= 0 ? scratch + (size_t)s->slot * p->slot_bytes : NULL;
        mode[i] = M_FIXED;
        if (s->kind == V_CONST) {
            ptr[i] = s->cval;
            scal[i] = 1;
        } else if (s->kind == V_INPUT) {
            int64_t st = stride[s->input];
            if (st == 0) {
                load_one(cell[s->input], in[s->input], s->dtype);
                ptr[i] = cell[s->input];
                scal[i] = 1;
            } else {
                mode[i] = st == 1 && s->native ? M_DIRECT : M_GATHER;
                scal[i] = 0;
            }
        } else {
            unsigned f = 0, all = 1;
            for (int j = 0; j < s->nops; j++) {
                f |= (unsigned)scal[s->arg[j]] << j;
                all &= scal[s->arg[j]];
            }
            fl[i] = (unsigned char)f;
            scal[i] = (unsigned char)all;
        }
    }
    const ew_step *o = &steps[os];
    int direct_out = o->kind == V_INSTR && !scal[os] && o->dtype != ZC_FLOAT16; /* bool tiles are 0/1 bytes */
    char *outp = out;
    const size_t tile = p->tile;

    for (size_t off = 0; off < n; off += tile) {
        size_t m = n - off < tile ? n - off : tile;
        for (int i = 0; i < ns; i++) {
            const ew_step *s = &steps[i];
            if (s->kind == V_INPUT) {
                if (mode[i] == M_DIRECT) {
                    ptr[i] = (const char *)in[s->input] + off * s->msize;
                } else if (mode[i] == M_GATHER) {
                    void *d = scratch + (size_t)s->slot * p->slot_bytes;
                    gather(d, in[s->input], (int64_t)off * stride[s->input], stride[s->input], m, s->dtype);
                    ptr[i] = d;
                }
            } else if (s->kind == V_INSTR) {
                void *d = direct_out && i == os ? (void *)(outp + off * o->msize)
                                                : (void *)(scratch + (size_t)s->slot * p->slot_bytes);
                size_t cnt = scal[i] ? 1 : m;
                s->fn(cnt, d, ptr[s->arg[0]], s->nops > 1 ? ptr[s->arg[1]] : NULL,
                      s->nops > 2 ? ptr[s->arg[2]] : NULL, fl[i]);
                if (s->narrow) ew_narrow_half(cnt, d);
                ptr[i] = d;
            }
        }
        if (!direct_out) store(outp + off * o->msize, ptr[os], scal[os], m, o->dtype);
    }
}
