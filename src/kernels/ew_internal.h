/* kernels/ew_internal.h — internals shared by the elementwise kernel's files.
 *
 *   ew_promote.c   dtype rules: promotion table, which dtypes each function
 *                  accepts, its compute and result dtypes, names.
 *   ew_kernels.c   arithmetic, comparison, bitwise, cast and where kernels.
 *   ew_math.c      transcendental kernels (real and complex).
 *   elementwise.c  programs: building (promotion, weak scalars, constant
 *                  folding), scheduling (slots) and evaluation in tiles.
 *   ew_json.c      programs to and from JSON.
 *
 * Tile storage ("kinds"): a value is kept in the native C type of its dtype,
 * except float16, which is kept as float and rounded to half precision after
 * every instruction that produces it (NumPy computes half in float the same
 * way), and bool, kept as uint8_t 0/1. Complex values are C _Complex.
 *
 * A kernel computes n results of one instruction. Each operand is either a
 * vector of n elements or, when its bit is set in `sc`, one scalar broadcast
 * over the n results; when every operand is scalar, n is 1. The destination
 * never overlaps an operand (the scheduler gives it a slot of its own).
 */
#ifndef ZC_KERNELS_EW_INTERNAL_H
#define ZC_KERNELS_EW_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "kernels/cmplx.h"
#include "kernels/elementwise.h"

enum {
    EK_BOOL, EK_I8, EK_I16, EK_I32, EK_I64, EK_U8, EK_U16, EK_U32, EK_U64,
    EK_F32, EK_F64, EK_C64, EK_C128,
    EK_H,     /* cast destinations only: float16 kept as float, rounded from the source directly */
    EK_COUNT
};

/* Operations after the public ones (never serialized by number). */
enum {
    EW_WHERE_ = EW_BINARY_END_ + 1, /* where(c, a, b): c bool */
    EW_CAST_,                        /* astype and implicit promotion casts */
    EW_OP_COUNT_
};

#define EW_SA 1u /* operand a is one scalar */
#define EW_SB 2u /* operand b is one scalar */
#define EW_SC 4u /* operand c is one scalar */

typedef void (*ew_kern)(size_t n, void *restrict d, const void *restrict a, const void *restrict b,
                        const void *restrict c, unsigned sc);

/* Accepted kinds of inputs and result rules of a function (ew_promote.c). */
int ew_kind_of(zc_dtype t);           /* EK_* for the 13 numeric dtypes, -1 otherwise */
size_t ew_kind_size(int kind);        /* bytes of one element in a tile */
size_t ew_dtype_size(zc_dtype t);     /* bytes of one element in memory (0 if not numeric) */
int ew_dtype_ok(zc_dtype t);          /* one of the 13 numeric dtypes */
/* Dtype in which `op` computes for operands promoted to `t`, and its result
 * dtype; ZC_EINVAL naming the function and `what` (the operand dtypes) if the
 * function does not accept `t`. */
int ew_op_signature(int op, zc_dtype t, const char *what, zc_dtype *compute, zc_dtype *result);
/* The same for a binary function of dtypes a and b (promotion included). */
int ew_binary_signature(int op, zc_dtype a, zc_dtype b, const char *what, zc_dtype *compute, zc_dtype *result);

/* Kernels (NULL if none). `kind` is the tile kind of the compute dtype. */
ew_kern ew_kernel_basic(int op, int kind);   /* ew_kernels.c */
ew_kern ew_kernel_math(int op, int kind);    /* ew_math.c */
ew_kern ew_kernel_cast(int from_kind, int to_kind);
ew_kern ew_kernel_where(size_t elem_size);
ew_kern ew_kernel_half(int op); /* float16 kernels that differ from float32's: nextafter, maximum, minimum */
/* Round n floats to the nearest half-precision values, in place. */
void ew_narrow_half(size_t n, float *x);

/* IEEE half precision, round to nearest even (same as NumPy's conversions). */
static inline float ew_h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            float f = (float)man * 0x1p-24f; /* subnormal: exact */
            return sign ? -f : f;
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t ew_f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int32_t exp = (int32_t)e - 112;
    if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* may carry into inf: right */
    return (uint16_t)(sign | h);
}

