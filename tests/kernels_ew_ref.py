#!/usr/bin/python3
"""Expected results of the elementwise kernel (src/kernels/elementwise.c), from NumPy.

    kernels_ew_ref.py OUTDIR SECTION       SECTION: unary | binary | mixed | cast | promote | chain

Writes OUTDIR/data.bin (all arrays back to back) and OUTDIR/manifest.txt, one
case per line:

    case FN NARGS N RDTYPE ROFF TOL DT1 OFF1 [DT2 OFF2 [DT3 OFF3]]
    promote DT1 DT2 RESULT
    chain NAME DTYPE N A_OFF B_OFF FULL_OFF BCAST_OFF        (see chain_cases)

TOL is 0 for exact results, else a tolerance in units in the last place of
the result dtype (transcendental functions: NumPy uses its own SIMD versions
of some, the kernel calls libm). Which dtypes each function accepts is written
here a second time, from the array API standard's categories, so the test can
check the kernel's rules against an independent list: numeric functions take
integers, floats and complex (not bool); floating-point functions also take
integers, computed in the float dtype NumPy picks (int8 -> float16); logical
functions take bool; bitwise take bool and integers; shifts integers.

Where the kernel's semantics deliberately differ from NumPy 1.24 the expected
values are computed here from the kernel's definition (each marked DEFINED):
ceil/floor/trunc/round of integers keep the dtype; complex sign is x/|x|
(array API 2023.12, NumPy 2); negative integer powers; float-to-integer casts
of NaN or out-of-range values saturate (NumPy: platform dependent).
"""
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")

BOOL = ["bool"]
SINT = ["int8", "int16", "int32", "int64"]
UINT = ["uint8", "uint16", "uint32", "uint64"]
INTS = SINT + UINT
FLOATS = ["float16", "float32", "float64"]
CPLX = ["complex64", "complex128"]
ALL = BOOL + INTS + FLOATS + CPLX
NUM = INTS + FLOATS + CPLX

U_TRANS = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
           "log1p", "log2", "log10", "sin", "sinh", "tan", "tanh"]
UNARY = {
    "abs": NUM, "bitwise_invert": BOOL + INTS, "ceil": INTS + FLOATS, "floor": INTS + FLOATS,
    "trunc": INTS + FLOATS, "round": NUM, "conj": NUM, "real": NUM, "imag": CPLX,
    "isfinite": NUM, "isinf": NUM, "isnan": NUM, "logical_not": BOOL, "negative": NUM,
    "positive": NUM, "sign": NUM, "signbit": INTS + FLOATS, "square": NUM, "sqrt": NUM,
    "reciprocal": FLOATS + CPLX,
}
for f in U_TRANS:
    UNARY[f] = NUM
BINARY = {
    "add": NUM, "subtract": NUM, "multiply": NUM, "divide": NUM, "pow": NUM,
    "atan2": INTS + FLOATS, "copysign": INTS + FLOATS, "hypot": INTS + FLOATS,
    "logaddexp": INTS + FLOATS, "nextafter": INTS + FLOATS,
    "bitwise_and": BOOL + INTS, "bitwise_or": BOOL + INTS, "bitwise_xor": BOOL + INTS,
    "bitwise_left_shift": INTS, "bitwise_right_shift": INTS,
    "equal": ALL, "not_equal": ALL, "greater": INTS + FLOATS, "greater_equal": INTS + FLOATS,
    "less": INTS + FLOATS, "less_equal": INTS + FLOATS,
    "floor_divide": INTS + FLOATS, "remainder": INTS + FLOATS, "maximum": INTS + FLOATS,
    "minimum": INTS + FLOATS, "logical_and": BOOL, "logical_or": BOOL, "logical_xor": BOOL,
}
NP_NAME = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
           "atanh": "arctanh", "atan2": "arctan2", "bitwise_invert": "invert", "conj": "conjugate",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift", "pow": "power",
           "round": "rint"}
# results that are not correctly rounded in one of the two implementations
INEXACT = set(U_TRANS) | {"atan2", "logaddexp", "pow"}


def npfn(name):
    return getattr(np, NP_NAME.get(name, name))


def edge_values(dt):
    t = np.dtype(dt)
    if dt == "bool":
        return np.array([False, True])
    if t.kind in "iu":
        info = np.iinfo(t)
        vals = [0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1, 5, 63, 64, 8, 16, 31, 32]
        if t.kind == "i":
            vals += [-1, -2, -3, -7, -100, -5, -8]
        return np.array([v for v in vals if info.min <= v <= info.max], dtype=t)
    if t.kind == "f":
        fi = np.finfo(t)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 7.0, -7.0, 0.1, 100.0, -100.0,
                np.nan, np.inf, -np.inf, float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny),
                float(fi.smallest_subnormal), 1e4, 3.14159, -0.75, 0.999, 1.001, 2.0, 1e-3]
        return np.array(vals, dtype=t)
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, np.nan, np.inf, -np.inf, 3.0]
    return np.array([complex(r, i) for r in parts for i in parts], dtype=t)


