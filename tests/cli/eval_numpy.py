#!/usr/bin/python3
"""tests/cli/eval_numpy.py — `zcube eval` against NumPy, over a seeded random
set of expressions (and a fixed list of the issue's examples), shapes and
chunkings with ragged edges, Zarr v2 and v3 inputs and outputs.

Each expression string is run twice: by `zcube eval EXPR --in u=... -o OUT`
and by NumPy's eval of the SAME string with the array API names mapped to
NumPy functions. The output (read with zarr-python for v2, `zcube get` for v3)
must have NumPy's shape and dtype and equal values: exactly for integers and
booleans, to rtol 1e-12 (float64) / 1e-5 (float32) otherwise.

Usage: /usr/bin/python3 eval_numpy.py ZCUBE WORKDIR SEED [NRANDOM]
Prints one line per failure and a last line "N cases, F failed"; exit 1 on failure.
"""
import os
import random
import shutil
import subprocess
import sys
import warnings

import numpy as np
import zarr
from numcodecs import Blosc, Zstd

ZCUBE, WORK, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3])
NRANDOM = int(sys.argv[4]) if len(sys.argv) > 4 else 40
rnd = random.Random(SEED)
rng = np.random.default_rng(SEED)
failures = []
ncases = 0


# ---------------------------------------------------------------- NumPy names

def _reduction(fn, extra=()):
    def f(x, axis=None, keepdims=False, dtype=None, correction=None, ddof=None):
        kw = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            kw["dtype"] = dtype
        if "ddof" in extra:
            kw["ddof"] = correction if correction is not None else (ddof or 0)
        return np.asarray(fn(np.asarray(x), **kw))
    return f


def _count_nonzero(x, axis=None, keepdims=False):
    return np.asarray(np.count_nonzero(np.asarray(x), axis=axis, keepdims=keepdims), dtype=np.int64)


DTYPES = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
          "float16": np.float16, "float32": np.float32, "float64": np.float64,
          "complex64": np.complex64, "complex128": np.complex128}


def _dt(d):
    return DTYPES.get(d, d) if isinstance(d, str) else d


NS = {
    "sum": _reduction(np.sum), "prod": _reduction(np.prod), "mean": _reduction(np.mean),
    "min": _reduction(np.min), "max": _reduction(np.max),
    "var": _reduction(np.var, ("ddof",)), "std": _reduction(np.std, ("ddof",)),
    "argmin": lambda x, axis=None, keepdims=False: np.asarray(np.argmin(x, axis=axis, keepdims=keepdims)),
    "argmax": lambda x, axis=None, keepdims=False: np.asarray(np.argmax(x, axis=axis, keepdims=keepdims)),
    "any": _reduction(np.any), "all": _reduction(np.all), "count_nonzero": _count_nonzero,
    "abs": np.abs, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "exp": np.exp,
    "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "square": np.square, "negative": np.negative, "positive": np.positive, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": np.round, "sign": np.sign, "isnan": np.isnan, "isfinite": np.isfinite,
    "isinf": np.isinf, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "atan2": np.arctan2,
    "hypot": np.hypot, "maximum": np.maximum, "minimum": np.minimum, "where": np.where, "clip": np.clip,
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "pow": np.power, "logaddexp": np.logaddexp,
    "copysign": np.copysign, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "logical_not": np.logical_not, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "bitwise_invert": np.invert,
    "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
    "greater_equal": np.greater_equal,
    "zeros": lambda shape, dtype=None, chunks=None: np.zeros(shape, dtype=_dt(dtype) or np.float64),
    "ones": lambda shape, dtype=None, chunks=None: np.ones(shape, dtype=_dt(dtype) or np.float64),
    "full": lambda shape, fill_value, dtype=None, chunks=None: np.full(shape, fill_value, dtype=_dt(dtype)),
    "zeros_like": lambda x, dtype=None, chunks=None: np.zeros_like(x, dtype=_dt(dtype)),
    "ones_like": lambda x, dtype=None, chunks=None: np.ones_like(x, dtype=_dt(dtype)),
    "full_like": lambda x, fill_value, dtype=None, chunks=None: np.full_like(x, fill_value, dtype=_dt(dtype)),
    "arange": lambda start, stop=None, step=None, dtype=None, chunks=None:
        np.arange(start, stop, step, dtype=_dt(dtype)) if stop is not None else np.arange(start, dtype=_dt(dtype)),
    "linspace": lambda start, stop, num=50, endpoint=True, dtype=None, chunks=None:
        np.linspace(start, stop, num, endpoint=endpoint, dtype=_dt(dtype)),
    "eye": lambda n_rows, n_cols=None, k=0, dtype=None, chunks=None:
        np.eye(n_rows, n_cols, k=k, dtype=_dt(dtype) or np.float64),
    "astype": lambda x, dtype: np.asarray(x).astype(_dt(dtype)),
    "rechunk": lambda x, chunks: x,
    "pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None,
}
NS.update(DTYPES)