static inline uint16_t ew_d2h(double d)
{
    uint64_t x;
    memcpy(&x, &d, 8);
    uint32_t sign = (uint32_t)(x >> 48) & 0x8000u, e = (uint32_t)(x >> 52) & 0x7ffu;
    uint64_t man = x & 0xfffffffffffffull;
    if (e == 0x7ff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (uint32_t)(man >> 42) : 0));
    int32_t exp = (int32_t)e - 1008;
    if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x10000000000000ull;
        uint32_t shift = (uint32_t)(43 - exp);
        uint64_t h = man >> shift, rem = man & ((1ull << shift) - 1), mid = 1ull << (shift - 1);
        if (rem > mid || (rem == mid && (h & 1))) h++;
        return (uint16_t)(sign | (uint32_t)h);
    }
    uint64_t h = ((uint64_t)exp << 10) | (man >> 42), rem = man & 0x3ffffffffffull;
    if (rem > 0x20000000000ull || (rem == 0x20000000000ull && (h & 1))) h++;
    return (uint16_t)(sign | (uint32_t)h);
}

/* ------------------------------------------------------------------ programs */

#define EW_MAX_VALS 8192   /* lowered values in one program (inputs, constants, instructions) */
#define EW_MAX_STEPS 1024  /* values the output needs (ew_eval keeps per-step state on its stack) */
#define EW_MAX_NODES 8192  /* build calls recorded in one program */
#define EW_MAX_SLOTS 256   /* tiles alive at once */
#define EW_SCRATCH 65536   /* bytes of tiles on ew_eval's stack */
#define EW_TILE_MAX 1024   /* elements per tile */

/* A build call as the caller made it: what ew_program_to_json writes and
 * ew_program_from_json replays, so a parsed program is built by the same
 * checks as the original. Register numbers the caller sees are node ids. */
enum { N_INPUT, N_INT, N_FLOAT, N_BOOL, N_COMPLEX, N_TYPED, N_UNARY, N_BINARY, N_WHERE, N_ASTYPE };
typedef struct {
    uint8_t what;          /* N_* */
    int16_t op;            /* N_UNARY/N_BINARY: the function */
    zc_dtype dtype;        /* N_INPUT, N_TYPED, N_ASTYPE */
    int arg[3];            /* operand nodes; N_INPUT: arg[0] is the input index */
    int64_t i;             /* N_INT value, N_BOOL 0/1 */
    double re, im;         /* N_FLOAT, N_COMPLEX */
    unsigned char raw[16]; /* N_TYPED value as in memory (float16: its 2 bytes) */
    int val;               /* the lowered value holding the result */
} ew_node;

/* Lowered values: inputs, constants and instructions in SSA form (operands
 * always have smaller ids). Promotion casts are explicit instructions. */
enum { V_INPUT, V_CONST, V_INSTR };
enum { W_NONE, W_BOOL, W_INT, W_FLOAT, W_COMPLEX }; /* weak (Python) scalar kinds */
typedef struct {
    _Alignas(16) unsigned char cval[16]; /* V_CONST: the value in tile representation */
    uint8_t kind;                        /* V_* */
    uint8_t weak;                        /* W_*: a Python scalar not yet given a dtype */
    uint8_t narrow;                      /* round the float tile to half after the kernel */
    uint8_t nops;                        /* operands of an instruction: 1..3 */
    int16_t op;                          /* EW_* of an instruction */
    zc_dtype dtype;                      /* dtype of the value (weak: int64/float64/complex128/bool) */
    int arg[3];                          /* operand values */
    int input;                           /* V_INPUT: input index */
    ew_kern fn;                          /* V_INSTR: kernel */
} ew_val;

/* One step of the schedule: the values the output needs, in order. */
typedef struct {
    _Alignas(16) unsigned char cval[16]; /* constants: copied from the value */
    uint8_t kind;                        /* V_* */
    uint8_t narrow;                      /* as ew_val */
    uint8_t nops;                        /* instruction operands */
    uint8_t native;                      /* input: memory representation equals the tile's */
    uint8_t esize;                       /* bytes per element in a tile */
    uint8_t msize;                       /* bytes per element in memory (inputs, output) */
    int16_t arg[3];                      /* operand steps */
    int16_t slot;                        /* scratch tile, or -1 */
    int input;                           /* V_INPUT: input index */
    zc_dtype dtype;                      /* value dtype */
    ew_kern fn;                          /* V_INSTR: kernel */
} ew_step;

struct ew_program {
    ew_node *nodes;                 /* build log */
    int nnodes, capnodes;
    ew_val *vals;                   /* lowered values */
    int nvals, capvals;
    int input_val[EW_MAX_INPUTS];   /* value of input k, or -1 */
    int ninputs;                    /* 1 + the largest input index declared */
    int out_node;                   /* -1 until ew_set_output */
    ew_step *steps;                 /* schedule (NULL until ew_set_output) */
    int nsteps;
    int out_step;                   /* step of the output value */
    int nslots;                     /* scratch tiles */
    size_t tile;                    /* elements per tile (multiple of 16) */
    size_t slot_bytes;              /* bytes per scratch tile (multiple of 64) */
};

#endif