def binary_values(dt):
    """Two arrays holding every pair of a dtype's (reduced) edge values."""
    v = edge_values(dt)
    if dt in CPLX:
        parts = [0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf]
        v = np.array([complex(r, i) for r in parts for i in parts], dtype=dt)
    a = np.repeat(v, len(v))
    b = np.tile(v, len(v))
    return a, b


class Out:
    def __init__(self, outdir):
        self.outdir = outdir
        self.data = open(outdir + "/data.bin", "wb")
        self.man = open(outdir + "/manifest.txt", "w")
        self.off = 0

    def put(self, arr):
        arr = np.ascontiguousarray(arr)
        off = self.off
        b = arr.tobytes()
        self.data.write(b)
        self.off += len(b)
        pad = (-self.off) % 16
        self.data.write(b"\0" * pad)
        self.off += pad
        return off

    def case(self, fn, args, res, tol):
        line = "case %s %d %d %s %d %d" % (fn, len(args), len(res), res.dtype.name, self.put(res), tol)
        for a in args:
            line += " %s %d" % (a.dtype.name, self.put(a))
        self.man.write(line + "\n")

    def line(self, s):
        self.man.write(s + "\n")

    def close(self):
        self.data.close()
        self.man.close()


def tol_of(fn, rdtype, argdtype=None):
    if fn == "abs" and argdtype in CPLX:
        return 2  # NumPy's SIMD complex abs is not a correctly rounded hypot
    if fn not in INEXACT:
        return 0
    return 1 if rdtype == "float16" else 4


def sign_complex(x):  # DEFINED: array API 2023.12 (NumPy 2)
    out = np.empty_like(x)
    for i, z in enumerate(x):
        r, im = z.real, z.imag
        m = np.hypot(r, im)
        if m == 0:
            out[i] = 0
        elif np.isnan(m):
            out[i] = complex(np.nan, np.nan)
        elif np.isinf(m):
            if np.isinf(r):
                out[i] = complex(np.nan, np.nan) if np.isinf(im) else complex(1 if r > 0 else -1, 0)
            else:
                out[i] = complex(0, 1 if im > 0 else -1)
        else:
            out[i] = complex(r / m, im / m)
    return out.astype(x.dtype)


def expm1_complex(x):  # DEFINED: the array API's special cases (C99 Annex G), where NumPy 1.24 differs
    out = np.expm1(x)
    for i, z in enumerate(x):
        r, im = z.real, z.imag
        if im == 0:
            out[i] = complex(0.0 if r == 0 else np.expm1(r), im)
        elif np.isinf(r) and not np.isfinite(im):
            out[i] = complex(-1, 0) if r < 0 else complex(np.inf, np.nan)
    return out


def unary_expected(fn, x):
    if fn in ("ceil", "floor", "trunc", "round") and x.dtype.kind in "iu":
        return x.copy()  # DEFINED (array API): integers unchanged
    if fn == "sign" and x.dtype.kind == "c":
        return sign_complex(x)
    if fn == "expm1" and x.dtype.kind == "c":
        return expm1_complex(x)
    return npfn(fn)(x)


def int_pow(a, b):  # DEFINED for negative exponents: 1 / a**-b truncated
    neg = b < 0 if b.dtype.kind == "i" else np.zeros(len(b), bool)
    safe = np.where(neg, 0, b).astype(b.dtype)
    r = np.power(a, safe)
    if neg.any():
        one = a == 1
        mone = a == -1 if a.dtype.kind == "i" else np.zeros(len(a), bool)
        alt = np.where(one, 1, np.where(mone, np.where(b % 2 == 1, -1, 1), 0)).astype(r.dtype)
        r = np.where(neg, alt, r)
    return r


def binary_expected(fn, a, b):
    if fn == "pow" and np.result_type(a, b).kind in "iu":
        return int_pow(a, b)
    return npfn(fn)(a, b)


def section_unary(out):
    for fn, dts in UNARY.items():
        for dt in dts:
            x = edge_values(dt)
            r = unary_expected(fn, x)
            out.case(fn, [x], r, tol_of(fn, r.dtype.name, dt))


def section_binary(out):
    for fn, dts in BINARY.items():
        for dt in dts:
            a, b = binary_values(dt)
            r = binary_expected(fn, a, b)
            out.case(fn, [a, b], r, tol_of(fn, r.dtype.name))