# manipulation, cumulative and linear algebra (array API names over NumPy 1.x)
def _cumulative(fn):
    def f(x, axis=None, dtype=None, include_initial=False):
        x = np.asarray(x)
        if dtype is None:  # the array API default: signed ints and bool -> int64, unsigned -> uint64
            dtype = np.int64 if x.dtype.kind in "bi" else np.uint64 if x.dtype.kind == "u" else x.dtype
        if axis is None:
            x, axis = x.reshape(-1), 0
        r = fn(x, axis=axis, dtype=_dt(dtype))
        if include_initial:
            shape = list(r.shape)
            shape[axis] = 1
            r = np.concatenate([np.full(shape, 1 if fn is np.cumprod else 0, dtype=r.dtype), r], axis=axis)
        return r
    return f


def _diff(x, n=1, axis=-1, prepend=None, append=None):
    kw = {}
    if prepend is not None:
        kw["prepend"] = prepend
    if append is not None:
        kw["append"] = append
    return np.diff(x, n=n, axis=axis, **kw)


NS.update({
    "reshape": lambda x, shape: np.reshape(x, shape),
    "permute_dims": lambda x, axes: np.transpose(x, axes), "transpose": lambda x, axes=None: np.transpose(x, axes),
    "moveaxis": np.moveaxis, "matrix_transpose": lambda x: np.swapaxes(x, -1, -2),
    "expand_dims": lambda x, axis=0: np.expand_dims(x, axis), "squeeze": lambda x, axis=None: np.squeeze(x, axis),
    "broadcast_to": np.broadcast_to,
    "concat": lambda arrays, axis=0: np.concatenate(arrays, axis=axis), "stack": lambda arrays, axis=0: np.stack(arrays, axis),
    "flip": lambda x, axis=None: np.flip(x, axis), "roll": lambda x, shift, axis=None: np.roll(x, shift, axis),
    "repeat": lambda x, repeats, axis=None: np.repeat(x, repeats, axis), "tile": np.tile,
    "take": lambda x, indices, axis=None: np.take(x, indices, axis), "diff": _diff,
    "argsort": lambda x, axis=-1: np.argsort(x, axis=axis, kind="stable"),
    "tril": lambda x, k=0: np.tril(x, k), "triu": lambda x, k=0: np.triu(x, k),
    "cumulative_sum": _cumulative(np.cumsum), "cumulative_prod": _cumulative(np.cumprod),
    "cumsum": _cumulative(np.cumsum), "cumprod": _cumulative(np.cumprod),
    "matmul": np.matmul, "tensordot": lambda x1, x2, axes=2: np.tensordot(x1, x2, axes),
    "vecdot": lambda x1, x2, axis=-1: np.sum(np.conj(x1) * x2, axis=axis, dtype=np.result_type(x1, x2)),
    "outer": np.outer,
    # several arrays in or out, data-dependent sizes (issue 18)
    "nonzero": np.nonzero, "isin": lambda x1, x2, invert=False: np.isin(x1, x2, invert=invert),
    "meshgrid": np.meshgrid, "broadcast_arrays": np.broadcast_arrays, "broadcast_shapes": np.broadcast_shapes,
    "unstack": lambda x, axis=0: tuple(np.moveaxis(np.asarray(x), axis, 0)),
})


class _Arr(np.ndarray):
    """NumPy 1.x arrays lack .mT (array API 2022.12): add it for the reference."""
    mT = property(lambda self: np.swapaxes(self, -1, -2))


def numpy_eval(expr, arrays):
    ns = dict(NS)
    ns.update({k: np.asarray(v).view(_Arr) for k, v in arrays.items()})
    return np.asarray(eval(expr, {"__builtins__": {}}, ns))


# ---------------------------------------------------------------- inputs

def write_input(path, a, chunks, fmt):
    if fmt == 2:
        comp = rnd.choice([Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE), Zstd(level=1), None])
        z = zarr.open(path, mode="w", shape=a.shape, chunks=chunks, dtype=a.dtype, compressor=comp)
        z[...] = a
    else:
        np.save(path + ".npy", a)
        run([ZCUBE, "create", path, "--shape", ",".join(map(str, a.shape)), "--chunks",
             ",".join(map(str, chunks)), "--dtype", str(a.dtype), "--zarr-format", "3"])
        run([ZCUBE, "put", path, path + ".npy"])


def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> exit {p.returncode}: {p.stderr.strip()}")
    return p


class Scenario:
    def __init__(self, name, arrays):
        """arrays: name -> (ndarray, chunks, zarr format)"""
        self.name = name
        self.arrays = {k: v[0] for k, v in arrays.items()}
        self.paths = {}
        for k, (a, chunks, fmt) in arrays.items():
            p = os.path.join(WORK, f"{name}_{k}.zarr")
            write_input(p, a, chunks, fmt)
            self.paths[k] = p


def ragged_chunks(shape):
    """Chunks that mostly do not divide the shape (ragged last blocks)."""
    out = []
    for n in shape:
        c = rnd.choice([max(1, n // 3), max(1, n // 2 + 1), max(1, n - 1), n, 1, 2, 3, 4, 5])
        out.append(min(max(1, c), max(1, n)))
    return tuple(out)


def make_scenarios():
    s = []
    shp = (13, 7, 9)
    s.append(Scenario("f3", {
        "u": (rng.standard_normal(shp), (4, 3, 4), 2),
        "v": (rng.standard_normal(shp) * 2 + 0.5, (13, 2, 5), 3),
        "w": (rng.standard_normal(9), (4,), 2),
    }))
    shp = tuple(int(x) for x in rng.integers(3, 40, size=2))
    s.append(Scenario("f2", {
        "u": (rng.standard_normal(shp).astype(np.float32), ragged_chunks(shp), 3),
        "v": (rng.uniform(-2, 2, shp).astype(np.float32), ragged_chunks(shp), 2),
    }))
    shp = (int(rng.integers(50, 500)),)
    s.append(Scenario("f1", {
        "u": (rng.standard_normal(shp), ragged_chunks(shp), 2),
        "v": (rng.standard_normal(shp) + 3, ragged_chunks(shp), 3),
    }))
    shp = (11, 6, 5)
    s.append(Scenario("i3", {
        "i": (rng.integers(-1000, 1000, shp, dtype=np.int32), (4, 4, 2), 2),
        "j": (rng.integers(-50, 50, shp, dtype=np.int16), (11, 1, 5), 3),
        "d": (rng.integers(1, 9, shp, dtype=np.int32), (3, 6, 5), 2),
        "b": (rng.integers(0, 255, shp, dtype=np.uint8), (5, 5, 5), 2),
    }))
    shp = tuple(int(x) for x in rng.integers(2, 30, size=2))
    s.append(Scenario("i2", {
        "i": (rng.integers(-3, 4, shp, dtype=np.int64), ragged_chunks(shp), 3),
        "j": (rng.integers(-3, 4, shp, dtype=np.int64), ragged_chunks(shp), 2),
        "d": (rng.integers(1, 5, shp, dtype=np.int64), ragged_chunks(shp), 2),
        "b": (rng.integers(0, 255, shp, dtype=np.uint8), ragged_chunks(shp), 3),
    }))
    return s


# ---------------------------------------------------------------- random expressions

def gen_float(names, depth):
    if depth == 0 or rnd.random() < 0.25:
        if rnd.random() < 0.8:
            return rnd.choice(names)
        return repr(round(rnd.uniform(0.1, 3), 2))
    a, b = gen_float(names, depth - 1), gen_float(names, depth - 1)
    return rnd.choice([
        f"({a} + {b})", f"({a} - {b})", f"({a} * {b})", f"({a} / (abs({b}) + 1))", f"(-{a})",
        f"({a}) ** 2", f"sin({a})", f"exp(-abs({a}))", f"sqrt(abs({a}))", f"maximum({a}, {b})",
        f"minimum({a}, {b})", f"where({a} > {b}, {a}, {b})", f"abs({a})", f"floor({a})", f"hypot({a}, {b})",
        f"clip({a}, -1, 1)", f"tanh({a})", f"log1p(abs({a}))", f"({a} + 2.5)", f"(2 * {a})",
    ])


def gen_int(names, depth):
    if depth == 0 or rnd.random() < 0.25:
        if rnd.random() < 0.85:
            return rnd.choice(names)
        return str(rnd.randint(1, 5))
    a, b = gen_int(names, depth - 1), gen_int(names, depth - 1)
    return rnd.choice([
        f"({a} + {b})", f"({a} - {b})", f"({a} * {b})", f"({a} // d)", f"({a} % d)", f"({a} & {b})",
        f"({a} | {b})", f"({a} ^ {b})", f"({a} << 2)", f"({a} >> 1)", f"maximum({a}, {b})",
        f"minimum({a}, {b})", f"abs({a})", f"where({a} > {b}, {a}, {b})", f"(-{a})", f"({a} + 3)",
    ])


def gen_axis(ndim, allow_tuple):
    r = rnd.random()
    if r < 0.25 or ndim == 0:
        return None
    if r < 0.6 or not allow_tuple or ndim == 1:
        ax = rnd.randrange(-ndim, ndim)
        return str(ax)
    k = rnd.randint(1, ndim)
    axes = sorted(rnd.sample(range(ndim), k))
    if rnd.random() < 0.3:
        axes = [a - ndim for a in axes]
    return "(" + ", ".join(map(str, axes)) + ("," if len(axes) == 1 else "") + ")"


def gen_index(shape):
    parts = []
    for n in shape:
        r = rnd.random()
        if r < 0.3:
            parts.append(":")
        elif r < 0.5:
            a = rnd.randrange(0, n)
            b = rnd.randrange(a, n + 1)
            parts.append(f"{a}:{b}" if rnd.random() < 0.5 else f"{a - n}:{b}")
        elif r < 0.6:
            parts.append(f"::{rnd.randint(1, 4)}")
        elif r < 0.7:  # negative steps, bounds past the ends
            a, b = rnd.randrange(-n - 2, n + 2), rnd.choice(["", str(rnd.randrange(-n - 2, n + 2))])
            parts.append(f"{a if rnd.random() < 0.6 else ''}:{b}:{-rnd.randint(1, 4)}")
        elif r < 0.85:
            parts.append(str(rnd.randrange(-n, n)))
        else:
            a = rnd.randrange(0, n)
            parts.append(f"{a}::{rnd.randint(2, 3)}")
    if rnd.random() < 0.2:
        parts.insert(rnd.randrange(0, len(parts) + 1), "None")
    if rnd.random() < 0.2 and len(parts) > 1:
        parts = ["..."] + parts[-1:]
    return ", ".join(parts)


def wrap_reduction(expr, ndim, is_int, is_bool_ok=True):
    fns = ["sum", "mean", "min", "max", "var", "std", "argmin", "argmax", "prod"]
    if is_int:
        fns = ["sum", "min", "max", "argmin", "argmax", "mean", "prod"]
    f = rnd.choice(fns)
    if f == "prod" and not is_int:
        expr = f"clip({expr}, 0.5, 1.5)"
    axis = gen_axis(ndim, f not in ("argmin", "argmax"))
    args = [expr]
    if axis is not None:
        args.append(f"axis={axis}" if rnd.random() < 0.8 else axis)
    if rnd.random() < 0.3:
        args.append("keepdims=True")
    if f in ("var", "std") and rnd.random() < 0.5:
        args.append("correction=1")
    return f"{f}(" + ", ".join(args) + ")"


def wrap_manip(e, shape, is_int):
    """One manipulation, cumulative or linear algebra function around e (of that shape)."""
    nd = len(shape)
    if nd == 0:
        return None
    ax = rnd.randrange(-nd, nd)
    n = shape[ax]
    choices = [
        f"reshape({e}, -1)", f"flip({e}, axis={ax})", f"roll({e}, {rnd.randint(-7, 7)}, axis={ax})",
        f"expand_dims({e}, axis={rnd.randrange(-nd - 1, nd + 1)})", f"({e}).T", f"repeat({e}, 2, axis={ax})",
        f"concat(({e}, {e}), axis={ax})", f"stack(({e}, {e}), axis={rnd.randrange(-nd - 1, nd + 1)})",
        f"take({e}, [{rnd.randrange(n) if n else 0}, 0], axis={ax})" if n else f"flip({e})",
        f"diff({e}, axis={ax})", f"tile({e}, ({', '.join(['2'] + ['1'] * nd)}))",
        f"cumulative_sum({e}, axis={ax})" if not is_int or rnd.random() < 0.5 else f"cumulative_sum({e}, axis={ax}, dtype=int64)",
        f"vecdot({e}, {e}, axis={ax})",
    ]
    if nd >= 2:
        perm = list(range(nd))
        rnd.shuffle(perm)
        choices += [f"({e}).mT", f"matrix_transpose({e})", f"permute_dims({e}, ({', '.join(map(str, perm))},))",
                    f"moveaxis({e}, 0, -1)", f"tril({e}, k={rnd.randint(-2, 2)})", f"triu({e})",
                    f"({e}) @ ({e}).mT", f"matmul(({e}).mT, {e})", f"tensordot({e}, {e}, axes=1)" if shape[-1] == shape[0]
                    else f"tensordot({e}, {e}, axes=(({ax},), ({ax},)))", f"reshape({e}, ({shape[0]}, -1))"]
    else:
        choices += [f"({e}) @ ({e})", f"outer({e}, {e})"]
    return rnd.choice(choices)


def random_case(sc):
    names = list(sc.arrays)
    is_int = sc.name.startswith("i")
    full = [n for n in names if sc.arrays[n].shape == sc.arrays[names[0]].shape]
    shape = sc.arrays[names[0]].shape
    ndim = len(shape)
    if is_int:
        leaves = [n for n in full if n != "d"]
        e = gen_int(leaves, rnd.randint(1, 3))
    else:
        leaves = names if rnd.random() < 0.7 else full
        e = gen_float(leaves, rnd.randint(1, 3))
    if not any(_replace_name(e, n, "#") != e for n in leaves):
        return None  # only numbers: NumPy's scalar rules, not arrays
    if is_int and "(-" in e and any(f"(-{k})" in e for k in range(10)):
        return None  # a negative Python int next to uint8: NumPy 1.x promotes, the array API refuses
    r = rnd.random()
    if r < 0.15:
        # the same slice of every leaf (and of the divisor d), then elementwise
        if any(n not in full for n in leaves):
            return None
        idx = gen_index(shape)
        for n in full:
            e = _replace_name(e, n, f"{n}[{idx}]")
    elif r < 0.3:
        e = f"({e})[{gen_index(shape)}]"
    try:  # the reductions' axes follow the dimensions of what they reduce
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ndim = numpy_eval(e, sc.arrays).ndim
            if rnd.random() < 0.35:
                m = wrap_manip(e, numpy_eval(e, sc.arrays).shape, is_int)
                if m is None:
                    return None
                e = m
                ndim = numpy_eval(e, sc.arrays).ndim
    except Exception:  # noqa: BLE001 - an unusable expression
        return None
    if rnd.random() < 0.55:
        e = wrap_reduction(e, ndim, is_int)
    elif rnd.random() < 0.3:
        op = rnd.choice(["any", "all", "count_nonzero"])
        other = rnd.choice(leaves)
        cmp = rnd.choice([">", "<", ">=", "=="])
        rhs = "0" if rnd.random() < 0.5 else other
        ax = gen_axis(ndim, True)
        e = f"{op}(({e}) {cmp} {rhs}" + (f", axis={ax}" if ax else "") + ")"
    return e


def _replace_name(expr, name, repl):
    """Replace whole-word occurrences of a name (not inside longer names)."""
    out, i = [], 0
    while i < len(expr):
        if expr.startswith(name, i) and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_")) and \
                (i + len(name) == len(expr) or not (expr[i + len(name)].isalnum() or expr[i + len(name)] in "_[")):
            out.append(repl)
            i += len(name)
        else:
            out.append(expr[i])
            i += 1
    return "".join(out)


FIXED = {
    "f3": [
        "mean(u**2, axis=0)", "sum(u*v, axis=(1,2))", "u[::2, 2:5] - mean(u, axis=0)[2:5]",
        "u[0, :, None] * w", "u[..., -1]", "u[-3:, ::3, 1]", "mean(u, axis=-1, keepdims=True) - u",
        "std(u, axis=(0, 2), correction=1)", "var(u)", "argmax(u, axis=1)", "argmin(u)",
        "min(v, axis=0) + max(v, axis=0)", "count_nonzero(u > 0, axis=(0, 1))", "2 ** 3 * u - 1e-3",
        "-u ** 2", "where(u > 0, u, 0.0)", "clip(u, -0.5, 0.5)", "(u > 0) & (v > 0)", "~(u > v)",
        "zeros_like(u) + 1", "full_like(u, 3) - u", "astype(u, 'float32') * 2", "astype(u * 100, int32)",
        "rechunk(u, (13, 1, -1)) + 1", "sum(u, axis=0, dtype=float32)", "round(u * 10) / 10",
        "sum(u[3] * v[3], axis=1)", "mean(sin(u) * cos(v) + w)",
        "u + v + w + 1.5", "prod(clip(u, 0.9, 1.1), axis=1)", "any(abs(u) > 3)", "all(abs(u) < 10, axis=0)",
        "max(u[1:, :, :] - u[:-1, :, :], axis=0)", "u[None, ..., None] * 1", "log(abs(u) + 1) / log(2)",
        "u[-1, :, ::-3]", "u[::-1, ::-2, 5:1:-1] + v[::-1, ::2, 1:5]", "u[..., ::-1][None, -2::-3]", "u[0, ::-1] @ w[::-1]",
        # manipulation, cumulative, linear algebra
        "reshape(u, (13, -1))", "reshape(u, 819) * 2", "reshape(u[:, :, 1:7], (7, 13, 6))", "permute_dims(u, (2, 0, 1))",
        "transpose(u) + 1", "u.T - v.T", "u.mT", "moveaxis(u, 0, -1)", "moveaxis(u, (0, 1), (2, 0))",
        "matrix_transpose(v)", "expand_dims(w, axis=0) + u", "squeeze(u[:, :1, :], axis=1)", "squeeze(u[None])",
        "broadcast_to(w, (7, 9))", "concat((u, v), axis=1)", "concat([u, v, u], axis=-1)", "concat((u, v), axis=None)",
        "stack((u, v), axis=-1)", "stack([w, w, w])", "flip(u, axis=(0, 2))", "flip(u)", "roll(u, 3, axis=0)",
        "roll(u, (1, -2), axis=(1, 2))", "roll(w, 4)", "repeat(u, 2, axis=1)", "repeat(w, 3)", "tile(w, (2, 3))",
        "tile(u, 2)", "take(u, [0, 5, 2, 5, -1], axis=0)", "take(w, 4)", "diff(u, axis=0)", "diff(u, n=2, axis=-1)",
        "diff(w, prepend=0, append=w[-1:])", "tril(u, k=-1)", "triu(u[0], k=2)", "cumulative_sum(u, axis=1)",
        "cumsum(w)", "cumsum(u)", "cumulative_prod(clip(u, 0.9, 1.1), axis=2, include_initial=True)",
        "u @ w", "w @ u[0].T", "u @ u.mT", "matmul(u.mT, v)", "w @ w", "u[0] @ v[0].T @ u[0]",
        "tensordot(u, v, axes=((0, 2), (0, 2)))", "tensordot(u, w, axes=1)", "tensordot(u[0], v[0], axes=0)",
        "vecdot(u, v)", "vecdot(u, v, axis=0)", "vecdot(u, w)", "outer(w, w[:4])", "outer(u[0], w)",
        "sum(u @ u.mT, axis=0)", "mean(outer(w, w), axis=1)",
        # boolean masks, index arrays, data-dependent sizes
        "u[u > 0.5]", "u[v[:, :, 0] > 0]", "u[u > 100]", "sum(u[u < 0]) + 1", "u[abs(u) < 0.3][::-2]",
        "nonzero(u > 1)[2]", "u[nonzero(w > 0)[0]]", "u[:, [6, 0, -1]]", "u[..., [4, 0]] * 2", "u[[0, 0, 12], 1::-1]",
        "w[[8]]", "u[[0, 5, -1], [1, 0, 6]]", "u[[2, 3], 4, [0, -1]]", "u[argsort(w)[:3], [0, 1, 2], 5]", "v[[12], [0, 1]]",
        "take(u, argsort(w), axis=2)", "take(w, astype(clip(abs(w[:3]) * 3, 0, 8), int64))", "repeat(w, [0, 1, 2, 3, 0, 0, 5, 1, 2])",
        "repeat(u, astype(abs(w) * 2, int32), axis=2)", "repeat(u[:2], (3, 0), axis=0)", "repeat(u[:2, :3, :1], arange(6))",
        "isin(round(u * 2), round(v * 2))", "isin(u, u[3], invert=True)", "meshgrid(w, w[:4])[1]",
        "meshgrid(w[:2], w, w[:3], indexing='ij')[2]", "broadcast_arrays(w, u[0, :, :1])[1]", "unstack(u, axis=-1)[4]",
        "expand_dims(w, axis=(0, 2))", "broadcast_to(w, broadcast_shapes((7, 1), (9,)))",
    ],
    "i3": [
        "i // d", "i % d", "(-i) // d", "(-i) % d", "sum(i, axis=0)", "prod(d, axis=(0, 1))", "i << 3",
        "i >> 2", "j * j * j", "b + b", "b * 3", "i + b", "j + b", "argmin(j, axis=2)", "argmax(b)",
        "min(i)", "max(j, axis=-1)", "mean(i, axis=1)", "sum(b)", "i & 255", "~i", "abs(j)",
        "where(i > j, i, j)", "count_nonzero(i % 2 == 0, axis=0)", "sum(i > 0)", "var(j, axis=0)",
        "astype(i, float32) / 7", "astype(b, int8)", "i // 7", "i % 7", "maximum(i, 0)",
        "i @ d.mT", "j @ j.mT", "b @ b.mT", "matmul(j.mT, astype(i, int16))", "i[0] @ d[0, 0]",
        "tensordot(i, d, axes=((1, 2), (1, 2)))", "vecdot(j, j)", "vecdot(b, b, axis=0)", "outer(j[0, 0], b[0, 0])",
        "cumulative_sum(i, axis=0)", "cumulative_sum(b, axis=2)", "cumulative_prod(j[:, :2, :2], axis=1)",
        "cumsum(j, axis=-1)", "diff(i, axis=1)", "reshape(i, (-1, 5)) + 1", "flip(j, axis=-1)", "roll(b, -7)",
        "concat((i, j), axis=0)", "stack((j, j), axis=1)", "take(i, [3, 1], axis=2)", "tile(b[0], (3, 1))",
        "tril(i)", "triu(j, k=-1)",
    ],
    "none": [
        "sum(ones((1000, 8), chunks=(7, 8)))", "arange(0, 100, 3, chunks=7) * 2", "arange(10) ** 2",
        "linspace(0, 1, 11, chunks=4) + 1", "eye(5, 7, k=1, chunks=(2, 3)) * 3", "full((4, 5), 2.5, chunks=(3, 2))",
        "zeros((3, 4), dtype=int16) + 7", "sum(arange(1000, chunks=33))", "mean(linspace(-1, 1, 101, chunks=10))",
        "eye(6, dtype=int32)", "arange(2.5, 10, 0.5)", "2 ** 10", "1.5 * 4", "full((5,), 7)",
        "ones((3, 1, 4), chunks=(1, 1, 3)) * arange(4)",
    ],
}


# ---------------------------------------------------------------- running

def compare(got, exp):
    if got.shape != exp.shape:
        return f"shape {got.shape}, NumPy {exp.shape}"
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype}, NumPy {exp.dtype}"
    if exp.dtype.kind in "biu":
        if not np.array_equal(got, exp):
            bad = np.argwhere(got != exp)
            k = tuple(bad[0]) if bad.size else ()
            return f"{len(bad)} values differ, first at {k}: {got[k]} vs {exp[k]}"
        return None
    rtol = 1e-12 if exp.dtype in (np.float64, np.complex128) else 1e-5
    scale = float(np.nanmax(np.abs(exp))) if exp.size and np.isfinite(exp).any() else 1.0
    ok = np.isclose(got, exp, rtol=rtol, atol=rtol * (1 + scale), equal_nan=True)
    if not ok.all():
        bad = np.argwhere(~ok)
        k = tuple(bad[0]) if bad.size else ()
        return f"{len(bad)} values differ beyond rtol {rtol}, first at {k}: {got[k]!r} vs {exp[k]!r}"
    return None


def run_case(sc, expr, label, strict_fp):
    global ncases
    arrays = sc.arrays if sc else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise" if strict_fp else "ignore"):
                exp = numpy_eval(expr, arrays)
    except Exception:
        if strict_fp:
            return False  # NumPy refuses or warns: not a useful random case
        raise
    if exp.dtype.kind not in "biuf":
        return False
    ncases += 1
    out = os.path.join(WORK, f"out_{ncases}.zarr")
    fmt = rnd.choice([2, 3])
    cmd = [ZCUBE, "eval", "-o", out, "--zarr-format", str(fmt), "--threads", str(rnd.randint(1, 3)),
           "--allowed-mem", rnd.choice(["64MB", "256MB", "1GB"]), "-q"]
    if sc:
        for k, p in sc.paths.items():
            cmd += ["--in", f"{k}={p}"]
    if exp.ndim and rnd.random() < 0.25:
        ch = ragged_chunks(exp.shape) if all(exp.shape) else tuple(1 for _ in exp.shape)
        cmd += ["--chunks", ",".join(str(max(1, c)) for c in ch)]
    if expr.startswith("-"):
        cmd += ["--", expr]  # an EXPR that looks like an option comes after "--"
    else:
        cmd.insert(rnd.choice([2, len(cmd)]), expr)
    if os.environ.get("ZC_EVAL_VERBOSE"):
        print(f"[{label}] {expr}")
    p = run(cmd, check=False)
    if p.returncode != 0:
        failures.append(f"[{label}] {expr}: zcube exit {p.returncode}: {p.stderr.strip()}")
        return True
    try:
        if fmt == 2:
            got = np.asarray(zarr.open(out, mode="r")[...])
        else:
            run([ZCUBE, "get", out, "-o", out + ".npy"])
            got = np.load(out + ".npy")
    except Exception as ex:  # noqa: BLE001 - report any read failure
        failures.append(f"[{label}] {expr}: reading {out}: {ex}")
        return True
    why = compare(got, exp)
    if why:
        failures.append(f"[{label}] {expr}: {why}   (cmd: {' '.join(cmd)})")
    else:
        shutil.rmtree(out, ignore_errors=True)
    return True


def main():
    os.makedirs(WORK, exist_ok=True)
    scen = make_scenarios()
    by_name = {s.name: s for s in scen}
    for name, exprs in FIXED.items():
        for e in exprs:
            if not run_case(by_name.get(name), e, f"fixed {name}", strict_fp=False):
                failures.append(f"[fixed {name}] {e}: NumPy result is not numeric (test bug)")
    done, tries = 0, 0
    while done < NRANDOM and tries < NRANDOM * 50:
        tries += 1
        sc = rnd.choice(scen)
        e = random_case(sc)
        if e and run_case(sc, e, f"random {sc.name}", strict_fp=True):
            done += 1
    if done < NRANDOM:
        failures.append(f"only {done} of {NRANDOM} random expressions were usable (generator bug)")
    # uniform/normal: not NumPy's generator; same values whatever the chunking, in range, plausible moments
    outs = []
    for ch in ("(7, 5)", "(64, 64)", "(1, 64)"):
        global ncases
        ncases += 1
        out = os.path.join(WORK, f"rand_{ncases}.zarr")
        p = run([ZCUBE, "eval", f"uniform((64, 64), low=-2, high=3, seed=11, chunks={ch})", "-o", out,
                 "--zarr-format", "2", "-q"], check=False)
        if p.returncode:
            failures.append(f"uniform chunks={ch}: exit {p.returncode}: {p.stderr.strip()}")
            continue
        outs.append(np.asarray(zarr.open(out, mode="r")[...]))
    if len(outs) == 3:
        u = outs[0]
        if not (np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])):
            failures.append("uniform: values depend on the chunking")
        if u.dtype != np.float64 or u.min() < -2 or u.max() >= 3 or abs(u.mean() - 0.5) > 0.15:
            failures.append(f"uniform: dtype {u.dtype}, range [{u.min()}, {u.max()}), mean {u.mean()}")
        if len(np.unique(u)) < u.size * 0.99:
            failures.append("uniform: too many repeated values")
    out = os.path.join(WORK, "normal.zarr")
    p = run([ZCUBE, "eval", "normal((100000,), loc=1, scale=2, seed=5, chunks=3000, dtype=float32)", "-o", out,
             "--zarr-format", "2", "-q"], check=False)
    ncases += 1
    if p.returncode:
        failures.append(f"normal: exit {p.returncode}: {p.stderr.strip()}")
    else:
        n = np.asarray(zarr.open(out, mode="r")[...])
        if n.dtype != np.float32 or abs(n.mean() - 1) > 0.05 or abs(n.std() - 2) > 0.05:
            failures.append(f"normal: dtype {n.dtype}, mean {n.mean()}, std {n.std()}")
    for f in failures:
        print("FAIL:", f)
    print(f"{ncases} cases, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