MIXED_FNS = ["add", "multiply", "subtract", "less", "equal", "maximum", "bitwise_or", "divide",
             "floor_divide", "remainder", "copysign", "pow"]


def section_mixed(out):
    """Every pair of distinct dtypes through a few functions: promotion and casts."""
    for fn in MIXED_FNS:
        acc = set(BINARY[fn])
        for da in ALL:
            for db in ALL:
                if da == db:
                    continue
                pt = np.promote_types(da, db).name
                if pt not in acc:
                    continue
                va, vb = edge_values(da), edge_values(db)
                n = max(len(va), len(vb))
                a = np.resize(va, n)
                b = np.resize(vb[::-1], n)
                if fn == "pow" and pt in INTS:
                    r = int_pow(a.astype(pt), b.astype(pt))
                else:
                    r = binary_expected(fn, a, b)  # NumPy's own mixed call
                out.case(fn, [a, b], r, tol_of(fn, r.dtype.name))


def cast_expected(x, dt):
    t = np.dtype(dt)
    if t.kind in "iu" and x.dtype.kind in "fc":  # DEFINED: truncate, saturate, NaN -> 0
        xr = np.real(x).astype(np.float64)
        info = np.iinfo(t)
        res = []
        for v in xr:
            if np.isnan(v):
                res.append(0)
            elif v >= float(info.max):
                res.append(int(info.max))
            elif v <= float(info.min):
                res.append(int(info.min))
            else:
                res.append(int(np.trunc(v)))
        return np.array(res, dtype=t)
    if x.dtype.kind == "c" and t.kind != "c":
        if t.kind == "b":
            return x != 0
        return np.real(x).astype(t)
    return x.astype(t)


def section_cast(out):
    for ds in ALL:
        for dd in ALL:
            x = edge_values(ds)
            out.case("astype", [x], cast_expected(x, dd), 0)


def section_promote(out):
    for da in ALL:
        for db in ALL:
            out.line("promote %s %s %s" % (da, db, np.promote_types(da, db).name))


def chain_f32(a, b):
    """Ten operations, op by op, in float32 (the Python scalars are weak: float32)."""
    f = np.float32
    t = a * b
    t = t + f(1.5)
    t = np.sqrt(np.abs(t))
    t = t / (b - f(2))
    t = np.maximum(t, a)
    t = np.where(a > 0, t, -t)
    t = t * t  # t ** 2
    t = t - a * f(0.25)
    t = np.floor_divide(t, f(3)) + np.remainder(t, f(0.75))
    return np.minimum(t, f(1e30))


def chain_i8(a, b):
    """Ten-plus operations, op by op, wrapping in int8."""
    i = np.int8
    t = a * b
    t = t + i(100)
    t = np.floor_divide(t, i(7))
    t = t + np.remainder(a, i(5))
    t = np.left_shift(t, i(1))
    t = t ^ b
    t = t - a
    t = np.abs(t)
    t = t * i(3)
    t = np.maximum(t, b)
    t = np.right_shift(t, i(2))
    t = np.where(a < b, t, -t)
    return t


def section_chain(out):
    rng = np.random.default_rng(7)
    n = 3001
    a = (rng.standard_normal(n) * 10).astype(np.float32)
    b = (rng.standard_normal(n) * 3).astype(np.float32)
    a[:8] = [0, -0.0, 1, -1, 2, np.inf, np.nan, 1e30]
    b[:8] = [2, 2, 0, -0.0, 1e-30, 1, 3, -1e30]
    full = chain_f32(a, b)
    bc = chain_f32(a, np.full(n, b[0], np.float32))
    out.line("chain f32 float32 %d %d %d %d %d" % (n, out.put(a), out.put(b), out.put(full), out.put(bc)))
    ai = rng.integers(-128, 128, n).astype(np.int8)
    bi = rng.integers(-128, 128, n).astype(np.int8)
    ai[:4] = [-128, 127, 0, -1]
    bi[:4] = [-1, 127, 0, -128]
    full = chain_i8(ai, bi)
    bc = chain_i8(ai, np.full(n, bi[0], np.int8))
    out.line("chain i8 int8 %d %d %d %d %d" % (n, out.put(ai), out.put(bi), out.put(full), out.put(bc)))


def main():
    outdir, section = sys.argv[1], sys.argv[2]
    out = Out(outdir)
    {"unary": section_unary, "binary": section_binary, "mixed": section_mixed, "cast": section_cast,
     "promote": section_promote, "chain": section_chain}[section](out)
    out.close()


if __name__ == "__main__":
    main()
